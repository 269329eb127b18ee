"""The embedded model server: llama.cpp's own OpenAI-compatible server as a child process.

`EmbeddedServer.start()` runs `python -m smol_instruments.llm.serve` (see serve.py) on a free
127.0.0.1 port (or MODEL_EMBEDDED_PORT), with a random API key so no other local program or web
page can use it, and waits until `/health` says the model is loaded. The child dies with us:
it watches a pipe whose other end only we hold, and `stop()` (also run at exit) closes it.

Every way it can fail is one `ModelSetupError` line with its fix: the model file is missing,
llama.cpp cannot load it (corrupt, or not a GGUF file), the port is in use, it did not get
ready in time, xllamacpp is not installed. A server that dies later is noticed by
`failure()`, which says so in one line; the next `start()` starts a new one.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import json
import logging
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..base.process import child_env
from ..base.userdirs import default_log_file
from .catalog import ModelSetupError
from .serve import API_KEY_VARIABLE, DEFAULT_BATCH, EXIT_START_FAILED

log = logging.getLogger(__name__)

HOST = "127.0.0.1"
PORT_ATTEMPTS = 3
_RUNNING: weakref.WeakSet[EmbeddedServer] = weakref.WeakSet()


def xllamacpp_available() -> bool:
    """The xllamacpp wheel exists for this platform and is installed."""
    return importlib.util.find_spec("xllamacpp") is not None


def xllamacpp_missing_error() -> ModelSetupError:
    return ModelSetupError(
        "the embedded model server needs the xllamacpp package, which is not installed "
        f"(no wheel for this platform, or not installed in {sys.executable})",
        "`pip install xllamacpp` where it has a wheel, or run Ollama or another server and "
        "set MODEL_BACKEND=server with MODEL_ID and MODEL_API_BASE",
    )


def usable_cpus() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 2


def default_threads() -> int:
    """Half the CPUs we may use, at least one, until llm/threads.py has measured: llama.cpp's
    threads wait on each other, so on a busy machine fewer threads than cores generate faster
    (measured: 1 thread gave 8 tokens/s where 2 gave 1.4 on a loaded 2-core machine)."""
    return max(1, usable_cpus() // 2)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


def port_in_use(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((HOST, port))
        except OSError:
            return True
    return False


def server_log_file() -> Path:
    return default_log_file().with_name("llama-server.log")


class EmbeddedServer:
    """One llama.cpp server child serving one model file."""

    def __init__(
        self,
        model_path: Path,
        *,
        alias: str,
        threads: int,
        context: int,
        threads_batch: int | None = None,
        batch: int = DEFAULT_BATCH,
        slot_dir: Path | None = None,
        port: int = 0,
        start_timeout_s: float = 180.0,
        log_file: Path | None = None,
        api_key: str | None = None,
    ) -> None:
        self.model_path = model_path
        self.alias = alias
        self.threads = threads
        self.threads_batch = threads_batch or threads
        self.context = context
        self.batch = batch
        #: Where a prompt's evaluated state may be saved and restored (None: nowhere).
        self.slot_dir = slot_dir
        self.requested_port = port
        self.port = port
        self.start_timeout_s = start_timeout_s
        self.log_file = log_file or server_log_file()
        self.api_key = api_key if api_key is not None else secrets.token_urlsafe(24)
        self.process: subprocess.Popen[bytes] | None = None
        self.load_seconds: float | None = None
        self._stopping = False
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}/v1"

    @property
    def root_url(self) -> str:
        """The server itself (`/health`, `/slots`), not its OpenAI-compatible API."""
        return f"http://{HOST}:{self.port}"

    def describe(self) -> str:
        threads = f"{self.threads} thread" + ("s" if self.threads != 1 else "")
        if self.threads_batch != self.threads:
            threads += f" ({self.threads_batch} reading prompts)"
        return f"embedded llama.cpp on {HOST}:{self.port} ({self.model_path.name}, {threads}, context {self.context})"

    # --- lifecycle ----------------------------------------------------------------------

    def start(self, cancel: threading.Event | None = None) -> None:
        """Start the child and wait until the model is loaded; raise ModelSetupError if not."""
        with self._lock:
            if self.running():
                return
            if not xllamacpp_available():
                raise xllamacpp_missing_error()
            if not self.model_path.is_file():
                raise ModelSetupError(
                    f"model file {self.model_path} not found",
                    "run `smol-instruments model pull`, or set MODEL_FILE to a .gguf file you have",
                )
            if self.requested_port and port_in_use(self.requested_port):
                raise _port_error(self.requested_port)
            attempts = 1 if self.requested_port else PORT_ATTEMPTS
            for attempt in range(1, attempts + 1):
                self.port = self.requested_port or free_port()
                try:
                    self._launch_and_wait(cancel)
                    return
                except _PortTaken:
                    if attempt == attempts:
                        raise _port_error(self.port) from None
                    log.info(
                        "port %d was taken before the server bound it; trying another", self.port
                    )

    def _launch_and_wait(self, cancel: threading.Event | None) -> None:
        self.log_file.parent.mkdir(parents=True, exist_ok=True)
        if self.slot_dir is not None:
            self.slot_dir.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        with self.log_file.open("ab") as log_stream:
            offset = log_stream.tell()
            header = f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} {self.describe()}\n"
            log_stream.write(header.encode())
            log_stream.flush()
            self.process = subprocess.Popen(
                self._argv(),
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=log_stream,
                env=child_env("python", {API_KEY_VARIABLE: self.api_key}),
                start_new_session=True,  # a Ctrl-C in the terminal is ours to handle, not its
            )
        self._stopping = False
        _RUNNING.add(self)
        deadline = started + self.start_timeout_s
        while True:
            code = self.process.poll()
            if code is not None:
                raise self._start_failure(code, offset)
            if self._healthy():
                self.load_seconds = time.monotonic() - started
                log.info("%s ready in %.1f s", self.describe(), self.load_seconds)
                return
            if cancel is not None and cancel.is_set():
                self.stop()
                raise ModelSetupError("cancelled while the local model was starting")
            if time.monotonic() > deadline:
                self.stop()
                raise ModelSetupError(
                    f"the embedded model server did not load {self.model_path.name} within "
                    f"{self.start_timeout_s:g} s (log: {self.log_file})",
                    "raise MODEL_START_TIMEOUT_S, or use a smaller model (MODEL_FILE)",
                )
            time.sleep(0.1)

    def _argv(self) -> list[str]:
        slots = ["--slot-dir", str(self.slot_dir)] if self.slot_dir is not None else []
        return [
            sys.executable,
            "-m",
            "smol_instruments.llm.serve",
            "--model",
            str(self.model_path),
            "--port",
            str(self.port),
            "--host",
            HOST,
            "--threads",
            str(self.threads),
            "--threads-batch",
            str(self.threads_batch),
            "--ctx",
            str(self.context),
            "--batch",
            str(self.batch),
            "--alias",
            self.alias,
            "--watch-stdin",
            *slots,
        ]

    # --- talking to it ------------------------------------------------------------------

    def post(self, path: str, body: dict[str, Any], timeout: float = 600.0) -> dict[str, Any]:
        """POST JSON to the server (with its key) and return the JSON answer."""
        with self._open(path, body, timeout) as answer:
            result = json.load(answer)
        return result if isinstance(result, dict) else {"result": result}

    def stream(
        self, path: str, body: dict[str, Any], timeout: float = 600.0
    ) -> Iterator[dict[str, Any]]:
        """POST JSON with `stream: true` and yield each server-sent event's JSON object."""
        with self._open(path, {**body, "stream": True}, timeout) as answer:
            for raw in answer:
                line = raw.decode("utf-8", "replace").strip()
                if not line.startswith("data:"):
                    continue
                data = line[5:].strip()
                if data == "[DONE]":
                    return
                event = json.loads(data)
                if isinstance(event, dict):
                    yield event

    def _open(self, path: str, body: dict[str, Any], timeout: float) -> Any:
        request = urllib.request.Request(
            f"{self.root_url}{path}",
            data=json.dumps(body).encode(),
            headers={
                "Content-Type": "application/json",
                "Authorization": f"Bearer {self.api_key}",
            },
        )
        return urllib.request.urlopen(request, timeout=timeout)

    def _healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.root_url}/health", timeout=2) as answer:
                return bool(answer.status == 200)
        except (urllib.error.URLError, OSError, ValueError):
            return False

    def _start_failure(self, code: int, offset: int) -> Exception:
        text = _read_from(self.log_file, offset)
        self.process = None
        if "couldn't bind" in text or "Address already in use" in text:
            return _PortTaken()
        unreadable = "failed to load model" in text or "error loading model" in text
        if unreadable or not _gguf_header(Path(self.model_path)):
            return ModelSetupError(
                f"llama.cpp could not load {self.model_path} (corrupt, truncated or not a GGUF "
                f"model file; log: {self.log_file})",
                "run `smol-instruments model pull` to fetch it again, or set MODEL_FILE to "
                "another .gguf file",
            )
        detail = _last_line(text) if code == EXIT_START_FAILED else _exit_text(code)
        return ModelSetupError(
            f"the embedded model server exited at start: {detail} (log: {self.log_file})",
            "see the log; `smol-instruments doctor` checks the setup",
        )

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def failure(self) -> str | None:
        """Why the server is gone, if it died (not when we stopped it)."""
        if self.process is None or self._stopping:
            return None
        code = self.process.poll()
        if code is None:
            return None
        return (
            f"the embedded model server stopped during the run ({_exit_text(code)}); the next run "
            f"starts it again (its log: {self.log_file})"
        )

    def stop(self, timeout: float = 5.0) -> None:
        process = self.process
        if process is None:
            return
        self._stopping = True
        if process.poll() is None:
            with contextlib.suppress(OSError):
                if process.stdin is not None:
                    process.stdin.close()  # its watchdog exits on end of file
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        elif process.stdin is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()
        _RUNNING.discard(self)


class _PortTaken(Exception):
    """The port was free when chosen and taken when the server bound it."""


def _port_error(port: int) -> ModelSetupError:
    return ModelSetupError(
        f"port {port} on {HOST} is in use: the embedded model server cannot listen there",
        "set MODEL_EMBEDDED_PORT=0 for any free port, or choose another",
    )


def _read_from(path: Path, offset: int) -> str:
    try:
        with path.open("rb") as stream:
            stream.seek(offset)
            return stream.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:300] if lines else "no output"


def _exit_text(code: int) -> str:
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-code).name}"
    return f"exit status {code}"


@atexit.register
def _stop_all() -> None:
    for server in list(_RUNNING):
        server.stop(timeout=2.0)


def _gguf_header(path: Path) -> bool:
    """The file starts as a GGUF model does: the magic, then a version llama.cpp reads (1-3).
    A file of random bytes after the magic can fail llama.cpp's init before it logs a word,
    leaving only "Failed to init server" to go by."""
    try:
        with path.open("rb") as file:
            head = file.read(8)
    except OSError:
        return False
    return len(head) == 8 and head[:4] == b"GGUF" and 1 <= int.from_bytes(head[4:], "little") <= 3
