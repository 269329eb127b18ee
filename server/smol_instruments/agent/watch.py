"""What one run has done so far, and what its task asks: the facts the loop judges by.

The session makes a RunWatch per run and tells it what happens (patches proposed, the context
given); the loop (agent/loop.py) and the final-answer checks (agent/answers.py) read it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..base.errors import ErrorType, ToolError
from ..base.testruns import is_test_path
from ..patches.model import Patch
from ..tools.base import ToolContext
from ..tools.edit import held_blocks_grammar
from ..tools.imports import fitting_callables
from ..tools.scaffold import parameter_grammar, parameters_of
from . import wording
from .evidence import Steps
from .intent import TaskIntent
from .prompts import Nudge, meant_inner, writes_text
from .state import AgentState

if TYPE_CHECKING:
    from .context import Context

#: The tools whose result is what code really gives (not what it says).
RUNS_CODE = frozenset({"evaluate", "run_cmd", "run_tests"})
#: A package's own module: where its functions are when no code was shown.
_PACKAGE = re.compile(r"(?:src/)?\w+/__init__\.py|(?!setup\.py|conftest\.py)\w+\.py")
#: The tools that show the repository's shape (its files, branch, counts), not what its code
#: says or does: they answer a question about the code only when it asks for them.
SHAPE = frozenset({"repo_info", "list_files"})


#: A file name written in a task ("put it in a new utils/text.py").
_FILE_NAME = re.compile(r"[\w/.-]+\.(?:py|pyi|md|rst|txt|toml|cfg|ini|ya?ml|json|js|ts|sh)\b")


@dataclass
class RunWatch:
    """What one run has done so far, for the loop's judgments. The session makes one per run."""

    intent: TaskIntent
    state: AgentState
    repo_files: list[str] = field(default_factory=list)
    first_call: int = 0
    first_loop_count: int = 0
    #: Patches proposed in this run, by id, in the order proposed (the session adds them as
    #: they arrive and replaces them as their state changes).
    patches: dict[str, Patch] = field(default_factory=dict)
    #: The changes written as blocks in this run (path, block), so a repeat can end it.
    blocks: set[tuple[str, str]] = field(default_factory=set)
    #: Versions of a change were sampled again for the symptom's value (agent/search.py).
    searched: bool = False
    #: A line of code a copied function holds the task's words on was asked for alone.
    rewritten: bool = False
    #: What the symptom's calls should give: the task's words, or a failing test's assertion.
    wants: dict[str, str] = field(default_factory=dict)
    patches_seen: int = 0  # patches the model has been told of
    #: Whether the working tree changed since the run began (the session knows how to look).
    tree_changed: Callable[[], bool] = lambda: False
    #: The reminders sent once in this run (agent/answers.py).
    nudged: set[Nudge] = field(default_factory=set)
    #: What the run's final answer gets below it: facts the tools showed that the answer
    #: contradicts after being told once (the session appends them).
    corrections: list[str] = field(default_factory=list)
    #: The answer is the previous turn's, word for word, even after being told once.
    repeated: bool = False
    #: What was given before the first step answers the task (agent/context.py `answers`).
    context_given: bool = False
    #: What the task's calls gave when run before the first step, "call = value".
    computed: list[str] = field(default_factory=list)
    #: For a question asking why: what the expressions of the calls run for it gave, and where.
    gave: list[tuple[str, str]] = field(default_factory=list)
    #: For a question about what uses a name: the functions that reach it (evidence.py `reach`).
    reach: dict[str, list[str]] = field(default_factory=dict)
    #: For a request to explain a function: its name, code and steps (evidence.py `function_steps`).
    steps: Steps | None = None
    #: The model's sentences for the steps its explanation left out, asked one at a time
    #: (agent/answers.py); they follow its answer. Asked once in a run.
    told: list[str] = field(default_factory=list)
    steps_asked: bool = False
    #: The repository's files the task names (agent/context.py).
    named_files: list[str] = field(default_factory=list)
    #: The one file of code whose definitions were shown for the task (agent/context.py).
    code_file: str | None = None
    #: The grammar a text change's reply is held to once it has missed the blocks' form
    #: (llama.cpp's server only; agent/loop.py), or "".
    edit_grammar: str = ""
    #: The change is a small file that is not Python, written whole (tools/rewrite.py
    #: `rewrite_block`, `WHOLE_TEXT_CHARS`).
    whole_text: bool = False
    #: (inner, outer) of each function shown nested in another (agent/context.py).
    nested: list[tuple[str, str]] = field(default_factory=list)
    outer_files: dict[str, str] = field(default_factory=dict)  # the file of each `outer`
    #: Names the task writes as code that occur nowhere in the repository (agent/context.py):
    #: for a change, what it adds by those names.
    absent: list[str] = field(default_factory=list)
    #: The tests that failed before the first step, run for it (agent/context.py).
    failing: list[str] = field(default_factory=list)
    #: The names the task mentions that the repository defines (agent/context.py).
    asked: list[str] = field(default_factory=list)
    #: The parameters the change's file's functions take already (tools/scaffold.py).
    taken: set[str] = field(default_factory=set)
    #: The grammar the change's first reply was held to, and the new parameter it starts
    #: the function with (tools/scaffold.py); versions sampled again are held to it too.
    scaffold: str = ""
    parameter: str = ""
    #: The files of code (not tests) whose definitions were shown, in the order shown, and
    #: the names of those definitions.
    shown_files: list[str] = field(default_factory=list)
    shown_names: list[str] = field(default_factory=list)

    @property
    def named_file(self) -> str | None:
        """The one file the task names, if it names exactly one (the change's file)."""
        return self.named_files[0] if len(self.named_files) == 1 else None

    @property
    def change_file(self) -> str | None:
        """Where the change goes, for its header: the file the task names, else the one whose
        code is shown (given `<path>` for "NO_COLOR should win", the 1.5B model put invented
        classes in _types.py; given termcolor.py, it wrote `_can_do_colour` there), unless it
        adds tests or writes a file name of its own (a file to create); for a function nested
        in another that the task means, that one's file."""
        if (meant := self.meant) and meant[1] in self.outer_files:
            return self.outer_files[meant[1]]
        if self.named_file or self.intent.adds_tests or _FILE_NAME.search(self.intent.task):
            return self.named_file
        return self.code_file

    @property
    def meant(self) -> tuple[str, str] | None:
        """The function nested in another that a change is about ("the helper in f"), if the
        task means one (prompts.py `meant_inner`)."""
        return meant_inner(self.intent.task, self.nested) if self.intent.change else None

    @property
    def writes_text(self) -> bool:
        """The change is asked for as SEARCH/REPLACE blocks, not Python definitions."""
        return writes_text(self.intent, self.named_file)

    @property
    def form(self) -> int:
        """How the change is written (prompts.py `Nudge.says`): 0 as Python definitions, 1 as
        SEARCH/REPLACE blocks, 2 as the whole file (`whole_text`)."""
        return 2 if self.whole_text else int(self.writes_text)

    @property
    def parameters_given(self) -> list[str]:
        """The names a change gives a function as new parameters: names the task writes that
        exist nowhere yet, and names told as one ("a count argument"; not one the change's
        file takes already), where it says a default ("off by default") or an argument ("an
        optional separator argument", "give it an allow_v flag")."""
        task = self.intent.task
        if not wording.PARAMETER.search(task) and not wording.DEFAULT_KEPT.search(task):
            return []
        given = [n for n in self.absent if n.isidentifier() and wording.whole_word(n).search(task)]
        # "can bump_patch take a step?": a word, not code; not one the file's functions take
        told = (m.group(m.lastindex or 0).lower() for m in wording.NAMED_PARAMETER.finditer(task))
        given += [n for n in told if n not in wording.NOT_A_NAME | self.taken]
        return list(dict.fromkeys(given))

    def hold(self, ctx: ToolContext) -> str:
        """On llama.cpp's server, for a change: sets the grammar a text change's reply is held
        to once it has missed the form (`edit_grammar`), and returns the one its first reply
        is held to: a function's new version started with the new parameter the task gives
        it (tools/scaffold.py), else ""."""
        if self.writes_text:
            if self.named_files:
                whole = self.change_file if self.whole_text else None
                self.edit_grammar = held_blocks_grammar(ctx, self.named_files, whole)
            return ""
        if not (given := self.parameters_given):
            return ""
        functions = [*self.asked, *self.intent.names]  # the names defined first
        # the change's file; else each file whose definitions were shown, in the order shown
        # (dev sv-bump-step: `bump_patch` is a method in version.py and a function in
        # _deprecated.py, so no one file is the change's)
        for path in [self.change_file] if self.change_file else self.shown_files:
            try:
                source = ctx.file_text(path) or ""
            except ToolError:
                continue
            if grammar := parameter_grammar(path, source, functions, given[0], self.intent.task):
                self.scaffold, self.parameter = grammar, given[0]
                return grammar
        return ""

    def given(self, context: Context, ctx: ToolContext) -> None:
        """What the context gathered for the task that the run is held to, what the task's
        symptom calls should give, and the parameters the change's file takes."""
        self.named_files, self.failing = context.named_files, context.failing
        self.computed, self.code_file = context.computed, context.code_file
        if not ctx.symptom_wants:
            ctx.symptom_wants = _other_bool(self.computed, ctx.symptom_calls, self.intent.task)
        self.wants = dict(ctx.symptom_wants)
        self.nested, self.outer_files = context.nested, context.outer_files
        self.absent, self.asked = context.absent, context.asked
        code = [(path, name) for path, name in context.definitions if not is_test_path(path)]
        self.shown_files = list(dict.fromkeys(path for path, _ in code))
        self.shown_names = self._to_run([name for _, name in code], ctx)
        if self.intent.change and self.change_file:
            try:
                self.taken = parameters_of(ctx.file_text(self.change_file))
            except ToolError:
                self.taken = set()

    def _to_run(self, shown: list[str], ctx: ToolContext) -> list[str]:
        """The code a question about a value that names none may run, first to last: the
        functions and classes of the shown files (else the packages' own modules) its values
        fit, as tools/imports.py `fitting_callables` ranks them, then the rest shown."""
        intent = self.intent
        if not intent.asks_value or intent.names or intent.carried or intent.calls:
            return list(dict.fromkeys(shown))
        count = 1 if intent.literal is not None else len(intent.written_values()[:3])
        files = self.shown_files or [p for p in self.repo_files if _PACKAGE.fullmatch(p)]
        return list(dict.fromkeys([*fitting_callables(ctx, files, count, shown), *shown]))

    @classmethod
    def begin(
        cls, intent: TaskIntent, state: AgentState, repo_files: list[str], **kw: Any
    ) -> RunWatch:
        return cls(
            intent,
            state,
            repo_files,
            first_call=state.total_calls,
            first_loop_count=state.loops_detected,
            **kw,
        )

    def grounded(self) -> bool:
        """Something was read or run for this run's task: context given with it that answers
        it (agent/context.py `answers`), a change proposed, or a tool call that ran (a refused
        or invalid call does not count). For a question about what code gives, only a call
        that ran code counts: reading it is not running it. Listing the files shows no code
        (dev sv-why-release-first: after list_files, the 1.5B model explained its result's
        fields as the answer to why versions sort wrong, and the run said `completed`); it
        counts where the task asks for it ("which Python files are there?")."""
        ran = [
            record.name
            for record in self.state.calls_since(self.first_call)
            if record.error not in (ErrorType.LOOP_DETECTED, ErrorType.INVALID_ARGUMENT)
        ]
        if self.intent.asks_value:
            ran = [name for name in ran if name in RUNS_CODE]
        elif not (self.intent.first_call() or "").startswith(tuple(SHAPE)):
            ran = [name for name in ran if name not in SHAPE]
        return self.context_given or bool(self.patches) or bool(ran)

    def loops(self) -> int:
        return self.state.loops_detected - self.first_loop_count

    def changed(self) -> bool:
        return bool(self.patches) or self.tree_changed()

    def last_patch(self) -> Patch | None:
        return next(reversed(self.patches.values()), None)

    def about_code(self) -> bool:
        """The task names something of this repository (agent/intent.py)."""
        return self.intent.about_code(self.repo_files)

    def first_read(self) -> str:
        """The call that starts doing what the task asks (agent/intent.py)."""
        return self.intent.first_read(self.repo_files, self.shown_names)


def _other_bool(computed: list[str], calls: tuple[str, ...], task: str) -> dict[str, str]:
    """What the one symptom call should give when it gives a bool the task writes as wrong
    ("Version.parse('2.0.0').match('!=3.0.0') is False?? 2.0.0 is clearly not 3.0.0"): the
    other bool, so a version is judged by the value (dev sv-fix-not-equal); {} otherwise."""
    for line in computed:
        call, _, value = line.partition(" = ")
        said = value in ("True", "False") and re.search(rf"\b{value}\b", task, re.I) is not None
        if len(calls) == 1 and call == calls[0] and said:
            return {call: "False" if value == "True" else "True"}
    return {}
