"""The daemon's shared state: `SmolLanguageServer`, which imports no feature.

It holds what the features share (settings, the workspace root, the patch store, whether the
folder is trusted), the features themselves keyed by their type, and a way for worker threads
to hand work to the event loop. `app.py` creates it and gives it its features; nothing heavy
is imported here: the agent (smolagents, LiteLLM, OpenTelemetry) loads on the first chat.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from .. import __version__
from ..patches.service import PatchService
from .feature import Feature
from .framing import FrameReader
from .protocol import InitializationOptions, structure

if TYPE_CHECKING:  # pydantic, under the settings, loads after initialize is answered
    from ..base.config import Settings

log = logging.getLogger(__name__)

F = TypeVar("F", bound=Feature)


class SmolLanguageServer(LanguageServer):
    """The daemon: an LSP server whose features share one state object (this)."""

    def __init__(self, settings: Settings | Callable[[], Settings]) -> None:
        """`settings`, or what loads them: then they load on first use, which `serve` makes
        the client's `initialized` (app.py), so that initialize is answered without them."""
        super().__init__(
            "smol-instruments",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            max_workers=16,
        )
        self._load_settings = settings if callable(settings) else None
        self._base_settings: Settings | None = None if callable(settings) else settings
        self._settings = self._base_settings
        self.root: Path | None = None
        self.patch_store: PatchService | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.options = InitializationOptions()
        self._features: dict[type[Feature], Feature] = {}
        self._closed = threading.Event()
        #: The status `serve` exits with when it has no other (settings that do not validate).
        self.exit_status = 0
        #: The stdin pygls reads through (framing.py), when serving on stdio.
        self.frames: FrameReader | None = None

    def report_server_error(self, error: Exception, source: Any) -> None:
        """A message pygls could not read is answered as JSON-RPC says (framing.py); other
        errors are shown as pygls does."""
        if source is JsonRpcException and self.frames is not None:
            self.frames.answer_unreadable(error)
            return
        super().report_server_error(error, source)

    # --- features, by type ---------------------------------------------------------------

    def add_feature(self, feature: Feature) -> None:
        kind = type(feature)
        if kind in self._features:
            raise RuntimeError(f"feature {kind.__name__} is already registered")
        self._features[kind] = feature

    def get_feature(self, kind: type[F]) -> F | None:
        feature = self._features.get(kind)
        return feature if isinstance(feature, kind) else None

    def __iter__(self) -> Iterator[Feature]:
        return iter(list(self._features.values()))

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

    # --- workspace and settings ----------------------------------------------------------

    def initialize(self, params: types.InitializeParams) -> None:
        """Remember the loop and the client's options; open the workspace root."""
        self.loop = asyncio.get_running_loop()
        try:
            self.options = structure(params.initialization_options or {}, InitializationOptions)
        except JsonRpcInvalidParams as exc:  # fail closed: options we cannot read trust nothing
            self.options = InitializationOptions(trusted=False)
            log.error("initializationOptions: %s; the folder is treated as untrusted", exc)
            self.show_error(f"{exc}; the folder is treated as untrusted")
        folders = params.workspace_folders or []
        uri = folders[0].uri if folders else params.root_uri
        path = to_fs_path(uri) if uri else params.root_path
        self.open_root(Path(path) if path else Path.cwd())

    @property
    def trusted(self) -> bool:
        """Whether the editor trusts the folder; an untrusted one runs no command."""
        return self.options.trusted

    def open_root(self, root: Path) -> None:
        from ..base.git import find_repo_root
        from ..patches.service import open_patches
        from ..safety.jail import PathJail

        self.root = find_repo_root(root)
        self.patch_store = open_patches(PathJail(self.root))

    @property
    def base_settings(self) -> Settings:
        """The settings of the environment and the settings files (SettingsError if bad)."""
        if self._base_settings is None:
            assert self._load_settings is not None
            self._base_settings = self._load_settings()
        return self._base_settings

    @property
    def settings(self) -> Settings:
        """The settings in force: the editor's over the environment's."""
        if self._settings is None:
            self._settings = self.base_settings
        return self._settings

    @settings.setter
    def settings(self, settings: Settings) -> None:
        self._settings = settings

    def apply_client_settings(self, options: dict[str, Any] | None) -> str | None:
        """Validate the editor's settings over the environment's; the error text if bad."""
        from ..base.config import SettingsError, settings_from_client

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

    def document_text(self, uri: str) -> str | None:
        """The text of an open document as the editor has it (unsaved edits included)."""
        document = self.workspace.text_documents.get(uri)
        return None if document is None else document.source

    def buffer_text(self, path: Path) -> str | None:
        """The session's BufferReader (tools/base.py): the editor's text of `path`, a file the
        jail allowed, when the editor has it open; None (the disk is read) otherwise.

        Called from a run's thread; it only reads pygls's table of open documents. A client
        may spell the uri differently (percent-encoding, a link in the folder's path), so an
        exact match is tried first, then each open document's path.
        """
        text = self.document_text(path.as_uri())
        if text is not None:
            return text
        wanted = os.path.realpath(path)
        for uri in list(self.workspace.text_documents):
            fs_path = to_fs_path(uri)
            if fs_path is not None and os.path.realpath(fs_path) == wanted:
                return self.document_text(uri)
        return None

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
        for feature in reversed(list(self)):  # a feature closes before those it depends on
            try:
                feature.close()
            except Exception:
                log.exception("closing %s failed", type(feature).__name__)


def _on_loop(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False
