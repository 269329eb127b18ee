"""The embedded model as a user meets it: `smol-instruments run` and `chat` with
MODEL_BACKEND=embedded and the real 0.5B model, and every bad input on the way, each one clear
line with nothing lost. The model file comes from the user's cache (`model pull`, quick when
cached); only what a real model makes deterministic is asserted."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from smol_instruments.base.config import Settings
from smol_instruments.llm.catalog import SMALL_MODEL
from smol_instruments.llm.embedded import xllamacpp_available

pytestmark = [
    pytest.mark.timeout(900),
    pytest.mark.skipif(not xllamacpp_available(), reason="xllamacpp has no wheel here"),
]


def base_env(**extra: str) -> dict[str, str]:
    names = {name.upper() for name in Settings.model_fields}
    env = {k: v for k, v in os.environ.items() if k.upper() not in names}
    env.update(
        {
            "PHOENIX_ENABLED": "false",
            "SANDBOX_BACKEND": "none",
            "MODEL_BACKEND": "embedded",
            "MODEL_FILE": SMALL_MODEL,
            "MODEL_MAX_TOKENS": "96",
            "AGENT_MAX_STEPS": "2",
            "MODEL_TIMEOUT_S": "600",
            "MODEL_THREADS": "1",
            "LOG_LEVEL": "WARNING",
        }
    )
    env.update(extra)
    return env


def smol(
    repo: Path, *args: str, env: dict[str, str], timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "smol_instruments", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=repo,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.startswith("smol-instruments: ")]
    lines = [line for line in lines if not line.rstrip().endswith("...")]  # status lines
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


def test_missing_model_file_says_how_to_get_one(repo: Path, tmp_path: Path) -> None:
    missing = smol(repo, "run", "hi", env=base_env(MODEL_FILE=str(tmp_path / "nope.gguf")))
    assert missing.returncode == 1
    line = error_line(missing.stderr)
    assert "nope.gguf not found" in line and "smol-instruments model pull" in line
    empty_cache = base_env(MODEL_CACHE_DIR=str(tmp_path / "empty"), MODEL_AUTO_PULL="false")
    not_pulled = smol(repo, "run", "hi", env=empty_cache)
    assert not_pulled.returncode == 1
    assert f"smol-instruments model pull {SMALL_MODEL}" in error_line(not_pulled.stderr)


def test_corrupt_model_files_are_refused_in_one_line(repo: Path, tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.gguf"
    garbage.write_bytes(b"GGUF" + os.urandom(100_000))
    unloadable = smol(repo, "run", "hi", env=base_env(MODEL_FILE=str(garbage)))
    assert unloadable.returncode == 1
    line = error_line(unloadable.stderr)
    assert "llama.cpp could not load" in line and "garbage.gguf" in line and "fix:" in line
    # a version llama.cpp cannot read can fail its init before it logs a word (seen once in
    # ten runs of random bytes): the file's header says it is no model
    unknown = tmp_path / "unknown.gguf"
    unknown.write_bytes(b"GGUF" + (99).to_bytes(4, "little") + os.urandom(100_000))
    refused = smol(repo, "run", "hi", env=base_env(MODEL_FILE=str(unknown)))
    assert refused.returncode == 1
    assert "llama.cpp could not load" in error_line(refused.stderr)
    # A catalog model whose cached file changed is caught by its pinned hash before loading.
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf").write_bytes(b"\0" * 4096)
    changed = smol(repo, "run", "hi", env=base_env(MODEL_CACHE_DIR=str(cache)))
    assert changed.returncode == 1
    line = error_line(changed.stderr)
    assert "does not match the pinned SHA-256" in line
    assert f"smol-instruments model pull {SMALL_MODEL}" in line


def test_port_in_use_is_one_line(repo: Path, small_model: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = smol(repo, "run", "hi", env=base_env(MODEL_EMBEDDED_PORT=str(port)))
    assert result.returncode == 1
    line = error_line(result.stderr)
    assert f"port {port}" in line and "in use" in line and "MODEL_EMBEDDED_PORT=0" in line


def test_run_answers_with_the_real_small_model(repo: Path, small_model: Path) -> None:
    result = smol(repo, "run", "--json", "What does add() in app/calc.py return?", env=base_env())
    assert "Traceback" not in result.stderr
    outcome = json.loads(result.stdout)
    assert outcome["status"] in {"completed", "max_steps"}, result.stderr
    assert result.returncode == (0 if outcome["status"] == "completed" else 1)
    assert outcome["answer"].strip()
    assert outcome["usage"]["promptTokens"] > 0 and outcome["usage"]["completionTokens"] > 0
    assert "starting the local model" in result.stderr


def _serve_children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == pid and b"smol_instruments.llm.serve" in cmdline:
            found.append(int(entry.name))
    return found


class Reader:
    """Collects a pipe's lines on a thread so the test can wait for one."""

    def __init__(self, stream: object) -> None:
        self.lines: list[str] = []
        self._thread = threading.Thread(target=self._pump, args=(stream,), daemon=True)
        self._thread.start()

    def _pump(self, stream: object) -> None:
        for line in stream:  # type: ignore[attr-defined]
            self.lines.append(line)

    def wait_for(self, text: str, timeout: float, start: int = 0) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for index in range(start, len(self.lines)):
                if text in self.lines[index]:
                    return index
            time.sleep(0.1)
        raise AssertionError(f"{text!r} did not appear: {''.join(self.lines)[-3000:]}")


