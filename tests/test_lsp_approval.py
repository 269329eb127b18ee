"""Command approvals as `smol/approval`: the command, the policy rule, its reason and what the
approval widens arrive as fields, so an editor never parses them back out of prose."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.support.lsp import Recorder, _plain, daemon_env, start_daemon
from tests.support.scripted_model import ScriptedModel

pytestmark = pytest.mark.timeout(180)

COMMAND = "pip install nosuchpkg-xyz"
TURNS = [
    f'```python\nprint(run_cmd(command="{COMMAND}", timeout=5))\n```',
    '```python\nfinal_answer("done")\n```',
]


async def _chat(client: Any) -> dict[str, Any]:
    return _plain(await client.protocol.send_request_async("smol/chat", {"message": "install"}))


@pytest.mark.parametrize(("answer", "approved"), [("Run", True), ("Deny", False), (None, False)])
async def test_a_client_that_asks_for_it_gets_the_approval_as_fields(
    repo: Path, tmp_path: Path, answer: str | None, approved: bool
) -> None:
    recorder = Recorder(approval_answer=answer)
    with ScriptedModel(TURNS) as model:
        env = daemon_env(model.env(), tmp_path)
        client = await start_daemon(repo, recorder, env=env, options={"smolApproval": True})
        try:
            assert (await _chat(client))["status"] == "completed"
            assert recorder.requests == []  # no showMessageRequest to parse
            [asked] = recorder.approvals
            assert asked["command"] == COMMAND
            assert asked["rule"] and asked["reason"]
            assert isinstance(asked["widens"], list)
            assert asked["actions"] == ["Run", "Deny"]
            assert asked["message"].startswith(f"The agent wants to run: {COMMAND}")
            [decided] = recorder.of("approval")
            assert decided["decision"] == ("approved" if approved else "denied")
            assert ("APPROVAL_DENIED" in model.requests[1].prompt_text()) is (not approved)
        finally:
            await client.shutdown_session()


async def test_no_answer_in_time_is_a_denial(repo: Path, tmp_path: Path) -> None:
    recorder = Recorder(approval_answer="Run", approval_delay=5.0)
    with ScriptedModel(TURNS) as model:
        env = daemon_env(model.env(), tmp_path) | {"APPROVAL_TIMEOUT_S": "1"}
        client = await start_daemon(repo, recorder, env=env, options={"smolApproval": True})
        try:
            assert (await _chat(client))["status"] == "completed"
            [decided] = recorder.of("approval")
            assert decided["decision"] == "denied"
            assert "no answer within 1 s" in model.requests[1].prompt_text()
            assert recorder.approvals_cancelled == 1  # the client was told to close its prompt
        finally:
            await client.shutdown_session()


HIDING = "git add README.md\\ngit config core.fsmonitor ./evil.sh\\x1b[2K\\r"


@pytest.mark.parametrize("structured", [True, False], ids=["smol-approval", "showMessageRequest"])
async def test_a_command_that_hides_a_line_is_shown_whole(
    repo: Path, tmp_path: Path, structured: bool
) -> None:
    """The message marks the line break and draws the escape sequence, with warnings in words;
    the structured request also carries the exact command (the extension draws it the same)."""
    recorder = Recorder(approval_answer="Deny")
    turns = [f'```python\nprint(run_cmd(command="{HIDING}"))\n```', TURNS[1]]
    with ScriptedModel(turns) as model:
        env = daemon_env(model.env(), tmp_path)
        options = {"smolApproval": True} if structured else {}
        client = await start_daemon(repo, recorder, env=env, options=options)
        try:
            assert (await _chat(client))["status"] == "completed"
        finally:
            await client.shutdown_session()
    if structured:
        [asked] = recorder.approvals
        message = asked["message"]
        assert asked["command"] == "git add README.md\ngit config core.fsmonitor ./evil.sh\x1b[2K\r"
    else:
        [request] = recorder.requests
        message = request.message
    assert "git add README.md⏎\ngit config core.fsmonitor ./evil.sh␛[2K␍" in message
    assert "Warning: this command holds characters" in message
    assert "Warning: this command is 2 lines long" in message
    assert "\x1b" not in message and "\r" not in message
