"""Settings and workspace: `initialize`, `initialized`, `workspace/didChangeConfiguration`.

The editor's settings arrive as `initializationOptions.settings` and later through
didChangeConfiguration (either as `{settings: {...}}` or under a `smolInstruments` section);
they are validated by the same Settings object as the environment. A bad value is shown as an
error message and the previous settings stay in force.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from lsprotocol import types

from .protocol import to_plain
from .server import SmolLanguageServer

log = logging.getLogger(__name__)


def _path_of(uri: str | None) -> Path | None:
    if not uri:
        return None
    parsed = urlparse(uri)
    return Path(unquote(parsed.path)) if parsed.scheme == "file" else None


def _settings_section(options: Any) -> dict[str, Any] | None:
    plain = to_plain(options)
    if not isinstance(plain, dict):
        return None
    # Accept {settings: {...}}, {smolInstruments: {...}} and {settings: {smolInstruments: {...}}}.
    for key in ("settings", "smolInstruments"):
        section = plain.get(key)
        if isinstance(section, dict):
            nested = section.get("smolInstruments")
            return nested if isinstance(nested, dict) else section
    return None


def on_initialize(server: SmolLanguageServer, params: types.InitializeParams) -> None:
    """Pick the workspace root and apply the client's settings."""
    server.loop = asyncio.get_running_loop()
    options = to_plain(params.initialization_options) or {}
    server.init_options = options if isinstance(options, dict) else {}
    root = None
    if params.workspace_folders:
        root = _path_of(params.workspace_folders[0].uri)
    root = (
        root or _path_of(params.root_uri) or (Path(params.root_path) if params.root_path else None)
    )
    server.open_root(root or Path.cwd())
    problem = server.apply_client_settings(_settings_section(server.init_options))
    if problem:
        log.error("initializationOptions: %s", problem)
        server.show_error(problem)
    log.info("smol-instruments daemon for %s (model %s)", server.root, server.settings.model_id)


def on_did_change_configuration(
    server: SmolLanguageServer, params: types.DidChangeConfigurationParams
) -> None:
    """New settings apply to conversations started from now on."""
    section = _settings_section(params.settings)
    if section is None:
        return
    problem = server.apply_client_settings(section)
    if problem:
        log.error("didChangeConfiguration: %s", problem)
        server.show_error(problem)


def register(server: SmolLanguageServer) -> None:
    @server.feature(types.INITIALIZE)
    def initialize(ls: SmolLanguageServer, params: types.InitializeParams) -> None:
        """Root and settings from the client."""
        on_initialize(ls, params)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(
        ls: SmolLanguageServer, params: types.DidChangeConfigurationParams
    ) -> None:
        """Editor settings changed."""
        on_did_change_configuration(ls, params)
