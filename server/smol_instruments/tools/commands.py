"""The command gate: whether a command runs, asked or not, contained or not.

In a folder the user does not trust, nothing runs and nobody is asked: UNTRUSTED_WORKSPACE.
Otherwise the policy parses the command and decides: `deny` is refused here, in Python, and
never put to anyone; `require_approval` goes to the approver; `allow` runs. Containment
(base/containment.py) decides the rest: where no sandbox (or no copy-on-write view of the
repository) can be had, commands the policy allows are asked too (fail closed), and an
approval may widen a command by what it names (`network` for a package install).
`shell.py` runs what is decided here; `runs_unasked` answers, without asking anyone, whether a
command would run unasked (the patch checks and the evidence runs use only those).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from ..base.containment import CommandPlan, availability_for, plan_command
from ..base.errors import ErrorType, ToolError
from ..safety.approval import ApprovalEvent, ApprovalRequest
from ..safety.policy.verdicts import PolicyDecision
from .base import ToolContext


def python_command() -> str:
    return "python" if shutil.which("python") else "python3"


def detect_test_command(root: Path) -> str | None:
    """The command that runs this project's tests, guessed from its files; None if unknown."""
    package = root / "package.json"
    if package.is_file():
        try:
            scripts = json.loads(package.read_text(errors="replace")).get("scripts") or {}
        except (ValueError, AttributeError):
            scripts = {}
        test = scripts.get("test") if isinstance(scripts, dict) else None
        if isinstance(test, str) and "no test specified" not in test:
            return "npm test"
    python_markers = ("pytest.ini", "conftest.py", "tox.ini", "setup.cfg", "pyproject.toml")
    if any((root / marker).is_file() for marker in python_markers) or (root / "tests").is_dir():
        return _pytest_command(root)
    if (root / "Cargo.toml").is_file():
        return "cargo test"
    if (root / "go.mod").is_file():
        return "go test ./..."
    makefile = root / "Makefile"
    if makefile.is_file() and re.search(r"^test\s*:", makefile.read_text(errors="replace"), re.M):
        return "make test"
    if any(root.glob("test_*.py")) or any(root.glob("*_test.py")):
        return _pytest_command(root)
    layout = _test_layout(root)
    return _pytest_command(root, layout) if any(layout) else None


#: Test modules named so that pytest's default discovery (test_*.py, *_test.py) misses them,
#: as jsonpointer's tests.py or a Django app's tests.py: pytest collects a file given by path.
_OTHER_TEST_NAMES = ("tests.py", "test.py")
_PYTEST_CONFIG = ("pytest.ini", ".pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml")


def _pytest_command(root: Path, layout: tuple[bool, list[str]] | None = None) -> str:
    """pytest, given by path the test files its default discovery misses when it would find
    no other (without them it collects nothing and exits 5). Where it finds some, or the
    project's configuration says where its tests are, pytest is left to it: pytest drops a
    file given beside a folder that holds it, so `tests.py .` would run only the folder's.
    `layout` is `_test_layout(root)` when the caller has it already."""
    command = f"{python_command()} -m pytest -q"
    configured = any(
        re.search(
            r"^\s*(python_files|testpaths)\s*=", (root / name).read_text(errors="replace"), re.M
        )
        for name in _PYTEST_CONFIG
        if (root / name).is_file()
    )
    if configured:
        return command
    found, missed = layout or _test_layout(root)
    if found or not missed:
        return command
    return " ".join([command, *map(shlex.quote, missed)])


def _test_layout(root: Path) -> tuple[bool, list[str]]:
    """(whether pytest's default discovery finds a test module under `root`, the test modules
    named so that it misses them, `_OTHER_TEST_NAMES`), outside hidden folders and virtual
    environments. The walk stops at the first module pytest would find: this runs for every
    proposal's checks, and the missed ones matter only when there is none."""
    missed: list[str] = []
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        dirs[:] = sorted(
            d
            for d in dirs
            if not d.startswith(".")
            and not (here / d / "pyvenv.cfg").exists()
            and d not in ("node_modules", "site-packages", "__pycache__")
        )
        for name in sorted(files):
            if name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py")):
                return True, []
            if name in _OTHER_TEST_NAMES:
                missed.append((here / name).relative_to(root).as_posix())
    return False, missed


