"""Running one task with one agent, as a user would, and accepting what it proposed.

`ours` is the real command line in a subprocess: `smol-instruments run --json --yes` for a
one-turn task, `smol-instruments chat --yes` with the turns on stdin for a conversation.
`baseline` is `python -m bench.real.baseline` (smolagents' stock CodeAgent on our tools).
Afterwards every patch still pending is accepted with `smol-instruments tool apply_patch --yes`
(newest first: the model's last word wins; an older one on the same file then comes back stale,
as it would in the editor), so the checks see the repository a user who clicks Accept sees.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .tasks import Task

AGENTS = ("ours", "baseline")

# Settings the evaluation sets itself; the developer's own values must not leak in.
_SETTING_PREFIXES = ("MODEL_", "AGENT_", "PHOENIX_", "SANDBOX_", "OTEL_", "LOG_", "APPROVAL_")
# Variables that change what the fixtures' own code and tests do (termcolor reads the colour
# ones, dj_database_url DATABASE_URL): the agent's test runs must see what the harness sees.
_FIXTURE_VARIABLES = (
    "NO_COLOR",
    "FORCE_COLOR",
    "ANSI_COLORS_DISABLED",
    "DATABASE_URL",
    "PYTHONPATH",
)


@dataclass
class Turn:
    status: str  # completed | max_steps | failed | cancelled | unknown
    answer: str
    steps: int
    error: str | None = None


@dataclass
class AgentRun:
    """What one agent did on one task: its own report, its exit, and what it left behind."""

    turns: list[Turn]
    exit_code: int | None
    seconds: float
    stderr: str
    accepted: list[dict[str, Any]] = field(default_factory=list)
    steps_log: list[dict[str, Any]] = field(default_factory=list)  # the baseline's own memory
    timed_out: bool = False  # stopped by the harness at --run-timeout: a failure

    @property
    def claimed_success(self) -> bool:
        """The run said it finished the task: every turn `completed`, and exit status 0."""
        return (
            not self.timed_out
            and bool(self.turns)
            and all(t.status == "completed" for t in self.turns)
            and (self.exit_code in (0, None))
        )

    @property
    def traceback(self) -> bool:
        return "Traceback (most recent call last)" in self.stderr

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("steps_log")
        data["stderr_tail"] = self.stderr[-4000:]
        data.pop("stderr")
        return data


@dataclass(frozen=True)
class RunOptions:
    api_base: str
    api_key: str
    max_steps: int
    model_timeout: float
    run_timeout: float


def cli() -> list[str]:
    """The command a user types: the console script next to this Python, else `-m`."""
    script = Path(sys.executable).with_name("smol-instruments")
    return [str(script)] if script.exists() else [sys.executable, "-m", "smol_instruments"]


def environment(options: RunOptions) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.upper().startswith(_SETTING_PREFIXES) and k not in _FIXTURE_VARIABLES
    }
    if env.get("TERM") == "dumb":
        env.pop("TERM")
    bin_dir = str(Path(sys.executable).parent)
    env.update(
        {
            # `python` in the repository's commands is this environment's (it has pytest).
            "PATH": bin_dir + os.pathsep + env.get("PATH", ""),
            # The server the evaluation started (the product's embedded one, behind the proxy).
            "MODEL_BACKEND": "server",
            "MODEL_ID": "openai/local",
            "MODEL_API_BASE": options.api_base,
            "MODEL_API_KEY": options.api_key,
            "MODEL_TIMEOUT_S": f"{options.model_timeout:g}",
            "AGENT_MAX_STEPS": str(options.max_steps),
            "PHOENIX_ENABLED": "false",
            "SANDBOX_BACKEND": "local",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "PYTHONUNBUFFERED": "1",
        }
    )
    return env


def _execute(
    command: list[str], repo: Path, options: RunOptions, stdin: str | None = None
) -> tuple[int | None, str, str, float]:
    """Run `command`; at `run_timeout` kill its whole process group (the agent's own children
    too, which would otherwise hold its pipes open) and return exit code None."""
    started = time.monotonic()
    process = subprocess.Popen(
        command,
        cwd=repo,
        env=environment(options),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    code: int | None
    try:
        out, err = process.communicate(stdin or "", timeout=options.run_timeout)
        code = process.returncode
    except subprocess.TimeoutExpired:
        _kill_group(process)
        try:
            out, err = process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            out, err = "", ""
        code = None
        err = _text(err) + f"\n[harness] killed after {options.run_timeout:g} s"
    return code, _text(out), _text(err), round(time.monotonic() - started, 1)


def _kill_group(process: subprocess.Popen[str]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _text(data: bytes | str | None) -> str:
    if data is None:
        return ""
    return data.decode("utf-8", "replace") if isinstance(data, bytes) else data


_SUMMARY = re.compile(r"^── (\w+) · (\d+) steps? · tokens", re.M)


def run_ours(task: Task, repo: Path, options: RunOptions) -> AgentRun:
    if len(task.turns) == 1:
        command = [*cli(), "run", "--json", "--yes", "-v", "--repo", str(repo), task.turns[0]]
        code, out, err, seconds = _execute(command, repo, options)
        try:
            result = json.loads(out)
            turns = [
                Turn(
                    result["status"],
                    result.get("answer", ""),
                    result.get("steps", 0),
                    result.get("error"),
                )
            ]
        except (ValueError, KeyError, TypeError):
            turns = [Turn("unknown", out.strip(), 0, "no JSON result on stdout")]
        return AgentRun(turns, code, seconds, err, timed_out=code is None)
    command = [*cli(), "chat", "--yes", "-v", "--repo", str(repo)]
    code, out, err, seconds = _execute(command, repo, options, "\n".join(task.turns) + "\n")
    answers = [part.strip() for part in re.split(r"^agent> ", out, flags=re.M)[1:]]
    summaries = _SUMMARY.findall(err)
    turns = []
    for index in range(len(task.turns)):
        status, steps = summaries[index] if index < len(summaries) else ("unknown", "0")
        answer = answers[index] if index < len(answers) else ""
        turns.append(Turn(status, answer, int(steps)))
    return AgentRun(turns, code, seconds, err, timed_out=code is None)


def run_baseline(task: Task, repo: Path, options: RunOptions, out_file: Path) -> AgentRun:
    command = [
        sys.executable,
        "-m",
        "bench.real.baseline",
        "--repo",
        str(repo),
        "--out",
        str(out_file),
        "--api-base",
        options.api_base,
        "--api-key",
        options.api_key,
        "--timeout",
        f"{options.model_timeout:g}",
        "--max-steps",
        str(options.max_steps),
        *task.turns,
    ]
    env_root = Path(__file__).resolve().parents[2]  # `bench` must be importable
    code, out, err, seconds = _execute(command, env_root, options)
    try:
        document = json.loads(out_file.read_text())
    except (OSError, ValueError):
        turns = [Turn("failed", "", 0, f"the baseline wrote no result (exit {code})")]
        return AgentRun(turns, code, seconds, out + err, timed_out=code is None)
    turns = [Turn(d["status"], d["answer"], d["steps"], d.get("error")) for d in document["turns"]]
    return AgentRun(
        turns, code, seconds, out + err, steps_log=document["transcript"], timed_out=code is None
    )


def pending_patches(repo: Path, options: RunOptions) -> list[dict[str, Any]]:
    """The patches still pending for the repository, newest first, as `patches list --json`
    reports them (the store lives in the user's state directory, wherever that is)."""
    command = [*cli(), "patches", "list", "--json", "--repo", str(repo)]
    _, out, _, _ = _execute(command, repo, options)
    try:
        found = json.loads(out)
    except ValueError:
        return []
    return list(reversed([p for p in found if p.get("status", "pending") == "pending"]))


def accept_pending(repo: Path, options: RunOptions) -> list[dict[str, Any]]:
    """Accept every pending patch through the command line, as a user clicking Accept."""
    results = []
    for patch in pending_patches(repo, options):
        command = [
            *cli(),
            "tool",
            "apply_patch",
            "--yes",
            "--repo",
            str(repo),
            "--args",
            json.dumps({"patch_id": patch["id"]}),
        ]
        _, out, err, _ = _execute(command, repo, options)
        try:
            result = json.loads(out)
        except ValueError:
            result = {"error": "no JSON", "message": (out + err)[-300:]}
        results.append(
            {
                "patch": patch["id"],
                "summary": patch.get("summary", ""),
                "files": patch.get("files", []),
                "applied": bool(result.get("applied")),
                "result": result.get("status") or result.get("error"),
            }
        )
    return results


def git_changes(repo: Path) -> str:
    """What the run changed in the working tree (applied during the run or accepted after)."""
    done = subprocess.run(
        ["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True
    )
    return done.stdout.strip()


def clean_tree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
