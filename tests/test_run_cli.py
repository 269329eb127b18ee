"""`smol-instruments run` as a user runs it: a subprocess, the scripted model over HTTP, a real
Phoenix reading back the spans."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.support import transcripts
from tests.support.phoenix import PhoenixServer
from tests.support.scripted_model import ScriptedModel, Turn

from smol_instruments.agent.outcome import UNVERIFIED

pytestmark = pytest.mark.timeout(300)

SETTINGS = ("MODEL_", "PHOENIX_", "SANDBOX_", "AGENT_", "OTEL_", "APPROVAL_", "LOG_")


def run_cli(
    repo: Path, *args: str, env: dict[str, str] | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(SETTINGS)}
    base.update({"PHOENIX_ENABLED": "false", "SANDBOX_BACKEND": "none", "MODEL_BACKEND": "server"})
    base.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "smol_instruments", "run", "--repo", str(repo), *args],
        capture_output=True,
        text=True,
        env=base,
        cwd=repo,
        input=stdin if stdin is not None else "",
        timeout=240,
    )


def test_run_completes_a_task_end_to_end(repo: Path) -> None:
    with ScriptedModel(transcripts.five_step_fix()) as model:
        result = run_cli(repo, "fix add() in app/calc.py", env=model.env())
    # proposed, and told unverified (no sandbox checked it): not `completed`, exit status 1
    assert result.returncode == 1, result.stderr
    assert result.stdout.startswith(UNVERIFIED) and "a + b" in result.stdout
    assert "step 5/25" in result.stderr
    assert "propose_patch" in result.stderr and "patch p" in result.stderr
    assert "incomplete" in result.stderr and "tokens" in result.stderr


def test_run_json_reports_the_result_object(repo: Path) -> None:
    with ScriptedModel(transcripts.final_answer_only("42")) as model:
        result = run_cli(repo, "--json", "what is the answer?", env=model.env())
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["status"] == "completed" and data["answer"] == "42" and data["steps"] == 1
    assert set(data["usage"]) == {"promptTokens", "completionTokens"}


def test_approvals_are_refused_without_a_terminal_and_granted_with_yes(repo: Path) -> None:
    turns = [
        '```python\nprint(run_cmd(command="curl -s http://127.0.0.1:9/"))\n```',
        '```python\nfinal_answer("done")\n```',
    ]
    with ScriptedModel(turns) as model:
        refused = run_cli(repo, "fetch it", env=model.env())
        prompt_refused = model.requests[1].prompt_text()
    with ScriptedModel(turns) as model:
        granted = run_cli(repo, "--yes", "fetch it", env=model.env())
        prompt_granted = model.requests[1].prompt_text()
    assert refused.returncode == 0 and granted.returncode == 0
    assert "APPROVAL_DENIED" in prompt_refused and "stdin is not a terminal" in prompt_refused
    assert "APPROVAL_DENIED" not in prompt_granted and "exit_code" in prompt_granted


def test_yes_never_runs_a_deny(repo: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    command = f"rm -rf / ; touch {marker}"
    turns = [
        f'```python\nprint(run_cmd(command="{command}"))\n```',
        '```python\nfinal_answer("no")\n```',
    ]
    with ScriptedModel(turns) as model:
        result = run_cli(repo, "--yes", "destroy", env=model.env())
        prompt = model.requests[1].prompt_text()
    assert result.returncode == 0
    assert "COMMAND_DENIED" in prompt
    assert not marker.exists()


def test_no_model_reachable_says_how_to_fix_it(repo: Path) -> None:
    result = run_cli(
        repo,
        "hello",
        env={"MODEL_ID": "ollama_chat/qwen2.5-coder:7b", "MODEL_API_BASE": "http://127.0.0.1:9"},
    )
    assert result.returncode == 1
    assert "ollama serve" in result.stderr and "MODEL_ID" in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) <= 3


def test_failed_run_exits_non_zero(repo: Path) -> None:
    turns = [*transcripts.endless_steps(2), "So far nothing."]
    with ScriptedModel(turns) as model:
        result = run_cli(repo, "read forever", env=model.env() | {"AGENT_MAX_STEPS": "2"})
    assert result.returncode == 1
    assert "max_steps" in result.stderr


@pytest.mark.phoenix
def test_spans_arrive_at_a_real_phoenix(repo: Path, phoenix: PhoenixServer) -> None:
    with ScriptedModel(transcripts.five_step_fix()) as model:
        result = run_cli(repo, "--json", "fix add()", env=model.env() | phoenix.env())
        assert result.returncode == 1, result.stderr  # a fix told unverified: no sandbox
        trace_id = json.loads(result.stdout)["traceId"]
        assert len(trace_id) == 32
        project = "smol-instruments"
        tools = phoenix.wait_for_spans(project, count=4, trace_id=trace_id, timeout=30)
        spans: list[dict[str, Any]] = phoenix.spans(project, trace_id=trace_id)
        names = [s["name"] for s in spans]
        wrapped = [s for s in spans if s["name"].startswith("tool_wrapped.")]
        assert {s["name"] for s in wrapped} == {
            "tool_wrapped.repo_info",
            "tool_wrapped.rg_search",
            "tool_wrapped.read_file",
            "tool_wrapped.propose_patch",
        }, names
        attributes = wrapped[0]["attributes"]
        for key in (
            "tool.name",
            "tool.args_hash",
            "tool.input_size",
            "tool.output_size",
            "tool.duration_ms",
            "tool.truncated",
        ):
            assert key in attributes, (key, attributes)
        assert "smol_instruments.run" in names
        assert "SmolCodeAgent.run" in names, names  # the instrumentor names spans by class
        assert any(n.startswith("Step") for n in names), names
        llm = [s for s in spans if s["name"].startswith("AgentModel.generate")]
        assert llm, names
        assert any("llm.token_count.prompt" in s["attributes"] for s in llm)
        assert tools


@pytest.mark.phoenix
def test_a_prose_answer_is_no_error_in_the_trace(repo: Path, phoenix: PhoenixServer) -> None:
    """A question answered in plain sentences completes, and Phoenix shows it so: no span of
    its trace is an error (the upstream step marks a reply without code as a parsing error)."""
    answer = "A decorator wraps a function to add behaviour before or after it runs."
    script = transcripts.conversational_prose(answer)
    with ScriptedModel(script) as model:
        question = "what is a python decorator, in one sentence?"
        result = run_cli(repo, "--json", question, env=model.env() | phoenix.env())
        assert result.returncode == 0, result.stderr
        outcome = json.loads(result.stdout)
        assert outcome["status"] == "completed" and outcome["steps"] == 1
        project = "smol-instruments"
        phoenix.wait_for_spans(project, "smol_instruments.run", trace_id=outcome["traceId"])
        spans = phoenix.wait_for_spans(project, count=4, trace_id=outcome["traceId"])
        by_name = {span["name"]: span for span in spans}
        assert "Step 1" in by_name, list(by_name)
        errors = [
            (s["name"], s.get("status_message")) for s in spans if s["status_code"] == "ERROR"
        ]
        assert errors == []
        assert by_name["smol_instruments.run"]["status_code"] == "OK"
        assert by_name["smol_instruments.run"]["attributes"]["smol.status"] == "completed"


@pytest.mark.phoenix
def test_a_failed_run_is_an_error_in_the_trace_with_its_reason(
    repo: Path, phoenix: PhoenixServer
) -> None:
    broken = Turn(status=500, error="the model server broke")
    with ScriptedModel([broken]) as model:
        result = run_cli(repo, "--json", "What is a unit test?", env=model.env() | phoenix.env())
        outcome = json.loads(result.stdout)
        assert outcome["status"] == "failed", outcome
        (run,) = phoenix.wait_for_spans(
            "smol-instruments", "smol_instruments.run", trace_id=outcome["traceId"]
        )
        assert run["status_code"] == "ERROR"
        assert run["status_message"] == outcome["error"]


def test_chat_keeps_memory_across_turns(repo: Path) -> None:
    from tests.support.scripted_model import Turn

    turns = [
        '```python\nfinal_answer("noted: the magic word is teapot")\n```',
        Turn(
            '```python\nfinal_answer("teapot")\n```',
            expect=lambda request: "magic word is teapot" in request.prompt_text(),
        ),
    ]
    base = {k: v for k, v in os.environ.items() if not k.startswith(SETTINGS)}
    with ScriptedModel(turns) as model:
        env = base | {"PHOENIX_ENABLED": "false", "SANDBOX_BACKEND": "none"} | model.env()
        result = subprocess.run(
            [sys.executable, "-m", "smol_instruments", "chat", "--repo", str(repo)],
            input="remember: the magic word is teapot\nwhat was the magic word?\n",
            capture_output=True,
            text=True,
            env=env,
            cwd=repo,
            timeout=240,
        )
        failures = model.failures
    assert result.returncode == 0, result.stderr
    assert "agent> noted: the magic word is teapot" in result.stdout
    assert "agent> teapot" in result.stdout
    assert failures == []  # the second request carried the first turn


def test_run_exits_1_when_the_change_it_asked_for_was_never_made(repo: Path) -> None:
    claims = '```python\nfinal_answer("I fixed the bug and the patch was applied.")\n```'
    read = '```python\nprint(read_file(path="app/calc.py"))\n```'
    with ScriptedModel([read, claims, claims]) as model:
        result = run_cli(repo, "--json", "fix add() in app/calc.py", env=model.env())
    assert result.returncode == 1, result.stderr
    data = json.loads(result.stdout)
    assert data["status"] == "incomplete"
    assert data["answer"].startswith("Not done: no change was proposed")


def test_chat_exits_1_when_a_turn_does_not_complete(repo: Path) -> None:
    endless = [
        f'```python\nprint(read_file(path="app/calc.py", start_line={i}))\n```'
        for i in (1, 2, 3, 4)
    ]
    summary = "I only read app/calc.py."
    base = {k: v for k, v in os.environ.items() if not k.startswith(SETTINGS)}
    with ScriptedModel([*endless[:2], summary, *endless[2:], summary]) as model:
        env = base | {"PHOENIX_ENABLED": "false", "SANDBOX_BACKEND": "none", "AGENT_MAX_STEPS": "2"}
        result = subprocess.run(
            [sys.executable, "-m", "smol_instruments", "chat", "--repo", str(repo)],
            input="read calc\nread it again\n",
            capture_output=True,
            text=True,
            env=env | model.env(),
            cwd=repo,
            timeout=240,
        )
    assert result.returncode == 1, result.stderr
    assert result.stdout.count("agent> I only read app/calc.py.") == 2
