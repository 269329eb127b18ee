"""The daemon assembled: `smol-instruments serve`, its features in order, and how it runs.

`FEATURES` is the one list of what the daemon does; this is the only module that imports the
features. `create_server` builds them in that order and gives each what its constructor asks
for, by type: the server, or a feature built before it (`CodeActions(patches:
Patches)`). A missing dependency fails at start-up, naming it. The notifications more than
one feature hears (initialize, initialized, didSave) are dispatched here, in the same order.
"""

from __future__ import annotations

import inspect
import logging
import logging.handlers
import os
import socket
import sys
import typing
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from lsprotocol import types

from ..base.logs import quiet_libraries
from .feature import Feature
from .features.approvals import Approvals
from .features.chat import Chat
from .features.code_actions import CodeActions
from .features.configuration import Configuration
from .features.model import Model
from .features.patches import Patches
from .framing import BrokenStream, FrameReader, FrameWriter
from .server import SmolLanguageServer

if TYPE_CHECKING:  # pydantic, under the settings, loads after initialize is answered
    from ..base.config import Settings

log = logging.getLogger(__name__)

#: What the daemon does, in the order features are built and hear the lifecycle.
FEATURES: tuple[type[Feature], ...] = (
    Configuration,
    Approvals,
    Patches,
    Model,
    Chat,
    CodeActions,
)


def dependencies(kind: type[Feature], server: SmolLanguageServer) -> dict[str, Any]:
    """The arguments of `kind`'s constructor, found by their annotated types."""
    hints = typing.get_type_hints(kind.__init__)
    found: dict[str, Any] = {}
    for name in list(inspect.signature(kind.__init__).parameters)[1:]:
        wanted = hints.get(name)
        if isinstance(wanted, type) and isinstance(server, wanted):
            found[name] = server
        elif isinstance(wanted, type) and issubclass(wanted, Feature):
            feature = server.get_feature(wanted)
            if feature is None:
                raise TypeError(
                    f"{kind.__name__} needs {wanted.__name__}: list it before {kind.__name__} in FEATURES"
                )
            found[name] = feature
        else:
            raise TypeError(
                f"{kind.__name__}({name}: {wanted}) is neither the server nor a feature"
            )
    return found


def create_server(
    settings: Settings | Callable[[], Settings],
    features: tuple[type[Feature], ...] = FEATURES,
    loaded: Callable[[Settings], None] | None = None,
) -> SmolLanguageServer:
    """The server and its features. Given what loads the settings rather than the settings,
    it loads them when the client says it is ready (`initialized`): `loaded` hears them then.
    Settings that do not validate are said in the editor and on stderr, and the daemon exits
    with status 2 (the command line's usage error) before any feature starts."""
    server = SmolLanguageServer(settings)
    for kind in features:
        feature = kind(**dependencies(kind, server))
        feature.register(server)
        server.add_feature(feature)

    @server.feature(types.INITIALIZE)
    def initialize(ls: SmolLanguageServer, params: types.InitializeParams) -> None:
        """Workspace root, trust and settings from the client."""
        ls.initialize(params)
        for feature in ls:
            feature.initialize(params)

    @server.feature(types.INITIALIZED)
    def initialized(ls: SmolLanguageServer, params: types.InitializedParams) -> None:
        """The client is ready: the settings load, then features may send what they have."""
        from ..base.config import SettingsError

        try:
            base = ls.base_settings
        except SettingsError as exc:
            log.error("%s", exc)
            ls.show_error(str(exc))
            print(f"smol-instruments: {exc}", file=sys.stderr, flush=True)
            ls.exit_status = 2
            sys.exit(2)  # as pygls's own `exit` does: start_io ends, serve's cleanup runs
        if loaded is not None:
            loaded(base)
        for feature in ls:
            feature.initialized(params)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: SmolLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
        """A saved file changes what the tools see."""
        for feature in ls:
            feature.document_saved(params)

    return server


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


