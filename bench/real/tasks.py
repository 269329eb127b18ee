"""The evaluation's tasks: what a user really asks, each with a check of the outcome and a
right solution.

A `Task` is the turns a user types, the fixture repository they run in, its `kind` (what sort
of request: one of `KINDS`), its `split` (`dev`: read its transcripts and tune on it;
`heldout`: run only to report figures), the check that judges a run (bench/real/checks.py) and
a `reference`: a right solution (it edits the repository as a right change would and returns
the answers a right run gives), with which the tests prove every check passes on a right
solution and fails on the untouched fixture.

The dev tasks are here (the first eleven, on fixtures written for them) and in
bench/real/dev.py (on vendored open-source projects); the held-out tasks live only in
bench/real/heldout/, which this module imports when it is there.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from .checks import (
    Check,
    Outcome,
    Verdict,
    all_of,
    answer_says,
    new_test_for,
    run_python,
    tests_pass,
    tests_were_run,
    untouched,
)
from .fixtures import Variant

Split = Literal["dev", "heldout"]
SPLITS: tuple[Split, ...] = ("dev", "heldout")

# What sort of request a task is; every kind has tasks in both splits.
KINDS: dict[str, str] = {
    "behaviour": "the exact value for an input, or the input that throws",
    "explain": "what a piece of code does",
    "locate": "where something is defined, which files there are",
    "callers": "who calls a function: the impact of changing it",
    "missing": "a name that does not exist",
    "history": "what a commit changed",
    "find-bug": "which code is wrong, asked as a question",
    "run-tests": "run the tests and say what fails",
    "fix": "a bug told by a failing test or by its symptom",
    "feature": "a new argument or option with a default",
    "rename": "a rename across the module and its tests",
    "nested": "an edit inside a method or a nested function",
    "docs": "an edit of the README, TOML, YAML or changelog",
    "add-test": "a new test for existing code",
    "decline": "a destructive or out-of-scope request: decline, delete nothing",
    "chat": "two turns, the second depends on the first",
}

Reference = Callable[[Path], list[str]]


@dataclass(frozen=True)
class Task:
    key: str
    fixture: str
    kind: str
    turns: tuple[str, ...]
    check: Check
    what: str  # the check, in words, for the report
    reference: Reference  # a right solution: edits the repository, returns the answers
    split: Split = "dev"

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"task {self.key}: kind {self.kind!r} is not one of {list(KINDS)}")


def answers(*texts: str) -> Reference:
    """A reference that changes nothing and gives these answers."""
    return lambda _: list(texts)


def after_tests(answer: str) -> Reference:
    """A reference that runs the project's tests (as a run-tests task must) and gives `answer`."""

    def solve(repo: Path) -> list[str]:
        subprocess.run([sys.executable, "-m", "pytest", "-q"], cwd=repo, capture_output=True)
        return [answer]

    return solve


def edit(repo: Path, rel: str, old: str, new: str) -> None:
    """Replace the one copy of `old` in the file (references use it to write a right change)."""
    path = repo / rel
    text = path.read_text()
    if text.count(old) != 1:
        raise ValueError(f"{rel} holds {text.count(old)} copies of {old!r}")
    path.write_text(text.replace(old, new))


def undo(variant: Variant, note: str) -> Reference:
    """The right solution of a variant's bug: every edit of its commits undone, last first."""

    def solve(repo: Path) -> list[str]:
        for _, edits in reversed(variant.commits):
            for rel, right, wrong in reversed(edits):
                edit(repo, rel, wrong, right)
        return [note]

    return solve


def todo_lists_from_one(outcome: Outcome) -> Verdict:
    """`python todo.py list` numbers from 1, and `done 1` still marks the first task."""
    store = outcome.repo.parent / "todo-check.json"
    store.write_text(
        json.dumps([{"text": "buy milk", "done": False}, {"text": "call mom", "done": True}])
    )
    env = {"TODO_FILE": str(store), "HOME": str(outcome.repo.parent)}
    code, out = run_python(outcome.python, outcome.repo, "todo.py", "list", env=env)
    want = ["1. [ ] buy milk", "2. [x] call mom"]
    if code != 0 or out.strip().splitlines() != want:
        return Verdict(False, f"`todo.py list` printed {out.strip()[:200]!r}")
    run_python(outcome.python, outcome.repo, "todo.py", "done", "1", env=env)
    code, out = run_python(outcome.python, outcome.repo, "todo.py", "list", env=env)
    if code != 0 or not out.strip().startswith("1. [x] buy milk"):
        return Verdict(False, f"after `done 1`, list printed {out.strip()[:200]!r}")
    return Verdict(True, "list numbers from 1; done 1 marks the first task")


# --- the first eleven tasks, on fixtures written for them -----------------------------------

_OFF_BY_ONE = r"len\(values\)\s*-\s*1|-\s*1\b|minus (one|1)|off[- ]by[- ]one|one (too )?(few|less)"


def _run_pytest(repo: Path) -> list[str]:
    import subprocess
    import sys

    subprocess.run([sys.executable, "-m", "pytest", "-q"], cwd=repo, capture_output=True)
    return ["4 tests passed and 1 failed (test_average)."]


def _fix_average(repo: Path) -> list[str]:
    edit(repo, "calc/ops.py", "(len(values) - 1)", "len(values)")
    return ["Fixed average()."]


def _add_truncate_test(repo: Path) -> list[str]:
    path = repo / "tests/test_strings.py"
    text = path.read_text().replace("is_palindrome, slugify", "is_palindrome, slugify, truncate")
    path.write_text(
        text + '\n\ndef test_truncate():\n    assert truncate("hello world", 8) == "hello..."\n'
    )
    return ["Added test_truncate."]


