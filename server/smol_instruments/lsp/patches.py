"""Proposed patches in any LSP editor: diagnostics per hunk, `smol/patches`, accept and reject.

A pending patch shows as one Information diagnostic per hunk. `smol.acceptPatch` rebuilds the
edit against the buffer as the editor has it now: if the text the patch was made against has
changed, the patch becomes `stale` and nothing is written; otherwise the edit goes to the
editor with `workspace/applyEdit` (so it lands in its undo history), or, for a client without
applyEdit, the daemon writes the files atomically. `smol.rejectPatch` changes nothing on disk.
An agent waiting in `apply_patch` receives the decision.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from ..patches.store import Patch, PatchStore, read_text
from ..safety.approval import Decision
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


class PatchService:
    """Publishes diagnostics for pending patches and carries out accept and reject."""

    def __init__(self, server: SmolLanguageServer) -> None:
        self.server = server
        self._published: set[str] = set()
        server.store_listeners.append(self._follow)

    def _follow(self, store: PatchStore) -> None:
        """Redraw diagnostics on every change of the workspace's patches."""
        store.subscribe(lambda _patch: self.server.post(self.publish))

    @property
    def store(self) -> PatchStore:
        store = self.server.patch_store
        if store is None:
            raise _error("no workspace is open")
        return store

    def listing(self) -> dict[str, Any]:
        if self.server.patch_store is None:
            return {"patches": []}
        patches = self.store.all()
        pending = [p for p in patches if p.status == "pending"]
        resolved = [p for p in patches if p.status != "pending"][-RECENT_RESOLVED:]
        root = self.store.root
        return {
            "patches": [
                p.to_protocol(root) for p in sorted(pending + resolved, key=lambda p: p.created_at)
            ]
        }

    def diagnostics(self) -> dict[str, list[types.Diagnostic]]:
        by_uri: dict[str, list[types.Diagnostic]] = {}
        for patch in self.store.all():
            if patch.status != "pending":
                continue
            data = patch.to_protocol(self.store.root)
            added, removed = data["added"], data["removed"]
            message = f"Agent proposes: {patch.summary} (+{added} −{removed})"
            for file in data["files"]:
                for hunk in file["hunks"]:
                    span = _range(hunk["range"])
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

    def publish(self) -> None:
        """Send the diagnostics of every pending patch; clear those of resolved ones."""
        if self.server.patch_store is None:
            return
        current = self.diagnostics()
        for uri in set(current) | self._published:
            self.server.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=current.get(uri, []))
            )
        self._published = set(current)

    def pending_at(self, uri: str, span: types.Range) -> list[Patch]:
        """Pending patches with a hunk touching `span` in the document `uri`."""
        found = []
        for diagnostic in self.diagnostics().get(uri, []):
            d = diagnostic.range
            touches = (d.start.line, d.start.character) <= (span.end.line, span.end.character) and (
                span.start.line,
                span.start.character,
            ) <= (d.end.line, d.end.character)
            if touches and (patch := self.store.get(str(diagnostic.code))) and patch not in found:
                found.append(patch)
        return found

    def _patch(self, args: tuple[Any, ...]) -> tuple[Patch, dict[str, Any]]:
        values = command_arguments(args)
        if not values or not isinstance(values[0], str):
            raise JsonRpcInvalidParams(message="expected arguments [patchId, options?]")
        options = values[1] if len(values) > 1 and isinstance(values[1], dict) else {}
        patch = self.store.get(values[0])
        if patch is None:
            raise _error(f"no patch with id {values[0]!r}")
        return patch, options

    def _current_text(self, path: str) -> tuple[str, str | None]:
        uri = (self.store.root / path).as_uri()
        text = self.server.document_text(uri)
        if text is None:
            text = read_text(self.store.root / path)
        return uri, text

    async def accept(self, args: tuple[Any, ...]) -> dict[str, Any]:
        patch, options = self._patch(args)
        if patch.status != "pending":
            raise _error(f"patch {patch.id} is {patch.status}, not pending")
        hunks = options.get("hunks")
        if hunks is not None and (
            not isinstance(hunks, list) or not all(isinstance(h, int) for h in hunks)
        ):
            raise JsonRpcInvalidParams(message="hunks must be a list of hunk indexes")
        changed = [c.path for c in patch.files if self._current_text(c.path)[1] != c.old_text]
        decisions = self.server.features["decisions"]
        if changed:
            reason = f"changed since the patch was proposed: {', '.join(changed)}"
            self.store.set_status(patch.id, "stale", reason)
            decisions.resolve(patch.id, Decision(False, "editor", f"stale: {reason}"))
            raise _error(
                f"patch {patch.id} is stale ({reason}); nothing was written. Ask the agent to propose it again."
            )
        if self.server.client_supports("workspace", "apply_edit"):
            edit = self._workspace_edit(patch, hunks)
            label = f"Agent patch: {patch.summary}"
            result = await self.server.workspace_apply_edit_async(
                types.ApplyWorkspaceEditParams(edit=edit, label=label)
            )
            if not result.applied:
                reason = result.failure_reason or "the editor did not apply the edit"
                log.warning("patch %s: %s", patch.id, reason)
                raise _error(f"patch {patch.id} was not applied: {reason}; it stays pending")
            how = "applied by the editor"
        else:
            target = self._subset(patch, hunks)
            await asyncio.to_thread(self.store.write, target)
            how = "written by the daemon"
        reason = how if hunks is None else f"{how} (hunks {hunks})"
        self.store.set_status(patch.id, "accepted", reason)
        decisions.resolve(patch.id, Decision(True, "editor", reason, applied_by_host=True))
        return {"patchId": patch.id, "status": "accepted"}

    def reject(self, args: tuple[Any, ...]) -> dict[str, Any]:
        patch, options = self._patch(args)
        if patch.status != "pending":
            raise _error(f"patch {patch.id} is {patch.status}, not pending")
        reason = options.get("reason") if isinstance(options.get("reason"), str) else None
        self.store.set_status(patch.id, "rejected", reason or "rejected in the editor")
        self.server.features["decisions"].resolve(
            patch.id, Decision(False, "editor", reason or "rejected in the editor")
        )
        return {"patchId": patch.id, "status": "rejected"}

    def _subset(self, patch: Patch, hunks: list[int] | None) -> Patch:
        """The patch limited to the chosen hunks (numbered across files, in order)."""
        if hunks is None:
            return patch
        from ..patches.store import FileChange

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

    def _workspace_edit(self, patch: Patch, hunks: list[int] | None) -> types.WorkspaceEdit:
        changes: list[Any] = []
        data = self._subset(patch, hunks).to_protocol(self.store.root)
        for change, file in zip(patch.files, data["files"], strict=True):
            uri = file["uri"]
            if change.old_text is None:
                changes.append(
                    types.CreateFile(
                        uri=uri, options=types.CreateFileOptions(ignore_if_exists=True)
                    )
                )
            if change.new_text is None:
                changes.append(types.DeleteFile(uri=uri))
                continue
            document = self.server.workspace.text_documents.get(uri)
            version = document.version if document is not None else None
            edits = [
                types.TextEdit(range=_range(h["range"]), new_text=h["newText"])
                for h in file["hunks"]
            ]
            changes.append(
                types.TextDocumentEdit(
                    text_document=types.OptionalVersionedTextDocumentIdentifier(
                        uri=uri, version=version
                    ),
                    edits=edits,
                )
            )
        return types.WorkspaceEdit(document_changes=changes)

    def close(self) -> None:
        return None


def register(server: SmolLanguageServer) -> None:
    service = PatchService(server)
    server.features["patches"] = service

    @server.feature(PATCHES)
    def patches(ls: SmolLanguageServer, params: Any) -> dict[str, Any]:
        """Pending and recently resolved patches, so a reloaded window can redraw them."""
        return service.listing()

    @server.command(CMD_ACCEPT_PATCH)
    async def accept_patch(ls: SmolLanguageServer, *args: Any) -> dict[str, Any]:
        """Apply a pending patch through the editor (or atomically on disk)."""
        return await service.accept(args)

    @server.command(CMD_REJECT_PATCH)
    def reject_patch(ls: SmolLanguageServer, *args: Any) -> dict[str, Any]:
        """Reject a pending patch; nothing changes on disk."""
        return service.reject(args)

    @server.feature(types.INITIALIZED)
    def initialized(ls: SmolLanguageServer, params: types.InitializedParams) -> None:
        """Redraw diagnostics of patches left pending by an earlier daemon."""
        service.publish()
