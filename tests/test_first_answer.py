"""The first answer near the machine's floor, against the real embedded model (0.5B, cached).

The fixed start of every conversation (the system prompt) is read once: when the daemon opens
a folder, before the first question, and then kept in a file the next server restores; how far
the model has read a prompt is shown while it reads; the server's thread counts come from a
measurement. Everything is judged by effect: llama.cpp's own counts of the tokens it had to
read (`timings.prompt_n`, `cache_n`), the file on disk, what the client and the terminal show.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from smol_instruments.base.config import load_settings
from smol_instruments.llm import prefix, threads
from smol_instruments.llm.catalog import SMALL_MODEL, find_model
from smol_instruments.llm.embedded import EmbeddedServer, xllamacpp_available
from smol_instruments.llm.resolve import ModelRuntime, embedded_model, embedded_server

pytestmark = [
    pytest.mark.timeout(900),
    pytest.mark.skipif(not xllamacpp_available(), reason="xllamacpp has no wheel here"),
]

#: A prefix of a few hundred tokens: long enough for several progress reports (128 a batch).
SYSTEM = (
    "You are a coding agent working in a git repository. Answer in plain sentences. "
    "Tools: read_file(path: str), rg_search(pattern: str), list_files(pattern: str). "
) * 12
MESSAGES = [{"role": "system", "content": SYSTEM}]


@pytest.fixture
def model_cache(tmp_path: Path, small_model: Path) -> Path:
    """A model cache of this test's own (the saved prefixes and measurements go there), holding
    the user's verified 0.5B model by a link."""
    cache = tmp_path / "models"
    cache.mkdir()
    (cache / small_model.name).symlink_to(small_model)
    stamp = small_model.with_name(f".{small_model.name}.verified")
    shutil.copy(stamp, cache / stamp.name)
    return cache


def _settings(cache: Path, **extra: object):  # type: ignore[no-untyped-def]
    return load_settings(
        None,
        model_backend="embedded",
        model_file=SMALL_MODEL,
        model_cache_dir=str(cache),
        model_threads=1,
        phoenix_enabled=False,
        sandbox_backend="none",
        **extra,
    )


@pytest.fixture
def server(model_cache: Path) -> Iterator[EmbeddedServer]:
    settings = _settings(model_cache)
    running = embedded_server(settings, embedded_model(settings), port=0)
    running.start()
    yield running
    running.stop()


def _ask(server: EmbeddedServer, question: str) -> dict[str, int]:
    """llama.cpp's timings of a question that follows MESSAGES."""
    answer = server.post(
        "/v1/chat/completions",
        {
            "messages": [*MESSAGES, {"role": "user", "content": question}],
            "max_tokens": 4,
            "temperature": 0,
        },
    )
    return answer["timings"]


def test_the_prefix_is_read_once_then_only_the_question_is(server: EmbeddedServer) -> None:
    reports: list[tuple[int, int]] = []
    warmed = prefix.warm(
        server, MESSAGES, on_progress=lambda done, total: reports.append((done, total))
    )
    assert not warmed.restored and warmed.evaluated >= warmed.tokens - 2 > 300
    # Progress while it read: a report per batch of 128 tokens, counting up to all of them.
    assert len(reports) >= 3, reports
    assert [done for done, _ in reports] == sorted(done for done, _ in reports)
    assert reports[-1] == (warmed.tokens, warmed.tokens)
    # It is kept in a file named after the model, the context and the messages.
    assert server.slot_dir is not None
    (saved,) = server.slot_dir.glob("prefix-*.bin")
    assert saved.name == f"prefix-{prefix.prefix_key(server, MESSAGES)}.bin"
    # The question after it reads itself only: the prefix comes from the server's cache.
    timings = _ask(server, "What does add() return?")
    assert timings["cache_n"] >= warmed.tokens - 8
    assert timings["prompt_n"] < 40


