"""The agent's loop: smolagents' CodeAgent, extended only through its seams, for small models.

What a small model does wrong, and what the loop does about it (the loop itself is upstream's):

- It answers in prose, as it is told to (a code block calling final_answer works too). A plain
  question gets that prose as its answer at once. A question about the repository's code,
  while nothing has been read yet, is sent back once: read first. Prose that only announces a
  plan ("I will read the file.") is never an answer: do it now.
- It copies an instruction's placeholder (`final_answer("...")`) as its answer: refused.
- It says "fixed" when nothing was proposed: a task that asks for a change gets one reminder
  to propose it; the session then judges the outcome by what really happened.
- It gets stuck: a refused repeat is told to answer now (or, for a change, to propose it now);
  it, and the same failing reply twice, make the next reply sampled hotter (once); the same
  failing reply three times in a row, or three calls refused as loops, ends the run early and
  honestly (`RunStuck`) instead of burning the remaining steps.
- At the step limit, smolagents' summary call replaces the system prompt, so a model server
  re-reads the whole history (minutes on a CPU). Here the summary keeps every message and asks
  as the last user message, so the server's cached prefix is reused.
- The history outgrows the model's context: outputs of older steps are shortened, visibly, to
  fit the window the server reports.
"""

from __future__ import annotations

import copy
import logging
import re
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any

from smolagents import ActionStep, CodeAgent
from smolagents.agents import ActionOutput, populate_template
from smolagents.local_python_executor import CodeOutput, InterpreterError
from smolagents.memory import AgentMemory, ToolCall
from smolagents.models import ChatMessage, MessageRole
from smolagents.utils import AgentMaxStepsError, AgentParsingError

from ..base.errors import ErrorType
from ..patches.model import Patch
from .edits import NO_FILE, choose_file, defined_names, edit_call, file_header
from .executor import ToolFunctionsExecutor
from .outcome import asks_for_change, describe_proposal, needs_a_change
from .prompts import (
    AFTER_OBSERVATION,
    AFTER_OBSERVATION_CHANGE,
    AFTER_PROPOSAL,
    ANSWER_NOW,
    CHANGE_NOW,
    DO_IT_NOW,
    READ_FIRST,
    SHORT_FORMAT_ERROR,
    WRITE_THE_CHANGE,
    is_placeholder,
    is_plan,
)
from .state import AgentState

log = logging.getLogger(__name__)

_FENCE = "```"
#: Identical failing replies, or calls refused as loops, before a run is stopped.
STUCK_AFTER = 3
#: Prose at least this long before a block that changes nothing is a written answer.
ILLUSTRATED_ANSWER_CHARS = 120
_NO_OUTPUT = "Last output from code snippet:\nNone"
_CALL_ID = re.compile(r"Call id: \S+\n")
#: Characters per token when estimating a history's size (code is dense; err on the safe side).
CHARS_PER_TOKEN = 3.0
# What makes a task about the code: `backticks`, call(), snake_case or camelCase names, or
# words that only make sense of a code base.
_CODE_NAMES = re.compile(r"`[^`]+`|\b\w+\(\)|\b[a-z]+_[a-z0-9_]+\b|\b[a-z]+[A-Z]\w*\b")
_CODE_NOUNS = re.compile(
    r"\b(?:function|method|class|module|file|files|test|tests|bug|code|repo|repository|"
    r"project|commit|line|variable|import|error)s?\b",
    re.IGNORECASE,
)


#: What the task asks to do first, and the call that does it.
_FIRST_CALLS = (
    (re.compile(r"\b(?:run|execute|start)\b[^.?!]{0,40}\btests?\b", re.I), "run_tests()"),
    (
        re.compile(r"\b(?:commits?|history|committed|git log)\b", re.I),
        "git_log(max_count=3)",
    ),
    (
        re.compile(r"\b(?:which|what|list)\b[^.?!]{0,30}\bfiles\b", re.I),
        'list_files(pattern="*")',
    ),
)


