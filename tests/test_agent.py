"""The agent through its real path: AgentSession, real LiteLLM, the scripted model over HTTP,
real tools on a temporary git repository."""

from __future__ import annotations

import hashlib
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from tests.support import transcripts
from tests.support.scripted_model import ScriptedModel, Turn

from smol_instruments.agent.outcome import UNVERIFIED
from smol_instruments.agent.session import AgentSession
from smol_instruments.base.config import Settings
from smol_instruments.base.wire import to_wire
from smol_instruments.safety.approval import (
    ApprovalRequest,
    AutoApprover,
    Decision,
    DenyAllApprover,
)

pytestmark = pytest.mark.timeout(120)


class RecordingApprover:
    """Says no (or yes) and remembers what it was asked."""

    def __init__(self, approve: bool = False) -> None:
        self.approve = approve
        self.asked: list[ApprovalRequest] = []

    def decide(self, request: ApprovalRequest) -> Decision:
        self.asked.append(request)
        return Decision(self.approve, "test", None if self.approve else "refused by the test")


def session_for(
    repo: Path,
    settings: Settings,
    model: ScriptedModel,
    events: list[dict[str, Any]] | None = None,
    approver: Any = None,
    **overrides: Any,
) -> AgentSession:
    configured = settings.model_copy(
        update={
            "model_id": model.model_id,
            "model_api_base": model.base_url,
            "model_api_key": "x",
            **overrides,
        }
    )
    return AgentSession(
        repo,
        configured,
        approver=approver or DenyAllApprover(),
        events=(lambda e: events.append(to_wire(e))) if events is not None else None,
    )


def run(repo: Path, settings: Settings, turns: list[Any], task: str, **overrides: Any) -> Any:
    """(outcome, requests) of one run of `task` against a model scripted with `turns`."""
    with ScriptedModel(turns) as model:
        session = session_for(repo, settings, model, **overrides)
        try:
            outcome = session.run(task)
        finally:
            session.close()
        return outcome, model.requests


def tree_digest(root: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and ".git" not in p.parts):
        h.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def test_five_step_fix_is_proposed_and_told_unverified_without_a_sandbox(
    repo: Path, settings: Settings
) -> None:
    events: list[dict[str, Any]] = []
    with ScriptedModel(transcripts.five_step_fix()) as model:
        session = session_for(repo, settings, model, events)
        before = tree_digest(repo)
        outcome = session.run("add() in app/calc.py gives wrong results; fix it")
        session.close()
    # done as far as it can be told with no sandbox: proposed, and said to be unverified (no
    # test ran before the fix; agent/outcome.py `verified`)
    assert outcome.status == "incomplete", outcome
    assert outcome.answer.startswith(UNVERIFIED)
    assert outcome.steps == 5
    assert "a + b" in outcome.answer
    assert outcome.usage.prompt_tokens > 0 and outcome.usage.completion_tokens > 0
    assert tree_digest(repo) == before  # proposed, never written
    kinds = [e["kind"] for e in events]
    # the tests and the symptom's call, run before step 1 for a fix, are reported as they run
    before = kinds[: kinds.index("step")]
    assert before == ["approval", "approval"] and kinds[-1] == "final", events[:2]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert {"text", "code", "tool", "observation", "patch"} <= set(kinds)
    tools = [e["name"] for e in events if e["kind"] == "tool"]
    # the task names app/calc.py: it was read for the model before step 1, and step 1 says so
    assert tools == ["context", "repo_info", "rg_search", "read_file", "propose_patch"]
    [context] = [e for e in events if e["kind"] == "tool" and e["name"] == "context"]
    read = context["args"]["read"]
    assert context["step"] == 1 and read[0].startswith("The tests, run with"), read
    assert any(source.startswith("app/calc.py") for source in read), read
    [patch] = [e["patch"] for e in events if e["kind"] == "patch"]
    assert patch["status"] == "pending"
    assert patch["files"][0]["path"] == "app/calc.py"
    assert [e["step"] for e in events if e["kind"] == "step"] == [1, 2, 3, 4, 5]


