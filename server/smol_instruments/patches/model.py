"""The patch model: what the agent proposes, file by file and hunk by hunk, and what was decided.

A `Patch` holds `FileChange`s; a file change holds `Hunk`s placed in one text, its `base` (the
file as the patch was proposed against it, or as it became when a sibling hunk was accepted).
Every hunk has a stable id (numbered across the patch's files at proposal, never renumbered)
and its own status; the patch's status is derived from its hunks, never stored. A hunk carries
its old lines, its new lines and up to CONTEXT lines either side, so `locate` can find it again
in a text that moved (at an offset, and with the outer context lines dropped, as `patch` does).
Plain data and pure functions on text: no LSP types, no I/O.
"""

from __future__ import annotations

import difflib
import hashlib
import time
from dataclasses import dataclass, field
from typing import Any, Literal, cast

CONTEXT = 3
#: The most characters a proposed change (old_text, new_text, a diff) may have.
MAX_PATCH_CHARS = 200_000
MAX_FUZZ = 2

HunkStatus = Literal["pending", "accepted", "rejected", "stale", "failed"]
PatchStatus = Literal["pending", "accepted", "partial", "rejected", "stale", "failed"]
HUNK_STATUSES: frozenset[str] = frozenset({"pending", "accepted", "rejected", "stale", "failed"})


