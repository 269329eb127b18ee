"""The code a task names, read before the first step and given with the task.

A small model spends its first steps finding what the user already named, and often guesses
instead of looking. Editors' agents attach context before the model starts (the open file, the
selection, the definitions the question names); this does the same from the task's words:

- files the task names (a path, a file name only one file has; for new tests, the test file
  of the code's module), whole when short and when it names no definition in them;
- what agent/evidence.py finds for the task's words: the failing tests' output, the history;
- definitions of the names it mentions (a Python `def`/`class` or module-level assignment
  whole, from its syntax tree; elsewhere, down to the next blank line), or for a name used
  but never defined (`NO_COLOR`) the functions that use it; the tests that use each (two at
  most) and the other places that use it, so "which test checks it?" has its answer;
- one hop further: functions a shown definition calls that the repository defines;
- for a task that names no code, no file and nothing else to show: the definitions whose
  names hold its words ("colours" meets `_can_do_colour`), said to be found that way.

Everything shown is bounded (`budget` characters) and says where it came from and whether it
was cut. Only files of the repository's listing are read, never a secret-looking one (`.env`,
keys), through the tools' own jail and search.
"""

from __future__ import annotations

import ast
import builtins
import logging
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath

from ..base.pyast import parsed
from ..base.testruns import is_test_path
from ..patches.pysource import docstring_span, enclosing_at, enclosing_node, nested_pairs, span_at
from ..tools.base import ToolContext
from ..tools.files import read_repo_text
from ..tools.imports import passing_call
from ..tools.reach import reach_hops
from ..tools.rewrite import fence_language
from ..tools.search import RgSearchTool
from . import wording
from .evidence import (
    DEFINITION,
    Evidence,
    by_example,
    closest_names,
    computed_calls,
    defined_name,
    docstring_examples,
    every_definition,
    missing_names,
    recent_history,
    test_failures,
    tests_for,
)
from .intent import TaskIntent
from .mentions import asks_which_code, keyword_names, outer_callee
from .named import file_of_words, meets_word, named_files, passages, word_forms

log = logging.getLogger(__name__)

#: Characters of code given with a task (about 1,500 tokens: a fifth of an 8k context).
BUDGET_CHARS = 4500
#: A named file this short is shown whole; a longer one is shown by its definitions.
WHOLE_FILE_LINES = 80
MAX_FILES = 2
#: Lines shown before and after each line of a long named file that holds the task's words.
PASSAGE_AROUND = 6
MAX_DEFINITIONS = 4
#: Definitions shown for a task that names no code, found by its words (`_related`).
MAX_RELATED = 2
MAX_USES = 6
MAX_TESTS = 2  # tests that use a named function, shown whole beside it
#: A definition longer than this is shown by its first lines; one a change names, up to the
#: second: its new version is written whole, and the model writes back what it was shown
#: (dev infl-nested-docstring: `_irregular` cut at 40 of its 51 lines, rewritten to the cut).
DEFINITION_LINES, CHANGED_LINES = 40, 120