def _log_early(server: SmolLanguageServer) -> None:
    """Until the settings say where the log file is (`initialized`), records from INFO up
    go to the client and are kept to be written to the file then; never to stdout."""
    root_logger = logging.getLogger()
    root_logger.setLevel(logging.INFO)
    for handler in list(root_logger.handlers):
        root_logger.removeHandler(handler)
    kept = logging.handlers.MemoryHandler(capacity=10_000, flushLevel=logging.CRITICAL + 1)
    root_logger.addHandler(kept)
    root_logger.addHandler(_to_client(server))


def _to_client(server: SmolLanguageServer) -> LspLogHandler:
    handler = LspLogHandler(server)
    handler.setLevel(logging.INFO)
    handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    return handler


def _log_to(server: SmolLanguageServer, settings: Settings) -> None:
    """Logs go to LOG_FILE and, from INFO up, to the client; never to stdout. What
    `_log_early` kept before the settings were known is written to the file first."""
    from ..base.userdirs import default_log_file

    root_logger = logging.getLogger()
    root_logger.setLevel(settings.log_level)
    kept = [h for h in root_logger.handlers if isinstance(h, logging.handlers.MemoryHandler)]
    for handler in list(root_logger.handlers):
        root_logger.removeHandler(handler)
    if settings.suppress_warnings:
        warnings.filterwarnings("ignore")
    log_file = Path(settings.log_file) if settings.log_file else default_log_file()
    try:
        log_file.parent.mkdir(parents=True, exist_ok=True)
        file_handler = logging.FileHandler(log_file)
        file_handler.setFormatter(
            logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
        )
        root_logger.addHandler(file_handler)
        for handler in kept:
            handler.setTarget(file_handler)
            handler.flush()
    except OSError as exc:
        print(f"smol-instruments: cannot write the log file {log_file}: {exc}", file=sys.stderr)
    for handler in kept:
        handler.close()
    root_logger.addHandler(_to_client(server))
    quiet_libraries()


def _accept_one(address: str) -> tuple[BinaryIO, FrameWriter]:
    """Listen on `address` (HOST:PORT; port 0 picks one), say where on stderr, and take the
    first client: the daemon serves one editor, as on stdio, and ends when it goes."""
    host, _, port = address.rpartition(":")
    with socket.create_server((host or "127.0.0.1", int(port))) as listener:
        bound_host, bound_port = listener.getsockname()[:2]
        print(f"smol-instruments serve: listening on {bound_host}:{bound_port}", file=sys.stderr)
        sys.stderr.flush()
        connection, _ = listener.accept()
    return connection.makefile("rb"), FrameWriter(connection.makefile("wb"))


def serve(load_settings: Callable[[], Settings], tcp: str | None = None) -> int:
    """Run the daemon until the client goes away; then stop runs, sandboxes and children.
    A stream that ends inside a message exits with status 1 and says so on stderr.

    Initialize is answered before the settings load (pydantic and the settings cost about a
    third of the start-up, bench `startup`); they load and are checked when the client says
    it is ready, and the log file opens then (`create_server`)."""
    # stdout is the JSON-RPC channel: keep a handle for pygls, send stray prints to stderr.
    protocol_in, protocol_out = sys.stdin.buffer, FrameWriter(sys.stdout.buffer)
    sys.stdout = sys.stderr
    if tcp:  # one client, read through the same frames as stdio
        try:
            protocol_in, protocol_out = _accept_one(tcp)
        except (OSError, ValueError) as exc:
            print(f"smol-instruments serve: cannot listen on {tcp}: {exc}", file=sys.stderr)
            return 2
    server = create_server(load_settings, loaded=lambda settings: _log_to(server, settings))
    _log_early(server)
    status = 0
    try:
        server.frames = FrameReader(protocol_in, protocol_out)
        server.start_io(typing.cast(BinaryIO, server.frames), typing.cast(BinaryIO, protocol_out))
    except BrokenStream as exc:
        log.error("%s", exc)
        print(f"smol-instruments serve: {exc}", file=sys.stderr, flush=True)
        status = 1
    finally:
        server.close()
        log.info("daemon stopped")
        logging.shutdown()
        # Runs were cancelled and sandboxes removed; a worker thread stuck in a network read
        # must not keep the process alive after its client is gone.
        os._exit(status or server.exit_status)
    return status
