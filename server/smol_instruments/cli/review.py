"""Patches reviewed on the terminal, and `smol-instruments patches list | show | accept | reject`.

At the end of `run` and after each `chat` turn, every patch the session left pending is
decided here; the patch service (patches/service.py) owns the decisions, this only asks:

- on a terminal, each pending hunk is shown as a coloured diff and asked: accept, reject, skip
  (or all the rest of the patch at once, or quit); what was decided is said, file by file;
- with `--yes`, a patch whose checks passed is accepted whole; one that was not checked, or
  whose checks failed, stays pending and the output says why;
- without a terminal nothing is asked: the output says what is pending and the exact command
  that decides it.

Every diff, summary and path shown goes through `base/visible.py` first: nothing in an
untrusted patch can hide itself or rewrite the terminal. Colour is added after, on a terminal.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from ..agent.outcome import failed_checks
from ..base.errors import ToolError
from ..base.visible import visible
from ..patches.model import FileChange, Hunk, Patch
from ..patches.service import Outcome, PatchService
from .terminal import BOLD, CYAN, DIM, GREEN, RED, RESET, YELLOW

Ask = Callable[[str], str | None]  # a prompt -> the line typed (None: end of input)

#: The answers to "this hunk?": a key and what it does.
CHOICES = "[a]ccept  [r]eject  [s]kip  [A]ccept rest  [R]eject rest  [q]uit"


def command_for(verb: str, patch_id: str, root: Path) -> str:
    """The exact command line that decides a patch (or shows it), to copy."""
    return f"smol-instruments patches {verb} {patch_id} --repo {shlex.quote(str(root))}"


def passed_checks(patch: Patch) -> tuple[bool, str]:
    """Whether `--yes` may accept the patch, and why not when it may not."""
    validation = patch.validation or {}
    if validation.get("backend") in (None, "none"):
        return False, "it was not checked (no sandbox)"
    failed = failed_checks(validation)
    if failed:
        return False, f"its check failed: {visible(str(failed[0].get('command', '')), breaks=True)}"
    return True, ""


class Painter:
    """Diff text made visible, then coloured when the output is a terminal."""

    def __init__(self, color: bool) -> None:
        self.color = color

    def __call__(self, code: str, text: str) -> str:
        shown = visible(text)
        return f"{code}{shown}{RESET}" if self.color else shown

    def hunk(self, change: FileChange, hunk: Hunk) -> str:
        """One hunk as a unified diff: its header, context, removed and added lines."""
        lines = [self(CYAN, f"@@ {change.path}:{hunk.start + 1} (hunk {hunk.id}) @@")]
        for line in hunk.before:
            lines.append(self(DIM, " " + line.rstrip("\n")))
        for line in hunk.old:
            lines.append(self(RED, "-" + line.rstrip("\n")))
        for line in hunk.new:
            lines.append(self(GREEN, "+" + line.rstrip("\n")))
        for line in hunk.after:
            lines.append(self(DIM, " " + line.rstrip("\n")))
        return "\n".join(lines)

    def header(self, patch: Patch) -> str:
        added, removed = patch.stats()
        files = ", ".join(c.path for c in patch.files)
        return self(BOLD, f"Patch {patch.id} [{patch.status}]: {patch.summary}") + self(
            DIM, f"  ({files}; +{added} −{removed}; {_checked(patch)})"
        )

    def patch(self, patch: Patch) -> str:
        parts = [self.header(patch)]
        for change in patch.files:
            for hunk in change.hunks:
                status = "" if hunk.pending else f"  [{hunk.status}]"
                parts.append(self.hunk(change, hunk) + (self(YELLOW, status) if status else ""))
        return "\n".join(parts)


def _checked(patch: Patch) -> str:
    validation = patch.validation or {}
    if validation.get("backend") in (None, "none"):
        return "not checked"
    if validation.get("applies") is False:
        return "does NOT apply"
    checks = validation.get("checks") or []
    if failed_checks(validation):
        return "checks FAILED"
    return "checks pass" if checks else "applies"


@dataclass
class Said:
    """What the review did, for the terminal and for `--json`."""

    lines: list[str] = field(default_factory=list)
    patches: list[Patch] = field(default_factory=list)


def describe(*outcomes: Outcome) -> str:
    """What decisions on one patch did, said once with the patch's status after them all."""
    patch = outcomes[-1].patch
    parts = []
    for outcome in outcomes:
        if outcome.accepted:
            parts.append(
                f"{_hunks(outcome.accepted)} accepted (written to {', '.join(outcome.files)})"
            )
        if outcome.rejected:
            parts.append(f"{_hunks(outcome.rejected)} rejected (nothing written)")
        if outcome.stale:
            parts.append(f"{_hunks(outcome.stale)} stale: their lines changed, nothing written")
        if outcome.failed:
            parts.append(f"writing failed ({outcome.patch.reason}); the files were restored")
    return f"Patch {patch.id} is {patch.status}: " + "; ".join(parts) + "."


