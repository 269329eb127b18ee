"""Where the model runs: MODEL_BACKEND=auto|server|embedded -> the endpoint LiteLLM talks to.

- `server`: MODEL_ID at MODEL_API_BASE, as configured; nothing is started.
- `embedded`: the model of MODEL_FILE (a catalog name, pulled and verified first, or a .gguf
  path) in llama.cpp's server, started as a child process on 127.0.0.1.
- `auto`: the configured server when it answers a quick probe (Ollama's `/api/tags`, or an
  OpenAI-style `/models`), else the embedded one.

The embedded endpoint is `openai/<model name>` at `http://127.0.0.1:PORT/v1` with a random API
key: to LiteLLM it is one more OpenAI-compatible server. A host keeps one `ModelRuntime` for
its lifetime and asks it for the endpoint before each run: the first ask may download the
model and start the server (reported through `on_status`), later asks reuse it, and an ask
after the server died starts a new one. `close()` stops it.

`warm(settings, messages)` has the model read the fixed start of every conversation before the
first question (llm/prefix.py); a run that asks for the endpoint meanwhile waits for it, and
is told how far it got, rather than queueing behind it unseen. The server's thread counts are
those measured for this model on this machine (llm/threads.py).
"""

from __future__ import annotations

import logging
import threading
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..base.config import Settings
from . import prefix, threads
from .catalog import ModelSetupError, ModelSpec, find_model, is_path, models_dir
from .embedded import EmbeddedServer, xllamacpp_available, xllamacpp_missing_error
from .pull import PullProgress, corrupt_file_error, model_file, pull, verify_file

log = logging.getLogger(__name__)

PROBE_TIMEOUT_S = 1.5
Backend = Literal["server", "embedded"]
#: What the host shows while the endpoint is prepared: a message and, for downloads, a percent.
StatusCallback = Callable[[str, "int | None"], None]


def _no_failure() -> str | None:
    return None


@dataclass(frozen=True)
class Endpoint:
    """What LiteLLM needs to reach the model, and where that is, for people."""

    model_id: str
    api_base: str
    api_key: str | None = field(repr=False)
    backend: Backend
    where: str
    #: Why this endpoint stopped answering, when we know (a dead embedded server); else None.
    failure: Callable[[], str | None] = field(default=_no_failure, compare=False, repr=False)
    #: The server streams how far it has read a prompt when asked (`return_progress`: llama.cpp).
    reports_progress: bool = False


def is_ollama(settings: Settings) -> bool:
    return settings.model_id.startswith(("ollama/", "ollama_chat/"))


def probe_server(settings: Settings, timeout: float = PROBE_TIMEOUT_S) -> tuple[bool, str]:
    """Does the configured server answer? (True, "HTTP 200") or (False, the reason)."""
    base = settings.model_api_base.rstrip("/")
    url = f"{base}/api/tags" if is_ollama(settings) else f"{base}/models"
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return True, f"HTTP {response.status}"
    except urllib.error.HTTPError as exc:
        return True, f"HTTP {exc.code}"  # it answered: the server is up
    except (urllib.error.URLError, OSError, ValueError) as exc:
        return False, str(getattr(exc, "reason", exc))


def configured_endpoint(settings: Settings) -> Endpoint:
    return Endpoint(
        settings.model_id,
        settings.model_api_base,
        settings.model_api_key,
        "server",
        f"{settings.model_id} at {settings.model_api_base}",
    )


@dataclass(frozen=True)
class ModelChoice:
    """The embedded server's model: a path, and its catalog entry when it has one."""

    path: Path
    spec: ModelSpec | None

    @property
    def alias(self) -> str:
        return self.spec.name if self.spec else self.path.stem


def embedded_model(settings: Settings) -> ModelChoice:
    if is_path(settings.model_file):
        return ModelChoice(Path(settings.model_file).expanduser().resolve(), None)
    spec = find_model(settings, settings.model_file)
    return ModelChoice(model_file(settings, spec), spec)


