"""The agent: smolagents' CodeAgent over LiteLLM, hosted by an AgentSession.

A host (the CLI, the LSP daemon) creates an `AgentSession` with an approver and an event
sink, calls `run(task)` for each message of a conversation (memory is kept across turns), and
may call `cancel()` from another thread. The session turns smolagents' stream into the
PROTOCOL.md events and returns a `RunOutcome`.

smolagents' loop is kept; `SmolCodeAgent` only extends its step generator: a reply with no
code block gets one short recovery message, and a second prose reply in a row is taken as the
final answer (conversational answers are never forced into code).
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from io import StringIO
from pathlib import Path
from typing import Any, Literal

from smolagents import ActionStep, CodeAgent, FinalAnswerStep
from smolagents.agents import ActionOutput
from smolagents.memory import ToolCall
from smolagents.models import ChatMessageStreamDelta
from smolagents.monitoring import AgentLogger, LogLevel
from smolagents.utils import AgentError, AgentParsingError

from ..base.config import Settings
from ..patches.store import Patch, PatchStore
from ..patches.validation import Sandbox
from ..safety.approval import Approver, DenyAllApprover
from .model import AgentModel, RunCancelled, build_model
from .pipeline import instrument
from .prompts import SHORT_FORMAT_ERROR, prompt_templates
from .state import AgentState

log = logging.getLogger(__name__)

RunStatus = Literal["completed", "cancelled", "failed", "max_steps"]
EventSink = Callable[[dict[str, Any]], None]

_FENCE = "```"


class SmolCodeAgent(CodeAgent):
    """CodeAgent with small-model recovery in its step generator (the loop itself is upstream's)."""

    def _step_stream(self, memory_step: ActionStep) -> Generator[Any]:
        try:
            yield from super()._step_stream(memory_step)
        except AgentParsingError:
            prose = (memory_step.model_output or "").strip()
            if prose.endswith(_FENCE) and _FENCE not in prose[:-3]:
                prose = prose[:-3].rstrip()  # smolagents appended a closing fence
            if self._previous_step_was_format_error() and prose:
                # Second prose reply in a row: that prose is the answer.
                memory_step.action_output = prose
                yield ActionOutput(output=prose, is_final_answer=True)
                return
            raise AgentParsingError(SHORT_FORMAT_ERROR, self.logger) from None

    def _previous_step_was_format_error(self) -> bool:
        for step in reversed(self.memory.steps):
            if isinstance(step, ActionStep):
                return isinstance(step.error, AgentParsingError)
        return False


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def to_dict(self) -> dict[str, int]:
        return {"promptTokens": self.prompt_tokens, "completionTokens": self.completion_tokens}


@dataclass
class RunOutcome:
    """PROTOCOL.md's `smol/chat` result."""

    session_id: str
    status: RunStatus
    answer: str
    steps: int
    usage: Usage = field(default_factory=Usage)
    trace_id: str | None = None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "sessionId": self.session_id,
            "status": self.status,
            "answer": self.answer,
            "steps": self.steps,
            "usage": self.usage.to_dict(),
        }
        if self.trace_id:
            data["traceId"] = self.trace_id
        if self.error:
            data["error"] = self.error
        return data


class EventEmitter:
    """Numbers a session's events (seq 1, 2, 3 ...) and hands them to the host's sink in order."""

    def __init__(self, session_id: str, sink: EventSink | None) -> None:
        self.session_id = session_id
        self.sink = sink
        self.seq = 0
        self._lock = threading.Lock()

    def __call__(self, event: dict[str, Any]) -> None:
        if self.sink is None:
            return
        with self._lock:
            self.seq += 1
            payload = {"sessionId": self.session_id, "seq": self.seq, **event}
            try:
                self.sink(payload)
            except Exception:
                log.exception("event sink failed")

    def emit(self, kind: str, **fields: Any) -> None:
        self({"kind": kind, **fields})


