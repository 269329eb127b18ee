"""The editor's side of one ACP session: updates in order, permission requests, file writes.

The agent runs on a worker thread; the connection lives on the event loop. Everything sent to
the client for a session goes through its `Outbox`, one job at a time in the order it was
submitted (a tool call reaches the editor before the permission request that points at it).
`AcpApprover` is the Approver the session gets: it submits a question and blocks its worker
thread until the answer, the run's cancel, or APPROVAL_TIMEOUT_S (no answer is a denial).

A patch is put to the user with its diff (`session/request_permission`, Accept / Reject); a
patch of several hunks is asked hunk by hunk (each question shows that hunk's diff; *this and
the rest* ends the questions), then the patch service decides the hunks: rejected ones first,
then the accepted ones in one accept. An answer that never comes decides nothing. An
accept is planned by the patch service against the text the editor has now, unsaved changes
included (`fs/read_text_file`), written with `fs/write_text_file` (so it lands in the editor's
buffer and undo history) and then committed; a client without those methods gets the
service's own atomic write to disk. Either way the paths pass the service's guard first.

When the client offers `fs/read_text_file`, `Editor.buffer` is the session's reader
(tools/base.py BufferReader): the agent reads files as the editor shows them. It is asked
only for paths the jail has allowed, so the client cannot widen what the agent reads.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from acp import start_tool_call, text_block, tool_content, update_tool_call
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    PermissionOption,
    ToolCallLocation,
    ToolCallUpdate,
)

from ..base.errors import ToolError
from ..patches.guard import patch_path
from ..patches.model import Patch
from ..patches.service import FileEdit, PatchService
from ..safety.approval import ApprovalRequest, Decision
from .updates import (
    Update,
    UpdateMapper,
    call_title,
    hunk_diff,
    hunk_title,
    patch_diffs,
    patch_id,
    patch_locations,
    patch_title,
)

log = logging.getLogger(__name__)

T = TypeVar("T")

#: How long the run waits for the editor's text of a file before reading the disk.
READ_TIMEOUT_S = 30.0
ACCEPT, REJECT = "accept", "reject"
RUN, ALWAYS, DENY = "run", "always", "deny"
ACCEPT_REST, REJECT_REST = "accept-rest", "reject-rest"
PATCH_OPTIONS = [
    PermissionOption(option_id=ACCEPT, name="Accept", kind="allow_once"),
    PermissionOption(option_id=REJECT, name="Reject", kind="reject_once"),
]
#: A patch of several hunks is decided hunk by hunk; "and the rest" decides those still asked.
HUNK_OPTIONS = [
    PermissionOption(option_id=ACCEPT, name="Accept this change", kind="allow_once"),
    PermissionOption(option_id=ACCEPT_REST, name="Accept this and the rest", kind="allow_always"),
    PermissionOption(option_id=REJECT, name="Reject this change", kind="reject_once"),
    PermissionOption(option_id=REJECT_REST, name="Reject this and the rest", kind="reject_always"),
]
COMMAND_OPTIONS = [
    PermissionOption(option_id=RUN, name="Run", kind="allow_once"),
    PermissionOption(option_id=ALWAYS, name="Always run this command here", kind="allow_always"),
    PermissionOption(option_id=DENY, name="Deny", kind="reject_once"),
]


class Outbox:
    """One session's messages to the client, run one after another in submission order."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self._lock = asyncio.Lock()  # FIFO: jobs run in the order they asked for it

    async def run(self, job: Callable[[], Awaitable[T]]) -> T:
        async with self._lock:
            return await job()

    def submit(self, job: Callable[[], Awaitable[T]]) -> concurrent.futures.Future[T]:
        """From any thread: queue `job`; its result (or exception) in the future."""
        return asyncio.run_coroutine_threadsafe(self.run(job), self.loop)


