"""InstrumentedTool: exact signatures, no shared metadata, validation, loops, spans, events."""

from __future__ import annotations

import inspect
import threading
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from smol_instruments.agent.model import RunCancelled
from smol_instruments.agent.pipeline import InstrumentedTool, check_arguments, instrument
from smol_instruments.agent.state import AgentState
from smol_instruments.base.config import Settings
from smol_instruments.base.wire import to_wire
from smol_instruments.safety.approval import DenyAllApprover
from smol_instruments.tools import TOOL_NAMES, build_tools
from smol_instruments.tools.base import ToolContext

_exporter = InMemorySpanExporter()


@pytest.fixture(scope="module", autouse=True)
def _provider() -> None:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(_exporter))
    # The global provider can be set once per process; tests share this one.
    trace.set_tracer_provider(provider)


@pytest.fixture
def spans() -> InMemorySpanExporter:
    _exporter.clear()
    return _exporter


def _wrapped(
    repo: Path, settings: Settings, events: list[dict[str, Any]] | None = None
) -> dict[str, InstrumentedTool]:
    ctx = ToolContext.create(repo, settings, approver=DenyAllApprover())
    state = AgentState()
    tools = instrument(
        build_tools(ctx),
        state,
        settings=settings,
        cancel=ctx.cancel,
        events=(lambda e: events.append(to_wire(e))) if events is not None else None,
    )
    return {tool.name: tool for tool in tools}


def test_every_tool_keeps_its_exact_signature(repo: Path, settings: Settings) -> None:
    ctx = ToolContext.create(repo, settings)
    originals = build_tools(ctx)
    wrapped = _wrapped(repo, settings)
    assert sorted(wrapped) == sorted(TOOL_NAMES)
    for name, tool in wrapped.items():
        original = originals[name]
        assert inspect.signature(tool.forward) == inspect.signature(original.forward)
        assert tool.inputs == original.inputs
        assert tool.description == original.description
        assert tool.output_type == original.output_type
        assert tool.to_code_prompt() == original.to_code_prompt()


def test_two_wrappers_share_no_metadata(repo: Path, settings: Settings) -> None:
    first = _wrapped(repo, settings)["read_file"]
    second = _wrapped(repo, settings)["read_file"]
    assert first.inputs is not second.inputs
    assert first.inputs["path"] is not second.inputs["path"]
    assert first.inputs is not first.wrapped.inputs
    first.inputs["path"]["description"] = "changed"
    assert second.inputs["path"]["description"] != "changed"
    assert type(first.wrapped).inputs["path"]["description"] != "changed"


def test_arguments_are_type_checked_before_the_tool_runs(repo: Path, settings: Settings) -> None:
    tool = _wrapped(repo, settings)["read_file"]
    result = tool(path="app/calc.py", start_line="ten")
    assert result["error"] == "INVALID_ARGUMENT"
    assert "start_line" in result["message"]
    assert "read_file(" in result["recovery_suggestion"]
    assert check_arguments(tool.inputs, {"path": "x", "start_line": True}) is not None
    assert check_arguments(tool.inputs, {"path": "x"}) is None


def test_wrong_argument_name_gets_the_right_one(repo: Path, settings: Settings) -> None:
    result = _wrapped(repo, settings)["read_file"](file="app/calc.py")
    assert result["error"] == "INVALID_ARGUMENT"
    assert "use path= instead of file=" in result["recovery_suggestion"]