def test_a_new_server_restores_the_prefix_instead_of_reading_it(model_cache: Path) -> None:
    settings = _settings(model_cache)
    first = embedded_server(settings, embedded_model(settings), port=0)
    first.start()
    try:
        read = prefix.warm(first, MESSAGES)
    finally:
        first.stop()
    assert read.evaluated > 300 and read.saved
    second = embedded_server(settings, embedded_model(settings), port=0)
    second.start()
    try:
        restored = prefix.warm(second, MESSAGES)
        assert restored.restored and restored.evaluated < 16
        assert _ask(second, "What does sub() return?")["cache_n"] >= read.tokens - 8
    finally:
        second.stop()


def test_a_prefix_file_that_does_not_restore_is_read_again(server: EmbeddedServer) -> None:
    assert server.slot_dir is not None
    broken = server.slot_dir / f"prefix-{prefix.prefix_key(server, MESSAGES)}.bin"
    broken.write_bytes(b"not a llama.cpp slot file" * 100)
    warmed = prefix.warm(server, MESSAGES)
    assert not warmed.restored and warmed.evaluated > 300
    assert warmed.saved and broken.stat().st_size > 100_000  # replaced by a good one
    assert _ask(server, "What does add() return?")["prompt_n"] < 40


def test_thread_counts_are_measured_and_the_fastest_kept(model_cache: Path) -> None:
    settings = _settings(model_cache)
    choice = embedded_model(settings)
    assert threads.choose(0, model_cache, choice.path).source.startswith("not measured")
    measurement = threads.measure(
        lambda count: embedded_server(settings, choice, port=0, thread_counts=(count, count)),
        [1],
        model_path=choice.path,
    )
    (speed,) = measurement.speeds
    assert speed.threads == 1 and speed.prompt > 0 and speed.generation > 0
    threads.save(model_cache, measurement)
    chosen = threads.choose(0, model_cache, choice.path)
    assert (chosen.threads, chosen.threads_batch) == (1, 1)
    assert chosen.source.startswith("measured")
    # MODEL_THREADS always wins; a measurement of another machine size is not used.
    assert threads.choose(3, model_cache, choice.path).threads == 3
    data = json.loads(threads.store_path(model_cache).read_text())
    data[threads.model_key(choice.path)]["cpus"] += 1
    threads.store_path(model_cache).write_text(json.dumps(data))
    assert threads.choose(0, model_cache, choice.path).source.startswith("not measured")


def test_the_fastest_count_is_chosen_for_reading_and_for_writing_apart() -> None:
    measurement = threads.Measurement(
        model="m",
        cpus=threads.usable_cpus(),
        measured_at=time.time(),
        load=0.0,
        speeds=[threads.Speed(1, 20.0, 9.0), threads.Speed(2, 35.0, 4.0)],
    )
    assert measurement.best() == (1, 2)  # write with 1 thread, read prompts with 2
    measurement.measured_at -= threads.MAX_AGE_S + 1
    assert not measurement.fresh()


def test_a_run_waits_for_the_warm_up_and_hears_how_far_it_got(model_cache: Path) -> None:
    """A question asked while the model reads its instructions is told so, with the percent,
    and starts once that is done (no second server, no second reading)."""
    settings = _settings(model_cache)
    runtime = ModelRuntime()
    try:
        warming = asyncio.new_event_loop()
        try:
            task = warming.run_in_executor(None, lambda: runtime.warm(settings, lambda: MESSAGES))
            statuses: list[tuple[str, int | None]] = []
            deadline = time.monotonic() + 120
            while runtime._preparing is None and time.monotonic() < deadline:
                time.sleep(0.05)
            endpoint = runtime.endpoint(settings, on_status=lambda m, p: statuses.append((m, p)))
            warmed = warming.run_until_complete(task)
        finally:
            warming.close()
        assert warmed is not None and endpoint.backend == "embedded"
        assert any("reading its instructions" in message for message, _ in statuses), statuses
        percents = [p for m, p in statuses if "reading" in m and p is not None]
        assert percents and percents[-1] == 100
        assert runtime.server is not None
        assert _ask(runtime.server, "What does add() return?")["prompt_n"] < 40
    finally:
        runtime.close()


