"""The figures of the benchmark; each measures our code and its baseline side by side."""

from __future__ import annotations

import itertools
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
    env.update(
        {
            "PHOENIX_ENABLED": "false",
            "SANDBOX_BACKEND": "none",
            "LOG_LEVEL": "WARNING",
            "MODEL_WARM_UP": "false",  # the scripted figures never start a local model
        }
    )
    env.update(extra)
    return env


def _scripted_settings(model: Any, **overrides: Any) -> Any:
    """Settings that point the agent at the scripted model, with nothing else switched on."""
    from smol_instruments.base.config import load_settings

    return load_settings(
        None,
        sandbox_backend="none",
        phoenix_enabled=False,
        model_id=model.model_id,
        model_api_base=model.base_url,
        model_api_key="x",
        **overrides,
    )


def _sample_repo(root: Path) -> Path:
    from tests.conftest import make_repo

    return make_repo(root)


# --- start-up and footprint ---------------------------------------------------------------


def daemon_startup(quick: bool = False) -> list[Figure]:
    import compileall

    import smol_instruments

    from .lsp_client import StdioClient

    # With bytecode, as an installed package has it (pip compiles a wheel's at install; the
    # baseline's pygls and lsprotocol have theirs): under PYTHONDONTWRITEBYTECODE an editable
    # checkout would otherwise be compiled at every start, and that is what would be timed.
    compileall.compile_dir(Path(smol_instruments.__file__).parent, quiet=1)
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
            note="baseline: a bare pygls server; both with their bytecode compiled",
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
    from smol_instruments.base.config import load_settings
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

    from smol_instruments.agent.pipeline import InstrumentedTool
    from smol_instruments.agent.state import AgentState
    from smol_instruments.base.config import load_settings
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

    from smol_instruments.agent.prompts import default_prompt_templates
    from smol_instruments.agent.session import AgentSession
    from smol_instruments.base.config import load_settings

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


# --- with the scripted model ---------------------------------------------------------------


def _big_repo(root: Path, extra_functions: int = 120) -> Path:
    """The sample project with a long app/calc.py, so that output truncation matters."""
    from tests.conftest import SAMPLE_FILES, make_repo

    files = dict(SAMPLE_FILES)
    filler = "".join(
        f'\n\ndef helper_{i}(values):\n    """Helper number {i}."""\n    total = 0\n'
        f"    for value in values:\n        total += value * {i}\n    return total\n"
        for i in range(extra_functions)
    )
    files["app/calc.py"] = files["app/calc.py"] + filler
    return make_repo(root, files)


def memory_over_sessions(quick: bool = False) -> list[Figure]:
    from tests.support import transcripts
    from tests.support.scripted_model import ScriptedModel

    from .lsp_client import StdioClient

    sessions = 6 if quick else 50
    turns = [t for _ in range(sessions) for t in transcripts.final_answer_only("ok")]
    with tempfile.TemporaryDirectory() as tmp, ScriptedModel(turns) as model:
        repo = _sample_repo(Path(tmp) / "repo")
        env = _env(LOG_FILE=str(Path(tmp) / "daemon.log"), **model.env())
        client = StdioClient([sys.executable, "-m", "smol_instruments", "serve"], env=env)
        client.initialize(repo)
        rss = []
        for i in range(sessions):
            result = client.request("smol/chat", {"message": f"question {i}"})
            assert result["status"] == "completed", result
            rss.append(client.rss_mb())
        client.close()
    return [
        Figure(
            "memory_sessions",
            f"daemon memory after {sessions} chat sessions vs after the first",
            rss[-1],
            "MB",
            rss[0],
            1.10,
            "ratio",
            note=f"RSS {rss[0]:.0f} MB after the first session (agent loaded), {rss[-1]:.0f} MB after the last",
        ),
    ]