def embedded_threads(settings: Settings, choice: ModelChoice) -> threads.ThreadChoice:
    """The embedded server's CPU threads: MODEL_THREADS, else as measured for this model."""
    return threads.choose(settings.model_threads, models_dir(settings), choice.path)


def slot_dir(settings: Settings) -> Path:
    """Where the embedded server keeps the evaluated prefixes it may restore (llm/prefix.py)."""
    return models_dir(settings) / "slots"


def embedded_server(
    settings: Settings,
    choice: ModelChoice,
    *,
    port: int,
    api_key: str | None = None,
    thread_counts: tuple[int, int] | None = None,
) -> EmbeddedServer:
    """The embedded server for `choice` as the settings describe it (not started);
    `thread_counts` (generation, prompts) instead of the chosen ones, to measure them."""
    if thread_counts is None:
        chosen = embedded_threads(settings, choice)
        thread_counts = (chosen.threads, chosen.threads_batch)
    return EmbeddedServer(
        choice.path,
        alias=choice.alias,
        threads=thread_counts[0],
        threads_batch=thread_counts[1],
        context=settings.model_num_ctx,
        slot_dir=slot_dir(settings),
        port=port,
        start_timeout_s=settings.model_start_timeout_s,
        api_key=api_key,
    )


def _server_key(settings: Settings, choice: ModelChoice) -> tuple[object, ...]:
    return (
        choice.path,
        settings.model_threads,
        settings.model_num_ctx,
        settings.model_embedded_port,
    )


class _Preparing:
    """The runtime getting the model ready (starting it, reading the prefix): who else asks for
    the endpoint meanwhile waits for it to finish and hears each status it reports."""

    def __init__(self, on_status: StatusCallback | None) -> None:
        self.owner = threading.get_ident()
        self.done = threading.Event()
        self._lock = threading.Lock()
        self._last: tuple[str, int | None] | None = None
        self._listeners: list[StatusCallback] = [on_status] if on_status else []

    def report(self, message: str, percent: int | None) -> None:
        with self._lock:
            self._last = (message, percent)
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(message, percent)
            except Exception:  # a host's display must never stop the model
                log.exception("a model status listener failed")

    def follow(self, on_status: StatusCallback, cancel: threading.Event | None) -> None:
        """Wait until it is done, passing its statuses (the latest one first) to `on_status`."""
        with self._lock:
            self._listeners.append(on_status)
            last = self._last
        try:
            if last is not None:
                on_status(*last)
            while not self.done.wait(0.1):
                if cancel is not None and cancel.is_set():
                    raise ModelSetupError("cancelled while the local model was getting ready")
        finally:
            with self._lock:
                self._listeners.remove(on_status)


