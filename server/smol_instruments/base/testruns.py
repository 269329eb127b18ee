"""What a test runner's output says: its summary line and the tests that failed.

One reader for every place that looks at test output: `run_tests`, the failing tests a task
speaks of (agent/evidence.py), and a patch's check compared with the same check without it
(sandbox/). pytest, cargo, go and jest summaries are recognised; failing test ids are
pytest's (`FAILED path::name`, `ERROR path::name`), the runner this project detects most.
"""

from __future__ import annotations

import re

_SUMMARY = re.compile(
    r"\b\d+ (passed|failed|errors?|skipped)\b|\btest result:|\bTests?:\s+\d+|^(ok|FAIL)\s", re.I
)
#: pytest's short summary: "FAILED tests/test_ops.py::test_average - assert 6.0 == 4".
FAILED_ID = re.compile(r"^(?:FAILED|ERROR)\s+(\S+?)::((?:\w+::)*\w+)(?:\[[^\]]*\])?", re.M)


def test_summary(stdout: str, stderr: str) -> str:
    """The runner's own summary line (pytest, cargo, go, jest), else the last line of output."""
    for text in (stdout, stderr):
        for line in reversed(text.splitlines()):
            if _SUMMARY.search(line):
                return line.strip().strip("= ").strip()
    lines = [ln for ln in (stdout + "\n" + stderr).splitlines() if ln.strip()]
    return lines[-1].strip() if lines else ""


def failing_tests(output: str) -> list[str]:
    """The ids of the tests pytest reports failed or erred (`path::name`), in order, once each."""
    return list(dict.fromkeys(f"{path}::{name}" for path, name in FAILED_ID.findall(output)))


def failing_lines(output: str) -> list[str]:
    """pytest's short-summary lines of failures, as printed."""
    return [line for line in output.splitlines() if FAILED_ID.match(line)]
