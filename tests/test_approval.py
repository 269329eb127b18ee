"""Approvers, the ApprovalStore (what, who, when) and the ApprovalGate."""

from __future__ import annotations

import io
import os
import time
from collections.abc import Iterator

import pytest

from smol_instruments.safety.approval import (
    ApprovalGate,
    ApprovalRequest,
    ApprovalStore,
    AutoApprover,
    Decision,
    DenyAllApprover,
    TerminalApprover,
)

COMMAND = ApprovalRequest(
    kind="command",
    subject="pip install requests",
    summary="pip install requests",
    rule="package-install",
    reason="installs packages from the network",
)
PATCH = ApprovalRequest(
    kind="patch",
    subject="p1a2b3c",
    summary="fix add",
    detail="--- a/app/calc.py\n+++ b/app/calc.py\n@@ -1 +1 @@\n-return a - b\n+return a + b\n",
)


# --- the store ------------------------------------------------------------------------------


def test_store_records_what_who_and_when() -> None:
    store = ApprovalStore()
    before = time.time()
    entry = store.record(COMMAND, Decision(False, "terminal", "refused at the terminal"))
    assert store.records == [entry]
    assert entry.kind == "command"
    assert entry.subject == "pip install requests"
    assert entry.approved is False
    assert entry.decided_by == "terminal"
    assert entry.reason == "refused at the terminal"
    assert entry.rule == "package-install"
    assert before <= entry.at <= time.time()
    assert entry.to_dict()["subject"] == "pip install requests"


def test_store_keeps_every_decision_in_order() -> None:
    store = ApprovalStore()
    store.record(COMMAND, Decision(False, "terminal"))
    store.record(PATCH, Decision(True, "editor"))
    store.record(COMMAND, Decision(True, "--yes"))
    assert [(r.kind, r.approved, r.decided_by) for r in store.records] == [
        ("command", False, "terminal"),
        ("patch", True, "editor"),
        ("command", True, "--yes"),
    ]
    last = store.last("command", "pip install requests")
    assert last is not None and last.decided_by == "--yes"
    assert store.last("command", "never asked") is None


def test_is_approved_only_for_remembered_approvals() -> None:
    store = ApprovalStore()
    store.record(COMMAND, Decision(True, "terminal"))  # once, not remembered
    assert store.is_approved("command", "pip install requests") is False
    store.record(COMMAND, Decision(False, "terminal", remember=True))  # a denial is never kept
    assert store.is_approved("command", "pip install requests") is False
    store.record(COMMAND, Decision(True, "terminal", remember=True))
    assert store.is_approved("command", "pip install requests") is True
    # Exactly that subject and kind, nothing else.
    assert store.is_approved("command", "pip install requests2") is False
    assert store.is_approved("patch", "pip install requests") is False


# --- approvers ------------------------------------------------------------------------------


def test_deny_all_approver() -> None:
    for request in (COMMAND, PATCH):
        decision = DenyAllApprover().decide(request)
        assert decision.approved is False
        assert decision.decided_by == "non-interactive"
        assert decision.reason and "--yes" in decision.reason
    custom = DenyAllApprover("the editor has no dialog").decide(COMMAND)
    assert custom.reason == "the editor has no dialog"


def test_auto_approver() -> None:
    for request in (COMMAND, PATCH):
        decision = AutoApprover().decide(request)
        assert decision.approved is True
        assert decision.decided_by == "--yes"
        assert decision.remember is False


def terminal(answer: str, timeout_s: float | None = None) -> tuple[TerminalApprover, io.StringIO]:
    out = io.StringIO()
    return TerminalApprover(io.StringIO(answer), out, timeout_s=timeout_s), out


@pytest.mark.parametrize("answer", ["y\n", "Y\n", "yes\n", "  yes  \n"])
def test_terminal_yes(answer: str) -> None:
    approver, out = terminal(answer)
    decision = approver.decide(COMMAND)
    assert decision.approved is True
    assert decision.decided_by == "terminal"
    assert decision.remember is False
    shown = out.getvalue()
    assert "pip install requests" in shown
    assert "package-install" in shown  # the rule
    assert "installs packages from the network" in shown  # the reason
    assert "[y/N" in shown