def _hunks(ids: list[int]) -> str:
    return f"hunk {ids[0]}" if len(ids) == 1 else "hunks " + ", ".join(map(str, ids))


class Review:
    """Decides a session's pending patches on a terminal, by `--yes`, or says how to."""

    def __init__(
        self,
        service: PatchService,
        out: TextIO,
        *,
        ask: Ask | None,
        accept_checked: bool = False,
        color: bool = False,
    ) -> None:
        self.service = service
        self.out = out
        self.ask = ask  # None: nobody can answer here
        self.accept_checked = accept_checked
        self.paint = Painter(color)

    def pending(self, session_id: str | None) -> list[Patch]:
        return [
            p
            for p in self.service.all()
            if not p.resolved and (session_id is None or p.session_id == session_id)
        ]

    def run(self, session_id: str | None) -> Said:
        said = Said()
        for patch in self.pending(session_id):
            line = self._decide(patch)
            if line:
                said.lines.append(line)
            after = self.service.get(patch.id)
            said.patches.append(after or patch)
        self.out.flush()
        return said

    def _decide(self, patch: Patch) -> str:
        root = self.service.root
        if self.accept_checked:
            ok, why = passed_checks(patch)
            if ok:
                return self._carry_out(patch, None, [], "accepted by --yes")
            return (
                f"Patch {patch.id} is pending, not accepted by --yes: {why}. Nothing was written. "
                f"See it: {command_for('show', patch.id, root)}; accept it: "
                f"{command_for('accept', patch.id, root)}"
            )
        if self.ask is None:
            return (
                f"Patch {patch.id} is pending: nothing was written. See it: "
                f"{command_for('show', patch.id, root)}; accept it: "
                f"{command_for('accept', patch.id, root)}; reject it: "
                f"{command_for('reject', patch.id, root)}"
            )
        return self._interactive(patch)

    def _interactive(self, patch: Patch) -> str:
        refreshed = self.service.refresh(patch.id).patch  # stale against the disk as it is now
        self.out.write("\n" + self.paint.header(refreshed) + "\n")
        accept: list[int] = []
        reject: list[int] = []
        rest: str | None = None
        for change in refreshed.files:
            for hunk in change.pending():
                if rest is None:
                    self.out.write(self.paint.hunk(change, hunk) + "\n")
                    self.out.flush()
                    rest, answer = self._answer(hunk.id)
                else:
                    answer = rest
                if answer == "a":
                    accept.append(hunk.id)
                elif answer == "r":
                    reject.append(hunk.id)
                elif answer == "q":
                    rest = "s"
        if not accept and not reject:
            return (
                f"Patch {patch.id} is pending: nothing was written. "
                f"Decide it later: {command_for('show', patch.id, self.service.root)}"
            )
        return self._carry_out(patch, accept, reject, "accepted at the terminal")

    def _answer(self, hunk_id: int) -> tuple[str | None, str]:
        """(the answer for every later hunk too, or None; the answer for this one)."""
        assert self.ask is not None
        while True:
            typed = self.ask(f"Hunk {hunk_id}? {CHOICES} ")
            if typed is None:
                return "s", "s"  # end of input: decide nothing more
            key = typed.strip()
            if key in ("A", "R"):
                return key.lower(), key.lower()
            if key.lower() in ("a", "r", "s", "q"):
                return ("s" if key.lower() == "q" else None), key.lower()
            self.out.write(f"  type one of: {CHOICES}\n")

    def _carry_out(
        self, patch: Patch, accept: list[int] | None, reject: list[int], how: str
    ) -> str:
        """Accept (`None`: every pending hunk) then reject; say what happened."""
        outcomes: list[Outcome] = []
        words = []
        try:
            if accept is None or accept:
                outcomes.append(self.service.accept(patch.id, accept, how))
            still = {h.id for h in self.service.require(patch.id).hunks if h.pending}
            chosen = [h for h in reject if h in still]
            if chosen:
                outcomes.append(self.service.reject(patch.id, chosen, "rejected at the terminal"))
        except ToolError as exc:
            words.append(f"Patch {patch.id}: {exc.message}")
        if outcomes:
            words.insert(0, describe(*outcomes))
        left = [h.id for h in self.service.require(patch.id).hunks if h.pending]
        if left:
            words.append(
                f"{_hunks(left).capitalize()} still pending: "
                f"{command_for('show', patch.id, self.service.root)}"
            )
        return " ".join(words)


def patch_summary(patch: Patch) -> dict[str, Any]:
    """A patch in `run --json` and `patches list --json`: what it is and what became of it."""
    added, removed = patch.stats()
    return {
        "id": patch.id,
        "status": patch.status,
        "summary": patch.summary,
        "files": [c.path for c in patch.files],
        "added": added,
        "removed": removed,
        "checked": _checked(patch),
        "hunks": [
            {"id": h.id, "path": c.path, "line": h.start + 1, "status": h.status}
            for c in patch.files
            for h in c.hunks
        ],
        **({"reason": patch.reason} if patch.reason else {}),
    }
