"""The code a task names, gathered before the first step (agent/context.py), on a real repository."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from smol_instruments.agent.context import BUDGET_CHARS, gather
from smol_instruments.base.config import Settings
from smol_instruments.tools.base import ToolContext
from smol_instruments.tools.repo import list_repo_files

OPS = '''"""Arithmetic helpers."""


def multiply(a, b):
    return a * b


def average(values):
    return sum(values) / (len(values) - 1)
'''

TESTS = """from calc.ops import average, multiply


def test_multiply():
    assert multiply(4, 3) == 12


def test_average():
    assert average([2, 4, 6]) == 4
"""


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "calc-repo"
    (root / "calc").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "calc" / "ops.py").write_text(OPS)
    (root / "tests" / "test_ops.py").write_text(TESTS)
    (root / ".env").write_text("API_TOKEN=sk-live-do-not-leak\n")
    (root / "notes.txt").write_text("multiply\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def context_for(repo: Path, task: str, budget: int = BUDGET_CHARS) -> str:
    ctx = ToolContext.create(repo, Settings(_env_file=None))
    return gather(ctx, task, list_repo_files(ctx), budget=budget).text


def test_a_named_file_comes_whole_with_the_tests_that_use_the_name(repo: Path) -> None:
    text = context_for(repo, "What does the function multiply in calc/ops.py return?")
    assert "calc/ops.py (the whole file)" in text
    assert OPS.strip() in text
    # the line that calls it, and the test it is in: "which test checks it?" needs the name
    assert "tests/test_ops.py:5 (in test_multiply): assert multiply(4, 3) == 12" in text


def test_a_named_test_brings_the_function_it_calls(repo: Path) -> None:
    text = context_for(repo, "The test test_average fails. Fix the bug in the code.")
    assert "tests/test_ops.py, lines 8-9: `test_average`" in text
    assert "calc/ops.py, lines 8-9: `average`" in text
    assert "return sum(values) / (len(values) - 1)" in text


def test_a_task_that_names_nothing_gets_nothing(repo: Path) -> None:
    assert context_for(repo, "Which Python files does this repository have?") == ""
    assert context_for(repo, "What did the last commit change?") == ""


def test_secrets_and_paths_outside_are_never_read(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.py"
    outside.write_text("def leaked():\n    return 'outside-secret'\n")
    text = context_for(repo, f"Explain .env and {outside} and the function leaked")
    assert "sk-live-do-not-leak" not in text
    assert "outside-secret" not in text


def test_what_is_shown_stays_within_the_budget(repo: Path) -> None:
    body = "".join(f"    total += {i}\n" for i in range(400))
    (repo / "calc" / "big.py").write_text(f"def big():\n    total = 0\n{body}    return total\n")
    text = context_for(repo, "What does big() return?", budget=1500)
    assert "`big` (cut: it ends at line 403)" in text
    assert len(text) < 1500 + 400  # titles and fences on top of the code's budget
