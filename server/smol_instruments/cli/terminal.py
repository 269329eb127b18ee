"""The terminal host's event sink: a run's events, compact and readable, on stderr.

Progress (steps, streamed model text, code, tool calls, observations) goes to stderr so that
stdout carries only the final answer and `run` can be piped. While the model reads its prompt,
a terminal shows one line that counts up ("… reading 1,100 tokens — 40 %") and is wiped by what
comes next; elsewhere the line is printed once, when the reading starts.

Everything in an event is untrusted text (the model's words and code, what tools read from
the repository, commands, summaries, paths): it is written through `base/visible.py`, so an
escape sequence in a README or a reply can neither hide a line nor redraw the screen; only
our own colours reach the terminal as escape sequences.
"""

from __future__ import annotations

import sys
import threading
from typing import Any, TextIO

from ..agent.events import (
    AgentEvent,
    CodeEvent,
    ErrorEvent,
    FinalEvent,
    ObservationEvent,
    PatchEvent,
    ProgressEvent,
    RunOutcome,
    SessionApprovalEvent,
    StepEvent,
    TextEvent,
    ToolEvent,
)
from ..base.visible import visible

DIM, BOLD, RED, GREEN, YELLOW, CYAN, RESET = (
    "\033[2m",
    "\033[1m",
    "\033[31m",
    "\033[32m",
    "\033[33m",
    "\033[36m",
    "\033[0m",
)


def _clip(text: str, lines: int = 8, width: int = 160) -> str:
    rows = text.strip("\n").splitlines()
    shown = [row if len(row) <= width else row[: width - 1] + "…" for row in rows[:lines]]
    if len(rows) > lines:
        shown.append(f"… ({len(rows) - lines} more lines)")
    return "\n".join(shown)


def _call(name: str, args: dict[str, Any]) -> str:
    shown = ", ".join(f"{k}={v!r}" for k, v in args.items())
    text = visible(f"{name}({shown})", breaks=True)
    return text if len(text) <= 140 else text[:139] + "…)"


def shown(text: object, *, breaks: bool = False) -> str:
    """Untrusted text as the terminal may show it (`visible`)."""
    return visible(str(text), breaks=breaks)


class TerminalRenderer:
    """Prints PROTOCOL events as they arrive; colour only on a terminal."""

    def __init__(
        self, stream: TextIO | None = None, *, color: bool | None = None, verbose: bool = False
    ) -> None:
        self.out = stream or sys.stderr
        self.color = self.out.isatty() if color is None else color
        self.verbose = verbose
        self.live = self.out.isatty() if color is None else color
        self._in_text = False
        self._progress_shown = False  # a live progress line is on screen
        self._reading: str | None = None  # the read whose start was printed (not live)
        self._lock = threading.Lock()

    def _c(self, code: str, text: str) -> str:
        return f"{code}{text}{RESET}" if self.color else text

    def _wipe_progress(self) -> None:
        if self._progress_shown:
            self.out.write("\r\033[K")
            self._progress_shown = False

    def _line(self, text: str) -> None:
        self._wipe_progress()
        if self._in_text:
            self.out.write("\n")
            self._in_text = False
        self.out.write(text + "\n")
        self.out.flush()

    def __call__(self, event: AgentEvent) -> None:
        with self._lock:
            handler = getattr(self, f"on_{event.kind}", None)
            if handler is not None:
                handler(event)

    def on_step(self, event: StepEvent) -> None:
        self._line(self._c(BOLD, f"── step {event.step}/{event.max_steps}"))

    def on_progress(self, event: ProgressEvent) -> None:
        text = f"  … {event.message}"
        if event.percent is not None:
            text += f" — {event.percent} %"
        if self.live:
            if self._in_text:
                self.out.write("\n")
                self._in_text = False
            self.out.write("\r\033[K" + self._c(DIM, text))
            self.out.flush()
            self._progress_shown = True
        elif event.message != self._reading:
            self._reading = event.message
            self._line(self._c(DIM, text))

    def on_text(self, event: TextEvent) -> None:
        self._wipe_progress()
        self._reading = None
        self.out.write(self._c(DIM, shown(event.text)))
        self.out.flush()
        self._in_text = True

    def on_code(self, event: CodeEvent) -> None:
        if self.verbose:
            self._line(self._c(CYAN, _clip(shown(event.code), 20)))

    def on_tool(self, event: ToolEvent) -> None:
        call = _call(event.name, event.args)
        took = f"{event.duration_ms:.0f} ms"
        error = event.error
        if error:
            failure = shown(f"{error.get('error')}: {error.get('message')}", breaks=True)
            self._line(self._c(RED, f"  ✗ {call}  {failure}"))
            if error.get("recovery_suggestion"):
                self._line(self._c(YELLOW, f"    → {shown(error['recovery_suggestion'])}"))
        else:
            self._line(self._c(CYAN, f"  ▶ {call}") + self._c(DIM, f"  {took}"))

    def on_observation(self, event: ObservationEvent) -> None:
        text = shown(event.text).replace("Execution logs:\n", "", 1)
        text = text.replace("Last output from code snippet:\nNone", "").strip()
        if text:
            self._line(
                self._c(DIM, "  " + _clip(text, 12 if self.verbose else 6).replace("\n", "\n  "))
            )

    def on_patch(self, event: PatchEvent) -> None:
        patch = event.patch
        validation = patch.get("validation") or {}
        checks = validation.get("checks") or []
        verdict = (
            "not validated"
            if validation.get("backend") == "none"
            else ("applies" if validation.get("applies") else "does NOT apply")
        )
        if checks:
            failed = [c for c in checks if not c.get("passed")]
            if any(not c.get("fails_without_patch") for c in failed):
                verdict += ", checks FAILED"
            elif failed:
                verdict += ", checks fail as they do without it"
            else:
                verdict += ", checks pass"
        title = shown(f"{patch['id']} [{patch['status']}] {patch['summary']}", breaks=True)
        self._line(
            self._c(YELLOW, f"  ✎ patch {title} ")
            + self._c(DIM, f"(+{patch.get('added', 0)} −{patch.get('removed', 0)}, {verdict})")
        )

    def on_approval(self, event: SessionApprovalEvent) -> None:
        if event.decision == "auto":
            return
        colour = GREEN if event.decision == "approved" else RED
        self._line(
            self._c(
                colour,
                f"  ⚑ {event.verdict} ({event.rule}): {shown(event.command, breaks=True)}"
                f" → {event.decision}",
            )
        )

    def on_error(self, event: ErrorEvent) -> None:
        self._line(self._c(RED, f"  ! {_clip(shown(event.message), 4, width=400)}"))
        if event.recovery_suggestion:
            self._line(self._c(YELLOW, f"    → {shown(event.recovery_suggestion)}"))

    def on_final(self, event: FinalEvent) -> None:
        self._wipe_progress()
        if self._in_text:
            self.out.write("\n")
            self._in_text = False
        self.out.flush()

    def summary(self, outcome: RunOutcome) -> None:
        usage = outcome.usage
        parts = [
            f"{outcome.status}",
            f"{outcome.steps} step{'s' if outcome.steps != 1 else ''}",
            f"tokens {usage.prompt_tokens} in / {usage.completion_tokens} out",
        ]
        if outcome.trace_id:
            parts.append(f"trace {shown(outcome.trace_id)}")
        colour = GREEN if outcome.status == "completed" else RED
        self._line(self._c(colour, "── " + " · ".join(parts)))
