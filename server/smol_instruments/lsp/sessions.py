"""The daemon's conversations: one AgentSession each, run on worker threads.

Different sessions run at the same time, each on its own worker thread, so the event loop
stays free; two messages to one session run one after the other (the session's own lock).
The MAX_IDLE_SESSIONS most recently used idle sessions are kept; older ones are closed.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..agent.events import RunOutcome

if TYPE_CHECKING:
    from ..agent.session import AgentSession

log = logging.getLogger(__name__)

MAX_IDLE_SESSIONS = 32


class HostedSession:
    """An AgentSession plus what the daemon tracks for it."""

    def __init__(self, session: AgentSession) -> None:
        self.session = session
        self.running = 0
        self.progress_token: str | int | None = None


class SessionPool:
    """Sessions by id, created on first use, and the threads their runs use."""

    def __init__(self) -> None:
        self.sessions: OrderedDict[str, HostedSession] = OrderedDict()
        self._lock = threading.Lock()
        self.runner = concurrent.futures.ThreadPoolExecutor(
            max_workers=8, thread_name_prefix="smol-run"
        )

    async def get(self, sid: str, create: Callable[[str], HostedSession]) -> HostedSession:
        """The session `sid`, created (on a worker thread: it loads the agent) when new."""
        with self._lock:
            hosted = self.sessions.get(sid)
            if hosted is not None:
                self.sessions.move_to_end(sid)
                return hosted
        loop = asyncio.get_running_loop()
        hosted = await loop.run_in_executor(self.runner, create, sid)
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

    async def run(self, hosted: HostedSession, message: str) -> RunOutcome:
        """Run one message; a cancelled request stops the run and still answers its outcome."""
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(self.runner, hosted.session.run, message)
        try:
            return await asyncio.shield(future)
        except asyncio.CancelledError:
            # $/cancelRequest: stop the run, then answer with status "cancelled".
            hosted.session.cancel()
            return await asyncio.wait_for(asyncio.shield(future), timeout=30)

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
