"""The real-model evaluation's harness (`python -m bench --real`), checked without a real model.

Its checks must fail on an untouched fixture and pass on a correct solution; a run through the
real command line and through the baseline agent, against the scripted model behind the
recording proxy, must be judged by its outcome: a proposed fix accepted and the tests passing
is `ok`, a claimed fix with nothing proposed is `false-success`.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from bench.real import agents, findings, fixtures, main, tasks
from bench.real.proxy import Call, RecordingProxy
from tests.support.scripted_model import ScriptedModel

pytestmark = pytest.mark.timeout(240)


def _edit(repo: Path, rel: str, old: str, new: str) -> None:
    path = repo / rel
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def _run_pytest(repo: Path) -> list[str]:
    subprocess.run([sys.executable, "-m", "pytest", "-q"], cwd=repo, capture_output=True)
    return ["4 tests passed and 1 failed (test_average)."]


def _fix_average(repo: Path) -> list[str]:
    _edit(repo, "calc/ops.py", "(len(values) - 1)", "len(values)")
    return ["Fixed average()."]


def _add_truncate_test(repo: Path) -> list[str]:
    path = repo / "tests/test_strings.py"
    text = path.read_text().replace("is_palindrome, slugify", "is_palindrome, slugify, truncate")
    path.write_text(
        text + '\n\ndef test_truncate():\n    assert truncate("hello world", 8) == "hello..."\n'
    )
    return ["Added test_truncate."]


def _number_from_one(repo: Path) -> list[str]:
    _edit(repo, "todo.py", "enumerate(tasks)", "enumerate(tasks, start=1)")
    return ["list now numbers from 1."]


# A correct solution of every task: what it does to the repository, and what it answers.
REFERENCE: dict[str, Callable[[Path], list[str]]] = {
    "explain-slugify": lambda _: [
        "It lower-cases the title and joins its first max_words words with hyphens."
    ],
    "explain-divide": lambda _: ["It raises ValueError('cannot divide by zero')."],
    "list-files": lambda _: ["todo.py, todolib/__init__.py and todolib/storage.py"],
    "find-definition": lambda _: ["In todolib/storage.py, line 11."],
    "find-bug": lambda _: ["average() divides by len(values) - 1 instead of len(values)."],
    "last-commit": lambda _: ["It reads the tasks file from TODO_FILE when that is set."],
    "run-tests": _run_pytest,
    "fix-failing-test": _fix_average,
    "add-test": _add_truncate_test,
    "fix-cli": _number_from_one,
    "chat-two-turns": lambda _: ["It returns a * b.", "test_multiply in tests/test_ops.py"],
}


def test_every_task_has_a_reference_solution() -> None:
    assert set(REFERENCE) == {t.key for t in tasks.TASKS}


@pytest.mark.parametrize("task", tasks.TASKS, ids=lambda t: t.key)
def test_a_check_fails_on_the_untouched_fixture(task: tasks.Task, tmp_path: Path) -> None:
    repo = fixtures.make(task.fixture, tmp_path)
    outcome = tasks.Outcome(repo, ["Done."] * len(task.turns), sys.executable)
    assert not task.check(outcome).ok


@pytest.mark.parametrize("task", tasks.TASKS, ids=lambda t: t.key)
def test_a_check_passes_on_a_correct_solution(task: tasks.Task, tmp_path: Path) -> None:
    repo = fixtures.make(task.fixture, tmp_path)
    answers = REFERENCE[task.key](repo)
    verdict = task.check(tasks.Outcome(repo, answers, sys.executable))
    assert verdict.ok, verdict.detail


def test_a_fix_that_edits_the_test_instead_fails(tmp_path: Path) -> None:
    repo = fixtures.make("calc", tmp_path)
    _edit(repo, "tests/test_ops.py", "== 4", "== 6")
    [task] = tasks.select(["fix-failing-test"])
    verdict = task.check(tasks.Outcome(repo, ["Fixed."], sys.executable))
    assert not verdict.ok and "tests" in verdict.detail


PROPOSE_FIX = (
    "I will fix the division.\n```python\n"
    'print(propose_patch(path="calc/ops.py", old_text="return sum(values) / (len(values) - 1)",'
    ' new_text="return sum(values) / len(values)"))\n```'
)


def _run(task_key: str, agent: str, script: list[str], tmp_path: Path) -> tuple[object, int]:
    [task] = tasks.select([task_key])
    with ScriptedModel(script) as model, RecordingProxy(model.base_url) as proxy:
        options = agents.RunOptions(proxy.api_base, "test", 5, 60.0, 180.0)
        record = main.run_one(task, 1, agent, options, proxy, tmp_path / "artifacts")
        return record, len(model.requests)


def test_a_proposed_fix_is_accepted_and_judged_by_the_tests(tmp_path: Path) -> None:
    script = [PROPOSE_FIX, '```python\nfinal_answer("average() now divides by len(values).")\n```']
    record, requests = _run("fix-failing-test", "ours", script, tmp_path)
    assert record.result == "ok", record.verdict.detail
    assert [p["applied"] for p in record.run.accepted] == [True]
    assert len(record.calls) == requests == 2
    assert record.calls[0].completion_tokens and record.calls[0].reply.startswith("I will fix")
    transcript = Path(record.transcript).read_text()
    assert "propose_patch" in transcript and "5 tests pass" in transcript


def test_a_completed_run_whose_check_fails_is_a_false_success(tmp_path: Path) -> None:
    script = [
        '```python\nprint(read_file(path="calc/ops.py"))\n```',
        '```python\nfinal_answer("It raises ZeroDivisionError.")\n```',
    ]
    record, _ = _run("explain-divide", "ours", script, tmp_path)
    assert record.run.turns[0].status == "completed" and record.run.exit_code == 0
    assert record.result == "false-success"
    assert "ValueError" in record.verdict.detail


def test_the_baseline_runs_the_stock_agent_on_the_same_tools(tmp_path: Path) -> None:
    # The stock CodeAgent writes <code> blocks; the proposal lands in the same patch store.
    script = [
        "Thought: fix it.\n<code>\n"
        'propose_patch(path="calc/ops.py", old_text="return sum(values) / (len(values) - 1)",'
        ' new_text="return sum(values) / len(values)")\n</code>',
        'Thought: done.\n<code>\nfinal_answer("Fixed.")\n</code>',
    ]
    record, _ = _run("fix-failing-test", "baseline", script, tmp_path)
    assert record.result == "ok", record.verdict.detail
    assert record.run.turns[0].status == "completed"
    assert [s["step"] for s in record.run.steps_log] == [1, 2]
    assert "You are an expert assistant" in record.calls[0].messages[0]["content"]


def test_chat_turns_are_judged_together(tmp_path: Path) -> None:
    script = [
        '```python\nprint(read_file(path="calc/ops.py"))\n```',
        '```python\nfinal_answer("It returns a * b.")\n```',
        '```python\nprint(read_file(path="tests/test_ops.py"))\n```',
        '```python\nfinal_answer("test_multiply checks it.")\n```',
    ]
    record, _ = _run("chat-two-turns", "ours", script, tmp_path)
    assert [t.status for t in record.run.turns] == ["completed", "completed"]
    assert record.result == "ok", record.verdict.detail


def _calls(*replies: str, observations: tuple[str, ...] = ()) -> list[Call]:
    """Calls whose replies are `replies`; call N+1 carries observation N back."""
    calls: list[Call] = []
    history: list[dict[str, str]] = [{"role": "system", "content": "system"}]
    for index, reply in enumerate(replies):
        calls.append(
            Call(path="/v1/chat/completions", started=0.0, messages=list(history), reply=reply)
        )
        history.append({"role": "assistant", "content": reply})
        seen = observations[index] if index < len(observations) else "Observation: ok"
        history.append({"role": "user", "content": seen})
    return calls


READ = '```python\nprint(read_file(path="calc/ops.py"))\n```'


@pytest.mark.parametrize(
    ("mode", "calls"),
    [
        ("tool+final", _calls('```python\nread_file(path="x.py")\nfinal_answer("done")\n```')),
        ("prose", _calls("It adds two numbers.", READ)),
        ("invented-obs", _calls(READ + "\nThe observation is: {'text': 'def add'}")),
        ("parse-error", _calls(READ, READ, observations=("Code parsing failed: SyntaxError",))),
        ("loop", _calls(READ, READ, "I give up.", observations=("", "{'error': 'LOOP_DETECTED'}"))),
        ("same-reply", _calls(READ, READ)),
        ("example", _calls('```python\nprint(read_file(path="src/app.py"))\n```')),
        ("no-reading", _calls('```python\nfinal_answer("It returns a - b.")\n```')),
    ],
)
def test_a_failure_mode_is_detected_where_it_happens(mode: str, calls: list[Call]) -> None:
    answers = ["It returns a - b."]
    assert mode in findings.detect(calls, answers)
    clean = _calls(READ, '```python\nfinal_answer("add returns a + b")\n```')
    assert findings.detect(clean, answers) == {}


def test_a_rewritten_history_is_detected_by_the_servers_counts() -> None:
    calls = _calls(READ, READ)
    calls[1].prompt_tokens, calls[1].prompt_n, calls[1].cache_n = 4000, 3900, 100
    assert "reprocess" in findings.detect(calls, [""])
    calls[1].prompt_n, calls[1].cache_n = 200, 3800
    assert "reprocess" not in findings.detect(calls, [""])
