"""A command ready to start: its argv, environment, and the descriptors it is handed.

`Containment.prepare` (containment.py) makes one; `run_process` (process.py) starts it.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field

#: How long `settle` waits for a sandbox's last processes (killed already, so only a moment).
SETTLE_S = 5.0


@dataclass(frozen=True)
class Launch:
    """A command ready for Popen: pass `pass_fds`, call `started()` once it started and
    `close()` once it ended. Contained, `lifeline` is the write end we hold: closing it
    kills whatever is left in the sandbox (lifeline.py). Uncontained, both are empty.

    Each descriptor is closed once, however often these are called: a number closed twice
    may by then be another thread's socket (the daemon's, a model connection, Docker's)."""

    argv: list[str]
    env: dict[str, str]
    pass_fds: tuple[int, ...] = ()
    lifeline: int | None = None
    #: Our end of bubblewrap's `--info-fd`: where it says which process is the sandbox's PID 1.
    info: int | None = None
    _closed: set[int] = field(default_factory=set, repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def started(self) -> None:
        """Close our copies of what the sandbox was given (it holds its own now)."""
        self._close_once(self.pass_fds)

    def close(self) -> None:
        """Let go of the lifeline, wait until the sandbox is gone (`settle`), close the rest."""
        lifeline = () if self.lifeline is None else (self.lifeline,)
        self._close_once((*self.pass_fds, *lifeline))
        if self.info is not None:
            self.settle()
            self._close_once((self.info,))

    def settle(self, timeout: float = SETTLE_S) -> None:
        """Wait until the sandbox's PID 1 is gone, and with it every process of the sandbox:
        then nothing writes to its view any more. Bubblewrap exits as soon as the command
        does; what the command left running is killed when we let go of the lifeline, a
        moment later. Without `info`, nothing to wait for."""
        if self.info is None or self.info in self._closed:
            return
        try:
            os.set_blocking(self.info, False)
            said = json.loads(os.read(self.info, 4096) or b"{}")
            pid, namespace = int(said["child-pid"]), said.get("pid-namespace")
            handle = os.pidfd_open(pid)
        except (OSError, ValueError, KeyError, TypeError):
            return  # gone already, or nothing said: nothing to wait for
        try:
            # The number may be another process's by now: only our sandbox's PID 1 counts.
            if namespace is None or os.readlink(f"/proc/{pid}/ns/pid") == f"pid:[{namespace}]":
                select.select([handle], [], [], timeout)
        except OSError:
            pass
        finally:
            os.close(handle)

    def _close_once(self, fds: Iterable[int]) -> None:
        with self._lock:
            for fd in fds:
                if fd in self._closed:
                    continue
                self._closed.add(fd)
                with contextlib.suppress(OSError):
                    os.close(fd)
