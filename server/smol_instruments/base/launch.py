"""A command ready to start: its argv, environment, and the descriptors it is handed.

`Containment.prepare` (containment.py) makes one; `run_process` (process.py) starts it.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Launch:
    """A command ready for Popen: pass `pass_fds`, call `started()` once it started and
    `close()` once it ended. Contained, `lifeline` is the write end we hold: closing it
    kills whatever is left in the sandbox (lifeline.py). Uncontained, both are empty.
    `release`, if any, undoes what was set up for the command (a view mounted where we run,
    overlay.py) once, when it is closed.

    Each descriptor is closed once, however often these are called: a number closed twice
    may by then be another thread's socket (the daemon's, a model connection, Docker's)."""

    argv: list[str]
    env: dict[str, str]
    pass_fds: tuple[int, ...] = ()
    lifeline: int | None = None
    release: Callable[[], None] | None = None
    _closed: set[int] = field(default_factory=set, repr=False, compare=False)
    _released: list[bool] = field(default_factory=list, repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def started(self) -> None:
        """Close our copies of what the sandbox was given (it holds its own now)."""
        self._close_once(self.pass_fds)

    def close(self) -> None:
        lifeline = () if self.lifeline is None else (self.lifeline,)
        self._close_once((*self.pass_fds, *lifeline))
        if self.release is not None:
            with self._lock:
                first = not self._released
                self._released.append(True)
            if first:
                self.release()

    def _close_once(self, fds: Iterable[int]) -> None:
        with self._lock:
            for fd in fds:
                if fd in self._closed:
                    continue
                self._closed.add(fd)
                with contextlib.suppress(OSError):
                    os.close(fd)
