"""Proposed patches: what the agent wants to change, kept until the user accepts or rejects it.

A patch holds, per file, the exact text it was made against (with its hash) and the text it
proposes, so it can always be shown as a diff, turned into editor edits, checked for
staleness (the file changed since) and applied atomically, all without re-running `patch`.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import secrets
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

PatchStatus = Literal["pending", "accepted", "rejected", "stale", "failed"]
RESOLVED: frozenset[str] = frozenset({"accepted", "rejected", "stale", "failed"})


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_text(text: str) -> str:
    return sha256_bytes(text.encode("utf-8"))


def printable(text: str) -> str:
    """Text safe to show or send as JSON: undecodable bytes (kept exactly for writing) become U+FFFD."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def unified_diff(path: str, old: str | None, new: str | None, context: int = 3) -> str:
    """A git-style diff (a/ b/ paths, creation and deletion headers) that `git apply` takes."""
    old_lines = (old or "").splitlines(keepends=True)
    new_lines = (new or "").splitlines(keepends=True)
    header = [f"diff --git a/{path} b/{path}\n"]
    if old is None:
        header.append("new file mode 100644\n")
    elif new is None:
        header.append("deleted file mode 100644\n")
    body = difflib.unified_diff(
        old_lines,
        new_lines,
        fromfile="/dev/null" if old is None else f"a/{path}",
        tofile="/dev/null" if new is None else f"b/{path}",
        n=context,
    )
    out: list[str] = []
    for line in body:
        if not line.endswith("\n"):
            line += "\n\\ No newline at end of file\n"
        out.append(line)
    if not out:
        return ""
    return "".join(header + out)


@dataclass
class Hunk:
    """One replaced region, in the coordinates of the old text (0-based lines, end exclusive)."""

    old_start: int
    old_end: int
    new_text: str
    added: int
    removed: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "old_start": self.old_start,
            "old_end": self.old_end,
            "new_text": self.new_text,
            "added": self.added,
            "removed": self.removed,
        }


@dataclass
class FileChange:
    """One file of a patch: `old_text` None means created, `new_text` None means deleted."""

    path: str
    old_text: str | None
    new_text: str | None

    @property
    def base_hash(self) -> str | None:
        return None if self.old_text is None else sha256_text(self.old_text)

    @property
    def diff(self) -> str:
        return unified_diff(self.path, self.old_text, self.new_text)

    def hunks(self) -> list[Hunk]:
        old_lines = (self.old_text or "").splitlines(keepends=True)
        new_lines = (self.new_text or "").splitlines(keepends=True)
        matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
        hunks = []
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                continue
            hunks.append(Hunk(i1, i2, "".join(new_lines[j1:j2]), j2 - j1, i2 - i1))
        return hunks

    def stats(self) -> tuple[int, int]:
        added = removed = 0
        for hunk in self.hunks():
            added += hunk.added
            removed += hunk.removed
        return added, removed

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "old_text": self.old_text, "new_text": self.new_text}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FileChange:
        return cls(data["path"], data.get("old_text"), data.get("new_text"))


@dataclass
class Patch:
    id: str
    summary: str
    files: list[FileChange]
    status: PatchStatus = "pending"
    session_id: str | None = None
    validation: dict[str, Any] = field(default_factory=dict)
    status_reason: str | None = None
    trace_id: str | None = None
    created_at: float = field(default_factory=time.time)

    @property
    def diff(self) -> str:
        return "".join(f.diff for f in self.files)

    def stats(self) -> tuple[int, int]:
        added = removed = 0
        for change in self.files:
            a, r = change.stats()
            added += a
            removed += r
        return added, removed

    def to_dict(self) -> dict[str, Any]:
        """The persisted form (everything, including the texts)."""
        return {
            "id": self.id,
            "summary": self.summary,
            "files": [f.to_dict() for f in self.files],
            "status": self.status,
            "session_id": self.session_id,
            "validation": self.validation,
            "status_reason": self.status_reason,
            "trace_id": self.trace_id,
            "created_at": self.created_at,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Patch:
        return cls(
            id=data["id"],
            summary=data.get("summary", ""),
            files=[FileChange.from_dict(f) for f in data.get("files", [])],
            status=data.get("status", "pending"),
            session_id=data.get("session_id"),
            validation=data.get("validation") or {},
            status_reason=data.get("status_reason"),
            trace_id=data.get("trace_id"),
            created_at=data.get("created_at", time.time()),
        )

    def to_protocol(self, root: Path) -> dict[str, Any]:
        """PROTOCOL.md's Patch object: uris, diffs and LSP ranges per hunk."""
        files = []
        for change in self.files:
            old_lines = (change.old_text or "").splitlines(keepends=True)
            hunks = []
            for hunk in change.hunks():
                start = {"line": hunk.old_start, "character": 0}
                end = _position_after(old_lines, hunk.old_end)
                hunks.append(
                    {"range": {"start": start, "end": end}, "newText": printable(hunk.new_text)}
                )
            files.append(
                {
                    "uri": (root / change.path).as_uri(),
                    "path": change.path,
                    "diff": printable(change.diff),
                    "hunks": hunks,
                }
            )
        added, removed = self.stats()
        data: dict[str, Any] = {
            "id": self.id,
            "sessionId": self.session_id,
            "summary": self.summary,
            "status": self.status,
            "files": files,
            "validation": self.validation,
            "added": added,
            "removed": removed,
        }
        if self.status_reason:
            data["statusReason"] = self.status_reason
        if self.trace_id:
            data["traceId"] = self.trace_id
        return data


def _position_after(lines: list[str], index: int) -> dict[str, int]:
    """The LSP position where line `index` starts; past the last line, the end of the text."""
    if index < len(lines):
        return {"line": index, "character": 0}
    if not lines:
        return {"line": 0, "character": 0}
    last = lines[-1]
    if last.endswith("\n"):
        return {"line": len(lines), "character": 0}
    return {"line": len(lines) - 1, "character": len(last)}


class StalePatch(Exception):
    def __init__(self, paths: list[str]) -> None:
        super().__init__(f"changed since the patch was made: {', '.join(paths)}")
        self.paths = paths


def read_text(path: Path) -> str | None:
    """A file's text exactly as stored (line endings kept), None when it does not exist."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    return data.decode("utf-8", errors="surrogateescape")


def atomic_write(path: Path, text: str) -> None:
    """Write through a temporary file in the same directory and rename it over the target."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = None
    try:
        mode = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        pass
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".smol-tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8", errors="surrogateescape"))
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


