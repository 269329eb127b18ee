"""AgentState: every call recorded, and loop detection that answers LOOP_DETECTED."""

from __future__ import annotations

import time

from smol_instruments.agent.state import (
    AgentState,
    ToolCallRecord,
    args_hash,
    format_call,
)
from smol_instruments.base.errors import ErrorType

ERROR_KEYS = {"error", "message", "tool", "context", "recovery_suggestion"}


def call(
    state: AgentState,
    name: str,
    changed_state: bool = False,
    error: str | None = None,
    preview: str = "",
    **arguments: object,
) -> ToolCallRecord:
    record = ToolCallRecord(
        name=name,
        args_hash=args_hash(arguments),
        call=format_call(name, arguments),
        input_size=len(repr(arguments)),
        output_size=42,
        error=error,
        duration_ms=1.5,
        preview=preview,
    )
    state.record(record, changed_state=changed_state)
    return record


# --- args_hash ---------------------------------------------------------------------------------


def test_args_hash_ignores_key_order_and_none_values() -> None:
    a = args_hash({"path": "a.py", "start_line": 1, "end_line": 5})
    b = args_hash({"end_line": 5, "path": "a.py", "start_line": 1})
    c = args_hash({"path": "a.py", "start_line": 1, "end_line": 5, "glob": None})
    assert a == b == c
    assert len(a) == 16


def test_args_hash_is_stable_across_calls_and_distinguishes_values() -> None:
    first = args_hash({"pattern": "def main", "glob": "*.py"})
    assert first == args_hash({"pattern": "def main", "glob": "*.py"})
    assert first != args_hash({"pattern": "def main", "glob": "*.ts"})
    assert args_hash({"n": 1}) != args_hash({"n": "1"})
    assert args_hash({}) == args_hash({"x": None})


def test_args_hash_handles_any_value() -> None:
    weird = {"obj": object(), "bytes": b"\x00\xff", "text": "é漢字\x00", "nested": {"a": [1, 2]}}
    assert isinstance(args_hash(weird), str)
    assert args_hash({"nested": {"b": 1, "a": 2}}) == args_hash({"nested": {"a": 2, "b": 1}})


def test_format_call_is_short() -> None:
    assert (
        format_call("read_file", {"path": "a.py", "start_line": None}) == "read_file(path='a.py')"
    )
    long = format_call("rg_search", {"pattern": "x" * 500})
    assert len(long) == 120
    assert long.endswith("...)")


# --- records ----------------------------------------------------------------------------------


def test_every_call_is_recorded_with_its_details() -> None:
    state = AgentState()
    state.step = 3
    before = time.time()
    record = call(state, "read_file", error="FILE_NOT_FOUND", path="nope.py")
    assert state.calls == [record]
    assert record.name == "read_file"
    assert record.args_hash == args_hash({"path": "nope.py"})
    assert record.call == "read_file(path='nope.py')"
    assert record.input_size > 0
    assert record.output_size == 42
    assert record.error == "FILE_NOT_FOUND"
    assert record.duration_ms == 1.5
    assert record.step == 3
    assert record.epoch == 0
    assert before <= record.at <= time.time()
    as_dict = record.to_dict()
    assert as_dict["name"] == "read_file"
    assert as_dict["error"] == "FILE_NOT_FOUND"


def test_history_is_bounded() -> None:
    state = AgentState(history_limit=5)
    for i in range(12):
        call(state, "read_file", path=f"f{i}.py")
    assert len(state.calls) == 5
    assert state.calls[-1].call == "read_file(path='f11.py')"


# --- loop detection -----------------------------------------------------------------------------


def test_first_call_is_never_a_loop() -> None:
    assert AgentState().loop_check("read_file", {"path": "a.py"}) is None


def test_identical_consecutive_call_trips() -> None:
    state = AgentState()
    call(state, "read_file", path="a.py")
    verdict = state.loop_check("read_file", {"path": "a.py"})
    assert verdict is not None
    assert "just made" in verdict.reason
    # Different arguments, or a different tool, are not loops.
    assert state.loop_check("read_file", {"path": "b.py"}) is None
    assert state.loop_check("read_file_snippet", {"path": "a.py"}) is None
    # None-valued arguments do not make a call different.
    assert state.loop_check("read_file", {"path": "a.py", "start_line": None}) is not None


def test_second_occurrence_with_something_between_is_allowed() -> None:
    state = AgentState()
    call(state, "read_file", path="a.py")
    call(state, "rg_search", pattern="main")
    assert state.loop_check("read_file", {"path": "a.py"}) is None


def test_third_occurrence_in_the_same_epoch_trips() -> None:
    state = AgentState()
    call(state, "read_file", path="a.py")
    call(state, "rg_search", pattern="main")
    call(state, "read_file", path="a.py")
    call(state, "list_files")
    verdict = state.loop_check("read_file", {"path": "a.py"})
    assert verdict is not None
    assert "already made 2 times" in verdict.reason
    assert verdict.previous.call == "read_file(path='a.py')"


def test_abab_cycle_trips() -> None:
    state = AgentState()
    a, b = ("read_file", {"path": "a.py"}), ("rg_search", {"pattern": "x"})
    for name, args in (a, b, a, b):
        assert state.loop_check(name, args) is None
        call(state, name, **args)
    assert state.loop_check(*a) is not None  # the fifth call: A B A B [A]


def test_state_change_resets_detection() -> None:
    state = AgentState()
    call(state, "read_file", path="a.py")
    call(state, "run_cmd", changed_state=True, command="make")
    assert state.epoch == 1
    # After something changed, reading the file again is sensible.
    assert state.loop_check("read_file", {"path": "a.py"}) is None
    call(state, "read_file", path="a.py")
    assert state.loop_check("read_file", {"path": "a.py"}) is not None
    state.mark_changed()  # e.g. the user edited a file in the editor
    assert state.epoch == 2
    assert state.loop_check("read_file", {"path": "a.py"}) is None


def test_state_change_records_the_call_in_the_old_epoch() -> None:
    state = AgentState()
    record = call(state, "apply_patch", changed_state=True, patch_id="p1")
    assert record.epoch == 0
    assert state.epoch == 1


def test_max_repeats_is_configurable() -> None:
    state = AgentState(max_repeats=3)
    for _ in range(2):
        call(state, "read_file", path="a.py")
        call(state, "list_files")
    assert state.loop_check("read_file", {"path": "a.py"}) is None
    call(state, "read_file", path="a.py")
    call(state, "list_files")
    assert state.loop_check("read_file", {"path": "a.py"}) is not None


def test_loop_detected_error_schema_and_suggestion() -> None:
    state = AgentState()
    state.step = 4
    call(state, "rg_search", preview="{'matches': [...]}", pattern="def main")
    verdict = state.loop_check("rg_search", {"pattern": "def main"})
    assert verdict is not None
    error = verdict.to_error("rg_search")
    assert set(error) == ERROR_KEYS
    assert error["error"] == ErrorType.LOOP_DETECTED
    assert error["tool"] == "rg_search"
    assert "rg_search(pattern='def main')" in error["message"]
    assert "not run again" in error["message"]
    assert error["context"] == {"repeated_call": "rg_search(pattern='def main')", "first_step": 4}
    suggestion = error["recovery_suggestion"]
    assert "Do not call it again" in suggestion
    assert "{'matches': [...]}" in suggestion  # reminds the model of the result it already has
    assert "read_file(...)" in suggestion  # and says what to do with it instead
