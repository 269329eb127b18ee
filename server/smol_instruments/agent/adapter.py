"""Where the agent reaches below smolagents' public seams: one module, pinned to its version.

Written against smolagents 1.26.0 (`WRITTEN_FOR`; pyproject.toml pins it, and importing this
module with another version fails with what to do). Each override here leans on how that
version works inside, so each is checked again when the pin moves:

- `_step_stream` (private): CodeAgent's step. The reply is kept once its block is parsed (the
  `ToolCall` it yields), and a reply with no block (upstream raises `AgentParsingError`) goes
  to `answer_without_code` instead of being an error at once. Upstream appends a closing fence
  to a reply that does not end with one; that fence is taken off again here.
- `create_python_executor`: the interpreter is ours (agent/executor.py), and `route_block`
  looks at each block before it runs.
- `initialize_system_prompt`: rendered once per agent (upstream renders it at construction and
  again at every reset).
- `provide_final_answer`: the step-limit summary keeps the whole history (upstream replaces
  the system prompt, and a model server then re-reads everything).
- `write_memory_to_messages`: the history as upstream's memory steps write it, tidied of the
  text a small model copies, and shortened to fit the model's context window.
- rich's `Live` and `Markdown`, which upstream uses only for its console, become no-ops.

The subclass (agent/loop.py `SmolCodeAgent`) decides what to do; this module only connects.
"""

from __future__ import annotations

import copy
import logging
import re
from collections.abc import Callable, Generator
from io import StringIO
from typing import Any

import smolagents
from smolagents import ActionStep, CodeAgent
from smolagents.agents import ActionOutput, populate_template
from smolagents.local_python_executor import CodeOutput
from smolagents.memory import ToolCall
from smolagents.models import ChatMessage, MessageRole
from smolagents.monitoring import AgentLogger, LogLevel
from smolagents.utils import AgentParsingError

from .executor import ToolFunctionsExecutor

#: The smolagents version every override below was written against and checked with.
WRITTEN_FOR = "1.26.0"
if smolagents.__version__ != WRITTEN_FOR:
    raise ImportError(
        f"agent/adapter.py overrides private methods of smolagents {WRITTEN_FOR}, but "
        f"smolagents {smolagents.__version__} is installed. Install the version pyproject.toml "
        "pins (bash .ci/setup), or check each override in agent/adapter.py against the new "
        "version before changing WRITTEN_FOR."
    )

log = logging.getLogger(__name__)

FENCE = "```"
_NO_OUTPUT = "Last output from code snippet:\nNone"
_CALL_ID = re.compile(r"Call id: \S+\n")
#: Characters per token when estimating a history's size (code is dense; err on the safe side).
CHARS_PER_TOKEN = 3.0
#: What is kept of an old reply when the history must be shortened to fit.
_KEPT_REPLY_CHARS = 400


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


def skip_console_rendering() -> None:
    """smolagents re-renders the whole reply as rich Markdown on every streamed delta, for a
    console nobody sees here (hosts render our events): about 45 ms per step, measured.
    Its `Live` and `Markdown` are used only for that display, so they become no-ops."""
    import smolagents.agents as upstream

    if getattr(upstream, "Live", None) is not _NoLive:
        upstream.Live = _NoLive
        upstream.Markdown = _no_markdown


def quiet_logger() -> AgentLogger:
    """smolagents' rich console writes even at level OFF; send it to a buffer, never stdout."""
    from rich.console import Console

    return AgentLogger(level=LogLevel.OFF, console=Console(file=StringIO(), force_terminal=False))


