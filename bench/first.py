"""The first answer against the machine's floor: the real embedded model, through the real daemon.

A plain question (answered in prose from one file the question names) is sent as the editor
sends it, `smol/chat` to `smol-instruments serve`, and timed to its first word (the first
`text` event with a letter in it) and to its answer (the response). Its floor comes from the
same llama.cpp server in the same run, read from the server's own log (`print_timing` of each
request: tokens evaluated and milliseconds, tokens written and milliseconds):

    floor = tokens that had to be evaluated / the server's measured prompt speed
          + tokens written / its measured generation speed   (one token, for the first word)

Both speeds are those llama.cpp measured for the question's own request (on a CPU shared
with other work, a speed measured a minute earlier is another machine). Tokens that had to be
evaluated: every prompt token of a cold question; for a question asked once the instructions
are read, those beyond the warm-up's prompt (its tokens minus the warm-up's: a few tokens
stricter than the exact shared prefix). Later model calls of a run count their evaluated
tokens as unavoidable. The floor is then the model's own compute for what could not be
avoided; what the answer takes beyond it is ours: the editor's protocol, the agent, the model
client, and any token read that need not have been.

Scenarios, each a daemon of its own on a copy of the same small repository, with a model cache
of its own (the pulled model linked in; saved prefixes start empty):
  cold         warm-up off, the question asked at once: the model starts and reads everything
  first        warm-up on, the question asked once the daemon got the model ready (the user
               typing meanwhile): what a newcomer's first question costs
  later        the next conversation in the same daemon, another file: a warm question
  restarted    a new daemon on the same cache: the instructions are restored from their file
Goals: `later` within 1.2x its floor; `first` within 1.5x of `later` (first word).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .figures import Figure

#: What a newcomer asks first: a plain question about one function, answered from its code.
QUESTIONS = (
    ("shapes.py", "What does the function area in shapes.py return for a circle?"),
    ("money.py", "What does the function total in money.py return when the cart is empty?"),
)
FILES = {
    "shapes.py": '''"""Areas of simple shapes."""

import math


def area(shape: str, size: float) -> float:
    """The area of a square (side `size`) or a circle (radius `size`)."""
    if shape == "square":
        return size * size
    if shape == "circle":
        return math.pi * size * size
    raise ValueError(f"unknown shape {shape!r}")
''',
    "money.py": '''"""Totals of a shopping cart."""

from decimal import Decimal


def total(cart: list[tuple[str, Decimal]]) -> Decimal:
    """The sum of the prices in `cart`, or zero when the cart is empty."""
    if not cart:
        return Decimal("0")
    return sum((price for _, price in cart), Decimal("0"))
''',
}
_TIMING = re.compile(
    r"task (\d+) \| +prompt eval time = +([\d.]+) ms / +(\d+) tokens"
    r"|task (\d+) \| +eval time = +([\d.]+) ms / +(\d+) tokens"
    r"|task (\d+) \| stop processing: n_tokens = (\d+)"
)


@dataclass
class Task:
    """One request as llama.cpp timed it."""

    number: int
    evaluated: int = 0
    prompt_ms: float = 0.0
    written: int = 0
    write_ms: float = 0.0
    held: int = 0  # tokens in the slot after it: its prompt and what it wrote

    @property
    def prompt_tokens(self) -> int:
        return self.held - self.written + 1

    @property
    def prompt_speed(self) -> float:
        return self.evaluated / self.prompt_ms * 1000 if self.prompt_ms else 0.0

    @property
    def ms_per_written(self) -> float:
        return self.write_ms / self.written if self.written else 0.0


def read_tasks(log: Path, offset: int = 0) -> list[Task]:
    """The requests llama.cpp finished, from its log (from byte `offset` on)."""
    try:
        with log.open("rb") as stream:
            stream.seek(offset)
            text = stream.read().decode("utf-8", "replace")
    except OSError:
        return []
    tasks: dict[int, Task] = {}
    for match in _TIMING.finditer(text):
        if match[1]:
            task = tasks.setdefault(int(match[1]), Task(int(match[1])))
            task.prompt_ms, task.evaluated = float(match[2]), int(match[3])
        elif match[4]:
            task = tasks.setdefault(int(match[4]), Task(int(match[4])))
            task.write_ms, task.written = float(match[5]), int(match[6])
        else:
            task = tasks.setdefault(int(match[7]), Task(int(match[7])))
            task.held = int(match[8])
    return [t for t in tasks.values() if t.held]


@dataclass
class Answer:
    """One question through the daemon: when its first word and its answer came, and the
    requests the server served for it."""

    scenario: str
    first_word_s: float
    answer_s: float
    status: str
    tasks: list[Task] = field(default_factory=list)
    floor_first_s: float = 0.0
    floor_answer_s: float = 0.0
    unavoidable: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "first_word_s": round(self.first_word_s, 2),
            "answer_s": round(self.answer_s, 2),
            "floor_first_word_s": round(self.floor_first_s, 2),
            "floor_answer_s": round(self.floor_answer_s, 2),
            "status": self.status,
            "model_calls": len(self.tasks),
            "tokens_to_evaluate": self.unavoidable,
            "tokens_evaluated": sum(t.evaluated for t in self.tasks),
            "tokens_written": sum(t.written for t in self.tasks),
        }


class Daemon:
    """`smol-instruments serve` on `repo`, the events of its runs kept with their times."""

    def __init__(self, repo: Path, env: dict[str, str]) -> None:
        from .lsp_client import StdioClient

        self.client = StdioClient([sys.executable, "-m", "smol_instruments", "serve"], env=env)
        self.first_text: dict[str, float] = {}
        self.warmed = threading.Event()
        self.warm_message = ""
        self.client.on_notification = self._heard
        self.client.on_request = self._asked
        self.client.initialize(repo, capabilities={"window": {"workDoneProgress": True}})

    def _asked(self, message: dict[str, Any]) -> Any:
        return None  # window/workDoneProgress/create: accepted

    def _heard(self, now: float, message: dict[str, Any]) -> None:
        method, params = message.get("method"), message.get("params") or {}
        if method == "smol/event" and params.get("kind") == "text":
            if re.search(r"[A-Za-z]", params.get("text", "")):
                self.first_text.setdefault(params["sessionId"], now)
        elif (
            method == "$/progress"
            and (params.get("value") or {}).get("kind") == "end"
            and not self.warmed.is_set()  # the first progress to end is the warm-up's
        ):
            self.warm_message = params["value"].get("message", "")
            self.warmed.set()

    def ask(self, scenario: str, question: str, session: str) -> Answer:
        started = time.perf_counter()
        result = self.client.request(
            "smol/chat", {"message": question, "sessionId": session}, timeout=1800
        )
        ended = time.perf_counter()
        first = self.first_text.get(session, ended)
        return Answer(scenario, first - started, ended - started, result.get("status", "?"))

    def close(self) -> None:
        self.client.close()


def _model_cache(root: Path, model: Path) -> Path:
    """A cache of its own holding the pulled model (linked, with its verified stamp) and the
    thread counts measured for it on this machine, if any."""
    cache = root / "models"
    cache.mkdir(parents=True)
    (cache / model.name).symlink_to(model)
    stamp = model.with_name(f".{model.name}.verified")
    if stamp.exists():
        shutil.copy(stamp, cache / stamp.name)
    measured = model.with_name("threads.json")
    if measured.exists():
        shutil.copy(measured, cache / measured.name)
    return cache


def _repo(root: Path) -> Path:
    root.mkdir(parents=True)
    for name, text in FILES.items():
        (root / name).write_text(text)
    identity = ["-c", "user.email=bench@smol.invalid", "-c", "user.name=bench"]
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", *identity, "commit", "-qm", "bench"], cwd=root, check=True)
    return root


def _pulled(name: str) -> Path:
    """The pinned model `name` from the user's cache (pulled when missing, as .ci/model.sh)."""
    pulled = subprocess.run(
        [sys.executable, "-m", "smol_instruments", "model", "pull", name],
        capture_output=True,
        text=True,
        timeout=3600,
    )
    if pulled.returncode != 0:
        raise RuntimeError(f"model {name} unavailable: {pulled.stderr.strip()[-300:]}")
    return Path(pulled.stdout.strip())


