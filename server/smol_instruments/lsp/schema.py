"""The JSON Schema of what the daemon and an editor send each other, generated from the types.

`python -m smol_instruments.lsp.schema [PATH]` writes it (default: stdout). The extension keeps
a copy, extension/src/protocol.schema.json: tests/test_protocol_schema.py fails when that copy
is not what this module generates, and the extension's tests check protocol.ts against it, so
a field changed on one side only is caught on both.

The messages are attrs classes (agent/events.py, lsp/protocol.py) sent through the one
camelCase converter, and TypedDicts for what is built as a dict (the patch, the error schema).
Each attrs class becomes a TypedDict with its wire names: camelCase, and an optional field whose
default is None is not required and never null (the converter leaves it out); in what the
editor sends (INCOMING) any field with a default may be left out. pydantic writes
the schema; every object forbids properties it does not declare. A few fields that are plain
dicts in Python are described by the TypedDict of what they hold (OVERRIDES).
"""

from __future__ import annotations

import functools
import json
import operator
import sys
import types
import typing
from pathlib import Path
from typing import Annotated, Any, Union

import attrs
from lsprotocol import types as lsp
from pydantic import ConfigDict, Field, TypeAdapter, with_config
from pydantic.json_schema import GenerateJsonSchema
from typing_extensions import NotRequired, TypedDict, is_typeddict

from ..agent import events
from ..base.wire import camel
from . import protocol

#: Fields typed loosely in Python (a dict), described on the wire by what they hold.
OVERRIDES: dict[tuple[type, str], Any] = {
    (events.PatchEvent, "patch"): protocol.Patch,
    (events.ToolEvent, "error"): protocol.ErrorObject,
    (protocol.PatchesResult, "patches"): list[protocol.Patch],
}

#: Wire names where the Python class is named for its place in the agent.
NAMES: dict[type, str] = {
    events.SessionApprovalEvent: "ApprovalEvent",
    events.RunOutcome: "ChatResult",
    protocol.WireRange: "Range",
    protocol.WirePosition: "Position",
}

#: lsprotocol's classes, as the wire has them (the same objects the patch's ranges are).
SAME: dict[type, Any] = {lsp.Range: protocol.WireRange, lsp.Position: protocol.WirePosition}

SmolEvent = Annotated[events.AgentEvent, Field(discriminator="kind")]

#: What the editor sends: a field with a default may be left out (the daemon fills it in).
INCOMING: set[type] = {
    protocol.ChatParams,
    protocol.Selection,
    protocol.AcceptOptions,
    protocol.RejectOptions,
    protocol.AskAboutSelectionArgs,
    protocol.InitializationOptions,
    protocol.ApprovalAnswer,
}

#: Every message, under the name the schema's root gives it.
MESSAGES: dict[str, Any] = {
    "event": SmolEvent,
    "chatParams": protocol.ChatParams,
    "chatResult": events.RunOutcome,
    "patchesResult": protocol.PatchesResult,
    "patchCommandResult": protocol.PatchCommandResult,
    "acceptOptions": protocol.AcceptOptions,
    "rejectOptions": protocol.RejectOptions,
    "askAboutSelectionArgs": protocol.AskAboutSelectionArgs,
    "initializationOptions": protocol.InitializationOptions,
    "commandApproval": protocol.CommandApproval,
    "approvalAnswer": protocol.ApprovalAnswer,
}

_FORBID = ConfigDict(extra="forbid")
# Types built at run time: typed Any so that a checker does not read them as annotations.
_ANNOTATED: Any = Annotated
_LIST: Any = list
_DICT: Any = dict
_OPTIONAL_KEY: Any = NotRequired
_TYPED_DICT: Any = TypedDict


class _Wire:
    """Turns Python message types into TypedDicts of their wire form, once per class."""

    def __init__(self) -> None:
        self.made: dict[type, Any] = {}

    def type(self, tp: Any) -> Any:
        tp = SAME.get(tp, tp)
        if isinstance(tp, type) and attrs.has(tp):
            return self.attrs_class(tp)
        if is_typeddict(tp):
            return self.typed_dict(tp)
        origin, args = typing.get_origin(tp), typing.get_args(tp)
        if origin is Annotated:
            return _ANNOTATED[(self.type(args[0]), *tp.__metadata__)]
        if origin in (Union, types.UnionType):
            return _union([self.type(arg) for arg in args])
        if origin is list:
            return _LIST[self.type(args[0])]
        if origin is dict:
            return _DICT[args[0], self.type(args[1])]
        return tp  # str, int, float, bool, None, Any, Literal[...]

    def attrs_class(self, cls: Any) -> Any:
        if cls in self.made:
            return self.made[cls]
        hints = typing.get_type_hints(cls)
        fields: dict[str, Any] = {}
        for field in attrs.fields(cls):
            tp = OVERRIDES.get((cls, field.name), hints[field.name])
            if field.default is None:  # None is left out, never sent as null
                fields[camel(field.name)] = _OPTIONAL_KEY[self.type(_without_none(tp))]
            elif cls in INCOMING and field.default is not attrs.NOTHING:
                fields[camel(field.name)] = _OPTIONAL_KEY[self.type(tp)]
            else:
                fields[camel(field.name)] = self.type(tp)
        made = self._make(NAMES.get(cls, cls.__name__), fields, cls.__doc__)
        self.made[cls] = made
        return made

    def typed_dict(self, td: Any) -> Any:
        if td in self.made:
            return self.made[td]
        fields = {}
        for name, tp in typing.get_type_hints(td, include_extras=True).items():
            # With postponed annotations NotRequired is seen here, not in __optional_keys__.
            if typing.get_origin(tp) is NotRequired or name in td.__optional_keys__:
                inner = typing.get_args(tp)[0] if typing.get_origin(tp) is NotRequired else tp
                fields[name] = _OPTIONAL_KEY[self.type(inner)]
            else:
                fields[name] = self.type(tp)
        made = self._make(NAMES.get(td, td.__name__), fields, td.__doc__)
        self.made[td] = made
        return made

    @staticmethod
    def _make(name: str, fields: dict[str, Any], doc: str | None) -> Any:
        made = _TYPED_DICT(name, fields)
        made.__doc__ = _first_line(doc)
        return with_config(_FORBID)(made)


def _without_none(tp: Any) -> Any:
    args = [arg for arg in typing.get_args(tp) if arg is not type(None)]
    if typing.get_origin(tp) in (Union, types.UnionType) and args:
        return _union(args)
    return tp


def _union(members: list[Any]) -> Any:
    return functools.reduce(operator.or_, members)


def _first_line(doc: str | None) -> str | None:
    if not doc or doc.startswith(("TypedDict(", "dict() ->")):
        return None
    return " ".join(doc.strip().split("\n\n")[0].split())


class _Untitled(GenerateJsonSchema):
    """No `title` on each property: generated TypeScript would name a type after every one."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False


def protocol_schema() -> dict[str, Any]:
    """The JSON Schema (2020-12) of every message, each a definition under `$defs`."""
    wire = _Wire()
    root = _TYPED_DICT(
        "SmolProtocol", {k: _OPTIONAL_KEY[wire.type(v)] for k, v in MESSAGES.items()}
    )
    root.__doc__ = "The daemon ⇄ editor messages of docs/protocol.md (generated; do not edit)."
    schema = TypeAdapter(with_config(_FORBID)(root)).json_schema(schema_generator=_Untitled)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}


def schema_text() -> str:
    return json.dumps(protocol_schema(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args:
        sys.stdout.write(schema_text())
        return 0
    Path(args[0]).write_text(schema_text())
    print(f"wrote {args[0]}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
