"""Patches as LSP sees them: a diagnostic per pending hunk, and the WorkspaceEdit of an accept.

Plain functions over the patch service, used by the patches and code-actions features. A pure
insertion is marked on the line it goes before (an empty range shows nowhere). Hunks are named
by their stable ids, as `smol.acceptPatch [id, {hunks}]` takes them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lsprotocol import types

from ..base.visible import visible
from ..patches.guard import patch_path
from ..patches.model import Patch, split_lines
from ..patches.service import PatchService, Plan
from ..patches.view import line_range, patch_view
from .protocol import DIAGNOSTIC_SOURCE


def lsp_range(data: dict[str, Any]) -> types.Range:
    return types.Range(
        start=types.Position(line=data["start"]["line"], character=data["start"]["character"]),
        end=types.Position(line=data["end"]["line"], character=data["end"]["character"]),
    )


def diagnostics(service: PatchService) -> dict[str, list[types.Diagnostic]]:
    """One Information diagnostic per pending hunk, by document uri; `data` names the hunk."""
    by_uri: dict[str, list[types.Diagnostic]] = {}
    for patch in service.all():
        if patch.resolved:
            continue
        for file in patch_view(patch, service.root)["files"]:
            for hunk in file["hunks"]:
                if hunk["status"] != "pending":
                    continue
                span = lsp_range(hunk["range"])
                if span.start == span.end:  # a pure insertion: mark the line it goes before
                    span = types.Range(
                        start=span.start,
                        end=types.Position(line=span.start.line + 1, character=0),
                    )
                by_uri.setdefault(file["uri"], []).append(
                    types.Diagnostic(
                        range=span,
                        message=visible(
                            f"Agent proposes: {patch.summary} (+{hunk['added']} −{hunk['removed']})",
                            breaks=True,
                        ),
                        severity=types.DiagnosticSeverity.Information,
                        source=DIAGNOSTIC_SOURCE,
                        code=patch.id,
                        data={"patchId": patch.id, "hunkId": hunk["id"]},
                    )
                )
    return by_uri


def _touches(a: types.Range, b: types.Range) -> bool:
    return (a.start.line, a.start.character) <= (b.end.line, b.end.character) and (
        b.start.line,
        b.start.character,
    ) <= (a.end.line, a.end.character)


def pending_at(service: PatchService, uri: str, span: types.Range) -> list[tuple[Patch, int]]:
    """(patch, hunk id) of each pending hunk touching `span` in the document `uri`."""
    found: list[tuple[Patch, int]] = []
    for diagnostic in diagnostics(service).get(uri, []):
        patch = service.get(str(diagnostic.code))
        if _touches(diagnostic.range, span) and patch is not None:
            found.append((patch, int(diagnostic.data["hunkId"])))  # type: ignore[index]
    return found


def workspace_edit(
    plan: Plan, service: PatchService, version_of: Callable[[str], int | None]
) -> types.WorkspaceEdit:
    """The edit that carries out `plan`: ranges in the text it was planned on, versioned."""
    changes: list[Any] = []
    for write in plan.writes:
        uri = patch_path(service.jail, write.path).as_uri()  # the guard, once more
        if write.result is None:
            changes.append(types.DeleteFile(uri=uri))
            continue
        if write.current is None:
            changes.append(
                types.CreateFile(uri=uri, options=types.CreateFileOptions(ignore_if_exists=True))
            )
        lines = split_lines(write.current)
        edits = [
            types.TextEdit(range=lsp_range(line_range(lines, start, end)), new_text=text)
            for start, end, text in write.edits
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