def test_a_fault_in_judging_the_run_ends_it_failed_and_keeps_what_was_proposed(
    repo: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A crash in the outcome's checks (agent/outcome.py `adds_heading` read past a hunk once)
    ended the run in a traceback at the host. Now it is the run's error, said as a failed
    run, and the proposed patch is still there to review."""
    import smol_instruments.agent.session as session_module

    def broken(answer: str, watch: Any) -> Any:
        raise KeyError("outcome")

    monkeypatch.setattr(session_module, "judge", broken)
    events: list[dict[str, Any]] = []
    with ScriptedModel(transcripts.five_step_fix()) as model:
        session = session_for(repo, settings, model, events)
        outcome = session.run("add() in app/calc.py gives wrong results; fix it")
        patches = session.ctx.patches.all()
        session.close()
    assert outcome.status == "failed", outcome
    assert outcome.error == "checking the outcome failed: KeyError: 'outcome'"
    [error] = [e for e in events if e["kind"] == "error"]
    assert "checking the outcome failed" in error["message"]
    assert [p.status for p in patches] == ["pending"]
    assert events[-1]["kind"] == "final" and events[-1]["status"] == "failed"


def test_rm_rf_is_refused_and_pip_install_goes_to_the_approver(
    repo: Path, settings: Settings, tmp_path: Path
) -> None:
    approver = RecordingApprover(approve=False)
    events: list[dict[str, Any]] = []
    with ScriptedModel(transcripts.risky_commands()) as model:
        session = session_for(repo, settings, model, events, approver)
        outcome = session.run("clean up and install numpy")
        session.close()
        second_prompt = model.requests[1].prompt_text()
        third_prompt = model.requests[2].prompt_text()
    assert outcome.status == "completed"
    assert "COMMAND_DENIED" in second_prompt  # rm -rf / never reached a shell or the user
    assert [r.subject for r in approver.asked] == ["pip install numpy"]
    assert approver.asked[0].rule
    assert "APPROVAL_DENIED" in third_prompt  # the refusal went back to the model
    approvals = [e for e in events if e["kind"] == "approval"]
    assert [(a["command"], a["verdict"], a["decision"]) for a in approvals] == [
        ("rm -rf /", "deny", "denied"),
        ("pip install numpy", "require_approval", "denied"),
    ]


def test_missing_file_gives_a_recovery_the_next_step_uses(repo: Path, settings: Settings) -> None:
    with ScriptedModel(transcripts.tool_error_then_recovery()) as model:
        session = session_for(repo, settings, model)
        outcome = session.run("where is the calculator?")
        session.close()
        prompt = model.requests[1].prompt_text()
    assert outcome.status == "completed"
    assert "FILE_NOT_FOUND" in prompt and "app/calc.py" in prompt


def test_repeating_model_trips_loop_detection(repo: Path, settings: Settings) -> None:
    with ScriptedModel(transcripts.repeated_call(times=3)) as model:
        session = session_for(repo, settings, model)
        outcome = session.run("read app/calc.py")
        session.close()
    assert outcome.status == "completed"
    assert session.state.loops_detected >= 1
    assert [c.error for c in session.state.calls] == [None, "LOOP_DETECTED", "LOOP_DETECTED"]


@pytest.mark.parametrize("script", ["conversational_final_answer", "conversational_prose"])
def test_a_plain_question_is_answered_in_one_model_call(
    repo: Path, settings: Settings, script: str
) -> None:
    answer = "A decorator wraps a function to add behaviour before or after it runs."
    with ScriptedModel(getattr(transcripts, script)(answer)) as model:
        session = session_for(repo, settings, model)
        outcome = session.run("what is a python decorator, in one sentence?")
        session.close()
        requests = model.requests
    assert outcome.status == "completed"
    assert outcome.answer == answer
    assert session.state.calls == []
    assert len(requests) == 1


def test_a_question_about_a_name_that_exists_nowhere_is_answered_so_without_the_model(
    repo: Path, settings: Settings
) -> None:
    """A name the repository does not have is searched for before the first step, not
    guessed: a question about nothing else is answered that it does not exist, in one step
    (seen on the 1.5B model: told so in the context, it read a file and described the name)."""
    outcome, requests = run(repo, settings, [], "what does the function `adder` do?")
    assert requests == []
    assert outcome.status == "completed" and outcome.steps == 1
    assert outcome.answer.startswith("There is no `adder` in this repository")
    assert "(the closest it defines: `add`)" in outcome.answer
    # a file the question names is no answer to a name that is nowhere (seen on the 1.5B
    # model: "how do I use resolve_all from jsonpointer?" described the named script)
    outcome, requests = run(repo, settings, [], "how do I use `adder` from app/calc.py?")
    assert requests == [] and outcome.answer.startswith("There is no `adder`")
    # a name that exists beside it: the model answers, told which one is not there
    turns = transcripts.conversational_final_answer()
    outcome, requests = run(repo, settings, turns, "what do `adder` and `add` do?")
    assert len(requests) == 1
    assert "`adder` occurs nowhere in this repository" in requests[0].prompt_text()
    assert "def add(a, b)" in requests[0].prompt_text()


@pytest.mark.parametrize("script", ["conversational_final_answer", "conversational_prose"])
def test_the_code_a_question_names_comes_with_it(
    repo: Path, settings: Settings, script: str
) -> None:
    """A question naming a file and a function gets their code with it: one call answers."""
    turns = getattr(transcripts, script)()
    outcome, requests = run(repo, settings, turns, "what does add() in app/calc.py do?")
    assert len(requests) == 1
    prompt = requests[0].prompt_text()
    # `add()` is written as code: its definition is what is shown, and where it is used
    assert "app/calc.py, lines 1-2: `add`" in prompt
    assert "def add(a, b):\n    return a - b" in prompt
    assert "in main (app/main.py:5): print(add(2, 3))" in prompt
    assert "Where `add` is used, inside main:" in prompt  # the callers by name, first
    assert outcome.status == "completed"
    assert outcome.answer == transcripts.CONVERSATIONAL_ANSWER


@pytest.mark.parametrize(
    "script", ["unclosed_block", "xml_code_block", "bare_json_call", "wrong_argument_name"]
)
def test_malformed_output_is_recovered(repo: Path, settings: Settings, script: str) -> None:
    with ScriptedModel(getattr(transcripts, script)()) as model:
        session = session_for(repo, settings, model)
        outcome = session.run("look at app/calc.py")
        session.close()
        failures = model.failures
    assert outcome.status == "completed", outcome
    assert failures == []


def test_code_that_does_not_parse_is_recovered(repo: Path, settings: Settings) -> None:
    turns = ["```python\nprint(\n```", '```python\nfinal_answer("fixed")\n```']
    with ScriptedModel(turns) as model:
        session = session_for(repo, settings, model)
        outcome = session.run("anything")
        session.close()
        prompt = model.requests[1].prompt_text()
    assert outcome.status == "completed" and outcome.answer == "fixed"
    assert "SyntaxError" in prompt


def test_cancel_mid_stream_stops_within_one_step(repo: Path, settings: Settings) -> None:
    with ScriptedModel(
        transcripts.streams_forever(), fallback="```python\nfinal_answer('late')\n```"
    ) as model:
        session = session_for(repo, settings, model)
        model.extend([])
        timer = threading.Timer(1.0, session.cancel)
        timer.start()
        outcome = session.run("think forever")
        requests = model.requests
        # The HTTP stream is closed at once, not when the garbage collector gets to it.
        assert requests[0].done.wait(2) and requests[0].disconnected
        session.close()
    assert outcome.status == "cancelled"
    assert len(requests) == 1  # no model call after the cancel


def test_cancel_kills_a_running_command(repo: Path, settings: Settings) -> None:
    turns = [
        '```python\nprint(run_cmd(command="sleep 37.25"))\n```',
        '```python\nfinal_answer("x")\n```',
    ]
    with ScriptedModel(turns) as model:
        session = session_for(repo, settings, model, approver=AutoApprover())
        threading.Timer(1.0, session.cancel).start()
        started = time.monotonic()
        outcome = session.run("sleep")
        took = time.monotonic() - started
        session.close()
        calls = len(model.requests)
    assert outcome.status == "cancelled"
    assert calls == 1
    assert took < 30  # the command was killed, not waited for (37 s)
    import subprocess

    leftover = subprocess.run(["pgrep", "-f", "sleep 37.25"], capture_output=True, text=True)
    assert leftover.stdout.strip() == ""


def test_max_steps_ends_with_the_best_answer(repo: Path, settings: Settings) -> None:
    turns = [*transcripts.endless_steps(3), "So far: add() returns a - b."]
    with ScriptedModel(turns) as model:
        session = session_for(repo, settings, model, agent_max_steps=3)
        outcome = session.run("read everything")
        session.close()
    assert outcome.status == "max_steps"
    assert outcome.answer == "So far: add() returns a - b."


def test_memory_is_kept_across_turns(repo: Path, settings: Settings) -> None:
    turns = [
        '```python\nfinal_answer("noted: the magic word is teapot")\n```',
        Turn(
            '```python\nfinal_answer("teapot")\n```',
            expect=lambda request: "magic word is teapot" in request.prompt_text(),
        ),
    ]
    with ScriptedModel(turns) as model:
        session = session_for(repo, settings, model)
        first = session.run("remember: the magic word is teapot")
        second = session.run("what was the magic word?")
        session.close()
        failures = model.failures
    assert first.status == second.status == "completed"
    assert failures == []  # the second request still carried the first turn


def test_unreachable_model_fails_with_a_clear_message(repo: Path, settings: Settings) -> None:
    events: list[dict[str, Any]] = []
    configured = settings.model_copy(
        update={"model_id": "openai/x", "model_api_base": "http://127.0.0.1:9/v1"}
    )
    session = AgentSession(repo, configured, events=lambda e: events.append(to_wire(e)))
    outcome = session.run("hello")
    session.close()
    assert outcome.status == "failed"
    assert "cannot reach the model server at http://127.0.0.1:9/v1" in (outcome.error or "")
    [error] = [e for e in events if e["kind"] == "error"]
    assert "ollama serve" in error["recoverySuggestion"]


def test_model_errors_do_not_crash_the_run(repo: Path, settings: Settings) -> None:
    with ScriptedModel(
        [Turn(status=500, error="boom")], fallback=Turn(status=500, error="boom")
    ) as model:
        model.strict = False
        session = session_for(repo, settings, model)
        outcome = session.run("hello")
        session.close()
    assert outcome.status == "failed"
    assert outcome.error
