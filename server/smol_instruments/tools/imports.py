"""A proposal that uses a name its file never imports gets the import, as an editor's quick fix.

Asked to add tests for `escape` and `unescape`, the 1.5B model wrote tests that call them in a
test file importing five other names from the same module: every new test would fail with a
NameError, and a small model rarely reads that as "import it" (it rewrites the assertions).
Editors offer the fix ("Import 'escape' from 'jsonpointer'"); here it is made before the
proposal is checked, and said in its description, so the user reviews it with the rest.

Only names the proposal made undefined (pyflakes' reading of the file before and after: a
library, scopes, star imports and all, rather than a walk of our own), only names the
repository defines at the top level of one of its modules (`find_imports`, as `evaluate` finds
them), never the file's own module; the import is one `from M import a, b` line after the
file's last top-level import. A name found nowhere is left for the checks to report.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from pathlib import PurePosixPath

from pyflakes import checker, messages

from ..base import pyast
from ..base.testruns import is_test_path
from ..patches.pysource import docstring
from .base import Changes, ToolContext
from .files import read_repo_text
from .search import RgSearchTool

_TOP_DEFINITION = r"^(?:async\s+)?(?:def|class)\s+({names})\b|^({names})\s*(?::[^=]*)?="


def undefined_names(text: str, path: str) -> set[str] | None:
    """The names pyflakes reads as undefined in `text`; None when it does not parse or a star
    import makes every name possibly defined."""
    try:
        tree = pyast.parse(text)
    except (SyntaxError, ValueError):
        return None
    found = checker.Checker(tree, filename=path).messages
    if any(isinstance(m, messages.ImportStarUsed) for m in found):
        return None
    return {str(m.message_args[0]) for m in found if isinstance(m, messages.UndefinedName)}


def with_imports(ctx: ToolContext, changes: Changes) -> tuple[Changes, list[str]]:
    """`changes` with each Python file importing the repository's names its new text uses and
    does not import, and the sentences that say which ("added `from m import a` to t.py")."""
    out: Changes = []
    told: list[str] = []
    for path, old, new in changes:
        missing = _introduced(path, old, new)
        own = module_of(path)
        # code outside the tests never imports from them
        homes = find_imports(ctx, sorted(missing), tests=is_test_path(path))
        found = [(m, name) for m, name in homes if m != own]
        if new is None or not found:
            out.append((path, old, new))
            continue
        modules: dict[str, list[str]] = {}
        for module, name in found:
            modules.setdefault(module, []).append(name)
        lines = [f"from {m} import {', '.join(names)}" for m, names in modules.items()]
        out.append((path, old, _insert(new, lines)))
        told += [
            f"added `{line}` to {path}: the proposal uses it and did not import it"
            for line in lines
        ]
    return out, told


def _introduced(path: str, old: str | None, new: str | None) -> set[str]:
    if new is None or not path.endswith(".py"):
        return set()
    after = undefined_names(new, path)
    before = undefined_names(old, path) if old else set()
    if after is None or before is None:
        return set()
    return after - before


def _insert(text: str, lines: list[str]) -> str:
    """`lines` after the last top-level import of `text` (else after its docstring)."""
    body = pyast.parse(text).body
    imports = [n for n in body if isinstance(n, (ast.Import, ast.ImportFrom))]
    after = imports[-1] if imports else docstring(body)
    rows = text.splitlines(keepends=True)
    at = (after.end_lineno or after.lineno) if after is not None else 0
    newline = "\r\n" if text.count("\r\n") * 2 > text.count("\n") else "\n"
    if at and not rows[at - 1].endswith(("\n", "\r")):
        rows[at - 1] += newline
    return "".join([*rows[:at], *(line + newline for line in lines), *rows[at:]])


def module_of(path: str) -> str | None:
    """The dotted module a repository file is imported as (`src/` layout understood)."""
    pure = PurePosixPath(path)
    if pure.suffix != ".py":
        return None
    parts = list(pure.with_suffix("").parts)
    if parts and parts[0] == "src":
        parts = parts[1:]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    if not parts or not all(part.isidentifier() for part in parts):
        return None
    return ".".join(parts)


def find_imports(
    ctx: ToolContext, names: list[str], *, tests: bool = True, modules: bool = False
) -> list[tuple[str, str]]:
    """(module, name) for each name a module of the repository defines at its top level; a
    module outside the tests first, then the shortest path (test modules only if `tests`).
    With `modules`, a name that is one of its top-level modules or packages is (name, ""):
    `inflection.tableize('x')` is how a user writes it (dev infl-chat-tableize)."""
    if not names:
        return []
    alternatives = "|".join(re.escape(name) for name in names)
    pattern = _TOP_DEFINITION.format(names=alternatives)
    result = RgSearchTool(ctx).forward(pattern=pattern, glob="*.py", max_results=200)
    homes: dict[str, list[str]] = {}
    for match in result.get("matches", []):
        hit = re.match(pattern, match["text"])
        name = (hit.group(1) or hit.group(2)) if hit else None
        if name:
            homes.setdefault(name, []).append(match["path"])
    imports = []
    for name in names:
        found = {path for path in homes.get(name, []) if tests or not is_test_path(path)}
        paths = sorted(found, key=lambda p: (is_test_path(p), len(p), p))
        module = next((m for m in map(module_of, paths) if m is not None), None)
        if module is not None:
            imports.append((module, name))
        elif modules and any(
            (base / name / "__init__.py").is_file() or (base / f"{name}.py").is_file()
            for base in (ctx.root, ctx.root / "src")
        ):
            imports.append((name, ""))
    return imports


def method_owners(ctx: ToolContext, name: str) -> list[tuple[str, str]]:
    """(class, module) of each class of the repository's modules that defines a method `name`:
    what a call written as `name(...)` needs to run (an instance first)."""
    pattern = rf"^\s+(?:async\s+)?def\s+{re.escape(name)}\s*\(\s*self\b"
    result = RgSearchTool(ctx).forward(pattern=pattern, glob="*.py", max_results=20)
    owners: list[tuple[str, str]] = []
    for path in dict.fromkeys(match["path"] for match in result.get("matches", [])):
        module = module_of(path)
        try:
            tree = pyast.parse(read_repo_text(ctx, path)[1])
        except Exception:  # unreadable or not Python: no owner said
            continue
        for node in tree.body:
            if (
                module
                and isinstance(node, ast.ClassDef)
                and any(
                    isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name == name
                    for m in node.body
                )
            ):
                owners.append((node.name, module))
    return owners


#: A value that stands for a required argument in an example call, by its annotation's name.
_STAND_INS = {
    "int": "0",
    "float": "0.0",
    "bool": "False",
    "bytes": "b''",
    "list": "[]",
    "dict": "{}",
    "tuple": "()",
    "set": "set()",
    "Iterable": "[]",
    "Sequence": "[]",
    "Mapping": "{}",
}


def parameter_owners(ctx: ToolContext, name: str) -> list[tuple[str, str, int, list[str]]]:
    """(function, path, line, stand-ins for its required arguments) of each function of the
    repository's modules outside the tests that takes a parameter `name`: what a model that
    calls `on_color('red')` for "I passed on_color='red' to colored" meant to call. Top-level
    functions first."""
    result = RgSearchTool(ctx).forward(
        pattern=rf"\b{re.escape(name)}\b", glob="*.py", max_results=200
    )
    found: list[tuple[int, str, str, int, list[str]]] = []
    paths = dict.fromkeys(match["path"] for match in result.get("matches", []))
    for path in (p for p in paths if not is_test_path(p)):
        try:
            tree = pyast.parse(read_repo_text(ctx, path)[1])
        except Exception:  # unreadable or not Python: no owner said
            continue
        top = {id(node) for node in tree.body}
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            args = node.args
            every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
            if not any(arg.arg == name for arg in every):
                continue
            found.append((id(node) not in top, node.name, path, node.lineno, _stand_ins(args)))
    found.sort(key=lambda owner: owner[0])
    return [owner[1:] for owner in found]


def passing_call(
    ctx: ToolContext, task: str, value: str, functions: Sequence[tuple[str, str, int]] = ()
) -> str | None:
    """The call a question means when it writes its value as a keyword argument ("i passed
    on_color='red' to colored"): the function the task names, of those that take the keyword,
    with stand-ins for its required arguments. Else when it tells its value as what one
    parameter of one of `functions` (name, path, line) it names holds ("colored for an
    attribute it doesnt have, like shiny": `attrs`), `told_as`. None otherwise."""
    written = re.search(rf"\b([A-Za-z_]\w*)\s*=\s*{re.escape(value)}", task)
    if written is None:
        return told_as(ctx, task, value, functions)
    for owner in parameter_owners(ctx, written[1]):
        if re.search(rf"\b{re.escape(owner[0])}\b", task):
            return call_with(owner, written[1], value)
    return None


#: Annotations of a parameter that takes several values: a value told for it goes in a list.
_SEVERAL = {"Iterable", "Sequence", "Collection", "list", "List", "set", "Set", "tuple", "Tuple"}


def told_as(
    ctx: ToolContext, task: str, value: str, functions: Sequence[tuple[str, str, int]]
) -> str | None:
    """The call of a function the task names (the one function when it names none: "what if
    i pass it 'red'") whose one parameter is named by a word of the task other than its name
    (`attrs` by "attribute", `min_length` by "length": the word starts with the parameter's
    part, its plural `s` aside, of 4+ letters), with `value` passed to it (in a list where
    its annotation takes several); None unless exactly one parameter of them is so named, or one of them is the word itself ("a color like
    purple": `color`, not `on_color`), or one is written as code (`on_color`, named by the
    answer a follow-up points back to: fresh dev tc-chat-background). Measured on fresh dev
    tc-unknown-attr: without it, "shiny" was passed as the text to colour, which ran without
    error."""
    functions = list(dict.fromkeys(functions))  # a definition found twice is one
    named = {name for name, _, _ in functions if re.search(rf"\b{re.escape(name)}\b", task)}
    named = named or {name for name, _, _ in functions[:1] if len(functions) == 1}  # "it"
    words = {w for w in re.findall(r"[a-z]{4,}", task.lower()) if w not in named}
    exact = set(re.findall(r"\b[a-z]\w*_\w+", task.lower()))  # `on_color`, written as code
    matches: list[tuple[tuple[str, str, int, list[str]], ast.arg]] = []
    for name, path, line in functions:
        if name not in named:
            continue
        try:
            tree = pyast.parse(read_repo_text(ctx, path)[1])
        except Exception:  # unreadable or not Python: no call from it
            continue
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.lineno != line:
                continue
            args = node.args
            positional = [*args.posonlyargs, *args.args]
            optional = positional[len(positional) - len(args.defaults) :] + args.kwonlyargs
            for arg in optional:
                parts = [p.removesuffix("s") for p in arg.arg.lower().split("_") if len(p) >= 4]
                if arg.arg.lower() in exact or any(w.startswith(p) for p in parts for w in words):
                    matches.append(((name, path, line, _stand_ins(args)), arg))
    written = [m for m in matches if m[1].arg.lower() in exact]
    whole = [m for m in matches if m[1].arg.lower() in words]  # `color` over `on_color`
    chosen = next((group for group in (written, whole, matches) if len(group) == 1), None)
    if chosen is None:
        return None
    owner, arg = chosen[0]
    return call_with(owner, arg.arg, f"[{value}]" if _head(arg) in _SEVERAL else value)


def call_with(owner: tuple[str, str, int, list[str]], parameter: str, value: str) -> str:
    """A call of the function `owner` (parameter_owners) passing `value` as `parameter`."""
    function, _, _, stand_ins = owner
    return f"{function}({', '.join([*stand_ins, f'{parameter}={value}'])})"


def _stand_ins(args: ast.arguments) -> list[str]:
    """Literals for a function's required positional arguments (`self`/`cls` aside), each by
    its annotation, else its name as a string (`text` -> 'text')."""
    positional = [*args.posonlyargs, *args.args]
    required = positional[: len(positional) - len(args.defaults)]
    return [
        _STAND_INS.get(_head(arg), repr(arg.arg))
        for arg in required
        if arg.arg not in ("self", "cls")
    ]


def _head(arg: ast.arg) -> str:
    """The name an argument's annotation starts with (`Iterable[str] | None` -> Iterable)."""
    annotation = ast.unparse(arg.annotation) if arg.annotation is not None else ""
    return re.split(r"[\[ |.]", annotation.rsplit(".", 1)[-1])[0] if annotation else ""


def fitting_callables(
    ctx: ToolContext, paths: Sequence[str], count: int, shown: Sequence[str] = ()
) -> list[str]:
    """The top-level functions and classes of the code files `paths` that a call with `count`
    positional values can run, in the order a question that writes values and names no code
    may try them: `shown` ones its module exports (all public ones where it has no
    `__all__`), then the rest of its `__all__`, then other `shown` ones, then public
    functions as defined. A class no module exports and no one shows is left out: an
    instance's text rarely says what it holds. Fresh dev pa-case ("is matching case
    sensitive? e.g. 'Hello {}' against 'hello World'"): `parse`, of `__all__`, before the
    `Match` class the word "matching" found, whose instance showed nothing; dev jp-no-slash:
    the `JsonPointer` class shown, in a module with no `__all__`, before the first public
    function that took one value (`pairwise`)."""
    ranked: list[tuple[tuple[int, int], str]] = []
    for path in paths:
        if not path.endswith(".py") or is_test_path(path):
            continue
        try:
            tree = pyast.parse(read_repo_text(ctx, path)[1])
        except Exception:  # unreadable or not Python: nothing from it
            continue
        listed = _exported(tree)
        for order, node in enumerate(tree.body):
            if not _takes(node, count):
                continue
            name = node.name  # type: ignore[attr-defined]
            exported = name in listed if listed is not None else not name.startswith("_")
            if name in shown and exported:
                tier = 0
            elif exported and listed is not None:
                tier, order = 1, listed.index(name)
            elif name in shown:
                tier = 2
            elif isinstance(node, ast.ClassDef) or name.startswith("_"):
                continue
            else:
                tier = 3
            ranked.append(((tier, order), name))
    return list(dict.fromkeys(name for _, name in sorted(ranked)))


def _takes(node: ast.stmt, count: int) -> bool:
    """A function, or a class by its `__init__`, that `count` positional values can call."""
    if isinstance(node, ast.ClassDef):
        init = [n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"]
        if not init:
            return False
        args = init[0].args
        positional = [*args.posonlyargs, *args.args][1:]  # self
        defaults = min(len(args.defaults), len(positional))
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        args = node.args
        positional = [*args.posonlyargs, *args.args]
        defaults = len(args.defaults)
    else:
        return False
    required = len(positional) - defaults
    return required <= count and (count <= len(positional) or args.vararg is not None)


def _exported(tree: ast.Module) -> list[str] | None:
    """The names a module's `__all__ = [...]` lists (None when it has none written as a
    literal list or tuple: `__all__ = base.__all__ + [...]`, or a repository's `__all__ = 3`)."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            try:
                names = ast.literal_eval(node.value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                return None
            if not isinstance(names, (list, tuple)):
                return None
            return [name for name in names if isinstance(name, str)]
    return None
