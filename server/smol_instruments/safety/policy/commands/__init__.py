"""The programs with their own semantics, by family, in one registry.

A handler takes the `Invocation` of its program, records what the program does (findings,
paths touched, code run) and returns what it prints, as far as piping it into a shell goes,
or None when that is nothing the policy needs. Programs without a handler are decided by
their rows in `default_rules.toml` and the checks every program gets.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..analysis.invocation import Invocation
from ..analysis.state import Output

Handler = Callable[[Invocation], Output | None]

#: program name -> its handler; filled by the family modules imported below.
HANDLERS: dict[str, Handler] = {}


def handles(*programs: str | Iterable[str]) -> Callable[[Handler], Handler]:
    """Register a handler for programs given as names or sets of names."""

    def register(handler: Handler) -> Handler:
        for entry in programs:
            for name in [entry] if isinstance(entry, str) else entry:
                if name in HANDLERS:
                    raise ValueError(f"{name!r} has two handlers")
                HANDLERS[name] = handler
        return handler

    return register


# The families register themselves on import.
from . import (  # noqa: E402
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
