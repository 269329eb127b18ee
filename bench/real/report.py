"""What the evaluation reports: one record per (task, repetition, agent), a side-by-side table
with totals, and a readable transcript of every run.

A record's `result` is `ok` (the check passed), `false-success` (the agent said it finished —
status `completed`, exit 0 — but the check failed) or `fail`. Token figures come from the
model server: `evaluated` prompt tokens it had to process, `reused` from its prefix cache.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import findings
from .agents import AgentRun
from .proxy import Call
from .tasks import Outcome, Task, Verdict


@dataclass
class Record:
    task: Task
    rep: int
    agent: str
    run: AgentRun
    verdict: Verdict
    calls: list[Call]
    changes: str
    transcript: str = ""
    modes: dict[str, list[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.modes = findings.detect(self.calls, [t.answer for t in self.run.turns])

    @property
    def result(self) -> str:
        if self.verdict.ok:
            return "ok"
        return "false-success" if self.run.claimed_success else "fail"

    @property
    def steps(self) -> int:
        return sum(t.steps for t in self.run.turns)

    @property
    def evaluated(self) -> int:
        return sum(c.prompt_n or 0 for c in self.calls)

    @property
    def reused(self) -> int:
        return sum(c.cache_n or 0 for c in self.calls)

    def to_dict(self) -> dict[str, Any]:
        return {
            "task": self.task.key,
            "kind": self.task.kind,
            "rep": self.rep,
            "agent": self.agent,
            "result": self.result,
            "check": {"ok": self.verdict.ok, "detail": self.verdict.detail, "what": self.task.what},
            "claimed_success": self.run.claimed_success,
            "statuses": [t.status for t in self.run.turns],
            "answers": [t.answer for t in self.run.turns],
            "errors": [t.error for t in self.run.turns if t.error],
            "exit_code": self.run.exit_code,
            "traceback": self.run.traceback,
            "steps": self.steps,
            "calls": len(self.calls),
            "seconds": self.run.seconds,
            "tokens": {
                "evaluated": self.evaluated,
                "reused": self.reused,
                "generated": sum(c.predicted_n or 0 for c in self.calls),
                "largest_evaluation": max((c.prompt_n or 0 for c in self.calls), default=0),
            },
            "model_seconds": round(sum(c.seconds for c in self.calls), 1),
            "abandoned_calls": sum(c.client_gone for c in self.calls),
            "accepted_patches": self.run.accepted,
            "changes": self.changes,
            "transcript": self.transcript,
            "failure_modes": self.modes,
            "per_call": [
                {
                    "seconds": c.seconds,
                    "evaluated": c.prompt_n,
                    "reused": c.cache_n,
                    "generated": c.predicted_n,
                    "finish": c.finish_reason,
                    "abandoned": c.client_gone,
                }
                for c in self.calls
            ],
        }


# --- the table ------------------------------------------------------------------------------


def _cell(records: list[Record]) -> str:
    if not records:
        return f"{'—':<14}{'':>5}{'':>6}{'':>7}{'':>14}"
    results = [r.result for r in records]
    if len(records) == 1:
        shown = results[0]
    else:
        shown = f"{results.count('ok')}/{len(results)} ok" + (
            f" {results.count('false-success')}F" if "false-success" in results else ""
        )
    n = len(records)
    steps = sum(r.steps for r in records) / n
    calls = sum(len(r.calls) for r in records) / n
    seconds = sum(r.run.seconds for r in records) / n
    tokens = f"{sum(r.evaluated for r in records) // n}/{sum(r.reused for r in records) // n}"
    return f"{shown:<14}{steps:>5.1f}{calls:>6.1f}{seconds:>7.0f}{tokens:>14}"


def table(records: list[Record], tasks: list[Task], agents: tuple[str, ...]) -> str:
    block = f"{'result':<14}{'steps':>5}{'calls':>6}{'sec':>7}{'eval/reused':>14}"
    header = f"{'task':<18}" + "  │ ".join(f"{block}" for _ in agents)
    title = f"{'':<18}" + "  │ ".join(f"{a:<{len(block)}}" for a in agents)
    rows = [title, header, "─" * len(header)]
    for task in tasks:
        cells = [
            _cell([r for r in records if r.task.key == task.key and r.agent == a]) for a in agents
        ]
        rows.append(f"{task.key:<18}" + "  │ ".join(cells))
    rows.append("─" * len(header))
    totals = []
    for agent in agents:
        mine = [r for r in records if r.agent == agent]
        ok = sum(r.result == "ok" for r in mine)
        false = sum(r.result == "false-success" for r in mine)
        shown = f"{ok}/{len(mine)} ok {false}F"
        tokens = f"{sum(r.evaluated for r in mine)}/{sum(r.reused for r in mine)}"
        totals.append(
            f"{shown:<14}{sum(r.steps for r in mine):>5}{sum(len(r.calls) for r in mine):>6}"
            f"{sum(r.run.seconds for r in mine):>7.0f}{tokens:>14}"
        )
    rows.append(f"{'total':<18}" + "  │ ".join(totals))
    rows.append(
        "result: ok | false-success (said completed, check failed) | fail;"
        " steps, calls and seconds per run; eval/reused: prompt tokens the server evaluated /"
        " reused from its prefix cache"
    )
    return "\n".join(rows)


def modes_table(records: list[Record], agents: tuple[str, ...]) -> str:
    """Per failure mode: how many runs of each agent it hit, and how often."""
    rows = [f"{'failure mode':<58}" + "".join(f"{a + ' runs (hits)':>22}" for a in agents)]
    for mode in findings.MODES:
        cells = []
        for agent in agents:
            hit = [r for r in records if r.agent == agent and mode.key in r.modes]
            count = sum(len(r.modes[mode.key]) for r in hit)
            cells.append(f"{len(hit)} ({count})" if hit else "0")
        rows.append(f"{mode.title[:57]:<58}" + "".join(f"{c:>22}" for c in cells))
    return "\n".join(rows)


def totals(records: list[Record], agent: str) -> dict[str, Any]:
    mine = [r for r in records if r.agent == agent]
    return {
        "runs": len(mine),
        "ok": sum(r.result == "ok" for r in mine),
        "false_success": sum(r.result == "false-success" for r in mine),
        "fail": sum(r.result == "fail" for r in mine),
        "tracebacks": sum(r.run.traceback for r in mine),
        "steps": sum(r.steps for r in mine),
        "calls": sum(len(r.calls) for r in mine),
        "seconds": round(sum(r.run.seconds for r in mine), 1),
        "tokens_evaluated": sum(r.evaluated for r in mine),
        "tokens_reused": sum(r.reused for r in mine),
        "failure_modes": {
            mode.key: sum(mode.key in r.modes for r in mine) for mode in findings.MODES
        },
    }


# --- transcripts ----------------------------------------------------------------------------


def _common_prefix(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _fenced(text: str) -> str:
    fence = "````" if "```" in text else "```"
    return f"{fence}text\n{text.rstrip()}\n{fence}"


def transcript(record: Record, outcome: Outcome) -> str:
    """Markdown: the task, the verdict, then each model call's new input and the model's reply."""
    run = record.run
    lines = [
        f"# {record.task.key} · {record.agent} · repetition {record.rep}",
        "",
        f"- result: **{record.result}** — {record.verdict.detail}",
        f"- check: {record.task.what}",
        f"- statuses: {[t.status for t in run.turns]}, exit code {run.exit_code}, "
        f"{record.steps} steps, {len(record.calls)} model calls, {run.seconds} s",
        f"- tokens evaluated/reused: {record.evaluated}/{record.reused}",
        f"- patches accepted after the run: {run.accepted or 'none'}",
        f"- working tree changes: {record.changes or 'none'}",
        "",
    ]
    for key, hits in record.modes.items():
        lines.append(f"- failure mode **{key}**: " + "; ".join(hits))
    if record.modes:
        lines.append("")
    for number, (turn, answer) in enumerate(zip(record.task.turns, run.turns, strict=False), 1):
        lines += [f"## turn {number}: {turn}", "", "Answer:", "", _fenced(answer.answer), ""]
    previous: list[dict[str, Any]] = []
    for index, call in enumerate(record.calls, 1):
        start = _common_prefix(previous, call.messages)
        lines.append(
            f"## model call {index} — {call.seconds} s, evaluated {call.prompt_n}, "
            f"reused {call.cache_n}, generated {call.predicted_n}, finish {call.finish_reason}"
            + (" — ABANDONED by the client" if call.client_gone else "")
        )
        lines.append("")
        if start < len(previous) - 1:  # more than the last reply's rendering differs
            lines.append(
                f"(the prompt differs from the previous call's from message {start + 1} of "
                f"{len(call.messages)}: earlier messages were rewritten)"
            )
            lines.append("")
        for message in call.messages[start:]:
            lines += [f"**{message['role']}**:", "", _fenced(str(message["content"])), ""]
        lines += ["**model wrote**:", "", _fenced(call.reply), ""]
        previous = [*call.messages, {"role": "assistant", "content": call.reply}]
    if run.steps_log:
        lines += ["## the baseline agent's own memory", ""]
        for step in run.steps_log:
            lines.append(f"### turn {step['turn'] + 1} step {step['step']}")
            for key in ("code", "observation", "error"):
                if step.get(key):
                    lines += [f"{key}:", "", _fenced(str(step[key])), ""]
    lines += ["## stderr of the run", "", _fenced(run.stderr[-20000:])]
    if outcome.notes:
        lines += ["", "## notes", *outcome.notes]
    return "\n".join(lines) + "\n"


def write_transcript(record: Record, outcome: Outcome, directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{record.task.key}-r{record.rep}-{record.agent}.md"
    path.write_text(transcript(record, outcome))
    # The raw calls too, so the failure modes can be detected again with better detectors.
    raw = [c.to_dict() for c in record.calls]
    path.with_suffix(".calls.json").write_text(json.dumps(raw, indent=1, default=str) + "\n")
    record.transcript = str(path)