class RunStuck(Exception):
    """The model repeats itself without progress; the message says how, for the user.

    `step` is the step that showed it: raised from the step's callback, it never reaches the
    run's stream, so the session reports it (its output, its tokens) from here.
    """

    def __init__(self, message: str, step: ActionStep | None = None) -> None:
        super().__init__(message)
        self.step = step


@dataclass
class RunWatch:
    """What one run has done so far, for the loop's judgments. The session makes one per run."""

    task: str
    state: AgentState
    repo_files: list[str] = field(default_factory=list)
    first_call: int = 0
    first_loop_count: int = 0
    #: Patches proposed in this run, by id, in the order proposed (the session adds them as
    #: they arrive and replaces them as their state changes).
    patches: dict[str, Patch] = field(default_factory=dict)
    #: The changes written as blocks in this run (path, block), so a repeat can end it.
    blocks: set[tuple[str, str]] = field(default_factory=set)
    patches_seen: int = 0  # patches the model has been told of
    #: Whether the working tree changed since the run began (the session knows how to look).
    tree_changed: Callable[[], bool] = lambda: False
    nudged: set[str] = field(default_factory=set)
    #: Code the task names was read before the first step (agent/context.py).
    context_given: bool = False
    #: The repository's files the task names (agent/context.py).
    named_files: list[str] = field(default_factory=list)

    @property
    def change(self) -> bool:
        """The task asks for a change (agent/outcome.py)."""
        return asks_for_change(self.task)

    @classmethod
    def begin(cls, task: str, state: AgentState, repo_files: list[str], **kw: Any) -> RunWatch:
        return cls(
            task,
            state,
            repo_files,
            first_call=state.total_calls,
            first_loop_count=state.loops_detected,
            **kw,
        )

    def tools_used(self) -> bool:
        """Code was read for this run: context given with the task, or a tool call that ran (a
        refused or invalid call does not count)."""
        return self.context_given or any(
            record.error not in (ErrorType.LOOP_DETECTED, ErrorType.INVALID_ARGUMENT)
            for record in self.state.calls_since(self.first_call)
        )

    def loops(self) -> int:
        return self.state.loops_detected - self.first_loop_count

    def changed(self) -> bool:
        return bool(self.patches) or self.tree_changed()

    def last_patch(self) -> Patch | None:
        return next(reversed(self.patches.values()), None)

    def about_code(self) -> bool:
        """The task names something of this repository (a path, a file, an identifier)."""
        task = self.task
        names = {path for path in self.repo_files}
        names |= {path.rsplit("/", 1)[-1] for path in self.repo_files}
        names |= {name.rsplit(".", 1)[0] for name in names if len(name.rsplit(".", 1)[0]) >= 4}
        words = set(re.findall(r"[\w./-]+", task))
        return bool(words & names or _CODE_NAMES.search(task) or _CODE_NOUNS.search(task))

    def first_read(self) -> str:
        """The call that starts doing what the task asks: run the tests, read the history, read
        the file it names, find the name it mentions."""
        for intent, call in _FIRST_CALLS:
            if intent.search(self.task):
                return call
        for path in self.repo_files:
            if path in self.task:
                return f'read_file(path="{path}")'
        for word in re.findall(r"`([^`]+)`|\b(\w+)\(\)|\b([a-z]+_[a-z0-9_]+)\b", self.task):
            name = next(part for part in word if part)
            return f'rg_search(pattern="{name}")'
        return 'rg_search(pattern="<a name from the question>")'


