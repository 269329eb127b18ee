"""`python -m bench --real`: the agent on a real local model, side by side with the baseline.

Every task runs in a fresh fixture repository through the real command line (`ours`) and
through smolagents' stock CodeAgent with its default prompts on the same tools (`baseline`),
against the same GGUF model served by llama.cpp. Each agent has its own server (same file) and
a recording proxy in front of it, so each keeps its own prefix cache and every model call is
measured. The agents take turns task by task, so a change in the machine's load hits both.

Prints the side-by-side table, writes the records to bench/real-results-<model>.json and a
transcript of every run to test-artifacts/real/<model>/.
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

from . import agents, fixtures, report, tasks
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
    parser.add_argument("--tasks", nargs="*", help="run only tasks whose key contains one of these")
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
        "--run-timeout", type=float, default=2400.0, help="seconds before a whole run is killed"
    )
    parser.add_argument(
        "--output", help="the JSON results (default: bench/real-results-MODEL.json)"
    )
    parser.add_argument(
        "--artifacts", help="transcripts directory (default: test-artifacts/real/MODEL)"
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
    workdir = Path(tempfile.mkdtemp(prefix=f"smol-real-{task.key}-"))
    try:
        repo = fixtures.make(task.fixture, workdir)
        mark = len(proxy.records)
        if agent == "ours":
            run = agents.run_ours(task, repo, options)
        else:
            run = agents.run_baseline(task, repo, options, workdir / "baseline.json")
        calls = proxy.since(mark)
        run.accepted = agents.accept_pending(repo, options)
        outcome = tasks.Outcome(repo, [t.answer for t in run.turns], sys.executable)
        verdict = task.check(outcome)
        record = report.Record(task, rep, agent, run, verdict, calls, agents.git_changes(repo))
        report.write_transcript(record, outcome, artifacts)
        return record
    finally:
        agents.clean_tree(workdir)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    chosen = tasks.select(args.tasks)
    if args.list:
        for task in chosen:
            print(f"{task.key:<18} {task.fixture:<10} {task.kind:<9} {task.what}")
        return 0
    try:
        gguf = find_model(args.model, args.model_file)
    except ModelMissing as exc:
        print(f"python -m bench --real: {exc}", file=sys.stderr)
        return 2
    output = Path(args.output or ROOT / "bench" / f"real-results-{args.model}.json")
    artifacts = Path(args.artifacts or ROOT / "test-artifacts" / "real" / args.model)
    started = time.monotonic()
    machine = _machine()
    records: list[report.Record] = []
    with ExitStack() as stack:
        proxies: dict[str, RecordingProxy] = {}
        keys: dict[str, str] = {}
        for agent in args.agents:
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
        for task in chosen:
            for rep in range(1, args.reps + 1):
                for agent in args.agents:
                    options = agents.RunOptions(
                        proxies[agent].api_base,
                        keys[agent],
                        args.max_steps,
                        args.model_timeout,
                        args.run_timeout,
                    )
                    print(f"[real] {task.key} r{rep} {agent} ...", file=sys.stderr, flush=True)
                    record = run_one(task, rep, agent, options, proxies[agent], artifacts)
                    records.append(record)
                    print(
                        f"[real] {task.key} r{rep} {agent}: {record.result} "
                        f"({record.verdict.detail}); {record.steps} steps, "
                        f"{len(record.calls)} calls, {record.run.seconds:.0f} s",
                        file=sys.stderr,
                        flush=True,
                    )
    print(report.table(records, chosen, args.agents))
    print()
    print(report.modes_table(records, args.agents))
    document = {
        "model": {"choice": args.model, "name": MODELS[args.model], "file": str(gguf)},
        "settings": {
            "threads": args.threads,
            "ctx": args.ctx,
            "max_steps": args.max_steps,
            "model_timeout_s": args.model_timeout,
            "reps": args.reps,
        },
        "machine": machine,
        "load_average_after": os.getloadavg(),
        "seconds": round(time.monotonic() - started, 1),
        "totals": {agent: report.totals(records, agent) for agent in args.agents},
        "tasks": [
            {
                "key": t.key,
                "fixture": t.fixture,
                "kind": t.kind,
                "turns": list(t.turns),
                "check": t.what,
            }
            for t in chosen
        ],
        "records": [r.to_dict() for r in records],
    }
    output.write_text(json.dumps(document, indent=2, default=str) + "\n")
    print(f"\nwrote {output} and transcripts in {artifacts}", file=sys.stderr)
    return 0