class _NoLive:
    """Stands in for rich's Live display in smolagents' step loop: nothing is shown."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __enter__(self) -> _NoLive:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def update(self, *args: Any, **kwargs: Any) -> None:
        return None


def _no_markdown(*args: Any, **kwargs: Any) -> None:
    return None


def _skip_console_rendering() -> None:
    """smolagents re-renders the whole reply as rich Markdown on every streamed delta, for a
    console nobody sees here (hosts render our events): about 45 ms per step, measured.
    Its `Live` and `Markdown` are used only for that display, so they become no-ops."""
    import smolagents.agents as upstream

    if getattr(upstream, "Live", None) is not _NoLive:
        upstream.Live = _NoLive
        upstream.Markdown = _no_markdown


def _quiet_logger() -> AgentLogger:
    """smolagents' rich console writes even at level OFF; send it to a buffer, never stdout."""
    from rich.console import Console

    return AgentLogger(level=LogLevel.OFF, console=Console(file=StringIO(), force_terminal=False))


class AgentSession:
    """One conversation with the agent over one repository; memory is kept across `run`s."""

    def __init__(
        self,
        repo: Path | str,
        settings: Settings,
        *,
        approver: Approver | None = None,
        events: EventSink | None = None,
        sandbox: Sandbox | None = None,
        patches: PatchStore | None = None,
        session_id: str | None = None,
        max_steps: int | None = None,
    ) -> None:
        from ..tools import build_tools
        from ..tools.base import ToolContext

        self.session_id = session_id or uuid.uuid4().hex[:12]
        self.settings = settings
        self.emitter = EventEmitter(self.session_id, events)
        self.cancel_event = threading.Event()
        self.state = AgentState()
        self.max_steps = max_steps or settings.agent_max_steps
        self.ctx = ToolContext.create(
            repo,
            settings,
            approver=approver or DenyAllApprover(),
            sandbox=sandbox,
            patches=patches,
            session_id=self.session_id,
        )
        self.ctx.cancel = self.cancel_event
        self.ctx.events = self.emitter
        self._unsubscribe = self.ctx.patches.subscribe(self._on_patch)
        self.model: AgentModel = build_model(settings, self.cancel_event)
        tools = instrument(
            build_tools(self.ctx),
            self.state,
            settings=settings,
            cancel=self.cancel_event,
            events=self.emitter,
        )
        self.model.tool_names = {tool.name for tool in tools}
        _skip_console_rendering()
        self.agent = SmolCodeAgent(
            tools=tools,
            model=self.model,
            code_block_tags="markdown",
            prompt_templates=prompt_templates(),
            max_steps=self.max_steps,
            stream_outputs=True,
            logger=_quiet_logger(),
            verbosity_level=LogLevel.OFF,
        )
        self.turns = 0
        self._running = threading.Lock()

    @property
    def root(self) -> Path:
        return self.ctx.root

    def _on_patch(self, patch: Patch) -> None:
        if patch.session_id in (None, self.session_id):
            self.emitter.emit("patch", patch=patch.to_protocol(self.ctx.root))

    def cancel(self) -> None:
        """Stop the run within one step: interrupt the loop, close the stream, kill commands."""
        self.cancel_event.set()
        self.agent.interrupt()
        self.model.abort()
        self.ctx.processes.kill_all()

    def close(self) -> None:
        self.cancel()
        self._unsubscribe()
        try:
            self.ctx.sandbox.close()
        except Exception:
            log.exception("closing the sandbox failed")

    def run(self, task: str) -> RunOutcome:
        """Run one message of the conversation to its end; never raises for model or tool faults."""
        from ..base.telemetry import flush, setup_tracing, trace_id_of, tracer

        with self._running:
            self.cancel_event.clear()
            setup_tracing(self.settings)
            started = time.monotonic()
            with tracer().start_as_current_span("smol_instruments.run") as span:
                span.set_attribute("openinference.span.kind", "CHAIN")
                span.set_attribute("session.id", self.session_id)
                span.set_attribute("input.value", task[:2000])
                trace_id = trace_id_of(span)
                outcome = self._run(task, trace_id)
                span.set_attribute("smol.status", outcome.status)
                span.set_attribute("output.value", outcome.answer[:2000])
                span.set_attribute("smol.duration_ms", int((time.monotonic() - started) * 1000))
            flush(2.0)
            self.turns += 1
            return outcome

    def _run(self, task: str, trace_id: str | None) -> RunOutcome:
        usage = Usage()
        steps = 0
        answer = ""
        status: RunStatus = "completed"
        error: str | None = None
        step_open = False
        reported: set[int] = set()  # smolagents yields the last ActionStep twice at max steps
        emit = self.emitter.emit
        try:
            stream = self.agent.run(
                task, stream=True, reset=self.turns == 0, max_steps=self.max_steps
            )
            for item in stream:
                if isinstance(item, ActionStep) and id(item) in reported:
                    continue
                if not step_open and not isinstance(item, FinalAnswerStep):
                    steps += 1
                    self.state.step = steps
                    step_open = True
                    emit("step", step=steps, maxSteps=self.max_steps)
                if isinstance(item, ChatMessageStreamDelta):
                    if item.content:
                        emit("text", text=item.content)
                elif isinstance(item, ToolCall):
                    emit("code", step=steps, code=str(item.arguments))
                elif isinstance(item, ActionStep):
                    step_open = False
                    reported.add(id(item))
                    self._report_step(item, steps, usage)
                elif isinstance(item, FinalAnswerStep):
                    answer = _answer_text(item.output)
            if self._hit_max_steps():
                status = "max_steps"
        except RunCancelled:
            status = "cancelled"
        except AgentError as exc:
            if self.cancel_event.is_set():
                status = "cancelled"
            else:
                status, error = "failed", _model_error_message(exc, self.settings)
        except Exception as exc:  # a fault anywhere must end the run, not the host
            log.exception("run failed")
            status = "cancelled" if self.cancel_event.is_set() else "failed"
            error = None if status == "cancelled" else _model_error_message(exc, self.settings)
        if status == "cancelled":
            answer = answer or "Cancelled."
        elif status == "failed":
            emit(
                "error", message=error or "the run failed", recoverySuggestion=_recovery_for(error)
            )
            answer = answer or (error or "The run failed.")
        emit("final", answer=answer, status=status)
        return RunOutcome(self.session_id, status, answer, steps, usage, trace_id, error)

    def _report_step(self, step: ActionStep, number: int, usage: Usage) -> None:
        emit = self.emitter.emit
        if step.token_usage is not None:  # per step, including the max-steps summary call
            usage.prompt_tokens += step.token_usage.input_tokens
            usage.completion_tokens += step.token_usage.output_tokens
        if step.observations:
            text = step.observations
            emit("observation", step=number, text=text, truncated="[truncated" in text)
        if step.error is not None and not isinstance(step.error, RunCancelled):
            message = str(step.error).strip()
            if self.cancel_event.is_set():
                return
            emit("error", message=message[:2000], recoverySuggestion=_step_recovery(message))

    def _hit_max_steps(self) -> bool:
        from smolagents.utils import AgentMaxStepsError

        steps = self.agent.memory.steps
        return bool(steps) and isinstance(getattr(steps[-1], "error", None), AgentMaxStepsError)


