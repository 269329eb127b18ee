"""The daemon hosting the agent, through a real LSP client and the scripted model over HTTP."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from tests.support import transcripts
from tests.support.lsp import Recorder, _plain, code_actions, daemon_env, start_daemon, wait_until
from tests.support.scripted_model import ScriptedModel, Turn

from smol_instruments.agent.outcome import UNVERIFIED
from smol_instruments.base.containment import probe

pytestmark = pytest.mark.timeout(180)

PROFILES = ["visual-studio-code", "neovim"]
READ_CALC = '```python\nprint(read_file(path="app/calc.py"))\n```'
DONE = '```python\nfinal_answer("done")\n```'


async def chat(
    client: Any,
    message: str,
    session_id: str | None = None,
    msg_id: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    params: dict[str, Any] = {"message": message, **extra}
    if session_id:
        params["sessionId"] = session_id
    return _plain(await client.protocol.send_request_async("smol/chat", params, msg_id=msg_id))


def open_document(client: Any, uri: str, text: str) -> None:
    """The editor opens a Python file showing `text`."""
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="python", version=1, text=text
            )
        )
    )


@pytest.mark.parametrize("profile", PROFILES)
async def test_chat_streams_events_in_order_and_returns_the_result(
    repo: Path, tmp_path: Path, profile: str
) -> None:
    recorder = Recorder()
    with ScriptedModel(transcripts.five_step_fix()) as model:
        client = await start_daemon(
            repo, recorder, env=daemon_env(model.env(), tmp_path), profile=profile
        )
        try:
            result = await chat(client, "add() in app/calc.py gives wrong results; fix it")
            # proposed, and told unverified: no sandbox checked it against the tests
            assert result["status"] == "incomplete"
            assert result["answer"].startswith(UNVERIFIED)
            assert result["steps"] == 5
            assert "a + b" in result["answer"]
            assert result["usage"]["promptTokens"] > 0
            sid = result["sessionId"]
            await wait_until(lambda: "final" in recorder.kinds(sid))
            events = [e for e in recorder.events if e["sessionId"] == sid]
            assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
            kinds = [e["kind"] for e in events]
            # the tests, run for the fix before step 1, are reported as they run
            before = kinds[: kinds.index("step")]
            assert set(before) <= {"approval"} and kinds[-1] == "final", events[:2]
            assert {"text", "code", "tool", "observation", "patch"} <= set(kinds)
            # The proposed patch shows up as a diagnostic with code actions, in any editor.
            uri = (repo / "app/calc.py").as_uri()
            await wait_until(lambda: bool(recorder.diagnostics.get(uri)))
            [diagnostic] = recorder.diagnostics[uri]
            actions = await code_actions(client, uri, diagnostic.range, [diagnostic])
            assert {"Accept agent patch", "Reject agent patch"} <= {a["title"] for a in actions}
            if profile == "visual-studio-code":
                assert client.progress_reports  # work-done progress was reported
        finally:
            await client.shutdown_session()


async def test_propose_then_accept_writes_exactly_the_proposal(repo: Path, tmp_path: Path) -> None:
    recorder = Recorder()
    with ScriptedModel(transcripts.five_step_fix()) as model:
        client = await start_daemon(repo, recorder, env=daemon_env(model.env(), tmp_path))
        try:
            await chat(client, "fix add()")
            [patch] = _plain(await client.protocol.send_request_async("smol/patches", {}))[
                "patches"
            ]
            assert patch["status"] == "pending"
            assert (repo / "app/calc.py").read_text().count("return a - b") == 1
            result = await client.workspace_execute_command_async(
                types.ExecuteCommandParams(command="smol.acceptPatch", arguments=[patch["id"]])
            )
            assert _plain(result)["status"] == "accepted"
            text = (repo / "app/calc.py").read_text()
            assert "return a + b" in text and "return a - b" not in text
        finally:
            await client.shutdown_session()


@pytest.mark.parametrize(("answer", "approved"), [("Run", True), ("Deny", False), (None, False)])
async def test_command_approval_in_the_editor(
    repo: Path, tmp_path: Path, answer: str | None, approved: bool
) -> None:
    marker = tmp_path / "installed.txt"
    command = f"pip download --no-deps --dest {tmp_path}/nothing nosuchpkg-xyz || touch {marker}"
    turns = [
        f'```python\nprint(run_cmd(command="{command}"))\n```',
        DONE,
    ]
    recorder = Recorder(approval_answer=answer)
    with ScriptedModel(turns) as model:
        client = await start_daemon(repo, recorder, env=daemon_env(model.env(), tmp_path))
        try:
            result = await chat(client, "try it")
            assert result["status"] == "completed"
            [request] = recorder.requests
            assert request.type == types.MessageType.Warning
            assert command in request.message and "Policy" in request.message
            assert [a.title for a in request.actions or []] == ["Run", "Deny"]
            [approval] = recorder.of("approval")
            assert approval["decision"] == ("approved" if approved else "denied")
            assert approval["verdict"] == "require_approval"
            if probe().works:  # contained, so the approval says what it widens
                assert "\nApproving also allows: network access" in request.message
                assert approval["contained"] is True and approval["widens"] == ["network"]
            prompt = model.requests[1].prompt_text()
            assert ("APPROVAL_DENIED" in prompt) is (not approved)
        finally:
            await client.shutdown_session()


async def test_approval_timeout_is_a_denial(repo: Path, tmp_path: Path) -> None:
    turns = [
        '```python\nprint(run_cmd(command="pip install numpy"))\n```',
        DONE,
    ]
    recorder = Recorder(approval_answer="Run", approval_delay=5.0)
    with ScriptedModel(turns) as model:
        env = daemon_env(model.env(), tmp_path) | {"APPROVAL_TIMEOUT_S": "1"}
        client = await start_daemon(repo, recorder, env=env)
        try:
            result = await chat(client, "install numpy")
            assert result["status"] == "completed"
            [approval] = recorder.of("approval")
            assert approval["decision"] == "denied"
            assert "no answer within 1 s" in model.requests[1].prompt_text()
        finally:
            await client.shutdown_session()


async def test_deny_verdict_is_never_asked(repo: Path, tmp_path: Path) -> None:
    recorder = Recorder(approval_answer="Run")
    with ScriptedModel(transcripts.risky_commands()) as model:
        client = await start_daemon(repo, recorder, env=daemon_env(model.env(), tmp_path))
        try:
            await chat(client, "clean up")
            asked = [r.message for r in recorder.requests]
            assert not any("rm -rf /" in m for m in asked)
            assert any("pip install numpy" in m for m in asked)
            assert "COMMAND_DENIED" in model.requests[1].prompt_text()
        finally:
            await client.shutdown_session()


async def test_cancel_request_stops_the_run_with_no_model_call_after(
    repo: Path, tmp_path: Path
) -> None:
    recorder = Recorder()
    with ScriptedModel(
        transcripts.streams_forever(), fallback='```python\nfinal_answer("late")\n```'
    ) as model:
        model.strict = False
        client = await start_daemon(repo, recorder, env=daemon_env(model.env(), tmp_path))
        try:
            pending = asyncio.ensure_future(chat(client, "think", msg_id="chat-1"))
            await wait_until(lambda: "text" in recorder.kinds())
            client.protocol.notify("$/cancelRequest", types.CancelParams(id="chat-1"))
            result = await asyncio.wait_for(pending, 30)
            assert result["status"] == "cancelled"
            await asyncio.sleep(0.5)
            assert len(model.requests) == 1
            # The daemon is still serving.
            assert _plain(await client.protocol.send_request_async("smol/patches", {})) == {
                "patches": []
            }
        finally:
            await client.shutdown_session()


async def test_progress_cancel_stops_the_run(repo: Path, tmp_path: Path) -> None:
    recorder = Recorder()
    with ScriptedModel(
        transcripts.streams_forever(), fallback='```python\nfinal_answer("late")\n```'
    ) as model:
        model.strict = False
        client = await start_daemon(repo, recorder, env=daemon_env(model.env(), tmp_path))
        try:
            pending = asyncio.ensure_future(chat(client, "think", workDoneToken="tok-1"))
            await wait_until(lambda: "text" in recorder.kinds())
            client.window_work_done_progress_cancel(
                types.WorkDoneProgressCancelParams(token="tok-1")
            )
            result = await asyncio.wait_for(pending, 30)
            assert result["status"] == "cancelled"
            assert len(model.requests) == 1
        finally:
            await client.shutdown_session()


async def test_two_sessions_at_once_keep_their_events_apart(repo: Path, tmp_path: Path) -> None:
    recorder = Recorder()
    slow = Turn('```python\nfinal_answer("one")\n```', delta_delay_s=0.02, chunk_chars=2)
    with ScriptedModel(
        [
            slow,
            slow.__class__(
                '```python\nfinal_answer("two")\n```', delta_delay_s=0.02, chunk_chars=2
            ),
        ]
    ) as model:
        model.strict = False
        client = await start_daemon(repo, recorder, env=daemon_env(model.env(), tmp_path))
        try:
            one, two = await asyncio.gather(
                chat(client, "first", "s-one"), chat(client, "second", "s-two")
            )
            assert {one["answer"], two["answer"]} == {"one", "two"}
            for sid in ("s-one", "s-two"):
                events = [e for e in recorder.events if e["sessionId"] == sid]
                assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
                assert events[-1]["kind"] == "final"
            # They ran at the same time: each began before the other ended.
            order = [(e["sessionId"], e["kind"]) for e in recorder.events]
            for sid, other in (("s-one", "s-two"), ("s-two", "s-one")):
                assert order.index((sid, "step")) < order.index((other, "final"))
        finally:
            await client.shutdown_session()


async def test_editor_stays_responsive_during_a_run(repo: Path, tmp_path: Path) -> None:
    recorder = Recorder()
    with ScriptedModel(
        transcripts.streams_forever(), fallback='```python\nfinal_answer("x")\n```'
    ) as model:
        model.strict = False
        client = await start_daemon(repo, recorder, env=daemon_env(model.env(), tmp_path))
        try:
            pending = asyncio.ensure_future(chat(client, "think", msg_id="busy"))
            await wait_until(lambda: "text" in recorder.kinds())
            await client.protocol.send_request_async("smol/patches", {})
            uri = (repo / "app/calc.py").as_uri()
            span = types.Range(
                start=types.Position(line=0, character=0), end=types.Position(line=1, character=0)
            )
            actions = await code_actions(client, uri, span)
            # Answered while the run was still streaming: the run does not block the editor.
            assert not pending.done() and "final" not in recorder.kinds()
            assert [a["title"] for a in actions] == ["Ask agent about selection"]
            client.protocol.notify("$/cancelRequest", types.CancelParams(id="busy"))
            await asyncio.wait_for(pending, 30)
        finally:
            await client.shutdown_session()


@pytest.mark.parametrize(
    "turn",
    [
        Turn(status=500, error="the model crashed"),
        Turn(body="this is not JSON {", content_type="application/json"),
    ],
    ids=["http-500", "garbage"],
)
async def test_model_faults_give_an_error_event_and_the_daemon_keeps_serving(
    repo: Path, tmp_path: Path, turn: Turn
) -> None:
    recorder = Recorder()
    with ScriptedModel([turn], fallback=turn) as model:
        model.strict = False
        client = await start_daemon(repo, recorder, env=daemon_env(model.env(), tmp_path))
        try:
            result = await chat(client, "hello")
            assert result["status"] == "failed"
            assert recorder.of("error")
            model.extend(transcripts.final_answer_only("still here"))
            model._fallback = None
            again = await chat(client, "hello again")
            assert again["status"] in {"completed", "failed"}
            assert _plain(await client.protocol.send_request_async("smol/patches", {})) == {
                "patches": []
            }
        finally:
            await client.shutdown_session()


async def test_model_server_down_is_a_clear_error(repo: Path, tmp_path: Path) -> None:
    recorder = Recorder()
    client = await start_daemon(
        repo, recorder, env=daemon_env({"MODEL_API_BASE": "http://127.0.0.1:9/v1"}, tmp_path)
    )
    try:
        result = await chat(client, "hello")
        assert result["status"] == "failed"
        [error] = recorder.of("error")
        assert "cannot reach the model server" in error["message"]
        assert "ollama" in error["recoverySuggestion"].lower()
    finally:
        await client.shutdown_session()


async def test_model_that_streams_forever_is_cut(repo: Path, tmp_path: Path) -> None:
    recorder = Recorder()
    with ScriptedModel(
        transcripts.streams_forever(), fallback='```python\nfinal_answer("after")\n```'
    ) as model:
        model.strict = False
        env = daemon_env(model.env(), tmp_path) | {"MODEL_MAX_TOKENS": "64", "AGENT_MAX_STEPS": "2"}
        client = await start_daemon(repo, recorder, env=env)
        try:
            result = await asyncio.wait_for(chat(client, "talk"), 60)
            assert result["status"] in {"completed", "max_steps", "failed"}
            assert _plain(await client.protocol.send_request_async("smol/patches", {})) == {
                "patches": []
            }
        finally:
            await client.shutdown_session()


async def test_invalid_settings_are_an_lsp_error_message_not_a_crash(
    repo: Path, tmp_path: Path
) -> None:
    recorder = Recorder()
    client = await start_daemon(
        repo, recorder, env=daemon_env(tmp=tmp_path), settings={"modelTemperature": "hot"}
    )
    try:
        await wait_until(lambda: any("modelTemperature" in m.message for m in recorder.messages))
        client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"settings": {"agentMaxSteps": 0}})
        )
        await wait_until(lambda: any("agentMaxSteps" in m.message for m in recorder.messages))
        # VS Code's shape: the section nested under its name.
        client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(
                settings={"settings": {"smolInstruments": {"modelMaxTokens": 1}}}
            )
        )
        await wait_until(lambda: any("modelMaxTokens" in m.message for m in recorder.messages))
        assert _plain(await client.protocol.send_request_async("smol/patches", {})) == {
            "patches": []
        }
    finally:
        await client.shutdown_session()


async def test_ask_about_selection_without_a_question_uses_the_default(
    repo: Path, tmp_path: Path
) -> None:
    recorder = Recorder()
    answer = "add() subtracts: it should return a + b."
    with ScriptedModel(transcripts.conversational_final_answer(answer)) as model:
        client = await start_daemon(repo, recorder, env=daemon_env(model.env(), tmp_path))
        uri = (repo / "app/calc.py").as_uri()
        try:
            span = {"start": {"line": 0, "character": 0}, "end": {"line": 2, "character": 0}}
            result = await client.workspace_execute_command_async(
                types.ExecuteCommandParams(
                    command="smol.askAboutSelection", arguments=[{"uri": uri, "range": span}]
                )
            )
            assert _plain(result)["answer"] == answer
            prompt = model.requests[0].prompt_text()
            assert "Explain this code and point out problems." in prompt
            assert "return a - b" in prompt and "app/calc.py" in prompt
            await wait_until(lambda: any(m.message == answer for m in recorder.messages))
        finally:
            await client.shutdown_session()


def test_client_that_dies_mid_run_stops_the_daemon_and_its_children(
    repo: Path, tmp_path: Path
) -> None:
    """Kill the editor side: the daemon must kill the running command and exit."""
    # A duration of its own, so another test run on the machine cannot match it.
    sleep = f"sleep 41.{os.getpid()}"
    turns = [f'```python\nprint(run_cmd(command="{sleep}"))\n```']
    with ScriptedModel(turns, fallback='```python\nfinal_answer("x")\n```') as model:
        model.strict = False
        from bench.lsp_client import StdioClient

        client = StdioClient(
            [sys.executable, "-m", "smol_instruments", "serve"],
            env=daemon_env(model.env(), tmp_path),
        )
        client.on_request = lambda message: {"title": "Run"}  # approve the command if asked
        daemon = client.proc
        client.initialize(repo, capabilities={"window": {"showMessage": {"messageActionItem": {}}}})
        client.send_request("smol/chat", {"message": "sleep"})
        deadline = time.monotonic() + 120  # a deadlock guard, not a speed target
        while time.monotonic() < deadline:
            if subprocess.run(["pgrep", "-f", sleep], capture_output=True).stdout.strip():
                break
            time.sleep(0.1)
        else:
            pytest.fail("the command never started")
        # The editor goes away: its end of the pipes closes.
        assert daemon.stdin is not None
        daemon.stdin.close()
        daemon.wait(timeout=20)
        time.sleep(0.3)
        assert subprocess.run(["pgrep", "-f", sleep], capture_output=True).stdout.strip() == b""
        if daemon.poll() is None:  # pragma: no cover - cleanup on failure
            os.kill(daemon.pid, signal.SIGKILL)


@pytest.mark.parametrize("saved", [False, True])
async def test_saving_a_file_resets_loop_detection(repo: Path, tmp_path: Path, saved: bool) -> None:
    recorder = Recorder()
    with ScriptedModel([READ_CALC, DONE, READ_CALC, DONE]) as model:
        client = await start_daemon(repo, recorder, env=daemon_env(model.env(), tmp_path))
        try:
            await chat(client, "read it", "s-loop")
            if saved:  # the user edits and saves the file in the editor
                uri = (repo / "app/calc.py").as_uri()
                client.text_document_did_save(
                    types.DidSaveTextDocumentParams(
                        text_document=types.TextDocumentIdentifier(uri=uri)
                    )
                )
                await asyncio.sleep(0.2)
            await chat(client, "read it again", "s-loop")
            second_read = model.requests[3].prompt_text()
        finally:
            await client.shutdown_session()
    assert ("LOOP_DETECTED" in second_read) is not saved


async def test_the_agent_reads_what_the_editor_shows_unsaved_edits_too(
    repo: Path, tmp_path: Path
) -> None:
    """A file open in the editor with unsaved edits is read as the editor has it (didOpen and
    didChange through the real daemon); a file it has not opened, or has closed, from disk."""
    calc = repo / "app/calc.py"
    on_disk = calc.read_text()
    unsaved = on_disk + "\n\ndef unsaved_helper():\n    return 42\n"
    recorder = Recorder()
    with ScriptedModel([READ_CALC, DONE, READ_CALC, DONE]) as model:
        client = await start_daemon(repo, recorder, env=daemon_env(model.env(), tmp_path))
        try:
            uri = calc.as_uri()
            open_document(client, uri, on_disk)
            client.text_document_did_change(  # the user types; nothing is saved
                types.DidChangeTextDocumentParams(
                    text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
                    content_changes=[types.TextDocumentContentChangeWholeDocument(text=unsaved)],
                )
            )
            await chat(client, "read calc", "s-open")
            client.text_document_did_close(
                types.DidCloseTextDocumentParams(
                    text_document=types.TextDocumentIdentifier(uri=uri)
                )
            )
            await chat(client, "read calc again", "s-closed")
        finally:
            await client.shutdown_session()
    open_read, closed_read = (
        "\n".join(str(e.get("text") or e.get("output") or e) for e in recorder.of("observation", s))
        for s in ("s-open", "s-closed")
    )
    assert "unsaved_helper" in open_read
    assert "unsaved_helper" not in closed_read and "def add" in closed_read  # the control
    assert calc.read_text() == on_disk  # reading the buffer wrote nothing


async def test_a_change_to_unsaved_text_is_proposed_and_applied_to_the_buffer(
    repo: Path, tmp_path: Path
) -> None:
    """The model changes a line that exists only in the editor's buffer: the patch is made
    against that text and the accept's WorkspaceEdit lands exactly on it."""
    from tests.support.lsp import apply_text_edits

    calc = repo / "app/calc.py"
    on_disk = calc.read_text()
    unsaved = on_disk + "\n\ndef unsaved_helper():\n    return 42\n"
    propose = (
        '```python\nprint(propose_patch(path="app/calc.py", old_text="    return 42", '
        'new_text="    return 43", description="the helper answers 43"))\n```'
    )
    recorder = Recorder()
    with ScriptedModel([propose, DONE]) as model:
        client = await start_daemon(repo, recorder, env=daemon_env(model.env(), tmp_path))
        try:
            uri = calc.as_uri()
            open_document(client, uri, unsaved)
            await chat(client, "make the helper answer 43")
            [patch] = _plain(await client.protocol.send_request_async("smol/patches", {}))[
                "patches"
            ]
            assert calc.read_text() == on_disk  # proposed, nothing written
            recorder.apply_edits = False  # the fake editor would apply it to the disk's text
            with pytest.raises(Exception, match="not applied"):
                await client.workspace_execute_command_async(
                    types.ExecuteCommandParams(command="smol.acceptPatch", arguments=[patch["id"]])
                )
        finally:
            await client.shutdown_session()
    [edit] = recorder.edits
    [document_edit] = edit.edit.document_changes or []
    assert isinstance(document_edit, types.TextDocumentEdit)
    assert apply_text_edits(unsaved, list(document_edit.edits)) == unsaved.replace(
        "return 42", "return 43"
    )
    assert calc.read_text() == on_disk
