"""Agents waiting in `apply_patch` for the user's decision on a patch, woken when it comes.

A plain object shared by the approvals feature (the agent's side: `wait`) and the patches
feature (the user's side: `resolve`). A cancelled run stops waiting within 0.1 s.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from ..safety.approval import Decision


@dataclass
class _Waiter:
    event: threading.Event = field(default_factory=threading.Event)
    decision: Decision | None = None


class PatchDecisions:
    """Agents waiting in `apply_patch`, each woken by the user's decision on its patch."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiters: dict[str, list[_Waiter]] = {}

    def wait(
        self, patch_id: str, timeout: float, cancel: threading.Event | None
    ) -> Decision | None:
        """The decision on `patch_id`, or None when none came within `timeout` seconds."""
        waiter = _Waiter()
        with self._lock:
            self._waiters.setdefault(patch_id, []).append(waiter)
        try:
            remaining = timeout
            while remaining > 0:
                if waiter.event.wait(min(0.1, remaining)):
                    return waiter.decision
                if cancel is not None and cancel.is_set():
                    return Decision(False, "cancelled", "the run was cancelled")
                remaining -= 0.1
            return None
        finally:
            with self._lock:
                waiters = self._waiters.get(patch_id, [])
                if waiter in waiters:
                    waiters.remove(waiter)

    def resolve(self, patch_id: str, decision: Decision) -> int:
        """Wake every agent waiting on `patch_id`; how many there were."""
        with self._lock:
            waiters = self._waiters.pop(patch_id, [])
        for waiter in waiters:
            waiter.decision = decision
            waiter.event.set()
        return len(waiters)
