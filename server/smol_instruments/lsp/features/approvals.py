"""Approvals in the editor: commands through `window/showMessageRequest`, patches by accept/reject.

The agent runs in a worker thread and blocks in `EditorApprover.decide`. A command is put to
the user with "Run" and "Deny": as the request `smol/approval` (command, rule, reason and what
it widens as fields) to a client that asked for it with `initializationOptions.smolApproval`,
else as a Warning `window/showMessageRequest`. No answer within APPROVAL_TIMEOUT_S, or a client
that cannot show message actions, is a denial. A patch waits until the user accepts or rejects
every hunk of it (code action, CodeLens, chat panel) — waiting on the patch service, which owns
the decisions — the run is cancelled, or the timeout passes.
`deny` verdicts never get here: the policy refuses them in Python.

The message shows the command through `base/visible.py` (every line break marked, escape
sequences and invisible characters drawn) with the request's warnings in words; the
structured request also carries the exact command, which the extension draws the same way.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import uuid

from lsprotocol import types

from ...base.visible import visible
from ...base.wire import to_wire
from ...safety.approval import ApprovalRequest, Decision
from ..feature import Feature
from ..protocol import APPROVAL, CommandApproval, to_plain
from ..server import SmolLanguageServer

log = logging.getLogger(__name__)

RUN, DENY = "Run", "Deny"


class EditorApprover:
    """The Approver the daemon hands to each session."""

    def __init__(self, server: SmolLanguageServer, cancel: threading.Event | None = None) -> None:
        self.server = server
        self.cancel = cancel

    @property
    def timeout(self) -> float:
        return self.server.settings.approval_timeout_s

    def decide(self, request: ApprovalRequest) -> Decision:
        if request.kind == "patch":
            return self._patch(request)
        return self._command(request)

    def _patch(self, request: ApprovalRequest) -> Decision:
        """Wait until no hunk is pending: the user decided them (in any editor, in any order)."""
        service = self.server.patch_store
        patch = (
            None if service is None else service.wait(request.subject, self.timeout, self.cancel)
        )
        if patch is None:
            return Decision(False, "editor", "the patch is gone")
        if not patch.resolved:
            if self.cancel is not None and self.cancel.is_set():
                return Decision(False, "cancelled", "the run was cancelled")
            return Decision(
                False,
                "timeout",
                f"no decision within {self.timeout:g} s; the patch stays pending in the editor",
            )
        approved = patch.status in ("accepted", "partial")
        return Decision(approved, "editor", patch.reason, applied_by_host=True)

    def _command(self, request: ApprovalRequest) -> Decision:
        structured = self.server.options.smol_approval
        if not structured and not self.server.client_supports(
            "window", "show_message", "message_action_item"
        ):
            return Decision(
                False, "client", "the editor cannot ask (no showMessageRequest actions)"
            )
        try:
            title = self.server.call(lambda: self._ask(request, structured), self.timeout)
        except TimeoutError:
            return Decision(False, "timeout", f"no answer within {self.timeout:g} s")
        except Exception as exc:
            log.warning("approval request failed: %s", exc)
            return Decision(False, "client", f"the approval request failed: {exc}")
        if title == RUN:
            return Decision(True, "editor")
        return Decision(False, "editor", "dismissed" if title is None else "denied in the editor")

    async def _ask(self, request: ApprovalRequest, structured: bool) -> str | None:
        """The title of the action the user chose; None when they dismissed the question."""
        message = approval_message(request)
        if structured:
            params = CommandApproval(
                command=request.subject,
                rule=request.rule,
                reason=request.reason,
                widens=list(request.widens),
                message=message,
                actions=[RUN, DENY],
            )
            msg_id = f"smol-approval-{uuid.uuid4().hex[:12]}"
            try:
                answer = await self.server.protocol.send_request_async(
                    APPROVAL, to_wire(params), msg_id=msg_id
                )
            except asyncio.CancelledError:  # the timeout passed: the client closes its prompt
                self.server.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
                raise
            plain = to_plain(answer)
            return plain.get("title") if isinstance(plain, dict) else None
        shown = await self.server.window_show_message_request_async(
            types.ShowMessageRequestParams(
                type=types.MessageType.Warning,
                message=message,
                actions=[types.MessageActionItem(title=RUN), types.MessageActionItem(title=DENY)],
            )
        )
        return None if shown is None else shown.title


def approval_message(request: ApprovalRequest) -> str:
    """The question as plain text: the command with nothing hidden, the policy, what it widens
    and the warnings."""
    lines = [
        f"The agent wants to run: {visible(request.subject, breaks=True)}",
        visible(f"Policy {request.rule}: {request.reason}", breaks=True),
    ]
    if request.widening_line():
        lines.append(str(request.widening_line()))
    return "\n".join([*lines, *request.warnings()])


class Approvals(Feature):
    """Hands each session an EditorApprover."""

    def __init__(self, server: SmolLanguageServer) -> None:
        self.server = server

    def approver(self, cancel: threading.Event | None = None) -> EditorApprover:
        return EditorApprover(self.server, cancel)