class SmolCodeAgent(CodeAgent):
    """CodeAgent with small-model recovery in its step generator (the loop itself is upstream's)."""

    def __init__(
        self,
        *args: Any,
        context_tokens: Callable[[], int | None],
        locate: Callable[[list[str]], dict[str, list[str]]] | None = None,
        **kwargs: Any,
    ) -> None:
        kwargs.setdefault(
            "final_answer_checks",
            [the_answer_is_real, the_code_was_read, the_change_was_proposed],
        )
        super().__init__(*args, **kwargs)
        self.watch: RunWatch | None = None
        self.context_tokens = context_tokens
        #: Where the repository defines names (for a change written without its file).
        self.locate = locate or (lambda names: {})
        self._reply = ""  # the model's reply in the step being run
        #: What each step's observation ends with (by the run it belongs to), id(step) -> text.
        self._after: dict[int, str] = {}
        self._trim_floor = 0  # steps below this number have their outputs shortened
        self._same_failures = 0
        self._loops_seen = 0
        self.step_callbacks.register(ActionStep, self._check_progress)

    def create_python_executor(self) -> ToolFunctionsExecutor:
        """The interpreter gets plain functions for the tools, never the tool objects."""
        executor = ToolFunctionsExecutor(
            self.additional_authorized_imports,
            max_print_outputs_length=self.max_print_outputs_length,
            **self.executor_kwargs,
        )
        executor.route = self._route
        return executor

    # --- a block that is a change, or an illustration -----------------------------------------

    def _route(self, code: str) -> str | CodeOutput:
        """The code to run for a reply's block (agent/edits.py): a block of definitions headed
        by `# file: <path>` (or, in a run that asks for a change, one whose file is clear) is
        proposed as a change; in a question, one under a written answer is part of it."""
        watch = self.watch
        tools = set(self.tools)
        files = set(watch.repo_files) if watch is not None else set()
        path, body = file_header(code, files)
        names = defined_names(body, tools)
        if names is None:
            return code
        if path is None and watch is not None and watch.change:
            path = choose_file(names, self.locate, watch.named_files)
            if path is None:
                raise InterpreterError(NO_FILE.format(names=", ".join(names)))
        if path is not None:
            return self._edit(path, body)
        prose = _before_first_block(self._reply)
        # "..., like this:" ends an answer that shows code; "I will read it:" is a plan
        if len(prose) >= ILLUSTRATED_ANSWER_CHARS and not is_plan(prose.rstrip(": \n")):
            return CodeOutput(output=self._reply.strip(), logs="", is_final_answer=True)
        return code

    def _edit(self, path: str, body: str) -> str | CodeOutput:
        """The call that proposes a change block; the run's end when it was proposed already
        (small models propose the same change again instead of saying they are done)."""
        watch = self.watch
        if watch is None:
            return edit_call(path, body)
        key = (path, body.strip())
        last = watch.last_patch()
        if key in watch.blocks and last is not None:
            return CodeOutput(output=describe_proposal(last), logs="", is_final_answer=True)
        watch.blocks.add(key)
        return edit_call(path, body)

    # --- replies without code --------------------------------------------------------------

    def _step_stream(self, memory_step: ActionStep) -> Generator[Any]:
        try:
            for item in super()._step_stream(memory_step):
                if isinstance(item, ToolCall):  # the reply is complete: its block runs next
                    self._reply = memory_step.model_output or ""
                yield item
        except AgentParsingError:
            prose = (memory_step.model_output or "").strip()
            if prose.endswith(_FENCE) and _FENCE not in prose[:-3]:
                prose = prose[:-3].rstrip()  # smolagents appended a closing fence
            watch = self.watch
            must_read = (
                watch is not None
                and "read-first" not in watch.nudged
                and not watch.tools_used()
                and watch.about_code()
            )
            if prose and must_read and watch is not None:
                watch.nudged.add("read-first")
                raise AgentParsingError(
                    READ_FIRST.format(call=watch.first_read()), self.logger
                ) from None
            if prose and is_plan(prose) and watch is not None:
                # "I will read the file." is not an answer: the model stopped before its code.
                raise AgentParsingError(
                    DO_IT_NOW.format(call=watch.first_read()), self.logger
                ) from None
            if prose and not is_placeholder(prose):
                # A plain answer, or a second prose reply after a nudge: that prose is the answer.
                memory_step.action_output = prose
                yield ActionOutput(output=prose, is_final_answer=True)
                return
            raise AgentParsingError(SHORT_FORMAT_ERROR, self.logger) from None

    # --- stuck -------------------------------------------------------------------------------

    def _check_progress(self, step: ActionStep, **_: Any) -> None:
        """After each step: stop the run when the model only repeats itself."""
        watch = self.watch
        if watch is not None and watch.change:
            proposed = len(watch.patches) > watch.patches_seen
            self._after[id(step)] = AFTER_PROPOSAL if proposed else AFTER_OBSERVATION_CHANGE
            watch.patches_seen = len(watch.patches)
        if isinstance(step.error, AgentMaxStepsError):
            return
        if watch is not None and watch.loops() >= STUCK_AFTER:
            repeated = watch.state.last_loop_call() or "the same tool call"
            raise RunStuck(f"the model kept repeating {repeated}, which had already run", step)
        if watch is not None and watch.loops() > self._loops_seen:
            self._shake()  # a refused repeat: at a low temperature the next reply is the same
            # it has what it needs and asks for it again: say what to do with it instead
            wanted = (
                CHANGE_NOW if needs_a_change(watch.task, "") and not watch.changed() else ANSWER_NOW
            )
            step.observations = (
                (step.observations or "").rstrip() + "\n" + wanted.format(task=watch.task)
            )
        self._loops_seen = watch.loops() if watch is not None else 0
        previous = self._previous_action(step)
        failing = step.error is not None and not step.is_final_answer
        if (
            failing
            and previous is not None
            and previous.error is not None
            and ((previous.model_output or "").strip() == (step.model_output or "").strip())
        ):
            self._same_failures += 1
        else:
            self._same_failures = 1 if failing else 0
        if self._same_failures == STUCK_AFTER - 1:
            self._shake()
        if self._same_failures >= STUCK_AFTER:
            first = str(step.error).strip().splitlines()
            raise RunStuck(
                f"the model wrote the same failing reply {STUCK_AFTER} times"
                + (f" ({first[0][:160]})" if first else ""),
                step,
            )

    def _shake(self) -> None:
        """Sample the next reply hotter, once: the same prompt at 0.1 gives the same reply."""
        shake = getattr(self.model, "shake_next_reply", None)
        if callable(shake):
            shake()

    def _previous_action(self, step: ActionStep) -> ActionStep | None:
        for earlier in reversed(self.memory.steps):
            if isinstance(earlier, ActionStep) and earlier is not step:
                return earlier
        return None

    # --- the step-limit summary -------------------------------------------------------------

    def provide_final_answer(self, task: str) -> ChatMessage:
        """The summary at the step limit, asked after the unchanged history (cached prefix)."""
        messages = self.write_memory_to_messages()
        if self.watch is not None:
            task = self.watch.task  # the user's words, without the context given with them
        instruction = populate_template(
            self.prompt_templates["final_answer"]["post_messages"], variables={"task": task}
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
        message.content = text.replace(_FENCE, "").strip() or "The step limit was reached."
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
            if _estimate(trimmed) <= budget or floor == steps[-1].step_number:
                if floor > self._trim_floor:
                    log.info("history trimmed below step %d to fit %d tokens", floor, limit)
                    self._trim_floor = floor
                return trimmed
        return messages

    def _messages(self, summary_mode: bool, floor: int = 0) -> list[ChatMessage]:
        """The history, tidied (`_tidy`); outputs of steps below `floor` cut to a line."""
        messages = _tidy(self.memory.system_prompt.to_messages(summary_mode=summary_mode))
        for step in self.memory.steps:
            after = self._after.get(id(step), AFTER_OBSERVATION)
            if isinstance(step, ActionStep) and step.step_number < floor and step.observations:
                step = copy.copy(step)
                size = len(step.observations)
                step.observations = (
                    f"[the output of step {step.step_number} ({size} characters) was cut to fit "
                    "the model's context window; call the tool again if you need it]"
                )
            messages.extend(_tidy(step.to_messages(summary_mode=summary_mode), after))
        return messages


def _tidy(messages: list[ChatMessage], after: str = AFTER_OBSERVATION) -> list[ChatMessage]:
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


def _before_first_block(reply: str) -> str:
    """The prose a reply starts with, up to its first fence."""
    return reply.split(_FENCE, 1)[0].strip()


def _text_of(message: ChatMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def _estimate(messages: list[ChatMessage]) -> int:
    size = 0
    for message in messages:
        content = message.content
        if isinstance(content, str):
            size += len(content)
        elif isinstance(content, list):
            size += sum(
                len(str(part.get("text", ""))) for part in content if isinstance(part, dict)
            )
    return int(size / CHARS_PER_TOKEN) + 4 * len(messages)


# smolagents wraps a failing check as "Check <name> failed with error: <message>": the names
# below are written to be read by the model in that sentence.


def the_answer_is_real(answer: Any, memory: AgentMemory, agent: Any = None) -> bool:
    """A final answer that is an instruction's slot ("...", "<answer>") is no answer."""
    if isinstance(answer, str) and is_placeholder(answer):
        raise ValueError(
            "that is the placeholder from the instructions, not an answer. Call final_answer "
            "with what you found, in your own words."
        )
    if isinstance(answer, str) and _echoes_an_error(answer, memory):
        raise ValueError(
            "that is the text of an error message, not an answer. Do what its suggestion says "
            "first; call final_answer when you have found what the task asks."
        )
    return True


#: An answer of at least this many words, this share of them words of an error, retells it.
ECHO_MIN_WORDS = 8
ECHO_SHARE = 0.9


def _echoes_an_error(answer: str, memory: AgentMemory) -> bool:
    """The answer repeats (most of) an error or recovery suggestion the run was shown."""
    text = " ".join(answer.split()).strip(" .")
    if len(text) < 20:
        return False
    for step in memory.steps[-4:]:
        observed = str(getattr(step, "observations", None) or "")
        shown = [
            line
            for line in observed.splitlines()
            if line.lstrip().startswith(("message:", "recovery_suggestion:"))
        ]
        if getattr(step, "error", None) is not None:
            shown.append(str(step.error))
        if any(text in " ".join(part.split()) for part in shown):
            return True
        # the message and its suggestion retold in one breath ("The pattern ... does not occur
        # in x. Use a shorter ..."): nearly every word of the answer is a word of the errors
        words = re.findall(r"\w+", text.lower())
        told = set(re.findall(r"\w+", " ".join(shown).lower()))
        if len(words) >= ECHO_MIN_WORDS and sum(w in told for w in words) >= ECHO_SHARE * len(
            words
        ):
            return True
    return False


def the_code_was_read(answer: Any, memory: AgentMemory, agent: Any = None) -> bool:
    """A question about the repository's code, answered before anything was read, is sent back
    once to be answered from the code."""
    watch: RunWatch | None = getattr(agent, "watch", None)
    if watch is None or "read-first" in watch.nudged or watch.tools_used():
        return True
    if not watch.about_code():
        return True
    watch.nudged.add("read-first")
    raise ValueError(
        "this is about the repository's code and nothing has been read yet. Read it first, "
        f"e.g. print({watch.first_read()}), then answer from what it shows."
    )


def the_change_was_proposed(answer: Any, memory: AgentMemory, agent: Any = None) -> bool:
    """A task that asks for a change gets one reminder when nothing was proposed yet."""
    watch: RunWatch | None = getattr(agent, "watch", None)
    if watch is None or "change" in watch.nudged or watch.changed():
        return True
    if not needs_a_change(watch.task, str(answer)):
        return True
    watch.nudged.add("change")
    path = watch.named_files[0] if len(watch.named_files) == 1 else "<path>"
    raise ValueError(
        "no change has been proposed for this task yet. Reply with the change: "
        + WRITE_THE_CHANGE.format(path=path)
        + ". If you cannot make the change, say why in plain sentences."
    )
