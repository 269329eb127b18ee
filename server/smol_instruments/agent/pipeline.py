"""InstrumentedTool: the wrapper every tool runs through when the agent calls it.

It keeps the wrapped tool's exact signature (smolagents checks `forward`'s parameters against
`inputs`), and around each call it: type-checks the arguments against `inputs` (CodeAgent does
not), refuses a repeated call with LOOP_DETECTED, runs the tool, turns any exception into the
error schema, cuts oversized output (with a truthful `truncated` flag), records the call in
AgentState, emits a `tool` event, and opens a span `tool_wrapped.<name>` with its attributes.
"""

from __future__ import annotations

import copy
import functools
import inspect
import threading
import time
import typing
from collections.abc import Callable
from typing import Any

from smolagents import Tool

from ..base.errors import ErrorType, error_dict, is_error
from ..base.telemetry import tracer
from ..base.truncate import truncate_output
from .events import ToolEvent
from .model import RunCancelled
from .state import AgentState, ToolCallRecord, args_hash, format_call

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list, tuple),
}


def check_arguments(inputs: dict[str, dict[str, Any]], arguments: dict[str, Any]) -> str | None:
    """What is wrong with `arguments` against the `inputs` spec, or None."""
    for name, spec in inputs.items():
        if name not in arguments:
            if not spec.get("nullable"):
                return f"missing required argument {name!r}"
            continue
        value = arguments[name]
        if value is None:
            if not spec.get("nullable"):
                return f"{name} must not be None"
            continue
        kind = spec.get("type")
        allowed = _JSON_TYPES.get(kind) if isinstance(kind, str) else None
        if allowed is None:
            continue
        if isinstance(value, bool) and bool not in allowed:
            return f"{name} must be a {kind}, got a boolean"
        if not isinstance(value, allowed):
            return f"{name} must be a {kind}, got {type(value).__name__} {_clip(repr(value), 60)}"
    return None


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