@pytest.fixture
def chat(repo: Path, small_model: Path) -> Iterator[tuple[subprocess.Popen[str], Reader, Reader]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "smol_instruments", "chat"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=base_env(AGENT_MAX_STEPS="1"),
        cwd=repo,
    )
    yield proc, Reader(proc.stdout), Reader(proc.stderr)
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def test_a_server_that_dies_mid_run_fails_the_run_and_the_next_run_restarts_it(
    chat: tuple[subprocess.Popen[str], Reader, Reader],
) -> None:
    proc, out, err = chat
    assert proc.stdin is not None
    # A question that names no code gets no context read for it, so the model has to look
    # (at least two calls): killing the server at step 1 hits the run in the middle.
    proc.stdin.write("Which files are in this repository, and what is each one for?\n")
    proc.stdin.flush()
    err.wait_for("── step 1", timeout=300)  # the model is answering now
    (server,) = _serve_children(proc.pid)
    os.kill(server, signal.SIGKILL)
    answer = out.wait_for("agent> ", timeout=300)
    failed = err.wait_for("the embedded model server stopped during the run", timeout=10)
    assert (
        "killed by SIGKILL" in err.lines[failed]
        and "the next run starts it again" in err.lines[failed]
    )
    assert "failed" in "".join(err.lines[failed:])
    # Nothing lost: the conversation goes on, and the next run starts a new server.
    proc.stdin.write("What does mul() in app/calc.py do?\n")
    proc.stdin.flush()
    restarted = err.wait_for("starting the local model", timeout=60, start=failed)
    out.wait_for("agent> ", timeout=400, start=answer + 1)
    assert restarted > failed
    proc.stdin.close()
    assert proc.wait(60) == 1  # a turn did not complete: chat says so in its exit status
    assert "Traceback" not in "".join(err.lines)


def test_the_server_dies_with_its_parent(
    chat: tuple[subprocess.Popen[str], Reader, Reader],
) -> None:
    proc, _, err = chat
    err.wait_for("chat in", timeout=300)  # the local model is up
    (server,) = _serve_children(proc.pid)
    proc.kill()  # SIGKILL: no clean-up code of ours runs
    proc.wait()
    deadline = time.monotonic() + 20
    while Path(f"/proc/{server}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    state = Path(f"/proc/{server}/stat")
    assert not state.exists() or state.read_text().rsplit(")", 1)[1].split()[0] == "Z"


async def test_the_daemon_starts_the_local_model_at_the_first_chat_and_stops_it(
    repo: Path, tmp_path: Path, small_model: Path
) -> None:
    """With MODEL_WARM_UP=false, opening the folder starts nothing; the first chat starts the
    server with work-done progress the editor shows; shutting the daemon down stops it.
    (The warm-up at open: tests/test_first_answer.py.)"""
    from tests.support.lsp import Recorder, daemon_env, start_daemon

    from smol_instruments.lsp.protocol import to_plain

    settings = {
        "MODEL_BACKEND": "embedded",
        "MODEL_FILE": SMALL_MODEL,
        "MODEL_MAX_TOKENS": "64",
        "AGENT_MAX_STEPS": "1",
        "MODEL_THREADS": "1",
        "MODEL_TIMEOUT_S": "600",
        "MODEL_WARM_UP": "false",
    }
    recorder = Recorder()
    client = await start_daemon(repo, recorder, env=daemon_env(settings, tmp_path))
    daemon = client._server.pid
    try:
        assert _serve_children(daemon) == []  # nothing started on the start-up path
        result = to_plain(
            await client.protocol.send_request_async(
                "smol/chat", {"message": "What does add() in app/calc.py do?"}
            )
        )
        assert result["status"] in {"completed", "max_steps"}
        assert result["answer"].strip() and result["usage"]["promptTokens"] > 0
        (server,) = _serve_children(daemon)
        messages = [
            getattr(report, "message", None)
            for reports in client.progress_reports.values()
            for report in reports
        ]
        assert "starting the local model" in messages
    finally:
        await client.shutdown_session()
    deadline = time.monotonic() + 20
    while Path(f"/proc/{server}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    state = Path(f"/proc/{server}/stat")
    assert not state.exists() or state.read_text().rsplit(")", 1)[1].split()[0] == "Z"
