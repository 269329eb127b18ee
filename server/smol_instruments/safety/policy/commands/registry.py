"""The one registry of command handlers: program name -> the handler that knows its semantics."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..analysis.invocation import Invocation
from ..analysis.state import Output

Handler = Callable[[Invocation], Output | None]

#: program name -> its handler; filled by the family modules of this package.
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
