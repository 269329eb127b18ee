"""Python source as lines and top-level statements: what merging definitions by name reads.

Lines are split where Python's tokenizer ends them (\\r\\n, \\r, \\n) so that `ast` line numbers
index them; a statement's span takes in its decorators and the comments right above it. Text
read with surrogateescape (a file that is not UTF-8) parses as if each such byte were '?'.
"""

from __future__ import annotations

import ast
import doctest
import io
import re
import tokenize
from collections import Counter
from collections.abc import Sequence
from typing import Any

from ..base import pyast
from ..base.errors import ErrorType, ToolError

USE_OLD_TEXT = "use old_text (copied exactly from read_file) and new_text instead"
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)

#: Lines as Python's tokenizer ends them (\r\n, \r or \n), each with its ending.
LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
#: Bytes a non-UTF-8 file was read with (surrogateescape): one character each, like '?'.
_SURROGATE = re.compile("[\ud800-\udfff]")
_MAIN_TESTS = {
    ast.dump(pyast.parse(test, mode="eval").body)
    for test in ('__name__ == "__main__"', '"__main__" == __name__')
}


class MergeError(ToolError):
    """What the merge cannot do, with what the model can do instead."""

    def __init__(self, message: str, recovery_suggestion: str, **context: Any) -> None:
        super().__init__(
            ErrorType.INVALID_ARGUMENT,
            message,
            recovery_suggestion=recovery_suggestion,
            context=context,
        )


def parse(text: str) -> ast.Module:
    """The module `text` holds; SyntaxError (with a line) for anything that does not parse."""
    try:
        return pyast.parse(_SURROGATE.sub("?", text))
    except SyntaxError:
        raise
    except (ValueError, RecursionError, MemoryError) as exc:  # null bytes, deep nesting
        raise SyntaxError(str(exc).split("\n")[0], ("<text>", 1, 0, "")) from None


def _layout(text: str) -> tuple[str, set[int]]:
    """The first indentation `text` uses and the (1-based) lines inside a multi-line string."""
    indent, inside = "", set[int]()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.INDENT and not indent:
                indent = tok.string
            elif tok.type == tokenize.STRING and tok.end[0] > tok.start[0]:
                inside.update(range(tok.start[0] + 1, tok.end[0] + 1))
    except (tokenize.TokenError, SyntaxError):
        pass
    return indent, inside


def match_indentation(block: str, tree: ast.Module, original: str) -> tuple[str, ast.Module]:
    """The block indented with tabs when the file uses tabs and it spaces (and the reverse):
    mixing both in one file breaks or misleads."""
    unit, _ = _layout(original)
    own, inside = _layout(block)
    if not unit or not own or (unit[0] == "\t") == (own[0] == "\t"):
        return block, tree
    out = []
    for number, line in enumerate(LINE.findall(block), 1):
        run = len(line) - len(line.lstrip(own[0]))
        if number in inside or not line.strip() or not run:
            out.append(line)
            continue
        levels, extra = divmod(run, len(own))
        out.append(unit * levels + line[run - extra :])
    retabbed = "".join(out)
    try:
        return retabbed, parse(retabbed)
    except SyntaxError:
        return block, tree


def content(line: str) -> str:
    return line.rstrip("\r\n")


def first_line(node: ast.stmt) -> int:
    """The 1-based line a statement starts on, its decorators included."""
    decorators = getattr(node, "decorator_list", [])
    return min([node.lineno] + [d.lineno for d in decorators])


def last_line(node: ast.stmt) -> int:
    return node.end_lineno or node.lineno


def docstring(body: list[ast.stmt]) -> ast.Expr | None:
    first = body[0] if body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
        return first if isinstance(first.value.value, str) else None
    return None


