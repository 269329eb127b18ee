"""`smol-instruments acp`: the agent over the Agent Client Protocol, on stdio.

Built on the protocol's Python SDK (`acp`): it parses and validates every message, routes
methods and answers a bad one with a JSON-RPC error. `SmolAcpAgent` is the SDK's `Agent`:

- `initialize`: protocol version, `loadSession`, embedded context in prompts, who we are;
- `session/new` / `session/load`: one AgentSession per conversation, rooted at the repository
  of `cwd`, with the same settings, policy, containment, sandbox and tracing as the other hosts;
  a loaded conversation is replayed to the editor (acp/transcripts.py);
- `session/prompt`: the run on a worker thread, its events streamed as `session/update`s
  (acp/updates.py), risky commands and patches put to the user (acp/editor.py); when the run
  ends, every patch of the session still pending is put to the user with its diff, and what
  became of it is said. The stop reason says how the run ended;
- `session/cancel`: stops the run within a step and ends any question being asked.

The model runtime (the embedded llama.cpp server when one is needed) is shared by the sessions,
started at the first prompt and stopped with the process.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from acp import PROTOCOL_VERSION, RequestError, update_agent_thought_text, update_user_message_text
from acp.schema import (
    AgentCapabilities,
    ClientCapabilities,
    EmbeddedResourceContentBlock,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from .. import __version__
from ..agent.events import AgentEvent, RunOutcome
from ..base.config import Settings
from ..safety.policy import PolicyConfigError
from .editor import AcpApprover, Editor
from .transcripts import SESSION_ID, Transcript, Transcripts
from .updates import message

if TYPE_CHECKING:
    from ..agent.session import AgentSession
    from ..llm.resolve import Endpoint, ModelRuntime
    from ..patches.service import PatchService

log = logging.getLogger(__name__)

STOP_REASONS = {"cancelled": "cancelled", "max_steps": "max_turn_requests"}


class HostedSession:
    """An AgentSession with its editor side and its transcript."""

    def __init__(self, session: AgentSession, editor: Editor, transcript: Transcript) -> None:
        self.session = session
        self.editor = editor
        self.transcript = transcript
        self.recall = ""  # said to the agent with the next message of a loaded conversation
        self.asking: asyncio.Future[Any] | None = None  # a patch being put to the user


class SmolAcpAgent:
    """The ACP agent: conversations by session id over one client connection."""

    def __init__(self, settings: Settings, transcripts: Transcripts | None = None) -> None:
        self.settings = settings
        self.transcripts = transcripts or Transcripts()
        self.conn: Any = None
        self.capabilities: ClientCapabilities | None = None
        self.sessions: dict[str, HostedSession] = {}
        self.runner = ThreadPoolExecutor(max_workers=8, thread_name_prefix="smol-acp")
        self.runtime: ModelRuntime | None = None
        self._runtime_lock = threading.Lock()
        self._patches: dict[Path, PatchService] = {}

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    # --- the protocol's methods ----------------------------------------------------------

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        """Our capabilities; the client's are kept (fs/* for patches)."""
        self.capabilities = client_capabilities
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(embedded_context=True),
            ),
            agent_info=Implementation(
                name="smol-instruments", title="Smol Instruments", version=__version__
            ),
            auth_methods=[],
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        """Nothing to authenticate: the model is local or configured in the settings."""
        return None

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> NewSessionResponse:
        """A new conversation over the repository that holds `cwd`."""
        root = _folder(cwd)
        session_id = uuid.uuid4().hex[:16]
        await self._open(session_id, root, Transcript(session_id, str(root)))
        return NewSessionResponse(session_id=session_id)

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> LoadSessionResponse:
        """An earlier conversation, replayed to the editor; the agent hears of it next time."""
        root = _folder(cwd)
        hosted = self.sessions.get(session_id)
        if hosted is None:
            transcript = self.transcripts.load(session_id) if SESSION_ID.match(session_id) else None
            if transcript is None:
                raise RequestError.invalid_params(
                    {"sessionId": f"no conversation {session_id!r} to load; start a new one"}
                )
            hosted = await self._open(session_id, root, transcript)
            hosted.recall = transcript.recall()
        for turn in hosted.transcript.turns:
            await hosted.editor.send(update_user_message_text(turn["user"]))
            await hosted.editor.send(message(turn["answer"]))
        return LoadSessionResponse()

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        """Run one message; updates stream meanwhile; pending patches are decided at the end."""
        hosted = self._require(session_id)
        text = prompt_text(prompt)
        if not text.strip():
            raise RequestError.invalid_params({"prompt": "the message has no text"})
        task = f"{hosted.recall}\n\nNow: {text}" if hosted.recall else text
        hosted.recall = ""
        loop = asyncio.get_running_loop()
        outcome: RunOutcome = await loop.run_in_executor(self.runner, hosted.session.run, task)
        await hosted.editor.outbox.run(_nothing)  # every update of the run has been sent
        said = await self._review(hosted, outcome)
        hosted.transcript.add(text, "\n\n".join([outcome.answer, *said]).strip())
        await asyncio.to_thread(self.transcripts.save, hosted.transcript)
        log.info(
            "session %s: the run ended %s after %d steps", session_id, outcome.status, outcome.steps
        )
        # a cancel during the review of the patches ends the turn cancelled too
        status = "cancelled" if hosted.session.cancel_event.is_set() else outcome.status
        reason = STOP_REASONS.get(status, "end_turn")
        return PromptResponse(stop_reason=reason)  # type: ignore[arg-type]

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        """Stop the session's run within one step; a question being asked ends unanswered."""
        hosted = self.sessions.get(session_id)
        log.info("session %s: cancel (%s)", session_id, "running" if hosted else "unknown")
        if hosted is not None:
            hosted.session.cancel()
            if hosted.asking is not None:  # the end-of-run review: its question is withdrawn
                hosted.asking.cancel()

    # --- what the methods do -------------------------------------------------------------

    def _require(self, session_id: str) -> HostedSession:
        hosted = self.sessions.get(session_id)
        if hosted is None:
            raise RequestError.invalid_params(
                {"sessionId": f"no session {session_id!r}: call session/new or session/load first"}
            )
        return hosted

    async def _open(self, session_id: str, root: Path, transcript: Transcript) -> HostedSession:
        loop = asyncio.get_running_loop()
        try:
            hosted = await loop.run_in_executor(
                self.runner, self._new_session, session_id, root, transcript, loop
            )
        except PolicyConfigError as exc:  # the repository's policy file: one line, fixable
            raise RequestError.invalid_params({"cwd": str(exc)}) from None
        old = self.sessions.pop(session_id, None)
        if old is not None:
            old.session.close()
        self.sessions[session_id] = hosted
        return hosted

    def _new_session(
        self, session_id: str, root: Path, transcript: Transcript, loop: asyncio.AbstractEventLoop
    ) -> HostedSession:
        from ..agent.session import AgentSession

        patches = self._patches_of(root)
        editor = Editor(self.conn, session_id, patches.root, self.capabilities, patches, loop)
        cancel = threading.Event()
        approver = AcpApprover(editor, cancel, self.settings.approval_timeout_s)
        holder: list[AgentSession] = []

        def sink(event: AgentEvent) -> None:
            for update in editor.mapper.updates(event):
                editor.post(update)

        session = AgentSession(
            root,
            self.settings,
            approver=approver,
            events=sink,
            sandbox=self._open_sandbox(root),
            patches=patches,
            session_id=session_id,
            endpoint=lambda: self._endpoint(editor, holder[0] if holder else None),
            buffers=editor.buffer if editor.reads else None,
        )
        holder.append(session)
        approver.cancel = session.cancel_event  # a cancel also ends a question being asked
        editor.cancel = session.cancel_event  # ... and a read of the editor's text
        return HostedSession(session, editor, transcript)

    def _patches_of(self, root: Path) -> PatchService:
        """One patch service per repository, shared by its conversations (as in the daemon)."""
        from ..base.git import find_repo_root
        from ..patches.service import open_patches
        from ..safety.jail import PathJail

        top = find_repo_root(root)
        with self._runtime_lock:
            if top not in self._patches:
                self._patches[top] = open_patches(PathJail(top))
            return self._patches[top]

    def _open_sandbox(self, root: Path) -> Any:
        try:
            from ..sandbox.select import open_sandbox

            return open_sandbox(self.settings, root)
        except Exception as exc:
            log.warning("sandbox unavailable, patches are not validated: %s", exc)
            return None

    def _endpoint(self, editor: Editor, session: AgentSession | None) -> Endpoint:
        """The model for a run; fetching or starting the local model shows as a thought."""
        from ..llm.resolve import ModelRuntime

        with self._runtime_lock:
            if self.runtime is None:
                self.runtime = ModelRuntime()
            runtime = self.runtime

        def status(text: str, percent: int | None) -> None:
            shown = f"{text} ({percent}%)" if percent is not None else text
            editor.post(update_agent_thought_text(f"{shown}\n"))

        cancel = session.cancel_event if session is not None else None
        return runtime.endpoint(self.settings, on_status=status, cancel=cancel)

    async def _review(self, hosted: HostedSession, outcome: RunOutcome) -> list[str]:
        """Put every pending patch of the session to the user; say what became of each."""
        session = hosted.session
        said: list[str] = []
        for patch in session.ctx.patches.all():
            if patch.session_id != session.session_id or patch.resolved:
                continue
            if not session.cancel_event.is_set():
                await self._ask_bounded(hosted, patch.id)
            after = session.ctx.patches.get(patch.id)
            if after is not None and not after.resolved:
                said.append(
                    f"Patch {after.id} is still pending: nothing was written. Decide it with "
                    f"`smol-instruments patches show {after.id}` and `patches accept {after.id}` "
                    f"(or `reject`) in {session.root}."
                )
        await hosted.editor.outbox.run(_nothing)  # the patches' outcomes were sent first
        for line in said:
            await hosted.editor.send(message(f"\n\n{line}"))
        return said

    async def _ask_bounded(self, hosted: HostedSession, patch_id: str) -> None:
        """Put one patch to the user; no answer within APPROVAL_TIMEOUT_S, or a cancel, leaves
        it pending (the question is withdrawn)."""
        asking = asyncio.ensure_future(
            hosted.editor.outbox.run(partial(hosted.editor.review_patch, patch_id))
        )
        hosted.asking = asking
        try:
            await asyncio.wait_for(asking, timeout=self.settings.approval_timeout_s)
        except asyncio.TimeoutError:
            log.info("patch %s: no decision in time; it stays pending", patch_id)
        except asyncio.CancelledError:
            cancelling = getattr(asyncio.current_task(), "cancelling", None)  # Python 3.11+
            if cancelling is not None and cancelling():
                raise  # this prompt itself is being cancelled
            log.info("patch %s: the run was cancelled; it stays pending", patch_id)
        finally:
            hosted.asking = None

    def close(self) -> None:
        hosted, self.sessions = list(self.sessions.values()), {}
        for item in hosted:
            try:
                item.session.close()  # cancels its run, then closes its sandbox
            except Exception:
                log.exception("closing a session failed")
        if self.runtime is not None:
            self.runtime.close()
        self.runner.shutdown(wait=False, cancel_futures=True)


