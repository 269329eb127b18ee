"""Patch tools: propose (search-and-replace, definitions merged by name, unified diff), show, apply.

Thin over the patch service (patches/service.py), which owns the lifecycle. Proposing never
touches the working tree: the change is computed in memory, validated in the sandbox, stored
and shown to the user. Only `apply_patch` writes, and only the hunks the user accepts.

Where the host's editor has a file open with unsaved changes (ToolContext.buffers), a patch is
made against that text, the one the agent read: its base is the editor's, the sandbox checks
the file as accepting would make it, and a later accept plans against what the editor shows
then (a hunk whose lines changed there is stale; nothing of it is written).
"""

from __future__ import annotations

import difflib
from dataclasses import replace
from typing import Any

from ..base.errors import ErrorType, ToolError
from ..patches.diff import DiffError, parse, unified_diff
from ..patches.guard import patch_path
from ..patches.merge import merge_definitions
from ..patches.model import MAX_PATCH_CHARS, Patch, printable
from ..patches.pysource import lines_holding
from ..patches.service import Outcome, diff_of
from ..safety.approval import ApprovalRequest, Decision
from .base import RepoTool, ToolContext, guarded
from .commands import detect_test_command, runs_unasked
from .files import read_repo_text
from .imports import with_imports
from .narrow import narrowed_merge
from .signatures import read_checks
from .validation import optional_str, require_path, require_str

#: Who answered when nobody decided: the patch stays pending for a later decision.
UNDECIDED = frozenset({"timeout", "cancelled", "error"})


def _summary(description: str | None, paths: list[str]) -> str:
    if description and description.strip():
        return description.strip().splitlines()[0][:200]
    names = ", ".join(paths[:3]) + (" ..." if len(paths) > 3 else "")
    return f"Edit {names}"


def patch_checks(ctx: ToolContext) -> list[str] | None:
    """What runs on the patched copy besides the syntax check: SANDBOX_CHECK_COMMAND, else the
    project's own tests when they can run there as `run_tests` would (SANDBOX_CHECK_TESTS, the
    local backend: the copy sees this machine's Python and packages; a folder the user trusts;
    a command the policy allows and containment holds)."""
    settings = ctx.settings
    if settings.sandbox_check_command:
        return [settings.sandbox_check_command]
    if not settings.sandbox_check_tests or getattr(ctx.sandbox, "name", "") != "local":
        return None
    command = detect_test_command(ctx.root)
    if command is None or not runs_unasked(ctx, command):
        return None
    return [command]