def doctests(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> list[doctest.Example]:
    """The `>>>` examples of `node`'s docstring; none where the parser cannot read one as an
    example (the docstring is prose)."""
    try:
        return doctest.DocTestParser().get_examples(ast.get_docstring(node) or "")
    except ValueError:
        return []


def assigned_name(node: ast.stmt) -> str | None:
    """X for `X = ...` and `X: T = ...`; None for any other statement."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target: ast.expr = node.targets[0]
    elif isinstance(node, ast.AnnAssign):
        target = node.target
    else:
        return None
    return target.id if isinstance(target, ast.Name) else None


def is_main(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and ast.dump(node.test) in _MAIN_TESTS


def is_filler(node: ast.stmt) -> bool:
    """`pass` or `...`: what a model writes in a class for "the rest as it is"."""
    if isinstance(node, ast.Pass):
        return True
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and node.value.value is Ellipsis
    )


def leading(line: str) -> str:
    """The indentation a line starts with."""
    return line[: len(line) - len(line.lstrip())]


def dedent(text: str) -> str:
    """`text` without the indentation of its first line, wherever a line starts with it.

    Unlike textwrap.dedent, a line of a multi-line string that starts further left (at
    column 0, say) does not keep the whole block indented.
    """
    lines = LINE.findall(text)
    first = next((line for line in lines if line.strip()), "")
    prefix = leading(first)
    return "".join(line[len(prefix) :] if line.startswith(prefix) else line for line in lines)


def reindent(lines: list[str], strip: str, add: str) -> list[str]:
    """Lines moved from indentation `strip` to `add`; blank lines become empty."""
    return [
        "" if not line.strip() else add + line[len(strip) :] if line.startswith(strip) else line
        for line in lines
    ]


class Source:
    """A text as lines without endings, and its module, for spans of statements."""

    def __init__(self, lines: list[str], tree: ast.Module, name: str) -> None:
        self.lines = lines
        self.body = tree.body
        self.name = name

    def indent(self, node: ast.stmt) -> str:
        return leading(self.lines[first_line(node) - 1])

    def span(self, node: ast.stmt, body: list[ast.stmt], comments: bool) -> tuple[int, int]:
        """The 0-based lines [start, end) of `node` (decorators, and comments right above it)."""
        at = next(i for i, sibling in enumerate(body) if sibling is node)
        before = last_line(body[at - 1]) if at else 0
        start, end = first_line(node) - 1, last_line(node)
        shared = start + 1 if before > start else None
        if at + 1 < len(body) and first_line(body[at + 1]) <= end:
            shared = end
        if shared is not None:
            raise MergeError(
                f"line {shared} of {self.name} holds more than one statement",
                f"Put each statement on its own line, or {USE_OLD_TEXT}.",
                line=shared,
            )
        while comments and start > before and self.lines[start - 1].lstrip().startswith("#"):
            start -= 1
        return start, end

    def piece(
        self, node: ast.stmt, body: list[ast.stmt], strip: str = "", add: str = ""
    ) -> list[str]:
        start, end = self.span(node, body, comments=True)
        return reindent(self.lines[start:end], strip, add)


def kept_docstring(
    lines: list[str], start: int, new: ast.stmt, old: ast.stmt, old_lines: list[str]
) -> list[str]:
    """`lines`, the function `new` as written from block line `start` (0-based), with the
    docstring of `old` (the file's function, in `old_lines`) put back after its header when
    `new` has none: a function written again without its docstring keeps it, as a class or the
    module does. A small model rewriting a function may leave the docstring out, and one asked
    to (agent/search.py) writes a third as much; removing a docstring takes old_text/new_text.
    A class written whole keeps its methods' docstrings the same way (a name defined twice in
    either class, a property and its setter, is left as written)."""
    if isinstance(old, ast.ClassDef) and isinstance(new, ast.ClassDef):
        named = Counter(m.name for c in (old, new) for m in c.body if isinstance(m, FUNCTIONS))
        olds = {m.name: m for m in old.body if isinstance(m, FUNCTIONS) and named[m.name] == 2}
        methods = [m for m in new.body if isinstance(m, FUNCTIONS) and m.name in olds]
        for method in sorted(methods, key=lambda m: m.lineno, reverse=True):  # bottom up
            lines = kept_docstring(lines, start, method, olds[method.name], old_lines)
        return lines
    if not (isinstance(old, FUNCTIONS) and isinstance(new, FUNCTIONS)) or docstring(new.body):
        return lines
    doc = docstring(old.body)
    if doc is None:
        return lines
    first, then = new.body[0], old.body[1:2]
    if first.lineno == new.lineno or doc.lineno == old.lineno:
        return lines  # a body on the def line: nowhere to put it
    if then and first_line(then[0]) <= last_line(doc):
        return lines  # `"""doc"""; x = 1`
    at = first.lineno - 1 - start
    while at - 1 > new.lineno - 1 - start and lines[at - 1].lstrip().startswith("#"):
        at -= 1  # after the header, before the comments that open the body
    have, want = leading(old_lines[doc.lineno - 1]), leading(lines[first.lineno - 1 - start])
    text = old_lines[doc.lineno - 1 : last_line(doc)]
    return [*lines[:at], *(text if have == want else reindent(text, have, want)), *lines[at:]]


def paired(
    found: Sequence[ast.stmt], nodes: Sequence[ast.stmt], defines: str
) -> list[tuple[ast.stmt, ast.stmt]]:
    """The file's definitions of one name (`found`) matched with the block's (`nodes`): in
    order when there are as many; when the block gives fewer, each with the one of the same
    decorators (a property's getter copied without its setter, as the 1.5B model copies the
    getter it was shown), if that picks a different one for each. Else a MergeError."""
    if len(found) == len(nodes):
        return list(zip(found, nodes, strict=True))

    def marks(node: ast.stmt) -> list[str]:
        return [ast.dump(d) for d in getattr(node, "decorator_list", [])]

    picks = [[old for old in found if marks(old) == marks(new)] for new in nodes]
    one_each = all(len(p) == 1 for p in picks) and len({id(p[0]) for p in picks}) == len(picks)
    if len(nodes) < len(found) and one_each:
        return [(p[0], new) for p, new in zip(picks, nodes, strict=True)]
    name = getattr(found[0], "name", "")
    raise MergeError(
        f"{defines} {len(found)} times (lines {[first_line(n) for n in found]}) and new_text "
        f"{len(nodes)} times",
        f"Give all {len(found)} definitions of {name} in new_text, in the file's order, "
        f"or {USE_OLD_TEXT}.",
    )


def class_header(cls: ast.ClassDef) -> list[str]:
    """What a class line says (decorators, bases, keywords), to compare two classes by."""
    parts = [*cls.decorator_list, *cls.bases, *cls.keywords, *getattr(cls, "type_params", [])]
    return [ast.dump(part) for part in parts]


def members(cls: ast.ClassDef) -> set[str]:
    """What a class has, by name: its definitions, attributes, docstring and class line; a
    name defined again (a property's setter) counts again, as `build#2`."""
    seen: Counter[str | None] = Counter()
    names: set[str | None] = set()
    for node in cls.body:
        name = getattr(node, "name", None) or assigned_name(node)
        seen[name] += 1
        names.add(name if seen[name] == 1 or not name else f"{name}#{seen[name]}")
    if docstring(cls.body):
        names.add("__doc__")
    if class_header(cls):
        names.add("(class line)")
    return {name for name in names if name}


def takes_self(node: ast.stmt) -> bool:
    if not isinstance(node, FUNCTIONS):
        return False
    params = [*node.args.posonlyargs, *node.args.args]
    return bool(params) and params[0].arg in ("self", "cls")


def alias_text(alias: ast.alias) -> str:
    return f"{alias.name} as {alias.asname}" if alias.asname else alias.name


def enclosing(
    tree: ast.Module, line: int
) -> ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | None:
    """The innermost function or class whose lines (its `def` line and decorators included)
    hold `line` (1-based)."""
    inner = None
    for node in ast.walk(tree):  # breadth first: the last hit is the innermost
        if isinstance(node, DEFINITIONS) and first_line(node) <= line <= last_line(node):
            inner = node
    return inner


def cut_short(old: ast.stmt, new: ast.stmt, label: str) -> int | None:
    """Where a function `new`, copied from `old` only down to a nested definition, stops: the
    last line of that definition in `old`, whose following lines the merge keeps rather than
    deletes. A function whose last statement is a definition nothing after it uses is a copy
    cut there, whatever it changed above (seen on the 1.5B model: asked for a docstring on a
    nested helper, or for a check at the top of the outer function, it copied the outer one
    down to the helper and stopped, and the merge deleted the 41 lines after it). None when
    `new` is not such a copy; a MergeError when it is one that changes nothing, since what it
    meant for the rest cannot be told."""
    if not (isinstance(old, FUNCTIONS) and isinstance(new, FUNCTIONS)) or not new.body:
        return None
    if ast.dump(old.args) != ast.dump(new.args):
        return None
    given, last_new = len(new.body), new.body[-1]
    pairs = zip(old.body, new.body, strict=False)
    if given < len(old.body) and all(ast.dump(a) == ast.dump(b) for a, b in pairs):
        last_old = old.body[given - 1]
        inner = getattr(last_old, "name", None) if isinstance(last_old, DEFINITIONS) else None
        raise MergeError(
            f"new_text's {label} stops at line {last_line(last_old)} of the file's, which goes "
            f"on to line {last_line(old)}, and changes nothing before that",
            (
                f"To change the nested {inner}, give only its `def {inner}` with the change "
                f"made in it: it is merged inside {label}. Else give the whole of {label}."
                if inner
                else f"Give the whole of {label} with the change made in it, or {USE_OLD_TEXT}."
            ),
        )
    if not isinstance(last_new, DEFINITIONS):
        return None
    stops = [
        node
        for node in old.body[:-1]
        if type(node) is type(last_new) and getattr(node, "name", None) == last_new.name
    ]
    return last_line(stops[0]) if len(stops) == 1 else None


def nested_functions(body: list[ast.stmt], name: str) -> list[tuple[str, list[ast.stmt], ast.stmt]]:
    """Functions called `name` defined directly in another function's body: (the owner's
    label `outer.<locals>`, that body, the function)."""
    outers = [node for top in body for node in ast.walk(top) if isinstance(node, FUNCTIONS)]
    inner = [(o, i) for o in outers for i in o.body if getattr(i, "name", None) == name]
    return [(f"{o.name}.<locals>", o.body, i) for o, i in inner if isinstance(i, FUNCTIONS)]


def nested_owner(body: list[ast.stmt], name: str, line: int) -> str | None:
    """The function a new `def name` is merged into (patches/merge.py), when that is the one
    function called `name` nested in another and it starts at `line`: its owner's name. None
    when a top-level definition or a method of a class has the name (the merge takes those
    first), or the name is nested more than once or not directly in a function's body."""
    members = [node for cls in body if isinstance(cls, ast.ClassDef) for node in cls.body]
    methods = [node for node in members if isinstance(node, FUNCTIONS)]
    if any(getattr(node, "name", None) == name for node in [*body, *methods]):
        return None
    found = nested_functions(body, name)
    if len(found) != 1 or found[0][2].lineno != line:
        return None
    return found[0][0].removesuffix(".<locals>")


def nested_pairs(tree: ast.Module, name: str, line: int) -> list[tuple[str, str]]:
    """(inner, outer) of `name` at `line` and of the functions in it, as the merge nests them."""
    found = [(name, nested_owner(tree.body, name, line))]
    for node in (n for n in ast.walk(tree) if isinstance(n, FUNCTIONS) and n.lineno == line):
        inner = [n for n in node.body if isinstance(n, FUNCTIONS)]
        found += [(n.name, nested_owner(tree.body, n.name, n.lineno)) for n in inner]
    return [(inner, outer) for inner, outer in found if outer is not None]


def test_class_line(classes: list[ast.ClassDef], method: str) -> str | None:
    """The class line of a new test class for test methods written without their class, in a
    test file of several classes (which one they belong to is not said): named after the first
    method (`test_escape` -> `EscapeTests`), with the bases most of the file's classes have.
    None when no class has a base (no sign they are unittest's test cases)."""
    bases = Counter(tuple(ast.unparse(b) for b in cls.bases) for cls in classes if cls.bases)
    if not bases or not method.startswith("test"):
        return None
    words = [word for word in method[4:].split("_") if word]
    stem = "".join(word[:1].upper() + word[1:] for word in words) or "New"
    taken = {cls.name for cls in classes}
    name = next(
        n
        for i in range(1, len(taken) + 2)
        if (n := f"{stem}Tests{i if i > 1 else ''}") not in taken
    )
    return f"class {name}({', '.join(bases.most_common(1)[0][0])}):"


def extended_import(
    lines: list[str], target: ast.ImportFrom, names: list[str]
) -> tuple[int, int, tuple[str, ...]]:
    """The lines [start, end) of `lines` that extend `from M import a` with `names`, and what
    they become: inline, or one a line in a list of lines."""
    last = target.names[-1]
    row = (last.end_lineno or target.lineno) - 1
    line = lines[row]
    raw = line.encode("utf-8", "surrogateescape")
    col = last.end_col_offset or 0
    rest = raw[col:].decode("utf-8", "surrogateescape").split("#")[0].strip()
    if rest == "," and last_line(target) > target.lineno:
        indent = leading(line)
        return row + 1, row + 1, tuple(f"{indent}{name}," for name in names)
    joined = (raw[:col] + ", ".join(["", *names]).encode() + raw[col:]).decode(
        "utf-8", "surrogateescape"
    )
    return row, row + 1, (joined,)


def span_at(tree: ast.Module | None, lines: list[str], line: int) -> tuple[int, int]:
    """The 1-based lines of the definition starting at `line` (decorators included): from the
    syntax tree of a Python file, else up to the next blank line."""
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, DEFINITIONS) and node.lineno == line:
            first = min([d.lineno for d in node.decorator_list] + [node.lineno])
            return first, node.end_lineno or line
    for node in tree.body if tree is not None else ():  # a module-level assignment
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.lineno == line:
            return line, node.end_lineno or line
    end = line
    while end < len(lines) and lines[end].strip():
        end += 1
    return line, end


def docstring_span(tree: ast.Module | None, line: int) -> tuple[int, int] | None:
    """The 1-based first and last lines of the docstring of the function defined at `line`,
    when it has one on lines of its own (`kept_docstring` puts such a one back)."""
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, FUNCTIONS) and node.lineno == line:
            doc = docstring(node.body)
            rest = node.body[1:2]
            if doc is None or doc.lineno == node.lineno or (rest and rest[0].lineno == doc.lineno):
                return None
            return doc.lineno, last_line(doc)
    return None


