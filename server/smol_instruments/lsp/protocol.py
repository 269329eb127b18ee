"""Typed definitions of the `smol/` methods and commands (docs/protocol.md is the contract).

Incoming params are structured into these attrs classes with the server's cattrs converter;
anything that does not fit is answered with InvalidParams naming the field.
"""

from __future__ import annotations

from typing import Any

import attrs
from lsprotocol import types

CHAT = "smol/chat"
EVENT = "smol/event"
PATCHES = "smol/patches"

CMD_ACCEPT_PATCH = "smol.acceptPatch"
CMD_REJECT_PATCH = "smol.rejectPatch"
CMD_ASK_ABOUT_SELECTION = "smol.askAboutSelection"

DIAGNOSTIC_SOURCE = "smol-instruments"
DEFAULT_QUESTION = "Explain this code and point out problems."


@attrs.define
class Selection:
    uri: str
    range: types.Range
    text: str = ""


@attrs.define
class ChatParams:
    message: str
    sessionId: str | None = None
    selections: list[Selection] = attrs.field(factory=list)
    workDoneToken: str | int | None = None


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
