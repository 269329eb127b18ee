"""THE wire converter: typed messages (attrs classes) to and from the camelCase JSON hosts send.

Python names stay snake_case; on the wire (LSP notifications, `run --json`) they are camelCase,
and an optional field that is None is left out rather than sent as null. Dicts pass through
as they are: the tool error schema keeps its own keys (`recovery_suggestion`), which is what
the model sees too.
"""

from __future__ import annotations

from typing import Any

import attrs
import cattrs
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


converter = cattrs.Converter()


def _overrides(cls: type) -> dict[str, Any]:
    return {
        field.name: override(rename=camel(field.name), omit_if_default=field.default is None)
        for field in attrs.fields(cls)
    }


converter.register_unstructure_hook_factory(
    attrs.has, lambda cls: make_dict_unstructure_fn(cls, converter, **_overrides(cls))
)
converter.register_structure_hook_factory(
    attrs.has, lambda cls: make_dict_structure_fn(cls, converter, **_overrides(cls))
)


def to_wire(message: Any) -> Any:
    """The JSON-ready form of a typed message (camelCase keys, None-valued options left out)."""
    return converter.unstructure(message)


def from_wire(data: Any, kind: type[Any]) -> Any:
    """A typed message from its JSON form; raises cattrs' errors on a missing or bad field."""
    return converter.structure(data, kind)
