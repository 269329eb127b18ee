"""`python -m bench [--quick] [--only NAME ...]`: every figure, measured against its baseline.

`python -m bench --real [options]` is the evaluation on a real local model instead (see
bench/real/main.py; `python -m bench --real --help` lists its options).

Each figure is measured side by side with its baseline in this same invocation, so noisy
machines still give comparable ratios. Prints a table and writes bench/results.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from .figures import FIGURES, Figure

RESULTS = Path(__file__).with_name("results.json")


def machine() -> dict[str, object]:
    mem_kb = 0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_kb = int(line.split()[1])
    except OSError:
        pass
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "memory_gib": round(mem_kb / 1024 / 1024, 1),
    }


def table(figures: list[Figure]) -> str:
    header = f"{'figure':<58} {'value':>12} {'baseline':>12} {'ratio':>7} {'target':>12}  pass"
    rows = [header, "-" * len(header)]
    for f in figures:
        rows.append(
            f"{f.name:<58} {f.shown(f.value):>12} {f.shown(f.baseline):>12} "
            f"{'' if f.ratio is None else f'{f.ratio:.2f}':>7} {f.target_text:>12}  "
            f"{'—' if f.passed is None else ('yes' if f.passed else 'NO')}"
        )
        if f.note:
            rows.append(f"    {f.note}")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "--real" in argv:
        from .real.main import main as real_main

        return real_main([a for a in argv if a != "--real"])
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="tiny sizes (a smoke run)")
    parser.add_argument(
        "--only", nargs="*", help="run only figures whose key contains one of these"
    )
    parser.add_argument("--output", default=str(RESULTS), help="where to write the JSON results")
    args = parser.parse_args(argv)
    chosen = [f for f in FIGURES if not args.only or any(o in f.key for o in args.only)]
    results: list[Figure] = []
    started = time.monotonic()
    for measure in chosen:
        print(f"[bench] {measure.key} ...", file=sys.stderr, flush=True)
        try:
            results.extend(measure.run(quick=args.quick))
        except Exception as exc:  # one broken figure must not hide the others
            results.append(Figure.failed(measure.key, measure.title, exc))
    print(table(results))
    document = {
        "quick": args.quick,
        "machine": machine(),
        "seconds": round(time.monotonic() - started, 1),
        "figures": [f.to_dict() for f in results],
    }
    Path(args.output).write_text(json.dumps(document, indent=2) + "\n")
    print(f"\nwrote {args.output}", file=sys.stderr)
    return 1 if any(f.error for f in results) else 0


if __name__ == "__main__":
    raise SystemExit(main())
