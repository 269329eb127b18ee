"""A call a change adds that passes a keyword the repository's function does not take.

Asked for a `--sort-keys` flag, the 1.5B model added the option and passed it on as
`jsonpointer.resolve_pointer(doc, ptr, sort_keys=args.sort_keys)`; `resolve_pointer` takes no
such keyword, so the command raised TypeError on its first use, while the project's tests
(which never run the command) passed and the run said `completed` (dev jp-cli-sort-keys). A
type checker finds this from the signature; here only the case that needs no inference is
read, so nothing is said that is not so: a call through a name the file imports from one of
the repository's modules (`import m` then `m.f(...)`, `from m import f` then `f(...)`) or
defines itself, of a function (a class: its `__init__`) with no `**kwargs`, read from the
proposal where the proposal changes it. A method called on a value is left alone: what the
value is needs inference.
"""

from __future__ import annotations

import ast
from pathlib import PurePosixPath
from typing import Any

from ..base.errors import ToolError
from ..base.pyast import is_python_source, parsed
from ..patches.pysource import unread_check
from .base import Changes, ToolContext
from .files import read_repo_text
from .imports import module_of

#: The name of the check `keyword_check` adds to a validation.
KEYWORD_CHECK = "every keyword a new call passes is taken"

_FUNCTION = (ast.FunctionDef, ast.AsyncFunctionDef)


def read_checks(ctx: ToolContext, changes: Changes) -> list[dict[str, Any]]:
    """The checks a proposal is held to that read its code and run nothing: a new parameter
    never read (patches/pysource.py `unread_check`), a keyword the function does not take."""
    return [*unread_check(changes), *keyword_check(ctx, changes)]


def keyword_check(ctx: ToolContext, changes: Changes) -> list[dict[str, Any]]:
    """A failed check naming each call the change adds that passes a keyword its function in
    the repository does not take; [] when there is none."""
    proposed = {path: new for path, _, new in changes if new is not None}
    said: list[str] = []
    for path, old, new in changes:
        if new is None or not is_python_source(path, new) or (tree := parsed(new)) is None:
            continue
        before = parsed(old or "")
        had = (
            {ast.unparse(n) for n in ast.walk(before) if isinstance(n, ast.Call)}
            if before
            else set()
        )
        bound = _bindings(tree, path)
        for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
            passed = [k.arg for k in call.keywords]
            if not passed or None in passed or ast.unparse(call) in had:
                continue
            target = _target(call.func, bound)
            if target is None:
                continue
            found = _signature(ctx, proposed, *target)
            if found is None:
                continue
            where, line, takes = found
            extra = [name for name in passed if name not in takes]
            if extra:
                said.append(
                    f"`{ast.unparse(call)}` ({path}, line {call.lineno}) passes "
                    f"{', '.join(f'`{name}`' for name in extra)}, which `{target[1]}` ({where}, "
                    f"line {line}) does not take: it takes {', '.join(takes) or 'no keywords'}"
                )
    if not said:
        return []
    output = "; ".join(said) + ": such a call raises TypeError when it runs"
    return [{"command": KEYWORD_CHECK, "passed": False, "output": output}]


def _bindings(tree: ast.Module, path: str) -> dict[str, tuple[str, str]]:
    """What each top-level name of the file is, as (module, name): `import m as n` binds n to
    (m, ""), `from m import f as g` binds g to (m, f), `def f` binds f to (this module, f)."""
    bound: dict[str, tuple[str, str]] = {}
    here = module_of(path) or ""
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname or "." not in alias.name:
                    bound[alias.asname or alias.name] = (alias.name, "")
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                bound[alias.asname or alias.name] = (node.module, alias.name)
        elif isinstance(node, (*_FUNCTION, ast.ClassDef)):
            bound[node.name] = (here or f"<{path}>", node.name)
    return bound


def _target(func: ast.expr, bound: dict[str, tuple[str, str]]) -> tuple[str, str] | None:
    if isinstance(func, ast.Name) and bound.get(func.id, ("", ""))[1]:
        return bound[func.id]
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        module, name = bound.get(func.value.id, ("", "x"))
        return (module, func.attr) if module and not name else None
    return None


def _signature(
    ctx: ToolContext, proposed: dict[str, str], module: str, name: str
) -> tuple[str, int, list[str]] | None:
    """(path, line, keywords it takes) of the repository's function `name` in `module`; None
    when the module is not the repository's, the name is no function or class there, or it
    takes any keyword (`**kwargs`)."""
    for path in _paths(module):
        text = proposed.get(path)
        if text is None:
            try:
                text = read_repo_text(ctx, path)[1]
            except ToolError:
                continue
        tree = parsed(text)
        if tree is None:
            return None
        function: ast.FunctionDef | ast.AsyncFunctionDef | None = None
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name == name:
                init = [n for n in node.body if isinstance(n, _FUNCTION) and n.name == "__init__"]
                if not init or node.bases or node.decorator_list:  # inherited, or a dataclass
                    return None
                function = init[0]
            elif isinstance(node, _FUNCTION) and node.name == name:
                function = node
        if function is None or function.args.kwarg is not None:
            return None
        every = [*function.args.args, *function.args.kwonlyargs]
        return path, function.lineno, [a.arg for a in every if a.arg not in ("self", "cls")]
    return None


def _paths(module: str) -> list[str]:
    if module.startswith("<"):  # a file that is no module (a script): itself
        return [module[1:-1]]
    base = PurePosixPath(*module.split("."))
    found = [f"{base}.py", f"{base}/__init__.py"]
    return [*found, *(f"src/{path}" for path in found)]