class InstrumentedTool(Tool):
    """A smolagents Tool that runs another one with validation, loop detection and tracing."""

    def __init__(
        self,
        tool: Tool,
        state: AgentState,
        *,
        max_chars: int = 3000,
        max_lines: int = 150,
        max_items: int = 100,
        cancel: threading.Event | None = None,
        events: Callable[[ToolEvent], None] | None = None,
    ) -> None:
        # Instance attributes, never the class's: two wrappers must share no metadata.
        object.__setattr__(self, "wrapped", tool)
        object.__setattr__(self, "name", tool.name)
        object.__setattr__(self, "description", tool.description)
        object.__setattr__(self, "inputs", copy.deepcopy(tool.inputs))
        object.__setattr__(self, "output_type", tool.output_type)
        object.__setattr__(
            self, "output_schema", copy.deepcopy(getattr(tool, "output_schema", None))
        )
        object.__setattr__(self, "forward", self._make_forward(tool))
        self.state = state
        self.max_chars, self.max_lines, self.max_items = max_chars, max_lines, max_items
        self.cancel = cancel or threading.Event()
        self.events = events
        self.changes_state = bool(getattr(tool, "changes_state", False))
        super().__init__()

    def _make_forward(self, tool: Tool) -> Callable[..., Any]:
        signature = inspect.signature(tool.forward)

        def forward(*args: Any, **kwargs: Any) -> Any:
            return self._call(signature, args, kwargs)

        functools.update_wrapper(forward, tool.forward)
        forward.__signature__ = signature  # type: ignore[attr-defined]
        try:  # resolved hints, so smolagents' schema check needs no module globals
            forward.__annotations__ = typing.get_type_hints(tool.forward)
        except Exception:
            pass
        return forward

    def _call(
        self, signature: inspect.Signature, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        if self.cancel.is_set():
            raise RunCancelled(f"cancelled before {self.name} ran")
        try:
            bound = signature.bind_partial(*args, **kwargs)
            arguments = dict(bound.arguments)
        except TypeError:
            arguments = dict(kwargs) | {f"arg{i}": a for i, a in enumerate(args)}
        started = time.perf_counter()
        with tracer().start_as_current_span(f"tool_wrapped.{self.name}") as span:
            problem = (
                check_arguments(self.inputs, arguments)
                if set(arguments) <= set(self.inputs)
                else None
            )
            loop = None if problem else self.state.loop_check(self.name, arguments)
            if problem:
                result: Any = (
                    self.wrapped.argument_error(problem, list(kwargs))
                    if hasattr(self.wrapped, "argument_error")
                    else error_dict(
                        ErrorType.INVALID_ARGUMENT, f"{self.name}: {problem}", tool=self.name
                    )
                )
            elif loop is not None:
                result = loop.to_error(self.name)
            else:
                try:
                    result = self.wrapped(*args, **kwargs)
                except RunCancelled:
                    raise
                except Exception as exc:
                    # tools should not raise; if one does, the model still gets the schema
                    result = error_dict(
                        ErrorType.INTERNAL_ERROR,
                        f"{self.name} failed: {exc.__class__.__name__}: {exc}",
                        tool=self.name,
                        recovery_suggestion="Try different arguments or another tool.",
                    )
            result, cut = self._truncate(result)
            duration_ms = (time.perf_counter() - started) * 1000
            error = result.get("error") if is_error(result) else None
            truncated = bool(cut or (isinstance(result, dict) and result.get("truncated")))
            shown_args, shown_result = repr(arguments), repr(result)  # once: sizes and previews
            record = ToolCallRecord(
                name=self.name,
                args_hash=args_hash(arguments),
                call=format_call(self.name, arguments),
                input_size=len(shown_args),
                output_size=len(shown_result),
                error=error,
                duration_ms=duration_ms,
                truncated=truncated,
                preview=_clip(shown_result, 400),
            )
            self.state.record(
                record, changed_state=self.changes_state and error is None and loop is None
            )
            self._annotate(span, record, shown_args, shown_result, result)
        self._emit(arguments, result, duration_ms)
        if error == ErrorType.CANCELLED or self.cancel.is_set():
            raise RunCancelled(f"cancelled during {self.name}")
        return result

    def _truncate(self, result: Any) -> tuple[Any, bool]:
        """Cut any oversized text or list in the result; the flag is True only if something was cut."""
        if not isinstance(result, dict):
            text, cut = truncate_output(str(result), self.max_chars, self.max_lines)
            return (text if cut else result), cut
        cut_any = False
        out = dict(result)
        for key, value in result.items():
            if isinstance(value, str) and key != "recovery_suggestion":
                text, cut = truncate_output(value, self.max_chars, self.max_lines)
                if cut:
                    out[key], cut_any = text, True
            elif isinstance(value, list) and len(value) > self.max_items:
                out[key], cut_any = value[: self.max_items], True
        if cut_any:
            out["truncated"] = True
        return out, cut_any

    def _annotate(
        self, span: Any, record: ToolCallRecord, shown_args: str, shown_result: str, result: Any
    ) -> None:
        attributes: dict[str, Any] = {
            "openinference.span.kind": "TOOL",
            "tool.name": self.name,
            "tool.args_hash": record.args_hash,
            "tool.input_size": record.input_size,
            "tool.output_size": record.output_size,
            "tool.duration_ms": round(record.duration_ms, 3),
            "tool.truncated": record.truncated,
            "input.value": _clip(shown_args, 2000),
            "output.value": _clip(shown_result, 2000),
        }
        if record.error:
            attributes["tool.error_type"] = record.error
            suggestion = result.get("recovery_suggestion") if isinstance(result, dict) else None
            if suggestion:
                attributes["tool.recovery_suggestion"] = str(suggestion)
        if isinstance(result, dict):  # the shell tools report the policy's decision
            context = result.get("context") if is_error(result) else result
            if isinstance(context, dict):
                for key, attribute in (
                    ("verdict", "policy.verdict"),
                    ("rule", "policy.rule"),
                    ("approval", "approval.decision"),
                ):
                    if context.get(key) is not None:
                        attributes[attribute] = str(context[key])
        span.set_attributes(attributes)
        if record.error:
            span.set_attribute("error.type", record.error)

    def _emit(self, arguments: dict[str, Any], result: Any, duration_ms: float) -> None:
        if self.events is None:
            return
        error = (
            {
                k: result.get(k)
                for k in ("error", "message", "tool", "context", "recovery_suggestion")
            }
            if is_error(result)
            else None
        )
        self.events(
            ToolEvent(
                step=self.state.step,
                name=self.name,
                args={k: v for k, v in arguments.items() if v is not None},
                duration_ms=round(duration_ms, 1),
                error=error,
            )
        )


def instrument(
    tools: dict[str, Tool],
    state: AgentState,
    *,
    settings: Any,
    cancel: threading.Event,
    events: Callable[[ToolEvent], None] | None,
) -> list[InstrumentedTool]:
    return [
        InstrumentedTool(
            tool,
            state,
            max_chars=settings.truncation_max_chars,
            max_lines=settings.truncation_max_lines,
            max_items=settings.truncation_max_list_items,
            cancel=cancel,
            events=events,
        )
        for tool in tools.values()
    ]