def test_a_missing_model_file_is_not_fetched_by_the_warm_up(tmp_path: Path) -> None:
    settings = _settings(tmp_path / "empty")
    runtime = ModelRuntime()
    try:
        assert runtime.warm(settings, lambda: MESSAGES) is None
        assert runtime.server is None
        assert not (tmp_path / "empty" / find_model(settings, SMALL_MODEL).file).exists()
    finally:
        runtime.close()


def test_the_command_line_shows_the_reading_and_restores_it_next_time(
    repo: Path, model_cache: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MODEL_", "PHOENIX_"))}
    env.update(
        {
            "MODEL_BACKEND": "embedded",
            "MODEL_FILE": SMALL_MODEL,
            "MODEL_CACHE_DIR": str(model_cache),
            "MODEL_THREADS": "1",
            "MODEL_MAX_TOKENS": "24",
            "AGENT_MAX_STEPS": "1",
            "PHOENIX_ENABLED": "false",
            "SANDBOX_BACKEND": "none",
            "LOG_LEVEL": "INFO",
        }
    )

    def run(question: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "smol_instruments", "run", "--repo", str(repo), question],
            capture_output=True,
            text=True,
            env=env,
            timeout=800,
            stdin=subprocess.DEVNULL,
        )

    first = run("What does add() in app/calc.py return?")
    assert "Traceback" not in first.stderr, first.stderr
    assert "the model is reading its instructions" in first.stderr
    # The question's own reading, shown once it starts; far fewer tokens than the instructions.
    (question,) = re.findall(r"… reading ([\d,]+) tokens", first.stderr)
    (instructions,) = set(re.findall(r"reading its instructions \(([\d,]+) tokens\)", first.stderr))
    assert int(question.replace(",", "")) < int(instructions.replace(",", "")) / 2
    second = run("What does sub() in app/calc.py return?")
    assert "restored from its file" in second.stderr, second.stderr


async def test_the_daemon_has_the_model_read_its_instructions_when_the_folder_opens(
    repo: Path, tmp_path: Path, model_cache: Path
) -> None:
    """While the user types, the daemon starts the model and has it read the start of every
    conversation (shown as work-done progress); the first question then reads itself only,
    and the chat shows that reading as it goes."""
    from lsprotocol import types
    from tests.support.lsp import Recorder, daemon_env, start_daemon

    from smol_instruments.lsp.protocol import to_plain

    settings = {
        "MODEL_BACKEND": "embedded",
        "MODEL_FILE": SMALL_MODEL,
        "MODEL_CACHE_DIR": str(model_cache),
        "MODEL_THREADS": "1",
        "MODEL_MAX_TOKENS": "48",
        "AGENT_MAX_STEPS": "1",
        "MODEL_TIMEOUT_S": "600",
    }
    recorder = Recorder()
    client = await start_daemon(repo, recorder, env=daemon_env(settings, tmp_path))

    def warm_up_ended() -> list[str]:
        return [
            report.message or ""
            for reports in client.progress_reports.values()
            for report in reports
            if isinstance(report, types.WorkDoneProgressEnd)
        ]

    try:
        deadline = time.monotonic() + 600
        while not warm_up_ended() and time.monotonic() < deadline:
            await asyncio.sleep(0.5)
        (ended,) = warm_up_ended()
        assert ended.startswith("the model is ready"), ended
        shown = [
            getattr(report, "message", None)
            for reports in client.progress_reports.values()
            for report in reports
        ]
        assert any("reading its instructions" in (m or "") for m in shown), shown
        assert list((model_cache / "slots").glob("prefix-*.bin"))

        result = to_plain(
            await client.protocol.send_request_async(
                "smol/chat", {"message": "What does add() in app/calc.py return?"}
            )
        )
        assert result["status"] in {"completed", "max_steps"}, result
        reading = [e for e in recorder.of("progress") if e["stage"] == "prompt"]
        assert reading, recorder.kinds()
        said = re.search(r"reading ([\d,]+) tokens", reading[0]["message"])
        assert said is not None, reading
        tokens = int(said[1].replace(",", ""))
        assert tokens < result["usage"]["promptTokens"] / 2
        percents = [e["percent"] for e in reading]
        assert percents == sorted(percents), percents
    finally:
        await client.shutdown_session()
