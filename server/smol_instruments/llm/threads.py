"""How many CPU threads the embedded server uses: measured on this machine, with this model.

llama.cpp's threads wait on each other at every layer, so more threads are not always faster:
on a 2-core machine whose cores were busy with other work, two threads generated at 0.2-0.3
tokens/s where one gave 2, while on an idle one two threads read prompts nearly twice as fast.
So the count is measured, not fixed: `measure()` starts the server with each candidate count,
has it read a fixed prompt and write a few tokens, and keeps llama.cpp's own timings;
generation and the reading of prompts (llama.cpp's `--threads` and `--threads-batch`) each get
the count that was fastest for them.

A measurement is kept per model file and machine (`threads.json` beside the models) and used
while it is younger than `MAX_AGE_S` and the machine has as many CPUs as then;
`smol-instruments model threads --measure` (run by `.ci/up`) makes one. Without one the
server starts with half the CPUs, at least one. MODEL_THREADS (when not 0) always wins.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .catalog import ModelSetupError
from .embedded import EmbeddedServer, default_threads, usable_cpus

log = logging.getLogger(__name__)

#: A measurement older than this is measured again (the machine's load and programs change).
MAX_AGE_S = 7 * 24 * 3600
#: Tokens each candidate writes: a rate, and quick even where 2 threads write 0.2 tokens/s.
GENERATED_TOKENS = 8
#: The fixed text each candidate reads (about 250 tokens): code, as the agent's prompts are.
_PROMPT = (
    "def parse(text: str) -> list[int]:\n"
    '    """Split `text` on commas and return the numbers, skipping empty fields."""\n'
    "    values = []\n"
    "    for field in text.split(','):\n"
    "        field = field.strip()\n"
    "        if field:\n"
    "            values.append(int(field))\n"
    "    return values\n\n"
) * 3


@dataclass(frozen=True)
class Speed:
    """Tokens per second with one thread count, as llama.cpp timed them."""

    threads: int
    prompt: float
    generation: float


@dataclass(frozen=True)
class ThreadChoice:
    """The server's thread counts and where they come from, for people."""

    threads: int
    threads_batch: int
    source: str

    def describe(self) -> str:
        counts = f"{self.threads} thread" + ("s" if self.threads != 1 else "")
        if self.threads_batch != self.threads:
            counts += f" ({self.threads_batch} reading prompts)"
        return f"{counts}, {self.source}"


@dataclass
class Measurement:
    """What `measure()` found for one model on this machine."""

    model: str
    cpus: int
    measured_at: float
    load: float
    speeds: list[Speed] = field(default_factory=list)

    def best(self) -> tuple[int, int]:
        """(generation threads, prompt threads): the fastest count for each."""
        generation = max(self.speeds, key=lambda s: (s.generation, -s.threads))
        prompt = max(self.speeds, key=lambda s: (s.prompt, -s.threads))
        return generation.threads, prompt.threads

    def fresh(self, now: float | None = None) -> bool:
        age = (now if now is not None else time.time()) - self.measured_at
        return bool(self.speeds) and 0 <= age < MAX_AGE_S and self.cpus == usable_cpus()

    def describe(self) -> str:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(self.measured_at))
        rates = ", ".join(f"{s.threads}: {s.prompt:.1f} / {s.generation:.1f}" for s in self.speeds)
        return f"measured {when}, load {self.load:.1f} (threads: read / write tokens/s: {rates})"


def candidates(cpus: int | None = None) -> list[int]:
    """The counts worth trying: 1, 2, 4 ... up to the CPUs we may use, and that number."""
    cpus = cpus or usable_cpus()
    counts, n = [], 1
    while n < cpus:
        counts.append(n)
        n *= 2
    return [*counts, cpus]


def model_key(model_path: Path) -> str:
    """A model file by name and size (a new download of the same name is measured again)."""
    try:
        size = model_path.stat().st_size
    except OSError:
        size = 0
    return f"{model_path.name}:{size}"


def store_path(models_dir: Path) -> Path:
    return models_dir / "threads.json"


def load(models_dir: Path, model_path: Path) -> Measurement | None:
    """The stored measurement of this model file, if any (unreadable is none)."""
    try:
        data = json.loads(store_path(models_dir).read_text(encoding="utf-8"))
        entry = data[model_key(model_path)]
        speeds = [Speed(**speed) for speed in entry.pop("speeds")]
        return Measurement(**entry, speeds=speeds)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def save(models_dir: Path, measurement: Measurement) -> None:
    """Keep `measurement` beside the models' other entries (atomically)."""
    path = store_path(models_dir)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            data = {}
    except (OSError, ValueError):
        data = {}
    data[measurement.model] = asdict(measurement)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    partial.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    partial.replace(path)


def choose(configured: int, models_dir: Path, model_path: Path) -> ThreadChoice:
    """The thread counts to start the server with: MODEL_THREADS, the measurement, or half."""
    if configured:
        return ThreadChoice(configured, configured, "MODEL_THREADS")
    measurement = load(models_dir, model_path)
    if measurement is not None and measurement.fresh():
        threads, threads_batch = measurement.best()
        return ThreadChoice(threads, threads_batch, measurement.describe())
    half = default_threads()
    return ThreadChoice(
        half, half, "not measured yet: half the CPUs (`smol-instruments model threads --measure`)"
    )


def measure(
    server_for: Callable[[int], EmbeddedServer],
    counts: Iterable[int],
    *,
    model_path: Path,
    on_status: Callable[[str], None] = lambda _message: None,
) -> Measurement:
    """Start a server with each thread count (`server_for(n)`), time it, stop it."""
    measurement = Measurement(
        model=model_key(model_path),
        cpus=usable_cpus(),
        measured_at=time.time(),
        load=os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0,
    )
    for count in counts:
        on_status(f"timing {count} thread" + ("s" if count != 1 else ""))
        server = server_for(count)
        server.start()
        try:
            timings = _timed_completion(server)
        finally:
            server.stop()
        speed = Speed(
            count,
            round(float(timings.get("prompt_per_second") or 0.0), 2),
            round(float(timings.get("predicted_per_second") or 0.0), 2),
        )
        log.info("threads %d: prompt %.1f tokens/s, generation %.1f", *asdict(speed).values())
        measurement.speeds.append(speed)
    return measurement


def _timed_completion(server: EmbeddedServer) -> dict[str, Any]:
    """llama.cpp's timings of reading `_PROMPT` afresh and writing `GENERATED_TOKENS`."""
    body = {
        "prompt": _PROMPT,
        "n_predict": GENERATED_TOKENS,
        "cache_prompt": False,
        "ignore_eos": True,
        "temperature": 0,
    }
    try:
        timings = server.post("/completion", body).get("timings")
    except (OSError, ValueError) as exc:
        raise ModelSetupError(
            f"timing the embedded model server failed: {exc} (log: {server.log_file})",
            "see the log; `smol-instruments doctor` checks the setup",
        ) from None
    if not isinstance(timings, dict):
        raise ModelSetupError("the embedded model server reported no timings")
    return timings
