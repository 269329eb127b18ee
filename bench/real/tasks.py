"""The evaluation's tasks: what a user really asks, each with a check of the outcome.

A check looks at what happened, never at the model's claims alone: the repository after the
run (with the proposed patches accepted, as a user would), the project's own tests run again
by the harness, the command-line script run by the harness, pytest's cache left by a test run,
and, for questions, specific identifiers or facts the answer must contain.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from smol_instruments.base import pyast
from smol_instruments.base.testruns import failing_lines, test_summary

TaskKind = Literal["question", "command", "change", "chat"]


@dataclass
class Verdict:
    ok: bool
    detail: str


@dataclass
class Outcome:
    """What a run left behind, as the checks see it."""

    repo: Path
    answers: list[str]
    python: str  # the interpreter that runs the fixture's tests and script
    notes: list[str] = field(default_factory=list)

    @property
    def answer(self) -> str:
        return self.answers[-1] if self.answers else ""


Check = Callable[[Outcome], Verdict]


@dataclass(frozen=True)
class Task:
    key: str
    fixture: str
    kind: TaskKind
    turns: tuple[str, ...]
    check: Check
    what: str  # the check, in words, for the report


# --- checks -------------------------------------------------------------------------------


def _find(pattern: str, text: str) -> bool:
    return re.search(pattern, text, re.IGNORECASE | re.DOTALL) is not None


def answer_says(*patterns: str, turn: int = -1) -> Check:
    """The answer of `turn` matches every regular expression (case-insensitive)."""

    def check(outcome: Outcome) -> Verdict:
        text = outcome.answers[turn] if outcome.answers else ""
        missing = [p for p in patterns if not _find(p, text)]
        if missing:
            return Verdict(False, f"answer lacks {', '.join(repr(m) for m in missing)}")
        return Verdict(True, "answer names " + ", ".join(repr(p) for p in patterns))

    return check


def all_of(*checks: Check) -> Check:
    def check(outcome: Outcome) -> Verdict:
        details = []
        for one in checks:
            verdict = one(outcome)
            if not verdict.ok:
                return verdict
            details.append(verdict.detail)
        return Verdict(True, "; ".join(details))

    return check


def _run(outcome: Outcome, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    try:
        done = subprocess.run(
            [outcome.python, *args],
            cwd=outcome.repo,
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, **(env or {})},
        )
    except subprocess.TimeoutExpired:
        return 124, "timed out"
    return done.returncode, done.stdout + done.stderr


_COUNTS = re.compile(r"(\d+) (passed|failed|error)")


def pytest_counts(outcome: Outcome) -> tuple[int, dict[str, int], str]:
    """Run the fixture's tests (leaving no cache behind): exit status, counts, output tail."""
    code, out = _run(outcome, "-m", "pytest", "-q", "-p", "no:cacheprovider")
    counts = {kind: int(n) for n, kind in _COUNTS.findall(out)}
    # what failed and pytest's summary, not a plugin's warnings printed after them
    tail = " | ".join([*failing_lines(out)[:3], test_summary(out, "")])
    return code, counts, tail


def tests_pass(minimum: int) -> Check:
    def check(outcome: Outcome) -> Verdict:
        code, counts, tail = pytest_counts(outcome)
        passed = counts.get("passed", 0)
        if code != 0 or passed < minimum:
            return Verdict(False, f"tests after the run: {tail}")
        return Verdict(True, f"{passed} tests pass")

    return check


def untouched(*paths: str) -> Check:
    """The files are as committed: a fix did not edit the tests to make them pass."""

    def check(outcome: Outcome) -> Verdict:
        done = subprocess.run(
            ["git", "status", "--porcelain", "--", *paths],
            cwd=outcome.repo,
            capture_output=True,
            text=True,
        )
        if done.stdout.strip():
            return Verdict(False, f"changed what must stay: {done.stdout.strip()}")
        return Verdict(True, f"{', '.join(paths)} unchanged")

    return check


def tests_were_run(outcome: Outcome) -> Verdict:
    """pytest ran in the repository during the run: it left its cache (the fixture has none)."""
    if (outcome.repo / ".pytest_cache").is_dir():
        return Verdict(True, "pytest ran")
    return Verdict(False, "the tests were never run (no .pytest_cache)")


def new_test_for(function: str, test_dir: str = "tests") -> Check:
    """Some test function under `test_dir` calls `function`."""

    def check(outcome: Outcome) -> Verdict:
        for path in sorted((outcome.repo / test_dir).rglob("test_*.py")):
            try:
                tree = pyast.parse(path.read_text())
            except (SyntaxError, UnicodeDecodeError):
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
                    for call in ast.walk(node):
                        if (
                            isinstance(call, ast.Call)
                            and isinstance(call.func, ast.Name)
                            and call.func.id == function
                        ):
                            return Verdict(True, f"{path.name}::{node.name} calls {function}")
        return Verdict(False, f"no test calls {function}()")

    return check


