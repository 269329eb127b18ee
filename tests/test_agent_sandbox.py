"""A patch proposed through the agent comes back with a real Docker validation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.support import transcripts
from tests.support.sandbox_fixtures import require_docker
from tests.support.scripted_model import ScriptedModel, Turn

from smol_instruments.agent.session import AgentSession
from smol_instruments.base.config import Settings
from smol_instruments.base.wire import to_wire
from smol_instruments.sandbox.docker import DockerSandbox

pytestmark = [pytest.mark.docker, pytest.mark.timeout(240)]


def tree_snapshot(root: Path) -> dict[str, bytes]:
    """The working tree (our own state under .git/ is allowed to change)."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and ".git" not in p.parts
    }


def _session(
    repo: Path,
    settings: Settings,
    model: ScriptedModel,
    events: list[dict[str, Any]],
    check: str | None,
) -> AgentSession:
    configured = settings.model_copy(
        update={
            "model_id": model.model_id,
            "model_api_base": model.base_url,
            "model_api_key": "x",
            "sandbox_backend": "docker",
            "sandbox_check_command": check,
        }
    )
    client = require_docker(configured.sandbox_image)
    return AgentSession(
        repo,
        configured,
        events=lambda e: events.append(to_wire(e)),
        sandbox=DockerSandbox(configured, repo, client=client),
    )


def test_proposal_through_the_agent_is_validated_in_docker(repo: Path, settings: Settings) -> None:
    events: list[dict[str, Any]] = []
    before = tree_snapshot(repo)
    with ScriptedModel(transcripts.five_step_fix()) as model:
        session = _session(repo, settings, model, events, "python3 -m pytest -q")
        try:
            outcome = session.run("fix add()")
        finally:
            session.close()
        observation = model.requests[4].prompt_text()
    assert outcome.status == "completed", outcome
    [patch] = [e["patch"] for e in events if e["kind"] == "patch"]
    validation = patch["validation"]
    assert validation["backend"] == "docker"
    assert validation["applies"] is True
    commands = [c["command"] for c in validation["checks"]]
    assert any("py_compile" in c for c in commands)
    assert "python3 -m pytest -q" in commands
    assert all(c["passed"] for c in validation["checks"]), validation
    # The model saw the validation in its tool result, and nothing on the host changed.
    assert "backend: docker" in observation
    assert tree_snapshot(repo) == before


def test_a_patch_that_breaks_the_tests_is_reported_failing(repo: Path, settings: Settings) -> None:
    events: list[dict[str, Any]] = []
    breaking = Turn(
        "```python\n"
        "p = propose_patch(path='app/calc.py', old_text='return a * b', new_text='return a ** b')\n"
        "print(p['validation'])\n"
        "```"
    )
    turns = [breaking, '```python\nfinal_answer("proposed")\n```']
    with ScriptedModel(turns) as model:
        session = _session(repo, settings, model, events, "python3 -m pytest -q")
        try:
            session.run("change mul")
        finally:
            session.close()
        observation = model.requests[1].prompt_text()
    [patch] = [e["patch"] for e in events if e["kind"] == "patch"]
    checks = {c["command"]: c for c in patch["validation"]["checks"]}
    assert checks["python3 -m pytest -q"]["passed"] is False
    assert "failed" in checks["python3 -m pytest -q"]["output"]
    assert "'passed': False" in observation
