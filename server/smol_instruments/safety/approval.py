"""Approval gates: who answers "may I run this command / apply this patch?", and the record.

Hosts hand the core an `Approver`: the terminal asks on stdin, a non-interactive run denies,
`--yes` approves what the policy left to the user (never a `deny` verdict: those never reach
an approver), and the editor asks through LSP. Every decision lands in the `ApprovalStore`
with what was decided, by whom and when.
"""

from __future__ import annotations

import select
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, Protocol, TextIO

import attrs

Kind = Literal["command", "patch"]
ApprovalOutcome = Literal["approved", "denied", "auto"]


@attrs.frozen(kw_only=True, slots=False)
class ApprovalEvent:
    """What was decided about a command, for the host to show: `auto` when the policy allowed
    it, `denied` for a policy deny or a refusal, `approved` when someone said yes."""

    kind: Literal["approval"] = "approval"
    command: str
    verdict: str
    rule: str | None
    reason: str | None = None
    decision: ApprovalOutcome


@dataclass(frozen=True)
class ApprovalRequest:
    """A question put to the user. `subject` is the command or the patch id."""

    kind: Kind
    subject: str
    summary: str
    rule: str | None = None
    reason: str | None = None
    detail: str | None = None  # the diff of a patch
    #: What approving also lets the command do beyond its containment (e.g. ("network",)).
    widens: tuple[str, ...] = ()


@dataclass(frozen=True)
class Decision:
    approved: bool
    decided_by: str
    reason: str | None = None
    # The host already applied the patch itself (the editor's workspace/applyEdit).
    applied_by_host: bool = False
    # Approve the same subject again without asking for the rest of the session.
    remember: bool = False


@dataclass
class ApprovalRecord:
    kind: Kind
    subject: str
    approved: bool
    decided_by: str
    reason: str | None
    rule: str | None
    at: float = field(default_factory=time.time)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class Approver(Protocol):
    """Answers approval requests; may block (a human is deciding)."""

    def decide(self, request: ApprovalRequest) -> Decision: ...


class DenyAllApprover:
    """For non-interactive runs: nobody can answer, so everything risky is refused."""

    def __init__(
        self, why: str = "no one can approve: stdin is not a terminal (pass --yes)"
    ) -> None:
        self.why = why

    def decide(self, request: ApprovalRequest) -> Decision:
        return Decision(approved=False, decided_by="non-interactive", reason=self.why)


class AutoApprover:
    """`--yes`: approves what the policy left to the user. Deny verdicts never get here."""

    def decide(self, request: ApprovalRequest) -> Decision:
        return Decision(approved=True, decided_by="--yes", reason="approved by --yes")


class TerminalApprover:
    """Asks on a terminal: shows the command or diff with the policy's rule and reason."""

    def __init__(
        self,
        stdin: TextIO | None = None,
        stdout: TextIO | None = None,
        timeout_s: float | None = None,
    ) -> None:
        self.stdin = stdin or sys.stdin
        self.stdout = stdout or sys.stderr
        self.timeout_s = timeout_s
        self._lock = threading.Lock()

    def decide(self, request: ApprovalRequest) -> Decision:
        with self._lock:  # one question at a time on one terminal
            out = self.stdout
            if request.kind == "patch":
                out.write(f"\nThe agent proposes a patch: {request.summary}\n")
                if request.detail:
                    out.write(request.detail.rstrip() + "\n")
                question = "Apply this patch? [y/N] "
            else:
                out.write(f"\nThe agent wants to run: {request.subject}\n")
                if request.rule or request.reason:
                    out.write(f"  policy: {request.rule}: {request.reason}\n")
                question = "Run it? [y/N/a=always this session] "
            out.write(question)
            out.flush()
            answer = self._read_line()
            if answer is None:
                return Decision(False, "timeout", f"no answer within {self.timeout_s:g} s")
            answer = answer.strip().lower()
            if answer in {"y", "yes"}:
                return Decision(True, "terminal")
            if answer in {"a", "always"} and request.kind == "command":
                return Decision(True, "terminal", "approved for this session", remember=True)
            return Decision(False, "terminal", "refused at the terminal")

    def _read_line(self) -> str | None:
        if self.timeout_s is None:
            return self.stdin.readline()
        try:
            ready, _, _ = select.select([self.stdin], [], [], self.timeout_s)
        except (ValueError, OSError, TypeError):  # not a real file (tests): read directly
            return self.stdin.readline()
        return self.stdin.readline() if ready else None


class ApprovalStore:
    """Every decision, in order; `is_approved` answers from the remembered approvals."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.records: list[ApprovalRecord] = []
        self._remembered: set[tuple[str, str]] = set()

    def record(self, request: ApprovalRequest, decision: Decision) -> ApprovalRecord:
        entry = ApprovalRecord(
            kind=request.kind,
            subject=request.subject,
            approved=decision.approved,
            decided_by=decision.decided_by,
            reason=decision.reason,
            rule=request.rule,
        )
        with self._lock:
            self.records.append(entry)
            if decision.approved and decision.remember:
                self._remembered.add((request.kind, request.subject))
        return entry

    def is_approved(self, kind: Kind, subject: str) -> bool:
        """True when this exact subject was approved and remembered for the session."""
        with self._lock:
            return (kind, subject) in self._remembered

    def last(self, kind: Kind, subject: str) -> ApprovalRecord | None:
        with self._lock:
            for entry in reversed(self.records):
                if entry.kind == kind and entry.subject == subject:
                    return entry
        return None


class ApprovalGate:
    """Asks the approver unless the store already remembers an approval; records everything."""

    def __init__(self, approver: Approver, store: ApprovalStore | None = None) -> None:
        self.approver = approver
        self.store = store or ApprovalStore()

    def ask(self, request: ApprovalRequest) -> Decision:
        if self.store.is_approved(request.kind, request.subject):
            decision = Decision(True, "remembered", "approved earlier in this session")
        else:
            try:
                decision = self.approver.decide(request)
            except Exception as exc:  # a broken approver must never count as a yes
                decision = Decision(False, "error", f"approval failed: {exc}")
        self.store.record(request, decision)
        return decision