def todo_lists_from_one(outcome: Outcome) -> Verdict:
    """`python todo.py list` numbers from 1, and `done 1` still marks the first task."""
    store = outcome.repo.parent / "todo-check.json"
    store.write_text(
        json.dumps([{"text": "buy milk", "done": False}, {"text": "call mom", "done": True}])
    )
    env = {"TODO_FILE": str(store), "HOME": str(outcome.repo.parent)}
    code, out = _run(outcome, "todo.py", "list", env=env)
    want = ["1. [ ] buy milk", "2. [x] call mom"]
    if code != 0 or out.strip().splitlines() != want:
        return Verdict(False, f"`todo.py list` printed {out.strip()[:200]!r}")
    _run(outcome, "todo.py", "done", "1", env=env)
    code, out = _run(outcome, "todo.py", "list", env=env)
    if code != 0 or not out.strip().startswith("1. [x] buy milk"):
        return Verdict(False, f"after `done 1`, list printed {out.strip()[:200]!r}")
    return Verdict(True, "list numbers from 1; done 1 marks the first task")


# --- the tasks ------------------------------------------------------------------------------

_OFF_BY_ONE = r"len\(values\)\s*-\s*1|-\s*1\b|minus (one|1)|off[- ]by[- ]one|one (too )?(few|less)"

TASKS: tuple[Task, ...] = (
    Task(
        "explain-slugify",
        "textutils",
        "question",
        ("What does the function slugify in textutils/strings.py do?",),
        answer_says(r"lower", r"hyphen|dash|'-'|\"-\"|`-`", r"\b5\b|five|max_words"),
        "answer: lower-cases, joins words with hyphens, keeps at most 5 (max_words)",
    ),
    Task(
        "explain-divide",
        "calc",
        "question",
        ("What happens when divide in calc/ops.py is called with b equal to 0?",),
        answer_says(r"ValueError"),
        "answer names ValueError",
    ),
    Task(
        "list-files",
        "todo",
        "question",
        ("Which Python files does this repository have?",),
        answer_says(r"todo\.py", r"todolib/storage\.py", r"todolib/__init__\.py"),
        "answer lists todo.py, todolib/storage.py, todolib/__init__.py",
    ),
    Task(
        "find-definition",
        "todo",
        "question",
        ("Where is the function load_tasks defined?",),
        answer_says(r"todolib/storage\.py"),
        "answer names todolib/storage.py",
    ),
    Task(
        "find-bug",
        "calc",
        "question",
        ("One of the tests fails. Which function has the bug, and what is wrong with it?",),
        answer_says(r"\baverage\b", _OFF_BY_ONE),
        "answer names average() and the len(values) - 1",
    ),
    Task(
        "last-commit",
        "todo",
        "question",
        ("What did the last commit change?",),
        answer_says(r"TODO_FILE"),
        "answer names TODO_FILE (the last commit's subject)",
    ),
    Task(
        "run-tests",
        "calc",
        "command",
        ("Run the tests and tell me how many pass and how many fail.",),
        all_of(
            tests_were_run,
            answer_says(
                r"\b4\b[^.\n]{0,40}pass|pass\w*[^.\n]{0,20}\b4\b",
                r"\b1\b[^.\n]{0,40}fail|fail\w*[^.\n]{0,20}\b1\b",
            ),
        ),
        "pytest ran; answer: 4 passed, 1 failed",
    ),
    Task(
        "fix-failing-test",
        "calc",
        "change",
        ("The test test_average fails. Fix the bug in the code so that the tests pass.",),
        all_of(untouched("tests"), tests_pass(5)),
        "after accepting the patch: 5 tests pass, tests/ unchanged",
    ),
    Task(
        "add-test",
        "textutils",
        "change",
        ("Add a test for the function truncate to tests/test_strings.py.",),
        all_of(untouched("textutils"), new_test_for("truncate"), tests_pass(4)),
        "after accepting: a test calls truncate(), 4+ tests pass, textutils/ unchanged",
    ),
    Task(
        "fix-cli",
        "todo",
        "change",
        (
            "`python todo.py list` numbers the tasks from 0, but `python todo.py done` counts "
            "from 1. Make list number them from 1.",
        ),
        todo_lists_from_one,
        "after accepting: `todo.py list` prints 1. and 2.; `done 1` marks the first",
    ),
    Task(
        "chat-two-turns",
        "calc",
        "chat",
        (
            "What does the function multiply in calc/ops.py return?",
            "Which test checks it?",
        ),
        all_of(answer_says(r"\*|product|multipl", turn=0), answer_says(r"test_multiply")),
        "turn 1: the product; turn 2 (needs memory): test_multiply",
    ),
)


def select(keys: list[str] | None) -> list[Task]:
    """The tasks whose key contains one of `keys` (all when none are given)."""
    if not keys:
        return list(TASKS)
    chosen = [t for t in TASKS if any(k in t.key for k in keys)]
    if not chosen:
        names = ", ".join(t.key for t in TASKS)
        raise SystemExit(f"python -m bench --real: no task matches {keys}; tasks: {names}")
    return chosen