class ModelRuntime:
    """The host's model: resolves the endpoint per run and owns the embedded server."""

    def __init__(self) -> None:
        self.server: EmbeddedServer | None = None
        #: What the last `warm()` did (None before, or when there was nothing to warm).
        self.warmed: prefix.Warmed | None = None
        self._key: tuple[object, ...] | None = None
        self._lock = threading.Lock()
        self._preparing: _Preparing | None = None

    def endpoint(
        self,
        settings: Settings,
        *,
        on_status: StatusCallback | None = None,
        cancel: threading.Event | None = None,
        fetch: bool = True,
    ) -> Endpoint:
        """The endpoint for the next run; may download the model (unless `fetch` is false) and
        start the server. While `warm()` runs, waits for it first, hearing its statuses."""
        report = on_status or (lambda _m, _p: None)
        preparing = self._preparing
        if preparing is not None and preparing.owner != threading.get_ident():
            preparing.follow(report, cancel)
        backend = settings.model_backend
        if backend == "server":
            return configured_endpoint(settings)
        why = "MODEL_BACKEND=embedded"
        if backend == "auto":
            answered, detail = probe_server(settings)
            if answered:
                return configured_endpoint(settings)
            why = f"no model server at {settings.model_api_base} ({detail})"
        return self._embedded(settings, why, report, cancel, fetch)

    def warm(
        self,
        settings: Settings,
        messages: Callable[[], list[dict[str, Any]]],
        *,
        on_status: StatusCallback | None = None,
        cancel: threading.Event | None = None,
    ) -> prefix.Warmed | None:
        """Get the embedded model ready before the first question: start it (when its file is
        there: nothing is downloaded here) and have it read `messages()`, the start every
        conversation shares (asked for only once the embedded server runs). None when there is
        nothing to warm (another server, a file still to fetch, a warm already under way) or
        it failed (logged; the first run tries again)."""
        with self._lock:
            if self._preparing is not None:
                return None
            preparing = self._preparing = _Preparing(on_status)
        try:
            endpoint = self.endpoint(
                settings, on_status=preparing.report, cancel=cancel, fetch=False
            )
            server = self.server
            if endpoint.backend != "embedded" or server is None:
                return None

            def reading(done: int, total: int) -> None:
                preparing.report(
                    f"the model is reading its instructions ({total:,} tokens)",
                    min(100, done * 100 // total),
                )

            self.warmed = prefix.warm(server, messages(), on_progress=reading, cancel=cancel)
            return self.warmed
        except ModelSetupError as exc:
            log.info("the model was not made ready before the first question: %s", exc)
            return None
        except (OSError, ValueError) as exc:
            log.warning("reading the model's instructions ahead failed: %s", exc)
            return None
        finally:
            with self._lock:
                self._preparing = None
            preparing.done.set()

    def _embedded(
        self,
        settings: Settings,
        why: str,
        on_status: StatusCallback,
        cancel: threading.Event | None,
        fetch: bool,
    ) -> Endpoint:
        if not xllamacpp_available():
            raise xllamacpp_missing_error()
        choice = embedded_model(settings)
        with self._lock:
            key = _server_key(settings, choice)
            server = self.server
            if server is None or self._key != key or not server.running():
                if server is not None:
                    server.stop()
                if not fetch and not choice.path.exists():
                    raise ModelSetupError(f"model file {choice.path} is not fetched yet")
                log.info("%s: using the embedded model server", why)
                prepare_model_file(settings, choice, on_status, cancel)
                on_status("starting the local model", None)
                server = embedded_server(settings, choice, port=settings.model_embedded_port)
                self.server = self._key = None
                server.start(cancel)
                self.server, self._key = server, key
            return Endpoint(
                f"openai/{choice.alias}",
                server.base_url,
                server.api_key,
                "embedded",
                server.describe(),
                failure=server.failure,
                reports_progress=True,
            )

    def close(self) -> None:
        with self._lock:
            if self.server is not None:
                self.server.stop()
                self.server = None
                self._key = None


def prepare_model_file(
    settings: Settings,
    choice: ModelChoice,
    on_status: StatusCallback,
    cancel: threading.Event | None,
) -> None:
    """Make sure the model file is there and verified: pull it, or check its hash."""
    spec = choice.spec
    if spec is None:
        return  # a file of the user's: llama.cpp tells whether it loads
    if not choice.path.exists():
        if not settings.model_auto_pull:
            raise ModelSetupError(
                f"model file {choice.path} not found",
                f"run `smol-instruments model pull {spec.name}` (or set MODEL_AUTO_PULL=true)",
            )

        def downloading(progress: PullProgress) -> None:
            on_status(f"downloading the model ({progress.message})", progress.percent)

        pull(settings, spec, progress=downloading, cancel=cancel)
        return

    def checking(progress: PullProgress) -> None:
        on_status("checking the model file", progress.percent)

    if not verify_file(choice.path, spec, checking, cancel):
        raise corrupt_file_error(choice.path, spec)