def runs_unasked(ctx: ToolContext, command: str) -> bool:
    """True when `command` would run now without asking anyone: the folder is trusted, the
    policy allows it, and it can be contained (or the user turned containment off)."""
    if not ctx.trusted:
        return False
    decision = ctx.policy.verdict(command)
    if decision.verdict != "allow":
        return False
    mode = ctx.settings.command_containment
    plan = plan_command(decision.verdict, decision.rule, mode, availability_for(ctx.root, mode))
    return not plan.ask and plan.refuse is None


@dataclass(frozen=True)
class Decision:
    """What the gate decided for one command: how it runs, and what to report with it."""

    plan: CommandPlan
    gate: dict[str, Any]
    #: The user said yes to exactly this command (not the policy's allow).
    approved: bool


def decide(ctx: ToolContext, command: str, decision: PolicyDecision | None = None) -> Decision:
    """Decide with the policy and containment and ask when they say so; ToolError when the
    command must not run. A tool that runs a program of its own passes the policy's
    `decision` for it (a fixed rule); otherwise the policy reads `command`."""
    if not ctx.trusted:
        raise ToolError(
            ErrorType.UNTRUSTED_WORKSPACE,
            f"`{command}` was not run: the user does not trust this folder, so no command runs",
            recovery_suggestion=(
                "Do not retry any command. Answer from the files (read_file, rg_search, "
                "list_files, git_diff) and propose changes with propose_patch; say in "
                "final_answer() what the user could run once they trust the folder."
            ),
            context={"command": command},
        )
    decision = decision or ctx.policy.verdict(command)
    gate: dict[str, Any] = {
        "verdict": decision.verdict,
        "rule": decision.rule,
        "reason": decision.reason,
    }
    if decision.verdict == "deny":
        _refuse(
            ctx,
            command,
            gate,
            f"command refused by policy rule {decision.rule}: {decision.reason}",
            "This command is never run. Do not retry it or a variant of it; use a safe, "
            "read-only alternative or the repository tools (read_file, rg_search, propose_patch).",
        )
    mode = ctx.settings.command_containment
    plan = plan_command(decision.verdict, decision.rule, mode, availability_for(ctx.root, mode))
    gate["contained"] = plan.contained
    if plan.widens:
        gate["widens"] = list(plan.widens)
    if plan.refuse:
        _refuse(
            ctx,
            command,
            gate,
            f"`{command}` cannot run: {plan.refuse}",
            "No command can run here until the user makes containment work; continue with "
            "the repository tools (read_file, rg_search, propose_patch).",
        )
    if plan.ask:
        reasons = [decision.reason if decision.verdict != "allow" else None, plan.note]
        reason = "; ".join(r for r in reasons if r)
        answer = ctx.gate.ask(
            ApprovalRequest(
                kind="command",
                subject=command,
                summary=command,
                rule=decision.rule,
                reason=reason,
                widens=plan.widens,
            )
        )
        gate["approval"] = "approved" if answer.approved else "denied"
        gate["decided_by"] = answer.decided_by
        _emit(ctx, command, gate)
        if not answer.approved:
            raise ToolError(
                ErrorType.APPROVAL_DENIED,
                f"the user did not approve `{command}` ({reason})"
                + (f": {answer.reason}" if answer.reason else ""),
                recovery_suggestion=(
                    "Do not run it again. Continue without it, or explain in final_answer() "
                    "what the user could run themselves."
                ),
                context=gate | {"command": command},
            )
    else:
        gate["approval"] = "auto"
        _emit(ctx, command, gate)
    return Decision(plan, gate, approved=plan.ask)


def _emit(ctx: ToolContext, command: str, gate: dict[str, Any]) -> None:
    ctx.emit(
        ApprovalEvent(
            command=command,
            verdict=gate["verdict"],
            rule=gate["rule"],
            reason=gate["reason"],
            decision=gate["approval"],
            contained=gate.get("contained", False),
            widens=list(gate.get("widens", [])),
        )
    )


def _refuse(
    ctx: ToolContext, command: str, gate: dict[str, Any], message: str, recovery: str
) -> NoReturn:
    gate["approval"] = "denied"
    _emit(ctx, command, gate)
    raise ToolError(
        ErrorType.COMMAND_DENIED,
        message,
        recovery_suggestion=recovery,
        context=gate | {"command": command},
    )
