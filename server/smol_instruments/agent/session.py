"""The agent: smolagents' CodeAgent over LiteLLM, hosted by an AgentSession.

A host (the CLI, the LSP daemon) creates an `AgentSession` with an approver and an event
sink, calls `run(task)` for each message of a conversation (memory is kept across turns), and
may call `cancel()` from another thread. An editor host may also hand it a `buffers` reader
(tools/base.py): files are then read as the editor shows them, unsaved changes included. An
untrusted session (`trusted=False`, a folder the user does not trust) runs no command and
validates patches by running nothing. An `endpoint` source (llm/resolve.py) is asked for the
model's endpoint before each run. The stream becomes PROTOCOL.md events and a `RunOutcome`.

smolagents' loop is kept (agent/loop.py extends it through its seams). A run's status is
judged by what happened, not by the model's words: a task that asked for a change and got none
ends `incomplete` (agent/outcome.py), a model that only repeats itself ends `failed` early.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import replace
from pathlib import Path
from typing import Any

from smolagents import ActionStep, FinalAnswerStep
from smolagents.memory import ToolCall
from smolagents.models import ChatMessage, ChatMessageStreamDelta, MessageRole
from smolagents.utils import AgentError, AgentMaxStepsError

from ..base.config import Settings
from ..llm.catalog import ModelSetupError
from ..llm.resolve import Endpoint
from ..patches.model import Patch
from ..patches.service import PatchService
from ..patches.validation import NoneSandbox, Sandbox
from ..patches.view import patch_view
from ..safety.approval import Approver, DenyAllApprover
from ..tools.base import BufferReader
from ..tools.git import run_git
from ..tools.pins import pinned
from ..tools.rewrite import writes_whole
from ..tools.scaffold import parameters_in
from .context import Context, defining_files, gather
from .direct import OneStep, edit_blocks, rename_in_one_step
from .events import (
    CodeEvent,
    ErrorEvent,
    EventEmitter,
    EventSink,
    FinalEvent,
    ObservationEvent,
    PatchEvent,
    ProgressEvent,
    RunOutcome,
    RunStatus,
    StepEvent,
    TextEvent,
    ToolEvent,
    Usage,
)
from .evidence import function_steps, reaches
from .intent import INTENT_SCHEMA, TaskIntent, decide, declined_answer, from_rules
from .loop import RunStuck, SmolCodeAgent
from .mentions import code_names
from .model import AgentModel, RunCancelled, build_model, context_window, enforces_schemas
from .outcome import describe_proposal, judge
from .pipeline import instrument
from .prompts import prompt_templates, task_message
from .search import rewrite_line, search_fix
from .state import AgentState
from .watch import RunWatch

log = logging.getLogger(__name__)


UNTRUSTED_VALIDATION = "the folder is not trusted, so nothing runs to check the patch"
#: The answer to a question about names that occur nowhere in the repository.
NOWHERE = (
    "There is no {names} in this repository: I searched every file, and no function, class or "
    "variable has that name, so there is nothing to describe. Check the spelling, or ask about "
    "a name the repository defines{near}."
)


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
        patches: PatchService | None = None,
        session_id: str | None = None,
        max_steps: int | None = None,
        trusted: bool = True,
        endpoint: Callable[[], Endpoint] | None = None,
        buffers: BufferReader | None = None,
    ) -> None:
        from ..tools import build_tools
        from ..tools.base import ToolContext
        from ..tools.repo import list_repo_files

        self.session_id = session_id or uuid.uuid4().hex[:12]
        self.settings = settings
        self.emitter = EventEmitter(self.session_id, events)
        self.cancel_event = threading.Event()
        if not trusted and sandbox is not None:
            sandbox.close()  # it would validate by running things: never used here
            sandbox = None
        self.state = AgentState()
        self.max_steps = max_steps or settings.agent_max_steps
        self.ctx = ToolContext.create(
            repo,
            settings,
            approver=approver or DenyAllApprover(),
            sandbox=sandbox or (None if trusted else NoneSandbox(UNTRUSTED_VALIDATION)),
            patches=patches,
            session_id=self.session_id,
            trusted=trusted,
        )
        self.ctx.cancel = self.cancel_event
        self.ctx.buffers = buffers  # the editor's unsaved text, read in place of the disk
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
        try:
            self.repo_files = list_repo_files(self.ctx)
        except Exception:  # the listing is a help for the model, never a reason to fail
            log.exception("listing the repository's files failed")
            self.repo_files = []
        self._context_tokens: int | None = None
        self.agent = SmolCodeAgent(
            tools=tools,
            model=self.model,
            code_block_tags="markdown",
            prompt_templates=prompt_templates(self.repo_files),
            max_steps=self.max_steps,
            stream_outputs=True,
            context_tokens=self.context_tokens,
            locate=lambda names: defining_files(self.ctx, names, self.repo_files),
            edit_blocks=lambda reply, path, whole: edit_blocks(self.ctx, reply, path, whole),
            search_fix=lambda messages, path: search_fix(
                self.model, messages, self.ctx, set(self.repo_files), path, self._watch
            ),
            rewrite_line=lambda task: rewrite_line(self.model, self.ctx, task),
        )
        self.turns = 0
        self._topic = ""  # the last task of this conversation that named code
        self._topic_names: tuple[str, ...] = ()  # the code names that task was about
        self._said: tuple[str, ...] = ()  # the code names the last answer wrote
        self._schemas: bool | None = None  # the model's server holds replies to a JSON schema
        self._code_read = False  # some turn of this conversation read code
        self._watch: RunWatch | None = None
        self._running = threading.Lock()
        # The host's model endpoint, asked before each run (it may start a local server).
        self.endpoint_source = endpoint
        self.endpoint: Endpoint | None = None

    def context_tokens(self) -> int:
        """The model's context window, asked of its server once (the setting if it cannot say)."""
        if self._context_tokens is None:
            self._context_tokens = context_window(self.settings)
        return self._context_tokens

    @property
    def root(self) -> Path:
        return self.ctx.root

    def prefix_messages(self) -> list[dict[str, Any]]:
        """What every first request of this session starts with: the system prompt (its tools
        and the repository's files, nothing of any task). A host has the model read it before
        the first question (llm/prefix.py)."""
        return [{"role": "system", "content": self.agent.system_prompt}]

    def rehearse(self) -> None:
        """One tiny streamed request through this session's model, as a run makes them: the
        model client's first-call costs (LiteLLM's lazy imports, its HTTP client) are then paid
        before the user's first question, not in it (measured: 1-7 s on a busy 2-core CPU)."""
        self._connect()
        messages = [
            ChatMessage(
                role=MessageRole.SYSTEM,
                content=[{"type": "text", "text": self.agent.system_prompt}],
            ),
            ChatMessage(role=MessageRole.USER, content=[{"type": "text", "text": "Hello."}]),
        ]
        for _ in self.model.generate_stream(messages, max_tokens=1):
            pass

    def _prompt_progress(self, read: int, total: int) -> None:
        self.emitter(
            ProgressEvent(
                stage="prompt",
                message=f"reading {total:,} tokens",
                percent=min(100, read * 100 // total),
            )
        )

    def _on_patch(self, patch: Patch) -> None:
        if patch.session_id in (None, self.session_id):
            watch = self._watch
            if watch is not None and patch.session_id == self.session_id:
                watch.patches[patch.id] = patch  # proposed, or its state changed, in this run
            self.emitter(PatchEvent(patch=patch_view(patch, self.ctx.root)))

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
        from ..base.telemetry import end_run, flush, setup_tracing, trace_id_of, tracer

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
                end_run(span, outcome.status, outcome.error)
                span.set_attribute("output.value", outcome.answer[:2000])
                span.set_attribute("smol.duration_ms", int((time.monotonic() - started) * 1000))
            flush(2.0)
            self.turns += 1
            return outcome

    def _run(self, task: str, trace_id: str | None) -> RunOutcome:
        usage, steps, answer, step_open = Usage(), 0, "", False
        status: RunStatus = "completed"
        error: str | None = None
        reported: set[int] = set()  # smolagents yields the last ActionStep twice at max steps
        emit = self.emitter
        # The tree as the run began, read (by git, 50-100 ms) beside the first request
        before: Future[str | None] = Future()
        threading.Thread(
            target=lambda: before.set_result(self._tree_state()), name="smol-tree", daemon=True
        ).start()
        intent = self._decide(task)
        intent = replace(intent, said=self._said if intent.refers_back else ())
        self.ctx.symptom_calls, self.ctx.task_words = intent.symptom_calls, intent.words
        self.ctx.symptom_wants = intent.symptom_wants
        self.ctx.symptom_functions, self.ctx.symptom_steps, self.ctx.copied = {}, {}, None
        self.ctx.pin_expected = pinned if intent.adds_tests and not intent.fix else None
        end = self._one_step(trace_id)
        if intent.kind == "decline":  # one step, nothing run: the request is not carried out
            return end(declined_answer(intent), "completed", None)
        renamed = (
            rename_in_one_step(self.ctx, self.repo_files, intent, end) if intent.rename else None
        )
        if renamed is not None:
            return renamed
        watch = self._watch = self.agent.watch = RunWatch.begin(
            intent,
            self.state,
            self.repo_files,
            tree_changed=lambda: self._tree_state() != before.result(),
        )
        first = 0 if self.turns == 0 else len(self.agent.memory.steps)
        context, context_ms = self._gather(intent)
        # names given to "it" rather than written are not looked up afresh ("how do i get it to
        # indent?": the module's name found a test importing it, not the command; dev)
        own = intent.asks_value or any(name in task for name in intent.names)
        if self._topic and intent.refers_back and not (context and own):
            # "Which test checks it?": the code the conversation is about comes again, beside
            # the question (a small model does not look back three messages for it)
            context, context_ms = self._gather(from_rules(self._topic))
        elif context:
            self._topic = task
            self._topic_names = intent.names or self._topic_names
        shown = ToolEvent(
            step=1, name="context", args={"read": context.sources}, duration_ms=context_ms
        )
        if context.nowhere(intent):  # about names that exist nowhere: said, nothing invented
            near = ", ".join(f"`{name}`" for name in context.near)
            said = NOWHERE.format(
                names=", ".join(f"`{name}`" for name in intent.names),
                near=f" (the closest it defines: {near})" if near else "",
            )
            return end(said, "completed", shown)
        # what was given grounds the answer only when it answers the task (a computed call for
        # what code gives); code read in an earlier turn is in the history too ("which test
        # checks it?"), but no earlier turn ran what this one asks
        watch.context_given = context.answers(intent) or (self._code_read and not intent.asks_value)
        watch.given(context, self.ctx)
        text = intent.change and watch.writes_text  # a small file written whole, else blocks
        whole = text and writes_whole(self.ctx, watch.change_file)
        watch.whole_text = self.model.writes_whole = whole
        if intent.change and self._llama_server():  # what the change's replies are held to
            self.model.hold_next_reply(watch.hold(self.ctx))
        # what the answer is held to, from the code: what uses a name, a function's steps
        watch.reach = reaches(self.ctx, intent, context.asked, self.repo_files)
        watch.steps = function_steps(self.ctx, intent, context.definitions)
        watch.gave = context.gave if intent.asks_why else []
        path, nested = watch.change_file, watch.nested
        prompt = task_message(intent, context.text, path=path, nested=nested, whole=whole)
        try:
            self._connect()
            stream = self.agent.run(
                prompt, stream=True, reset=self.turns == 0, max_steps=self.max_steps
            )
            for item in stream:
                if isinstance(item, ActionStep) and id(item) in reported:
                    continue
                if not step_open and not isinstance(item, FinalAnswerStep):
                    steps += 1
                    self.state.step = steps
                    step_open = True
                    emit(StepEvent(step=steps, max_steps=self.max_steps))
                    if steps == 1 and context:  # shown in the step whose prompt had it
                        emit(shown)
                if isinstance(item, ChatMessageStreamDelta):
                    if item.content:
                        emit(TextEvent(text=item.content))
                elif isinstance(item, ToolCall):
                    emit(CodeEvent(step=steps, code=str(item.arguments)))
                elif isinstance(item, ActionStep):
                    step_open = False
                    reported.add(id(item))
                    self._report_step(item, steps, usage)
                elif isinstance(item, FinalAnswerStep):
                    answer = _answer_text(item.output)
            memory = self.agent.memory.steps
            if memory and isinstance(getattr(memory[-1], "error", None), AgentMaxStepsError):
                status = "max_steps"
            # smolagents yields the step before the step-limit summary again, not the summary.
            for step in memory[first:]:
                if isinstance(step, ActionStep) and id(step) not in reported:
                    _count(step, usage)
        except RunCancelled:
            status = "cancelled"
        except RunStuck as exc:
            status, error = "failed", f"stopped early: {exc}"
            if exc.step is not None and id(exc.step) not in reported:
                self._report_step(exc.step, steps, usage)
            last = watch.last_patch()
            if last is not None and watch.intent.change:
                # proposed before the model began repeating itself: the outcome, judged below
                said = describe_proposal(last, held=watch.intent.held)
                status, error, answer = "completed", None, said
        except Exception as exc:  # a fault anywhere must end the run, not the host
            if not isinstance(exc, ModelSetupError | AgentError):
                log.exception("run failed")
            if self.cancel_event.is_set():
                status = "cancelled"
            elif isinstance(exc, ModelSetupError):  # no model to talk to: one line with its fix
                status, error = "failed", str(exc)
            else:
                status, error = "failed", self._model_failure(exc)
        self._watch = self.agent.watch = None
        self._code_read = self._code_read or watch.grounded()
        if status == "completed":
            try:  # a fault in judging ends the run told, not the host; what was proposed stays
                status, answer = judge(answer, watch)
            except Exception as exc:
                log.exception("judging the run failed")
                fault = f"{type(exc).__name__}: {exc}"
                status, error = "failed", f"checking the outcome failed: {fault}"
        elif watch.corrections and answer:
            answer = "\n\n".join([answer.rstrip(), *watch.corrections])
        if status == "cancelled":
            answer = answer or "Cancelled."
        elif status == "failed":
            why = error or "the run failed"
            emit(ErrorEvent(message=why, recovery_suggestion=_recovery_for(error)))
            answer = answer or (error or "The run failed.")
        self._said = tuple(code_names(answer)) if status == "completed" else ()
        emit(FinalEvent(answer=answer, status=status))
        return RunOutcome(
            session_id=self.session_id,
            status=status,
            answer=answer,
            steps=steps,
            usage=usage,
            trace_id=trace_id,
            error=error,
        )

    def _decide(self, task: str) -> TaskIntent:
        """The task's intent, decided once (agent/intent.py `decide`), traced."""
        from ..base.telemetry import tracer

        with tracer().start_as_current_span("smol_instruments.intent") as span:
            intent = decide(
                task,
                follow_up=self.turns > 0,
                carried=self._topic_names,
                ask=self._ask_model,
                taken=lambda names: parameters_in(
                    self.ctx, defining_files(self.ctx, list(names), self.repo_files)
                ),
            )
            span.set_attribute("smol.intent.kind", intent.kind)
            span.set_attribute("smol.intent.decided_by", intent.decided_by)
            span.set_attribute("smol.intent.names", list(intent.names))
        return intent

    def _llama_server(self) -> bool:
        """The model's server is llama.cpp's (it answers /props): it takes a GBNF grammar.
        Connects first: the model is rebuilt when the endpoint moves, and with it what its
        next reply is held to."""
        self._connect()  # the endpoint's model id tells Ollama's server
        if self.settings.model_id.startswith(("ollama/", "ollama_chat/")):
            return False
        return self._enforces_schemas()

    def _enforces_schemas(self) -> bool:
        """The model's server holds replies to a JSON schema (asked once per endpoint)."""
        self._connect()
        if self._schemas is None:
            self._schemas = enforces_schemas(self.settings)
        return self._schemas

    def _ask_model(self, question: str) -> tuple[str, str] | None:
        """The model's reply to `question`, held to the intent's schema, asked after the
        conversation so far (the server's cached prefix is reused), and that conversation's
        text; None where the server enforces no schema or the call fails."""
        try:
            if not self._enforces_schemas():
                return None
            if self.turns == 0:
                self.agent.memory.reset()  # what run() does first: only the system prompt
            history = self.agent.write_memory_to_messages()
            asked = ChatMessage(role=MessageRole.USER, content=[{"type": "text", "text": question}])
            reply = self.model.constrained([*history, asked], INTENT_SCHEMA)
        except RunCancelled:  # the run's first step sees the cancel and ends `cancelled`
            return None
        except Exception:  # the rules decide instead
            log.exception("asking the model for the task's intent failed")
            return None
        parts = [m.content if isinstance(m.content, list) else [m.content] for m in history[1:]]
        said = [p.get("text", "") if isinstance(p, dict) else p for ps in parts for p in ps]
        return (reply, " ".join(str(text or "") for text in said)) if reply else None

    def _one_step(self, trace_id: str | None) -> OneStep:
        """Ends a run that took one step of ours and no model step (agent/direct.py)."""

        def end(answer: str, status: RunStatus, tool: ToolEvent | None) -> RunOutcome:
            self.emitter(StepEvent(step=1, max_steps=self.max_steps))
            if tool is not None:
                self.emitter(tool)
            self.emitter(FinalEvent(answer=answer, status=status))
            return RunOutcome(
                session_id=self.session_id,
                status=status,
                answer=answer,
                steps=1,
                usage=Usage(),
                trace_id=trace_id,
                error=None,
            )

        return end

    def _gather(self, intent: TaskIntent) -> tuple[Context, float]:
        """The code the task names, read before the first step (traced, never fatal)."""
        from ..base.telemetry import tracer

        started = time.monotonic()
        with tracer().start_as_current_span("smol_instruments.context") as span:
            context = gather(self.ctx, intent, self.repo_files)
            span.set_attribute("smol.context.sources", context.sources)
            span.set_attribute("smol.context.chars", len(context.text))
        return context, round((time.monotonic() - started) * 1000, 1)

    def _connect(self) -> None:
        """Point the model at the host's endpoint for this run (rebuilt when it moved)."""
        if self.endpoint_source is None:
            return
        endpoint = self.endpoint_source()
        if endpoint == self.endpoint:
            return
        self.endpoint = endpoint
        self._context_tokens = self._schemas = None  # another server: ask again
        self.settings = self.settings.model_copy(
            update={
                "model_id": endpoint.model_id,
                "model_api_base": endpoint.api_base,
                "model_api_key": endpoint.api_key,
            }
        )
        tool_names = self.model.tool_names
        self.model = build_model(self.settings, self.cancel_event)
        self.model.tool_names = tool_names
        if endpoint.reports_progress:
            self.model.report_progress(self._prompt_progress)
        self.agent.model = self.model

    def _model_failure(self, exc: BaseException) -> str:
        """A dead embedded server says so; anything else is described from the exception."""
        died = self.endpoint.failure() if self.endpoint is not None else None
        return died or _model_error_message(exc, self.settings)

    def _report_step(self, step: ActionStep, number: int, usage: Usage) -> None:
        emit = self.emitter
        _count(step, usage)
        if step.observations:
            text = step.observations
            emit(ObservationEvent(step=number, text=text, truncated="[truncated" in text))
        if step.error is not None and not isinstance(step.error, RunCancelled):
            message = str(step.error).strip()
            if self.cancel_event.is_set():
                return
            emit(ErrorEvent(message=message[:2000], recovery_suggestion=_step_recovery(message)))

    def _tree_state(self) -> str | None:
        """The working tree's state as git reports it (None outside git or when git fails)."""
        try:
            result = run_git(self.ctx, "status", "--porcelain=v1", "-z", "--untracked-files=all")
        except Exception:
            return None
        return result.stdout if result.exit_code == 0 else None


def _count(step: ActionStep, usage: Usage) -> None:
    if step.token_usage is not None:
        usage.prompt_tokens += step.token_usage.input_tokens
        usage.completion_tokens += step.token_usage.output_tokens


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


#: What a model client's error says when the server cannot be reached.
_UNREACHABLE = "connection refused|connecterror|cannot connect|connection error|failed to establish"


def _model_error_message(exc: BaseException, settings: Settings) -> str:
    root = exc
    while root.__cause__ is not None:  # smolagents wraps the model's error: report the cause
        root = root.__cause__
    text = str(root) if str(root).strip() else str(exc)
    lowered = text.lower()
    if any(said in lowered for said in _UNREACHABLE.split("|")):
        return f"cannot reach the model server at {settings.model_api_base} for {settings.model_id}"
    if "context window" in lowered or "context size" in lowered or "contextwindow" in lowered:
        return "the request no longer fits the model's context window, even shortened"
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
    if error and "context window" in error:
        return "Start a new chat, ask for one thing at a time, or raise MODEL_NUM_CTX."
    if error and "did not answer" in error:
        return (
            "The model is slow or stuck: try again, raise MODEL_TIMEOUT_S, or use a smaller model."
        )
    return None