def _floors(answer: Answer, cached_prefix: int) -> None:
    """Fill in the answer's floors from its requests (see the module's docstring)."""
    first, *rest = answer.tasks
    to_read = max(0, first.prompt_tokens - cached_prefix)
    answer.unavoidable = to_read + sum(t.evaluated for t in rest)
    read_first = to_read / first.prompt_speed if first.prompt_speed else 0.0
    answer.floor_first_s = read_first + first.ms_per_written / 1000
    answer.floor_answer_s = (
        read_first
        + sum(t.prompt_ms for t in rest) / 1000
        + sum(t.write_ms for t in answer.tasks) / 1000
    )


def first_answer(quick: bool = False) -> list[Figure]:
    from smol_instruments.llm.catalog import DEFAULT_MODEL, SMALL_MODEL
    from smol_instruments.llm.embedded import xllamacpp_available

    if not xllamacpp_available():
        raise RuntimeError("xllamacpp is not installed: no embedded model to time")
    name = SMALL_MODEL if quick else DEFAULT_MODEL
    model = _pulled(name)
    answers: list[Answer] = []
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="smol-bench-first-") as tmp:
        root = Path(tmp)
        cache = _model_cache(root, model)
        base = {
            k: v for k, v in os.environ.items() if not k.startswith(("MODEL_", "PHOENIX_", "LOG_"))
        }
        base.update(
            {
                "MODEL_BACKEND": "embedded",
                "MODEL_FILE": name,
                "MODEL_CACHE_DIR": str(cache),
                "MODEL_MAX_TOKENS": "96",
                "MODEL_TIMEOUT_S": "1800",
                "AGENT_MAX_STEPS": "2",
                "PHOENIX_ENABLED": "false",
                "SANDBOX_BACKEND": "none",
                "LOG_LEVEL": "INFO",
            }
        )

        def daemon(label: str, warm_up: bool) -> tuple[Daemon, Path]:
            state = root / f"state-{label}"
            env = base | {"MODEL_WARM_UP": str(warm_up).lower(), "XDG_STATE_HOME": str(state)}
            return Daemon(
                _repo(root / f"repo-{label}"), env
            ), state / "smol-instruments" / "llama-server.log"

        if not quick:
            cold, log = daemon("cold", warm_up=False)
            try:
                answer = cold.ask("cold", QUESTIONS[0][1], "cold-1")
            finally:
                cold.close()
            answer.tasks = read_tasks(log)
            _floors(answer, cached_prefix=0)
            answers.append(answer)

        opened, log = daemon("first", warm_up=True)
        try:
            started = time.perf_counter()
            opened.warmed.wait(1800)
            notes.append(
                f"warm-up {time.perf_counter() - started:.0f} s after opening "
                f"({opened.warm_message or 'no end reported'})"
            )
            warm_tasks = read_tasks(log)
            offset = log.stat().st_size
            first = opened.ask("first", QUESTIONS[0][1], "first-1")
            first.tasks = read_tasks(log, offset)
            offset = log.stat().st_size
            later = opened.ask("later", QUESTIONS[1][1], "later-1")
            later.tasks = read_tasks(log, offset)
        finally:
            opened.close()
        warm = max(warm_tasks, key=lambda t: t.evaluated)
        for answer in (first, later):
            _floors(answer, cached_prefix=warm.prompt_tokens)
        answers += [first, later]
        notes.append(
            f"instructions: {warm.prompt_tokens} tokens read at {warm.prompt_speed:.1f} tokens/s"
        )

        if not quick:
            again, log = daemon("restarted", warm_up=True)  # same cache: the saved prefix
            try:
                started = time.perf_counter()
                again.warmed.wait(1800)
                restored_s = time.perf_counter() - started
                offset = log.stat().st_size
                restarted = again.ask("restarted", QUESTIONS[0][1], "restarted-1")
                restarted.tasks = read_tasks(log, offset)
            finally:
                again.close()
            _floors(restarted, cached_prefix=warm.prompt_tokens)
            answers.append(restarted)
            notes.append(
                f"restarted: ready {restored_s:.0f} s after opening ({again.warm_message})"
            )

    return _figures(name, answers, notes)