def enclosing_at(tree: ast.Module | None, line: int) -> tuple[str, int] | None:
    """The innermost function or class holding `line` after its first: (its name, its line)."""
    node = enclosing_node(tree, line)
    return None if node is None else (node.name, node.lineno)


def enclosing_node(
    tree: ast.Module | None, line: int
) -> ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | None:
    """The innermost function or class holding `line` after its first."""
    inner = None
    found = ast.walk(tree) if tree is not None else ()
    for node in (node for node in found if isinstance(node, DEFINITIONS)):
        if node.lineno < line <= (node.end_lineno or node.lineno):
            inner = node  # breadth-first: the last hit is the innermost
    return inner


def restored(text: str, merged: str, name: str) -> str | None:
    """`merged` with the definition `name` (`f`, `C.m`) back as `text` has it; None when
    either text lacks it or does not parse. Lines outside it are kept as `merged` has them."""
    spans = [_definition_span(source, name) for source in (text, merged)]
    if spans[0] is None or spans[1] is None:
        return None
    (old_start, old_end), (new_start, new_end) = spans[0], spans[1]
    old, new = text.splitlines(keepends=True), merged.splitlines(keepends=True)
    return "".join(new[:new_start] + old[old_start:old_end] + new[new_end:])


def _definition_span(text: str, name: str) -> tuple[int, int] | None:
    """The 0-based [start, end) lines of the definition `name` (`C.m`), decorators included."""
    tree = pyast.parsed(text)
    body: list[ast.stmt] = tree.body if tree is not None else []
    node: ast.stmt | None = None
    for part in name.split("."):
        node = next((n for n in body if isinstance(n, DEFINITIONS) and n.name == part), None)
        if node is None:
            return None
        body = node.body
    return (first_line(node) - 1, last_line(node)) if node is not None else None