_SECRET = re.compile(
    r"(?:^|/)(?:\.env(?:\..*)?|.*\.(?:pem|key|p12|pfx|keystore)|id_(?:rsa|dsa|ecdsa|ed25519)"
    r"|\.netrc|\.npmrc|\.pypirc|credentials(?:\.\w+)?)$",
    re.IGNORECASE,
)
_BUILTINS = frozenset(dir(builtins))
#: The words of an identifier: `_can_do_colour` and `canDoColour` are can, do, colour.
_NAME_PART = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@dataclass
class Context:
    """What was read for a task: the text given to the model, where each part came from, and
    the repository's files the task names."""

    text: str = ""
    sources: list[str] = field(default_factory=list)
    named_files: list[str] = field(default_factory=list)
    #: Names the task writes as code that occur nowhere in the repository (agent/evidence.py).
    absent: list[str] = field(default_factory=list)
    #: A definition or a use of a name was shown (not only a file the task names).
    defined: bool = False
    #: The names the repository defines closest to an absent one ("resolve_all": `resolve`).
    near: list[str] = field(default_factory=list)
    #: The calls run for it that returned or raised, as "call = value" or "call = Error"
    #: (agent/evidence.py `computed_calls`).
    computed: list[str] = field(default_factory=list)
    #: Calls it names that could not run as written (a method): its code, read, answers it.
    unrun: list[str] = field(default_factory=list)
    #: (inner, outer) for each shown function defined inside another function.
    nested: list[tuple[str, str]] = field(default_factory=list)
    outer_files: dict[str, str] = field(default_factory=dict)  # the file of each `outer`
    #: The one file of code (not tests) whose definitions are shown, else None.
    code_file: str | None = None
    asked: list[str] = field(default_factory=list)  # the names it mentions that are defined
    #: What the expressions of the calls run for it gave: (function, "expr = value").
    gave: list[tuple[str, str]] = field(default_factory=list)
    #: (path, name) of each definition shown, in the order shown.
    definitions: list[tuple[str, str]] = field(default_factory=list)
    #: The tests that failed when run for the task before its first step (evidence.py).
    failing: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.text)

    def answers(self, intent: TaskIntent) -> bool:
        """What was given answers the question, so nothing more need be read or run: for a
        question about what code gives, a call it asks about was run (reading the code is no
        answer to that); for any other task, something was read for it."""
        if intent.asks_value:
            return bool(self.computed) or bool(self.unrun and self.defined)
        return bool(self)

    def nowhere(self, intent: TaskIntent) -> bool:
        """A question whose every name occurs nowhere in the repository, with no code found
        for it and no call to run: what it asks about does not exist (answered so in one step)."""
        asked = intent.kind == "question" and bool(intent.names) and not intent.calls
        return asked and set(intent.names) <= set(self.absent) and not self.defined


@dataclass
class _Piece:
    path: str
    title: str
    body: str
    language: str
    start: int = 1
    end: int = 1
    name: str = ""


def gather(
    ctx: ToolContext, intent: TaskIntent, repo_files: list[str], budget: int = BUDGET_CHARS
) -> Context:
    """The code the task names, ready to append to it (empty when it names nothing)."""
    try:
        return _Gatherer(ctx, repo_files, budget).run(intent)
    except Exception:  # context is a help for the model, never a reason to fail the run
        log.exception("gathering the task's context failed")
        return Context()


def defining_files(
    ctx: ToolContext, names: list[str], repo_files: list[str]
) -> dict[str, list[str]]:
    """The repository's files that define each of `names` (functions, classes, methods)."""
    if not names:
        return {}
    listed = {path for path in repo_files if not _SECRET.search(path)}
    found: dict[str, list[str]] = {}
    for name, path, _ in _definition_lines(ctx, names, listed, 200):
        if path not in (paths := found.setdefault(name, [])):
            paths.append(path)
    return found


def _definition_lines(
    ctx: ToolContext, names: list[str], listed: set[str], most: int
) -> Iterator[tuple[str, str, int]]:
    """(name, path, line) of each line of the listed files that defines one of `names`."""
    pattern = DEFINITION.format(names="|".join(re.escape(n) for n in names))
    result = RgSearchTool(ctx).forward(pattern=pattern, max_results=most)
    for match in result.get("matches", []):
        name = defined_name(match["text"], match["path"])
        if name in names and match["path"] in listed:
            yield str(name), match["path"], match["line"]


