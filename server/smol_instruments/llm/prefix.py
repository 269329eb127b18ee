"""The fixed start of every conversation, read by the model once: before the first question, and
kept across restarts.

Every first request of a conversation starts with the same message: the system prompt with the
tools and the repository's file list (built by the agent, `AgentSession.prefix_messages()`).
llama.cpp's server keeps the prompt it last evaluated and evaluates only what follows the part
a new prompt shares with it. `warm()` has the embedded server read that message on its own,
as a request for one token, while the user is still typing; the first question then costs its
own tokens only. On a 2-core CPU that is the difference between about 25 s and 1 s before the
first word (bench/first.py measures it).

The evaluated state is also saved to a file (llama.cpp's slot save: `--slot-save-path`,
`POST /slots/0?action=save`) named after a hash of the model file, the context size and the
messages; a server started later restores it (`action=restore`, milliseconds for a few MB)
instead of reading the prefix again. A file that does not restore (another llama.cpp build, a
truncated write) costs one log line and the prefix is read as if there were none.

Progress: the server reports how far it has read (`return_progress`, after each batch of
`--batch` tokens); `warm()` passes it on as (tokens read, tokens in all).
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .embedded import EmbeddedServer

log = logging.getLogger(__name__)

#: (prompt tokens read so far, prompt tokens in all), as the server reports them.
ReadProgress = Callable[[int, int], None]
#: A prefix that cost fewer tokens than this to read is not worth a file.
SAVE_AT_LEAST = 64
#: Prefix files kept (the oldest go): one per repository in use, about 30 MB each for the
#: 1.5B model's 1,000 tokens.
KEEP_FILES = 8


@dataclass(frozen=True)
class Warmed:
    """What warming did: the prefix's size, what had to be read, and how long it took."""

    tokens: int
    evaluated: int
    restored: bool
    seconds: float
    saved: bool = False

    def describe(self) -> str:
        how = "restored from its file" if self.restored else f"{self.evaluated:,} tokens read"
        return f"the model's instructions ({self.tokens:,} tokens): {how} in {self.seconds:.1f} s"


def prefix_key(server: EmbeddedServer, messages: Sequence[dict[str, Any]]) -> str:
    """Names the evaluated state of `messages` on this model with this context size."""
    try:
        size = server.model_path.stat().st_size
    except OSError:
        size = 0
    identity = json.dumps(
        [server.model_path.name, size, server.context, list(messages)], sort_keys=True
    )
    return hashlib.sha256(identity.encode()).hexdigest()[:32]


def warm(
    server: EmbeddedServer,
    messages: Sequence[dict[str, Any]],
    *,
    on_progress: ReadProgress | None = None,
    cancel: threading.Event | None = None,
) -> Warmed:
    """Have `server` hold the evaluated `messages`: restored from their file, else read (and
    then saved when the server has a slot folder). Raises OSError/ValueError when the server
    does not answer as llama.cpp's does."""
    started = time.monotonic()
    name = f"prefix-{prefix_key(server, messages)}.bin"
    restored = _restore(server, name)
    timings, tokens = _read(server, messages, on_progress, cancel)
    evaluated = int(timings.get("prompt_n") or 0)
    saved = False
    if server.slot_dir is not None and evaluated >= SAVE_AT_LEAST:
        saved = _save(server, name)
    warmed = Warmed(
        tokens=tokens,
        evaluated=evaluated,
        restored=restored and evaluated < SAVE_AT_LEAST,
        seconds=round(time.monotonic() - started, 2),
        saved=saved,
    )
    log.info("%s", warmed.describe())
    return warmed


def _read(
    server: EmbeddedServer,
    messages: Sequence[dict[str, Any]],
    on_progress: ReadProgress | None,
    cancel: threading.Event | None,
) -> tuple[dict[str, Any], int]:
    """Ask for one token after `messages` (and an empty user turn, as a question follows);
    the server's timings of that request and the prompt's size."""
    body = {
        "messages": [*messages, {"role": "user", "content": ""}],
        "max_tokens": 1,
        "temperature": 0,
        "return_progress": True,
        "stream_options": {"include_usage": True},
    }
    timings: dict[str, Any] = {}
    tokens = 0
    for event in server.stream("/v1/chat/completions", body):
        if cancel is not None and cancel.is_set():
            break  # closing the stream makes the server stop too
        progress = event.get("prompt_progress")
        if isinstance(progress, dict):
            total = int(progress.get("total") or 0)
            done = int(progress.get("processed") or 0)
            tokens = total or tokens
            if on_progress is not None and total:
                on_progress(done, total)
        if isinstance(event.get("timings"), dict):
            timings = event["timings"]
        usage = event.get("usage")
        if isinstance(usage, dict) and usage.get("prompt_tokens"):
            tokens = int(usage["prompt_tokens"])
    return timings, tokens


def _restore(server: EmbeddedServer, name: str) -> bool:
    if server.slot_dir is None or not (server.slot_dir / name).is_file():
        return False
    try:
        answer = server.post("/slots/0?action=restore", {"filename": name}, timeout=60)
    except (OSError, ValueError) as exc:
        log.info("the saved prefix %s did not restore (%s); it is read again", name, exc)
        return False
    return int(answer.get("n_restored") or 0) > 0


def _save(server: EmbeddedServer, name: str) -> bool:
    assert server.slot_dir is not None
    try:
        server.post("/slots/0?action=save", {"filename": name}, timeout=60)
    except (OSError, ValueError) as exc:
        log.info("the prefix could not be saved (%s); the next start reads it again", exc)
        return False
    _forget_old(server)
    return True


def _forget_old(server: EmbeddedServer) -> None:
    """Keep the KEEP_FILES newest prefix files (each is a few MB)."""
    assert server.slot_dir is not None
    dated = []
    for path in server.slot_dir.glob("prefix-*.bin"):
        try:
            dated.append((path.stat().st_mtime, path))
        except OSError:
            continue  # another process removed it
    for _, old in sorted(dated, reverse=True)[KEEP_FILES:]:
        old.unlink(missing_ok=True)
