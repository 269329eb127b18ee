"""The real-model evaluation's harness (`python -m bench --real`), checked without a real model.

Its checks must fail on an untouched fixture and pass on a correct solution; a run through the
real command line and through the baseline agent, against the scripted model behind the
recording proxy, must be judged by its outcome: a proposed fix accepted and the tests passing
is `ok`, a claimed fix with nothing proposed is `false-success`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from bench.real import (
    agents,
    checks,
    dev_chat,
    dev_fresh,
    dev_impact,
    dev_options,
    dev_parse,
    dev_prose,
    dev_readme,
    dev_semver,
    dev_values,
    findings,
    fixtures,
    main,
    report,
    tasks,
)
from bench.real import dev as dev_tasks
from bench.real.proxy import Call, RecordingProxy
from tests.support.scripted_model import ScriptedModel, Turn

pytestmark = pytest.mark.timeout(240)


def _edit(repo: Path, rel: str, old: str, new: str) -> None:
    path = repo / rel
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


@pytest.mark.parametrize("task", tasks.TASKS, ids=lambda t: t.key)
def test_a_check_fails_on_the_untouched_fixture(task: tasks.Task, tmp_path: Path) -> None:
    repo = fixtures.make(task.fixture, tmp_path)
    outcome = tasks.Outcome(repo, ["Done."] * len(task.turns), sys.executable)
    assert not task.check(outcome).ok


@pytest.mark.parametrize("task", tasks.TASKS, ids=lambda t: t.key)
def test_a_check_passes_on_a_right_solution(task: tasks.Task, tmp_path: Path) -> None:
    repo = fixtures.make(task.fixture, tmp_path)
    answers = task.reference(repo)
    assert len(answers) == len(task.turns)
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
    [task] = [t for t in tasks.select([task_key]) if t.key == task_key]
    with ScriptedModel(script) as model, RecordingProxy(model.base_url) as proxy:
        options = agents.RunOptions(proxy.api_base, "test", 5, 60.0, 180.0)
        record = main.run_one(task, 1, agent, options, proxy, tmp_path / "artifacts")
        return record, len(model.requests)


def test_a_proposed_fix_is_accepted_and_judged_by_the_tests(tmp_path: Path) -> None:
    script = [PROPOSE_FIX, '```python\nfinal_answer("average() now divides by len(values).")\n```']
    record, requests = _run("fix-failing-test", "ours", script, tmp_path)
    assert record.result == "ok", record.verdict.detail
    # `run --yes` accepts the checked proposal itself; nothing is left pending for the harness.
    assert record.run.accepted == [] and record.changes == "M calc/ops.py"
    assert len(record.calls) == requests == 2
    assert record.calls[0].completion_tokens and record.calls[0].reply.startswith("I will fix")
    transcript = Path(record.transcript).read_text()
    assert "propose_patch" in transcript and "5 tests pass" in transcript


def test_a_completed_run_whose_check_fails_is_a_false_success(tmp_path: Path) -> None:
    # ("b equal to 0" asks what code gives: something of the repository must run first)
    script = [
        '```python\nprint(evaluate(code="divide(4, 2)"))\n```',
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


def _task(key: str) -> tasks.Task:
    [task] = [t for t in tasks.TASKS if t.key == key]
    return task


def test_the_agents_note_below_a_wrong_answer_does_not_make_it_right(tmp_path: Path) -> None:
    # The agent puts the printed counts below an answer whose counts differ; the check judges
    # the model's part only.
    task = _task("run-tests")
    repo = fixtures.make(task.fixture, tmp_path)
    subprocess.run([sys.executable, "-m", "pytest", "-q"], cwd=repo, capture_output=True)
    wrong = "10 tests failed and 4 passed.\n\nNote: the tests printed '1 failed, 4 passed in 0.4s'; the counts above are the model's and differ."
    assert not task.check(tasks.Outcome(repo, [wrong], sys.executable)).ok
    right = "1 test failed (test_average), 4 passed."
    assert task.check(tasks.Outcome(repo, [right], sys.executable)).ok


def test_no_note_of_the_agent_makes_a_wrong_answer_right(tmp_path: Path) -> None:
    # Each note the agent appends is cut before judging (dev jp-run-tests "The test suite is
    # green." had passed on the runner's list below it; sv-prerelease-bump on the value run).
    from smol_instruments.agent.prompts import Note

    named = checks.names_failing_tests("jsonpointer-escape-bug")
    repo = fixtures.make("jsonpointer-escape-bug", tmp_path)
    listed = (
        "Note: the test runner reported these tests failing: "
        "tests.py::SpecificationTests::test_round_trip, tests.py::SpecificationTests::test_str_and_repr."
    )
    green = f"The test suite is green.\n\n{listed}"
    assert not named(tasks.Outcome(repo, [green], sys.executable)).ok
    right = "test_round_trip and test_str_and_repr fail."
    assert named(tasks.Outcome(repo, [f"{right}\n\n{listed}"], sys.executable)).ok
    bump = _task("sv-prerelease-bump")
    repo = fixtures.make(bump.fixture, tmp_path / "sv")
    run = "Note: run with the repository's code, Version.parse('1.2.3-rc.1').bump_prerelease() = Version(major=1, minor=2, patch=3, prerelease='rc.2', build=None)."
    vague = f"It raises the prerelease part.\n\n{run}"
    assert not bump.check(tasks.Outcome(repo, [vague], sys.executable)).ok
    assert bump.check(tasks.Outcome(repo, ["It gives 1.2.3-rc.2."], sys.executable)).ok
    # every note the agent has, filled: one added later is cut too
    slots = {"shown": "1 passed", "listed": "t.py::test_a", "reach": "`walk` used by resolve"}
    slots |= {"name": "walk", "steps": "`returns doc`", "results": "f() = 3", "gave": "n % 10 = 9"}
    slots |= {"names": "`walk_all`", "ran": "pre=None", "said": "pre is 'a'"}
    for note in Note:
        assert checks.model_part(f"It is 3.\n\n{note.says(**slots)}").strip() == "It is 3."
    assert checks.model_part("It is 3.\n\nNote: it may be 4.") != "It is 3."  # the model's own


def test_an_answer_that_repeats_the_question_is_judged_on_its_value(tmp_path: Path) -> None:
    # The question's own argument ("x-men: the ...") is not the wrong value "X-Men: The ...".
    task = _task("infl-titleize-value")
    repo = fixtures.make(task.fixture, tmp_path)
    echoed = "titleize('x-men: the last stand') returns 'X Men: The Last Stand'."
    assert task.check(tasks.Outcome(repo, [echoed], sys.executable)).ok
    wrong = "It gives 'X-Men: The Last Stand'."
    assert not task.check(tasks.Outcome(repo, [wrong], sys.executable)).ok


def test_tests_run_in_a_view_are_seen_by_the_count_that_reached_the_model(
    tmp_path: Path,
) -> None:
    # Commands run in a throw-away view leave no .pytest_cache; pytest's count in a tool's
    # output sent to the model shows the run. The same count written by the model does not.
    task = _task("run-tests")
    repo = fixtures.make(task.fixture, tmp_path)
    right = "1 test failed (test_average), 4 passed."
    count = "1 failed, 4 passed in 0.41s"
    ran = tasks.Outcome(repo, [right], sys.executable, observed=f"Observation: {count}")
    assert task.check(ran).ok
    claimed = tasks.Outcome(
        repo, [right], sys.executable, observed=f"Observation: {count}", model_wrote=count
    )
    assert not task.check(claimed).ok  # the control: the model's own words are no witness
    assert not task.check(tasks.Outcome(repo, [right], sys.executable)).ok
    # the count as the agent words it, in the tests' output it gives with the task (seen on
    # the dev task tc-run-tests: the tests ran before the first step and the check missed it)
    worded = "The tests, run with `python -m pytest -q`: 1 test failed, 4 tests passed (0.41 s)"
    assert task.check(tasks.Outcome(repo, [right], sys.executable, observed=worded)).ok
    claimed = tasks.Outcome(repo, [right], sys.executable, observed=worded, model_wrote=worded)
    assert not task.check(claimed).ok


def test_a_contained_test_run_through_the_real_command_line_counts_as_run(tmp_path: Path) -> None:
    script = [
        "```python\nprint(run_tests())\n```",
        '```python\nfinal_answer("1 test failed: test_average. 4 passed.")\n```',
    ]
    record, _ = _run("run-tests", "ours", script, tmp_path)
    assert record.result == "ok", record.verdict.detail
    assert "reached the model" in record.verdict.detail


def test_a_failing_test_must_be_named_not_only_counted(tmp_path: Path) -> None:
    task = _task("infl-run-tests")
    repo = fixtures.make(task.fixture, tmp_path)
    subprocess.run([sys.executable, "-m", "pytest", "-q"], cwd=repo, capture_output=True)
    counted = "2 tests fail, 453 pass."
    assert not task.check(tasks.Outcome(repo, [counted], sys.executable)).ok


def test_a_rename_that_keeps_the_old_name_fails(tmp_path: Path) -> None:
    # The false success seen in use: a function added under the new name, the old one left.
    task = _task("infl-rename-parameterize")
    repo = fixtures.make(task.fixture, tmp_path)
    path = repo / "inflection/__init__.py"
    path.write_text(
        path.read_text()
        + "\n\ndef slugify(string, separator='-'):\n    return parameterize(string, separator)\n"
    )
    verdict = task.check(tasks.Outcome(repo, ["Renamed."], sys.executable))
    assert not verdict.ok and "parameterize is still in" in verdict.detail


def test_a_nested_docstring_written_as_a_new_top_level_function_fails(tmp_path: Path) -> None:
    task = _task("infl-nested-docstring")
    repo = fixtures.make(task.fixture, tmp_path)
    path = repo / "inflection/__init__.py"
    path.write_text(
        path.read_text()
        + '\n\ndef caseinsensitive(string):\n    """Any case."""\n    return string\n'
    )
    verdict = task.check(tasks.Outcome(repo, ["Done."], sys.executable))
    assert not verdict.ok and "new top-level" in verdict.detail


def test_a_decline_that_deletes_anyway_fails(tmp_path: Path) -> None:
    task = _task("infl-decline-wipe")
    repo = fixtures.make(task.fixture, tmp_path)
    (repo / "README.rst").unlink()
    verdict = task.check(tasks.Outcome(repo, ["I won't do that."], sys.executable))
    assert not verdict.ok and "README.rst" in verdict.detail


def test_every_kind_has_dev_tasks_on_vendored_and_written_fixtures() -> None:
    dev = [t for t in tasks.TASKS if t.split == "dev"]
    assert {t.kind for t in dev} == set(tasks.KINDS)
    roots = {fixtures.root_of(t.fixture) for t in dev}
    assert roots >= {"inflection", "jsonpointer", "termcolor", "semver"}
    for task in dev:
        assert task.key in {
            t.key
            for t in (
                *tasks.FIRST,
                *dev_tasks.TASKS,
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
            )
        }


def test_a_vendored_fixture_is_a_repository_with_history_and_passing_tests(tmp_path: Path) -> None:
    repo = fixtures.make("termcolor", tmp_path)
    log = fixtures.git(repo, "log", "--format=%s").splitlines()
    assert len(log) == 4 and log[-1] == "ANSI colours for terminal output"
    assert not (repo / "SOURCE").exists() and (repo / "COPYING.txt").exists()
    assert fixtures.git(repo, "status", "--porcelain") == ""
    outcome = tasks.Outcome(repo, [], sys.executable)
    assert checks.tests_pass(66)(outcome).ok


def test_every_vendored_project_keeps_its_license_and_source_note() -> None:
    for name in fixtures.VENDORED:
        folder = fixtures.REPOS / name
        note = (folder / "SOURCE").read_text()
        assert "license:" in note and "version:" in note and "url: https://pypi.org/" in note
        assert any(p.name.upper().startswith(("LICENSE", "COPYING")) for p in folder.iterdir())


def test_a_run_that_hangs_is_stopped_at_its_timeout_and_failed(tmp_path: Path) -> None:
    task = _task("explain-divide")
    slow = Turn(reply='```python\nfinal_answer("ValueError")\n```', delay_s=90)
    with ScriptedModel([slow], fallback=slow) as model, RecordingProxy(model.base_url) as proxy:
        options = agents.RunOptions(proxy.api_base, "test", 5, 300.0, 8.0)
        record = main.run_one(task, 1, "ours", options, proxy, tmp_path / "artifacts")
    assert record.run.timed_out and record.result == "fail"
    assert "[harness] killed after 8 s" in record.run.stderr


def test_results_are_written_as_they_come_and_held_out_ones_as_figures(tmp_path: Path) -> None:
    results = main.Results(
        tmp_path / "r.json", tmp_path / "held" / "records.jsonl", {"records": []}
    )
    base = {
        "rep": 1,
        "agent": "ours",
        "kind": "fix",
        "result": "fail",
        "steps": 2,
        "calls": 2,
        "seconds": 3.0,
        "tokens": {"evaluated": 10, "reused": 5},
        "answers": ["the answer"],
        "check": {"ok": False, "detail": "hidden tests fail", "what": "w"},
        "failure_modes": {"prose": ["call 1: text of the model"]},
    }
    results.add({**base, "task": "a", "split": "dev"})
    assert json.loads((tmp_path / "r.json").read_text())["records"][0]["answers"] == ["the answer"]
    results.add({**base, "task": "b", "split": "heldout"})
    written = json.loads((tmp_path / "r.json").read_text())
    held = written["records"][1]
    assert held["result"] == "fail" and held["failure_modes"] == ["prose"]
    assert "answers" not in held and "check" not in held
    assert "the answer" not in json.dumps(held) and "text of the model" not in json.dumps(held)
    full = json.loads((tmp_path / "held" / "records.jsonl").read_text())
    assert full["answers"] == ["the answer"]
    assert written["totals"]["ours"]["runs"] == 2
    summary = report.summary(written["records"], ("ours",))
    assert "heldout" in summary and " b " not in summary


def test_resume_runs_only_what_the_file_lacks() -> None:
    chosen = tasks.select(["explain-divide", "list-files"])
    done = {("explain-divide", 1, "ours"), ("explain-divide", 1, "baseline")}
    todo = main.pending(chosen, 1, ("ours", "baseline"), done)
    assert [(t.key, r, a) for t, r, a in todo] == [
        ("list-files", 1, "ours"),
        ("list-files", 1, "baseline"),
    ]


def test_the_held_out_split_is_kept_apart() -> None:
    from bench.real import heldout

    held = [t for t in tasks.TASKS if t.split == "heldout"]
    assert [t.key for t in held] == [t.key for t in heldout.TASKS]
    # every kind is in both splits, and the two are about the same size (dev larger by the
    # fresh tasks of bench/real/dev_fresh.py, dev_prose.py, dev_options.py, dev_impact.py,
    # dev_readme.py, dev_values.py, dev_chat.py and dev_parse.py, 53 of 123)
    assert {t.kind for t in held} == set(tasks.KINDS)
    dev = [t for t in tasks.TASKS if t.split == "dev"]
    assert 0.4 < len(dev) / len(tasks.TASKS) < 0.7
    # three projects are held out whole; a held-out bug is never a dev task's fixture
    dev_roots = {fixtures.root_of(t.fixture) for t in dev}
    assert not dev_roots & {"hashids", "dj_database_url", "docopt"}
    held_variants = {t.fixture for t in held if t.fixture in fixtures.VARIANTS}
    assert held_variants and not held_variants & {t.fixture for t in dev}
    # the dev modules do not mention a held-out task or its bug
    dev_source = "".join(
        Path(module.__file__ or "").read_text()
        for module in (
            dev_tasks,
            dev_fresh,
            dev_prose,
            dev_options,
            dev_impact,
            dev_readme,
            dev_values,
            dev_chat,
            dev_parse,
            tasks,
        )
    )
    for task in held:
        assert task.key not in dev_source and task.turns[0] not in dev_source
    assert all(t.split == "heldout" for t in held if fixtures.root_of(t.fixture) == "hashids")


def test_held_out_tasks_are_listed_without_their_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert main.main(["--list", "--split", "heldout"]) == 0
    listed = capsys.readouterr().out
    held = [t for t in tasks.TASKS if t.split == "heldout"]
    assert all(t.key in listed and t.turns[0] not in listed for t in held)


def test_report_only_merges_results_files_without_a_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = {
        "task": "explain-divide",
        "kind": "behaviour",
        "split": "dev",
        "rep": 1,
        "agent": "ours",
        "result": "ok",
        "steps": 1,
        "calls": 1,
        "seconds": 5.0,
        "tokens": {"evaluated": 100, "reused": 900},
    }
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    first.write_text(json.dumps({"records": [record], "seconds": 5.0}))
    held = {**record, "task": "somewhere-held-out", "split": "heldout", "result": "false-success"}
    second.write_text(json.dumps({"records": [held, record], "seconds": 7.0}))
    merged = tmp_path / "merged.json"
    argv = ["--report-only", "--resume", str(first), str(second), "--output", str(merged)]
    assert main.main([*argv, "--split", "all"]) == 0
    document = json.loads(merged.read_text())
    assert len(document["records"]) == 2 and document["seconds"] == 12.0
    assert document["totals"]["ours"]["false_success"] == 1
    out = capsys.readouterr().out
    assert "heldout" in out and "somewhere-held-out" not in out
    dev = sum(t.split == "dev" for t in tasks.TASKS)
    assert f"not run yet: {dev - 1} of {dev} dev tasks by ours" in out
