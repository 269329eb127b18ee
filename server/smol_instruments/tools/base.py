"""What every tool shares: the ToolContext it is bound to and a `forward` that never raises.

Tools are smolagents `Tool` subclasses so CodeAgent can call them from generated code; the
same instances serve the command line (`smol-instruments tool NAME`). `guarded` wraps each
`forward`: wrong or missing argument names, validation failures and unexpected exceptions all
come back as the one error schema, with a suggestion that shows a correct call.
"""

from __future__ import annotations

import functools
import inspect
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from smolagents import Tool

from ..base.config import Settings
from ..base.errors import ErrorType, ToolError, error_dict
from ..base.git import find_repo_root
from ..base.process import ProcessRegistry
from ..patches.guard import patch_path
from ..patches.service import PatchService, open_patches
from ..patches.validation import NoneSandbox, Sandbox
from ..safety.approval import ApprovalEvent, ApprovalGate, Approver, DenyAllApprover
from ..safety.jail import PathJail
from .validation import Limits, closest

if TYPE_CHECKING:
    from ..safety.policy import CommandPolicy

log = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])

#: What the user's editor shows for a file, unsaved changes included. A host hands one to the
#: session (as it hands an approver): given the absolute, link-free path of a regular file the
#: jail has already allowed, it returns that text, or None to read the disk. It is only ever
#: asked after the jail, so an editor can show us a file's text but never widen what is read.
BufferReader = Callable[[Path], "str | None"]

# Argument names small models use instead of ours, mapped to the name they mean.
ARGUMENT_ALIASES = {
    "file": "path",
    "filename": "path",
    "file_path": "path",
    "filepath": "path",
    "query": "pattern",
    "regex": "pattern",
    "search": "pattern",
    "text": "pattern",
    "cmd": "command",
    "start": "start_line",
    "end": "end_line",
    "old": "old_text",
    "new": "new_text",
    "old_str": "old_text",
    "new_str": "new_text",
    "patch": "diff",
    "id": "patch_id",
    "n": "max_count",
    "limit": "max_results",
    "context": "context_lines",
}


#: (ctx, the proposal's diff, the calls) -> validation checks, one per call (tools/evaluate.py).
SymptomChecks = Callable[["ToolContext", str, tuple[str, ...]], list[dict[str, Any]]]
#: (ctx, diff, [(path, text before, proposed text)]) -> the checks of the examples it writes.
ExampleChecks = Callable[
    ["ToolContext", str, list[tuple[str, str | None, str | None]]], list[dict[str, Any]]
]
#: (ctx, {path: (text before, proposed text)}, failed checks' output) -> "call returns value".
AssertionValues = Callable[["ToolContext", dict[str, tuple[str | None, str]], str], list[str]]
#: (ctx, [(path, text before, proposed text)]) -> the changes with their tests' expected values
#: run, and what was replaced (tools/pins.py `pinned`).
Changes = list[tuple[str, str | None, str | None]]
PinExpected = Callable[["ToolContext", Changes], tuple[Changes, list[str]]]