def _figures(model: str, answers: list[Answer], notes: list[str]) -> list[Figure]:
    by = {a.scenario: a for a in answers}
    shown = "; ".join(
        f"{a.scenario}: {a.first_word_s:.1f} s / {a.answer_s:.1f} s (floor {a.floor_first_s:.1f} / "
        f"{a.floor_answer_s:.1f}; {a.unavoidable} tokens to read, "
        f"{sum(t.evaluated for t in a.tasks)} read, {len(a.tasks)} call(s), {a.status})"
        for a in answers
    )
    figures = []
    floors = {
        "first_word": "the floor (tokens to read / prompt speed + 1 token)",
        "answer": "the floor (tokens to read / prompt speed + tokens written / generation speed)",
    }
    for a in answers:
        later = a.scenario == "later"
        for what, floor in floors.items():
            value, baseline = (
                (a.first_word_s, a.floor_first_s)
                if what == "first_word"
                else (a.answer_s, a.floor_answer_s)
            )
            figures.append(
                Figure(
                    f"{what}_{a.scenario}",
                    f"{model}: {what.replace('_', ' ')}, {a.scenario} question",
                    value,
                    "s",
                    baseline,
                    1.2 if later else None,
                    "ratio" if later else "report",
                    note=f"baseline: {floor}"
                    + (f"; {a.to_dict()}" if what == "first_word" else ""),
                )
            )
    if "first" in by and "later" in by:
        figures.append(
            Figure(
                "first_vs_later",
                f"{model}: first question after opening vs a later one (first word)",
                by["first"].first_word_s,
                "s",
                by["later"].first_word_s,
                1.5,
                "ratio",
                note="; ".join([*notes, shown]),
            )
        )
    return figures