def _answer_text(output: Any) -> str:
    if output is None:
        return ""
    if isinstance(output, list):  # message content in list form: [{"type": "text", "text": ...}]
        texts = [part.get("text", "") for part in output if isinstance(part, dict)]
        if texts:
            return "\n".join(texts)
    return output if isinstance(output, str) else str(output)


def _step_recovery(message: str) -> str | None:
    if "no ```python code block" in message:
        return "The model will be asked again for a code block."
    if "Import of" in message:
        return "Imports are limited; the tools cover files, search, git and commands."
    return None


def _model_error_message(exc: BaseException, settings: Settings) -> str:
    root = exc
    while root.__cause__ is not None:  # smolagents wraps the model's error: report the cause
        root = root.__cause__
    text = str(root) if str(root).strip() else str(exc)
    lowered = text.lower()
    if any(
        s in lowered
        for s in (
            "connection refused",
            "connecterror",
            "cannot connect",
            "connection error",
            "failed to establish",
        )
    ):
        return f"cannot reach the model server at {settings.model_api_base} for {settings.model_id}"
    if "timeout" in lowered or "timed out" in lowered:
        return f"the model at {settings.model_api_base} did not answer within {settings.model_timeout_s:g} s"
    first = text.strip().splitlines()
    return first[0][:500] if first else exc.__class__.__name__


def _recovery_for(error: str | None) -> str | None:
    if error and "cannot reach the model server" in error:
        return (
            "Start Ollama (`ollama serve`, then `ollama pull qwen2.5-coder:7b`), or set MODEL_ID "
            "and MODEL_API_BASE to a model server you have; `smol-instruments doctor` checks it."
        )
    if error and "did not answer" in error:
        return (
            "The model is slow or stuck: try again, raise MODEL_TIMEOUT_S, or use a smaller model."
        )
    return None