def test_span_per_call_with_attributes(
    repo: Path, settings: Settings, spans: InMemorySpanExporter
) -> None:
    tools = _wrapped(repo, settings)
    tools["read_file"](path="app/calc.py")
    tools["read_file"](path="missing.py")
    tools["run_cmd"](command="rm -rf /")
    finished = {s.name: s for s in spans.get_finished_spans()} | {}
    names = [s.name for s in spans.get_finished_spans()]
    assert names == ["tool_wrapped.read_file", "tool_wrapped.read_file", "tool_wrapped.run_cmd"]
    ok, missing = spans.get_finished_spans()[:2]
    for span in (ok, missing):
        attrs = span.attributes or {}
        for key in (
            "tool.name",
            "tool.args_hash",
            "tool.input_size",
            "tool.output_size",
            "tool.duration_ms",
            "tool.truncated",
        ):
            assert key in attrs, key
    assert "tool.error_type" not in (ok.attributes or {})
    assert (missing.attributes or {})["tool.error_type"] == "FILE_NOT_FOUND"
    assert "Closest existing paths" in str((missing.attributes or {})["tool.recovery_suggestion"])
    shell = finished["tool_wrapped.run_cmd"].attributes or {}
    assert shell["policy.verdict"] == "deny"
    assert shell["policy.rule"]
    assert shell["approval.decision"] == "denied"
    assert shell["tool.error_type"] == "COMMAND_DENIED"


def test_repeated_call_trips_loop_detection(
    repo: Path, settings: Settings, spans: InMemorySpanExporter
) -> None:
    tool = _wrapped(repo, settings)["read_file"]
    first = tool(path="app/calc.py")
    assert "content" in first
    second = tool(path="app/calc.py")
    assert second["error"] == "LOOP_DETECTED"
    assert "read_file(path='app/calc.py')" in second["message"]
    assert second["recovery_suggestion"]
    assert (spans.get_finished_spans()[-1].attributes or {})["tool.error_type"] == "LOOP_DETECTED"


def test_state_records_every_call(repo: Path, settings: Settings) -> None:
    tools = _wrapped(repo, settings)
    tools["list_files"]()
    tools["read_file"](path="nope.py")
    state = tools["read_file"].state
    assert [c.name for c in state.calls] == ["list_files", "read_file"]
    assert state.calls[1].error == "FILE_NOT_FOUND"
    assert state.calls[0].output_size > 0 and state.calls[0].duration_ms >= 0


def test_output_is_truncated_with_a_true_flag(repo: Path, settings: Settings) -> None:
    (repo / "big.txt").write_text("x" * 50 + "\n" + "y" * 20000 + "\n")
    small = settings.model_copy(update={"truncation_max_chars": 500})
    tools = _wrapped(repo, small)
    result = tools["read_file"](path="big.txt")
    assert result["truncated"] is True
    assert len(result["content"]) <= 600
    calc = tools["read_file"](path="app/calc.py")
    assert calc["truncated"] is False


def test_tool_event_emitted(repo: Path, settings: Settings) -> None:
    events: list[dict[str, Any]] = []
    tools = _wrapped(repo, settings, events)
    tools["read_file"](path="nope.py")
    assert events[-1]["kind"] == "tool"
    assert events[-1]["name"] == "read_file"
    assert events[-1]["args"] == {"path": "nope.py"}
    assert events[-1]["error"]["error"] == "FILE_NOT_FOUND"
    assert "durationMs" in events[-1]


def test_cancel_stops_before_the_tool_runs(repo: Path, settings: Settings) -> None:
    ctx = ToolContext.create(repo, settings)
    cancel = threading.Event()
    [tool] = [
        t
        for t in instrument(
            build_tools(ctx), AgentState(), settings=settings, cancel=cancel, events=None
        )
        if t.name == "list_files"
    ]
    cancel.set()
    with pytest.raises(RunCancelled):
        tool()


def test_an_exception_in_a_tool_becomes_the_error_schema(repo: Path, settings: Settings) -> None:
    tool = _wrapped(repo, settings)["repo_info"]

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("disk on fire")

    object.__setattr__(
        tool, "wrapped", type("Broken", (), {"__call__": boom, "name": "repo_info"})()
    )
    result = tool()
    assert result["error"] == "INTERNAL_ERROR"
    assert "disk on fire" in result["message"]
    assert result["recovery_suggestion"]
