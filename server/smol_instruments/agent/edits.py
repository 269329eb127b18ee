"""A reply that is a change: a block holding the new version of some functions, made a patch.

Small models cannot copy `old_text` exactly, but they write the complete new version of a
function well (measured on Qwen2.5-Coder-1.5B: the right fix at once, three times of three,
where a propose_patch call was never made). So a block whose first line is `# file: <path>`
and that holds only definitions (functions, classes, imports, constants) is taken as the
change it is: `propose_patch(path=..., old_text="", new_text=<the block>)`, which merges the
definitions into the file by name (patches/merge.py) and proposes the result like any other
patch: validated, shown, never written until the user accepts. In a run that asks for a
change, a block of definitions without the header goes to the one file that defines those
names (or the one file the task names).

Such a block does nothing when run (it defines functions nobody calls), so taking it as a change
never loses an action the model meant.
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Callable

from ..base.pyast import parsed
from ..patches.pysource import DEFINITIONS

#: `# file: calc/ops.py`, `# path: calc/ops.py`, `# File: `calc/ops.py``.
_HEADER = re.compile(r"^\s*#\s*(?:file|path|filename)\s*:\s*`?([^\s`]+)`?\s*$", re.IGNORECASE)
#: `# calc/ops.py` alone on the first line: a path, when the repository has it.
_BARE_PATH = re.compile(r"^\s*#\s*`?([\w./-]+\.\w+)`?\s*:?\s*$")
#: `calc/ops.py` as the first line: what is left of a fence that named its file
#: ("```python calc/ops.py"), never a line of code anyone means.
_FENCE_PATH = re.compile(r"^\s*([\w.-]+(?:/[\w.-]+)*\.py)\s*$")
_ALSO_ALLOWED = (ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign)

#: Lines dropped at most from the end of a block cut off mid-line (the token limit).
CUT_LINES = 3


def complete_prefix(code: str) -> str:
    """`code`, or, when it does not parse, the longest start of it (at most `CUT_LINES` lines
    shorter) that does: a reply cut at its token limit ends mid-statement."""
    lines = code.rstrip().splitlines()
    for drop in range(min(CUT_LINES, len(lines) - 1) + 1):
        candidate = "\n".join(lines[: len(lines) - drop]) + "\n"
        if parsed(candidate) is not None:
            return candidate if drop else code
    return code


def file_header(code: str, repo_files: set[str]) -> tuple[str | None, str]:
    """The path a block's first line names (`# file: <path>`), and the block without it."""
    lines = code.splitlines()
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None:
        return None, code
    header = _HEADER.match(lines[first]) or _FENCE_PATH.match(lines[first])
    bare = _BARE_PATH.match(lines[first]) if header is None else None
    path = header.group(1) if header else bare.group(1) if bare else None
    if path is None or (bare is not None and path.lstrip("./") not in repo_files):
        return None, code
    return path.removeprefix("./"), "\n".join(lines[first + 1 :]).strip("\n") + "\n"


def file_sections(code: str) -> list[tuple[str, str]]:
    """(path, the lines under it) for each `# file: <path>` line of a block that starts with
    one and has several (a change to several files written as one block); [] otherwise."""
    lines = code.strip("\n").splitlines()
    heads = [(i, found.group(1)) for i, line in enumerate(lines) if (found := _HEADER.match(line))]
    if len(heads) < 2 or heads[0][0] != 0:
        return []
    ends = [i for i, _ in heads[1:]] + [len(lines)]
    return [
        (path.removeprefix("./"), "\n".join(lines[i + 1 : end]).strip("\n") + "\n")
        for (i, path), end in zip(heads, ends, strict=True)
    ]


def is_change_block(code: str) -> bool:
    """`code` starts with a file header and the rest is Python (a change written unfenced)."""
    lines = code.strip().splitlines()
    if not lines or _HEADER.match(lines[0]) is None:
        return False
    return parsed(complete_prefix(textwrap.dedent("\n".join(lines[1:])))) is not None


def defined_names(
    code: str, tool_names: set[str], *, assignments: bool = False
) -> list[str] | None:
    """The functions and classes a block defines when that is all it does (with imports,
    constants, a docstring or a `__main__` guard beside them), else None; with `assignments`
    (a block under a `# file:` line), its module-level names too (`Attribute = Literal[...]`,
    run as code when it was all the block held: tc-italic, dev).

    A block that calls a tool at its top level is an action, not a change; one indented as a
    whole (methods written without their class) is read as the merge reads it, dedented."""
    tree = parsed(textwrap.dedent(code))
    if tree is None:
        return None
    names: list[str] = []
    for index, node in enumerate(tree.body):
        if isinstance(node, DEFINITIONS):
            names.append(node.name)
        elif isinstance(node, _ALSO_ALLOWED) or _is_main_guard(node):
            if called_names(node) & tool_names:
                return None
            if assignments and isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names += [target.id for target in targets if isinstance(target, ast.Name)]
        elif not (index == 0 and _is_docstring(node)):
            return None
    return names or None


def edit_call(path: str, body: str) -> str:
    """The code that proposes `body` as the new version of its definitions in `path`."""
    return f"print(propose_patch(path={path!r}, old_text='', new_text={body!r}))"


def choose_file(
    names: list[str],
    locate: Callable[[list[str]], dict[str, list[str]]],
    named_files: list[str],
) -> str | None:
    """The one Python file a header-less block of definitions belongs to: the file that
    defines the names it redefines, else the one Python file the task names."""
    found = locate(names)
    homes = {path for paths in found.values() for path in paths if path.endswith(".py")}
    if len(homes) == 1:
        return homes.pop()
    if not homes:
        named = [path for path in named_files if path.endswith(".py")]
        if len(named) == 1:
            return named[0]
    return None


def _is_docstring(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def _is_main_guard(node: ast.stmt) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
    )


def called_names(tree: ast.AST) -> set[str]:
    """The names `tree` calls directly (`f(...)`, not `x.f(...)`)."""
    return {
        node.func.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
