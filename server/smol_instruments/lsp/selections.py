"""The user's message with the code they selected, as the agent reads it.

A selection carries its text, or only its range: then the text comes from the buffer as the
editor has it, else from the file on disk (inside the workspace only: the path jail). Each selection becomes
a fenced block naming the file and lines.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from lsprotocol import types
from pygls.uris import to_fs_path

from ..base.errors import ToolError
from ..patches.store import read_text
from ..safety.jail import PathJail
from .protocol import Selection

MAX_SELECTION_CHARS = 20_000


def relative_path(uri: str, root: Path) -> str:
    """The uri's path relative to `root` (absolute when outside it)."""
    path = Path(to_fs_path(uri) or uri)
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def text_in(
    uri: str, span: types.Range, root: Path, document_text: Callable[[str], str | None]
) -> str:
    """The text of `span` in the document, as open in the editor or on disk."""
    text = document_text(uri)
    if text is None:
        jail = PathJail(root)
        path = relative_path(uri, root)
        try:  # through jail.tree: no link followed, even one made after the check
            text = read_text(jail.tree, jail.relative(jail.resolve(path))) or ""
        except (ToolError, OSError):
            text = ""
    lines = text.splitlines(keepends=True)
    chosen = lines[span.start.line : span.end.line + 1]
    if not chosen:
        return ""
    if len(chosen) == 1:
        return chosen[0][span.start.character : span.end.character or None]
    chosen[0] = chosen[0][span.start.character :]
    chosen[-1] = chosen[-1][: span.end.character] if span.end.character else chosen[-1]
    return "".join(chosen)


def with_selections(
    message: str,
    selections: list[Selection],
    root: Path,
    document_text: Callable[[str], str | None],
) -> str:
    """The message followed by each non-empty selection as a fenced block."""
    parts = [message.strip()]
    for selection in selections:
        text = selection.text or text_in(selection.uri, selection.range, root, document_text)
        if not text.strip():
            continue
        path = relative_path(selection.uri, root)
        first, last = selection.range.start.line + 1, selection.range.end.line + 1
        parts.append(
            f"Selected code from {path}, lines {first}-{last}:\n```\n{text[:MAX_SELECTION_CHARS]}\n```"
        )
    return "\n\n".join(parts)
