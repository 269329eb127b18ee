"""`smol/chat` and `smol.askAboutSelection`: conversations with the agent over LSP.

Each conversation is an AgentSession running in its own worker thread; the event loop stays
free, so code actions and `smol/patches` answer while runs are in progress. Events reach the
client as ordered `smol/event` notifications; work-done progress reports the steps, and a
cancel from the progress UI or `$/cancelRequest` stops the run within one step.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import uuid
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from .approvals import EditorApprover
from .protocol import (
    CHAT,
    CMD_ASK_ABOUT_SELECTION,
    DEFAULT_QUESTION,
    EVENT,
    AskAboutSelectionArgs,
    ChatParams,
    Selection,
    command_arguments,
    to_plain,
)
from .server import SmolLanguageServer

if TYPE_CHECKING:
    from ..agent.session import AgentSession, RunOutcome

log = logging.getLogger(__name__)

MAX_IDLE_SESSIONS = 32
MAX_SELECTION_CHARS = 20_000


class HostedSession:
    """An AgentSession plus what the daemon tracks for it."""

    def __init__(self, session: AgentSession) -> None:
        self.session = session
        self.running = 0
        self.progress_token: str | int | None = None


class ChatService:
    def __init__(self, server: SmolLanguageServer) -> None:
        self.server = server
        self.sessions: OrderedDict[str, HostedSession] = OrderedDict()
        self._lock = threading.Lock()
        self.runner = concurrent.futures.ThreadPoolExecutor(
            max_workers=8, thread_name_prefix="smol-run"
        )

    # --- sessions -----------------------------------------------------------------------

    def _new_session(self, session_id: str) -> HostedSession:
        from ..agent.session import AgentSession

        server = self.server
        if server.root is None or server.patch_store is None:
            raise JsonRpcInvalidParams(message="initialize the server with a workspace first")
        hosted: HostedSession | None = None

        def sink(event: dict[str, Any]) -> None:
            server.notify(EVENT, event)
            if hosted is not None and hosted.progress_token is not None:
                self._report(hosted.progress_token, event)

        approver = EditorApprover(server)
        session = AgentSession(
            server.root,
            server.settings,
            approver=approver,
            events=sink,
            sandbox=_open_sandbox(server),
            patches=server.patch_store,
            session_id=session_id,
        )
        approver.cancel = session.cancel_event  # a cancel also ends a wait for a decision
        hosted = HostedSession(session)
        return hosted

    async def _session(self, session_id: str | None) -> HostedSession:
        sid = session_id or uuid.uuid4().hex[:12]
        with self._lock:
            hosted = self.sessions.get(sid)
            if hosted is not None:
                self.sessions.move_to_end(sid)
                return hosted
        loop = asyncio.get_running_loop()
        hosted = await loop.run_in_executor(self.runner, self._new_session, sid)
        with self._lock:
            existing = self.sessions.get(sid)
            if existing is not None:  # created concurrently by another request
                hosted.session.close()
                return existing
            self.sessions[sid] = hosted
            self._evict()
        return hosted

    def _evict(self) -> None:
        idle = [sid for sid, h in self.sessions.items() if h.running == 0]
        for sid in idle[: max(0, len(self.sessions) - MAX_IDLE_SESSIONS)]:
            hosted = self.sessions.pop(sid)
            self.runner.submit(hosted.session.close)

    # --- progress -----------------------------------------------------------------------

    async def _begin_progress(self, hosted: HostedSession, token: str | int | None) -> None:
        progress = self.server.work_done_progress
        if token is None:
            if not self.server.client_supports("window", "work_done_progress"):
                return
            token = f"smol-{uuid.uuid4().hex[:12]}"
            try:
                await progress.create_async(token)
            except Exception as exc:
                log.info("client refused a progress token: %s", exc)
                return
        hosted.progress_token = token
        progress.begin(
            token, types.WorkDoneProgressBegin(title="Agent", cancellable=True, message="starting")
        )
        future = progress.tokens.get(token)
        if future is not None:
            session = hosted.session
            future.add_done_callback(lambda f: session.cancel() if f.cancelled() else None)

    def _report(self, token: str | int, event: dict[str, Any]) -> None:
        kind = event.get("kind")
        if kind == "step":
            message = f"step {event['step']}/{event['maxSteps']}"
        elif kind == "tool":
            message = f"{event['name']}({', '.join(map(str, event.get('args', {}).values()))[:60]})"
        else:
            return
        self.server.post(
            self.server.work_done_progress.report,
            token,
            types.WorkDoneProgressReport(message=message),
        )

    def _end_progress(self, hosted: HostedSession, outcome: RunOutcome | None) -> None:
        token = hosted.progress_token
        hosted.progress_token = None
        if token is None:
            return
        message = outcome.status if outcome is not None else "failed"
        self.server.work_done_progress.end(token, types.WorkDoneProgressEnd(message=message))
        self.server.work_done_progress.tokens.pop(token, None)

    # --- runs ---------------------------------------------------------------------------

    async def run(
        self, message: str, session_id: str | None, token: str | int | None
    ) -> RunOutcome:
        hosted = await self._session(session_id)
        hosted.running += 1
        loop = asyncio.get_running_loop()
        await self._begin_progress(hosted, token)
        future = loop.run_in_executor(self.runner, hosted.session.run, message)
        outcome: RunOutcome | None = None
        try:
            try:
                outcome = await asyncio.shield(future)
            except asyncio.CancelledError:
                # $/cancelRequest: stop the run, then answer with status "cancelled".
                hosted.session.cancel()
                outcome = await asyncio.wait_for(asyncio.shield(future), timeout=30)
            return outcome
        finally:
            hosted.running -= 1
            self._end_progress(hosted, outcome)

    async def chat(self, raw: Any) -> dict[str, Any]:
        params = _structure(self.server, raw, ChatParams)
        if not params.message.strip():
            raise JsonRpcInvalidParams(message="message is empty")
        text = self._with_selections(params.message, params.selections)
        outcome = await self.run(text, params.sessionId, params.workDoneToken)
        return outcome.to_dict()

    async def ask_about_selection(self, args: tuple[Any, ...]) -> dict[str, Any]:
        values = command_arguments(args)
        if not values or not isinstance(values[0], dict):
            raise JsonRpcInvalidParams(message="expected arguments [{uri, range, question?}]")
        request = _structure(self.server, values[0], AskAboutSelectionArgs)
        question = (request.question or "").strip() or DEFAULT_QUESTION
        text = self._with_selections(question, [Selection(uri=request.uri, range=request.range)])
        outcome = await self.run(text, None, None)
        self.server.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Info, message=outcome.answer[:4000])
        )
        return outcome.to_dict()

    def _with_selections(self, message: str, selections: list[Selection]) -> str:
        parts = [message.strip()]
        root = self.server.root or Path.cwd()
        for selection in selections:
            text = selection.text or self._text_in(selection.uri, selection.range)
            if not text.strip():
                continue
            path = _relative(selection.uri, root)
            first, last = selection.range.start.line + 1, selection.range.end.line + 1
            parts.append(
                f"Selected code from {path}, lines {first}-{last}:\n```\n{text[:MAX_SELECTION_CHARS]}\n```"
            )
        return "\n\n".join(parts)

    def _text_in(self, uri: str, span: types.Range) -> str:
        text = self.server.document_text(uri)
        if text is None:
            from ..patches.store import read_text

            path = _relative(uri, self.server.root or Path.cwd())
            text = read_text((self.server.root or Path.cwd()) / path) or ""
        lines = text.splitlines(keepends=True)
        chosen = lines[span.start.line : span.end.line + 1]
        if not chosen:
            return ""
        if len(chosen) == 1:
            return chosen[0][span.start.character : span.end.character or None]
        chosen[0] = chosen[0][span.start.character :]
        chosen[-1] = chosen[-1][: span.end.character] if span.end.character else chosen[-1]
        return "".join(chosen)

    def files_changed(self) -> None:
        """The user saved a file: re-reading it is no longer a loop for any session."""
        with self._lock:
            hosted = list(self.sessions.values())
        for item in hosted:
            item.session.state.mark_changed()

    def close(self) -> None:
        with self._lock:
            hosted = list(self.sessions.values())
            self.sessions.clear()
        for item in hosted:
            item.session.cancel()
        for item in hosted:
            try:
                item.session.close()
            except Exception:
                log.exception("closing a session failed")
        self.runner.shutdown(wait=False, cancel_futures=True)


def _relative(uri: str, root: Path) -> str:
    from urllib.parse import unquote, urlparse

    path = Path(unquote(urlparse(uri).path))
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def _structure(server: SmolLanguageServer, raw: Any, kind: type[Any]) -> Any:
    try:
        return server.protocol._converter.structure(to_plain(raw), kind)
    except Exception as exc:
        detail = "; ".join(str(e) for e in getattr(exc, "exceptions", [exc]))
        raise JsonRpcInvalidParams(message=f"invalid {kind.__name__}: {detail}") from None


def _open_sandbox(server: SmolLanguageServer) -> Any:
    try:
        from ..sandbox.select import open_sandbox
    except ImportError:
        return None
    try:
        return open_sandbox(server.settings, server.root or Path.cwd())
    except Exception as exc:
        log.warning("sandbox unavailable, patches are not validated: %s", exc)
        return None


def register(server: SmolLanguageServer) -> None:
    service = ChatService(server)
    server.features["chat"] = service

    @server.feature(CHAT)
    async def chat(ls: SmolLanguageServer, params: Any) -> dict[str, Any]:
        """Run one message of a conversation; cancellable; events stream as smol/event."""
        return await service.chat(params)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: SmolLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
        """A saved file changes what the tools see."""
        service.files_changed()

    @server.command(CMD_ASK_ABOUT_SELECTION)
    async def ask_about_selection(ls: SmolLanguageServer, *args: Any) -> dict[str, Any]:
        """Ask the agent about a range (default question for clients that send none)."""
        return await service.ask_about_selection(args)
