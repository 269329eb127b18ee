"""A real LSP client (pytest-lsp) talking to the real daemon subprocess.

`start_daemon` launches `python -m smol_instruments serve` with the given environment, records
every `smol/event`, diagnostics and log message, and lets a test decide how the client answers
`workspace/applyEdit` and `window/showMessageRequest`.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import make_test_lsp_client

from smol_instruments.lsp.protocol import to_plain

SETTING_NAMES = (
    "MODEL_BACKEND",
    "MODEL_ID",
    "MODEL_API_BASE",
    "MODEL_API_KEY",
    "PHOENIX_ENABLED",
    "PHOENIX_ENDPOINT",
    "SANDBOX_BACKEND",
    "AGENT_MAX_STEPS",
    "APPROVAL_TIMEOUT_S",
    "LOG_FILE",
    "LOG_LEVEL",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
)


@dataclass
class Recorder:
    """What the client received from the daemon."""

    events: list[dict[str, Any]] = field(default_factory=list)
    client: Any = None
    initialize_result: types.InitializeResult | None = None
    requests: list[types.ShowMessageRequestParams] = field(default_factory=list)
    approvals: list[dict[str, Any]] = field(default_factory=list)  # smol/approval params
    approvals_cancelled: int = 0  # smol/approval requests the daemon cancelled
    edits: list[types.ApplyWorkspaceEditParams] = field(default_factory=list)
    # How the client answers: title of the action to pick (None: dismiss); applyEdit behaviour.
    approval_answer: str | None = "Run"
    approval_delay: float = 0.0
    apply_edits: bool = True

    @property
    def diagnostics(self) -> dict[str, list[types.Diagnostic]]:
        return dict(self.client.diagnostics) if self.client is not None else {}

    @property
    def messages(self) -> list[types.ShowMessageParams]:
        return list(self.client.messages) if self.client is not None else []

    def kinds(self, session_id: str | None = None) -> list[str]:
        return [
            e["kind"] for e in self.events if session_id is None or e["sessionId"] == session_id
        ]

    def of(self, kind: str, session_id: str | None = None) -> list[dict[str, Any]]:
        return [
            e
            for e in self.events
            if e["kind"] == kind and (session_id is None or e["sessionId"] == session_id)
        ]


def daemon_env(extra: dict[str, str] | None = None, tmp: Path | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k.upper() not in SETTING_NAMES}
    env.update(
        {
            "PHOENIX_ENABLED": "false",
            "SANDBOX_BACKEND": "none",
            "MODEL_BACKEND": "server",
            "MODEL_ID": "openai/scripted",
            "MODEL_API_BASE": "http://127.0.0.1:9/v1",
            "MODEL_API_KEY": "test",
            "APPROVAL_TIMEOUT_S": "10",
        }
    )
    if tmp is not None:
        env["LOG_FILE"] = str(tmp / "daemon.log")
    env.update(extra or {})
    return env


def apply_text_edits(text: str, edits: list[Any]) -> str:
    """Apply LSP TextEdits (ranges in the original text) the way an editor does."""
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))

    def offset(pos: types.Position) -> int:
        return len(text) if pos.line >= len(lines) else offsets[pos.line] + pos.character

    result = text
    for edit in sorted(
        edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True
    ):
        start, end = offset(edit.range.start), offset(edit.range.end)
        result = result[:start] + edit.new_text + result[end:]
    return result


def _apply_locally(params: types.ApplyWorkspaceEditParams) -> None:
    """Apply a WorkspaceEdit to files on disk, as an editor (then saving) would."""
    from urllib.parse import unquote, urlparse

    for change in params.edit.document_changes or []:
        if isinstance(change, types.CreateFile):
            path = Path(unquote(urlparse(change.uri).path))
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch()
        elif isinstance(change, types.DeleteFile):
            Path(unquote(urlparse(change.uri).path)).unlink(missing_ok=True)
        elif isinstance(change, types.TextDocumentEdit):
            path = Path(unquote(urlparse(change.text_document.uri).path))
            old = path.read_bytes().decode("utf-8", "surrogateescape") if path.exists() else ""
            path.write_text(apply_text_edits(old, list(change.edits)))


def client_factory(recorder: Recorder, profile: str) -> Callable[[], LanguageClient]:
    def make() -> LanguageClient:
        client = make_test_lsp_client()

        @client.feature("smol/event")
        def on_event(_client: LanguageClient, params: Any) -> None:
            recorder.events.append(_plain(params))

        # Diagnostics and window/showMessage are recorded by pytest-lsp's own handlers.
        recorder.client = client

        @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
        async def on_request(
            _client: LanguageClient, params: types.ShowMessageRequestParams
        ) -> types.MessageActionItem | None:
            recorder.requests.append(params)
            if recorder.approval_delay:
                await asyncio.sleep(recorder.approval_delay)
            if recorder.approval_answer is None:
                return None
            return types.MessageActionItem(title=recorder.approval_answer)

        @client.feature("smol/approval")
        async def on_approval(_client: LanguageClient, params: Any) -> dict[str, str] | None:
            recorder.approvals.append(_plain(params))
            try:
                await asyncio.sleep(recorder.approval_delay)
            except asyncio.CancelledError:
                recorder.approvals_cancelled += 1
                raise
            return None if recorder.approval_answer is None else {"title": recorder.approval_answer}

        @client.feature(types.WORKSPACE_APPLY_EDIT)
        def on_apply(
            _client: LanguageClient, params: types.ApplyWorkspaceEditParams
        ) -> types.ApplyWorkspaceEditResult:
            recorder.edits.append(params)
            if not recorder.apply_edits:
                return types.ApplyWorkspaceEditResult(applied=False, failure_reason="user declined")
            _apply_locally(params)
            return types.ApplyWorkspaceEditResult(applied=True)

        return client

    return make


def _plain(value: Any) -> Any:
    return to_plain(value)


def capabilities(profile: str, *, apply_edit: bool = True) -> types.ClientCapabilities:
    caps = client_capabilities(profile)
    if not apply_edit and caps.workspace is not None:
        caps.workspace.apply_edit = False
    return caps


async def start_daemon(
    root: Path,
    recorder: Recorder,
    *,
    env: dict[str, str] | None = None,
    profile: str = "visual-studio-code",
    apply_edit: bool = True,
    settings: dict[str, Any] | None = None,
    options: dict[str, Any] | None = None,
    cwd: Path | None = None,
) -> LanguageClient:
    """The daemon started in `cwd` (default: the test's), initialized for `root`. An editor
    starts it in the workspace folder, where it reads that folder's `.env`."""
    client = client_factory(recorder, profile)()
    await client.start_io(
        sys.executable,
        "-m",
        "smol_instruments",
        "serve",
        env=env,
        cwd=None if cwd is None else str(cwd),
    )
    recorder.initialize_result = await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities(profile, apply_edit=apply_edit),
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
            initialization_options={"settings": settings or {}} | (options or {}),
        )
    )
    return client


async def wait_until(predicate: Callable[[], bool], timeout: float = 90.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.02)


async def code_actions(
    client: LanguageClient,
    uri: str,
    span: types.Range,
    diagnostics: list[types.Diagnostic] | None = None,
) -> list[dict[str, Any]]:
    """The code actions for a range, as plain dicts.

    The client's converter structures the `Command | CodeAction` union as a Command whose
    `command` is the CodeAction's repr; undo that here, so tests see what the daemon sent.
    """
    import ast

    result = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=span,
            context=types.CodeActionContext(diagnostics=diagnostics or []),
        )
    )
    actions = []
    for item in result or []:
        if isinstance(item, types.Command) and item.command.startswith("{"):
            actions.append({"title": item.title, "command": ast.literal_eval(item.command)})
        else:
            actions.append(client.protocol._converter.unstructure(item))
    return actions