def split_lines(text: str | None) -> list[str]:
    """Lines with their endings, split on '\\n' only (the way LSP and editors count lines)."""
    if not text:
        return []
    pieces = text.split("\n")
    lines = [piece + "\n" for piece in pieces[:-1]]
    if pieces[-1]:
        lines.append(pieces[-1])
    return lines


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def printable(text: str) -> str:
    """Text safe to show or send as JSON: undecodable bytes (kept exactly for writing) become U+FFFD."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _loose(line: str) -> str:
    return " ".join(line.split())


def _find(lines: list[str], block: list[str], near: int, loose: bool) -> int | None:
    """The start of `block` in `lines` nearest to `near`, or None."""
    last = len(lines) - len(block)
    if last < 0:
        return None
    if loose:
        lines, block = [_loose(x) for x in lines], [_loose(x) for x in block]
    near = min(max(near, 0), last)
    for distance in range(max(near, last - near) + 1):
        for at in (near - distance, near + distance):
            if 0 <= at <= last and lines[at : at + len(block)] == block:
                return at
    return None


def locate(
    lines: list[str],
    before: list[str],
    old: list[str],
    after: list[str],
    near: int,
    *,
    loose: bool = False,
    max_fuzz: int = MAX_FUZZ,
) -> int | None:
    """Where `old` sits in `lines` with `before` just above it and `after` just below.

    The nearest match to line `near` wins; when none matches, the outermost context lines are
    dropped one at a time (up to `max_fuzz`). With `loose`, whitespace is not compared. A hunk
    with nothing to anchor on (no old lines, no context) is found only in an empty text.
    """
    for fuzz in range(max_fuzz + 1):
        b = before[min(fuzz, len(before)) :]
        a = after[: max(0, len(after) - fuzz)]
        if fuzz and len(b) == len(before) and len(a) == len(after):
            break  # nothing left to drop
        block = b + old + a
        if not block:
            return 0 if not lines else None
        found = _find(lines, block, near - len(b), loose)
        if found is not None:
            return found + len(b)
    return None


@dataclass
class Hunk:
    """One replaced region. `start` is its first old line in the file's `base` (0-based)."""

    id: int
    start: int
    old: list[str]
    new: list[str]
    before: list[str]
    after: list[str]
    status: HunkStatus = "pending"
    reason: str | None = None

    @property
    def end(self) -> int:
        return self.start + len(self.old)

    @property
    def pending(self) -> bool:
        return self.status == "pending"

    def locate(self, lines: list[str]) -> int | None:
        return locate(lines, self.before, self.old, self.after, self.start)

    def placed(self, lines: list[str], start: int) -> Hunk:
        """This hunk at `start` of `lines`, its context taken from there (the same id)."""
        end = start + len(self.old)
        return Hunk(
            id=self.id,
            start=start,
            old=list(self.old),
            new=list(self.new),
            before=lines[max(0, start - CONTEXT) : start],
            after=lines[end : end + CONTEXT],
            status=self.status,
            reason=self.reason,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "start": self.start,
            "old": self.old,
            "new": self.new,
            "before": self.before,
            "after": self.after,
            "status": self.status,
            "reason": self.reason,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Hunk:
        status = data.get("status", "pending")
        if status not in HUNK_STATUSES:
            raise ValueError(f"unknown hunk status {status!r}")
        hunk = cls(
            id=_int(data["id"]),
            start=_int(data["start"]),
            old=_lines(data["old"]),
            new=_lines(data["new"]),
            before=_lines(data.get("before", [])),
            after=_lines(data.get("after", [])),
            status=cast(HunkStatus, status),
            reason=_optional_str(data.get("reason")),
        )
        if hunk.start < 0:
            raise ValueError("a hunk starts before the first line")
        return hunk


def hunks_between(old: str | None, new: str | None, first_id: int = 0) -> list[Hunk]:
    """The hunks that turn `old` into `new`: one per changed region, ids from `first_id`."""
    old_lines, new_lines = split_lines(old), split_lines(new)
    if new is None or old is None:  # a deletion or a creation is one hunk, even when empty
        return [Hunk(first_id, 0, old_lines, new_lines, [], [])]
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    hunks: list[Hunk] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        hunk = Hunk(first_id + len(hunks), i1, old_lines[i1:i2], new_lines[j1:j2], [], [])
        hunks.append(hunk.placed(old_lines, i1))
    return hunks


def apply_placed(lines: list[str], hunks: list[Hunk]) -> list[str]:
    """`lines` with each hunk's old lines, at its `start`, replaced by its new lines."""
    result = list(lines)
    for hunk in sorted(hunks, key=lambda h: (h.start, h.id), reverse=True):
        result[hunk.start : hunk.end] = hunk.new
    return result


@dataclass
class FileChange:
    """One file of a patch.

    `original` is the file when the patch was proposed (None: the patch creates it) and
    `proposed` what the agent wanted it to become (None: deleted); `base` is the text the
    pending hunks are placed in (`original`, until a sibling hunk is accepted).
    """

    path: str
    original: str | None
    proposed: str | None
    base: str | None
    hunks: list[Hunk]

    @classmethod
    def between(cls, path: str, old: str | None, new: str | None, first_id: int = 0) -> FileChange:
        return cls(path, old, new, old, hunks_between(old, new, first_id))

    @property
    def deletes(self) -> bool:
        """Accepting the file's one hunk removes the file."""
        return self.proposed is None

    @property
    def creates(self) -> bool:
        return self.original is None

    @property
    def base_hash(self) -> str | None:
        return None if self.base is None else sha256_text(self.base)

    def pending(self) -> list[Hunk]:
        return [h for h in self.hunks if h.pending]

    def proposed_text(self) -> str | None:
        """What the file would be with every pending hunk written into its base."""
        if self.deletes and self.pending():
            return None
        return "".join(apply_placed(split_lines(self.base), self.pending()))

    def stats(self) -> tuple[int, int]:
        return sum(len(h.new) for h in self.hunks), sum(len(h.old) for h in self.hunks)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "original": self.original,
            "proposed": self.proposed,
            "base": self.base,
            "hunks": [h.to_dict() for h in self.hunks],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FileChange:
        path = data["path"]
        if not isinstance(path, str):
            raise ValueError("a file's path must be a string")
        hunks = [Hunk.from_dict(h) for h in data["hunks"]]
        return cls(
            path=path,
            original=_optional_str(data.get("original")),
            proposed=_optional_str(data.get("proposed")),
            base=_optional_str(data.get("base")),
            hunks=hunks,
        )

    def check(self) -> None:
        """ValueError unless every pending hunk sits where it says in `base`."""
        lines = split_lines(self.base)
        if self.creates and self.deletes:
            raise ValueError(f"{self.path}: a patch cannot both create and delete a file")
        if (self.creates or self.deletes) and len(self.hunks) != 1:
            raise ValueError(f"{self.path}: a created or deleted file has exactly one hunk")
        if self.creates and self.pending() and (self.base is not None or self.hunks[0].old):
            raise ValueError(f"{self.path}: a file to create has no old text")
        if self.deletes and self.hunks[0].new:
            raise ValueError(f"{self.path}: a file to delete has no new text")
        for hunk in self.pending():
            if hunk.end > len(lines) or lines[hunk.start : hunk.end] != hunk.old:
                raise ValueError(f"{self.path}: hunk {hunk.id} does not match its base")


@dataclass
class Patch:
    """A proposed change: its files, each hunk's decision, and the sandbox's validation."""

    id: str
    summary: str
    files: list[FileChange]
    session_id: str | None = None
    validation: dict[str, Any] = field(default_factory=dict)
    reason: str | None = None
    trace_id: str | None = None
    created_at: float = field(default_factory=time.time)
    #: Bumped on every change, so a decision planned against one state is not committed on another.
    revision: int = 0

    @property
    def hunks(self) -> list[Hunk]:
        return [h for f in self.files for h in f.hunks]

    @property
    def status(self) -> PatchStatus:
        """Pending while any hunk is; then what the hunks' decisions add up to."""
        statuses = [h.status for h in self.hunks]
        if not statuses or "pending" in statuses:
            return "pending"
        if all(s == "accepted" for s in statuses):
            return "accepted"
        if "accepted" in statuses:
            return "partial"
        if all(s == "rejected" for s in statuses):
            return "rejected"
        return "failed" if "failed" in statuses else "stale"

    @property
    def resolved(self) -> bool:
        return self.status != "pending"

    def hunk(self, hunk_id: int) -> tuple[FileChange, Hunk] | None:
        for change in self.files:
            for hunk in change.hunks:
                if hunk.id == hunk_id:
                    return change, hunk
        return None

    def stats(self) -> tuple[int, int]:
        added = removed = 0
        for change in self.files:
            a, r = change.stats()
            added, removed = added + a, removed + r
        return added, removed

    def to_dict(self) -> dict[str, Any]:
        """The persisted form (everything, texts included)."""
        return {
            "id": self.id,
            "summary": self.summary,
            "files": [f.to_dict() for f in self.files],
            "session_id": self.session_id,
            "validation": self.validation,
            "reason": self.reason,
            "trace_id": self.trace_id,
            "created_at": self.created_at,
            "revision": self.revision,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Patch:
        """The patch `to_dict` made; ValueError/KeyError/TypeError for anything else."""
        patch_id = data["id"]
        if not isinstance(patch_id, str) or not patch_id.isalnum():
            raise ValueError(f"bad patch id {patch_id!r}")
        validation = data.get("validation") or {}
        if not isinstance(validation, dict):
            raise ValueError("validation must be an object")
        patch = cls(
            id=patch_id,
            summary=str(data.get("summary", "")),
            files=[FileChange.from_dict(f) for f in data["files"]],
            session_id=_optional_str(data.get("session_id")),
            validation=validation,
            reason=_optional_str(data.get("reason")),
            trace_id=_optional_str(data.get("trace_id")),
            created_at=float(data.get("created_at", time.time())),
            revision=_int(data.get("revision", 0)),
        )
        ids = [h.id for h in patch.hunks]
        if not ids or len(set(ids)) != len(ids):
            raise ValueError("a patch needs hunks with distinct ids")
        for change in patch.files:
            change.check()
        return patch


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"expected an integer, got {value!r}")
    return value


def _lines(value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise ValueError("expected a list of lines")
    return list(value)


def _optional_str(value: Any) -> str | None:
    if value is not None and not isinstance(value, str):
        raise ValueError(f"expected a string, got {type(value).__name__}")
    return value
