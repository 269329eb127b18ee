"""AgentState: what the agent has done so far, and loop detection over it.

Small models repeat themselves: the same read, the same failing search, an A-B-A-B dance.
Every tool call is recorded here; before a call runs, `loop_check` says whether it would
repeat what already happened with nothing changed in between, so the wrapper can answer
LOOP_DETECTED with a suggestion instead of running it again.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from ..base.errors import ErrorType, error_dict


def args_hash(arguments: dict[str, Any]) -> str:
    """A stable short hash of a call's arguments (key order and None-valued keys ignored)."""
    meaningful = {k: v for k, v in sorted(arguments.items()) if v is not None}
    text = json.dumps(meaningful, sort_keys=True, default=repr, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def format_call(name: str, arguments: dict[str, Any], limit: int = 120) -> str:
    shown = ", ".join(f"{k}={v!r}" for k, v in arguments.items() if v is not None)
    text = f"{name}({shown})"
    return text if len(text) <= limit else text[: limit - 4] + "...)"


@dataclass
class ToolCallRecord:
    """One tool call as it happened."""

    name: str
    args_hash: str
    call: str
    input_size: int
    output_size: int = 0
    error: str | None = None
    duration_ms: float = 0.0
    truncated: bool = False
    step: int | None = None
    epoch: int = 0
    preview: str = ""
    seq: int = 0  # this call's number in the session (0, 1, 2 ...)
    at: float = field(default_factory=time.time)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


_NEXT_STEP = {
    "read_file": "Use the text you have: propose_patch(...) to change it, or final_answer(...) "
    "with what it shows. To see other lines, pass a different start_line.",
    "read_file_snippet": "Use the lines you have, or read_file(...) for the whole file.",
    "rg_search": "Use these results: read_file(...) one of the files they name, or search for "
    "a different pattern.",
    "list_files": "Use this list: read_file(...) one of the files in it.",
    "run_tests": "Nothing changed since the tests ran, so they would give the same result. "
    "Change something first (propose_patch), or final_answer(...) with the result.",
    "run_cmd": "Nothing changed since it ran, so it would print the same. Do something else, "
    "or final_answer(...) with what you have.",
}


@dataclass(frozen=True)
class LoopVerdict:
    reason: str
    previous: ToolCallRecord

    def to_error(self, tool: str) -> dict[str, Any]:
        shown = f" Its result began: {self.previous.preview}" if self.previous.preview else ""
        hint = (
            "Do not call it again with the same arguments."
            + shown
            + " "
            + _NEXT_STEP.get(
                tool,
                "Use the result you already have, or try something different: other "
                "arguments, another tool, or final_answer(...).",
            )
        )
        return error_dict(
            ErrorType.LOOP_DETECTED,
            f"{self.previous.call} {self.reason}; it was not run again",
            tool=tool,
            context={"repeated_call": self.previous.call, "first_step": self.previous.step},
            recovery_suggestion=hint,
        )


class AgentState:
    """The record of one session's tool calls, with loop detection.

    Nothing changes between two identical calls unless a state-changing tool (an applied
    patch, a shell command) ran between them; `epoch` counts those changes. A call is a loop
    when, in the same epoch, it is identical to the call just before it, or it has already
    been made `max_repeats` times (this also catches cycles such as A B A B A).
    """

    def __init__(self, max_repeats: int = 2, history_limit: int = 2000) -> None:
        self.max_repeats = max_repeats
        self.history_limit = history_limit
        self.calls: list[ToolCallRecord] = []
        self.epoch = 0
        self.step: int | None = None
        self.loops_detected = 0
        self.total_calls = 0
        self._lock = threading.Lock()

    def loop_check(self, name: str, arguments: dict[str, Any]) -> LoopVerdict | None:
        key = (name, args_hash(arguments))
        with self._lock:
            same_epoch = [c for c in self.calls if c.epoch == self.epoch]
            if not same_epoch:
                return None
            earlier = [c for c in same_epoch if (c.name, c.args_hash) == key]
            # What the model already has is the result of a call that ran, never a refusal.
            ran = [c for c in earlier if c.error != ErrorType.LOOP_DETECTED]
            if not ran:
                return None
            last = same_epoch[-1]
            if (last.name, last.args_hash) == key:
                self.loops_detected += 1
                return LoopVerdict("was just made with the same arguments", ran[-1])
            if len(earlier) >= self.max_repeats:
                self.loops_detected += 1
                return LoopVerdict(
                    f"was already made {len(earlier)} times with the same arguments", ran[-1]
                )
        return None

    def calls_since(self, seq: int) -> list[ToolCallRecord]:
        """The calls recorded from call number `seq` on."""
        with self._lock:
            return [c for c in self.calls if c.seq >= seq]

    def last_loop_call(self) -> str | None:
        """The most recent call refused as a loop, as text."""
        with self._lock:
            for record in reversed(self.calls):
                if record.error == ErrorType.LOOP_DETECTED:
                    return record.call
        return None

    def record(self, record: ToolCallRecord, *, changed_state: bool = False) -> None:
        with self._lock:
            record.epoch = self.epoch
            record.seq = self.total_calls
            self.total_calls += 1
            record.step = self.step if record.step is None else record.step
            self.calls.append(record)
            if len(self.calls) > self.history_limit:
                del self.calls[: len(self.calls) - self.history_limit]
            if changed_state:
                self.epoch += 1

    def mark_changed(self) -> None:
        """Something outside the tools changed the repository (e.g. the user edited a file)."""
        with self._lock:
            self.epoch += 1