@pytest.mark.parametrize("answer", ["n\n", "\n", "", "no\n", "maybe\n", "yy\n"])
def test_terminal_anything_else_is_no(answer: str) -> None:
    decision = terminal(answer)[0].decide(COMMAND)
    assert decision.approved is False
    assert decision.decided_by == "terminal"


def test_terminal_always_remembers_commands_only() -> None:
    decision = terminal("a\n")[0].decide(COMMAND)
    assert (decision.approved, decision.remember) == (True, True)
    # "always" makes no sense for a one-off patch: it is not a yes.
    assert terminal("a\n")[0].decide(PATCH).approved is False


def test_terminal_shows_the_patch_diff() -> None:
    approver, out = terminal("y\n")
    assert approver.decide(PATCH).approved is True
    shown = out.getvalue()
    assert "fix add" in shown
    assert "+return a + b" in shown
    assert "Apply this patch?" in shown


def test_terminal_with_timeout_and_a_non_file_stdin_still_reads() -> None:
    # StringIO cannot be select()ed: the approver reads it directly instead of failing.
    assert terminal("y\n", timeout_s=0.5)[0].decide(COMMAND).approved is True


@pytest.fixture
def silent_pipe() -> Iterator[io.TextIOWrapper]:
    read_fd, write_fd = os.pipe()
    reader = os.fdopen(read_fd, "r")
    try:
        yield reader
    finally:
        reader.close()
        os.close(write_fd)


def test_terminal_timeout_is_a_denial(silent_pipe: io.TextIOWrapper) -> None:
    out = io.StringIO()
    approver = TerminalApprover(silent_pipe, out, timeout_s=0.2)
    started = time.monotonic()
    decision = approver.decide(COMMAND)
    assert time.monotonic() - started < 30  # it gave up waiting (nobody would ever answer)
    assert decision.approved is False
    assert decision.decided_by == "timeout"
    assert decision.reason == "no answer within 0.2 s"


# --- the gate -------------------------------------------------------------------------------


class CountingApprover:
    def __init__(self, decision: Decision) -> None:
        self.decision = decision
        self.asked: list[ApprovalRequest] = []

    def decide(self, request: ApprovalRequest) -> Decision:
        self.asked.append(request)
        return self.decision


def test_gate_asks_and_records() -> None:
    approver = CountingApprover(Decision(False, "editor", "user clicked Deny"))
    gate = ApprovalGate(approver)
    decision = gate.ask(COMMAND)
    assert decision.approved is False
    assert approver.asked == [COMMAND]
    [entry] = gate.store.records
    assert (entry.kind, entry.subject, entry.approved, entry.decided_by, entry.reason) == (
        "command",
        "pip install requests",
        False,
        "editor",
        "user clicked Deny",
    )


def test_gate_remembered_approval_skips_the_approver() -> None:
    approver = CountingApprover(Decision(True, "terminal", remember=True))
    gate = ApprovalGate(approver)
    assert gate.ask(COMMAND).approved is True
    second = gate.ask(COMMAND)
    assert second.approved is True
    assert second.decided_by == "remembered"
    assert len(approver.asked) == 1
    assert [r.decided_by for r in gate.store.records] == ["terminal", "remembered"]
    # A different command is asked again.
    other = ApprovalRequest(kind="command", subject="curl x", summary="curl x")
    gate.ask(other)
    assert len(approver.asked) == 2


def test_gate_raising_approver_counts_as_denied() -> None:
    class Broken:
        def decide(self, request: ApprovalRequest) -> Decision:
            raise RuntimeError("dialog crashed")

    gate = ApprovalGate(Broken())
    decision = gate.ask(PATCH)
    assert decision.approved is False
    assert decision.decided_by == "error"
    assert decision.reason and "dialog crashed" in decision.reason
    [entry] = gate.store.records
    assert entry.approved is False
    assert entry.decided_by == "error"


def test_gate_uses_a_shared_store() -> None:
    store = ApprovalStore()
    ApprovalGate(AutoApprover(), store).ask(PATCH)
    ApprovalGate(DenyAllApprover(), store).ask(COMMAND)
    assert [(r.approved, r.decided_by) for r in store.records] == [
        (True, "--yes"),
        (False, "non-interactive"),
    ]