def _number_from_one(repo: Path) -> list[str]:
    edit(repo, "todo.py", "enumerate(tasks)", "enumerate(tasks, start=1)")
    return ["list now numbers from 1."]


FIRST: tuple[Task, ...] = (
    Task(
        "explain-slugify",
        "textutils",
        "explain",
        ("What does the function slugify in textutils/strings.py do?",),
        answer_says(r"lower", r"hyphen|dash|'-'|\"-\"|`-`", r"\b5\b|five|max_words"),
        "answer: lower-cases, joins words with hyphens, keeps at most 5 (max_words)",
        answers("It lower-cases the title and joins its first max_words words with hyphens."),
    ),
    Task(
        "explain-divide",
        "calc",
        "behaviour",
        ("What happens when divide in calc/ops.py is called with b equal to 0?",),
        answer_says(r"ValueError"),
        "answer names ValueError",
        answers("It raises ValueError('cannot divide by zero')."),
    ),
    Task(
        "list-files",
        "todo",
        "locate",
        ("Which Python files does this repository have?",),
        answer_says(r"todo\.py", r"todolib/storage\.py", r"todolib/__init__\.py"),
        "answer lists todo.py, todolib/storage.py, todolib/__init__.py",
        answers("todo.py, todolib/__init__.py and todolib/storage.py"),
    ),
    Task(
        "find-definition",
        "todo",
        "locate",
        ("Where is the function load_tasks defined?",),
        answer_says(r"todolib/storage\.py"),
        "answer names todolib/storage.py",
        answers("In todolib/storage.py, line 11."),
    ),
    Task(
        "find-bug",
        "calc",
        "find-bug",
        ("One of the tests fails. Which function has the bug, and what is wrong with it?",),
        answer_says(r"\baverage\b", _OFF_BY_ONE),
        "answer names average() and the len(values) - 1",
        answers("average() divides by len(values) - 1 instead of len(values)."),
    ),
    Task(
        "last-commit",
        "todo",
        "history",
        ("What did the last commit change?",),
        answer_says(r"TODO_FILE"),
        "answer names TODO_FILE (the last commit's subject)",
        answers("It reads the tasks file from TODO_FILE when that is set."),
    ),
    Task(
        "run-tests",
        "calc",
        "run-tests",
        ("Run the tests and tell me how many pass and how many fail.",),
        all_of(
            tests_were_run,
            answer_says(
                r"\b4\b[^.\n]{0,40}pass|pass\w*[^.\n]{0,20}\b4\b",
                r"\b1\b[^.\n]{0,40}fail|fail\w*[^.\n]{0,20}\b1\b",
            ),
        ),
        "pytest ran; the model's answer (not a note the agent adds): 4 passed, 1 failed",
        _run_pytest,
    ),
    Task(
        "fix-failing-test",
        "calc",
        "fix",
        ("The test test_average fails. Fix the bug in the code so that the tests pass.",),
        all_of(untouched("tests"), tests_pass(5)),
        "after accepting the patch: 5 tests pass, tests/ unchanged",
        _fix_average,
    ),
    Task(
        "add-test",
        "textutils",
        "add-test",
        ("Add a test for the function truncate to tests/test_strings.py.",),
        all_of(untouched("textutils"), new_test_for("textutils", "truncate"), tests_pass(4)),
        "after accepting: a new test calls truncate(), 4+ tests pass, textutils/ unchanged",
        _add_truncate_test,
    ),
    Task(
        "fix-cli",
        "todo",
        "fix",
        (
            "`python todo.py list` numbers the tasks from 0, but `python todo.py done` counts "
            "from 1. Make list number them from 1.",
        ),
        todo_lists_from_one,
        "after accepting: `todo.py list` prints 1. and 2.; `done 1` marks the first",
        _number_from_one,
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
        answers("It returns a * b.", "test_multiply in tests/test_ops.py"),
    ),
)


def _all_tasks() -> tuple[Task, ...]:
    from . import (
        dev,
        dev_chat,
        dev_fresh,
        dev_impact,
        dev_options,
        dev_parse,
        dev_prose,
        dev_readme,
        dev_semver,
        dev_values,
    )

    try:
        from .heldout import TASKS as held_out
    except ImportError:  # a checkout without the held-out split
        held_out = ()
    tasks = (
        *FIRST,
        *dev.TASKS,
        *dev_semver.TASKS,
        *dev_fresh.TASKS,
        *dev_fresh.LATER,
        *dev_fresh.THIRD,
        *dev_prose.FOURTH,
        *dev_options.FIFTH,
        *dev_impact.SIXTH,
        *dev_readme.SEVENTH,
        *dev_values.EIGHTH,
        *dev_chat.NINTH,
        *dev_parse.TENTH,
        *held_out,
    )
    keys = [t.key for t in tasks]
    if len(set(keys)) != len(keys):
        raise ValueError(f"two tasks share a key: {sorted(k for k in keys if keys.count(k) > 1)}")
    return tasks


TASKS: tuple[Task, ...] = _all_tasks()


def select(keys: list[str] | None, split: str = "all") -> list[Task]:
    """The tasks of `split` (dev, heldout or all) whose key contains one of `keys` (every task
    of the split when none are given)."""
    pool = [t for t in TASKS if split == "all" or t.split == split]
    if not keys:
        return pool
    chosen = [t for t in pool if any(k in t.key for k in keys)]
    if not chosen:
        names = ", ".join(t.key for t in pool if t.split == "dev")
        raise SystemExit(
            f"python -m bench --real: no task of split {split} matches {keys}; dev tasks: {names}"
        )
    return chosen
