"""What the evaluation reports: one record per (task, repetition, agent), tables side by side
per split and per kind, and a readable transcript of every run.

A record's `result` is `ok` (solved: the check passed), `false-success` (the agent said it
finished — status `completed`, exit 0 — but the check failed) or `fail` (a run stopped at its
timeout is a fail). Token figures come from the model server: `evaluated` prompt tokens it had
to process, `reused` from its prefix cache.

The tables read records as the plain dictionaries of the results file, so a resumed run
reports the records of earlier runs with its own. A held-out record is kept to its figures
(`figures_only`): no task text, answer, check detail or transcript leaves the held-out
artifacts folder, and the held-out split is reported by split and kind, never task by task.
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
            "split": self.task.split,
            "timed_out": self.run.timed_out,
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


# --- the tables -----------------------------------------------------------------------------

# What a held-out record keeps in the results file: figures, nothing a tuner could learn from.
_FIGURES = (
    "task",
    "kind",
    "split",
    "rep",
    "agent",
    "result",
    "claimed_success",
    "timed_out",
    "statuses",
    "exit_code",
    "traceback",
    "steps",
    "calls",
    "seconds",
    "tokens",
    "model_seconds",
    "abandoned_calls",
)


def figures_only(record: dict[str, Any]) -> dict[str, Any]:
    kept = {key: record[key] for key in _FIGURES if key in record}
    kept["failure_modes"] = sorted(record.get("failure_modes", {}))
    return kept


def _counts(records: list[dict[str, Any]]) -> dict[str, Any]:
    results = [r["result"] for r in records]
    return {
        "runs": len(records),
        "ok": results.count("ok"),
        "false_success": results.count("false-success"),
        "fail": results.count("fail"),
        "timed_out": sum(bool(r.get("timed_out")) for r in records),
        "steps": sum(r["steps"] for r in records),
        "calls": sum(r["calls"] for r in records),
        "seconds": round(sum(r["seconds"] for r in records), 1),
        "tokens_evaluated": sum(r["tokens"]["evaluated"] for r in records),
        "tokens_reused": sum(r["tokens"]["reused"] for r in records),
    }


def totals(records: list[dict[str, Any]], agent: str) -> dict[str, Any]:
    mine = [r for r in records if r["agent"] == agent]
    found = _counts(mine)
    found["tracebacks"] = sum(bool(r.get("traceback")) for r in mine)
    found["failure_modes"] = {
        mode.key: sum(mode.key in r.get("failure_modes", ()) for r in mine)
        for mode in findings.MODES
    }
    return found


def _cell(records: list[dict[str, Any]]) -> str:
    if not records:
        return f"{'—':<14}{'':>5}{'':>6}{'':>7}{'':>14}"
    results = [r["result"] for r in records]
    if len(records) == 1:
        shown = results[0]
    else:
        shown = f"{results.count('ok')}/{len(results)} ok" + (
            f" {results.count('false-success')}F" if "false-success" in results else ""
        )
    n = len(records)
    steps = sum(r["steps"] for r in records) / n
    calls = sum(r["calls"] for r in records) / n
    seconds = sum(r["seconds"] for r in records) / n
    evaluated = sum(r["tokens"]["evaluated"] for r in records) // n
    reused = sum(r["tokens"]["reused"] for r in records) // n
    return f"{shown:<14}{steps:>5.1f}{calls:>6.1f}{seconds:>7.0f}{f'{evaluated}/{reused}':>14}"


def table(records: list[dict[str, Any]], tasks: list[Task], agents: tuple[str, ...]) -> str:
    """Task by task, the dev split's tasks only (held-out ones are summed in `summary`)."""
    block = f"{'result':<14}{'steps':>5}{'calls':>6}{'sec':>7}{'eval/reused':>14}"
    width = max([24, *(len(t.key) + 1 for t in tasks)])
    header = f"{'task':<{width}}" + "  │ ".join(f"{block}" for _ in agents)
    title = f"{'':<{width}}" + "  │ ".join(f"{a:<{len(block)}}" for a in agents)
    rows = [title, header, "─" * len(header)]
    for task in tasks:
        if task.split != "dev":
            continue
        cells = [
            _cell([r for r in records if r["task"] == task.key and r["agent"] == a]) for a in agents
        ]
        rows.append(f"{task.key:<{width}}" + "  │ ".join(cells))
    rows.append(
        "result: ok | false-success (said completed, check failed) | fail;"
        " steps, calls and seconds per run; eval/reused: prompt tokens the server evaluated /"
        " reused from its prefix cache"
    )
    return "\n".join(rows)


def _figures_row(
    label: str, width: int, records: list[dict[str, Any]], agents: tuple[str, ...]
) -> str:
    cells = []
    for agent in agents:
        c = _counts([r for r in records if r["agent"] == agent])
        tokens = f"{c['tokens_evaluated']}/{c['tokens_reused']}"
        cells.append(
            f"{c['ok']:>4}/{c['runs']:<4}{c['false_success']:>4}{c['fail']:>5}{c['calls']:>6}"
            f"{c['seconds']:>8.0f}{tokens:>16}"
        )
    return f"{label:<{width}}" + "  │ ".join(cells)


_BLOCK = f"{'solved':>9}{'F':>4}{'fail':>5}{'calls':>6}{'sec':>8}{'eval/reused':>16}"


def summary(records: list[dict[str, Any]], agents: tuple[str, ...]) -> str:
    """Per split, then per kind within each split: solved, false successes, failed, model
    calls, wall seconds, prompt tokens evaluated / reused, for each agent side by side."""
    width = 26
    title = f"{'':<{width}}" + "  │ ".join(f"{a:<{len(_BLOCK)}}" for a in agents)
    header = f"{'split / kind':<{width}}" + "  │ ".join(_BLOCK for _ in agents)
    rows = [title, header, "─" * len(header)]
    splits = [s for s in ("dev", "heldout") if any(r.get("split") == s for r in records)]
    for split in splits:
        mine = [r for r in records if r.get("split") == split]
        rows.append(_figures_row(split, width, mine, agents))
        kinds = sorted({r["kind"] for r in mine})
        for kind in kinds:
            rows.append(
                _figures_row(f"  {kind}", width, [r for r in mine if r["kind"] == kind], agents)
            )
        rows.append("─" * len(header))
    rows.append(_figures_row("all", width, records, agents))
    rows.append(
        "solved/runs; F: false successes (said completed, check failed); fail; model calls;"
        " wall seconds; prompt tokens evaluated / reused from the server's cache (sums)"
    )
    return "\n".join(rows)


def modes_table(records: list[dict[str, Any]], agents: tuple[str, ...]) -> str:
    """Per failure mode: how many runs of each agent it hit."""
    rows = [f"{'failure mode':<58}" + "".join(f"{a + ' runs':>16}" for a in agents)]
    for mode in findings.MODES:
        cells = [
            sum(r["agent"] == agent and mode.key in r.get("failure_modes", ()) for r in records)
            for agent in agents
        ]
        rows.append(f"{mode.title[:57]:<58}" + "".join(f"{c:>16}" for c in cells))
    return "\n".join(rows)


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
