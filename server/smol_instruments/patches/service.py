"""THE patch lifecycle: propose, accept(hunks), reject(hunks), stale, await the decision.

One state machine, used by the tools, the command line and the daemon alike. A hunk is
`pending` until it is decided: `accepted` (written), `rejected` (dropped), `stale` (its region
of the file changed since the proposal; nothing written for it) or `failed` (the write itself
failed). Accepting hunk k writes hunk k only; the patch's other pending hunks stay pending,
re-based on the new text with their ids unchanged. A stale hunk does not block its siblings:
each is found again on its own (at an offset, with fuzz, as `patch` does). The patch's status
is derived from its hunks.

Accepting is two steps so a host can carry out the write itself: `plan` places the chosen
hunks in the text as it is now (the editor's live buffer, or the disk) and says what to write;
`commit` records it. `accept` does both with an atomic write to disk. Every path is checked by
the guard at proposal, persistence, load and both accept paths; every read and write of the
repository's files (and the rollback of a failed accept) goes through `jail.tree`
(base/beneath.py), so a folder swapped for a link after the check is refused, not followed.
"""

from __future__ import annotations

import copy
import logging
import secrets
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..base.errors import ErrorType, ToolError
from ..safety.jail import PathJail
from .diff import unified_diff
from .guard import check_patch, patch_path
from .model import FileChange, Hunk, Patch, split_lines
from .store import PatchStore, read_text, write_text

log = logging.getLogger(__name__)

Reader = Callable[[str], "str | None"]
Listener = Callable[[Patch], None]


class _Blocked:
    """The file cannot be read: a file sits where a directory should, or the reverse."""

    def __init__(self, why: str) -> None:
        self.why = why


@dataclass
class FileEdit:
    """What accepting does to one file: `edits` are (first line, end line, new text) in `current`."""

    path: str
    current: str | None
    result: str | None
    edits: list[tuple[int, int, str]]


@dataclass
class Plan:
    """An accept worked out against the text as it is now, to be carried out, then committed."""

    patch: Patch  # the patch as it will be once committed
    revision: int
    writes: list[FileEdit]
    accepted: list[int] = field(default_factory=list)
    stale: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)


@dataclass
class Outcome:
    """What a decision did: the patch after it, and the hunks it decided, by result."""

    patch: Patch
    accepted: list[int] = field(default_factory=list)
    rejected: list[int] = field(default_factory=list)
    stale: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)
    files: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"status": self.patch.status}
        for name in ("accepted", "rejected", "stale", "failed", "files"):
            if getattr(self, name):
                data[name] = getattr(self, name)
        return data


def not_pending(patch: Patch) -> ToolError:
    return ToolError(
        ErrorType.PATCH_NOT_PENDING,
        f"patch {patch.id} is {patch.status}: no hunk of it is pending",
        recovery_suggestion="Propose a new patch for further changes.",
    )


def diff_of(patch: Patch, *, pending: bool = False) -> str:
    """The patch as a git diff: as proposed, or (`pending`) what accepting the rest would do."""
    parts = []
    for change in patch.files:
        if pending:
            if change.pending():
                parts.append(unified_diff(change.path, change.base, change.proposed_text()))
        else:
            parts.append(unified_diff(change.path, change.original, change.proposed))
    return "".join(parts)