async def _nothing() -> None:
    return None


def _folder(cwd: str) -> Path:
    path = Path(cwd)
    if not path.is_absolute():
        raise RequestError.invalid_params({"cwd": f"{cwd!r} is not an absolute path"})
    if not path.is_dir():
        raise RequestError.invalid_params({"cwd": f"{cwd} is not a directory"})
    return path.resolve()


def prompt_text(blocks: list[Any]) -> str:
    """The message: its text, with the files the editor attached (embedded or linked)."""
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            if isinstance(resource, TextResourceContents):
                parts.append(f"\n\nAttached {_uri_path(resource.uri)}:\n```\n{resource.text}\n```")
        elif isinstance(block, ResourceContentBlock):
            parts.append(f"\n\n(see {_uri_path(block.uri)})")
    return "".join(parts).strip()


def _uri_path(uri: str) -> str:
    return uri[len("file://") :] if uri.startswith("file://") else uri


async def _serve(settings: Settings) -> None:
    from acp.agent.connection import AgentSideConnection
    from acp.task import TaskSupervisor

    from .transport import stdio_transport

    supervisor = TaskSupervisor(source="smol-instruments.acp")
    agent = SmolAcpAgent(settings)
    transport = await stdio_transport(supervisor)
    conn = AgentSideConnection(cast(Any, agent), transport, listening=False)
    try:
        await conn.listen()
    finally:
        agent.close()


def serve(settings: Settings) -> int:
    """Serve one ACP client on stdio until it goes away; then stop runs and children."""
    import os

    try:
        asyncio.run(_serve(settings))
    finally:
        log.info("acp agent stopped")
        logging.shutdown()
        # Runs were cancelled; a worker stuck in a network read must not keep the process alive.
        os._exit(0)
    return 0