class PatchStore:
    """All patches of a repository: in memory, and persisted when given a directory.

    Listeners are told of every new patch and every status change (the host turns that into
    `patch` events and editor diagnostics).
    """

    keep = 200

    def __init__(self, root: Path, persist_dir: Path | None = None) -> None:
        self.root = root
        self.persist_dir = persist_dir
        self._lock = threading.RLock()
        self._patches: dict[str, Patch] = {}
        self._listeners: list[Callable[[Patch], None]] = []
        if persist_dir is not None:
            self._load()

    def subscribe(self, listener: Callable[[Patch], None]) -> Callable[[], None]:
        with self._lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe

    def new_id(self) -> str:
        with self._lock:
            while True:
                candidate = "p" + secrets.token_hex(3)
                if candidate not in self._patches:
                    return candidate

    def add(self, patch: Patch) -> Patch:
        with self._lock:
            self._patches[patch.id] = patch
            self._prune()
            self._save(patch)
        self._notify(patch)
        return patch

    def get(self, patch_id: str) -> Patch | None:
        with self._lock:
            return self._patches.get(patch_id)

    def all(self) -> list[Patch]:
        with self._lock:
            return sorted(self._patches.values(), key=lambda p: p.created_at)

    def set_status(self, patch_id: str, status: PatchStatus, reason: str | None = None) -> Patch:
        with self._lock:
            patch = self._patches[patch_id]
            patch.status = status
            patch.status_reason = reason
            self._save(patch)
        self._notify(patch)
        return patch

    def stale_paths(self, patch: Patch) -> list[str]:
        """Files whose content on disk no longer matches what the patch was made against."""
        stale = []
        for change in patch.files:
            try:
                current = read_text(self.root / change.path)
            except OSError:  # a path component became a file, the file a directory, ...
                stale.append(change.path)
                continue
            if current != change.old_text:
                stale.append(change.path)
        return stale

    def check_paths(self, patch: Patch) -> None:
        """Every path still resolves inside the root (a symlink may have appeared since)."""
        from ..safety.jail import PathJail

        jail = PathJail(self.root)
        for change in patch.files:
            jail.resolve(change.path, for_write=True)

    def write(self, patch: Patch) -> None:
        """Apply the patch to the working tree, all files or none; StalePatch if a base changed."""
        with self._lock:
            self.check_paths(patch)  # ToolError PATH_OUTSIDE_REPO
            stale = self.stale_paths(patch)
            if stale:
                raise StalePatch(stale)
            done: list[FileChange] = []
            try:
                for change in patch.files:
                    target = self.root / change.path
                    if change.new_text is None:
                        target.unlink()
                    else:
                        atomic_write(target, change.new_text)
                    done.append(change)
            except BaseException:
                for change in reversed(done):  # put back what was already written
                    target = self.root / change.path
                    if change.old_text is None:
                        target.unlink(missing_ok=True)
                    else:
                        atomic_write(target, change.old_text)
                raise

    def _notify(self, patch: Patch) -> None:
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(patch)
            except Exception:  # a host's listener must not break the tool
                pass

    def _prune(self) -> None:
        if len(self._patches) <= self.keep:
            return
        resolved = [p for p in self.all() if p.status in RESOLVED]
        for patch in resolved[: len(self._patches) - self.keep]:
            del self._patches[patch.id]
            if self.persist_dir is not None:
                (self.persist_dir / f"{patch.id}.json").unlink(missing_ok=True)

    def _save(self, patch: Patch) -> None:
        if self.persist_dir is None:
            return
        try:
            self.persist_dir.mkdir(parents=True, exist_ok=True)
            atomic_write(self.persist_dir / f"{patch.id}.json", json.dumps(patch.to_dict()))
        except OSError:
            pass  # persistence is a convenience; the in-memory store stays authoritative

    def _load(self) -> None:
        assert self.persist_dir is not None
        if not self.persist_dir.is_dir():
            return
        for file in self.persist_dir.glob("p*.json"):
            try:
                patch = Patch.from_dict(json.loads(file.read_text()))
            except (OSError, ValueError, KeyError, TypeError):
                continue
            self._patches[patch.id] = patch
