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
"""

from __future__ import annotations

import logging
import threading
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..base.config import Settings
from .catalog import ModelSetupError, ModelSpec, find_model, is_path
from .embedded import EmbeddedServer, default_threads, xllamacpp_available, xllamacpp_missing_error
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


def embedded_threads(settings: Settings) -> int:
    """The embedded server's CPU threads: MODEL_THREADS, or the default for this machine."""
    return settings.model_threads or default_threads()


def embedded_server(
    settings: Settings, choice: ModelChoice, *, port: int, api_key: str | None = None
) -> EmbeddedServer:
    """The embedded server for `choice` as the settings describe it (not started)."""
    return EmbeddedServer(
        choice.path,
        alias=choice.alias,
        threads=embedded_threads(settings),
        context=settings.model_num_ctx,
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


class ModelRuntime:
    """The host's model: resolves the endpoint per run and owns the embedded server."""

    def __init__(self) -> None:
        self.server: EmbeddedServer | None = None
        self._key: tuple[object, ...] | None = None
        self._lock = threading.Lock()

    def endpoint(
        self,
        settings: Settings,
        *,
        on_status: StatusCallback | None = None,
        cancel: threading.Event | None = None,
    ) -> Endpoint:
        """The endpoint for the next run; may download the model and start the server."""
        backend = settings.model_backend
        if backend == "server":
            return configured_endpoint(settings)
        why = "MODEL_BACKEND=embedded"
        if backend == "auto":
            answered, detail = probe_server(settings)
            if answered:
                return configured_endpoint(settings)
            why = f"no model server at {settings.model_api_base} ({detail})"
        return self._embedded(settings, why, on_status or (lambda _m, _p: None), cancel)

    def _embedded(
        self,
        settings: Settings,
        why: str,
        on_status: StatusCallback,
        cancel: threading.Event | None,
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
