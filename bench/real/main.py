"""`python -m bench --real`: the agent on a real local model, side by side with the baseline.

Every task runs in a fresh fixture repository through the real command line (`ours`) and
through smolagents' stock CodeAgent with its default prompts on the same tools (`baseline`),
against the same GGUF model served by llama.cpp. Each agent has its own server (same file) and
a recording proxy in front of it, so each keeps its own prefix cache and every model call is
measured. The agents take turns task by task, so a change in the machine's load hits both.

`--split dev|heldout|all` picks the tasks (default dev). Every record is written to the results
file (bench/real-results-<model>.json) as soon as its run is judged, so an interrupted
evaluation loses at most the run under way, and `--resume FILE` runs only what FILE lacks.
A dev run's transcript goes to test-artifacts/real/<model>/; a held-out run's transcript and
full record go to test-artifacts/real-heldout/<model>/ only, and the results file and the
printed report keep held-out runs to their figures (see report.figures_only).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from . import agents, checks, fixtures, report, tasks
from .proxy import RecordingProxy
from .server import MODELS, ModelMissing, find_model, model_server

ROOT = Path(__file__).resolve().parents[2]


def _machine() -> dict[str, Any]:
    from bench.__main__ import machine

    return {**machine(), "load_average": os.getloadavg()}


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench --real", description=__doc__)
    parser.add_argument("--model", choices=sorted(MODELS), default="1.5b")
    parser.add_argument("--model-file", help="a GGUF file (default: looked up in the caches)")
    parser.add_argument(
        "--split",
        choices=("dev", "heldout", "all"),
        default="dev",
        help="which tasks: dev (tune on them), heldout (run only to report), or all",
    )
    parser.add_argument("--tasks", nargs="*", help="run only tasks whose key contains one of these")
    parser.add_argument(
        "--resume",
        metavar="FILE",
        nargs="+",
        help="results files of interrupted (or parallel) runs: keep their records, run only what "
        "they lack, and write to the first unless --output says otherwise",
    )
    parser.add_argument(
        "--report-only",
        action="store_true",
        help="run nothing: merge the --resume files into --output and print the report",
    )
    parser.add_argument("--reps", type=int, default=1, help="repetitions of every task")
    parser.add_argument(
        "--agents", default="ours,baseline", help="comma-separated: ours, baseline (default both)"
    )
    parser.add_argument("--threads", type=int, default=1, help="llama.cpp threads per server")
    parser.add_argument("--ctx", type=int, default=8192, help="context size of the server")
    parser.add_argument("--max-steps", type=int, default=10, help="step limit of both agents")
    parser.add_argument(
        "--model-timeout",
        type=float,
        default=600.0,
        help="seconds one model call may take (both agents; a cold CPU prompt is slow)",
    )
    parser.add_argument(
        "--run-timeout",
        type=float,
        default=1800.0,
        help="seconds before a whole run is killed (counted failed)",
    )
    parser.add_argument(
        "--output", help="the JSON results (default: bench/real-results-MODEL.json)"
    )
    parser.add_argument(
        "--artifacts",
        help="dev transcripts directory (default: test-artifacts/real/MODEL; held-out ones go "
        "to a sibling folder named real-heldout)",
    )
    parser.add_argument("--list", action="store_true", help="list the tasks and exit")
    args = parser.parse_args(argv)
    args.agents = tuple(a.strip() for a in args.agents.split(",") if a.strip())
    unknown = set(args.agents) - set(agents.AGENTS)
    if unknown or not args.agents:
        parser.error(f"--agents takes ours and/or baseline, not {', '.join(unknown) or 'nothing'}")
    return args


def run_one(
    task: tasks.Task,
    rep: int,
    agent: str,
    options: agents.RunOptions,
    proxy: RecordingProxy,
    artifacts: Path,
) -> report.Record:
    workdir = Path(tempfile.mkdtemp(prefix="smol-real-"))
    try:
        repo = fixtures.make(task.fixture, workdir)
        mark = len(proxy.records)
        if agent == "ours":
            run = agents.run_ours(task, repo, options)
        else:
            run = agents.run_baseline(task, repo, options, workdir / "baseline.json")
        calls = proxy.since(mark)
        run.accepted = agents.accept_pending(repo, options)
        observed, model_wrote = checks.from_calls(calls)
        answers = [t.answer for t in run.turns]
        outcome = tasks.Outcome(
            repo, answers, sys.executable, observed=observed, model_wrote=model_wrote
        )
        try:
            verdict = task.check(outcome)
        except Exception as exc:  # a broken check is the harness's fault: said, never a pass
            verdict = tasks.Verdict(False, f"the check itself failed: {type(exc).__name__}: {exc}")
        record = report.Record(task, rep, agent, run, verdict, calls, agents.git_changes(repo))
        report.write_transcript(record, outcome, artifacts)
        return record
    finally:
        agents.clean_tree(workdir)


def heldout_artifacts(artifacts: Path) -> Path:
    """Where held-out transcripts go: a sibling of the dev folder, `real-heldout/<model>`."""
    return artifacts.parent.with_name(artifacts.parent.name + "-heldout") / artifacts.name


class Results:
    """The results file, rewritten whole after every record (atomically), and the held-out
    records in full, one JSON line each, in the held-out artifacts folder."""

    def __init__(self, path: Path, heldout_log: Path, document: dict[str, Any]) -> None:
        self.path = path
        self.heldout_log = heldout_log
        self.document = document
        self.spent = float(document.get("seconds", 0.0))  # by the runs resumed from
        self.started = time.monotonic()
        self.ran = False

    @property
    def records(self) -> list[dict[str, Any]]:
        return self.document["records"]

    def done(self) -> set[tuple[str, int, str]]:
        return {(r["task"], r["rep"], r["agent"]) for r in self.records}

    def add(self, record: dict[str, Any]) -> None:
        if record.get("split") == "heldout":
            self.heldout_log.parent.mkdir(parents=True, exist_ok=True)
            with self.heldout_log.open("a") as log:
                log.write(json.dumps(record, default=str) + "\n")
            record = report.figures_only(record)
        self.records.append(record)
        self.ran = True
        self.save()

    def save(self) -> None:
        elapsed = time.monotonic() - self.started if self.ran else 0.0
        self.document["seconds"] = round(self.spent + elapsed, 1)  # wall time of all the runs
        agents_seen = tuple(dict.fromkeys(r["agent"] for r in self.records))
        self.document["totals"] = {a: report.totals(self.records, a) for a in agents_seen}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_name(self.path.name + ".partial")
        partial.write_text(json.dumps(self.document, indent=2, default=str) + "\n")
        os.replace(partial, self.path)


def pending(
    chosen: list[tasks.Task],
    reps: int,
    agents_: tuple[str, ...],
    done: set[tuple[str, int, str]],
) -> list[tuple[tasks.Task, int, str]]:
    """The runs still to do, task by task with the agents taking turns (so a change in the
    machine's load hits both), skipping those already recorded."""
    return [
        (task, rep, agent)
        for task in chosen
        for rep in range(1, reps + 1)
        for agent in agents_
        if (task.key, rep, agent) not in done
    ]


def not_run(
    chosen: list[tasks.Task], records: list[dict[str, Any]], agents_: tuple[str, ...]
) -> list[str]:
    """For each split and agent, how many of the chosen tasks have no record yet."""
    lines = []
    for split in ("dev", "heldout"):
        mine = [t for t in chosen if t.split == split]
        for agent in agents_:
            ran = {r["task"] for r in records if r["agent"] == agent}
            missing = [t for t in mine if t.key not in ran]
            if missing:
                lines.append(f"not run yet: {len(missing)} of {len(mine)} {split} tasks by {agent}")
    return lines


def _task_entry(task: tasks.Task) -> dict[str, Any]:
    if task.split == "heldout":  # the key, kind and fixture only: no text to tune on
        return {"key": task.key, "fixture": task.fixture, "kind": task.kind, "split": task.split}
    return {
        "key": task.key,
        "fixture": task.fixture,
        "kind": task.kind,
        "split": task.split,
        "turns": list(task.turns),
        "check": task.what,
    }


def _progress(task: tasks.Task, rep: int, agent: str, record: dict[str, Any]) -> str:
    said = f"[real] {task.key} r{rep} {agent}: {record['result']}"
    if task.split == "dev":
        said += f" ({record['check']['detail']})"
    return (
        said
        + f"; {record['steps']} steps, {record['calls']} calls, {record['seconds']:.0f} s"
        + (" (killed at the timeout)" if record.get("timed_out") else "")
    )


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    chosen = tasks.select(args.tasks, args.split)
    if args.list:
        for task in chosen:
            what = task.what if task.split == "dev" else "(held out)"
            print(f"{task.key:<26} {task.split:<8} {task.fixture:<24} {task.kind:<10} {what}")
        return 0
    gguf: Path | None = None
    if not args.report_only:
        try:
            gguf = find_model(args.model, args.model_file)
        except ModelMissing as exc:
            print(f"python -m bench --real: {exc}", file=sys.stderr)
            return 2
    default = ROOT / "bench" / f"real-results-{args.model}.json"
    output = Path(args.output or (args.resume[0] if args.resume else default))
    artifacts = Path(args.artifacts or ROOT / "test-artifacts" / "real" / args.model)
    held_artifacts = heldout_artifacts(artifacts)
    previous: list[dict[str, Any]] = []
    spent = 0.0
    for name in args.resume or ():
        try:
            earlier = json.loads(Path(name).read_text())
            seen = {(r["task"], r["rep"], r["agent"]) for r in previous}
            previous += [
                r for r in earlier["records"] if (r["task"], r["rep"], r["agent"]) not in seen
            ]
            spent += float(earlier.get("seconds", 0.0))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            print(
                f"python -m bench --real: cannot resume from {name}: {exc}; "
                "give a results file a run wrote",
                file=sys.stderr,
            )
            return 2
    results = Results(
        output,
        held_artifacts / "records.jsonl",
        {
            "model": {"choice": args.model, "name": MODELS[args.model], "file": str(gguf or "")},
            "settings": {
                "split": args.split,
                "threads": args.threads,
                "ctx": args.ctx,
                "max_steps": args.max_steps,
                "model_timeout_s": args.model_timeout,
                "run_timeout_s": args.run_timeout,
                "reps": args.reps,
            },
            "machine": _machine(),
            "tasks": [_task_entry(t) for t in chosen],
            "records": previous,
            "seconds": spent,
        },
    )
    done = results.done()
    todo = [] if args.report_only else pending(chosen, args.reps, args.agents, done)
    print(
        f"[real] {len(todo)} runs to do ({len(done)} already in {', '.join(args.resume)})"
        if args.resume
        else f"[real] {len(todo)} runs to do",
        file=sys.stderr,
        flush=True,
    )
    with ExitStack() as stack:
        proxies: dict[str, RecordingProxy] = {}
        keys: dict[str, str] = {}
        for agent in args.agents if todo else ():
            assert gguf is not None
            log = artifacts / f"server-{agent}.log"
            try:
                server = stack.enter_context(
                    model_server(gguf, threads=args.threads, ctx=args.ctx, log=log)
                )
            except ModelMissing as exc:
                print(f"python -m bench --real: {exc}", file=sys.stderr)
                return 2
            proxies[agent] = stack.enter_context(RecordingProxy(server.base_url))
            keys[agent] = server.api_key
        for task, rep, agent in todo:
            options = agents.RunOptions(
                proxies[agent].api_base,
                keys[agent],
                args.max_steps,
                args.model_timeout,
                args.run_timeout,
            )
            print(f"[real] {task.key} r{rep} {agent} ...", file=sys.stderr, flush=True)
            where = artifacts if task.split == "dev" else held_artifacts
            record = run_one(task, rep, agent, options, proxies[agent], where).to_dict()
            results.add(record)
            print(_progress(task, rep, agent, record), file=sys.stderr, flush=True)
    results.document["load_average_after"] = os.getloadavg()
    results.save()
    shown = tuple(dict.fromkeys(r["agent"] for r in results.records)) or args.agents
    print(report.table(results.records, chosen, shown))
    print()
    print(report.summary(results.records, shown))
    for line in not_run(chosen, results.records, shown):
        print(line)
    print()
    print(report.modes_table(results.records, shown))
    print(
        f"\nwrote {output}; transcripts in {artifacts} (held-out: {held_artifacts})",
        file=sys.stderr,
    )
    return 0