@dataclass
class ToolContext:
    """Everything the tools of one session share: the repository and its guards."""

    jail: PathJail
    settings: Settings
    policy: CommandPolicy
    gate: ApprovalGate
    patches: PatchService
    sandbox: Sandbox = field(default_factory=NoneSandbox)
    cancel: threading.Event = field(default_factory=threading.Event)
    processes: ProcessRegistry = field(default_factory=ProcessRegistry)
    session_id: str | None = None
    #: False in a folder the user does not trust: no command runs (`run_cmd`, `run_tests`).
    trusted: bool = True
    #: Where tools report events (approval decisions) for the host to stream; None drops them.
    events: Callable[[ApprovalEvent], None] | None = None
    #: The editor's text of open files (None: every read is of the disk).
    buffers: BufferReader | None = None
    #: Files whose editor text differed from the disk when last read: searches look at that text.
    unsaved: set[str] = field(default_factory=set)
    #: Calls the task names with a symptom ("f(2) gives 3, it should be 4"), set by the agent
    #: for each task: every proposal is checked by what they give with it (tools/patch.py).
    symptom_calls: tuple[str, ...] = ()
    #: The task's own words, lowercase, its stop words left out, set by the agent for each
    #: task: a proposal that changes nothing is shown the lines that hold them (tools/patch.py).
    task_words: tuple[str, ...] = ()
    #: (path, ((number, line), ...)) of the lines holding most of them in the code a proposal
    #: copied back unchanged, set by tools/patch.py: the agent asks for them alone (search.py).
    copied: tuple[str, tuple[tuple[int, str], ...]] | None = None
    #: What the task says such a call should give, as the literal it writes ("'-1021st'").
    symptom_wants: dict[str, str] = field(default_factory=dict)
    #: The repository's functions such a call ran, as its trace found them (agent/evidence.py).
    symptom_functions: dict[str, list[str]] = field(default_factory=dict)
    #: The statements such a call ran, as the trace wrote them ("path:229 (ordinal) ...").
    symptom_steps: dict[str, list[str]] = field(default_factory=dict)
    #: What runs the repository's code for a proposal (tools/evaluate.py `symptom_checks` and
    #: `assertion_values`, tools/examples.py `example_checks`), set by `build_tools`: patch.py cannot import evaluate.py, which
    #: runs through shell.py, which proposes. None: a proposal runs no code of the repository.
    symptom_checks: SymptomChecks | None = None
    assertion_values: AssertionValues | None = None
    example_checks: ExampleChecks | None = None  # a document's examples (tools/examples.py)
    #: Set by the agent for a task that adds tests and fixes nothing: a proposal's new
    #: assertions expect what their calls give when run (tools/pins.py). None: as written.
    pin_expected: PinExpected | None = None

    @property
    def root(self) -> Path:
        return self.jail.root

    @property
    def limits(self) -> Limits:
        return Limits.from_settings(self.settings)

    @classmethod
    def create(
        cls,
        repo: Path | str,
        settings: Settings,
        *,
        approver: Approver | None = None,
        sandbox: Sandbox | None = None,
        patches: PatchService | None = None,
        session_id: str | None = None,
        trusted: bool = True,
    ) -> ToolContext:
        from ..safety.policy import CommandPolicy

        root = find_repo_root(Path(repo))
        jail = PathJail(root)
        if patches is None:
            patches = open_patches(jail)
        return cls(
            jail=jail,
            settings=settings,
            policy=CommandPolicy.load(
                jail.root, allow_repo_loosening=settings.policy_allow_repo_loosening
            ),
            gate=ApprovalGate(approver or DenyAllApprover()),
            patches=patches,
            sandbox=sandbox or NoneSandbox(),
            session_id=session_id,
            trusted=trusted,
        )

    def buffer_text(self, rel: str, disk: str | None) -> str | None:
        """The editor's text of `rel`, a file the jail allowed whose disk text is `disk`; None
        when the host gave no reader, or the editor has none to give (then the disk is read)."""
        if self.buffers is None:
            return None
        try:
            text = self.buffers(self.root / rel)
        except Exception:  # an editor that cannot answer: the disk is the next best
            log.exception("reading %s from the editor failed", rel)
            text = None
        if text is None or text == disk:
            self.unsaved.discard(rel)
            return None
        self.unsaved.add(rel)
        return text

    def file_text(self, path: str) -> str | None:
        """A file as the user sees it (the editor's text, else the disk's), after the patch
        guard (ToolError); None when it does not exist. What patches are planned against."""
        disk = self.patches.read_disk(path)
        if disk is None:
            return None
        shown = self.buffer_text(self.jail.relative(patch_path(self.jail, path)), disk)
        return disk if shown is None else shown

    def emit(self, event: ApprovalEvent) -> None:
        if self.events is not None:
            try:
                self.events(event)
            except Exception:  # a host's sink must never break a tool
                log.exception("event sink failed for %s", event.kind)

    def check_cancelled(self) -> None:
        if self.cancel.is_set():
            raise ToolError(
                ErrorType.CANCELLED,
                "the run was cancelled",
                recovery_suggestion="Stop: the user cancelled this run.",
            )


def signature_text(tool: Tool) -> str:
    """`name(arg: type, opt: type = None)`, the way a correct call looks."""
    parts = []
    for arg, spec in tool.inputs.items():
        text = f"{arg}: {spec['type']}"
        if spec.get("nullable"):
            text += " = None"
        parts.append(text)
    return f"{tool.name}({', '.join(parts)})"


def guarded(forward: F) -> F:
    """Make a tool's `forward` total: every failure comes back as the error schema."""
    signature = inspect.signature(forward)

    @functools.wraps(forward)
    def wrapper(self: RepoTool, *args: Any, **kwargs: Any) -> dict[str, Any]:
        try:
            bound = signature.bind(self, *args, **kwargs)
        except TypeError as exc:
            return self.argument_error(str(exc), list(kwargs))
        try:
            result = forward(*bound.args, **bound.kwargs)
        except ToolError as exc:
            return exc.to_dict(self.name)
        except Exception as exc:
            log.exception("tool %s failed", self.name)
            return error_dict(
                ErrorType.INTERNAL_ERROR,
                f"{self.name} failed unexpectedly: {exc.__class__.__name__}: {exc}",
                tool=self.name,
                recovery_suggestion="Try again with different arguments, or use another tool.",
            )
        return result

    return wrapper  # type: ignore[return-value]


class RepoTool(Tool):
    """A tool bound to one repository through a ToolContext. Its forward never raises."""

    output_type = "object"
    #: True when a successful call may change the repository (resets loop detection).
    changes_state = False
    #: A correct call, shown in recovery suggestions.
    example = ""

    def __init__(self, ctx: ToolContext) -> None:
        self.ctx = ctx
        super().__init__()

    @property
    def settings(self) -> Settings:
        return self.ctx.settings

    @property
    def limits(self) -> Limits:
        return self.ctx.limits

    def argument_error(self, problem: str, given: list[str]) -> dict[str, Any]:
        unknown = [name for name in given if name not in self.inputs]
        hints = []
        for name in unknown:
            alias = ARGUMENT_ALIASES.get(name)
            near = [alias] if alias in self.inputs else closest(name, list(self.inputs), n=1)
            if near:
                hints.append(f"use {near[0]}= instead of {name}=")
        hint = ("; ".join(hints) + ". ") if hints else ""
        example = f" Example: {self.example}" if self.example else ""
        return error_dict(
            ErrorType.INVALID_ARGUMENT,
            f"{self.name}: {problem.replace('wrapper()', self.name + '()')}",
            tool=self.name,
            context={"given": given, "accepted": list(self.inputs)},
            recovery_suggestion=f"{hint}Call it as {signature_text(self)}.{example}",
        )
