"""Patches as LSP sees them: diagnostics per hunk, and the WorkspaceEdit that applies them.

Plain functions over the patch store, used by the patches and code-actions features. A pure
insertion is marked on the line it goes before (an empty range shows nowhere). Hunks are
numbered across files, in order, as `smol.acceptPatch [id, {hunks}]` names them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lsprotocol import types

from ..patches.store import FileChange, Patch, PatchStore
from .protocol import DIAGNOSTIC_SOURCE


def lsp_range(data: dict[str, Any]) -> types.Range:
    return types.Range(
        start=types.Position(line=data["start"]["line"], character=data["start"]["character"]),
        end=types.Position(line=data["end"]["line"], character=data["end"]["character"]),
    )


def diagnostics(store: PatchStore) -> dict[str, list[types.Diagnostic]]:
    """One Information diagnostic per hunk of every pending patch, by document uri."""
    by_uri: dict[str, list[types.Diagnostic]] = {}
    for patch in store.all():
        if patch.status != "pending":
            continue
        data = patch.to_protocol(store.root)
        message = f"Agent proposes: {patch.summary} (+{data['added']} −{data['removed']})"
        for file in data["files"]:
            for hunk in file["hunks"]:
                span = lsp_range(hunk["range"])
                if span.start == span.end:  # a pure insertion: mark the line it goes before
                    span = types.Range(
                        start=span.start,
                        end=types.Position(line=span.start.line + 1, character=0),
                    )
                by_uri.setdefault(file["uri"], []).append(
                    types.Diagnostic(
                        range=span,
                        message=message,
                        severity=types.DiagnosticSeverity.Information,
                        source=DIAGNOSTIC_SOURCE,
                        code=patch.id,
                    )
                )
    return by_uri


def _touches(a: types.Range, b: types.Range) -> bool:
    return (a.start.line, a.start.character) <= (b.end.line, b.end.character) and (
        b.start.line,
        b.start.character,
    ) <= (a.end.line, a.end.character)


def pending_at(store: PatchStore, uri: str, span: types.Range) -> list[Patch]:
    """Pending patches with a hunk touching `span` in the document `uri`."""
    found: list[Patch] = []
    for diagnostic in diagnostics(store).get(uri, []):
        patch = store.get(str(diagnostic.code))
        if _touches(diagnostic.range, span) and patch is not None and patch not in found:
            found.append(patch)
    return found


def subset(patch: Patch, hunks: list[int] | None) -> Patch:
    """The patch limited to the chosen hunks (numbered across files, in order)."""
    if hunks is None:
        return patch
    files, index = [], 0
    for change in patch.files:
        old_lines = (change.old_text or "").splitlines(keepends=True)
        new_lines = list(old_lines)
        offset = 0
        for hunk in change.hunks():
            if index in hunks:
                replacement = hunk.new_text.splitlines(keepends=True)
                new_lines[hunk.old_start + offset : hunk.old_end + offset] = replacement
                offset += len(replacement) - (hunk.old_end - hunk.old_start)
            index += 1
        files.append(FileChange(change.path, change.old_text, "".join(new_lines)))
    return Patch(id=patch.id, summary=patch.summary, files=files, session_id=patch.session_id)


def workspace_edit(
    patch: Patch,
    hunks: list[int] | None,
    store: PatchStore,
    version_of: Callable[[str], int | None],
) -> types.WorkspaceEdit:
    """The edit that applies `patch` (or its chosen hunks), versioned for open documents."""
    changes: list[Any] = []
    data = subset(patch, hunks).to_protocol(store.root)
    for change, file in zip(patch.files, data["files"], strict=True):
        uri = file["uri"]
        if change.old_text is None:
            changes.append(
                types.CreateFile(uri=uri, options=types.CreateFileOptions(ignore_if_exists=True))
            )
        if change.new_text is None:
            changes.append(types.DeleteFile(uri=uri))
            continue
        edits = [
            types.TextEdit(range=lsp_range(h["range"]), new_text=h["newText"])
            for h in file["hunks"]
        ]
        changes.append(
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(
                    uri=uri, version=version_of(uri)
                ),
                edits=edits,
            )
        )
    return types.WorkspaceEdit(document_changes=changes)
