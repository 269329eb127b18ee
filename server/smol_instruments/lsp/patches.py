"""Proposed patches in any LSP editor: diagnostics per pending hunk, `smol/patches`, accept, reject.

Thin over the patch service (patches/service.py), which owns the lifecycle. Each pending hunk
shows as one Information diagnostic. `smol.acceptPatch [patchId, {hunks?}]` places the chosen
hunks (default: all pending) in the buffer as the editor has it now and sends them with
`workspace/applyEdit` (so they land in its undo history), or, for a client without applyEdit,
the daemon writes them atomically; hunks whose region changed are stale, the others are
applied, and the patch's remaining hunks stay pending. `smol.rejectPatch [patchId, {reason?,
hunks?}]` changes nothing on disk. An agent waiting in `apply_patch` waits on the service.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from ..base.errors import ToolError
from ..patches.guard import patch_path
from ..patches.model import Patch, split_lines
from ..patches.service import Outcome, PatchService, Plan
from ..patches.store import read_text
from ..patches.view import line_range, patch_view
from .protocol import (
    CMD_ACCEPT_PATCH,
    CMD_REJECT_PATCH,
    DIAGNOSTIC_SOURCE,
    PATCHES,
    command_arguments,
)
from .server import SmolLanguageServer

log = logging.getLogger(__name__)

RECENT_RESOLVED = 50


class PatchCommandError(JsonRpcException):
    """A patch command that could not be carried out; the message says why and what to do."""

    CODE = -32001


def _error(message: str) -> PatchCommandError:
    return PatchCommandError(code=PatchCommandError.CODE, message=message)


def _range(data: dict[str, Any]) -> types.Range:
    return types.Range(
        start=types.Position(line=data["start"]["line"], character=data["start"]["character"]),
        end=types.Position(line=data["end"]["line"], character=data["end"]["character"]),
    )


class EditorPatches:
    """Publishes diagnostics for pending hunks and carries out the editor's decisions."""

    def __init__(self, server: SmolLanguageServer) -> None:
        self.server = server
        self._published: set[str] = set()
        self._deciding = asyncio.Lock()  # one decision at a time: plan, applyEdit, commit
        server.store_listeners.append(self._follow)

    def _follow(self, service: PatchService) -> None:
        """Redraw diagnostics on every change of the workspace's patches."""
        service.subscribe(lambda _patch: self.server.post(self.publish))

    @property
    def service(self) -> PatchService:
        service = self.server.patch_store
        if service is None:
            raise _error("no workspace is open")
        return service

    def listing(self) -> dict[str, Any]:
        if self.server.patch_store is None:
            return {"patches": []}
        patches = self.service.all()
        pending = [p for p in patches if not p.resolved]
        resolved = [p for p in patches if p.resolved][-RECENT_RESOLVED:]
        chosen = sorted(pending + resolved, key=lambda p: p.created_at)
        return {"patches": [patch_view(p, self.service.root) for p in chosen]}

    def diagnostics(self) -> dict[str, list[types.Diagnostic]]:
        by_uri: dict[str, list[types.Diagnostic]] = {}
        for patch in self.service.all():
            if patch.resolved:
                continue
            for file in patch_view(patch, self.service.root)["files"]:
                for hunk in file["hunks"]:
                    if hunk["status"] != "pending":
                        continue
                    span = _range(hunk["range"])
                    if span.start == span.end:  # a pure insertion: mark the line it goes before
                        span = types.Range(
                            start=span.start,
                            end=types.Position(line=span.start.line + 1, character=0),
                        )
                    message = (
                        f"Agent proposes: {patch.summary} (+{hunk['added']} −{hunk['removed']})"
                    )
                    by_uri.setdefault(file["uri"], []).append(
                        types.Diagnostic(
                            range=span,
                            message=message,
                            severity=types.DiagnosticSeverity.Information,
                            source=DIAGNOSTIC_SOURCE,
                            code=patch.id,
                            data={"patchId": patch.id, "hunkId": hunk["id"]},
                        )
                    )
        return by_uri

    def publish(self) -> None:
        """Send the diagnostics of every pending hunk; clear those of decided ones."""
        if self.server.patch_store is None:
            return
        current = self.diagnostics()
        for uri in set(current) | self._published:
            self.server.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=current.get(uri, []))
            )
        self._published = set(current)

    def pending_at(self, uri: str, span: types.Range) -> list[tuple[Patch, int]]:
        """(patch, hunk id) of the pending hunks touching `span` in the document `uri`."""
        found: list[tuple[Patch, int]] = []
        for diagnostic in self.diagnostics().get(uri, []):
            d = diagnostic.range
            touches = (d.start.line, d.start.character) <= (span.end.line, span.end.character) and (
                span.start.line,
                span.start.character,
            ) <= (d.end.line, d.end.character)
            patch = self.service.get(str(diagnostic.code))
            if touches and patch is not None:
                found.append((patch, int(diagnostic.data["hunkId"])))  # type: ignore[index]
        return found

    def _arguments(self, args: tuple[Any, ...]) -> tuple[Patch, dict[str, Any], list[int] | None]:
        values = command_arguments(args)
        if not values or not isinstance(values[0], str):
            raise JsonRpcInvalidParams(message="expected arguments [patchId, options?]")
        options = values[1] if len(values) > 1 and isinstance(values[1], dict) else {}
        patch = self.service.get(values[0])
        if patch is None:
            raise _error(f"no patch with id {values[0]!r}")
        hunks = options.get("hunks")
        if hunks is not None and (
            not isinstance(hunks, list)
            or not all(isinstance(h, int) and not isinstance(h, bool) for h in hunks)
        ):
            raise JsonRpcInvalidParams(message="hunks must be a list of hunk ids")
        return patch, options, hunks

    def _read_live(self, path: str) -> str | None:
        """The text as the editor has it (unsaved edits included), after the guard."""
        target = patch_path(self.service.jail, path)
        text = self.server.document_text(target.as_uri())
        return text if text is not None else read_text(target)

    async def accept(self, args: tuple[Any, ...]) -> dict[str, Any]:
        patch, _, hunks = self._arguments(args)
        async with self._deciding:
            try:
                outcome = await self._accept(patch, hunks)
            except ToolError as exc:
                raise _error(exc.message) from None
        if not outcome.accepted:
            reason = outcome.patch.reason or "its text changed"
            raise _error(
                f"patch {patch.id} is stale ({reason}); nothing was written. "
                "Ask the agent to propose it again."
            )
        return _result(outcome)

    async def _accept(self, patch: Patch, hunks: list[int] | None) -> Outcome:
        service = self.service
        if not self.server.client_supports("workspace", "apply_edit"):
            how = "written by the daemon"
            return await asyncio.to_thread(service.accept, patch.id, hunks, how)
        plan = service.plan(patch.id, hunks, self._read_live)
        if plan.writes:
            result = await self.server.workspace_apply_edit_async(
                types.ApplyWorkspaceEditParams(
                    edit=self._workspace_edit(plan), label=f"Agent patch: {patch.summary}"
                )
            )
            if not result.applied:
                reason = result.failure_reason or "the editor did not apply the edit"
                log.warning("patch %s: %s", patch.id, reason)
                raise _error(f"patch {patch.id} was not applied: {reason}; it stays pending")
        return service.commit(plan, "applied by the editor")

    def reject(self, args: tuple[Any, ...]) -> dict[str, Any]:
        patch, options, hunks = self._arguments(args)
        reason = options.get("reason") if isinstance(options.get("reason"), str) else None
        try:
            outcome = self.service.reject(patch.id, hunks, reason or "rejected in the editor")
        except ToolError as exc:
            raise _error(exc.message) from None
        return _result(outcome)

    def _workspace_edit(self, plan: Plan) -> types.WorkspaceEdit:
        changes: list[Any] = []
        for write in plan.writes:
            uri = patch_path(self.service.jail, write.path).as_uri()  # the guard, again
            if write.result is None:
                changes.append(types.DeleteFile(uri=uri))
                continue
            if write.current is None:
                changes.append(
                    types.CreateFile(
                        uri=uri, options=types.CreateFileOptions(ignore_if_exists=True)
                    )
                )
            document = self.server.workspace.text_documents.get(uri)
            lines = split_lines(write.current)
            edits = [
                types.TextEdit(range=_range(line_range(lines, start, end)), new_text=text)
                for start, end, text in write.edits
            ]
            changes.append(
                types.TextDocumentEdit(
                    text_document=types.OptionalVersionedTextDocumentIdentifier(
                        uri=uri, version=document.version if document is not None else None
                    ),
                    edits=edits,
                )
            )
        return types.WorkspaceEdit(document_changes=changes)

    def close(self) -> None:
        return None


def _result(outcome: Outcome) -> dict[str, Any]:
    return {"patchId": outcome.patch.id, **outcome.to_dict()}


def register(server: SmolLanguageServer) -> None:
    feature = EditorPatches(server)
    server.features["patches"] = feature

    @server.feature(PATCHES)
    def patches(ls: SmolLanguageServer, params: Any) -> dict[str, Any]:
        """Pending and recently resolved patches, so a reloaded window can redraw them."""
        return feature.listing()

    @server.command(CMD_ACCEPT_PATCH)
    async def accept_patch(ls: SmolLanguageServer, *args: Any) -> dict[str, Any]:
        """Apply pending hunks of a patch through the editor (or atomically on disk)."""
        return await feature.accept(args)

    @server.command(CMD_REJECT_PATCH)
    def reject_patch(ls: SmolLanguageServer, *args: Any) -> dict[str, Any]:
        """Reject pending hunks of a patch; nothing changes on disk."""
        return feature.reject(args)

    @server.feature(types.INITIALIZED)
    def initialized(ls: SmolLanguageServer, params: types.InitializedParams) -> None:
        """Redraw diagnostics of patches left pending by an earlier daemon."""
        feature.publish()
