"""A patch as the editor protocol shows it (docs/protocol.md's `Patch`), as plain data.

Per file: its uri, a diff (of what is still pending; as proposed once nothing is), the hash of
the text the hunks' ranges are in (`baseHash`: an editor draws them only on that text), and
per hunk its stable id, status, range (0-based lines, LSP's shape) and new text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .diff import unified_diff
from .model import FileChange, Patch, printable, split_lines


def position_after(lines: list[str], index: int) -> dict[str, int]:
    """The position where line `index` starts; past the last line, the end of the text."""
    if index < len(lines):
        return {"line": index, "character": 0}
    if not lines:
        return {"line": 0, "character": 0}
    last = lines[-1]
    if last.endswith("\n"):
        return {"line": len(lines), "character": 0}
    return {"line": len(lines) - 1, "character": len(last)}


def line_range(lines: list[str], start: int, end: int) -> dict[str, Any]:
    """Whole lines `start`..`end` (exclusive) of `lines` as a range."""
    return {"start": position_after(lines, start), "end": position_after(lines, end)}


def _file_view(root: Path, change: FileChange) -> dict[str, Any]:
    lines = split_lines(change.base)
    if change.pending():
        diff = unified_diff(change.path, change.base, change.proposed_text())
    else:
        diff = unified_diff(change.path, change.original, change.proposed)
    hunks = []
    for hunk in change.hunks:
        item: dict[str, Any] = {
            "id": hunk.id,
            "status": hunk.status,
            "range": line_range(lines, hunk.start, hunk.end),
            "newText": printable("".join(hunk.new)),
            "added": len(hunk.new),
            "removed": len(hunk.old),
        }
        if hunk.reason:
            item["reason"] = hunk.reason
        hunks.append(item)
    return {
        "uri": (root / change.path).as_uri(),
        "path": change.path,
        "diff": printable(diff),
        "baseHash": change.base_hash,
        "hunks": hunks,
    }


def patch_view(patch: Patch, root: Path) -> dict[str, Any]:
    added, removed = patch.stats()
    data: dict[str, Any] = {
        "id": patch.id,
        "sessionId": patch.session_id,
        "summary": patch.summary,
        "status": patch.status,
        "files": [_file_view(root, change) for change in patch.files],
        "validation": patch.validation,
        "added": added,
        "removed": removed,
    }
    if patch.reason:
        data["statusReason"] = patch.reason
    if patch.trace_id:
        data["traceId"] = patch.trace_id
    return data
