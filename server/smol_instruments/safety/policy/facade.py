"""`CommandPolicy`: the one entry point, `verdict(command) -> PolicyDecision`, that never raises.

It holds what does not change between commands (the rules, the repository root, the home
directory) and runs one `Analysis` per command; the command gets its strictest finding. An
error inside the analysis is a `deny`, so that `--yes` can never approve what was not read.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from .analysis.engine import Analysis
from .analysis.state import State
from .arguments import short
from .places import Paths
from .rules import PolicyRules
from .verdicts import ALLOW, PolicyDecision, strictest

log = logging.getLogger(__name__)

#: Longer commands are not analysed (the shell tool refuses far shorter ones anyway).
MAX_COMMAND_CHARS = 20_000


class CommandPolicy:
    """Decides, in Python, whether a shell command may run in one repository."""

    def __init__(self, repo_root: Path, rules: PolicyRules | None = None) -> None:
        self.repo_root = Path(repo_root).resolve()
        self.rules = rules if rules is not None else PolicyRules()
        home = os.path.realpath(os.path.expanduser("~")) or "/"
        self.paths = Paths(str(self.repo_root), home.rstrip("/") or "/")
        #: Repository rules that were ignored, and why (one line each).
        self.warnings: list[str] = []
        if not self.rules.allow_repo_loosening:
            for rule in self.rules.repo:
                if rule.verdict == ALLOW:
                    self.warn(
                        f"policy.toml rule {rule.id!r} allows commands, which can only loosen the "
                        "defaults; ignored (set POLICY_ALLOW_REPO_LOOSENING=true to honour it)"
                    )

    @classmethod
    def load(cls, repo_root: Path, *, allow_repo_loosening: bool = False) -> CommandPolicy:
        """The default rules plus `<repo_root>/.smol-instruments/policy.toml`, if present."""
        rules = PolicyRules.load(Path(repo_root), allow_repo_loosening=allow_repo_loosening)
        return cls(repo_root, rules)

    def warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)
            log.warning("%s", message)

    def verdict(self, command: str) -> PolicyDecision:
        """The decision for one shell command; never raises."""
        try:
            return self._decide(command if isinstance(command, str) else str(command))
        except Exception:  # the policy must answer; a bug in it refuses, so --yes cannot pass it
            log.exception("command policy failed on %r", command)
            finding = self.rules.finding("deny.policy-error", None)
            return PolicyDecision(str(command), finding.verdict, finding.rule, finding.reason)

    def _decide(self, command: str) -> PolicyDecision:
        if "\x00" in command:
            return self._decision(
                command, "approval.unparseable", problem="the command contains a NUL byte"
            )
        if len(command) > MAX_COMMAND_CHARS:
            problem = f"the command is {len(command)} characters long, too long to check"
            return self._decision(command, "approval.unparseable", problem=problem)
        analysis = Analysis(self.rules, self.paths, self.warn)
        state = State(env={}, cwd=str(self.repo_root))
        try:
            analysis.run(command, state)
        except RecursionError:
            analysis.emit(
                "approval.unparseable", short(command), problem="nests too deeply to follow"
            )
        decisive = strictest(analysis.findings)
        if decisive is not None:
            return PolicyDecision(command, decisive.verdict, decisive.rule, decisive.reason)
        if not any(line.split("#", 1)[0].strip() for line in command.splitlines()):
            return self._decision(command, "allow.empty")
        return self._decision(command, "allow.no-effect", display=short(command))

    def _decision(
        self, command: str, rule_id: str, display: str | None = None, **fields: str
    ) -> PolicyDecision:
        finding = self.rules.finding(rule_id, display, **fields)
        return PolicyDecision(command, finding.verdict, finding.rule, finding.reason)
