"""Proposed patches in any LSP editor: diagnostics per hunk, `smol/patches`, accept and reject.

A pending patch shows as one Information diagnostic per hunk. `smol.acceptPatch` rebuilds the
edit against the buffer as the editor has it now: if the text the patch was made against has
changed, the patch becomes `stale` and nothing is written; otherwise the edit goes to the
editor with `workspace/applyEdit` (so it lands in its undo history), or, for a client without
applyEdit, the daemon writes the files atomically. `smol.rejectPatch` changes nothing on disk.
An agent waiting in `apply_patch` receives the decision (through the approvals feature).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from ...base.wire import to_wire
from ...patches.store import Patch, PatchStore, read_text
from ...safety.approval import Decision
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
from .approvals import Approvals

log = logging.getLogger(__name__)

RECENT_RESOLVED = 50


class PatchCommandError(JsonRpcException):
    """A patch command that could not be carried out; the message says why and what to do."""

    CODE = -32001


def _error(message: str) -> PatchCommandError:
    return PatchCommandError(code=PatchCommandError.CODE, message=message)


class Patches(Feature):
    """Publishes diagnostics for pending patches and carries out accept and reject."""

    def __init__(self, server: SmolLanguageServer, approvals: Approvals) -> None:
        self.server = server
        self.approvals = approvals
        self._published: set[str] = set()

    # --- handlers ------------------------------------------------------------------------

    @handles(PATCHES)
    def patches(self, params: Any) -> dict[str, Any]:
        """Pending and recently resolved patches, so a reloaded window can redraw them."""
        store = self.server.patch_store
        if store is None:
            return to_wire(PatchesResult(patches=[]))
        everything = store.all()
        pending = [p for p in everything if p.status == "pending"]
        resolved = [p for p in everything if p.status != "pending"][-RECENT_RESOLVED:]
        shown = sorted(pending + resolved, key=lambda p: p.created_at)
        return to_wire(PatchesResult(patches=[p.to_protocol(store.root) for p in shown]))

    @command(CMD_ACCEPT_PATCH)
    async def accept_patch(self, *args: Any) -> dict[str, Any]:
        """Apply a pending patch through the editor (or atomically on disk)."""
        return to_wire(await self.accept(args))

    @command(CMD_REJECT_PATCH)
    def reject_patch(self, *args: Any) -> dict[str, Any]:
        """Reject a pending patch; nothing changes on disk."""
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
    def store(self) -> PatchStore:
        store = self.server.patch_store
        if store is None:
            raise _error("no workspace is open")
        return store

    def publish(self) -> None:
        """Send the diagnostics of every pending patch; clear those of resolved ones."""
        if self.server.patch_store is None:
            return
        current = patch_edits.diagnostics(self.store)
        for uri in set(current) | self._published:
            self.server.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=current.get(uri, []))
            )
        self._published = set(current)

    def pending_at(self, uri: str, span: types.Range) -> list[Patch]:
        """Pending patches with a hunk touching `span` in the document `uri`."""
        if self.server.patch_store is None:
            return []
        return patch_edits.pending_at(self.store, uri, span)

    def _patch(self, args: tuple[Any, ...]) -> tuple[Patch, dict[str, Any]]:
        values = command_arguments(args)
        if not values or not isinstance(values[0], str):
            raise JsonRpcInvalidParams(message="expected arguments [patchId, options?]")
        options = values[1] if len(values) > 1 and isinstance(values[1], dict) else {}
        patch = self.store.get(values[0])
        if patch is None:
            raise _error(f"no patch with id {values[0]!r}")
        return patch, options

    def _current_text(self, path: str) -> str | None:
        text = self.server.document_text((self.store.root / path).as_uri())
        return read_text(self.store.root / path) if text is None else text

    def _version_of(self, uri: str) -> int | None:
        document = self.server.workspace.text_documents.get(uri)
        return document.version if document is not None else None

    async def accept(self, args: tuple[Any, ...]) -> PatchCommandResult:
        patch, options = self._patch(args)
        if patch.status != "pending":
            raise _error(f"patch {patch.id} is {patch.status}, not pending")
        hunks = options.get("hunks")
        if hunks is not None and (
            not isinstance(hunks, list) or not all(isinstance(h, int) for h in hunks)
        ):
            raise JsonRpcInvalidParams(message="hunks must be a list of hunk indexes")
        changed = [c.path for c in patch.files if self._current_text(c.path) != c.old_text]
        if changed:
            reason = f"changed since the patch was proposed: {', '.join(changed)}"
            self.store.set_status(patch.id, "stale", reason)
            self.approvals.resolve(patch.id, Decision(False, "editor", f"stale: {reason}"))
            raise _error(
                f"patch {patch.id} is stale ({reason}); nothing was written. Ask the agent to propose it again."
            )
        if self.server.client_supports("workspace", "apply_edit"):
            edit = patch_edits.workspace_edit(patch, hunks, self.store, self._version_of)
            result = await self.server.workspace_apply_edit_async(
                types.ApplyWorkspaceEditParams(edit=edit, label=f"Agent patch: {patch.summary}")
            )
            if not result.applied:
                reason = result.failure_reason or "the editor did not apply the edit"
                log.warning("patch %s: %s", patch.id, reason)
                raise _error(f"patch {patch.id} was not applied: {reason}; it stays pending")
            how = "applied by the editor"
        else:
            await asyncio.to_thread(self.store.write, patch_edits.subset(patch, hunks))
            how = "written by the daemon"
        reason = how if hunks is None else f"{how} (hunks {hunks})"
        self.store.set_status(patch.id, "accepted", reason)
        self.approvals.resolve(patch.id, Decision(True, "editor", reason, applied_by_host=True))
        return PatchCommandResult(patch_id=patch.id, status="accepted")

    def reject(self, args: tuple[Any, ...]) -> PatchCommandResult:
        patch, options = self._patch(args)
        if patch.status != "pending":
            raise _error(f"patch {patch.id} is {patch.status}, not pending")
        reason = options.get("reason") if isinstance(options.get("reason"), str) else None
        reason = reason or "rejected in the editor"
        self.store.set_status(patch.id, "rejected", reason)
        self.approvals.resolve(patch.id, Decision(False, "editor", reason))
        return PatchCommandResult(patch_id=patch.id, status="rejected")
