"""The model the daemon's conversations use: one ModelRuntime, made ready when the folder opens.

With MODEL_WARM_UP (the default), once the client is ready the daemon starts the embedded model
(when its file is there: nothing is downloaded before a question asks for it) and has it read
the start every conversation shares — the system prompt with the tools and the repository's
files (llm/prefix.py) — on a thread of its own, shown as work-done progress while the user
types; then one tiny request goes through the agent's own model client, so that its first-call
costs are not the first question's either. The agent's modules load meanwhile, beside the
model server loading its weights, whatever the backend: the first chat needs them. A question asked before that is done waits for it and its chat shows how far it got; one
asked after costs only its own tokens. A server that answers at MODEL_API_BASE
(MODEL_BACKEND=auto) is used as it is and nothing is started.

The log names the model that runs as soon as it is known, never only the configured one.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from ..feature import Feature
from ..progress import WindowProgress
from ..server import SmolLanguageServer

if TYPE_CHECKING:
    from ...agent.session import AgentSession
    from ...llm.resolve import Endpoint, ModelRuntime, StatusCallback

log = logging.getLogger(__name__)


class Model(Feature):
    """Owns the model runtime: the endpoint of each run, and the warm-up at start."""

    def __init__(self, server: SmolLanguageServer) -> None:
        self.server = server
        self._runtime: ModelRuntime | None = None
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._announced: str | None = None
        #: The warm-up's thread while it runs (tests and the benchmark wait on it).
        self.warming: threading.Thread | None = None

    @property
    def runtime(self) -> ModelRuntime:
        from ...llm.resolve import ModelRuntime  # not on the initialize path

        with self._lock:
            if self._runtime is None:
                self._runtime = ModelRuntime()
            return self._runtime

    def initialized(self, params: types.InitializedParams) -> None:
        """The client is ready: get the model ready while the user types."""
        if not self.server.settings.model_warm_up or self.server.root is None:
            return
        self.warming = threading.Thread(target=self._warm, name="smol-model-warm", daemon=True)
        self.warming.start()

    def endpoint(
        self, on_status: StatusCallback | None = None, cancel: threading.Event | None = None
    ) -> Endpoint:
        """The endpoint of the next run (it may fetch and start the local model, or wait for
        the warm-up under way, reporting either through `on_status`)."""
        endpoint = self.runtime.endpoint(self.server.settings, on_status=on_status, cancel=cancel)
        self._announce(endpoint)
        return endpoint

    def close(self) -> None:
        self._closing.set()
        with self._lock:
            runtime = self._runtime
        if runtime is not None:
            runtime.close()

    # --- the warm-up --------------------------------------------------------------------

    def _warm(self) -> None:
        server = self.server
        settings = server.settings
        progress = WindowProgress(server, "Smol Instruments")
        progress.begin()
        said = "the model starts at the first question"
        # The agent (smolagents, LiteLLM: seconds of imports on a busy CPU, which the first
        # chat would wait for) loads while the model server loads its weights.
        built: Future[AgentSession] = Future()
        threading.Thread(
            target=self._build_session, args=(built,), name="smol-model-warm-agent", daemon=True
        ).start()

        def prefix() -> list[dict[str, Any]]:
            return built.result().prefix_messages()

        try:
            warmed = self.runtime.warm(
                settings, prefix, on_status=progress.report, cancel=self._closing
            )
            if warmed is not None:
                said = f"the model is ready: {warmed.describe()}"
                self._rehearse(built.result())
            runtime_server = self.runtime.server
            if runtime_server is not None and runtime_server.running():
                self._announce_where(runtime_server.describe())
        except Exception:  # the first question tries again, and says what fails
            log.exception("getting the model ready failed")
        finally:
            progress.end(said)
            built.add_done_callback(_close_built)

    def _build_session(self, built: Future[AgentSession]) -> None:
        """A session built as the chat builds its sessions (it never runs a task): the start
        every conversation of this folder shares, and the model client to rehearse with."""
        from ...agent.session import AgentSession

        server, settings = self.server, self.server.settings
        assert server.root is not None
        try:
            built.set_result(
                AgentSession(
                    server.root,
                    settings,
                    patches=server.patch_store,
                    trusted=server.trusted,
                    endpoint=lambda: self.runtime.endpoint(settings, cancel=self._closing),
                )
            )
        except BaseException as exc:
            built.set_exception(exc)

    def _rehearse(self, session: AgentSession) -> None:
        from ...base.telemetry import untraced  # not on the initialize path

        try:
            with untraced():  # the daemon's own work, no run of the user's
                session.rehearse()
        except Exception as exc:  # only a head start was lost
            log.info("the model client's first call ahead of the question failed: %s", exc)

    def _announce(self, endpoint: Endpoint) -> None:
        self._announce_where(endpoint.where)

    def _announce_where(self, where: str) -> None:
        if where != self._announced:
            self._announced = where
            log.info("model: %s", where)


def _close_built(built: Future[AgentSession]) -> None:
    if built.exception() is None:
        built.result().close()
