"""Work-done progress: a run's (title "Agent", cancellable, a message per step and tool call),
and the daemon's own work outside any run (`WindowProgress`: the model getting ready).

The client's token is used when the request carries one; otherwise the daemon creates one
when the client supports `window.workDoneProgress`. A cancel from the progress UI cancels
the session's run, like `$/cancelRequest`.
"""

from __future__ import annotations

import logging
import uuid

from lsprotocol import types

from ..agent.events import AgentEvent, ProgressEvent, RunOutcome, StepEvent, ToolEvent
from ..base.visible import visible
from .server import SmolLanguageServer
from .sessions import HostedSession

log = logging.getLogger(__name__)


class RunProgress:
    """Begins, reports and ends the progress of the runs of hosted sessions."""

    def __init__(self, server: SmolLanguageServer) -> None:
        self.server = server

    async def begin(self, hosted: HostedSession, token: str | int | None) -> None:
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

    def report(self, token: str | int, event: AgentEvent) -> None:
        """From any thread: the step or tool call an event announces, or how far the model has
        read its prompt, as the progress message."""
        percent = None
        if isinstance(event, StepEvent):
            message = f"step {event.step}/{event.max_steps}"
        elif isinstance(event, ToolEvent):
            call = f"{event.name}({', '.join(map(str, event.args.values()))[:60]})"
            message = visible(call, breaks=True)
        elif isinstance(event, ProgressEvent) and event.stage == "prompt":
            message, percent = event.message, event.percent
        else:
            return  # the model's statuses come through `status`
        self.server.post(
            self.server.work_done_progress.report,
            token,
            types.WorkDoneProgressReport(message=message, percentage=percent),
        )

    def status(self, token: str | int, message: str, percent: int | None = None) -> None:
        """From any thread: what the run waits for before its first step (the local model)."""
        report = types.WorkDoneProgressReport(message=message, percentage=percent)
        self.server.post(self.server.work_done_progress.report, token, report)

    def end(self, hosted: HostedSession, outcome: RunOutcome | None) -> None:
        token = hosted.progress_token
        hosted.progress_token = None
        if token is None:
            return
        message = outcome.status if outcome is not None else "failed"
        self.server.work_done_progress.end(token, types.WorkDoneProgressEnd(message=message))
        self.server.work_done_progress.tokens.pop(token, None)


class WindowProgress:
    """Progress of the daemon's own work (no request to hang it on), from a worker thread:
    `begin`, any number of `report`s, `end`. Nothing is shown to a client without
    `window.workDoneProgress`."""

    def __init__(self, server: SmolLanguageServer, title: str) -> None:
        self.server = server
        self.title = title
        self.token: str | None = None

    def begin(self) -> None:
        server = self.server
        if not server.client_supports("window", "work_done_progress"):
            return
        token = f"smol-{uuid.uuid4().hex[:12]}"
        try:
            server.call(lambda: server.work_done_progress.create_async(token), timeout=10)
        except Exception as exc:
            log.info("client refused a progress token: %s", exc)
            return
        self.token = token
        server.post(
            server.work_done_progress.begin,
            token,
            types.WorkDoneProgressBegin(title=self.title, cancellable=False),
        )

    def report(self, message: str, percent: int | None) -> None:
        if self.token is not None:
            report = types.WorkDoneProgressReport(message=message, percentage=percent)
            self.server.post(self.server.work_done_progress.report, self.token, report)

    def end(self, message: str) -> None:
        token, self.token = self.token, None
        if token is not None:
            self.server.post(
                self.server.work_done_progress.end,
                token,
                types.WorkDoneProgressEnd(message=message),
            )