def step_overhead(quick: bool = False) -> list[Figure]:
    import litellm
    from tests.support import transcripts
    from tests.support.scripted_model import ScriptedModel

    from smol_instruments.agent.session import AgentSession

    steps = 6 if quick else 24
    turns = [*transcripts.endless_steps(steps), '```python\nfinal_answer("done")\n```']
    with tempfile.TemporaryDirectory() as tmp, ScriptedModel(turns) as model:
        repo = _sample_repo(Path(tmp) / "repo")
        settings = _scripted_settings(model, agent_max_steps=steps + 2)
        session = AgentSession(repo, settings)
        marks: list[float] = []
        session.emitter.sink = lambda e: (
            marks.append(time.perf_counter()) if e.kind == "step" else None
        )
        session.run("read everything")
        marks.append(time.perf_counter())
        session.close()
        step_times = [b - a for a, b in itertools.pairwise(marks)][1:-1]  # skip warm-up, final
        # Baseline: the same server, the same messages, bare LiteLLM streaming completions.
        requests = model.requests[1 : 1 + len(step_times)]
        model.extend([r.reply or "x" for r in requests])
        bare = []
        for request in requests:
            start = time.perf_counter()
            for _ in litellm.completion(
                model=model.model_id,
                api_base=model.base_url,
                api_key="x",
                messages=request.messages,
                stream=True,
                stream_options={"include_usage": True},
                stop=request.stop,
            ):
                pass
            bare.append(time.perf_counter() - start)
    overhead = statistics.median(step_times) - statistics.median(bare)
    return [
        Figure(
            "step_overhead",
            "agent overhead per step (model time excluded)",
            overhead * 1000,
            "ms",
            target=25.0,
            note=f"median step {statistics.median(step_times) * 1000:.1f} ms vs bare LiteLLM completion "
            f"{statistics.median(bare) * 1000:.1f} ms against the same server ({len(step_times)} steps)",
        ),
    ]


def first_delta_latency(quick: bool = False) -> list[Figure]:
    from tests.support.scripted_model import ScriptedModel, Turn

    from .lsp_client import StdioClient

    runs = 5 if quick else 30
    turns = [Turn('```python\nfinal_answer("hi")\n```', chunk_chars=4) for _ in range(runs + 1)]
    latencies = []
    with tempfile.TemporaryDirectory() as tmp, ScriptedModel(turns) as model:
        repo = _sample_repo(Path(tmp) / "repo")
        env = _env(LOG_FILE=str(Path(tmp) / "daemon.log"), **model.env())
        client = StdioClient([sys.executable, "-m", "smol_instruments", "serve"], env=env)
        client.initialize(repo)
        first_text: list[float] = []
        client.on_notification = lambda now, m: (
            first_text.append(time.time())
            if (m.get("method") == "smol/event" and m["params"]["kind"] == "text")
            else None
        )
        client.request("smol/chat", {"message": "warm up"})
        for i in range(runs):
            first_text.clear()
            client.request("smol/chat", {"message": f"hello {i}"})
            sent = model.requests[-1].time  # the server starts streaming as the request arrives
            latencies.append(first_text[0] - sent)
        client.close()
    latencies.sort()
    p95 = latencies[max(0, int(len(latencies) * 0.95) - 1)]
    return [
        Figure(
            "first_delta",
            "first streamed text delta reaching the LSP client (p95)",
            p95 * 1000,
            "ms",
            target=30.0,
            note=f"median {statistics.median(latencies) * 1000:.1f} ms over {runs} chats; from the request "
            "reaching the model server (which streams at once) to the smol/event at the client",
        ),
    ]


def tokens_per_task(quick: bool = False) -> list[Figure]:
    from smolagents import CodeAgent
    from tests.support import transcripts
    from tests.support.scripted_model import ScriptedModel

    from smol_instruments.agent.model import build_model
    from smol_instruments.agent.prompts import default_prompt_templates
    from smol_instruments.agent.session import AgentSession
    from smol_instruments.tools import build_tools
    from smol_instruments.tools.base import ToolContext

    def sent(model: ScriptedModel) -> int:
        return sum(count_tokens(r.messages) for r in model.requests)

    with tempfile.TemporaryDirectory() as tmp:
        repo = _big_repo(Path(tmp) / "repo")
        with ScriptedModel(transcripts.five_step_fix(check=False)) as model:
            settings = _scripted_settings(model)
            session = AgentSession(repo, settings)
            outcome = session.run("fix add() in app/calc.py")
            # the fix is proposed in all five steps; with no sandbox to run the tests it is told
            # unverified (agent/outcome.py `verified`), which is not what this figure measures
            assert outcome.steps == 5 and "a + b" in outcome.answer, outcome
            session.close()
            ours = sent(model)
        with ScriptedModel(transcripts.five_step_fix(check=False)) as model:
            untruncated = settings.model_copy(
                update={
                    "model_api_base": model.base_url,
                    "truncation_max_chars": 10**7,
                    "truncation_max_lines": 10**6,
                    "truncation_max_list_items": 10**6,
                    "validation_max_line_range": 10**6,
                }
            )
            ctx = ToolContext.create(repo, untruncated)
            agent = CodeAgent(
                tools=list(build_tools(ctx).values()),
                model=build_model(untruncated),
                code_block_tags="markdown",
                prompt_templates=default_prompt_templates(),  # type: ignore[arg-type]
                verbosity_level=0,
                max_steps=8,
            )
            agent.run("fix add() in app/calc.py")
            baseline = sent(model)
    return [
        Figure(
            "task_tokens",
            "tokens sent over a fixed 5-step scripted task",
            ours,
            "tok",
            baseline,
            0.5,
            "ratio",
            note="baseline: the same task with smolagents' default prompt and untruncated tool output; "
            f"tokenizer {TOKENIZER}",
        ),
    ]


