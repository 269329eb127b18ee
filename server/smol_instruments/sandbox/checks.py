"""What every validation backend shares: the syntax check and how a check's result is reported."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import replace

from ..base.testruns import failing_tests, test_summary
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


def compared_with_unpatched(
    result: CheckResult, unpatched: Callable[[str], CheckResult]
) -> CheckResult:
    """`result`, a failed check, said against the same command run without the patch.

    A project whose tests already fail would otherwise fail every proposal's checks, and the
    model would be sent to fix what it never touched. The failure is the patch's when the
    check passes without it, or when a test fails with it that did not fail without it (by
    pytest's test ids; without ids, when the exit status differs)."""
    if result.passed or result.timed_out:
        return result
    before = unpatched(result.command)
    said = test_summary(before.output, "") or f"exit status {before.exit_code}"
    if before.timed_out:
        said = "did not finish in time"
    if before.passed or before.timed_out:
        return replace(result, without_patch=said)
    after_ids, before_ids = failing_tests(result.output), failing_tests(before.output)
    if after_ids and before_ids:
        same = all(test in before_ids for test in after_ids)
    else:
        same = result.exit_code == before.exit_code
    return replace(result, without_patch=said, fails_without_patch=same)
