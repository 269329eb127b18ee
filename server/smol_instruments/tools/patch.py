"""Patch tools: propose (search-and-replace or unified diff), show, and apply with the user's accept.

Proposing never touches the working tree: the patch is computed in memory (or in a throwaway
directory for `git apply`), validated in the sandbox, stored, and shown to the user. Only
`apply_patch` writes, and only after the approver (the user) accepts it.
"""

from __future__ import annotations

import difflib
import tempfile
from pathlib import Path
from typing import Any

from ..base.errors import ErrorType, ToolError
from ..base.process import run_process
from ..patches.store import FileChange, Patch, StalePatch, printable, read_text
from ..safety.approval import ApprovalRequest
from .base import RepoTool, ToolContext, guarded
from .files import read_repo_text
from .validation import optional_str, require_path, require_str

MAX_PATCH_CHARS = 200_000


def _summary(description: str | None, files: list[FileChange]) -> str:
    if description and description.strip():
        return description.strip().splitlines()[0][:200]
    names = ", ".join(f.path for f in files[:3]) + (" ..." if len(files) > 3 else "")
    return f"Edit {names}"


def store_patch(ctx: ToolContext, files: list[FileChange], description: str | None) -> Patch:
    """Validate the change in the sandbox, store it as a pending patch and return it."""
    patch = Patch(
        id=ctx.patches.new_id(),
        summary=_summary(description, files),
        files=files,
        session_id=ctx.session_id,
    )
    checks = [ctx.settings.sandbox_check_command] if ctx.settings.sandbox_check_command else None
    try:
        validation = ctx.sandbox.validate(patch.diff, checks)
        patch.validation = validation.to_dict()
    except Exception as exc:  # a broken sandbox must not lose the proposal
        patch.validation = {
            "backend": getattr(ctx.sandbox, "name", "unknown"),
            "applies": False,
            "checks": [],
            "message": f"validation could not run: {exc}",
        }
    ctx.patches.add(patch)
    return patch


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
        "diff": printable(patch.diff),
        "validation": validation,
    }
    if validation.get("applies") is False:
        result["next"] = "The patch does not apply cleanly: re-read the file and propose it again."
    elif any(not check.get("passed") for check in validation.get("checks", [])):
        result["next"] = "A check fails with this patch: read the check output and propose a fix."
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
    # Small models often get trailing whitespace or the final newline wrong: match per line
    # with trailing whitespace ignored, and accept it if that finds exactly one place.
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
    text_lines = text.splitlines()
    first = next((ln.strip() for ln in old.splitlines() if ln.strip()), "")
    hint = (
        "Copy old_text exactly from read_file output (same indentation), or use a smaller old_text."
    )
    context: dict[str, Any] = {"path": rel, "total_lines": len(text_lines)}
    if first:
        candidates = [ln.strip() for ln in text_lines]
        near = difflib.get_close_matches(first, candidates, n=1, cutoff=0.6)
        if near:
            line_no = candidates.index(near[0]) + 1
            context["closest_line"] = line_no
            hint = (
                f"The closest text is at line {line_no}: {text_lines[line_no - 1].strip()!r}. "
                f"Call read_file(path='{rel}', start_line={max(1, line_no - 3)}, "
                f"end_line={line_no + 8}) and copy old_text exactly."
            )
    return ToolError(
        ErrorType.NO_MATCH,
        f"old_text was not found in {rel}",
        recovery_suggestion=hint,
        context=context,
    )


class ProposePatchTool(RepoTool):
    name = "propose_patch"
    description = (
        "Propose replacing old_text (which must occur exactly once in the file) with new_text. "
        "With old_text='' and a new path, proposes a new file. Nothing is written until the "
        "user accepts; returns patch_id, diff and validation."
    )
    inputs = {
        "path": {"type": "string", "description": "file to change"},
        "old_text": {"type": "string", "description": "exact text to replace"},
        "new_text": {"type": "string", "description": "replacement text"},
        "description": {"type": "string", "description": "one line saying why", "nullable": True},
    }
    example = "propose_patch(path='src/app.py', old_text='return a-b', new_text='return a+b', description='fix add')"

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
        if not resolved.exists():
            if old_text.strip():
                read_repo_text(self.ctx, path)  # raises FILE_NOT_FOUND with the closest paths
            change = FileChange(rel, None, new_text)
        else:
            rel, text = read_repo_text(self.ctx, path, errors="surrogateescape")  # exact bytes
            if not old_text.strip():
                raise ToolError(
                    ErrorType.INVALID_ARGUMENT,
                    f"old_text is empty but {rel} already exists",
                    recovery_suggestion="Pass the exact lines to replace as old_text.",
                )
            start, end = _find_unique(text, old_text, rel)
            new_file = text[:start] + new_text + text[end:]
            if new_file == text:
                raise ToolError(
                    ErrorType.INVALID_ARGUMENT,
                    "new_text is the same as old_text: the patch changes nothing",
                    recovery_suggestion="Put the changed code in new_text.",
                )
            change = FileChange(rel, text, new_file)
        return patch_result(store_patch(self.ctx, [change], description))