class PatchService:
    """The patches of one repository, in memory and (given a store directory) on disk."""

    keep = 200

    def __init__(self, jail: PathJail, store: PatchStore | None = None) -> None:
        self.jail = jail
        self.store = store or PatchStore(None)
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        self._patches: dict[str, Patch] = {}
        self._listeners: list[Listener] = []
        self._load()

    @property
    def root(self) -> Path:
        return self.jail.root

    # --- queries ------------------------------------------------------------------------------

    def get(self, patch_id: str) -> Patch | None:
        with self._lock:
            return self._patches.get(patch_id)

    def all(self) -> list[Patch]:
        with self._lock:
            return sorted(self._patches.values(), key=lambda p: p.created_at)

    def require(self, patch_id: str) -> Patch:
        patch = self.get(patch_id)
        if patch is None:
            known = [p.id for p in self.all() if not p.resolved][-5:]
            raise ToolError(
                ErrorType.PATCH_NOT_FOUND,
                f"no patch with id {patch_id!r}",
                recovery_suggestion=(
                    f"Use a patch_id returned by propose_patch; pending ones: {known}."
                    if known
                    else "Propose a patch first with propose_patch(...)."
                ),
            )
        return patch

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call `listener` with every new patch and every change of one; returns the undo."""
        with self._lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe

    def read_disk(self, path: str) -> str | None:
        """The file's text on disk, after the guard (ToolError) has allowed the path."""
        return read_text(self.jail.tree, self.jail.relative(patch_path(self.jail, path)))

    def read_live(self, path: str, buffer: Callable[[str], str | None]) -> str | None:
        """The text as an editor has it (`buffer(uri)`, unsaved edits included), else the
        disk's; after the guard."""
        target = patch_path(self.jail, path)
        text = buffer(target.as_uri())
        return text if text is not None else read_text(self.jail.tree, self.jail.relative(target))

    # --- propose ------------------------------------------------------------------------------

    def propose(
        self,
        changes: list[tuple[str, str | None, str | None]],
        summary: str,
        *,
        session_id: str | None = None,
        validate: Callable[[str], dict[str, Any]] | None = None,
    ) -> Patch:
        """Store `(path, old, new)` changes as one pending patch, validated by `validate(diff)`."""
        files: list[FileChange] = []
        for path, old, new in changes:
            change = FileChange.between(path, old, new, first_id=sum(len(f.hunks) for f in files))
            if change.hunks:
                files.append(change)
        with self._lock:
            patch = Patch(id=self._new_id(), summary=summary, files=files, session_id=session_id)
        check_patch(self.jail, patch)
        if validate is not None:
            patch.validation = validate(diff_of(patch))
        with self._lock:
            self._patches[patch.id] = patch
            self._save(patch)
            self._prune()
        self._notify(patch)
        return patch

    def _new_id(self) -> str:
        while True:
            candidate = "p" + secrets.token_hex(3)
            if candidate not in self._patches:
                return candidate

    # --- decide -------------------------------------------------------------------------------

    def _chosen(self, patch: Patch, hunk_ids: Iterable[int] | None) -> set[int]:
        pending = {h.id for h in patch.hunks if h.pending}
        if not pending:
            raise not_pending(patch)
        if hunk_ids is None:
            return pending
        chosen = set(hunk_ids)
        unknown = chosen - {h.id for h in patch.hunks}
        if unknown or not chosen:
            raise ToolError(
                ErrorType.INVALID_ARGUMENT,
                f"patch {patch.id} has no hunk {sorted(unknown)}"
                if unknown
                else "no hunk was named",
                recovery_suggestion=f"Its pending hunks are {sorted(pending)}.",
            )
        decided = chosen - pending
        if decided:
            raise ToolError(
                ErrorType.PATCH_NOT_PENDING,
                f"hunk {sorted(decided)} of patch {patch.id} is already decided",
                recovery_suggestion=f"Its pending hunks are {sorted(pending)}.",
            )
        return chosen

    def plan(self, patch_id: str, hunk_ids: Iterable[int] | None, read: Reader) -> Plan:
        """Place the chosen pending hunks (default: all) in the text `read(path)` gives now."""
        with self._lock:
            patch = self.require(patch_id)
            chosen = self._chosen(patch, hunk_ids)
            check_patch(self.jail, patch)
            after = copy.deepcopy(patch)
            plan = Plan(after, patch.revision, [])
            for change in after.files:
                if any(h.id in chosen for h in change.pending()):
                    self._plan_file(plan, change, chosen, _read(read, change.path))
            return plan

    def _plan_file(
        self, plan: Plan, change: FileChange, chosen: set[int], current: str | _Blocked | None
    ) -> None:
        wanted = [h for h in change.pending() if h.id in chosen]
        if isinstance(current, _Blocked):
            return _mark(plan, wanted, "stale", current.why)
        if change.creates or change.deletes:
            [hunk] = wanted
            if change.creates and current is not None:
                return _mark(plan, wanted, "stale", f"{change.path} exists now")
            if change.deletes and current != change.base:
                return _mark(plan, wanted, "stale", f"{change.path} changed since the proposal")
            result = None if change.deletes else "".join(hunk.new)
            edits = [(0, len(hunk.old), "".join(hunk.new))]
            plan.writes.append(FileEdit(change.path, current, result, edits))
            change.base = result
            return _mark(plan, wanted, "accepted", None)
        if current is None:
            return _mark(plan, wanted, "stale", f"{change.path} was deleted")
        lines = split_lines(current)
        found = _place(lines, change.pending())
        apply = [(at, h) for at, h in found if h.id in chosen]
        missing = [h for h in wanted if h.id not in {x.id for _, x in apply}]
        _mark(plan, missing, "stale", "its lines changed since the proposal")
        if not apply:
            return None
        new_lines = list(lines)
        for at, hunk in sorted(apply, key=lambda p: (p[0], p[1].id), reverse=True):
            new_lines[at : at + len(hunk.old)] = hunk.new
        edits = [(at, at + len(h.old), "".join(h.new)) for at, h in apply]
        result = "".join(new_lines)
        plan.writes.append(FileEdit(change.path, current, result, edits))
        # Re-base the siblings that stay pending on the new text; ids are unchanged.
        located = {h.id: at for at, h in found}
        for index, hunk in enumerate(change.hunks):
            if not hunk.pending or hunk.id in chosen:
                continue
            if hunk.id not in located:
                _mark(plan, [hunk], "stale", "its lines changed since the proposal")
                continue
            at = located[hunk.id]
            shift = sum(len(a.new) - len(a.old) for b, a in apply if b + len(a.old) <= at)
            change.hunks[index] = hunk.placed(new_lines, at + shift)
        change.base = result
        for at, hunk in apply:
            hunk.start = at
        _mark(plan, [h for _, h in apply], "accepted", None)
        return None

    def commit(self, plan: Plan, how: str) -> Outcome:
        """Record a carried-out plan; ToolError if the patch changed since it was planned."""
        with self._lock:
            outcome = self._commit(plan, how)
        self._notify(outcome.patch)
        return outcome

    def _commit(self, plan: Plan, how: str) -> Outcome:
        current = self.require(plan.patch.id)
        if current.revision != plan.revision:
            raise ToolError(
                ErrorType.PATCH_NOT_PENDING,
                f"patch {current.id} changed while it was being accepted; nothing was recorded",
                recovery_suggestion="Look at the patch again and decide on what is pending.",
            )
        patch = plan.patch
        for hunk in patch.hunks:
            if hunk.id in plan.accepted:
                hunk.reason = how
        if plan.accepted:
            patch.reason = how
        elif plan.failed:
            patch.reason = _reasons(patch, plan.failed)
        else:
            patch.reason = "stale: " + _reasons(patch, plan.stale)
        self._store(patch)
        return Outcome(
            patch,
            accepted=plan.accepted,
            stale=plan.stale,
            failed=plan.failed,
            files=[w.path for w in plan.writes],
        )

    def accept(
        self, patch_id: str, hunk_ids: Iterable[int] | None = None, how: str = "written to disk"
    ) -> Outcome:
        """Write the chosen pending hunks (default: all) to disk, atomically, and record it."""
        with self._lock:
            plan = self.plan(patch_id, hunk_ids, self.read_disk)
            try:
                self._write(plan.writes)
            except OSError as exc:
                failed = self._plan_failure(plan, f"writing failed: {exc}; the files were restored")
                outcome = self._commit(failed, "failed")
            else:
                outcome = self._commit(plan, how)
        self._notify(outcome.patch)
        return outcome

    def _plan_failure(self, plan: Plan, why: str) -> Plan:
        failed = Plan(copy.deepcopy(self.require(plan.patch.id)), plan.revision, [])
        _mark(failed, [h for h in failed.patch.hunks if h.id in plan.stale], "stale", None)
        _mark(failed, [h for h in failed.patch.hunks if h.id in plan.accepted], "failed", why)
        return failed

    def _write(self, writes: list[FileEdit]) -> None:
        """Every file or none: what was written is put back when a later write fails."""
        tree = self.jail.tree
        done: list[FileEdit] = []
        try:
            for write in writes:
                target = self.jail.relative(patch_path(self.jail, write.path))
                if write.result is None:
                    tree.unlink(target)
                else:
                    write_text(tree, target, write.result, create=write.current is None)
                done.append(write)
        except BaseException:
            for write in reversed(done):
                try:
                    if write.current is None:
                        tree.unlink(write.path, missing_ok=True)
                    else:
                        write_text(tree, write.path, write.current)
                except (OSError, ToolError) as exc:  # e.g. its folder is a link now: not followed
                    log.warning("could not put back %s: %s", write.path, exc)
            raise

    def reject(
        self, patch_id: str, hunk_ids: Iterable[int] | None = None, reason: str | None = None
    ) -> Outcome:
        """Drop the chosen pending hunks (default: all); nothing is written, the rest stay pending."""
        with self._lock:
            patch = copy.deepcopy(self.require(patch_id))
            chosen = self._chosen(patch, hunk_ids)
            for hunk in patch.hunks:
                if hunk.id in chosen:
                    hunk.status, hunk.reason = "rejected", reason
            patch.reason = reason or "rejected"
            self._store(patch)
        self._notify(patch)
        return Outcome(patch, rejected=sorted(chosen))

    def refresh(self, patch_id: str, read: Reader | None = None) -> Outcome:
        """Mark stale the pending hunks that can no longer be found in the text `read` gives."""
        with self._lock:
            patch = self.require(patch_id)
            plan = Plan(copy.deepcopy(patch), patch.revision, [])
            for change in plan.patch.files:
                if not change.pending():
                    continue
                current = _read(read or self.read_disk, change.path)
                if isinstance(current, _Blocked):
                    _mark(plan, change.pending(), "stale", current.why)
                elif change.creates and current is not None:
                    _mark(plan, change.pending(), "stale", f"{change.path} exists now")
                elif change.deletes and current != change.base:
                    _mark(plan, change.pending(), "stale", f"{change.path} changed")
                elif not change.creates and not change.deletes:
                    if current is None:
                        _mark(plan, change.pending(), "stale", f"{change.path} was deleted")
                        continue
                    placed = {h.id for _, h in _place(split_lines(current), change.pending())}
                    lost = [h for h in change.pending() if h.id not in placed]
                    _mark(plan, lost, "stale", "its lines changed since the proposal")
            if not plan.stale:
                return Outcome(patch)
            outcome = self._commit(plan, "")
        self._notify(outcome.patch)
        return outcome

    def wait(
        self, patch_id: str, timeout: float, cancel: threading.Event | None = None
    ) -> Patch | None:
        """Block until no hunk of the patch is pending; the patch, pending still on timeout/cancel."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                patch = self._patches.get(patch_id)
                if patch is None or patch.resolved:
                    return patch
                remaining = deadline - time.monotonic()
                if remaining <= 0 or (cancel is not None and cancel.is_set()):
                    return patch
                self._changed.wait(min(0.1, remaining))

    # --- keeping ------------------------------------------------------------------------------

    def _store(self, patch: Patch) -> None:
        patch.revision += 1
        self._patches[patch.id] = patch
        self._save(patch)
        self._changed.notify_all()

    def _save(self, patch: Patch) -> None:
        try:
            check_patch(self.jail, patch)  # never persist what could not be loaded back
        except ToolError as exc:
            # Checked at proposal: the tree changed since (a folder became a link). What was
            # decided stands in memory; the record on disk stays as it was.
            log.warning("not persisting patch %s now: %s", patch.id, exc.message)
            return
        self.store.save(patch)

    def _notify(self, patch: Patch) -> None:
        with self._lock:
            listeners = list(self._listeners)
            self._changed.notify_all()
        for listener in listeners:
            try:
                listener(patch)
            except Exception:  # a host's listener must not break the tool
                log.exception("a patch listener failed")

    def _prune(self) -> None:
        if len(self._patches) <= self.keep:
            return
        resolved = [p for p in self.all() if p.resolved]
        for patch in resolved[: len(self._patches) - self.keep]:
            del self._patches[patch.id]
            self.store.remove(patch.id)

    def _load(self) -> None:
        """Patches left by an earlier run, each re-validated; an invalid one is dropped."""
        for patch in self.store.load():
            try:
                check_patch(self.jail, patch)
            except ToolError as exc:
                log.warning("dropping the stored patch %s: %s", patch.id, exc.message)
                continue
            self._patches[patch.id] = patch


def _read(read: Reader, path: str) -> str | _Blocked | None:
    try:
        return read(path)
    except OSError as exc:  # ToolError (a refused path) propagates: that is not staleness
        return _Blocked(f"{path} cannot be read ({exc.strerror or exc.__class__.__name__})")


def _place(lines: list[str], hunks: list[Hunk]) -> list[tuple[int, Hunk]]:
    """Where each hunk is in `lines` now; a hunk not found, or overlapping another, is left out."""
    found = sorted(
        ((at, h) for h in hunks if (at := h.locate(lines)) is not None),
        key=lambda p: (p[0], p[1].id),
    )
    placed: list[tuple[int, Hunk]] = []
    end = -1
    for at, hunk in found:
        if at < end or (placed and at == end and not hunk.old and not placed[-1][1].old):
            continue
        placed.append((at, hunk))
        end = at + len(hunk.old)
    return placed


def _mark(plan: Plan, hunks: list[Hunk], status: str, reason: str | None) -> None:
    ids = {h.id for h in hunks}
    for hunk in plan.patch.hunks:
        if hunk.id in ids:
            hunk.status = status  # type: ignore[assignment]
            if reason is not None:
                hunk.reason = reason
    target = {"accepted": plan.accepted, "stale": plan.stale, "failed": plan.failed}[status]
    target.extend(sorted(ids - set(target)))


def _reasons(patch: Patch, ids: list[int]) -> str:
    reasons = [h.reason for h in patch.hunks if h.id in ids and h.reason]
    return "; ".join(dict.fromkeys(reasons)) or "nothing was written"


def open_patches(jail: PathJail) -> PatchService:
    """The repository's patches, persisted in the user's state directory (patches/store.py)."""
    return PatchService(jail, PatchStore.for_repository(jail.root))
