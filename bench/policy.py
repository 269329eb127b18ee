"""The command policy's speed: tree-sitter-bash and the analysis by family, against what they replaced.

The baseline is the policy as it was before the change, read from git history in this same
run: `server/smol_instruments/safety/policy.py` and `shell.py` (the hand-written parser) at
BASELINE_COMMIT are written to a temporary package and imported. Both policies decide every
command of the corpus (tests/policy_corpus.py) in alternating rounds; the figures are the
median time per command, of the whole verdict and of parsing alone.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from .figures import REPO, Figure, _median_alternating

#: The last commit with the hand-written parser (safety/shell.py) and the one-file policy.
BASELINE_COMMIT = "23686d1"
_BASELINE_FILES = ("policy.py", "shell.py")


def _baseline(directory: Path) -> tuple[ModuleType, ModuleType]:
    """The old policy and shell modules, from git history, as the package `baseline_safety`."""
    package = directory / "baseline_safety"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for name in _BASELINE_FILES:
        source = f"{BASELINE_COMMIT}:server/smol_instruments/safety/{name}"
        shown = subprocess.run(
            ["git", "-C", str(REPO), "show", source], capture_output=True, text=True
        )
        if shown.returncode != 0:
            raise RuntimeError(f"git history lacks {source} (a shallow clone?): {shown.stderr}")
        (package / name).write_text(shown.stdout)
    sys.path.insert(0, str(directory))
    try:
        policy = importlib.import_module("baseline_safety.policy")
        shell = importlib.import_module("baseline_safety.shell")
    finally:
        sys.path.remove(str(directory))
    return policy, shell


def _per_command(decide: Callable[[str], Any], commands: list[str]) -> Callable[[], float]:
    def timed() -> float:
        start = time.perf_counter()
        for command in commands:
            decide(command)
        return (time.perf_counter() - start) / len(commands)

    return timed


def policy_speed(quick: bool = False) -> list[Figure]:
    from tests.policy_corpus import DESTRUCTIVE, RISKY, SAFE

    from smol_instruments.safety.policy import CommandPolicy
    from smol_instruments.safety.shell import parse_repaired

    commands = DESTRUCTIVE + RISKY + SAFE
    if quick:
        commands = commands[::15]
    rounds = 3 if quick else 7
    with tempfile.TemporaryDirectory() as tmp:
        old_policy, old_shell = _baseline(Path(tmp))
        repo = Path(tmp) / "repo"
        (repo / ".git").mkdir(parents=True)
        new, old = CommandPolicy.load(repo), old_policy.CommandPolicy.load(repo)
        for command in commands:  # warm both: imports, caches, the tree-sitter parser
            new.verdict(command)
            old.verdict(command)
        verdict, verdict_before = _median_alternating(
            _per_command(new.verdict, commands), _per_command(old.verdict, commands), rounds
        )
        parse, parse_before = _median_alternating(
            _per_command(parse_repaired, commands),
            _per_command(old_shell.parse_prefix, commands),
            rounds,
        )
    note = f"baseline: the policy and hand-written parser at {BASELINE_COMMIT}, from git history"
    size = f"{len(commands)} corpus commands"
    return [
        Figure(
            "policy_verdict",
            f"command policy verdict per command ({size})",
            verdict * 1e6,
            "µs",
            verdict_before * 1e6,
            1.0,
            "ratio",
            note=note,
        ),
        Figure(
            "policy_parse",
            f"shell parsing per command, tree-sitter-bash + conversion ({size})",
            parse * 1e6,
            "µs",
            parse_before * 1e6,
            None,
            "report",
            note="baseline: the hand-written parser's parse_prefix",
        ),
    ]
