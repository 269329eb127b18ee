"""Shell tools: `run_cmd` and `run_tests`, each behind the command policy and approval gate.

In a folder the user does not trust, nothing runs and nobody is asked: the tool answers
UNTRUSTED_WORKSPACE. Otherwise the policy parses the command and decides: `deny` is refused
here, in Python, and never put to anyone; `require_approval` goes to the approver; `allow`
runs. Every command runs contained (base/containment.py: repository writable but .git, no
network, empty home); an approval may widen that by what it names (`network` for a package
install), and where no sandbox can be had, commands the policy allows are asked too (fail
closed). Commands run in the repository root, in their own process group (a timeout or
cancel kills all of it), with no stdin.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any, NoReturn

from ..base.containment import Containment, availability_for, plan_command
from ..base.errors import ErrorType, ToolError
from ..base.git import user_identity
from ..base.process import ProcessResult, run_process
from ..base.testruns import failing_tests, test_summary
from ..base.truncate import truncate_output
from ..safety.approval import ApprovalEvent, ApprovalRequest
from ..safety.policy.verdicts import PolicyDecision
from .base import RepoTool, ToolContext, guarded
from .validation import optional_number, optional_str, require_str

MAX_COMMAND_CHARS = 4000


def _shell() -> list[str]:
    return [shutil.which("bash") or "/bin/sh", "-c"]


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
        return f"{python_command()} -m pytest -q"
    if (root / "Cargo.toml").is_file():
        return "cargo test"
    if (root / "go.mod").is_file():
        return "go test ./..."
    makefile = root / "Makefile"
    if makefile.is_file() and re.search(r"^test\s*:", makefile.read_text(errors="replace"), re.M):
        return "make test"
    if any(root.glob("test_*.py")) or any(root.glob("*_test.py")):
        return f"{python_command()} -m pytest -q"
    return None


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


def gated_run(
    ctx: ToolContext,
    command: str,
    timeout: float,
    *,
    decision: PolicyDecision | None = None,
    argv: list[str] | None = None,
    stdin_text: str | None = None,
    writable: bool = True,
) -> tuple[ProcessResult, dict[str, Any]]:
    """Decide with the policy and containment, ask when they say so, run contained when
    allowed; ToolError otherwise. A tool that runs a program of its own (not a shell command
    the model wrote) passes its `decision` and `argv`; `command` is then how it is shown."""
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
    contain = Containment(ctx.root, writable).widened(plan.widens) if plan.contained else None
    identity = user_identity() if contain is not None and "git" in plan.widens else None
    ctx.check_cancelled()
    result = run_process(
        argv or [*_shell(), command],
        stdin_text=stdin_text,
        cwd=ctx.root,
        timeout=timeout,
        extra_env=identity,
        contain=contain,
        cancel=ctx.cancel,
        registry=ctx.processes,
    )
    if result.cancelled:
        ctx.check_cancelled()
    if result.timed_out:
        head, _ = truncate_output(result.stdout + result.stderr, 1500, 40, keep="tail")
        raise ToolError(
            ErrorType.TIMEOUT,
            f"`{command}` was stopped after {timeout:g} s",
            recovery_suggestion="Run something narrower (one test file), or pass a larger timeout=.",
            context=gate | {"command": command, "partial_output": head},
        )
    return result, gate


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


class RunCmdTool(RepoTool):
    name = "run_cmd"
    description = (
        "Run a shell command in the repository root. A policy decides: safe read-only commands "
        "run, risky ones need the user's approval, destructive ones are refused."
    )
    inputs = {
        "command": {"type": "string", "description": "shell command"},
        "timeout": {"type": "number", "description": "seconds (default 120)", "nullable": True},
    }
    example = "run_cmd(command='ls')"
    changes_state = True

    @guarded
    def forward(self, command: str, timeout: float | None = None) -> dict[str, Any]:
        command = require_str("command", command, max_chars=MAX_COMMAND_CHARS, example="'ls'")
        seconds = optional_number("timeout", timeout, minimum=0, maximum=3600)
        result, gate = gated_run(self.ctx, command, seconds or self.settings.command_timeout_s)
        limits = self.limits
        stdout, cut_out = truncate_output(
            result.stdout, limits.truncate_chars, limits.truncate_lines
        )
        stderr, cut_err = truncate_output(
            result.stderr, max(500, limits.truncate_chars // 2), limits.truncate_lines, keep="tail"
        )
        return {
            "command": command,
            "exit_code": result.exit_code,
            "stdout": stdout,
            "stderr": stderr,
            "truncated": cut_out or cut_err,
            "duration_ms": result.duration_ms,
            **gate,
        }


class RunTestsTool(RepoTool):
    name = "run_tests"
    description = (
        "Run the project's tests (the command is detected when not given). Returns passed, "
        "exit_code, failed_tests (as the test runner reports them) and the end of the output."
    )
    inputs = {
        "command": {
            "type": "string",
            "description": "test command, e.g. 'pytest -q tests/test_x.py'",
            "nullable": True,
        },
    }
    example = "run_tests(command='<the test command>')"

    @guarded
    def forward(self, command: str | None = None) -> dict[str, Any]:
        command = optional_str(
            "command", command, max_chars=MAX_COMMAND_CHARS, example="'pytest -q'"
        )
        if command is None:
            command = detect_test_command(self.ctx.root)
            if command is None:
                raise ToolError(
                    ErrorType.NO_TEST_COMMAND,
                    "no test command could be detected for this repository",
                    recovery_suggestion="Pass it explicitly, e.g. run_tests(command='pytest -q').",
                )
        result, gate = gated_run(self.ctx, command, self.settings.command_timeout_s)
        combined = result.stdout + (("\n" + result.stderr) if result.stderr.strip() else "")
        limits = self.limits
        output, truncated = truncate_output(
            combined, limits.truncate_chars, limits.truncate_lines, keep="tail"
        )
        return {
            "command": command,
            "passed": result.exit_code == 0,
            "exit_code": result.exit_code,
            "summary": test_summary(result.stdout, result.stderr),
            # pytest's own report of what failed, never the model's reading of the output
            "failed_tests": failing_tests(combined),
            "output": output,
            "truncated": truncated,
            "duration_ms": result.duration_ms,
            **gate,
        }
