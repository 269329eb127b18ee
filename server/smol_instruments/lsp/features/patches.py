"""Proposed patches in any LSP editor: diagnostics per pending hunk, `smol/patches`, accept, reject.

Thin over the patch service (patches/service.py), which owns the lifecycle. Each pending hunk
shows as one Information diagnostic. `smol.acceptPatch [patchId, {hunks?}]` places the chosen
hunks (default: all pending) in the buffer as the editor has it now and sends them with
`workspace/applyEdit` (so they land in its undo history), or, for a client without
applyEdit, the daemon writes them atomically. A hunk whose lines changed is stale and nothing
is written for it; its siblings are applied; the patch's other hunks stay pending.
`smol.rejectPatch [patchId, {reason?, hunks?}]` changes nothing on disk. An agent waiting in
`apply_patch` waits on the service (through the approvals feature).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from ...base.errors import ToolError
from ...base.visible import visible
from ...base.wire import to_wire
from ...patches.model import Patch
from ...patches.service import Outcome, PatchService
from ...patches.view import patch_view
from .. import patch_edits
from ..feature import Feature, command, handles
from ..protocol import (
    CMD_ACCEPT_PATCH,
    CMD_REJECT_PATCH,
    PATCHES,
    PatchCommandResult,
    PatchesResult,
    command_arguments,
)
from ..server import SmolLanguageServer

log = logging.getLogger(__name__)

RECENT_RESOLVED = 50


class PatchCommandError(JsonRpcException):
    """A patch command that could not be carried out; the message says why and what to do."""

    CODE = -32001


def _error(message: str) -> PatchCommandError:
    return PatchCommandError(code=PatchCommandError.CODE, message=message)


def _result(outcome: Outcome) -> PatchCommandResult:
    return PatchCommandResult(
        patch_id=outcome.patch.id,
        status=outcome.patch.status,
        accepted=outcome.accepted or None,
        rejected=outcome.rejected or None,
        stale=outcome.stale or None,
        failed=outcome.failed or None,
        files=outcome.files or None,
    )


class Patches(Feature):
    """Publishes diagnostics for pending hunks and carries out the editor's decisions."""

    def __init__(self, server: SmolLanguageServer) -> None:
        self.server = server
        self._published: set[str] = set()
        self._deciding: asyncio.Lock | None = None  # one decision at a time: plan, edit, commit

    # --- handlers ------------------------------------------------------------------------

    @handles(PATCHES)
    def patches(self, params: Any) -> dict[str, Any]:
        """Pending and recently resolved patches, so a reloaded window can redraw them."""
        service = self.server.patch_store
        if service is None:
            return to_wire(PatchesResult(patches=[]))
        everything = service.all()
        pending = [p for p in everything if not p.resolved]
        resolved = [p for p in everything if p.resolved][-RECENT_RESOLVED:]
        shown = sorted(pending + resolved, key=lambda p: p.created_at)
        return to_wire(PatchesResult(patches=[patch_view(p, service.root) for p in shown]))

    @command(CMD_ACCEPT_PATCH)
    async def accept_patch(self, *args: Any) -> dict[str, Any]:
        """Apply pending hunks of a patch through the editor (or atomically on disk)."""
        return to_wire(await self.accept(args))

    @command(CMD_REJECT_PATCH)
    def reject_patch(self, *args: Any) -> dict[str, Any]:
        """Reject pending hunks of a patch; nothing changes on disk."""
        return to_wire(self.reject(args))

    def initialize(self, params: types.InitializeParams) -> None:
        """Redraw diagnostics on every change of the workspace's patches."""
        if self.server.patch_store is not None:
            self.server.patch_store.subscribe(lambda _patch: self.server.post(self.publish))

    def initialized(self, params: types.InitializedParams) -> None:
        """Redraw diagnostics of patches left pending by an earlier daemon."""
        self.publish()

    # --- what the handlers do ------------------------------------------------------------

    @property
    def service(self) -> PatchService:
        service = self.server.patch_store
        if service is None:
            raise _error("no workspace is open")
        return service

    def publish(self) -> None:
        """Send the diagnostics of every pending hunk; clear those of decided ones."""
        if self.server.patch_store is None:
            return
        current = patch_edits.diagnostics(self.service)
        for uri in set(current) | self._published:
            self.server.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=current.get(uri, []))
            )
        self._published = set(current)

    def pending_at(self, uri: str, span: types.Range) -> list[tuple[Patch, int]]:
        """(patch, hunk id) of the pending hunks touching `span` in the document `uri`."""
        if self.server.patch_store is None:
            return []
        return patch_edits.pending_at(self.service, uri, span)

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
        return self.service.read_live(path, self.server.document_text)

    def _version_of(self, uri: str) -> int | None:
        document = self.server.workspace.text_documents.get(uri)
        return document.version if document is not None else None

    async def accept(self, args: tuple[Any, ...]) -> PatchCommandResult:
        patch, _, hunks = self._arguments(args)
        if self._deciding is None:
            self._deciding = asyncio.Lock()
        async with self._deciding:
            try:
                outcome = await self._accept(patch, hunks)
            except ToolError as exc:
                raise _error(exc.message) from None
        if not outcome.accepted:
            why = outcome.patch.reason or "its lines changed"
            raise _error(
                f"patch {patch.id}: nothing was written ({why}). Ask the agent to propose it again."
            )
        return _result(outcome)

    async def _accept(self, patch: Patch, hunks: list[int] | None) -> Outcome:
        service = self.service
        if not self.server.client_supports("workspace", "apply_edit"):
            how = "written by the daemon"
            return await asyncio.to_thread(service.accept, patch.id, hunks, how)
        plan = service.plan(patch.id, hunks, self._read_live)
        if plan.writes:
            edit = patch_edits.workspace_edit(plan, service, self._version_of)
            result = await self.server.workspace_apply_edit_async(
                types.ApplyWorkspaceEditParams(
                    edit=edit, label=visible(f"Agent patch: {patch.summary}", breaks=True)
                )
            )
            if not result.applied:
                reason = result.failure_reason or "the editor did not apply the edit"
                log.warning("patch %s: %s", patch.id, reason)
                raise _error(f"patch {patch.id} was not applied: {reason}; it stays pending")
        return service.commit(plan, "applied by the editor")

    def reject(self, args: tuple[Any, ...]) -> PatchCommandResult:
        patch, options, hunks = self._arguments(args)
        reason = options.get("reason") if isinstance(options.get("reason"), str) else None
        try:
            outcome = self.service.reject(patch.id, hunks, reason or "rejected in the editor")
        except ToolError as exc:
            raise _error(exc.message) from None
        return _result(outcome)