# --- sandbox ------------------------------------------------------------------------------


def sandbox_speed(quick: bool = False) -> list[Figure]:
    from smol_instruments.base.config import load_settings
    from smol_instruments.patches.diff import unified_diff
    from smol_instruments.sandbox.docker import DockerSandbox, docker_client

    client = docker_client(timeout=30)  # raises SandboxUnavailable with the fix when absent
    rounds = 3 if quick else 10
    with tempfile.TemporaryDirectory() as tmp:
        repo = _sample_repo(Path(tmp) / "repo")
        text = (repo / "app/calc.py").read_text()
        diff = unified_diff("app/calc.py", text, text.replace("return a - b", "return a + b"))
        settings = load_settings(None, sandbox_backend="docker")
        cold = []
        for _ in range(2 if quick else 3):
            start = time.perf_counter()
            sandbox = DockerSandbox(settings, repo, client=client)
            assert sandbox.validate(diff).applies
            cold.append(time.perf_counter() - start)
            sandbox.close()
        sandbox = DockerSandbox(settings, repo, client=client)
        sandbox.validate(diff)

        def warm() -> float:
            start = time.perf_counter()
            assert sandbox.validate(diff).applies
            return time.perf_counter() - start

        def host() -> float:
            start = time.perf_counter()
            subprocess.run(
                ["git", "apply", "--check", "-"], input=diff.encode(), cwd=repo, check=True
            )
            return time.perf_counter() - start

        value, baseline = _median_alternating(warm, host, rounds)
        sandbox.close()
    return [
        Figure(
            "sandbox_warm",
            "warm Docker patch validation, small repository, no check command",
            value,
            "s",
            baseline,
            0.6,
            "value",
            note="baseline: host `git apply --check` (ratio reported)",
        ),
        Figure(
            "sandbox_cold",
            "cold sandbox start (container start + first validation)",
            statistics.median(cold),
            "s",
            target=2.0,
        ),
    ]


def policy_speed(quick: bool = False) -> list[Figure]:
    from .policy import policy_speed as measure  # it uses this module's helpers

    return measure(quick)


FIGURES: list[Measure] = [
    Measure("startup", "daemon initialize and idle memory", daemon_startup),
    Measure("prompt_tokens", "system prompt tokens", system_prompt_tokens),
    Measure("rg_search", "rg_search speed", rg_search_speed),
    Measure("instrumentation", "instrumentation overhead", instrumentation_overhead),
    Measure("memory_sessions", "memory over many sessions", memory_over_sessions),
    Measure("step_overhead", "agent overhead per step", step_overhead),
    Measure("first_delta", "first text delta latency", first_delta_latency),
    Measure("task_tokens", "tokens over a fixed task", tokens_per_task),
    Measure("sandbox", "Docker sandbox validation", sandbox_speed),
    Measure("policy", "command policy speed against the hand-written parser", policy_speed),
]


def _containment(quick: bool = False) -> list[Figure]:
    from .containment import containment_overhead

    return containment_overhead(quick)


def _validation(quick: bool = False) -> list[Figure]:
    from .validation import validation_overhead

    return validation_overhead(quick)


FIGURES.append(Measure("containment", "command containment overhead", _containment))
FIGURES.append(Measure("validation", "local patch validation, views vs copies", _validation))


def _host_files(quick: bool = False) -> list[Figure]:
    from .hostfs import host_file_operations

    return host_file_operations(quick)


FIGURES.append(Measure("hostfs", "link-safe host file operations", _host_files))


def _framing(quick: bool = False) -> list[Figure]:
    from .framing import framing_overhead

    return framing_overhead(quick)


FIGURES.append(Measure("framing", "the daemon's input framing", _framing))


def _first_answer(quick: bool = False) -> list[Figure]:
    from .first import first_answer

    return first_answer(quick)


FIGURES.append(Measure("first_answer", "the first answer against the floor", _first_answer))


def _stream_watch(quick: bool = False) -> list[Figure]:
    from .streaming import stream_watch

    return stream_watch(quick)


FIGURES.append(Measure("stream_watch", "watching a streamed reply for repeats", _stream_watch))
