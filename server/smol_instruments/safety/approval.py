"""Approval gates: who answers "may I run this command / apply this patch?", and the record.

Hosts hand the core an `Approver`: the terminal asks on stdin, a non-interactive run denies,
`--yes` approves what the policy left to the user (never a `deny` verdict: those never reach
an approver), and the editor asks through LSP. Every decision lands in the `ApprovalStore`
with what was decided, by whom and when.

What the user approves is exactly what runs: a request carries the command's and the diff's
exact text, and every host shows it through `base/visible.py` (escape sequences, control,
bidi and invisible characters drawn as marks, every line break shown), with
`ApprovalRequest.warnings()` said in words next to it when the text hides something or a
command runs more than one line.
"""

from __future__ import annotations

import select
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, Protocol, TextIO

import attrs

from ..base.containment import describe_widening
from ..base.visible import hidden, visible

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
    #: Whether the command ran (or would have run) inside containment.
    contained: bool = False
    #: What an approval let it do beyond its containment, e.g. ["network"].
    widens: list[str] = attrs.field(factory=list)


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

    def widening_line(self) -> str | None:
        """The widening said to the user, e.g. "Approving also allows: network access"."""
        if not self.widens:
            return None
        return "Approving also allows: " + describe_widening(self.widens)

    def warnings(self) -> list[str]:
        """What the text to decide on hides, in words, for every host to show next to it."""
        return text_warnings(
            self.subject if self.kind == "command" else self.detail or "", self.kind
        )


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
    widens: tuple[str, ...] = ()
    at: float = field(default_factory=time.time)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def text_warnings(text: str, kind: Kind) -> list[str]:
    """Warnings about a command's or a diff's text: characters a screen would not show, and
    (a command) every line after the first, which runs too."""
    what = "command" if kind == "command" else "diff"
    found = []
    if hidden(text):
        lines = [n for n, line in enumerate(text.split("\n"), 1) if hidden(line)]
        where = ", ".join(map(str, lines[:5])) + (", ..." if len(lines) > 5 else "")
        found.append(
            f"Warning: this {what} holds characters a terminal or editor would not show "
            f"(escape sequences, control, bidirectional or invisible characters; line "
            f"{where}). They are drawn here as ␛, ␍ or ⟨U+...⟩: read it as drawn."
        )
    count = text.rstrip("\n").count("\n") + 1
    if kind == "command" and count > 1:
        found.append(f"Warning: this command is {count} lines long and every line runs.")
    return found


def command_lines(request: ApprovalRequest) -> list[str]:
    """The command of a request as lines to show: every character visible, breaks marked."""
    return visible(request.subject, breaks=True).split("\n")


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
                out.write(
                    f"\nThe agent proposes a patch: {visible(request.summary, breaks=True)}\n"
                )
                if request.detail:
                    out.write(visible(request.detail.rstrip()) + "\n")
                question = "Apply this patch? [y/N] "
            else:
                out.write("\nThe agent wants to run:\n")
                out.write("".join(f"    {line}\n" for line in command_lines(request)))
                if request.rule or request.reason:
                    shown = visible(f"{request.rule}: {request.reason}", breaks=True)
                    out.write(f"  policy: {shown}\n")
                if request.widening_line():
                    out.write(f"  {request.widening_line()}\n")
                question = "Run it? [y/N/a=always this session] "
            for warning in request.warnings():
                out.write(f"  {warning}\n")
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
            widens=request.widens,
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
