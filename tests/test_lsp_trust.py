"""An untrusted folder: the agent reads and answers, runs no command, validates by running nothing.

The editor says so with `initializationOptions.trusted: false` (VS Code's Workspace Trust); the
tools refuse in Python. Attacks are judged by their effect: a marker file a command would write.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.support.lsp import Recorder, _plain, daemon_env, start_daemon, wait_until
from tests.support.scripted_model import ScriptedModel

from smol_instruments.agent.outcome import UNVERIFIED
from smol_instruments.base.config import Settings
from smol_instruments.safety.approval import AutoApprover
from smol_instruments.tools import build_tools
from smol_instruments.tools.base import ToolContext

pytestmark = pytest.mark.timeout(180)


def _touch_then_propose(marker: Path) -> list[str]:
    return [
        f'```python\nprint(run_cmd(command="echo ran > {marker}"))\n```',
        f'```python\nprint(run_tests(command="echo ran > {marker}"))\n```',
        '```python\nprint(propose_patch(path="app/calc.py", old_text="a - b", new_text="a + b"))\n```',
        '```python\nfinal_answer("done")\n```',
    ]


async def _chat(client: Any, message: str) -> dict[str, Any]:
    return _plain(await client.protocol.send_request_async("smol/chat", {"message": message}))


@pytest.mark.parametrize("trusted", [False, True])
async def test_an_untrusted_daemon_runs_no_command_and_no_check(
    repo: Path, tmp_path: Path, trusted: bool
) -> None:
    marker = repo / "MARKER"
    check_marker = tmp_path / "CHECKED"
    recorder = Recorder(approval_answer="Run")
    with ScriptedModel(_touch_then_propose(marker)) as model:
        env = daemon_env(model.env(), tmp_path) | {
            "SANDBOX_BACKEND": "local",
            "SANDBOX_CHECK_COMMAND": f"touch {check_marker}; echo check-ran",
        }
        client = await start_daemon(repo, recorder, env=env, options={"trusted": trusted})
        try:
            result = await _chat(client, "fix add()")
            # proposed, and told unverified: nothing may run here to check it
            assert result["status"] == "incomplete"
            assert result["answer"].startswith(UNVERIFIED)
            patches = _plain(await client.protocol.send_request_async("smol/patches", {}))[
                "patches"
            ]
            # What the commands wrote (in their views) is proposed, never written.
            made = [p for p in patches if p["summary"].startswith("Changes made by")]
            [patch] = [p for p in patches if p not in made]
            uri = (repo / "app/calc.py").as_uri()
            await wait_until(lambda: bool(recorder.diagnostics.get(uri)))  # still shown
            # the commands' own events (the context read for the task comes first)
            commands = ("run_cmd", "run_tests")
            tool_errors = [e.get("error") for e in recorder.of("tool") if e["name"] in commands]
            prompt = model.requests[1].prompt_text()
            checks = patch["validation"]["checks"]
            assert not marker.exists()
            if trusted:  # the control: the same script runs both and validates
                assert [[f["path"] for f in p["files"]] for p in made] == [["MARKER"]] * 2, made
                assert any("check-ran" in c["output"] for c in checks)
            else:
                assert made == []
                assert not check_marker.exists()
                assert checks == []
                assert "the folder is not trusted" in patch["validation"]["message"]
                assert "UNTRUSTED_WORKSPACE" in prompt and "propose_patch" in prompt
                assert "UNTRUSTED_WORKSPACE" in model.requests[2].prompt_text()  # run_tests too
                assert [e["error"] for e in tool_errors[:2] if e] == ["UNTRUSTED_WORKSPACE"] * 2
                assert recorder.requests == []  # nobody was asked either
        finally:
            await client.shutdown_session()


async def test_options_that_cannot_be_read_are_untrusted(repo: Path, tmp_path: Path) -> None:
    marker = repo / "MARKER"
    recorder = Recorder(approval_answer="Run")
    with ScriptedModel(_touch_then_propose(marker)) as model:
        client = await start_daemon(
            repo,
            recorder,
            env=daemon_env(model.env(), tmp_path),
            options={"trusted": "yes"},
        )
        try:
            await wait_until(lambda: any("untrusted" in m.message for m in recorder.messages))
            result = await _chat(client, "fix add()")  # proposed; nothing ran to verify it
            assert result["status"] == "incomplete" and result["answer"].startswith(UNVERIFIED)
            assert not marker.exists()
        finally:
            await client.shutdown_session()


def test_the_shell_tools_refuse_before_the_policy_or_the_approver(
    repo: Path, settings: Settings
) -> None:
    ctx = ToolContext.create(repo, settings, approver=AutoApprover(), trusted=False)
    tools = build_tools(ctx)
    for name, args in (("run_cmd", {"command": "touch MARKER"}), ("run_tests", {})):
        result = tools[name](**args)
        assert result["error"] == "UNTRUSTED_WORKSPACE", result
        assert "propose_patch" in result["recovery_suggestion"]
    assert not (repo / "MARKER").exists()
    assert ctx.gate.store.records == []
