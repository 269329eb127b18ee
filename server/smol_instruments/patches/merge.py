"""Merge complete new versions of Python definitions into a file (propose_patch with old_text='').

Small models cannot copy old_text exactly, but they write a whole corrected function well. The
block they write (functions, classes, imports, one-name assignments, a `__main__` block, a
module docstring) is merged by name: each piece replaces its namesake in the file or is added
where that kind of statement goes. Every line the block does not mention is kept byte for
byte, line endings included. A class in the block that lacks something the file's class has
(a method, an attribute, its docstring, its class line's decorators or bases) is merged member
by member, so one method inside a bare `class X:` never deletes the rest; a merge deletes no
definition, nor a function's docstring left out. A lone `def m(self)` is the method m of the
one class that has it (a new one: of the file's one class; with several, it is refused).

Pure: text in, text out. What cannot be placed is a MergeError (the one error schema) whose
suggestion says what to write instead, usually old_text/new_text.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass

from ..base.testruns import is_test_path
from .model import MAX_PATCH_CHARS
from .pysource import (
    DEFINITIONS,
    FUNCTIONS,
    LINE,
    USE_OLD_TEXT,
    MergeError,
    Source,
    alias_text,
    assigned_name,
    class_header,
    content,
    cut_short,
    dedent,
    docstring,
    extended_import,
    first_line,
    is_filler,
    is_main,
    kept_docstring,
    last_line,
    match_indentation,
    members,
    nested_functions,
    paired,
    parse,
    reindent,
    takes_self,
    test_class_line,
)


@dataclass(frozen=True)
class Merged:
    """The merged text and what changed in it, by name."""

    text: str
    replaced: tuple[str, ...] = ()
    added: tuple[str, ...] = ()
    imports_added: tuple[str, ...] = ()
    imports_extended: tuple[str, ...] = ()

    def summary(self) -> str:
        """One line for the model and the user: "merged: replaced f; added g; ..."."""
        parts = [
            f"{label}{', '.join(names)}"
            for label, names in (
                ("replaced ", self.replaced),
                ("added ", self.added + self.imports_added),
                ("import extended: ", self.imports_extended),
            )
            if names
        ]
        return "merged: " + "; ".join(parts)


@dataclass(frozen=True)
class _Edit:
    start: int  # first original line replaced, 0-based
    end: int  # the line after the last one replaced; == start for an insertion
    lines: tuple[str, ...]  # without line endings
    rank: int = 0  # order of insertions at the same place


def merge_definitions(original: str, block: str, path: str) -> Merged:
    """`original` with the definitions of `block` merged in by name; MergeError if it cannot."""
    if len(block) > MAX_PATCH_CHARS:
        raise MergeError(
            f"new_text has {len(block)} characters, more than the {MAX_PATCH_CHARS} a merge takes",
            "Give only the functions and classes that change.",
        )
    block = dedent(block)
    try:
        tree = parse(original)
    except SyntaxError as exc:
        raise MergeError(
            f"{path} does not parse as Python (line {exc.lineno}: {exc.msg}), so new_text "
            "cannot be merged into it by name",
            f"To change {path}, {USE_OLD_TEXT}.",
            path=path,
        ) from None
    try:
        block_tree = parse(block)
    except SyntaxError as exc:
        raise MergeError(
            f"new_text is not valid Python (line {exc.lineno}: {exc.msg}){_quoted(block, exc)}",
            f"Fix line {exc.lineno} of new_text. It must hold complete definitions: the def or "
            "class line and its whole indented body, as they would stand in the file.",
            line=exc.lineno,
        ) from None
    block, block_tree = match_indentation(block, block_tree, original)
    try:
        return _Merger(original, tree, block, block_tree, path).run()
    except RecursionError:
        raise MergeError(
            "new_text or the file is nested too deeply to merge by name",
            f"To change {path}, {USE_OLD_TEXT}.",
        ) from None


class _Merger:
    """One merge: the block's statements, each sent to the rule of its kind, then assembled."""

    def __init__(
        self, original: str, tree: ast.Module, block: str, block_tree: ast.Module, path: str
    ) -> None:
        self.path = path
        self.raw = LINE.findall(original)
        self.final_newline = not self.raw or self.raw[-1].endswith(("\n", "\r"))
        self.nl = next(
            (line[len(content(line)) :] for line in self.raw if line[-1] in "\r\n"), "\n"
        )
        if not self.final_newline:
            self.raw[-1] += self.nl
        self.file = Source([content(line) for line in self.raw], tree, path)
        self.new = Source([content(line) for line in LINE.findall(block)], block_tree, "new_text")
        self.edits: list[_Edit] = []
        self.replaced: list[str] = []
        self.added: list[str] = []
        self.imports_added: list[str] = []
        self.imports_extended: list[str] = []
        self.compared: list[str] = []
        self.new_imports: list[str] = []
        self.new_future: list[str] = []
        self.new_assignments: list[str] = []
        self.new_definitions: list[list[str]] = []
        self.test_class: list[str] | None = None  # a new class for test methods without one
        self.new_main: list[str] = []
        self.extensions: dict[int, tuple[ast.ImportFrom, list[str]]] = {}

    def run(self) -> Merged:
        done: set[str] = set()
        for at, node in enumerate(self.new.body):
            name = assigned_name(node)
            if at == 0 and docstring(self.new.body):
                self._module_docstring(node)
            elif isinstance(node, ast.Import):
                self._import(node)
            elif isinstance(node, ast.ImportFrom):
                self._from_import(node)
            elif isinstance(node, DEFINITIONS):
                if node.name not in done:
                    done.add(node.name)
                    self._definition(node.name)
            elif name is not None:
                self._assignment(node, name)
            elif is_main(node):
                self._main(node)
            elif not any(ast.dump(node) == ast.dump(old) for old in self.file.body):
                raise self._unplaceable(node, self.path)
        self._place_insertions()
        if not self.edits:
            raise self._unchanged()
        text = self._assemble()
        try:
            parse(text)
        except SyntaxError as exc:
            raise MergeError(
                f"merging new_text would leave {self.path} unparseable (line {exc.lineno}: "
                f"{exc.msg})",
                f"Check the indentation of new_text, or {USE_OLD_TEXT}.",
            ) from None
        return Merged(
            text,
            tuple(self.replaced),
            tuple(self.added),
            tuple(self.imports_added),
            tuple(self.imports_extended),
        )

    # --- definitions -----------------------------------------------------------------------

    def _definition(self, name: str) -> None:
        nodes = [n for n in self.new.body if isinstance(n, DEFINITIONS) and n.name == name]
        owners = [
            cls
            for cls in self.file.body
            if isinstance(cls, ast.ClassDef)
            and any(isinstance(m, FUNCTIONS) and m.name == name for m in cls.body)
        ]
        namesakes = [n for n in self.file.body if isinstance(n, DEFINITIONS) and n.name == name]
        # `def f(self)` is the method f even when a top-level function f exists too.
        is_method = all(map(takes_self, nodes)) and not any(map(takes_self, namesakes))
        if not (owners and is_method) and self._pair(
            name, nodes, self.file.body, self.new.body, "", "", top=True
        ):
            return
        if owners and all(isinstance(n, FUNCTIONS) for n in nodes):
            if len(owners) > 1:
                classes = ", ".join(cls.name for cls in owners)
                raise MergeError(
                    f"{name} is a method of several classes in {self.path} ({classes})",
                    f"Write it inside its class in new_text: the line `class {owners[0].name}:` "
                    f"(as in {self.path}), then the method indented under it.",
                )
            cls = owners[0]
            method = next(m for m in cls.body if isinstance(m, FUNCTIONS) and m.name == name)
            self._pair(name, nodes, cls.body, self.new.body, "", self.file.indent(method), cls.name)
            return
        nested = nested_functions(self.file.body, name)
        if len(nested) == 1 and all(isinstance(n, FUNCTIONS) for n in nodes):
            # `outer.<locals>.inner`: the one function of that name defined inside another
            outer, body, inner = nested[0]
            self._pair(name, nodes, body, self.new.body, "", self.file.indent(inner), outer)
            return
        held = [node for node in self.file.body if isinstance(node, ast.ClassDef)]
        if is_method and held and all(isinstance(n, FUNCTIONS) for n in nodes):
            if len(held) > 1:  # a new method without its class (the 1.5B model's new tests)
                return self._new_class_member(name, nodes, held)
            add = self.file.indent(held[0].body[0])
            return self._add_members(held[0], nodes, self.new.body, "", add)
        for node in nodes:
            self.new_definitions.append(self.new.piece(node, self.new.body))
            self.added.append(name)

    def _new_class_member(
        self, name: str, nodes: Sequence[ast.stmt], held: list[ast.ClassDef]
    ) -> None:
        """New test methods without their class, in a test file of several: one new class for
        them all, at the end (its line told: which class they belong to is not said)."""
        line = test_class_line(held, name) if is_test_path(self.path) else None
        if line is None and self.test_class is None:
            named = ", ".join(f"`class {cls.name}`" for cls in held[:6])
            raise MergeError(
                f"{name} takes self, so it is a method, and no class of {self.path} has it",
                f"Write it inside its class in new_text: the class line ({named}, or a new "
                "class), then the method indented under it.",
            )
        if self.test_class is None:
            self.test_class = [str(line)]
            self.new_definitions.append(self.test_class)
        for node in nodes:
            self.test_class += [
                *([""] if len(self.test_class) > 1 else []),
                *self.new.piece(node, self.new.body, "", "    "),
            ]
        self.added.append(f"{self.test_class[0][6:].split('(')[0]}.{name} (a new class)")

    def _pair(
        self,
        name: str,
        nodes: Sequence[ast.stmt],
        body: list[ast.stmt],
        block_body: list[ast.stmt],
        strip: str,
        add: str,
        owner: str = "",
        top: bool = False,
    ) -> bool:
        """Replace the definitions `name` of `body` by `nodes`, in order; False if it has none."""
        found = [n for n in body if isinstance(n, DEFINITIONS) and n.name == name]
        label = f"{owner}.{name}" if owner else name
        if not found:
            return False
        for old, new in paired(found, nodes, f"{self.path} defines {label}"):
            if (
                top
                and isinstance(old, ast.ClassDef)
                and isinstance(new, ast.ClassDef)
                and not members(old) <= members(new)  # some members, not the whole class
            ):
                self._merge_class(old, new)
            else:
                stop = cut_short(old, new, label)  # kept: the lines after where it stops
                kept = self.file.lines[stop : last_line(old)] if stop else []
                self._replace(old, body, new, block_body, label, strip, add, kept)
        return True

    def _replace(
        self,
        old: ast.stmt,
        body: list[ast.stmt],
        new: ast.stmt,
        block_body: list[ast.stmt],
        label: str,
        strip: str = "",
        add: str = "",
        kept: Sequence[str] = (),
    ) -> None:
        start, end = self.new.span(new, block_body, comments=True)
        lines = reindent(self.new.lines[start:end], strip, add)
        lines = kept_docstring(lines, start, new, old, self.file.lines) + list(kept)
        commented = start < first_line(new) - 1  # its comments then replace the file's
        old_start, old_end = self.file.span(old, body, comments=commented)
        self.compared.append(label)
        if [line.rstrip() for line in self.file.lines[old_start:old_end]] == [
            line.rstrip() for line in lines
        ]:
            return
        self.edits.append(_Edit(old_start, old_end, tuple(lines)))
        self.replaced.append(label)

    def _merge_class(self, old: ast.ClassDef, new: ast.ClassDef) -> None:
        """A class given with only some of its members: each member merged by name."""
        strip = self.new.indent(new.body[0])
        add = self.file.indent(old.body[0])
        if class_header(new) and class_header(old) != class_header(new):  # bare: context
            self._replace_header(old, new)
        done: set[str] = set()
        doc = docstring(old.body)
        for at, node in enumerate(new.body):
            name = assigned_name(node)
            if at == 0 and docstring(new.body):
                label = f"{old.name} docstring"
                if doc is None:
                    start = self.file.span(old.body[0], old.body, comments=True)[0]
                    piece = self.new.piece(node, new.body, strip, add)
                    self.edits.append(_Edit(start, start, (*piece, "")))
                    self.added.append(label)
                elif ast.dump(doc) != ast.dump(node):
                    self._replace(doc, old.body, node, new.body, label, strip, add)
            elif is_filler(node):
                continue
            elif isinstance(node, DEFINITIONS):
                if node.name not in done:
                    done.add(node.name)
                    self._member_definition(old, new, node.name, strip, add)
            elif name is not None:
                self._member_assignment(old, new, node, name, strip, add)
            elif not any(ast.dump(node) == ast.dump(member) for member in old.body):
                raise self._unplaceable(node, f"class {old.name} of {self.path}")

    def _member_definition(
        self, old: ast.ClassDef, new: ast.ClassDef, name: str, strip: str, add: str
    ) -> None:
        nodes = [n for n in new.body if isinstance(n, DEFINITIONS) and n.name == name]
        if not self._pair(name, nodes, old.body, new.body, strip, add, old.name):
            self._add_members(old, nodes, new.body, strip, add)

    def _add_members(
        self,
        cls: ast.ClassDef,
        nodes: Sequence[ast.stmt],
        body: list[ast.stmt],
        strip: str,
        add: str,
    ) -> None:
        """New members, after the last line of `cls`."""
        for node in nodes:
            piece = self.new.piece(node, body, strip, add)
            self.edits.append(_Edit(last_line(cls), last_line(cls), ("", *piece), rank=1))
            self.added.append(f"{cls.name}.{getattr(node, 'name', '')}")

    def _member_assignment(
        self, old: ast.ClassDef, new: ast.ClassDef, node: ast.stmt, name: str, strip: str, add: str
    ) -> None:
        """A class attribute: replaces its namesake, else follows the last attribute."""
        label = f"{old.name}.{name}"
        found = [n for n in old.body if assigned_name(n) == name]
        if found:
            self._replace(found[-1], old.body, node, new.body, label, strip, add)
            return
        piece = self.new.piece(node, new.body, strip, add)
        first_def = next((n for n in old.body if isinstance(n, DEFINITIONS)), None)
        before = old.body[: old.body.index(first_def)] if first_def else old.body
        attributes = [n for n in before if assigned_name(n)]
        if attributes:
            at = last_line(attributes[-1])
            self.edits.append(_Edit(at, at, tuple(piece), rank=1))
        elif first_def is None:
            self.edits.append(_Edit(last_line(old), last_line(old), tuple(piece), rank=1))
        else:
            start = self.file.span(first_def, old.body, comments=True)[0]
            self.edits.append(_Edit(start, start, (*piece, "")))
        self.added.append(label)

    def _replace_header(self, old: ast.ClassDef, new: ast.ClassDef) -> None:
        def header(text: Source, cls: ast.ClassDef, body: list[ast.stmt]) -> tuple[int, int]:
            start = text.span(cls, body, comments=False)[0]
            end = first_line(cls.body[0]) - 1
            while end > start + 1 and (
                not text.lines[end - 1].strip() or text.lines[end - 1].lstrip().startswith("#")
            ):
                end -= 1
            if end <= start:
                raise MergeError(
                    f"class {cls.name} of {text.name} has its body on its class line",
                    f"Write the class body on its own lines, or {USE_OLD_TEXT}.",
                )
            return start, end

        start, end = header(self.file, old, self.file.body)
        new_start, new_end = header(self.new, new, self.new.body)
        self.edits.append(_Edit(start, end, tuple(self.new.lines[new_start:new_end])))
        self.replaced.append(f"{old.name} (class line)")
        self.compared.append(f"{old.name} (class line)")

    # --- other statements ------------------------------------------------------------------

    def _only(self, found: list[ast.stmt], what: str) -> ast.stmt | None:
        """The one statement of `found`, None if none; MergeError if the file has several."""
        if len(found) > 1:
            lines = [node.lineno for node in found]
            raise MergeError(
                f"{self.path} has {what} {len(found)} times at top level (lines {lines})",
                f"To change one of them, {USE_OLD_TEXT}.",
            )
        return found[0] if found else None

    def _assignment(self, node: ast.stmt, name: str) -> None:
        found = [n for n in self.file.body if assigned_name(n) == name]
        old = self._only(found, f"an assignment to {name}")
        if old is not None:
            self._replace(old, self.file.body, node, self.new.body, name)
        else:
            self.new_assignments.extend(self.new.piece(node, self.new.body))
            self.added.append(name)

    def _main(self, node: ast.stmt) -> None:
        label = "the __main__ block"
        old = self._only([n for n in self.file.body if is_main(n)], label)
        if old is not None:
            self._replace(old, self.file.body, node, self.new.body, label)
        else:
            self.new_main = self.new.piece(node, self.new.body)
            self.added.append(label)

    def _module_docstring(self, node: ast.stmt) -> None:
        doc = docstring(self.file.body)
        self.compared.append("module docstring")
        if doc is None:
            top = self._top()
            lines = self.new.piece(node, self.new.body)
            self.edits.append(_Edit(top, top, (*lines, *([""] if self.file.lines else [])), -2))
            self.added.append("module docstring")
        elif ast.dump(doc) != ast.dump(node):
            self._replace(doc, self.file.body, node, self.new.body, "module docstring")

    def _import(self, node: ast.Import) -> None:
        have = {
            (alias.name, alias.asname)
            for old in self.file.body
            if isinstance(old, ast.Import)
            for alias in old.names
        }
        missing = [alias for alias in node.names if (alias.name, alias.asname) not in have]
        self.compared.append("import " + ", ".join(alias_text(a) for a in node.names))
        if missing:
            statement = "import " + ", ".join(alias_text(alias) for alias in missing)
            self.new_imports.append(statement)
            self.imports_added.append(statement)

    def _from_import(self, node: ast.ImportFrom) -> None:
        module = "." * node.level + (node.module or "")
        same = [
            old
            for old in self.file.body
            if isinstance(old, ast.ImportFrom)
            and (old.module, old.level) == (node.module, node.level)
        ]
        have = {(alias.name, alias.asname) for old in same for alias in old.names}
        missing = [alias for alias in node.names if (alias.name, alias.asname) not in have]
        self.compared.append(f"from {module} import ...")
        star = any(alias.name == "*" for alias in node.names)
        target = next((old for old in same if old.names[0].name != "*"), None)
        pending = self.extensions[id(target)][1] if id(target) in self.extensions else []
        missing = [alias for alias in missing if alias_text(alias) not in pending]
        if not missing:
            return
        if target is not None and not star:
            self.extensions.setdefault(id(target), (target, pending))
            pending.extend(alias_text(alias) for alias in missing)
            self.imports_extended.extend(alias_text(alias) for alias in missing)
            return
        if len(missing) == len(node.names):
            lines = self.new.piece(node, self.new.body)
        else:
            lines = [f"from {module} import " + ", ".join(alias_text(a) for a in missing)]
        (self.new_future if node.module == "__future__" else self.new_imports).extend(lines)
        self.imports_added.append(
            f"from {module} import " + ", ".join(alias_text(a) for a in missing)
        )

    # --- placing and assembling --------------------------------------------------------------

    def _top(self) -> int:
        """The first line after the file's opening comments (shebang, coding, licence)."""
        top = 0
        while top < len(self.file.lines) and self.file.lines[top].lstrip().startswith("#"):
            top += 1
        return top

    def _blank(self, at: int) -> bool:
        return not (0 <= at < len(self.file.lines)) or not self.file.lines[at].strip()

    def _place_insertions(self) -> None:
        for target, names in self.extensions.values():
            self.edits.append(_Edit(*extended_import(self.file.lines, target, names)))
        body = self.file.body
        doc = docstring(body)
        leading = body[1:] if doc else body
        last_import = None
        for node in leading:
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                break
            last_import = node
        after_doc = last_line(doc) if doc else self._top()
        if self.new_future:
            lead = [] if self._blank(after_doc - 1) else [""]
            self.edits.append(_Edit(after_doc, after_doc, (*lead, *self.new_future), rank=-1))
        at = last_line(last_import) if last_import else after_doc
        lines = list(self.new_imports)
        if self.new_assignments:
            lines += ["", *self.new_assignments] if lines else self.new_assignments
        if lines:
            if not (last_import and self.new_imports) and at > 0 and not self._blank(at - 1):
                lines.insert(0, "")
            if (self.new_assignments or not last_import) and not self._blank(at):
                lines.append("")
            self.edits.append(_Edit(at, at, tuple(lines)))
        main = body[-1] if body and is_main(body[-1]) else None
        if main is not None:
            at = self.file.span(main, body, comments=True)[0]
            for piece in self.new_definitions:
                self.edits.append(_Edit(at, at, (*piece, "", ""), rank=2))
            self._append([self.new_main] if self.new_main else [])
        else:
            self._append([*self.new_definitions, *([self.new_main] if self.new_main else [])])

    def _append(self, pieces: list[list[str]]) -> None:
        at = len(self.file.lines)
        while at > 0 and not self.file.lines[at - 1].strip():
            at -= 1
        for count, piece in enumerate(pieces):
            gap = ["", ""] if at or count else []
            self.edits.append(_Edit(at, at, (*gap, *piece), rank=2))

    def _assemble(self) -> str:
        out: list[str] = []
        at = 0
        for edit in sorted(self.edits, key=lambda e: (e.start, e.end, e.rank)):
            if edit.start < at:
                raise MergeError(
                    f"new_text changes line {edit.start + 1} of {self.path} twice",
                    f"Give each definition once in new_text, or {USE_OLD_TEXT}.",
                )
            out += self.raw[at : edit.start]
            out += [line + self.nl for line in edit.lines]
            at = edit.end
        out += self.raw[at:]
        text = "".join(out)
        if not self.final_newline and text.endswith(self.nl):
            text = text[: -len(self.nl)]
        return text

    # --- errors ----------------------------------------------------------------------------

    def _unplaceable(self, node: ast.stmt, where: str) -> MergeError:
        shown = self.new.lines[node.lineno - 1].strip()[:80]
        return MergeError(
            f"line {node.lineno} of new_text (`{shown}`) is not a def, class, import or "
            f"NAME = value, and {where} has no such statement to keep",
            "Give complete functions or classes (the def or class line and the whole body) in "
            f"new_text, without code that runs. To change other lines, {USE_OLD_TEXT}.",
            line=node.lineno,
        )

    def _unchanged(self) -> MergeError:
        if not self.compared:
            return MergeError(
                f"new_text has no function, class, import or assignment to merge into {self.path}",
                "Give the complete new version of the function or class to change in new_text.",
            )
        names = ", ".join(dict.fromkeys(self.compared))
        return MergeError(
            f"new_text is the same as what {self.path} has ({names}): it changes nothing",
            "Write your change into new_text: the complete function with the fix in it.",
            compared=list(dict.fromkeys(self.compared)),
        )


def _quoted(block: str, exc: SyntaxError) -> str:
    """`: <the line>` of `block` that `exc` is about, or "" where it has none."""
    lines = block.splitlines()
    line = lines[exc.lineno - 1].strip() if exc.lineno and 0 < exc.lineno <= len(lines) else ""
    return f": `{line}`" if line else ""
