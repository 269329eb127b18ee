"""Our process environment is ours: no dependency loads a file into it when it is imported.

Two of our dependencies call python-dotenv's `load_dotenv()` with no path at import time:
LiteLLM (`litellm/_process_defaults.py`, unless `LITELLM_MODE` is something other than `DEV`)
and smolagents (`smolagents/remote_executors.py`, imported by `smolagents/__init__.py`,
unconditionally). With no path, python-dotenv searches upward from the folder of the module
that called it, so when the virtual environment lives inside the repository it finds the
*repository's* `.env` and puts it into `os.environ`, past the filter that keeps user-only
settings out of a repository (`config.py` USER_ONLY): `RIPGREP_CONFIG_PATH` (ripgrep runs
what its config's `--pre` names), proxies for every model call, toolchain variables that
containment mounts back, credentials.

`keep_dependencies_out()` is called by the package's `__init__`, so it runs before any module
of ours imports a dependency, whichever entry point started the process (the command line, the
daemon, the embedded model server, a library user). It sets, in our own environment only:

- `PYTHON_DOTENV_DISABLED=1`: python-dotenv (1.2 and later) makes every `load_dotenv()` call a
  no-op, whichever library makes it. Reading a named file with `dotenv_values` (our own
  `.env` handling, filtered) is unaffected;
- `LITELLM_MODE=PRODUCTION`: LiteLLM's own switch for its import-time `load_dotenv()`, for a
  python-dotenv older than 1.2 and as a second lock;
- `LITELLM_LOCAL_MODEL_COST_MAP=True` unless the user set it: LiteLLM's bundled cost map, not
  a fetch from the internet at import.

Children never see these: what a child gets is an allowlist (`process.child_env`,
`containment.contained_env`), so a project's own tests load their `.env` as they always do.
A process that imported LiteLLM or smolagents before this package is past helping; our entry
points never do.
"""

from __future__ import annotations

import os

#: Set before any dependency is imported, whatever was there: these decide what enters
#: our environment.
FORCED = {"PYTHON_DOTENV_DISABLED": "1", "LITELLM_MODE": "PRODUCTION"}
#: Set unless the user chose otherwise: how a dependency behaves, not what it lets in.
DEFAULTS = {"LITELLM_LOCAL_MODEL_COST_MAP": "True"}


def keep_dependencies_out() -> None:
    """Stop every import-time `.env` load of our dependencies (call before importing them)."""
    os.environ.update(FORCED)
    for name, value in DEFAULTS.items():
        os.environ.setdefault(name, value)