class PinnedCodeAgent(CodeAgent):
    """CodeAgent with its private step, history and summary adapted; the decisions are the
    subclass's, through the four hooks at the end of this class."""

    def __init__(self, *args: Any, context_tokens: Callable[[], int | None], **kwargs: Any) -> None:
        self._system_prompt: str | None = None
        kwargs.setdefault("logger", quiet_logger())
        kwargs.setdefault("verbosity_level", LogLevel.OFF)
        skip_console_rendering()
        super().__init__(*args, **kwargs)
        self.context_tokens = context_tokens
        self._reply = ""  # the model's reply in the step being run
        self._trim_floor = 0  # steps below this number have their outputs shortened

    def initialize_system_prompt(self) -> str:
        """Rendered once per agent: its templates and tools do not change once it is built
        (upstream compiles the Jinja template at construction and again at every reset, 25-50 ms
        each before a new conversation's first request)."""
        if self._system_prompt is None:
            self._system_prompt = super().initialize_system_prompt()
        return self._system_prompt

    def create_python_executor(self) -> ToolFunctionsExecutor:
        """The interpreter gets plain functions for the tools, never the tool objects."""
        executor = ToolFunctionsExecutor(
            self.additional_authorized_imports,
            max_print_outputs_length=self.max_print_outputs_length,
            **self.executor_kwargs,
        )
        executor.route = self.route_block
        return executor

    def _step_stream(self, memory_step: ActionStep) -> Generator[Any]:
        try:
            for item in super()._step_stream(memory_step):
                if isinstance(item, ToolCall):  # the reply is complete: its block runs next
                    self._reply = memory_step.model_output or ""
                yield item
            return
        except AgentParsingError:
            prose = (memory_step.model_output or "").strip()
            if prose.endswith(FENCE) and FENCE not in prose[:-3]:
                prose = prose[:-3].rstrip()  # smolagents appended a closing fence
        # outside the handler: the error the hook raises is the step's own, not a follow-up
        answer = self.answer_without_code(prose)
        memory_step.action_output = answer
        yield ActionOutput(output=answer, is_final_answer=True)

    # --- the step-limit summary -------------------------------------------------------------

    def provide_final_answer(self, task: str) -> ChatMessage:
        """The summary at the step limit, asked after the unchanged history (cached prefix)."""
        messages = self.write_memory_to_messages()
        instruction = populate_template(
            self.prompt_templates["final_answer"]["post_messages"],
            variables={"task": self.summary_task(task)},
        )
        messages.append(
            ChatMessage(role=MessageRole.USER, content=[{"type": "text", "text": instruction}])
        )
        try:
            message: ChatMessage = self.model.generate(messages)
        except Exception as exc:
            if getattr(self.model, "cancel", None) is not None and self.model.cancel.is_set():
                raise
            log.warning("the step-limit summary failed: %s", exc)
            reason = (
                str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
            )
            return ChatMessage(
                role=MessageRole.ASSISTANT,
                content=(
                    "The step limit was reached before the task was done, and the model could "
                    f"not summarise the work ({reason})."
                ),
            )
        text = message.content if isinstance(message.content, str) else str(message.content)
        message.content = text.replace(FENCE, "").strip() or "The step limit was reached."
        return message

    # --- the context window ------------------------------------------------------------------

    def write_memory_to_messages(self, summary_mode: bool = False) -> list[ChatMessage]:
        messages = self._messages(summary_mode)
        limit = self.context_tokens()
        if not limit:
            return messages
        reply = int(getattr(self.model, "kwargs", {}).get("max_tokens") or 1024)
        budget = max(512, limit - reply - 256)
        if _estimate(messages) <= budget:
            return messages
        steps = [s for s in self.memory.steps if isinstance(s, ActionStep)]
        for floor in range(max(self._trim_floor, 1), (steps[-1].step_number if steps else 1) + 1):
            trimmed = self._messages(summary_mode, floor)
            if _estimate(trimmed) <= budget or not steps or floor == steps[-1].step_number:
                if floor > self._trim_floor:
                    log.info("history trimmed below step %d to fit %d tokens", floor, limit)
                    self._trim_floor = floor
                return trimmed
        return messages

    def _messages(self, summary_mode: bool, floor: int = 0) -> list[ChatMessage]:
        """The history, tidied (`_tidy`); outputs of steps below `floor` cut to a line."""
        messages = _tidy(self.memory.system_prompt.to_messages(summary_mode=summary_mode), "")
        for step in self.memory.steps:
            after = self.words_after(step)
            if isinstance(step, ActionStep) and step.step_number < floor:
                step = copy.copy(step)
                size = len(step.observations or "")
                if size:
                    step.observations = (
                        f"[the output of step {step.step_number} ({size} characters) was cut to "
                        "fit the model's context window; call the tool again if you need it]"
                    )
                # a long reply too (tc-no-color-wins, dev: two replies of 90 lines of code and
                # their diffs were 8,255 tokens, and the server refused the request)
                reply = step.model_output or ""
                if len(reply) > _KEPT_REPLY_CHARS:
                    step.model_output = (
                        f"{reply[:_KEPT_REPLY_CHARS]}\n[the rest of this reply ({len(reply)} "
                        "characters) was cut to fit the model's context window]"
                    )
            messages.extend(_tidy(step.to_messages(summary_mode=summary_mode), after))
        return messages

    # --- the hooks: what the subclass decides ------------------------------------------------

    def route_block(self, code: str) -> str | CodeOutput:
        """The code to run for a reply's block, or the step's output when it is not code."""
        return code

    def answer_without_code(self, prose: str) -> str:
        """A reply with no block: the answer it is, or raise `AgentParsingError` to send it
        back."""
        raise AgentParsingError("Your reply had no code block.", self.logger)

    def words_after(self, step: Any) -> str:
        """What a step's observation ends with in the history."""
        return ""

    def summary_task(self, task: str) -> str:
        """The task as the step-limit summary names it."""
        return task


def _tidy(messages: list[ChatMessage], after: str) -> list[ChatMessage]:
    """The history as a small model reads it best.

    smolagents repeats each code block as a "Calling tools: [{'id': ...}]" message (a small
    model then writes that text itself), heads each error with "Call id: call_3" (copied too)
    and ends each observation with "Last output from code snippet: None". All three go; each
    observation ends with what to do next (`after`: the words of the run it belongs to, fixed
    once written, so the server's cached prefix stays valid).
    """
    tidy = []
    for message in messages:
        if message.role == MessageRole.TOOL_CALL:
            continue
        text = _text_of(message)
        if message.role == MessageRole.TOOL_RESPONSE and _CALL_ID.match(text):
            # "Call id: call_3" heads every error; the model then starts its replies with it
            text = _CALL_ID.sub("", text, count=1)
            message = ChatMessage(role=message.role, content=[{"type": "text", "text": text}])
        if message.role == MessageRole.TOOL_RESPONSE and text.startswith("Observation:"):
            text = text.removesuffix(_NO_OUTPUT).rstrip() + "\n" + after
            message = ChatMessage(role=message.role, content=[{"type": "text", "text": text}])
        tidy.append(message)
    return tidy


def _text_of(message: ChatMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def _estimate(messages: list[ChatMessage]) -> int:
    size = sum(len(_text_of(message)) for message in messages)
    return int(size / CHARS_PER_TOKEN) + 4 * len(messages)