class _Gatherer:
    def __init__(self, ctx: ToolContext, repo_files: list[str], budget: int) -> None:
        self.ctx = ctx
        self.files = [path for path in repo_files if not _SECRET.search(path)]
        self.listed = set(self.files)
        self.budget = budget
        self.pieces: list[_Piece] = []
        self.evidence: list[Evidence] = []
        self.uses: list[str] = []
        self.whole: set[str] = set()
        self.shown: set[tuple[str, int]] = set()
        self.nested: list[tuple[str, str]] = []
        self.outer_files: dict[str, str] = {}  # where each function with a nested one is
        self.texts: dict[str, str | None] = {}
        self.trees: dict[str, ast.Module | None] = {}
        self.holding: dict[tuple[str, int], str] = {}  # a definition -> the name it uses
        self.searched: set[tuple[str, str, int]] = set()  # found by the task's words
        self.nodes: dict[str, dict[int, ast.AST]] = {}
        self.bare = False  # definitions a change rewrites are shown without their docstrings
        self.words: list[str] = []  # the task's own words (wording.own_words), 30 at most

    def run(self, intent: TaskIntent) -> Context:
        task = intent.task
        bare = intent.change and not (intent.fix or intent.adds_tests)  # rewritten, not read
        self.bare = bare and not wording.DOCS.search(task)
        first = (test_failures(self.ctx, intent), recent_history(self.ctx, intent))
        self.evidence += [p for p in (*first, by_example(self.ctx, intent, self.files)) if p]
        talk = (*intent.names, *intent.carried, *intent.said[:1])  # the answer's first name
        mentioned = [name.rsplit(".", 1)[-1] for name in talk]
        self.words = wording.own_words(task)[:30]
        names = [*mentioned, *self.words]
        failing = [name for part in self.evidence for name in part.names]
        names = list(dict.fromkeys(failing + names))
        early = computed_calls(self.ctx, intent) if intent.calls else None  # what ran shows
        ran = [function.split(" (")[0] for function in early.ran_in] if early else []
        # the code the task's call ran comes before code it only names, what gives its value
        # first (dev sv-fix-bump-minor: `parse` of `parse('1.2.3').bump_minor()` filled the
        # room, bump_minor went unshown; dev sv-fix-not-equal the same, `match` cut)
        outer = {outer_callee(call) for call in intent.calls}
        names.sort(key=lambda n: 0 if n in failing else 1 if n in outer else 2 if n in ran else 3)
        found = self._definitions(names, early.ran_in if early else [])
        defined = {name for name, _, _ in found}
        # a name the task writes that the code uses without defining it (an environment
        # variable, a dict key, a setting): the functions that use it are its code
        found += self._holders([name for name in mentioned if name not in defined])
        named = named_files(task, self.files)
        if not named and (worded := file_of_words(self.ctx, intent, self.files, defined)):
            named = [worded]
        if intent.adds_tests and not any(map(is_test_path, named)):  # where new tests go
            named += tests_for([path for _, path, _ in found], self.files, self._text)
        held = defined | set(self.holding.values())
        keywords = keyword_names(task)
        # the question's value is an input, not code ("something like iPhone": dev)
        literal = intent.literal  # a property that reads the task: read once
        inputs_aside = [name for name in intent.names if repr(name) != literal]
        absent = missing_names(
            self.ctx, inputs_aside, held, self.files, change=intent.change, keywords=keywords
        )
        # no code named: the definitions its words name; none for a name found nowhere (dev
        # sv-missing-epoch: shown cmd_bump, the model told how bump_epoch works)
        related = not (found or named or self.evidence or absent) and intent.kind != "command"
        if related:
            found = self._related()
        elif intent.kind == "question" and asks_which_code(task):
            # "which method strips the prerelease and build?": the names are what the answer
            # acts on; the code whose name or docstring holds most of its words comes first
            searched = self._related(skip=defined, docstrings=True)
            self.searched, found = set(searched), searched + found
        if literal is not None:
            # "what does it give for 'x'?": the one function it is about, run with the value;
            # "i passed on_color='red' to colored": the one it names that takes on_color
            functions = [item for item in found if self._is_function(*item[1:])]
            call = passing_call(self.ctx, " ".join([task, *intent.said]), literal, functions)
            if call or len({name for name, _, _ in functions}) == 1:
                intent = replace(intent, calls=(call or f"{functions[0][0]}({literal})",))
        computed = early or computed_calls(self.ctx, intent)
        self.evidence.extend(part for part in (computed, absent) if part is not None)
        near = closest_names(self.ctx, absent.names, self.listed) if absent else []
        for path in named[:MAX_FILES]:
            if any(where == path for _, where, _ in found[:MAX_DEFINITIONS]):
                continue  # the task names code in it: that code is shown, not the whole file
            text = self._text(path)
            if text is not None and text.count("\n") <= WHOLE_FILE_LINES:
                whole = _Piece(path, f"{path} (the whole file)", text, fence_language(path))
                whole.end = len(text.splitlines())
                self._add(whole)
                self.whole.add(path)
            elif text is not None:
                self._add_passages(path, text)
        if intent.change:  # a class around a method shown: the model rewrote the class
            found = [item for item in found if not self._encloses(item, found)]
        if intent.change and not intent.adds_tests:  # the code a change rewrites whole first:
            # a failing test's source is in its output (dev tc-no-color-wins: shown after the
            # test, the function was cut to fit, and rewritten cut)
            found.sort(key=lambda item: is_test_path(item[1]))
        for name, path, line in found[:MAX_DEFINITIONS]:
            by_words = related or (name, path, line) in self.searched
            self._add_definition(name, path, line, related=by_words, changed=intent.change)
        for name in dict.fromkeys(name for name, _, _ in found[:MAX_DEFINITIONS]):
            self._add_uses(name)
        # one hop: what the shown definitions call, when the repository defines it
        called = self._called_names() if not self.whole else []
        for name, path, line in self._definitions(called)[:2]:
            self._add_definition(name, path, line)
        if intent.fix or intent.style == "bug":  # a bug told or sought: what its examples give
            shown = [(p.name, p.body) for p in self.pieces if p.name and p.language == "python"]
            if examples := docstring_examples(self.ctx, shown[:MAX_DEFINITIONS]):
                self.evidence.append(examples)
        context = self._render()
        context.named_files, context.near, context.nested = named, near, self.nested
        context.outer_files = self.outer_files
        context.asked = [name for name in names if name in defined]
        code = {p.path for p in self.pieces if p.name and p.language == "python"}
        code = {path for path in code if not is_test_path(path)}
        context.code_file = code.pop() if len(code) == 1 else None
        return context

    # --- what the task names -----------------------------------------------------------------

    def _add_passages(self, path: str, text: str) -> None:
        """A named file too long to show whole: the lines where the task's words occur, with a
        few around each (a `classifiers` change in a long pyproject.toml copies them exactly);
        where none does, the start of a file that is no module (a title, a test's imports)."""
        lines = text.splitlines()
        # the word that named the file ("in pyproject") is not what the task is about in it
        own = {PurePosixPath(path).stem.lower(), PurePosixPath(path).name.lower()}
        words = [word.lower() for word in self.words if word.lower() not in own]
        hits = [i for i, line in enumerate(lines) if any(w in line.lower() for w in words)]
        if not hits:
            if path.endswith(".py") and not is_test_path(path):
                return
            hits = [0]  # its start: a test file's imports, a document's title
        room = DEFINITION_LINES
        for start, end in passages(lines, hits, PASSAGE_AROUND):
            end = min(end, start + room)
            if end <= start:
                break
            room -= end - start
            body = "\n".join(lines[start:end]) + "\n"
            title = f"{path}, lines {start + 1}-{end} of {len(lines)}"
            self._add(_Piece(path, title, body, fence_language(path), start + 1, end))
            self.shown.add((path, start + 1))

    def _related(
        self, skip: Iterable[str] = (), docstrings: bool = False
    ) -> list[tuple[str, str, int]]:
        """(name, path, line) of the definitions whose names (and `docstrings`: asked which code
        does something) hold a task's words, code before tests, most words first ("how does it
        decide whether to print colours?": `_can_do_colour`; by docstrings `cprint` came too). A
        lexical search, as an editor's codebase retrieval: without it the 1.5B model answered a
        question naming nothing from a guess at the library, in one step."""
        words = [word_forms(word) for word in self.words if len(word) >= 4]
        if not words:
            return []
        ranked = []
        for name, path, line in every_definition(self.ctx, self.listed):
            if name in skip:
                continue  # named by the task: shown as such
            parts = [word_forms(part).pop() for part in _NAME_PART.findall(name)]
            doc = self._docstring(path, line) if docstrings else ""
            said = [word_forms(word).pop() for word in wording.WORD.findall(doc)]
            named = sum(any(meets_word(part, forms) for part in parts) for forms in words)
            told = sum(any(meets_word(part, forms) for part in parts + said) for forms in words)
            if told:  # a word in the name counts twice: a docstring says more than it is about
                wraps = self._delegates(name, path, line)  # of two, the one doing the work
                key = (is_test_path(path), -named - told, -named, wraps, len(name))
                ranked.append((*key, name, path, line))
        return [(name, path, line) for *_, name, path, line in sorted(ranked)[:MAX_RELATED]]

    def _node(self, path: str, line: int) -> ast.AST | None:
        """The Python definition (function, class) of `path` at `line`."""
        if path not in self.nodes:
            tree = self._tree(path) if path.endswith(".py") else None
            found = ast.walk(tree) if tree is not None else ()
            self.nodes[path] = {node.lineno: node for node in found if isinstance(node, _DEFS)}
        return self.nodes[path].get(line)

    def _encloses(self, item: tuple[str, str, int], found: list[tuple[str, str, int]]) -> bool:
        """Whether `item` is a class holding another of the `found` definitions (dev
        sv-fix-bump-minor: shown `Version` around `bump_minor`, the 1.5B model rewrote it)."""
        node = self._node(item[1], item[2])
        end = getattr(node, "end_lineno", 0) or 0
        return isinstance(node, ast.ClassDef) and any(
            path == item[1] and item[2] < line <= end for _, path, line in found
        )

    def _docstring(self, path: str, line: int) -> str:
        """The first paragraph of the docstring of the Python definition at `line`."""
        node = self._node(path, line)
        return (ast.get_docstring(node) or "").split("\n\n")[0] if isinstance(node, _DEFS) else ""

    def _holders(self, names: list[str]) -> list[tuple[str, str, int]]:
        """(name, path, line) of the Python definitions that use each of `names` without it
        being defined anywhere ("NO_COLOR isn't respected": `os.environ` is read inside
        `_can_do_colour`), the tests' only when no code uses it, up to MAX_RELATED per name."""
        held: list[tuple[str, str, int]] = []
        for word in names:
            result = RgSearchTool(self.ctx).forward(
                pattern=rf"\b{re.escape(word)}\b", glob="*.py", max_results=40
            )
            spots = sorted(
                {
                    (is_test_path(match["path"]), match["path"], *enclosing)
                    for match in result.get("matches", [])
                    if match["path"] in self.listed
                    and (enclosing := self._enclosing(match["path"], match["line"])) is not None
                }
            )
            code = [spot for spot in spots if not spot[0]]  # the tests only when no code
            for _, path, name, line in (code or spots)[:MAX_RELATED]:
                if (path, line) not in self.holding:
                    self.holding[(path, line)] = word
                    held.append((name, path, line))
        return held

    def _definitions(self, names: list[str], ran: Sequence[str] = ()) -> list[tuple[str, str, int]]:
        """(name, path, line) of each name's definition in the order the names came; of several,
        the one the task's call `ran` through (dev sv-fix-bump-minor: not the deprecated one),
        else one that does not hand its work to another of the name (dev sv-bump-step: the
        method, not the module function `return str(Version.parse(version).bump_patch())`)."""
        if not names:
            return []
        found: dict[str, tuple[str, str, int]] = {}
        for name, path, line in _definition_lines(self.ctx, names, self.listed, 50):
            if name not in found or (
                f"{name} ({path})" in ran
                if any(call.startswith(f"{name} (") for call in ran)
                else self._delegates(*found[name]) and not self._delegates(name, path, line)
            ):
                found[name] = (name, path, line)
        return sorted(found.values(), key=lambda item: names.index(item[0]))

    def _delegates(self, name: str, path: str, line: int) -> bool:
        """Whether the Python definition of `name` at `line` calls `name` itself (a wrapper)."""
        node = self._node(path, line)  # a function: a class making its own kind is no wrapper
        return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
            isinstance(call, ast.Call)
            and name in (getattr(call.func, "id", None), getattr(call.func, "attr", None))
            for statement in node.body
            for call in ast.walk(statement)
        )

    # --- reading -----------------------------------------------------------------------------

    def _text(self, path: str) -> str | None:
        if path not in self.texts:
            try:
                _, text = read_repo_text(self.ctx, path)
            except Exception:
                text = None
            self.texts[path] = None if text is None or "\0" in text else text
        return self.texts[path]

    def _add_definition(
        self, name: str, path: str, line: int, *, related: bool = False, changed: bool = False
    ) -> None:
        if path in self.whole or (path, line) in self.shown:
            return
        text = self._text(path)
        if text is None:
            return
        lines, tree = text.splitlines(), self._tree(path)
        start, end = span_at(tree, lines, line)
        self.shown.add((path, line))
        if tree is not None:  # functions the merge puts inside another: this one, or its own
            for inner, outer in nested_pairs(tree, name, line):
                self.nested.append((inner, outer))
                self.outer_files.setdefault(outer, path)
        rewritten = changed and not related
        most = CHANGED_LINES if rewritten else DEFINITION_LINES
        # the function a change rewrites, without its docstring: the model writes back what it
        # was shown, and a version written without one keeps it (patches/pysource.py)
        doc = docstring_span(tree, line) if rewritten and self.bare else None
        rows = [n for n in range(start, end + 1) if not (doc and doc[0] <= n <= doc[1])]
        cut = len(rows) > most
        last = rows[most - 1] if cut else end
        body = "\n".join(lines[n - 1] for n in rows if n <= last) + "\n"
        title = f"{path}, lines {start}-{last}: `{name}`" + f" (cut: it ends at line {end})" * cut
        title += " (its docstring left out: written without one, it keeps it)" * bool(doc)
        if changed and isinstance(owner := enclosing_node(tree, line), ast.ClassDef):
            title += f" (a method of `{owner.name}`: write the method alone, not the class)"
        if related:
            title += " (found by the task's words: check it is what is asked)"
        if (path, line) in self.holding:
            title += f" (it uses `{self.holding[path, line]}`)"
        self._add(
            _Piece(path, title, body, fence_language(path), start, last, name), code=rewritten
        )

    def _lines_using(self, name: str) -> list[tuple[str, int, str]]:
        result = RgSearchTool(self.ctx).forward(pattern=rf"\b{re.escape(name)}\b", max_results=40)
        return [
            (match["path"], match["line"], match["text"])
            for match in result.get("matches", [])
            if match["path"] in self.listed and match["path"] not in self.whole
        ]

    def _add_uses(self, name: str) -> None:
        found = self._lines_using(name)
        # the tests that use it, whole: asked "which test checks it?", a small model names the
        # test it was shown, not the one a line number points into
        tests = 0
        for path, line, _ in found:
            enclosing = self._enclosing(path, line)
            is_test = enclosing is not None and enclosing[0].startswith("test")
            if is_test and enclosing and tests < MAX_TESTS and not self._inside_shown(path, line):
                self._add_definition(enclosing[0], path, enclosing[1])
                tests += 1
        uses: list[str] = []
        callers: dict[str, None] = {}
        for path, line, text in found:
            if self._inside_shown(path, line):
                continue
            enclosing = self._enclosing(path, line)
            if enclosing is not None and enclosing[0] != name:
                callers.setdefault(enclosing[0], None)
            # the function first: given "path:line (in f)", dev jp-walk-callers said line numbers
            where = f"in {enclosing[0]} ({path}:{line})" if enclosing else f"{path}:{line}"
            uses.append(f"{where}: {text.strip()}")
        if uses:
            more = f" (and {len(uses) - MAX_USES} more)" if len(uses) > MAX_USES else ""
            # the functions, by name, first: asked what calls it, a small model otherwise
            # answers with the line numbers
            inside = f", inside {', '.join(callers)}" if callers else ""
            # one hop further, by name: "if I change _can_do_colour, what does that affect?"
            # reaches cprint through colored (dev tc-colour-impact); from the syntax trees, as
            # an answer about it is held to (tools/reach.py `reach_hops`)
            code = [caller for caller in callers if not caller.startswith("test")]
            _, hop = reach_hops(self.ctx, name, self.files, further=True)
            further = [user for user in hop if user not in callers]
            inside += f", and through {' and '.join(code)}: {', '.join(further)}" * bool(further)
            head = f"Where `{name}` is used{more}{inside}:\n"
            self.uses.append(head + "\n".join(uses[:MAX_USES]))

    def _enclosing(self, path: str, line: int) -> tuple[str, int] | None:
        """The innermost definition holding `line`: "which test checks it?" is the test's name."""
        return enclosing_at(self._tree(path), line) if path.endswith(".py") else None

    def _is_function(self, path: str, line: int) -> bool:
        tree = self._tree(path)
        return tree is not None and any(
            isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno == line
            for node in ast.walk(tree)
        )

    def _tree(self, path: str) -> ast.Module | None:
        if path not in self.trees:
            self.trees[path] = parsed(self._text(path))
        return self.trees[path]

    def _inside_shown(self, path: str, line: int) -> bool:
        return any(p.path == path and p.start <= line <= p.end for p in self.pieces)

    def _called_names(self) -> list[str]:
        """Functions the shown Python code calls (not builtins, not shown already)."""
        names: dict[str, None] = {}
        shown = {piece.name for piece in self.pieces}
        for piece in self.pieces:
            tree = self._tree(piece.path) if piece.language == "python" else None
            for node in ast.walk(tree) if tree is not None else ():
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Name)
                    and piece.start <= node.lineno <= piece.end
                    and node.func.id not in shown
                    and node.func.id not in _BUILTINS
                ):
                    names.setdefault(node.func.id, None)
        return list(names)[:10]

    def _add(self, piece: _Piece, *, code: bool = False) -> None:
        """`piece` if room is left, cut to fit; for the `code` a change rewrites, what ran counts
        half the budget at most (dev sv-fix-not-equal: shown no `match`, it wrote a class)."""
        ran = sum(len(part.body) + len(part.title) for part in self.evidence)
        used = sum(len(p.body) + len(p.title) for p in self.pieces)
        used += min(ran, self.budget // 2) if code else ran
        room = self.budget - used
        if room < 200:
            return
        if len(piece.body) > room:
            kept = piece.body[:room].rsplit("\n", 1)[0] + "\n"
            piece.title, piece.body = piece.title + " (cut to fit)", kept
            piece.end = piece.start + kept.count("\n") - 1
        self.pieces.append(piece)

    def _render(self) -> Context:
        if not self.pieces and not self.uses and not self.evidence:
            return Context()
        parts = ["Read for you just now, for this task:"]
        for part in self.evidence:
            parts.append(f"{part.title}:\n```text\n{part.body}\n```" if part.body else part.title)
        for piece in self.pieces:
            parts.append(f"{piece.title}:\n```{piece.language}\n{piece.body.rstrip()}\n```")
        parts.extend(self.uses)
        sources = [part.title for part in self.evidence] + [piece.title for piece in self.pieces]
        sources += [use.splitlines()[0] for use in self.uses]
        absent = [name for part in self.evidence if part.kind == "absent" for name in part.names]
        definitions = [(piece.path, piece.name) for piece in self.pieces if piece.name]
        defined = bool(self.uses) or bool(definitions)
        ran = [said for part in self.evidence for said in part.told]
        unrun = [call for part in self.evidence for call in part.unrun]
        return Context(
            "\n\n".join(parts),
            sources,
            absent=absent,
            defined=defined,
            computed=ran,
            unrun=unrun,
            definitions=definitions,
            gave=[said for part in self.evidence for said in part.gave],
            failing=[name for part in self.evidence if part.kind == "tests" for name in part.names],
        )
