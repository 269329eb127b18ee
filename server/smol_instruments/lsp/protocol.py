"""Typed definitions of the `smol/` methods and commands (docs/protocol.md is the contract).

Python names stay snake_case; on the wire they are camelCase, converted by the project's one
cattrs converter (base/wire.py: a field renamed to camelCase, an optional field that is None
left out). Incoming params are structured into these attrs classes; anything that does not fit
is answered with InvalidParams naming the field. Outgoing results go out unstructured, so pygls
sends them as they are. What is built as a dict (the patch, the error schema) is described by
a TypedDict; lsp/schema.py turns all of them into the JSON Schema the extension checks.
"""

from __future__ import annotations

from typing import Any, Literal

import attrs
import cattrs
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from typing_extensions import NotRequired, TypedDict

from ..base.wire import converter

CHAT = "smol/chat"
EVENT = "smol/event"
PATCHES = "smol/patches"
APPROVAL = "smol/approval"

CMD_ACCEPT_PATCH = "smol.acceptPatch"
CMD_REJECT_PATCH = "smol.rejectPatch"
CMD_ASK_ABOUT_SELECTION = "smol.askAboutSelection"

DIAGNOSTIC_SOURCE = "smol-instruments"
DEFAULT_QUESTION = "Explain this code and point out problems."


# --- client → server -------------------------------------------------------------------------


@attrs.define
class InitializationOptions:
    """`initializationOptions`: the editor's settings and whether the folder is trusted."""

    settings: dict[str, Any] | None = None
    #: False in an untrusted folder: the agent reads and answers, but runs nothing.
    trusted: bool = True
    #: The client answers `smol/approval` (structured) instead of `window/showMessageRequest`.
    smol_approval: bool = False


@attrs.define
class Selection:
    uri: str
    range: types.Range
    text: str = ""


@attrs.define
class ChatParams:
    message: str
    session_id: str | None = None
    selections: list[Selection] = attrs.field(factory=list)
    work_done_token: str | int | None = None


@attrs.define
class AskAboutSelectionArgs:
    uri: str
    range: types.Range
    question: str | None = None


@attrs.define
class AcceptOptions:
    """`smol.acceptPatch [patchId, options]`: which pending hunks (by id); all when absent."""

    hunks: list[int] | None = None


@attrs.define
class RejectOptions:
    """`smol.rejectPatch [patchId, options]`: which pending hunks (by id), and why."""

    reason: str | None = None
    hunks: list[int] | None = None


# --- server → client -------------------------------------------------------------------------


class ErrorObject(TypedDict):
    """The one error schema of tools, events and commands (base/errors.py builds it)."""

    error: str
    message: str
    tool: str | None
    context: dict[str, Any]
    recovery_suggestion: str | None


class WirePosition(TypedDict):
    line: int
    character: int


class WireRange(TypedDict):
    start: WirePosition
    end: WirePosition


PatchStatus = Literal["pending", "accepted", "partial", "rejected", "stale", "failed"]
HunkStatus = Literal["pending", "accepted", "rejected", "stale", "failed"]


class Hunk(TypedDict):
    """One hunk (patches/view.py): its stable id, its own status, the lines it replaces in the
    file's base text, and what replaces them."""

    id: int
    status: HunkStatus
    range: WireRange
    newText: str
    added: int
    removed: int
    reason: NotRequired[str]


class PatchFile(TypedDict):
    uri: str
    path: str
    diff: str
    #: SHA-256 of the text the hunks' ranges are in; null for a file the patch creates.
    baseHash: str | None
    hunks: list[Hunk]


class ValidationCheck(TypedDict):
    command: str
    passed: bool
    output: str
    exit_code: NotRequired[int]
    duration_ms: NotRequired[int]
    timed_out: NotRequired[bool]
    #: It fails the same way without the patch (the project's tests already failed).
    fails_without_patch: NotRequired[bool]
    #: What the same command said without the patch (its summary), when a failure was compared.
    without_patch: NotRequired[str]
    #: Of the tests that failed without the patch and still fail, those that use a file the
    #: patch changes (pytest ids): a fix that leaves them failing did not fix them.
    related_tests: NotRequired[list[str]]


class Validation(TypedDict):
    backend: str
    applies: bool
    checks: list[ValidationCheck]
    message: NotRequired[str]
    duration_ms: NotRequired[int]


class Patch(TypedDict):
    """A proposed patch as the editor sees it (patches/view.py's `patch_view`)."""

    id: str
    sessionId: str | None
    summary: str
    status: PatchStatus
    files: list[PatchFile]
    validation: Validation
    added: int
    removed: int
    statusReason: NotRequired[str]
    traceId: NotRequired[str]


@attrs.define
class CommandApproval:
    """`smol/approval` params: a command put to the user, as fields rather than prose."""

    command: str
    rule: str | None
    reason: str | None
    #: What approving also lets it do beyond its containment, e.g. ["network"].
    widens: list[str]
    #: The same question as one text (what `window/showMessageRequest` would show).
    message: str
    actions: list[str]


@attrs.define
class ApprovalAnswer:
    """`smol/approval` result (or null: dismissed): the action the user chose."""

    title: str


@attrs.define
class PatchesResult:
    patches: list[dict[str, Any]]  # Patch objects, as patches/view.py writes them


@attrs.define
class PatchCommandResult:
    """What `smol.acceptPatch` and `smol.rejectPatch` answer: the patch's status after it, and
    the hunks (by id) it decided; the files written."""

    patch_id: str
    status: PatchStatus
    accepted: list[int] | None = None
    rejected: list[int] | None = None
    stale: list[int] | None = None
    failed: list[int] | None = None
    files: list[str] | None = None


def structure(raw: Any, kind: type[Any]) -> Any:
    """Params of a custom method as `kind`; InvalidParams naming what does not fit."""
    try:
        return converter.structure(to_plain(raw), kind)
    except Exception as exc:
        detail = (
            "; ".join(cattrs.transform_error(exc))
            if isinstance(exc, cattrs.BaseValidationError)
            else exc
        )
        raise JsonRpcInvalidParams(message=f"invalid {kind.__name__}: {detail}") from None


def command_arguments(args: tuple[Any, ...]) -> list[Any]:
    """An executeCommand's arguments as plain values; clients that wrap them in one list too."""
    values = to_plain(list(args))
    if values and isinstance(values[0], list):
        values = values[0]
    return values


def to_plain(value: Any) -> Any:
    """pygls hands custom params over as namedtuples (or dicts); make them plain JSON values."""
    if hasattr(value, "_asdict"):
        return {k: to_plain(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {k: to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    return value
