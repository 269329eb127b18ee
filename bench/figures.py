"""The figures of the benchmark; each measures our code and its baseline side by side."""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
TOKENIZER = "cl100k_base (bundled with LiteLLM's token_counter)"


@dataclass
class Figure:
    """One row: `value` against `baseline`; `target` applies to the ratio or to the value."""

    key: str
    name: str
    value: float | None
    unit: str
    baseline: float | None = None
    target: float | None = None
    target_on: str = "value"  # "value", "ratio" or "report" (no target)
    note: str = ""
    error: str | None = None

    @property
    def ratio(self) -> float | None:
        if self.value is None or not self.baseline:
            return None
        return self.value / self.baseline

    @property
    def passed(self) -> bool | None:
        if self.target is None or self.error:
            return None if not self.error else False
        measured = self.ratio if self.target_on == "ratio" else self.value
        return None if measured is None else measured <= self.target

    @property
    def target_text(self) -> str:
        if self.target is None:
            return "report"
        return f"≤ {self.target:g}{'×' if self.target_on == 'ratio' else ' ' + self.unit}"

    def shown(self, number: float | None) -> str:
        if number is None:
            return "—"
        return f"{number:.3g} {self.unit}" if self.unit else f"{number:.3g}"

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.update(ratio=self.ratio, passed=self.passed, target_text=self.target_text)
        return data

    @classmethod
    def failed(cls, key: str, name: str, exc: BaseException) -> Figure:
        return cls(
            key,
            name,
            None,
            "",
            error=f"{exc.__class__.__name__}: {exc}",
            note=f"not measured: {exc}",
        )


@dataclass
class Measure:
    key: str
    title: str
    run: Callable[..., list[Figure]]


def _median_alternating(
    a: Callable[[], float], b: Callable[[], float], rounds: int
) -> tuple[float, float]:
    """Median of `a` and of `b`, interleaved so that machine noise hits both alike."""
    xs, ys = [], []
    for _ in range(rounds):
        xs.append(a())
        ys.append(b())
    return statistics.median(xs), statistics.median(ys)


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update({"PHOENIX_ENABLED": "false", "SANDBOX_BACKEND": "none", "LOG_LEVEL": "WARNING"})
    env.update(extra)
    return env


def _sample_repo(root: Path) -> Path:
    from tests.conftest import make_repo

    return make_repo(root)


# --- start-up and footprint ---------------------------------------------------------------


def daemon_startup(quick: bool = False) -> list[Figure]:
    from .lsp_client import StdioClient

    with tempfile.TemporaryDirectory() as tmp:
        repo = _sample_repo(Path(tmp) / "repo")
        env = _env(LOG_FILE=str(Path(tmp) / "daemon.log"))
        rss: list[float] = []

        def ours() -> float:
            client = StdioClient([sys.executable, "-m", "smol_instruments", "serve"], env=env)
            elapsed = client.initialize(repo)
            time.sleep(0.2)
            rss.append(client.rss_mb())
            client.close()
            return elapsed

        def bare() -> float:
            client = StdioClient([sys.executable, str(REPO / "bench" / "bare_server.py")], env=env)
            elapsed = client.initialize(repo)
            client.close()
            return elapsed

        value, baseline = _median_alternating(ours, bare, 2 if quick else 7)
    return [
        Figure(
            "startup",
            "daemon initialize round trip (from process start)",
            value * 1000,
            "ms",
            baseline * 1000,
            1.5,
            "ratio",
            note="baseline: a bare pygls server",
        ),
        Figure(
            "idle_rss",
            "daemon idle memory (RSS) after initialize",
            statistics.median(rss),
            "MB",
            target=150.0,
        ),
    ]


# --- tools --------------------------------------------------------------------------------


def _generate_files(root: Path, count: int) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for i in range(count):
        folder = root / f"pkg{i // 500:03d}"
        if i % 500 == 0:
            folder.mkdir(parents=True, exist_ok=True)
        needle = "needle_function" if i % 997 == 0 else "haystack"
        (folder / f"mod{i:05d}.py").write_text(
            f"import os\n\n\ndef f{i}(x):\n    # {needle}\n    return x * {i}\n"
        )


