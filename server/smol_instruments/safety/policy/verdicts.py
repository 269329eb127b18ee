"""Verdicts and decisions: what the policy answers, and the findings it decides from.

A finding is one risk the analysis found in one part of a command (a rule id, its verdict and
a sentence); the command's decision is its strictest finding (deny > require_approval >
allow), and the first of those wins a tie, so the most specific reason is reported.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

Verdict = Literal["allow", "require_approval", "deny"]
ALLOW: Verdict = "allow"
ASK: Verdict = "require_approval"
DENY: Verdict = "deny"
RANK: dict[str, int] = {ALLOW: 0, ASK: 1, DENY: 2}


@dataclass(frozen=True)
class PolicyDecision:
    """The policy's answer for one command: what to do, which rule decided, and why."""

    command: str
    verdict: Verdict
    rule: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "command": self.command,
            "verdict": self.verdict,
            "rule": self.rule,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class Finding:
    """One risk found in one part of a command."""

    verdict: Verdict
    rule: str
    reason: str


def strictest(findings: Iterable[Finding]) -> Finding | None:
    """The finding with the strictest verdict; the earliest of equals."""
    best: Finding | None = None
    for finding in findings:
        if best is None or RANK[finding.verdict] > RANK[best.verdict]:
            best = finding
    return best
