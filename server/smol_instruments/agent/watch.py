"""What one run has done so far, and what its task asks: the facts the loop judges by.

The session makes a RunWatch per run and tells it what happens (patches proposed, the context
given); the loop (agent/loop.py) and the final-answer checks (agent/answers.py) read it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..base.errors import ErrorType
from ..patches.model import Patch
from .outcome import Held, asks_for_change, held_failures
from .state import AgentState

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
    (re.compile(r"\b(?:which|what|list)\b[^.?!]{0,30}\bfiles\b", re.I), "list_files"),
)
#: "Which Python files ...": the glob list_files is called with.
_LANGUAGE_GLOBS = {
    "python": "*.py",
    "typescript": "*.ts",
    "javascript": "*.js",
    "rust": "*.rs",
    "go": "*.go",
    "java": "*.java",
    "markdown": "*.md",
}


def intended_call(task: str) -> str | None:
    """The call a task plainly asks for first (run the tests, read the history, list files)."""
    for intent, call in _FIRST_CALLS:
        if intent.search(task):
            if call == "list_files":
                words = {word.lower() for word in re.findall(r"\w+", task)}
                glob = next((g for lang, g in _LANGUAGE_GLOBS.items() if lang in words), "*")
                return f'list_files(pattern="{glob}")'
            return call
    return None


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
    #: What the run's final answer gets below it: facts the tools showed that the answer
    #: contradicts after being told once (the session appends them).
    corrections: list[str] = field(default_factory=list)
    #: Code the task names was read before the first step (agent/context.py).
    context_given: bool = False
    #: The repository's files the task names (agent/context.py).
    named_files: list[str] = field(default_factory=list)

    @property
    def change(self) -> bool:
        """The task asks for a change (agent/outcome.py)."""
        return asks_for_change(self.task)

    @property
    def held(self) -> Held:
        """Which failures that were there before a change count against it (agent/outcome.py)."""
        return held_failures(self.task)

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
        call = intended_call(self.task)
        if call is not None:
            return call
        for path in self.repo_files:
            if path in self.task:
                return f'read_file(path="{path}")'
        for word in re.findall(r"`([^`]+)`|\b(\w+)\(\)|\b([a-z]+_[a-z0-9_]+)\b", self.task):
            name = next(part for part in word if part)
            return f'rg_search(pattern="{name}")'
        return 'rg_search(pattern="<a name from the question>")'