def rg_search_speed(quick: bool = False) -> list[Figure]:
    from smol_instruments.config import load_settings
    from smol_instruments.tools.base import ToolContext
    from smol_instruments.tools.search import RgSearchTool

    count = 2000 if quick else 50_000
    rg = shutil.which("rg")
    if rg is None:
        raise RuntimeError("ripgrep is not installed")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "big"
        _generate_files(root, count)
        ctx = ToolContext.create(root, load_settings(None, sandbox_backend="none"))
        tool = RgSearchTool(ctx)
        tool(pattern="needle_function")  # warm the page cache for both

        def ours() -> float:
            start = time.perf_counter()
            result = tool(pattern="needle_function")
            assert "matches" in result, result
            return time.perf_counter() - start

        def bare() -> float:
            start = time.perf_counter()
            subprocess.run([rg, "needle_function"], cwd=root, capture_output=True, check=True)
            return time.perf_counter() - start

        value, baseline = _median_alternating(ours, bare, 3 if quick else 9)
    return [
        Figure(
            "rg_search",
            f"rg_search on a generated repository of {count:,} files",
            value * 1000,
            "ms",
            baseline * 1000,
            1.15,
            "ratio",
            note="baseline: bare `rg` with the same query",
        ),
    ]


def instrumentation_overhead(quick: bool = False) -> list[Figure]:
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from smol_instruments.config import load_settings
    from smol_instruments.core.instrumented import InstrumentedTool
    from smol_instruments.core.state import AgentState
    from smol_instruments.tools.base import ToolContext
    from smol_instruments.tools.files import ReadFileTool

    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(InMemorySpanExporter()))
    trace.set_tracer_provider(provider)
    calls = 200 if quick else 2000
    with tempfile.TemporaryDirectory() as tmp:
        repo = _sample_repo(Path(tmp) / "repo")
        settings = load_settings(None, sandbox_backend="none")
        ctx = ToolContext.create(repo, settings)
        bare = ReadFileTool(ctx)
        wrapped = InstrumentedTool(ReadFileTool(ctx), AgentState(max_repeats=10**9))
        lines = [1, 2, 3, 4, 5]  # vary the arguments so loop detection never trips

        def timed(tool: Any) -> float:
            samples = []
            for i in range(calls):
                start = time.perf_counter()
                tool(path="app/calc.py", start_line=lines[i % 5], end_line=6)
                samples.append(time.perf_counter() - start)
            return statistics.median(samples)

        timed(bare)
        timed(wrapped)
        ours, base = _median_alternating(lambda: timed(wrapped), lambda: timed(bare), 3)
    provider.shutdown()
    return [
        Figure(
            "instrumentation",
            "instrumentation overhead per tool call (tracing on)",
            (ours - base) * 1000,
            "ms",
            target=0.5,
            note=f"wrapped {ours * 1000:.3f} ms vs bare {base * 1000:.3f} ms (median of {calls} read_file calls)",
        ),
    ]


# --- prompt size --------------------------------------------------------------------------


def count_tokens(messages: list[dict[str, Any]] | str) -> int:
    from litellm import token_counter

    if isinstance(messages, str):
        return int(token_counter(model="gpt-4", text=messages))
    return int(token_counter(model="gpt-4", messages=messages))


def system_prompt_tokens(quick: bool = False) -> list[Figure]:
    from smolagents import CodeAgent

    from smol_instruments.config import load_settings
    from smol_instruments.core.agent import AgentSession
    from smol_instruments.core.prompts import default_prompt_templates

    with tempfile.TemporaryDirectory() as tmp:
        repo = _sample_repo(Path(tmp) / "repo")
        session = AgentSession(
            repo, load_settings(None, sandbox_backend="none", phoenix_enabled=False)
        )
        ours = session.agent.system_prompt
        default = CodeAgent(
            tools=[t for name, t in session.agent.tools.items() if name != "final_answer"],
            model=session.model,
            code_block_tags="markdown",
            prompt_templates=default_prompt_templates(),  # type: ignore[arg-type]
        ).system_prompt
        session.close()
    value, baseline = count_tokens(ours), count_tokens(default)
    return [
        Figure(
            "prompt_tokens",
            "system prompt tokens",
            value,
            "tok",
            baseline,
            0.35,
            "ratio",
            note=f"baseline: smolagents' default CodeAgent prompt, same tools; tokenizer {TOKENIZER}",
        ),
    ]


FIGURES: list[Measure] = [
    Measure("startup", "daemon initialize and idle memory", daemon_startup),
    Measure("prompt_tokens", "system prompt tokens", system_prompt_tokens),
    Measure("rg_search", "rg_search speed", rg_search_speed),
    Measure("instrumentation", "instrumentation overhead", instrumentation_overhead),
]
