"""The daemon (`smol-instruments serve`) through a real LSP client: a pending patch planted in
the patch store's directory and accepted from the editor, the workspace's `.env` read by a
daemon the editor starts in the workspace folder, client settings, and a client that goes away
while the agent waits for an approval.

What the daemon can and cannot know about settings: it receives the editor's settings as one
merged object (`initializationOptions.settings`, `workspace/didChangeConfiguration`), with no
word of which scope (user, workspace, folder) each value came from. It cannot tell a user's
`sandboxCheckCommand` from one a repository's `.vscode/settings.json` supplied; only the
extension can, by sending user and machine values alone (and Workspace Trust). What the daemon
does decide is what it reads itself: its own `.env`, which must not be the workspace's.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from tests.support.lsp import SETTING_NAMES, Recorder, daemon_env, start_daemon, wait_until
from tests.support.scripted_model import ScriptedModel

from conftest import make_repo

from .harness import FINAL, Victim, harm_report
from .test_attack_patches import PLANTED, plant, planted_targets

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"README.md": "# Sample\n"})


def env_for(victim: Victim, tmp_path: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The daemon's environment: the victim's HOME and the daemon tests' quiet settings."""
    quiet = daemon_env(extra, tmp_path)
    return victim.env({name: quiet[name] for name in SETTING_NAMES if name in quiet})


async def accept(client: Any, patch_id: str) -> str:
    """Click Accept; the daemon's answer or its error, as text."""
    try:
        result = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="smol.acceptPatch", arguments=[patch_id])
        )
    except Exception as error:  # a refusal comes back as a JSON-RPC error
        return f"refused: {error}"
    return f"accepted: {result}"


@pytest.mark.parametrize("apply_edit", [True, False], ids=["workspace-applyEdit", "daemon-writes"])
@pytest.mark.parametrize("target", PLANTED)
async def test_a_planted_patch_accepted_in_the_editor_stays_inside(
    target: str, apply_edit: bool, repo: Path, victim: Victim, tmp_path: Path
) -> None:
    """The editor applies what `workspace/applyEdit` carries, wherever its URIs point."""
    spot = victim.spot(f"planted-daemon-{target}-{apply_edit}")
    (repo / "outside").symlink_to(spot.dir)
    path, old, new = planted_targets(spot, repo)[target]
    patch_id = plant(repo, path, old, new, "Fix a typo in README.md", victim.patch_store(repo))
    recorder = Recorder()
    client = await start_daemon(
        repo, recorder, env=env_for(victim, tmp_path), apply_edit=apply_edit, cwd=repo
    )
    try:
        answer = await accept(client, patch_id)
    finally:
        await client.shutdown_session()
    found = spot.harm()
    edits = [str(e.edit) for e in recorder.edits]
    assert found == [], harm_report(found) + f"\n  {answer}\n  edits sent: {edits}"


async def test_the_workspace_env_cannot_choose_the_daemons_log_file(
    repo: Path, victim: Victim, tmp_path: Path
) -> None:
    """The editor starts the daemon in the workspace folder; its `.env` names LOG_FILE."""
    spot = victim.spot("daemon-log-file")
    (repo / ".env").write_text(f"LOG_FILE={spot.bashrc}\nLOG_LEVEL=DEBUG\n")
    env = env_for(victim, tmp_path)
    env.pop("LOG_FILE")  # the user chose no log file
    recorder = Recorder()
    client = await start_daemon(repo, recorder, env=env, cwd=repo)
    try:
        await client.protocol.send_request_async("smol/patches", {})
    finally:
        await client.shutdown_session()
    found = spot.harm()
    assert found == [], harm_report(found) + "\n" + spot.bashrc.read_text()[-800:]


async def test_the_workspace_env_cannot_choose_the_check_command(
    repo: Path, victim: Victim, tmp_path: Path
) -> None:
    """The check runs at proposal time; its print reaches the model even from inside containment."""
    spot = victim.spot("daemon-check-command")
    check = f"printf 'RAN:%s\\n' workspace-env-check; touch {spot.marker}"
    (repo / ".env").write_text(f"SANDBOX_CHECK_COMMAND={check}\n")
    code = 'print(propose_patch(path="README.md", old_text="# Sample", new_text="# Sample!"))'
    turns = [f"```python\n{code}\n```", FINAL]
    with ScriptedModel(turns, fallback=FINAL, strict=False) as model:
        env = env_for(victim, tmp_path, {**model.env(), "SANDBOX_BACKEND": "local"})
        recorder = Recorder()
        client = await start_daemon(repo, recorder, env=env, cwd=repo)
        try:
            result = await client.protocol.send_request_async("smol/chat", {"message": "go"})
        finally:
            await client.shutdown_session()
        seen = "\n".join(request.prompt_text() for request in model.requests)
    found = spot.harm()
    if "RAN:workspace-env-check" in seen:
        found.append("the workspace's check command ran (its output reached the model)")
    assert found == [], harm_report(found) + f"\n  chat: {result}"


async def test_a_client_that_goes_away_mid_approval_runs_nothing(
    repo: Path, victim: Victim, tmp_path: Path
) -> None:
    """The editor is asked to approve a command; it disconnects instead of answering."""
    spot = victim.spot("disconnect-mid-approval")
    command = f"python3 -c \"import pathlib; pathlib.Path('{spot.marker}').write_text('x')\""
    turns = [f"```python\nprint(run_cmd(command={command!r}))\n```", FINAL]
    recorder = Recorder(approval_answer="Run", approval_delay=60)
    with ScriptedModel(turns, fallback=FINAL, strict=False) as model:
        env = env_for(victim, tmp_path, {**model.env(), "APPROVAL_TIMEOUT_S": "30"})
        client = await start_daemon(repo, recorder, env=env, cwd=repo)
        chat = asyncio.ensure_future(
            client.protocol.send_request_async("smol/chat", {"message": "go"})
        )
        await wait_until(lambda: bool(recorder.requests), timeout=60)
        server = client._server  # the daemon's process: the editor closes its end of the pipe
        server.stdin.close()
        await asyncio.wait_for(server.wait(), timeout=30)
        chat.cancel()
        await asyncio.sleep(2)  # anything still running would have written by now
        # pygls fails the request left pending by the dead server, and stumbles doing so.
        with contextlib.suppress(RuntimeError):
            await client.stop()
    found = spot.harm()
    assert found == [], harm_report(found)
    assert server.returncode is not None
