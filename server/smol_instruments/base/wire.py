"""THE wire converter: typed messages (attrs classes) to and from the camelCase JSON hosts send.

Python names stay snake_case; on the wire (LSP notifications, `run --json`) they are camelCase,
and an optional field that is None is left out rather than sent as null. What comes in is
structured strictly: a flag must be a JSON boolean, a list of numbers a list. Dicts pass through
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


def _strict_bool(value: Any, _: Any) -> bool:
    """cattrs would take bool("false") as True; a flag such as `trusted` must be a JSON bool."""
    if not isinstance(value, bool):
        raise ValueError(f"expected true or false, got {value!r}")
    return value


def _whole_numbers(value: Any, _: Any) -> list[int]:
    """cattrs would take any iterable ("12" -> [1, 2]); a list of numbers must be a list."""
    if not isinstance(value, list) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in value
    ):
        raise ValueError(f"expected a list of whole numbers, got {value!r}")
    return value


# What comes in is taken as it is written, never coerced into something else.
converter.register_structure_hook(bool, _strict_bool)
converter.register_structure_hook_func(lambda t: t == list[int], _whole_numbers)
converter.register_structure_hook(str | int | None, lambda value, _: value)  # a progress token


def to_wire(message: Any) -> Any:
    """The JSON-ready form of a typed message (camelCase keys, None-valued options left out)."""
    return converter.unstructure(message)


def from_wire(data: Any, kind: type[Any]) -> Any:
    """A typed message from its JSON form; raises cattrs' errors on a missing or bad field."""
    return converter.structure(data, kind)
