"""`smol/chat` and `smol.askAboutSelection`: conversations with the agent over LSP.

Each conversation is an AgentSession (lsp/sessions.py) running on a worker thread; the event
loop stays free, so code actions and `smol/patches` answer while runs are in progress. Events
reach the client as ordered `smol/event` notifications; work-done progress reports the steps,
and a cancel from the progress UI or `$/cancelRequest` stops the run within one step.
"""

from __future__ import annotations

import logging
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from ...agent.events import AgentEvent, ProgressEvent, RunOutcome
from ...base.visible import visible
from ...base.wire import to_wire
from ..feature import Feature, command, handles
from ..progress import RunProgress
from ..protocol import (
    CHAT,
    CMD_ASK_ABOUT_SELECTION,
    DEFAULT_QUESTION,
    EVENT,
    AskAboutSelectionArgs,
    ChatParams,
    Selection,
    command_arguments,
    structure,
)
from ..selections import with_selections
from ..server import SmolLanguageServer
from ..sessions import HostedSession, SessionPool
from .approvals import Approvals
from .model import Model

if TYPE_CHECKING:
    from ...llm.resolve import Endpoint
    from ...patches.validation import Sandbox

log = logging.getLogger(__name__)


class Chat(Feature):
    """Runs the user's messages through the agent, one session per conversation."""

    def __init__(self, server: SmolLanguageServer, approvals: Approvals, model: Model) -> None:
        self.server = server
        self.approvals = approvals
        self.model = model
        self.pool = SessionPool()
        self.progress = RunProgress(server)

    # --- handlers ------------------------------------------------------------------------

    @handles(CHAT)
    async def chat(self, params: Any) -> dict[str, Any]:
        """Run one message of a conversation; cancellable; events stream as smol/event."""
        request = structure(params, ChatParams)
        if not request.message.strip():
            raise JsonRpcInvalidParams(message="message is empty")
        text = self._with_selections(request.message, request.selections)
        outcome = await self.run(text, request.session_id, request.work_done_token)
        return to_wire(outcome)

    @command(CMD_ASK_ABOUT_SELECTION)
    async def ask_about_selection(self, *args: Any) -> dict[str, Any]:
        """Ask the agent about a range (default question for clients that send none)."""
        values = command_arguments(args)
        if not values or not isinstance(values[0], dict):
            raise JsonRpcInvalidParams(message="expected arguments [{uri, range, question?}]")
        request = structure(values[0], AskAboutSelectionArgs)
        question = (request.question or "").strip() or DEFAULT_QUESTION
        text = self._with_selections(question, [Selection(uri=request.uri, range=request.range)])
        outcome = await self.run(text, None, None)
        self.server.window_show_message(
            types.ShowMessageParams(
                type=types.MessageType.Info, message=visible(outcome.answer[:4000])
            )
        )
        return to_wire(outcome)

    def document_saved(self, params: types.DidSaveTextDocumentParams) -> None:
        """A saved file changes what the tools see."""
        self.pool.files_changed()

    def close(self) -> None:
        self.pool.close()

    # --- what the handlers do ------------------------------------------------------------

    async def run(
        self, message: str, session_id: str | None, token: str | int | None
    ) -> RunOutcome:
        hosted = await self.pool.get(session_id or uuid.uuid4().hex[:12], self._new_session)
        hosted.running += 1
        outcome: RunOutcome | None = None
        await self.progress.begin(hosted, token)
        try:
            outcome = await self.pool.run(hosted, message)
            return outcome
        finally:
            hosted.running -= 1
            self.progress.end(hosted, outcome)

    def _new_session(self, session_id: str) -> HostedSession:
        from ...agent.session import AgentSession
        from ...safety.policy import PolicyConfigError  # not on the initialize path

        server = self.server
        if server.root is None or server.patch_store is None:
            raise JsonRpcInvalidParams(message="initialize the server with a workspace first")
        hosted: HostedSession | None = None

        def sink(event: AgentEvent) -> None:
            server.notify(EVENT, to_wire(event))
            if hosted is not None and hosted.progress_token is not None:
                self.progress.report(hosted.progress_token, event)

        approver = self.approvals.approver()
        try:
            session = AgentSession(
                server.root,
                server.settings,
                approver=approver,
                events=sink,
                sandbox=self._open_sandbox() if server.trusted else None,
                patches=server.patch_store,
                session_id=session_id,
                trusted=server.trusted,
                endpoint=lambda: self._endpoint(hosted),
                buffers=server.buffer_text,  # what the editor shows, unsaved edits too
            )
        except PolicyConfigError as exc:  # the repository's policy file: one line, fixable
            server.show_error(str(exc))
            raise JsonRpcInvalidParams(message=str(exc)) from None
        approver.cancel = session.cancel_event  # a cancel also ends a wait for a decision
        hosted = HostedSession(session)
        return hosted

    def _endpoint(self, hosted: HostedSession | None) -> Endpoint:
        """The model endpoint for a run; getting the local model ready shows in the chat (as
        progress events) and as work-done progress."""

        def status(message: str, percent: int | None) -> None:
            if hosted is None:
                return
            hosted.session.emitter(ProgressEvent(stage="model", message=message, percent=percent))
            if hosted.progress_token is not None:
                self.progress.status(hosted.progress_token, message, percent)

        cancel = hosted.session.cancel_event if hosted is not None else None
        return self.model.endpoint(on_status=status, cancel=cancel)

    def _open_sandbox(self) -> Sandbox | None:
        try:
            from ...sandbox.select import open_sandbox

            return open_sandbox(self.server.settings, self.server.root or Path.cwd())
        except Exception as exc:
            log.warning("sandbox unavailable, patches are not validated: %s", exc)
            return None

    def _with_selections(self, message: str, selections: list[Selection]) -> str:
        root = self.server.root or Path.cwd()
        return with_selections(message, selections, root, self.server.document_text)
