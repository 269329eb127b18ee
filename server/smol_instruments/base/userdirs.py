"""Where our own files live on the user's machine, outside every repository: the state
directory (the patch store, the daemon's log) and the user's own settings file.

Kept apart from `config.py` so that what only needs a place does not load pydantic (the
daemon opens its patch store before it answers initialize; bench `startup`).
"""

from __future__ import annotations

import os
from pathlib import Path


def state_dir() -> Path:
    """The user's own state directory for us: `$XDG_STATE_HOME/smol-instruments` (by default
    `~/.local/state/smol-instruments`) on Linux, the platform's equivalent elsewhere."""
    import platformdirs

    return Path(platformdirs.user_state_dir("smol-instruments", appauthor=False))


def default_log_file() -> Path:
    return state_dir() / "daemon.log"


def user_settings_file() -> Path:
    """The user's own settings file, which may set every setting."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "smol-instruments" / "settings.env"
