"""A diff in words: each change line by line, in the function it touches.

Asked "what did the last commit change?" with the commit's unified diff, the 1.5B model read
the context line `def tasks_file():` as an added function and answered "it adds tasks_file()";
given the same change as "in `tasks_file()`, the line `A` became `B`", it answered right every
time (five samples, two temperatures). So a commit's diff is told that way to the model:

    todolib/storage.py:
    - added the line `import os`
    - in `tasks_file()`, the line `return Path.home() / ".todo.json"` became `return ...`

Pure: the diff's text in, the description out (None when it cannot be read). `new_text(path)`
gives a file's text after the change, to name the Python function or class each change is in.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field

from unidiff import PatchedFile, PatchSet
from unidiff.errors import UnidiffParseError

from .pysource import enclosing, parse

#: Lines of one side of a change quoted at most, and characters of one quoted line.
QUOTED_LINES = 3
QUOTED_CHARS = 140


@dataclass
class _Change:
    """Removed lines followed by added lines, at a line of the new file."""

    line: int  # where it is in the new file (1-based)
    removed: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)


def describe_diff(
    diff: str, new_text: Callable[[str], str | None], limit: int = 1500
) -> str | None:
    """The changes of `diff`, file by file, one line each; None when it does not parse."""
    try:
        patch = PatchSet(diff)
    except (UnidiffParseError, ValueError):
        return None
    if not len(patch):
        return None
    out: list[str] = []
    size = 0
    left = 0
    for patched in patch:
        lines = _describe_file(patched, new_text)
        for line in lines:
            if size + len(line) > limit:
                left += 1
                continue
            out.append(line)
            size += len(line) + 1
    if left:
        out.append(f"... and {left} more changes")
    return "\n".join(out)


def _describe_file(patched: PatchedFile, new_text: Callable[[str], str | None]) -> list[str]:
    path = patched.path
    if patched.is_binary_file:
        return [f"{path}: a binary file changed"]
    if patched.is_added_file:
        return [f"{path}: a new file of {patched.added} lines"]
    if patched.is_removed_file:
        return [f"{path}: deleted ({patched.removed} lines)"]
    source = patched.source_file or ""
    header = f"{path}:"
    if patched.is_rename:
        header = f"{path} (renamed from {source.removeprefix('a/')}):"
    tree = _tree(new_text(path)) if path.endswith(".py") else None
    lines = [header]
    for change in _changes(patched):
        lines.append("- " + _sentence(change, tree))
    return lines


def _changes(patched: PatchedFile) -> list[_Change]:
    """Each run of removed-then-added lines of the file's hunks, blank lines left out."""
    found: list[_Change] = []
    for hunk in patched:
        current: _Change | None = None
        target = hunk.target_start
        for line in hunk:
            text = line.value.rstrip("\r\n")
            if line.is_context:
                current = None
                target += 1
                continue
            if current is None or (line.is_removed and current.added):
                current = _Change(target)
                found.append(current)
            if line.is_added:
                target += 1
                if text.strip():
                    current.added.append(text.strip())
            elif line.is_removed and text.strip():
                current.removed.append(text.strip())
    return [change for change in found if change.removed or change.added]


def _sentence(change: _Change, tree: ast.Module | None) -> str:
    where = ""
    node = enclosing(tree, change.line) if tree is not None else None
    if node is not None:
        kind = "class " if isinstance(node, ast.ClassDef) else ""
        where = f"in `{kind}{node.name}{'' if kind else '()'}`, "
    removed, added = _quote(change.removed), _quote(change.added)
    plural_r = "s" if len(change.removed) > 1 else ""
    plural_a = "s" if len(change.added) > 1 else ""
    if change.removed and change.added:
        return f"{where}the line{plural_r} {removed} became {added}"
    if change.added:
        return f"{where}added the line{plural_a} {added}"
    return f"{where}removed the line{plural_r} {removed}"


def _quote(lines: list[str]) -> str:
    shown = [
        f"`{line if len(line) <= QUOTED_CHARS else line[: QUOTED_CHARS - 3] + '...'}`"
        for line in lines[:QUOTED_LINES]
    ]
    more = f" (and {len(lines) - QUOTED_LINES} more)" if len(lines) > QUOTED_LINES else ""
    return " / ".join(shown) + more


def _tree(text: str | None) -> ast.Module | None:
    if text is None:
        return None
    try:
        return parse(text)
    except SyntaxError:
        return None
