"""The daemon's patch flow through a real LSP client: diagnostics, code actions, accept, reject."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from tests.support.lsp import Recorder, code_actions, daemon_env, start_daemon, wait_until

from smol_instruments.patches.store import FileChange, Patch, PatchStore

pytestmark = pytest.mark.timeout(120)


def seed_patch(repo: Path, path: str, old: str, new: str, summary: str = "fix add") -> Patch:
    """A pending patch persisted where the daemon loads it from (as after a window reload)."""
    store = PatchStore(repo, repo / ".git" / "smol-instruments" / "patches")
    text = (repo / path).read_text()
    assert text.count(old) == 1
    patch = Patch(
        id=store.new_id(), summary=summary, files=[FileChange(path, text, text.replace(old, new))]
    )
    patch.validation = {"backend": "none", "applies": True, "checks": []}
    return store.add(patch)


def digest(repo: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(p for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts):
        h.update(str(path).encode() + path.read_bytes())
    return h.hexdigest()


async def test_initialize_advertises_the_contract(repo: Path, tmp_path: Path) -> None:
    recorder = Recorder()
    client = await start_daemon(repo, recorder, env=daemon_env(tmp=tmp_path))
    try:
        assert recorder.initialize_result is not None
        caps = recorder.initialize_result.capabilities
        sync = caps.text_document_sync
        kind = sync.change if isinstance(sync, types.TextDocumentSyncOptions) else sync
        assert kind == types.TextDocumentSyncKind.Incremental
        commands = set(caps.execute_command_provider.commands)  # type: ignore[union-attr]
        assert {"smol.acceptPatch", "smol.rejectPatch", "smol.askAboutSelection"} <= commands
        assert caps.code_action_provider
        result = await client.protocol.send_request_async("smol/patches", {})
        assert _plain(result) == {"patches": []}
    finally:
        await client.shutdown_session()


async def test_pending_patch_is_redrawn_with_diagnostics_and_actions(
    repo: Path, tmp_path: Path
) -> None:
    patch = seed_patch(repo, "app/calc.py", "return a - b", "return a + b")
    recorder = Recorder()
    client = await start_daemon(repo, recorder, env=daemon_env(tmp=tmp_path))
    uri = (repo / "app/calc.py").as_uri()
    try:
        await wait_until(lambda: bool(recorder.diagnostics.get(uri)))
        [diagnostic] = recorder.diagnostics[uri]
        assert diagnostic.source == "smol-instruments"
        assert diagnostic.code == patch.id
        assert diagnostic.severity == types.DiagnosticSeverity.Information
        assert diagnostic.message == "Agent proposes: fix add (+1 −1)"
        assert diagnostic.range.start.line == 1
        listing = _plain(await client.protocol.send_request_async("smol/patches", {}))
        [item] = listing["patches"]
        assert item["id"] == patch.id and item["status"] == "pending"
        assert item["files"][0]["uri"] == uri
        assert item["files"][0]["hunks"][0]["newText"] == "    return a + b\n"
        actions = await code_actions(client, uri, diagnostic.range, [diagnostic])
        titles = {a["title"]: a for a in actions}
        assert titles["Accept agent patch"]["command"] == {
            "title": "Accept agent patch",
            "command": "smol.acceptPatch",
            "arguments": [patch.id],
        }
        assert titles["Reject agent patch"]["command"]["command"] == "smol.rejectPatch"
        assert "Ask agent about selection" in titles  # the range is not empty
    finally:
        await client.shutdown_session()


async def test_accept_applies_through_the_editor(repo: Path, tmp_path: Path) -> None:
    patch = seed_patch(repo, "app/calc.py", "return a - b", "return a + b")
    recorder = Recorder()
    client = await start_daemon(repo, recorder, env=daemon_env(tmp=tmp_path))
    uri = (repo / "app/calc.py").as_uri()
    try:
        result = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="smol.acceptPatch", arguments=[patch.id])
        )
        assert _plain(result) == {"patchId": patch.id, "status": "accepted"}
        [edit] = recorder.edits
        assert edit.label == "Agent patch: fix add"
        assert "return a + b" in (repo / "app/calc.py").read_text()
        assert "return a - b" not in (repo / "app/calc.py").read_text()
        await wait_until(
            lambda: uri in recorder.diagnostics and len(recorder.diagnostics[uri]) == 0
        )
        listing = _plain(await client.protocol.send_request_async("smol/patches", {}))
        assert listing["patches"][0]["status"] == "accepted"
    finally:
        await client.shutdown_session()


async def test_reject_changes_nothing(repo: Path, tmp_path: Path) -> None:
    patch = seed_patch(repo, "app/calc.py", "return a - b", "return a + b")
    before = digest(repo)
    recorder = Recorder()
    client = await start_daemon(repo, recorder, env=daemon_env(tmp=tmp_path))
    try:
        result = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="smol.rejectPatch", arguments=[patch.id, {"reason": "not now"}]
            )
        )
        assert _plain(result) == {"patchId": patch.id, "status": "rejected"}
        assert recorder.edits == []
        assert digest(repo) == before
    finally:
        await client.shutdown_session()


async def test_buffer_edited_after_proposal_makes_it_stale(repo: Path, tmp_path: Path) -> None:
    patch = seed_patch(repo, "app/calc.py", "return a - b", "return a + b")
    recorder = Recorder()
    client = await start_daemon(repo, recorder, env=daemon_env(tmp=tmp_path))
    uri = (repo / "app/calc.py").as_uri()
    before = digest(repo)
    try:
        text = (repo / "app/calc.py").read_text()
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id="python", version=1, text=text
                )
            )
        )
        # The user types in the editor (unsaved): the buffer no longer matches the patch's base.
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
                content_changes=[
                    types.TextDocumentContentChangePartial(
                        range=types.Range(
                            start=types.Position(line=0, character=0),
                            end=types.Position(line=0, character=0),
                        ),
                        text="# edited\n",
                    )
                ],
            )
        )
        with pytest.raises(Exception, match="stale"):
            await client.workspace_execute_command_async(
                types.ExecuteCommandParams(command="smol.acceptPatch", arguments=[patch.id])
            )
        assert recorder.edits == []
        assert digest(repo) == before
        listing = _plain(await client.protocol.send_request_async("smol/patches", {}))
        assert listing["patches"][0]["status"] == "stale"
    finally:
        await client.shutdown_session()


async def test_client_without_apply_edit_gets_an_atomic_write(repo: Path, tmp_path: Path) -> None:
    patch = seed_patch(repo, "app/calc.py", "return a - b", "return a + b")
    recorder = Recorder()
    client = await start_daemon(repo, recorder, env=daemon_env(tmp=tmp_path), apply_edit=False)
    try:
        result = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="smol.acceptPatch", arguments=[patch.id])
        )
        assert _plain(result)["status"] == "accepted"
        assert recorder.edits == []  # the daemon wrote it itself
        assert "return a + b" in (repo / "app/calc.py").read_text()
        leftovers = [p.name for p in (repo / "app").iterdir() if p.name.endswith(".smol-tmp")]
        assert leftovers == []
    finally:
        await client.shutdown_session()


async def test_bad_command_arguments_are_an_lsp_error_and_the_daemon_stays_up(
    repo: Path, tmp_path: Path
) -> None:
    recorder = Recorder()
    client = await start_daemon(repo, recorder, env=daemon_env(tmp=tmp_path))
    try:
        for arguments in ([], [42], ["nope"], [{"x": 1}]):
            with pytest.raises(Exception):  # noqa: B017 - any LSP error, as long as the server lives
                await client.workspace_execute_command_async(
                    types.ExecuteCommandParams(command="smol.acceptPatch", arguments=arguments)
                )
        with pytest.raises(Exception, match="message"):
            await client.protocol.send_request_async("smol/chat", {"sessionId": 3})
        assert _plain(await client.protocol.send_request_async("smol/patches", {})) == {
            "patches": []
        }
    finally:
        await client.shutdown_session()


def _plain(value: Any) -> Any:
    from tests.support.lsp import _plain as plain

    return plain(value)
