"""The programs with their own semantics, by family, in one registry.

A handler takes the `Invocation` of its program, records what the program does (findings,
paths touched, code run) and returns what it prints, as far as piping it into a shell goes,
or None when that is nothing the policy needs. Programs without a handler are decided by
their rows in `default_rules.toml` and the checks every program gets.
"""

from __future__ import annotations

# The families register themselves on import.
from . import (
    archives,
    build,
    builtins,
    files,
    git,
    interpreters,
    network,
    shells,
    text,
)
from .registry import HANDLERS, Handler, handles

__all__ = [
    "HANDLERS",
    "Handler",
    "archives",
    "build",
    "builtins",
    "files",
    "git",
    "handles",
    "interpreters",
    "network",
    "shells",
    "text",
]