def unread_parameters(old: str | None, new: str) -> list[tuple[str, str]]:
    """(function, parameter) for each parameter a change gives an existing function that its
    body never reads: an option added to the signature and used nowhere, so passing it
    changes nothing (what a small model writes for "add a keep_build option": the patch adds
    the name, looks like the feature and does nothing). Functions the change adds, bodies
    that are a stub (`...`, `pass`, a raise) or read `locals()`, `self`/`cls`, `*args`,
    `**kwargs` and names starting with `_` are not judged; [] when either text does not parse."""
    before, after = pyast.parsed(old), pyast.parsed(new)
    if before is None or after is None:
        return []
    had = {name: set(_parameters(node)) for name, node in _functions(before)}
    unread: list[tuple[str, str]] = []
    for name, node in _functions(after):
        if name not in had or _is_stub(node.body):
            continue
        used = {n.id for part in node.body for n in ast.walk(part) if isinstance(n, ast.Name)}
        if "locals" in used or "vars" in used:
            continue
        for parameter in _parameters(node):
            if parameter not in had[name] and parameter not in used:
                unread.append((name, parameter))
    return unread


def _functions(tree: ast.Module) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every function of a module by its qualified name (`C.m`, `f.g`), nested ones too."""
    found: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]] = []

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, (*FUNCTIONS, ast.ClassDef)):
                qualified = f"{prefix}{node.name}"
                if isinstance(node, FUNCTIONS):
                    found.append((qualified, node))
                visit(node.body, f"{qualified}.")

    visit(tree.body, "")
    return found


def _parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """The named parameters of a function a caller can pass (not self, cls or _private)."""
    args = node.args
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    return [a.arg for a in every if a.arg not in ("self", "cls") and not a.arg.startswith("_")]


def _is_stub(body: list[ast.stmt]) -> bool:
    """A body that does nothing itself: `...`, `pass` or a raise, after its docstring."""
    rest = body[1:] if docstring(body) else body
    return all(is_filler(node) or isinstance(node, ast.Raise) for node in rest)


#: The name of the check `unread_check` adds to a validation.
UNREAD_CHECK = "every new parameter is read"


def unread_check(changes: list[tuple[str, str | None, str | None]]) -> list[dict[str, Any]]:
    """A failed check for the parameters the change gives existing functions and never reads
    (`unread_parameters`): an option that changes nothing is no feature, and the run that
    proposes only it is told so, as by a test that fails. [] when there are none."""
    said = [
        f"`{parameter}` is a new parameter of `{function}` ({path}) that its body never reads"
        for path, old, new in changes
        if path.endswith(".py") and old is not None and new is not None
        for function, parameter in unread_parameters(old, new)
    ]
    if not said:
        return []
    output = "; ".join(said) + ": passing it changes nothing. Use it in the body."
    return [{"command": UNREAD_CHECK, "passed": False, "output": output}]


def lines_holding(
    text: str, names: Sequence[str], words: Sequence[str], most: int = 3
) -> list[tuple[int, str]]:
    """The lines of the definitions `names` (dotted: their last part) in `text` that hold the
    most of `words` (a task's own words, lowercase; the names themselves say nothing of
    where), at most `most`, in order, as (number, line); none when none does. Def
    lines, docstrings and comments are left out. A small model that copies a function back
    unchanged is shown where the task's words point (dev jp-walk-message: the message
    "member not found" is built on one line of `walk`)."""
    tree = pyast.parsed(text)
    lasts = {name.rsplit(".", 1)[-1] for name in names}
    words = [word for word in words if word not in {last.lower() for last in lasts}]
    if tree is None or not lasts or not words:
        return []
    lines = [line.rstrip("\r\n") for line in LINE.findall(text)]
    held: dict[int, int] = {}  # line -> words: a method is in its class's body too
    for node in ast.walk(tree):
        if not isinstance(node, DEFINITIONS) or node.name not in lasts or not node.body:
            continue
        doc = docstring(node.body)
        skip = (doc.lineno, last_line(doc)) if doc is not None else (0, 0)
        for number in range(node.body[0].lineno, last_line(node) + 1):
            code = lines[number - 1].split("#", 1)[0].lower() if number <= len(lines) else ""
            if skip[0] <= number <= skip[1] or not code.strip():
                continue
            if found := sum(re.search(rf"\b{re.escape(w)}", code) is not None for w in words):
                held[number] = found
    top = max(held.values(), default=0)
    best = [number for number, found in sorted(held.items()) if found == top][:most]
    return [(number, lines[number - 1]) for number in best]