def _header_path(text: str) -> str:
    """The path of a '--- '/'+++ ' header: up to a tab (timestamps), git's quoting undone."""
    text = text.split("\t", 1)[0].rstrip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        text = text[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape")
        text = text.encode("latin-1", "replace").decode("utf-8", "replace")
    return text


def _strip_prefix(path: str) -> str:
    return path[2:] if path.startswith(("a/", "b/")) else path


def _quote(path: str) -> str:
    return f'"{path}"' if any(ch in path for ch in ' \t"\\') else path


def normalise_diff(diff: str) -> tuple[str, list[str]]:
    """Rewrite a model's diff into git's form (a/ b/ paths, a `diff --git` line per file) and
    repair blank context lines that lost their leading space. Returns the diff and its paths."""
    lines = diff.splitlines()
    out: list[str] = []
    paths: list[str] = []
    in_hunk = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            old = _header_path(line[4:])
            new = _header_path(lines[i + 1][4:])
            old_rel = None if old == "/dev/null" else _strip_prefix(old)
            new_rel = None if new == "/dev/null" else _strip_prefix(new)
            target = new_rel or old_rel or ""
            if not (
                out
                and out[-1].startswith(
                    (
                        "diff --git",
                        "index ",
                        "new file",
                        "deleted file",
                        "similarity",
                        "rename",
                        "old mode",
                        "new mode",
                    )
                )
            ):
                out.append(
                    f"diff --git {_quote('a/' + (old_rel or target))} {_quote('b/' + target)}"
                )
                if old_rel is None:
                    out.append("new file mode 100644")
                elif new_rel is None:
                    out.append("deleted file mode 100644")
            out.append("--- " + ("/dev/null" if old_rel is None else _quote("a/" + old_rel)))
            out.append("+++ " + ("/dev/null" if new_rel is None else _quote("b/" + new_rel)))
            for rel in (old_rel, new_rel):
                if rel and rel not in paths:
                    paths.append(rel)
            in_hunk = False
            i += 2
            continue
        if line.startswith("@@"):
            in_hunk = True
        elif line.startswith("diff "):
            in_hunk = False
        elif in_hunk and line == "":
            line = " "
        out.append(line)
        i += 1
    return "\n".join(out) + "\n", paths


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
        diff, paths = normalise_diff(diff.strip("`").removeprefix("diff\n"))
        if not paths or "@@" not in diff:
            raise ToolError(
                ErrorType.INVALID_ARGUMENT,
                "diff is not a unified diff (no '--- a/path', '+++ b/path' and '@@' lines)",
                recovery_suggestion=(
                    "Use propose_patch(path=..., old_text=..., new_text=...) instead; it is simpler."
                ),
            )
        for p in paths:
            self.ctx.jail.resolve(p, for_write=True)
        with tempfile.TemporaryDirectory(prefix="smol-patch-") as tmp:
            work = Path(tmp)
            before: dict[str, str | None] = {}
            for p in paths:
                current = read_text(self.ctx.root / p)
                before[p] = current
                if current is not None:
                    (work / p).parent.mkdir(parents=True, exist_ok=True)
                    (work / p).write_bytes(current.encode("utf-8", errors="surrogateescape"))
            error = self._git_apply(work, diff)
            if error is not None:
                raise ToolError(
                    ErrorType.PATCH_DOES_NOT_APPLY,
                    f"the diff does not apply: {error}",
                    recovery_suggestion=(
                        "Re-read the file with read_file and make the context lines match it "
                        "exactly, or use propose_patch(path, old_text, new_text) instead."
                    ),
                    context={"paths": paths},
                )
            changes = []
            for p in paths:
                after = read_text(work / p)
                if after != before[p]:
                    changes.append(FileChange(p, before[p], after))
        if not changes:
            raise ToolError(
                ErrorType.INVALID_ARGUMENT,
                "the diff changes nothing",
                recovery_suggestion="Make sure '+' lines differ from the '-' lines they replace.",
            )
        return patch_result(store_patch(self.ctx, changes, description))

    def _git_apply(self, work: Path, diff: str) -> str | None:
        """Apply in the throwaway copy; later tries forgive whitespace and missing context."""
        message = ""
        for extra in ([], ["--ignore-whitespace"], ["--ignore-whitespace", "--unidiff-zero"]):
            result = run_process(
                ["git", "apply", "--recount", "--whitespace=nowarn", "-p1", *extra, "-"],
                cwd=work,
                timeout=30,
                stdin_text=diff,
                cancel=self.ctx.cancel,
            )
            if result.exit_code == 0:
                return None
            message = message or (result.stderr.strip() or "git apply failed")
        return " ".join(message.splitlines()[:4])


def _get_patch(ctx: ToolContext, patch_id: Any) -> Patch:
    patch_id = require_str("patch_id", patch_id, max_chars=100, example="'p1a2b3c'").strip()
    patch = ctx.patches.get(patch_id)
    if patch is None:
        known = [p.id for p in ctx.patches.all() if p.status == "pending"][-5:]
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


class ShowPatchTool(RepoTool):
    name = "show_patch"
    description = "Show a proposed patch: status, diff and validation."
    inputs = {"patch_id": {"type": "string", "description": "id from propose_patch"}}
    example = "show_patch(patch_id='p1a2b3c')"

    @guarded
    def forward(self, patch_id: str) -> dict[str, Any]:
        patch = _get_patch(self.ctx, patch_id)
        result = patch_result(patch)
        result.pop("next", None)
        if patch.status_reason:
            result["status_reason"] = patch.status_reason
        return result


class ApplyPatchTool(RepoTool):
    name = "apply_patch"
    description = (
        "Ask the user to accept a proposed patch and, if they do, write it to the files. "
        "Returns applied and the patch status."
    )
    inputs = {"patch_id": {"type": "string", "description": "id from propose_patch"}}
    example = "apply_patch(patch_id='p1a2b3c')"
    changes_state = True

    @guarded
    def forward(self, patch_id: str) -> dict[str, Any]:
        ctx = self.ctx
        patch = _get_patch(ctx, patch_id)
        if patch.status != "pending":
            return {
                "applied": patch.status == "accepted",
                "status": patch.status,
                "message": f"patch {patch.id} is already {patch.status}",
            }
        stale = ctx.patches.stale_paths(patch)
        if stale:
            ctx.patches.set_status(patch.id, "stale", f"changed since proposed: {', '.join(stale)}")
            raise ToolError(
                ErrorType.PATCH_STALE,
                f"{', '.join(stale)} changed since patch {patch.id} was proposed; nothing was written",
                recovery_suggestion="Re-read the file and propose the change again.",
            )
        decision = ctx.gate.ask(
            ApprovalRequest(
                kind="patch", subject=patch.id, summary=patch.summary, detail=patch.diff
            )
        )
        ctx.check_cancelled()
        current = ctx.patches.get(patch.id) or patch
        if not decision.approved:
            if current.status == "pending":
                ctx.patches.set_status(patch.id, "rejected", decision.reason)
            current = ctx.patches.get(patch.id) or patch
            return {
                "applied": False,
                "status": current.status,
                "decided_by": decision.decided_by,
                "message": f"The user did not accept patch {patch.id}"
                + (f": {decision.reason}" if decision.reason else "."),
                "next": "Do not apply it again. Ask what to change, or finish with final_answer().",
            }
        if not decision.applied_by_host:
            try:
                ctx.patches.write(current)
            except StalePatch as exc:
                ctx.patches.set_status(patch.id, "stale", str(exc))
                raise ToolError(
                    ErrorType.PATCH_STALE,
                    f"patch {patch.id}: {exc}; nothing was written",
                    recovery_suggestion="Re-read the file and propose the change again.",
                ) from None
            except OSError as exc:
                ctx.patches.set_status(patch.id, "failed", str(exc))
                raise ToolError(
                    ErrorType.INTERNAL_ERROR,
                    f"writing patch {patch.id} failed: {exc}; the files were restored",
                    recovery_suggestion="Tell the user what failed with final_answer().",
                ) from None
        if (ctx.patches.get(patch.id) or patch).status == "pending":
            ctx.patches.set_status(patch.id, "accepted", f"accepted by {decision.decided_by}")
        return {
            "applied": True,
            "status": "accepted",
            "files": [f.path for f in patch.files],
            "decided_by": decision.decided_by,
        }
