"""What every validation backend shares: the syntax check and how a check's result is reported."""

from __future__ import annotations

import shlex

from ..base.truncate import keep_tail
from ..patches.validation import CheckResult

#: The syntax check run on every Python file a patch creates or changes.
SYNTAX_CHECK = "python3 -m py_compile"


def syntax_command(files: list[str]) -> str:
    return f"{SYNTAX_CHECK} {shlex.join(files)}"


def check_result(
    command: str,
    exit_code: int | None,
    output: str,
    duration_ms: int,
    *,
    timed_out: bool,
    timeout_s: float,
    max_chars: int,
) -> CheckResult:
    """One CheckResult, its output cut to the tail and a timeout said in words."""
    if timed_out:
        output = f"{output.rstrip()}\n[killed: still running after {timeout_s:g} s]".lstrip()
    # pytest's 5 is "no tests were collected": nothing failed (a project without tests yet)
    nothing_to_run = exit_code == 5 and "no tests ran" in output
    return CheckResult(
        command=command,
        passed=(exit_code == 0 or nothing_to_run) and not timed_out,
        output=keep_tail(output, max_chars),
        exit_code=exit_code,
        duration_ms=duration_ms,
        timed_out=timed_out,
    )
