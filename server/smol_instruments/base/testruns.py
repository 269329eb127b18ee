"""What a test runner's output says: its summary and the tests that failed.

One reader for every place that looks at test output: `run_tests`, the failing tests a task
speaks of (agent/evidence.py), and a patch's check compared with the same check without it
(sandbox/). pytest, cargo, go and jest summaries are recognised; failing test ids are
pytest's (`FAILED path::name`, `ERROR path::name`), the runner this project detects most.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

#: The kinds of count pytest's summary gives, as an alternation for a pattern.
COUNT_KINDS = "passed|failed|errors?|skipped|xfailed|xpassed|warnings?|deselected"
_SUMMARY = re.compile(
    r"\b\d+ (passed|failed|errors?|skipped)\b|\bno tests ran\b|\btest result:|\bTests?:\s+\d+|^(ok|FAIL)\s",
    re.I,
)
#: pytest's short summary: "FAILED tests/test_ops.py::test_average - assert 6.0 == 4".
FAILED_ID = re.compile(r"^(?:FAILED|ERROR)\s+(\S+?)::((?:\w+::)*\w+)(?:\[[^\]]*\])?", re.M)


#: pytest's last line, "1 failed, 4 passed in 0.46s" (its `=` rule already stripped).
_PYTEST_LINE = re.compile(
    rf"^((?:\d+ (?:{COUNT_KINDS})(?:, )?)+)(?: in (\d+(?:\.\d+)?)s)?(?: \(\S+\))?$"
)
_PAIR = re.compile(rf"(\d+) ({COUNT_KINDS})")
_NOUNS = {
    "passed": ("test passed", "tests passed"),
    "failed": ("test failed", "tests failed"),
    "error": ("error", "errors"),
    "errors": ("error", "errors"),
    "skipped": ("test skipped", "tests skipped"),
    "xfailed": ("expected failure", "expected failures"),
    "xpassed": ("unexpected pass", "unexpected passes"),
    "warning": ("warning", "warnings"),
    "warnings": ("warning", "warnings"),
    "deselected": ("test deselected", "tests deselected"),
}


def test_summary(stdout: str, stderr: str) -> str:
    """The runner's summary (pytest, cargo, go, jest), else the last line of output. pytest's
    counts are said in words, "1 test failed, 4 tests passed (0.46 s)": asked how many tests
    failed, the 1.5B model copied pytest's own "1 failed, 4 passed in 0.46s" as "10 failed",
    three times of three, and the words right every time."""
    for text in (stdout, stderr):
        for line in reversed(text.splitlines()):
            if _SUMMARY.search(line):
                return _in_words(line.strip().strip("= ").strip())
    lines = [ln for ln in (stdout + "\n" + stderr).splitlines() if ln.strip()]
    return lines[-1].strip() if lines else ""


#: pytest's section headers ("=== warnings summary ===") and the line that ends its warnings.
_SECTION = re.compile(r"^=+ (.+?) =+$")
_WARNINGS_DOCS = re.compile(r"^-- Docs: https?://docs?\.pytest\.org/\S*warnings")
_COLOUR = re.compile(r"\x1b\[[0-9;]*m")


def without_warnings(output: str) -> str:
    """pytest's output with its "warnings summary" sections left out, a line saying so in
    their place: the failures and the short summary are what a reader acts on, and the text is
    cut from the end to fit (base/truncate.py `keep_tail`). Seen on dev sv-finalize-keep-build:
    forty-nine deprecation warnings filled the 3,000 characters kept of a failed check, and the
    1.5B model never saw its own `TypeError`. A section ends at pytest's link to its warnings
    docs, at the next section, or at the line of counts; any other output is as it was."""
    kept: list[str] = []
    skipped = 0

    def said() -> None:
        nonlocal skipped
        if skipped:
            kept.append(f"[pytest's warnings summary left out: {skipped} lines]\n")
        skipped = 0

    for line in output.splitlines(keepends=True):
        plain = _COLOUR.sub("", line).rstrip("\r\n")
        header = _SECTION.match(plain)
        if header is not None and header[1].strip().startswith("warnings summary"):
            said()
            skipped = 1
        elif skipped and _WARNINGS_DOCS.match(plain):
            skipped += 1
            said()
        elif skipped and header is None and not _PYTEST_LINE.match(plain.strip()):
            skipped += 1
        else:
            said()
            kept.append(line)
    said()
    return "".join(kept)


def ran_tests(output: str) -> bool:
    """The output is a test runner's: a line of it is a summary of counts (`test_summary`)."""
    return any(_SUMMARY.search(line) for line in output.splitlines())


def _in_words(line: str) -> str:
    found = _PYTEST_LINE.match(line)
    if found is None:
        return line
    counts = [
        f"{n} {_NOUNS[kind][0] if n == '1' else _NOUNS[kind][1]}"
        for n, kind in _PAIR.findall(found.group(1))
    ]
    return ", ".join(counts) + (f" ({found.group(2)} s)" if found.group(2) else "")


def failing_tests(output: str) -> list[str]:
    """The ids of the tests pytest reports failed or erred (`path::name`), in order, once each."""
    return list(dict.fromkeys(f"{path}::{name}" for path, name in FAILED_ID.findall(output)))


def failing_lines(output: str) -> list[str]:
    """pytest's short-summary lines of failures, as printed."""
    return [line for line in output.splitlines() if FAILED_ID.match(line)]


def _test_name(name: str) -> bool:
    """A file name test runners collect tests from: test_*, *_test.py, tests.py (unittest's
    and Django's) or test.py."""
    return name.startswith("test_") or name.endswith("_test.py") or name in ("tests.py", "test.py")


def is_test_path(path: str) -> bool:
    """Whether a repository path is a test's: by its name (`_test_name`), or under a tests
    folder (conftest.py and helpers too)."""
    return _test_name(PurePosixPath(path).name) or "tests" in path.split("/")


def is_test_file(path: str) -> bool:
    """Whether the test runner collects tests from the file: a Python file named as tests are
    (not conftest.py, which holds fixtures, nor a helper beside the tests)."""
    return path.endswith(".py") and _test_name(PurePosixPath(path).name)