class Editor:
    """What one session sends to, and asks of, the ACP client."""

    def __init__(
        self,
        conn: Any,
        session_id: str,
        root: Path,
        capabilities: ClientCapabilities | None,
        patches: PatchService,
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        self.conn = conn
        self.session_id = session_id
        self.root = root
        self.patches = patches
        fs = capabilities.fs if capabilities is not None else None
        self.reads = bool(fs and fs.read_text_file)
        self.writes = bool(fs and fs.write_text_file)
        self.outbox = Outbox(loop)
        #: The run's cancel: a read of the editor's text stops waiting on it.
        self.cancel = threading.Event()
        self.mapper = UpdateMapper(root, patches.get)

    # --- updates ---------------------------------------------------------------------------

    async def send(self, update: Update) -> None:
        try:
            await self.conn.session_update(session_id=self.session_id, update=update)
        except Exception as exc:  # the client went away: the run goes on, unseen
            log.warning("session/update failed: %s", exc)

    def post(self, update: Update) -> None:
        """From any thread: send `update` after everything submitted before it."""
        self.outbox.submit(lambda: self.send(update))

    # --- commands --------------------------------------------------------------------------

    async def ask_command(self, request: ApprovalRequest) -> Decision:
        call_id = self.mapper.new_id("cmd")
        lines = [f"Policy {request.rule}: {request.reason}"]
        if request.widening_line():
            lines.append(str(request.widening_line()))
        content = [tool_content(text_block("\n".join(lines)))]
        title = call_title("run_cmd", {"command": request.subject})
        await self.send(
            start_tool_call(
                call_id,
                title,
                kind="execute",
                status="pending",
                content=content,
                raw_input={"command": request.subject, "rule": request.rule},
            )
        )
        choice = await self._permission(
            ToolCallUpdate(tool_call_id=call_id, title=title, kind="execute", status="pending"),
            COMMAND_OPTIONS,
        )
        if choice in (RUN, ALWAYS):
            self.mapper.asked(request.subject, call_id)
            await self.send(update_tool_call(call_id, status="in_progress"))
            if choice == ALWAYS:
                return Decision(True, "editor", "approved for this session", remember=True)
            return Decision(True, "editor")
        denied = "denied in the editor" if choice == DENY else "the request was cancelled"
        await self.send(
            update_tool_call(call_id, status="failed", content=[tool_content(text_block(denied))])
        )
        if choice is None:
            return Decision(False, "cancelled", denied)
        return Decision(False, "editor", denied)

    # --- patches ---------------------------------------------------------------------------

    async def review_patch(self, patch_id_: str) -> Decision:
        """Put a pending patch to the user; carry out the answer. `applied_by_host` when decided."""
        patch = self.patches.get(patch_id_)
        if patch is None:
            return Decision(False, "editor", "the patch is gone")
        if patch.resolved:
            return Decision(
                patch.status in ("accepted", "partial"),
                "editor",
                patch.reason,
                applied_by_host=True,
            )
        start = self.mapper.shown(patch)
        if start is not None:
            await self.send(start)
        decided = await self._decisions(patch)
        if decided is None:
            return Decision(False, "cancelled", "the permission request was cancelled")
        accepted, rejected = decided
        try:
            if rejected:
                await asyncio.to_thread(
                    self.patches.reject, patch.id, rejected, "rejected in the editor"
                )
            if accepted:  # once chosen, carried out whole even if the run is cancelled
                failure = await asyncio.shield(self._accept(patch.id, accepted))
                if failure is not None:
                    return Decision(False, "error", failure)
        except ToolError as exc:  # decided meanwhile, or a path the guard refuses
            return Decision(False, "error", exc.message)
        after = self.patches.require(patch.id)
        approved = after.status in ("accepted", "partial")
        return Decision(approved, "editor", after.reason, applied_by_host=True)

    async def _decisions(self, patch: Patch) -> tuple[list[int], list[int]] | None:
        """The user's answer as (accepted, rejected) hunk ids; None when it never came. A patch
        of one pending hunk is one question; otherwise each hunk is asked in turn, and
        *this and the rest* ends the questions."""
        pending = [(change, hunk) for change in patch.files for hunk in change.pending()]
        if len(pending) == 1:
            choice = await self._permission(
                ToolCallUpdate(
                    tool_call_id=patch_id(patch.id),
                    title=patch_title(patch),
                    kind="edit",
                    status="pending",
                    content=patch_diffs(patch, self.root),
                    locations=patch_locations(patch, self.root),
                ),
                PATCH_OPTIONS,
            )
            ids = [pending[0][1].id]
            return {ACCEPT: (ids, []), REJECT: ([], ids)}.get(choice or "")
        accepted: list[int] = []
        rejected: list[int] = []
        for index, (change, hunk) in enumerate(pending):
            choice = await self._permission(
                ToolCallUpdate(
                    tool_call_id=patch_id(patch.id),
                    title=hunk_title(patch, change, hunk, index + 1, len(pending)),
                    kind="edit",
                    status="pending",
                    content=[hunk_diff(change, hunk, self.root)],
                    locations=[
                        ToolCallLocation(path=str(self.root / change.path), line=hunk.start + 1)
                    ],
                    field_meta={
                        "smolInstruments": {
                            "patchId": patch.id,
                            "hunk": hunk.id,
                            "index": index + 1,
                            "count": len(pending),
                        }
                    },
                ),
                HUNK_OPTIONS,
            )
            rest = [h.id for _, h in pending[index:]]
            if choice not in (ACCEPT, ACCEPT_REST, REJECT, REJECT_REST):
                # cancelled, or an option we did not offer: nothing is carried out, and the
                # patch is drawn whole again
                await self.send(
                    update_tool_call(
                        patch_id(patch.id),
                        title=patch_title(patch),
                        content=patch_diffs(patch, self.root),
                    )
                )
                return None
            if choice in (ACCEPT_REST, REJECT_REST):
                (accepted if choice == ACCEPT_REST else rejected).extend(rest)
                break
            (accepted if choice == ACCEPT else rejected).append(hunk.id)
        return accepted, rejected

    async def _accept(self, patch_id_: str, hunk_ids: list[int]) -> str | None:
        """Write the chosen hunks through the editor (else to disk); a failure's words."""
        patch = self.patches.require(patch_id_)
        if not self.writes:
            outcome = await asyncio.to_thread(
                self.patches.accept, patch.id, hunk_ids, "accepted in the editor"
            )
            return outcome.patch.reason if outcome.failed else None
        texts = {c.path: await self._read(c.path) for c in patch.files if c.pending()}
        plan = self.patches.plan(patch.id, hunk_ids, texts.get)
        if any(w.result is None or _undecodable(w.result) for w in plan.writes):
            # the client can neither delete a file nor carry bytes that are not UTF-8
            outcome = await asyncio.to_thread(
                self.patches.accept, patch.id, hunk_ids, "accepted in the editor"
            )
            return outcome.patch.reason if outcome.failed else None
        written: list[FileEdit] = []
        try:
            for write in plan.writes:
                await self._write(write.path, write.result or "")
                written.append(write)
        except Exception as exc:
            for write in reversed(written):  # put back what was written; nothing is recorded
                try:
                    await self._write(write.path, write.current or "")
                except Exception:
                    log.exception("restoring %s failed", write.path)
            return f"the editor could not write the patch ({exc}); nothing was recorded"
        self.patches.commit(plan, "accepted in the editor")
        return None

    def buffer(self, path: Path) -> str | None:
        """From the run's thread: the text the editor has for `path` (a file the jail allowed),
        unsaved changes included; None (the disk is read) when it does not answer in time."""
        future = asyncio.run_coroutine_threadsafe(
            self.conn.read_text_file(session_id=self.session_id, path=str(path)), self.outbox.loop
        )
        deadline = time.monotonic() + READ_TIMEOUT_S
        try:
            while True:
                try:
                    return str(future.result(timeout=0.1).content)
                except concurrent.futures.TimeoutError:
                    if self.cancel.is_set() or time.monotonic() > deadline:
                        raise
        except Exception as exc:
            future.cancel()
            log.warning("fs/read_text_file %s failed, reading the disk: %s", path, exc)
            return None

    async def _read(self, path: str) -> str | None:
        """The file as the editor has it (unsaved changes too), else as on disk."""
        target = patch_path(self.patches.jail, path)
        if not target.exists():
            return None
        if self.reads:
            try:
                response = await self.conn.read_text_file(
                    session_id=self.session_id, path=str(target)
                )
                return str(response.content)
            except Exception as exc:
                log.warning("fs/read_text_file %s failed, reading the disk: %s", target, exc)
        return self.patches.read_disk(path)

    async def _write(self, path: str, text: str) -> None:
        target = patch_path(self.patches.jail, path)
        await self.conn.write_text_file(session_id=self.session_id, path=str(target), content=text)

    # --- the question ----------------------------------------------------------------------

    async def _permission(
        self, tool_call: ToolCallUpdate, options: list[PermissionOption]
    ) -> str | None:
        """The option the user chose; None when the request was cancelled or failed."""
        try:
            response = await self.conn.request_permission(
                session_id=self.session_id, tool_call=tool_call, options=options
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("session/request_permission failed: %s", exc)
            return None
        outcome = response.outcome
        return outcome.option_id if isinstance(outcome, AllowedOutcome) else None


def _undecodable(text: str) -> bool:
    return any("\udc80" <= c <= "\udcff" for c in text)


class AcpApprover:
    """The session's Approver: asks through the editor, blocking the run's thread meanwhile."""

    def __init__(self, editor: Editor, cancel: threading.Event, timeout_s: float) -> None:
        self.editor = editor
        self.cancel = cancel
        self.timeout_s = timeout_s

    def decide(self, request: ApprovalRequest) -> Decision:
        editor = self.editor
        if request.kind == "patch":
            future = editor.outbox.submit(lambda: editor.review_patch(request.subject))
        else:
            future = editor.outbox.submit(lambda: editor.ask_command(request))
        deadline = time.monotonic() + self.timeout_s
        while True:
            try:
                return future.result(timeout=0.1)
            except concurrent.futures.TimeoutError:
                pass
            if self.cancel.is_set():
                future.cancel()
                return Decision(False, "cancelled", "the run was cancelled")
            if time.monotonic() > deadline:
                future.cancel()
                return Decision(False, "timeout", f"no answer within {self.timeout_s:g} s")
