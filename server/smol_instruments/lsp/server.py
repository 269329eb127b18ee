"""The pygls host: `smol-instruments serve`, a language server that hosts the agent.

`SmolLanguageServer` holds what the features share (settings, the patch store, the running
sessions) and a way for worker threads to hand work to the event loop. The features live in
one small module each, registered from `FEATURES`. Nothing heavy is imported here: the agent
(smolagents, LiteLLM, OpenTelemetry) loads on the first chat.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from .. import __version__
from ..base.config import Settings, SettingsError, settings_from_client
from ..patches.store import PatchStore

log = logging.getLogger(__name__)


class SmolLanguageServer(LanguageServer):
    """The daemon: an LSP server whose features share one state object (this)."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(
            "smol-instruments",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            max_workers=16,
        )
        self.base_settings = settings
        self.settings = settings
        self.root: Path | None = None
        self.patch_store: PatchStore | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.init_options: dict[str, Any] = {}
        self.features: dict[str, Any] = {}
        #: Called with each new patch store (features that follow patches subscribe here).
        self.store_listeners: list[Callable[[PatchStore], None]] = []
        self._closed = threading.Event()

    # --- threads to loop ---------------------------------------------------------------

    def post(self, fn: Callable[..., Any], *args: Any) -> None:
        """Run `fn(*args)` on the event loop, from any thread, in call order."""
        loop = self.loop
        if loop is None or loop.is_closed():
            return
        if _on_loop(loop):
            fn(*args)
        else:
            loop.call_soon_threadsafe(fn, *args)

    def call(self, coro_factory: Callable[[], Any], timeout: float | None) -> Any:
        """From a worker thread: run a coroutine on the loop and wait for its result."""
        loop = self.loop
        if loop is None or loop.is_closed():
            raise RuntimeError("the language server is not running")
        future = asyncio.run_coroutine_threadsafe(coro_factory(), loop)
        try:
            return future.result(timeout)
        except TimeoutError:
            future.cancel()
            raise

    def notify(self, method: str, params: Any) -> None:
        self.post(self.protocol.notify, method, params)

    # --- settings -----------------------------------------------------------------------

    def apply_client_settings(self, options: dict[str, Any] | None) -> str | None:
        """Validate the editor's settings over the environment's; the error text if bad."""
        try:
            self.settings = settings_from_client(options, self.base_settings)
        except SettingsError as exc:
            return str(exc)
        return None

    def show_error(self, message: str) -> None:
        self.post(
            self.window_show_message,
            types.ShowMessageParams(
                type=types.MessageType.Error, message=f"smol-instruments: {message}"
            ),
        )

    # --- workspace ----------------------------------------------------------------------

    def open_root(self, root: Path) -> None:
        from ..base.git import find_repo_root, git_dir

        self.root = find_repo_root(root)
        gdir = git_dir(self.root)
        persist = gdir / "smol-instruments" / "patches" if gdir is not None else None
        self.patch_store = PatchStore(self.root, persist)
        for listener in self.store_listeners:
            listener(self.patch_store)

    def document_text(self, uri: str) -> str | None:
        """The text of an open document as the editor has it (unsaved edits included)."""
        document = self.workspace.text_documents.get(uri)
        return None if document is None else document.source

    def client_supports(self, *path: str) -> bool:
        """Whether a nested client capability (e.g. 'workspace', 'apply_edit') is true."""
        value: Any = self.client_capabilities
        for name in path:
            value = getattr(value, name, None)
            if value is None:
                return False
        return bool(value)

    def close(self) -> None:
        """Stop every run, its commands and its sandbox (client gone or shutdown)."""
        if self._closed.is_set():
            return
        self._closed.set()
        for feature in self.features.values():
            closer = getattr(feature, "close", None)
            if closer is not None:
                try:
                    closer()
                except Exception:
                    log.exception("closing %s failed", feature)


def _on_loop(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


class LspLogHandler(logging.Handler):
    """Forwards log records to the client's `window/logMessage` (never stdout)."""

    LEVELS = {
        logging.DEBUG: types.MessageType.Log,
        logging.INFO: types.MessageType.Info,
        logging.WARNING: types.MessageType.Warning,
        logging.ERROR: types.MessageType.Error,
    }

    def __init__(self, server: SmolLanguageServer) -> None:
        super().__init__()
        self.server = server

    def emit(self, record: logging.LogRecord) -> None:
        if record.name.startswith("pygls"):
            return  # pygls logs every message; echoing them back would loop
        try:
            kind = self.LEVELS.get(record.levelno, types.MessageType.Error)
            params = types.LogMessageParams(type=kind, message=self.format(record))
            self.server.post(self.server.window_log_message, params)
        except Exception:
            pass


def create_server(settings: Settings) -> SmolLanguageServer:
    from . import approvals, chat, code_actions, configuration, patches

    server = SmolLanguageServer(settings)
    for module in (configuration, patches, approvals, chat, code_actions):
        module.register(server)
    return server


def serve(settings: Settings, tcp: str | None = None) -> int:
    """Run the daemon until the client goes away; then stop runs, sandboxes and children."""
    from ..base.config import default_log_file

    # stdout is the JSON-RPC channel: keep a handle for pygls, send stray prints to stderr.
    protocol_out = sys.stdout.buffer
    sys.stdout = sys.stderr
    logging.getLogger("pygls").setLevel(logging.WARNING)
    server = create_server(settings)
    root_logger = logging.getLogger()
    root_logger.setLevel(settings.log_level)
    for handler in list(root_logger.handlers):
        root_logger.removeHandler(handler)
    log_file = Path(settings.log_file) if settings.log_file else default_log_file()
    try:
        log_file.parent.mkdir(parents=True, exist_ok=True)
        file_handler = logging.FileHandler(log_file)
        file_handler.setFormatter(
            logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
        )
        root_logger.addHandler(file_handler)
    except OSError as exc:
        print(f"smol-instruments: cannot write the log file {log_file}: {exc}", file=sys.stderr)
    lsp_handler = LspLogHandler(server)
    lsp_handler.setLevel(logging.INFO)
    lsp_handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    root_logger.addHandler(lsp_handler)
    try:
        if tcp:
            host, _, port = tcp.rpartition(":")
            server.start_tcp(host or "127.0.0.1", int(port))
        else:
            server.start_io(sys.stdin.buffer, protocol_out)
    finally:
        server.close()
        log.info("daemon stopped")
        logging.shutdown()
        # Runs were cancelled and sandboxes removed; a worker thread stuck in a network read
        # must not keep the process alive after its client is gone.
        os._exit(0)
    return 0
