"""What `session/load` needs: each ACP conversation's messages, kept in the user's state directory.

A conversation is saved after every turn as `<state>/smol-instruments/acp-sessions/<id>.json`
(its folder and its turns: the user's message and the answer). Loading replays them to the
editor; a session loaded in a new process also gives the agent a short account of them with the
next message (smolagents' memory itself is not persisted). Ids are checked before they become
file names; a file that is not what was written is reported as unknown, never trusted.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..base.beneath import Beneath, Refused
from ..base.userdirs import default_log_file

log = logging.getLogger(__name__)

SESSION_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
#: What the agent is told of an earlier conversation, at most (characters per message).
RECALL_CHARS = 600
MAX_TURNS = 200
#: A message kept for replay, at most (attached files can be large).
KEEP_CHARS = 20_000


def sessions_dir() -> Path:
    return default_log_file().parent / "acp-sessions"


@dataclass
class Transcript:
    session_id: str
    cwd: str
    turns: list[dict[str, str]] = field(default_factory=list)

    def add(self, user: str, answer: str) -> None:
        self.turns.append({"user": user[:KEEP_CHARS], "answer": answer[:KEEP_CHARS]})
        del self.turns[:-MAX_TURNS]

    def recall(self) -> str:
        """The earlier turns, shortened, as a preface to the next message of a loaded session."""
        if not self.turns:
            return ""
        lines = ["Earlier in this conversation:"]
        for turn in self.turns[-6:]:
            lines.append(f"- the user asked: {turn['user'][:RECALL_CHARS]}")
            lines.append(f"  you answered: {turn['answer'][:RECALL_CHARS]}")
        return "\n".join(lines)


class Transcripts:
    """The saved conversations, one JSON file each."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory or sessions_dir()

    def _path(self, session_id: str) -> Path | None:
        return self.directory / f"{session_id}.json" if SESSION_ID.match(session_id) else None

    def save(self, transcript: Transcript) -> None:
        path = self._path(transcript.session_id)
        if path is None:
            return
        data = {
            "sessionId": transcript.session_id,
            "cwd": transcript.cwd,
            "turns": transcript.turns,
        }
        try:
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            with Beneath(self.directory) as tree:
                tree.write_atomic(
                    path.name, json.dumps(data, ensure_ascii=False).encode(), mode=0o600
                )
        except (OSError, Refused) as exc:  # a conversation that cannot be saved still runs
            log.warning("cannot save the conversation %s: %s", transcript.session_id, exc)

    def load(self, session_id: str) -> Transcript | None:
        path = self._path(session_id)
        if path is None or not path.is_file():
            return None
        try:
            data: Any = json.loads(path.read_text(encoding="utf-8"))
            turns = [{"user": str(t["user"]), "answer": str(t["answer"])} for t in data["turns"]]
            return Transcript(session_id, str(data["cwd"]), turns)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("the saved conversation %s is unreadable: %s", session_id, exc)
            return None
