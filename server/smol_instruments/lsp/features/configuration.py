"""Settings from the editor: `initializationOptions.settings` and `workspace/didChangeConfiguration`.

The settings are validated by the same Settings object as the environment. They arrive as
`{settings: {...}}`, under a `smolInstruments` section, or both nested; a bad value is shown
as an error message and the previous settings stay in force.
"""

from __future__ import annotations

import logging
from typing import Any

from lsprotocol import types

from ..feature import Feature, handles
from ..protocol import to_plain
from ..server import SmolLanguageServer

log = logging.getLogger(__name__)


def settings_section(options: Any) -> dict[str, Any] | None:
    """The settings in any of the shapes editors send them; None when there are none."""
    plain = to_plain(options)
    if not isinstance(plain, dict):
        return None
    for key in ("settings", "smolInstruments"):
        section = plain.get(key)
        if isinstance(section, dict):
            nested = section.get("smolInstruments")
            return nested if isinstance(nested, dict) else section
    return None


class Configuration(Feature):
    """Keeps the server's settings in step with the editor's."""

    def __init__(self, server: SmolLanguageServer) -> None:
        self.server = server

    def initialize(self, params: types.InitializeParams) -> None:
        """Apply the settings the client started the daemon with."""
        server = self.server
        self.apply(settings_section(params.initialization_options), "initializationOptions")
        trust = "" if server.trusted else "; the folder is untrusted: no command runs"
        # which model runs is logged once known (features/model.py), not the configured one
        log.info("smol-instruments daemon for %s%s", server.root, trust)

    @handles(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(self, params: types.DidChangeConfigurationParams) -> None:
        """New settings apply to conversations started from now on."""
        section = settings_section(params.settings)
        if section is not None:
            self.apply(section, "didChangeConfiguration")

    def apply(self, section: dict[str, Any] | None, origin: str) -> None:
        problem = self.server.apply_client_settings(section)
        if problem:
            log.error("%s: %s", origin, problem)
            self.server.show_error(problem)
