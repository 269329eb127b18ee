"""Typed definitions of the `smol/` methods and commands (docs/protocol.md is the contract).

Python names stay snake_case; on the wire they are camelCase, converted by the project's one
cattrs converter (base/wire.py) with the rules lsprotocol uses (a field renamed to camelCase,
an optional field that is None left out). Incoming params are structured into these attrs classes; anything that does
not fit is answered with InvalidParams naming the field. Outgoing results go out unstructured,
so pygls sends them as they are.
"""

from __future__ import annotations

from typing import Any

import attrs
import cattrs
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from ..base.wire import converter

CHAT = "smol/chat"
EVENT = "smol/event"
PATCHES = "smol/patches"

CMD_ACCEPT_PATCH = "smol.acceptPatch"
CMD_REJECT_PATCH = "smol.rejectPatch"
CMD_ASK_ABOUT_SELECTION = "smol.askAboutSelection"

DIAGNOSTIC_SOURCE = "smol-instruments"
DEFAULT_QUESTION = "Explain this code and point out problems."


converter.register_structure_hook(str | int | None, lambda value, _: value)


def _whole_numbers(value: Any, _: Any) -> list[int]:
    """cattrs would take any iterable ("12" -> [1, 2]); a list of hunk numbers must be a list."""
    if not isinstance(value, list) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in value
    ):
        raise ValueError(f"expected a list of whole numbers, got {value!r}")
    return value


def _strict_bool(value: Any, _: Any) -> bool:
    """cattrs would take bool("false") as True; a flag such as `trusted` must be a JSON bool."""
    if not isinstance(value, bool):
        raise ValueError(f"expected true or false, got {value!r}")
    return value


converter.register_structure_hook_func(lambda t: t == list[int], _whole_numbers)
converter.register_structure_hook(bool, _strict_bool)


# --- client → server -------------------------------------------------------------------------


@attrs.define
class InitializationOptions:
    """`initializationOptions`: the editor's settings and whether the folder is trusted."""

    settings: dict[str, Any] | None = None
    #: False in an untrusted folder: the agent reads and answers, but runs nothing.
    trusted: bool = True


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
    hunks: list[int] | None = None


@attrs.define
class RejectOptions:
    reason: str | None = None


# --- server → client -------------------------------------------------------------------------


@attrs.define
class PatchesResult:
    patches: list[dict[str, Any]]


@attrs.define
class PatchCommandResult:
    patch_id: str
    status: str


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


def to_wire(message: Any) -> Any:
    """The JSON-ready form of a typed message (camelCase keys, None-valued options left out)."""
    return converter.unstructure(message)


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
