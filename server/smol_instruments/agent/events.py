"""What a run streams to its host: typed events, numbered per session, and the run's outcome.

The agent emits these objects; a host turns them into what it shows (the terminal renderer) or
sends (the daemon's `smol/event` notifications, through `base.wire`). docs/protocol.md describes
them on the wire; the JSON Schema the extension checks its types against is generated from
these classes.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any, Literal

import attrs

from ..safety.approval import ApprovalEvent

log = logging.getLogger(__name__)

#: `incomplete`: the run ended with an answer, but a change it was asked for was never made.
RunStatus = Literal["completed", "incomplete", "cancelled", "failed", "max_steps"]


@attrs.frozen(kw_only=True, slots=False)
class Event:
    """What every event carries: its session and its number in that session (1, 2, 3 ...)."""

    session_id: str = ""
    seq: int = 0


@attrs.frozen(kw_only=True)
class StepEvent(Event):
    """A step begins."""

    kind: Literal["step"] = "step"
    step: int
    max_steps: int


@attrs.frozen(kw_only=True)
class TextEvent(Event):
    """A delta of the model's streamed reply."""

    kind: Literal["text"] = "text"
    text: str


@attrs.frozen(kw_only=True)
class CodeEvent(Event):
    """The code the agent is about to execute in this step."""

    kind: Literal["code"] = "code"
    step: int
    code: str


@attrs.frozen(kw_only=True)
class ToolEvent(Event):
    """A tool call finished; `error` is the tool error schema when it failed."""

    kind: Literal["tool"] = "tool"
    step: int | None
    name: str
    args: dict[str, Any]
    duration_ms: float
    error: dict[str, Any] | None = None


@attrs.frozen(kw_only=True)
class ObservationEvent(Event):
    """What the model is shown after executing the step's code."""

    kind: Literal["observation"] = "observation"
    step: int
    text: str
    truncated: bool


@attrs.frozen(kw_only=True)
class PatchEvent(Event):
    """A patch was proposed or changed status."""

    kind: Literal["patch"] = "patch"
    patch: dict[str, Any]


@attrs.frozen(kw_only=True)
class ProgressEvent(Event):
    """What the run waits for before the model's next word, and how far it is: the local model
    being fetched or started (`model`), or the model reading its prompt (`prompt`)."""

    kind: Literal["progress"] = "progress"
    stage: Literal["model", "prompt"]
    message: str
    #: 0-100 when known (a download, the tokens of a prompt read so far); else None.
    percent: int | None = None


@attrs.frozen(kw_only=True)
class ErrorEvent(Event):
    """A step or the run failed; what to do about it when there is something to do."""

    kind: Literal["error"] = "error"
    message: str
    recovery_suggestion: str | None = None


@attrs.frozen(kw_only=True)
class FinalEvent(Event):
    """The run ended: its answer and status. Always the last event of a run."""

    kind: Literal["final"] = "final"
    answer: str
    status: RunStatus


@attrs.frozen(kw_only=True, slots=False)  # two attrs bases cannot both have slots
class SessionApprovalEvent(Event, ApprovalEvent):
    """An approval decision, as streamed (ApprovalEvent with the session's numbering)."""


AgentEvent = (
    StepEvent
    | TextEvent
    | CodeEvent
    | ToolEvent
    | ObservationEvent
    | PatchEvent
    | SessionApprovalEvent
    | ProgressEvent
    | ErrorEvent
    | FinalEvent
)
EventSink = Callable[[AgentEvent], None]


@attrs.define
class Usage:
    """Tokens the model read and wrote over a run (every call, the step-limit summary too)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0


@attrs.frozen(kw_only=True)
class RunOutcome:
    """How one run ended (PROTOCOL.md's `smol/chat` result)."""

    session_id: str
    status: RunStatus
    answer: str
    steps: int
    usage: Usage = attrs.field(factory=Usage)
    trace_id: str | None = None
    error: str | None = None


class EventEmitter:
    """Numbers a session's events (seq 1, 2, 3 ...) and hands them to the host's sink in order."""

    def __init__(self, session_id: str, sink: EventSink | None) -> None:
        self.session_id = session_id
        self.sink = sink
        self.seq = 0
        self._lock = threading.Lock()

    def __call__(self, event: AgentEvent | ApprovalEvent) -> None:
        if self.sink is None:
            return
        if not isinstance(event, Event):  # a tool's approval decision: give it the numbering
            event = SessionApprovalEvent(**attrs.asdict(event, recurse=False))
        with self._lock:
            self.seq += 1
            numbered = attrs.evolve(event, session_id=self.session_id, seq=self.seq)
            try:
                self.sink(numbered)
            except Exception:
                log.exception("event sink failed")