def propose(
    ctx: ToolContext,
    changes: list[tuple[str, str | None, str | None]],
    description: str | None,
    *,
    validated: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Validate the change in the sandbox, store it as a pending patch, and describe it.
    `validated`: the sandbox's validations already run for this call, by diff (a merge
    narrowed first, tools/narrow.py), not run again."""
    checks = patch_checks(ctx)
    changes, imported = with_imports(ctx, changes)  # a name used and never imported
    pins: list[str] = []
    if ctx.pin_expected is not None:  # new tests expect what the code gives (tools/pins.py)
        changes, pins = ctx.pin_expected(ctx, changes)

    def validate(diff: str) -> dict[str, Any]:
        checked = _from_disk(ctx, changes) or diff
        known = (validated or {}).get(checked)
        try:
            validation = dict(known) if known else ctx.sandbox.validate(checked, checks).to_dict()
        except Exception as exc:  # a broken sandbox must not lose the proposal
            return {
                "backend": getattr(ctx.sandbox, "name", "unknown"),
                "applies": False,
                "checks": [],
                "message": f"validation could not run: {exc}",
            }
        if validation.get("applies") is not False:  # an option never read; the symptom's calls;
            calls, check, run = ctx.symptom_calls, ctx.symptom_checks, ctx.example_checks
            told = check(ctx, checked, calls) if calls and check else []  # a document's examples
            told += [*read_checks(ctx, changes), *(run(ctx, checked, changes) if run else [])]
            validation["checks"] = [*validation.get("checks", []), *told]
        if pins:
            validation["pinned"] = pins
        if imported:
            validation["imported"] = imported
        return validation

    patch = ctx.patches.propose(
        changes,
        _summary(description, [path for path, _, _ in changes]),
        session_id=ctx.session_id,
        validate=validate,
    )
    result = patch_result(patch)
    failed = [
        str(check.get("output") or "")
        for check in patch.validation.get("checks", [])
        if not check.get("passed") and not check.get("fails_without_patch")
    ]
    proposed = {path: (old, new) for path, old, new in changes if new is not None}
    told = []
    if failed and ctx.assertion_values is not None:
        told = ctx.assertion_values(ctx, proposed, "\n".join(failed))
    if told:
        result["actual"] = told
        result["next"] += (
            " Run just now with the repository's code, the failing assertions' calls give: "
            + "; ".join(told)
            + ". A test states what the code gives: expect these values, unless the task says "
            "the code is wrong."
        )
    return result


def _from_disk(ctx: ToolContext, changes: list[tuple[str, str | None, str | None]]) -> str | None:
    """The change as a diff of the files on disk when it was made against an editor's unsaved
    text: the sandbox's copy is the disk, and what is checked is the file as accepting makes it
    (the editor's text with the patch). None when every base is the disk's text."""
    if not ctx.unsaved:
        return None
    disk = {path: ctx.patches.read_disk(path) for path, _, _ in changes}
    if all(disk[path] == old for path, old, _ in changes):
        return None
    return "".join(unified_diff(path, disk[path], new) for path, _, new in changes)


def _hunks(patch: Patch) -> list[dict[str, Any]]:
    return [
        {
            "id": hunk.id,
            "path": change.path,
            "line": hunk.start + 1,
            "status": hunk.status,
            "added": len(hunk.new),
            "removed": len(hunk.old),
            **({"reason": hunk.reason} if hunk.reason and hunk.status != "accepted" else {}),
        }
        for change in patch.files
        for hunk in change.hunks
    ]


def patch_result(patch: Patch) -> dict[str, Any]:
    added, removed = patch.stats()
    validation = patch.validation
    result: dict[str, Any] = {
        "patch_id": patch.id,
        "status": patch.status,
        "summary": patch.summary,
        "files": [f.path for f in patch.files],
        "added": added,
        "removed": removed,
        "diff": printable(diff_of(patch, pending=not patch.resolved)),
        "hunks": _hunks(patch),
        "validation": validation,
    }
    if validation.get("applies") is False:
        result["next"] = "The patch does not apply cleanly: re-read the file and propose it again."
    elif any(
        not check.get("passed") and not check.get("fails_without_patch")
        for check in validation.get("checks", [])
    ):
        result["next"] = "A check fails with this patch: read the check output and propose a fix."
    elif any(check.get("fails_without_patch") for check in validation.get("checks", [])):
        result["next"] = (
            "A check fails without this patch too, the same way: the patch adds no failure. "
            f"Shown to the user. apply_patch(patch_id='{patch.id}') asks them to accept it."
        )
    else:
        result["next"] = (
            f"Shown to the user. apply_patch(patch_id='{patch.id}') asks them to accept it."
        )
    return result


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _find_unique(text: str, old: str, rel: str) -> tuple[int, int]:
    """The span of the one occurrence of `old` in `text`, tolerating trailing-space slips."""
    count = text.count(old)
    if count == 1:
        start = text.index(old)
        return start, start + len(old)
    if count > 1:
        lines, at = [], -1
        while (at := text.find(old, at + 1)) != -1:
            lines.append(_line_of(text, at))
        raise ToolError(
            ErrorType.AMBIGUOUS_MATCH,
            f"old_text occurs {count} times in {rel} (lines {lines[:10]})",
            recovery_suggestion=(
                "Include more surrounding lines in old_text (and new_text) so it occurs exactly once."
            ),
            context={"path": rel, "lines": lines[:50]},
        )
    # trailing whitespace ignored per line (small models get it wrong), if one place matches
    text_lines = text.splitlines(keepends=True)
    old_lines = [ln.rstrip() for ln in old.strip("\n").splitlines()]
    if old_lines:
        stripped = [ln.rstrip() for ln in text_lines]
        n = len(old_lines)
        found = [i for i in range(len(stripped) - n + 1) if stripped[i : i + n] == old_lines]
        if len(found) == 1:
            i = found[0]
            start = sum(len(ln) for ln in text_lines[:i])
            end = start + sum(len(ln) for ln in text_lines[i : i + n])
            if not old.endswith("\n") and text_lines[i + n - 1].endswith("\n"):
                end -= len(text_lines[i + n - 1]) - len(text_lines[i + n - 1].rstrip("\r\n"))
            return start, end
    raise _no_match(text, old, rel)


def _no_match(text: str, old: str, rel: str) -> ToolError:
    """NO_MATCH, showing the lines of the file closest to old_text so they can be copied."""
    text_lines = text.splitlines()
    hint = (
        "Copy old_text exactly from read_file output (same indentation), or use a smaller old_text."
    )
    context: dict[str, Any] = {"path": rel, "total_lines": len(text_lines)}
    near = _closest_lines(text_lines, old)
    if near is not None:
        first, last = near
        context["closest_lines"] = [first, last]
        shown = "\n".join(text_lines[first - 1 : last])
        hint = (
            f"The closest lines in {rel} are {first}-{last}:\n{shown}\n"
            "Copy old_text from these lines exactly (same indentation), then change new_text."
        )
    return ToolError(
        ErrorType.NO_MATCH,
        f"old_text was not found in {rel}",
        recovery_suggestion=hint,
        context=context,
    )


#: Lines shown at most as the closest match, and how alike they must be to be shown.
CLOSEST_MAX_LINES = 15
CLOSEST_CUTOFF = 0.5


def _closest_lines(lines: list[str], old: str) -> tuple[int, int] | None:
    """The 1-based span of `lines` most like `old` (as many lines, give or take one)."""
    wanted = [ln.strip() for ln in old.strip("\n").splitlines()]
    if not wanted or not lines or len(wanted) > CLOSEST_MAX_LINES:
        return None
    target = "\n".join(wanted)
    best, span = 0.0, None
    stripped = [ln.strip() for ln in lines]
    for size in {max(1, len(wanted) - 1), len(wanted), len(wanted) + 1}:
        for start in range(0, max(1, len(lines) - size + 1)):
            window = "\n".join(stripped[start : start + size])
            matcher = difflib.SequenceMatcher(None, target, window, autojunk=False)
            if matcher.real_quick_ratio() <= best or matcher.quick_ratio() <= best:
                continue
            ratio = matcher.ratio()
            if ratio > best:
                best, span = ratio, (start + 1, min(len(lines), start + size))
    return span if best >= CLOSEST_CUTOFF else None


class ProposePatchTool(RepoTool):
    name = "propose_patch"
    description = (
        "Propose replacing old_text (which must occur exactly once in the file) with new_text. "
        "With old_text='' on an existing Python file, new_text holds complete new versions of "
        "functions or classes: each replaces the one of the same name (new ones are added). "
        "With old_text='' and a new path, proposes a new file. Nothing is written until the "
        "user accepts; returns patch_id, diff and validation."
    )
    inputs = {
        "path": {"type": "string", "description": "file to change"},
        "old_text": {"type": "string", "description": "exact text to replace"},
        "new_text": {"type": "string", "description": "replacement text"},
        "description": {"type": "string", "description": "one line saying why", "nullable": True},
    }
    example = (
        "propose_patch(path='<file>', old_text='<lines copied from read_file>', "
        "new_text='<the new lines>', description='<what it changes>'), or "
        "propose_patch(path='<file>.py', old_text='', new_text='<the complete new function>')"
    )

    @guarded
    def forward(
        self, path: str, old_text: str, new_text: str, description: str | None = None
    ) -> dict[str, Any]:
        path = require_path("path", path, max_chars=self.limits.max_chars)
        old_text = require_str("old_text", old_text, max_chars=MAX_PATCH_CHARS, allow_empty=True)
        new_text = require_str("new_text", new_text, max_chars=MAX_PATCH_CHARS, allow_empty=True)
        description = optional_str("description", description, max_chars=2000)
        resolved = self.ctx.jail.resolve(path, for_write=True)
        rel = self.ctx.jail.relative(resolved)
        if self.ctx.jail.tree.kind(rel) is None:
            if old_text.strip():
                read_repo_text(self.ctx, path)  # raises FILE_NOT_FOUND with the closest paths
            return propose(self.ctx, [(rel, None, new_text)], description)
        rel, text = read_repo_text(self.ctx, path, errors="surrogateescape")  # exact bytes
        if not old_text.strip():
            return self._merge(rel, text, new_text, description)
        start, end = _find_unique(text, old_text, rel)
        new_file = text[:start] + new_text + text[end:]
        if new_file == text:
            raise _unchanged(
                self.ctx,
                ToolError(
                    ErrorType.INVALID_ARGUMENT,
                    "new_text is the same as old_text: the patch changes nothing",
                    recovery_suggestion="Put the changed code in new_text.",
                ),
            )
        return propose(self.ctx, [(rel, text, new_file)], description)

    def _merge(self, rel: str, text: str, new_text: str, description: str | None) -> dict[str, Any]:
        """old_text='' on an existing file: new_text's definitions merged in by name."""
        if not rel.endswith(".py"):
            raise ToolError(
                ErrorType.INVALID_ARGUMENT,
                f"old_text is empty but {rel} already exists",
                recovery_suggestion=(
                    "Pass the exact lines to replace as old_text. (old_text='' merges complete "
                    "functions into a file only for Python .py files.)"
                ),
            )
        try:
            merged = merge_definitions(text, new_text, rel)
        except ToolError as exc:
            told = "compared" in exc.context
            raise (_unchanged(self.ctx, exc, rel, text) if told else exc) from None
        summary, new_file = merged.summary(), merged.text
        seen: dict[str, dict[str, Any]] = {}
        narrowed = narrowed_merge(
            self.ctx, rel, text, merged.text, merged.replaced, patch_checks, seen
        )
        if narrowed is not None:
            new_file, kept = narrowed
            rest = tuple(name for name in merged.replaced if name != kept)
            summary = replace(merged, replaced=rest).summary()
            summary += f"; kept {kept} as it was: with your version of it the checks failed"
        result = propose(self.ctx, [(rel, text, new_file)], description or summary, validated=seen)
        result["merged"] = summary.removeprefix("merged: ")  # said after its key, once
        return result


def merged_diff(ctx: ToolContext, path: str, new_text: str) -> str | None:
    """The diff of `new_text`'s definitions merged into the Python file `path`; None when it
    does not merge or changes nothing. Nothing is stored."""
    if not path.endswith(".py"):
        return None
    try:
        rel, text = read_repo_text(ctx, path, errors="surrogateescape")
        merged = merge_definitions(text, new_text, rel)
    except ToolError:
        return None
    return unified_diff(rel, text, merged.text) or None


def confirms_symptom(ctx: ToolContext, path: str, new_text: str) -> str | None:
    """The diff of `new_text`'s definitions merged into the Python file `path` when, with it,
    every call of the task's symptom gives the value the task says it should
    (tools/evaluate.py `symptom_checks`); None otherwise: no value to check, a change that does
    not merge, a call that cannot run unasked, or a value still wrong. Nothing is stored."""
    if not ctx.symptom_wants or ctx.symptom_checks is None:
        return None
    diff = merged_diff(ctx, path, new_text)
    if diff is None:
        return None
    checks = ctx.symptom_checks(ctx, diff, tuple(ctx.symptom_wants))
    return diff if checks and all(check.get("passed") for check in checks) else None


def _unchanged(ctx: ToolContext, error: ToolError, path: str = "", text: str = "") -> ToolError:
    """`error`, of a proposal that changes nothing, told what the task's symptom call must give
    instead, and which lines of the code compared hold the task's words (seen on the 1.5B
    model: the function copied unchanged, again and again, with "it changes nothing" alone)."""
    compared = [str(name) for name in error.context.get("compared", [])]
    held = lines_holding(text, compared, ctx.task_words) if text else []
    ctx.copied = (path, tuple(held)) if held else None  # the agent may ask for them alone
    where = "; ".join(f"line {number}: `{line.strip()}`" for number, line in held)
    told = [
        f"The task's words are on {where}: change what they do, or that line alone: "
        f"propose_patch(path='{path}', old_text=<the line, exactly>, new_text=<it changed>)."
    ] * bool(where)
    wants, calls, ran = ctx.symptom_wants, ctx.symptom_calls, ctx.symptom_functions
    if wrong := [
        f"{c} must give {wants.get(c, 'something else than it gives now')}" for c in calls
    ]:
        many = [f"{c} runs {', '.join(ran[c])}" for c in calls if len(ran.get(c, [])) > 1]
        told.append(f"{'; '.join(wrong)}: change the lines that compute it.")
        told += [f"{'; '.join(many)}: the wrong value may come from any of them."] * bool(many)
    error.recovery_suggestion = " ".join([error.recovery_suggestion or "", *told]).strip()
    return error


def _not_a_diff(why: str) -> ToolError:
    return ToolError(
        ErrorType.INVALID_ARGUMENT,
        f"diff is not a unified diff ({why}): it needs '--- a/path', '+++ b/path' and '@@' lines",
        recovery_suggestion=(
            "Use propose_patch(path=..., old_text=..., new_text=...) instead; it is simpler."
        ),
    )


class ProposePatchUnifiedTool(RepoTool):
    name = "propose_patch_unified"
    description = (
        "Propose a change as a unified diff (--- a/path, +++ b/path, @@ hunks); may touch "
        "several files. Nothing is written until the user accepts."
    )
    inputs = {
        "diff": {"type": "string", "description": "unified diff text"},
        "description": {"type": "string", "description": "one line saying why", "nullable": True},
    }
    example = "propose_patch_unified(diff='--- a/x.py\\n+++ b/x.py\\n@@ -1 +1 @@\\n-a\\n+b\\n')"

    @guarded
    def forward(self, diff: str, description: str | None = None) -> dict[str, Any]:
        diff = require_str("diff", diff, max_chars=MAX_PATCH_CHARS)
        description = optional_str("description", description, max_chars=2000)
        try:
            files = parse(diff)
        except DiffError as exc:
            raise _not_a_diff(str(exc)) from None
        if not files or not any(f.hunks for f in files):
            raise _not_a_diff("no file with a hunk")
        jail = self.ctx.jail
        for name in dict.fromkeys(p for f in files for p in (f.old_path, f.new_path) if p):
            patch_path(jail, name)  # refuses escapes and symlinks before anything is read
        before: dict[str, str | None] = {}
        after: dict[str, str | None] = {}
        for file in files:
            if file.path not in before:
                try:
                    before[file.path] = self.ctx.file_text(file.path)
                except OSError as exc:
                    raise self._does_not_apply(
                        f"{file.path} cannot be read ({exc})", file.path
                    ) from None
                after[file.path] = before[file.path]
            try:
                after[file.path] = file.apply(after[file.path])
            except DiffError as exc:
                raise self._does_not_apply(str(exc), file.path) from None
        changes = [(path, before[path], after[path]) for path in before]
        changes = [c for c in changes if c[1] != c[2]]
        if not changes:
            raise ToolError(
                ErrorType.INVALID_ARGUMENT,
                "the diff changes nothing",
                recovery_suggestion="Make sure '+' lines differ from the '-' lines they replace.",
            )
        return propose(self.ctx, changes, description)

    @staticmethod
    def _does_not_apply(why: str, path: str) -> ToolError:
        return ToolError(
            ErrorType.PATCH_DOES_NOT_APPLY,
            f"the diff does not apply: {why}",
            recovery_suggestion=(
                f"Re-read {path} with read_file and make the context lines match it exactly, "
                "or use propose_patch(path, old_text, new_text) instead."
            ),
            context={"path": path},
        )


def _get_patch(ctx: ToolContext, patch_id: Any) -> Patch:
    patch_id = require_str("patch_id", patch_id, max_chars=100, example="'p1a2b3c'").strip()
    return ctx.patches.require(patch_id)


class ShowPatchTool(RepoTool):
    name = "show_patch"
    description = "Show a proposed patch: status, diff, its hunks and validation."
    inputs = {"patch_id": {"type": "string", "description": "id from propose_patch"}}
    example = "show_patch(patch_id='<patch_id from propose_patch>')"

    @guarded
    def forward(self, patch_id: str) -> dict[str, Any]:
        patch = _get_patch(self.ctx, patch_id)
        result = patch_result(patch)
        result.pop("next", None)
        if patch.reason:
            result["status_reason"] = patch.reason
        return result


def _stale(patch: Patch, hunks: list[int]) -> ToolError:
    reasons = sorted({h.reason or "changed" for h in patch.hunks if h.id in hunks})
    return ToolError(
        ErrorType.PATCH_STALE,
        f"patch {patch.id} is stale ({'; '.join(reasons)}): the files changed since it was "
        "proposed; nothing was written",
        recovery_suggestion="Re-read the file and propose the change again.",
    )


def _decided(patch: Patch, decision: Decision, outcome: Outcome | None = None) -> dict[str, Any]:
    """The tool result once the user decided (all at once, or hunk by hunk in the editor)."""
    accepted = [h.id for h in patch.hunks if h.status == "accepted"]
    result: dict[str, Any] = {
        "applied": bool(outcome.accepted if outcome else accepted),
        "status": patch.status,
        "files": outcome.files if outcome else [f.path for f in patch.files],
        "decided_by": decision.decided_by,
    }
    if len(patch.hunks) > 1 or patch.status not in ("accepted", "rejected"):
        result["hunks"] = _hunks(patch)
    if patch.status == "partial":
        result["message"] = (
            f"The user accepted hunks {accepted} of patch {patch.id}; the others were not written."
        )
    return result


class ApplyPatchTool(RepoTool):
    name = "apply_patch"
    description = (
        "Ask the user to accept a proposed patch and, if they do, write it to the files. "
        "Returns applied and the patch status (the user may accept only some hunks)."
    )
    inputs = {"patch_id": {"type": "string", "description": "id from propose_patch"}}
    example = "apply_patch(patch_id='<patch_id from propose_patch>')"
    changes_state = True

    @guarded
    def forward(self, patch_id: str) -> dict[str, Any]:
        ctx = self.ctx
        patch = _get_patch(ctx, patch_id)
        if patch.resolved:
            return {
                "applied": patch.status in ("accepted", "partial"),
                "status": patch.status,
                "message": f"patch {patch.id} is already {patch.status}",
            }
        # stale against the files as the user sees them now (the editor's text, else the disk)
        refreshed = ctx.patches.refresh(patch.id, ctx.file_text)
        if refreshed.patch.resolved:
            raise _stale(refreshed.patch, refreshed.stale)
        pending = refreshed.patch
        decision = ctx.gate.ask(
            ApprovalRequest(
                kind="patch",
                subject=pending.id,
                summary=pending.summary,
                detail=diff_of(pending, pending=True),
            )
        )
        ctx.check_cancelled()
        if decision.applied_by_host:  # the editor carried out the user's decisions itself
            return _decided(ctx.patches.require(pending.id), decision)
        if not decision.approved:
            return self._not_accepted(pending.id, decision)
        outcome = ctx.patches.accept(pending.id, how=f"accepted by {decision.decided_by}")
        if outcome.failed:
            raise ToolError(
                ErrorType.INTERNAL_ERROR,
                f"writing patch {pending.id} failed ({outcome.patch.reason}); "
                "the files were restored",
                recovery_suggestion="Tell the user what failed with final_answer().",
            )
        if not outcome.accepted:
            raise _stale(outcome.patch, outcome.stale)
        return _decided(outcome.patch, decision, outcome)

    def _not_accepted(self, patch_id: str, decision: Decision) -> dict[str, Any]:
        why = f": {decision.reason}" if decision.reason else "."
        if decision.decided_by in UNDECIDED:
            return {
                "applied": False,
                "status": "pending",
                "decided_by": decision.decided_by,
                "message": f"No decision on patch {patch_id} yet{why}",
                "next": "Do not propose it again. Finish with final_answer(); the user can still accept it.",
            }
        current = self.ctx.patches.require(patch_id)
        if not current.resolved:
            current = self.ctx.patches.reject(patch_id, reason=decision.reason).patch
        return {
            "applied": False,
            "status": current.status,
            "decided_by": decision.decided_by,
            "message": f"The user did not accept patch {patch_id}{why}",
            "next": "Do not apply it again. Ask what to change, or finish with final_answer().",
        }
