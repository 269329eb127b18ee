"""Approvals in the editor: commands through `window/showMessageRequest`, patches by accept/reject.

The agent runs in a worker thread and blocks in `EditorApprover.decide`. A command is put to
the user as a Warning message with "Run" and "Deny"; no answer within APPROVAL_TIMEOUT_S, or
a client that cannot show message actions, is a denial. A patch waits until the user accepts
or rejects it (code action, CodeLens, chat panel), the run is cancelled, or the timeout passes.
`deny` verdicts never get here: the policy refuses them in Python.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field

from lsprotocol import types

from ..safety.approval import ApprovalRequest, Decision
from .server import SmolLanguageServer

log = logging.getLogger(__name__)

RUN, DENY = "Run", "Deny"


@dataclass
class _Waiter:
    event: threading.Event = field(default_factory=threading.Event)
    decision: Decision | None = None


class PatchDecisions:
    """Agents waiting in `apply_patch`, each woken by the user's decision on its patch."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiters: dict[str, list[_Waiter]] = {}

    def wait(
        self, patch_id: str, timeout: float, cancel: threading.Event | None
    ) -> Decision | None:
        waiter = _Waiter()
        with self._lock:
            self._waiters.setdefault(patch_id, []).append(waiter)
        try:
            remaining = timeout
            while remaining > 0:
                if waiter.event.wait(min(0.1, remaining)):
                    return waiter.decision
                if cancel is not None and cancel.is_set():
                    return Decision(False, "cancelled", "the run was cancelled")
                remaining -= 0.1
            return None
        finally:
            with self._lock:
                waiters = self._waiters.get(patch_id, [])
                if waiter in waiters:
                    waiters.remove(waiter)

    def resolve(self, patch_id: str, decision: Decision) -> int:
        with self._lock:
            waiters = self._waiters.pop(patch_id, [])
        for waiter in waiters:
            waiter.decision = decision
            waiter.event.set()
        return len(waiters)


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
        decisions: PatchDecisions = self.server.features["decisions"]
        decision = decisions.wait(request.subject, self.timeout, self.cancel)
        if decision is None:
            return Decision(
                False,
                "timeout",
                f"no decision within {self.timeout:g} s; the patch stays pending in the editor",
            )
        return decision

    def _command(self, request: ApprovalRequest) -> Decision:
        if not self.server.client_supports("window", "show_message", "message_action_item"):
            return Decision(
                False, "client", "the editor cannot ask (no showMessageRequest actions)"
            )
        message = (
            f"The agent wants to run: {request.subject}\nPolicy {request.rule}: {request.reason}"
        )
        params = types.ShowMessageRequestParams(
            type=types.MessageType.Warning,
            message=message,
            actions=[types.MessageActionItem(title=RUN), types.MessageActionItem(title=DENY)],
        )
        try:
            answer = self.server.call(
                lambda: self.server.window_show_message_request_async(params), self.timeout
            )
        except TimeoutError:
            return Decision(False, "timeout", f"no answer within {self.timeout:g} s")
        except Exception as exc:
            log.warning("approval request failed: %s", exc)
            return Decision(False, "client", f"the approval request failed: {exc}")
        if answer is not None and getattr(answer, "title", None) == RUN:
            return Decision(True, "editor")
        return Decision(False, "editor", "denied in the editor" if answer else "dismissed")


def register(server: SmolLanguageServer) -> None:
    server.features["decisions"] = PatchDecisions()
