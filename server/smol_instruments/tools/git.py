"""Git tools: status, diff and log, through argument lists (never a shell) with timeouts."""

from __future__ import annotations

from typing import Any

from ..base.errors import ErrorType, ToolError
from ..base.process import ProcessResult, child_env, run_process
from ..base.truncate import truncate_output
from .base import RepoTool, ToolContext, guarded
from .validation import optional_bool, optional_int, optional_path

GIT_TIMEOUT_S = 20.0


def run_git(ctx: ToolContext, *args: str, timeout: float = GIT_TIMEOUT_S) -> ProcessResult:
    """Run git in the repository with hardened config; ToolError when git itself is unusable."""
    root = ctx.root
    argv = [
        "git",
        "-C",
        str(root),
        # A repository's own config must not make us run programs or take locks.
        "-c",
        "core.fsmonitor=false",
        "-c",
        "core.hooksPath=/dev/null",
        "-c",
        f"safe.directory={root}",
        "-c",
        "core.quotepath=off",
        "-c",
        "color.ui=false",
        *args,
    ]
    env = child_env({"GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"})
    try:
        result = run_process(
            argv,
            cwd=root,
            timeout=timeout,
            env=env,
            cancel=ctx.cancel,
            registry=ctx.processes,
        )
    except FileNotFoundError:
        raise ToolError(
            ErrorType.TOOL_UNAVAILABLE,
            "git is not installed",
            recovery_suggestion="git is missing on this machine; use read_file and list_files instead.",
        ) from None
    if result.timed_out:
        raise ToolError(
            ErrorType.TIMEOUT,
            f"git {args[0]} took longer than {timeout:g} s",
            recovery_suggestion="Narrow it down, e.g. pass path= to limit it to one file.",
        )
    if result.cancelled:
        ctx.check_cancelled()
    return result


def require_git_repo(ctx: ToolContext) -> None:
    result = run_git(ctx, "rev-parse", "--is-inside-work-tree")
    if result.exit_code != 0 or result.stdout.strip() != "true":
        raise ToolError(
            ErrorType.NOT_A_GIT_REPO,
            f"{ctx.root} is not a git repository",
            recovery_suggestion="Git history is unavailable here; use list_files, read_file and rg_search.",
        )


def git_failure(result: ProcessResult, what: str) -> ToolError:
    message = (result.stderr or result.stdout).strip().splitlines()
    return ToolError(
        ErrorType.GIT_ERROR,
        f"git {what} failed: {message[-1] if message else f'exit code {result.exit_code}'}",
        recovery_suggestion="Check the arguments; git_status() shows the state of the repository.",
    )


def current_branch(ctx: ToolContext) -> str | None:
    result = run_git(ctx, "symbolic-ref", "--quiet", "--short", "HEAD")
    if result.exit_code == 0:
        return result.stdout.strip() or None
    return None  # detached HEAD


def head_sha(ctx: ToolContext) -> str | None:
    result = run_git(ctx, "rev-parse", "--verify", "--quiet", "HEAD")
    return result.stdout.strip() or None if result.exit_code == 0 else None


def parse_status(text: str) -> dict[str, Any]:
    """Parse `git status --porcelain=v1 -z --branch` into staged/unstaged/untracked."""
    staged: list[dict[str, str]] = []
    unstaged: list[dict[str, str]] = []
    untracked: list[str] = []
    branch: str | None = None
    entries = text.split("\0")
    i = 0
    while i < len(entries):
        entry = entries[i]
        i += 1
        if not entry:
            continue
        if entry.startswith("## "):
            head = entry[3:]
            if head.startswith("No commits yet on "):
                branch = head.removeprefix("No commits yet on ")
            elif not head.startswith("HEAD (no branch)"):
                branch = head.split("...", 1)[0]
            continue
        code, path = entry[:2], entry[3:]
        if code[0] in "RC":  # renames carry the old path in the next entry
            path = f"{entries[i]} -> {path}" if i < len(entries) else path
            i += 1
        if code == "??":
            untracked.append(path)
            continue
        if code == "!!":
            continue
        if code[0] != " ":
            staged.append({"path": path, "status": _STATUS_NAMES.get(code[0], code[0])})
        if code[1] != " ":
            unstaged.append({"path": path, "status": _STATUS_NAMES.get(code[1], code[1])})
    return {"branch": branch, "staged": staged, "unstaged": unstaged, "untracked": untracked}


_STATUS_NAMES = {
    "M": "modified",
    "A": "added",
    "D": "deleted",
    "R": "renamed",
    "C": "copied",
    "T": "type changed",
    "U": "unmerged",
}


class GitStatusTool(RepoTool):
    name = "git_status"
    description = "Show the branch and the staged, unstaged and untracked files."
    inputs: dict[str, dict[str, Any]] = {}
    example = "git_status()"

    @guarded
    def forward(self) -> dict[str, Any]:
        require_git_repo(self.ctx)
        result = run_git(self.ctx, "status", "--porcelain=v1", "-z", "--branch")
        if result.exit_code != 0:
            raise git_failure(result, "status")
        status = parse_status(result.stdout)
        limit = self.limits.truncate_items
        truncated = False
        for key in ("staged", "unstaged", "untracked"):
            if len(status[key]) > limit:
                status[key] = status[key][:limit]
                truncated = True
        status["clean"] = not (status["staged"] or status["unstaged"] or status["untracked"])
        status["truncated"] = truncated
        return status


class GitDiffTool(RepoTool):
    name = "git_diff"
    description = "Show uncommitted changes as a unified diff (staged=True for staged changes)."
    inputs = {
        "path": {"type": "string", "description": "limit to this file or folder", "nullable": True},
        "staged": {"type": "boolean", "description": "show staged changes", "nullable": True},
    }
    example = "git_diff(path='src/app.py')"

    @guarded
    def forward(self, path: str | None = None, staged: bool | None = None) -> dict[str, Any]:
        limits = self.limits
        path = optional_path("path", path, max_chars=limits.max_chars)
        staged = optional_bool("staged", staged)
        require_git_repo(self.ctx)
        args = ["diff", "--no-ext-diff", "--no-color"]
        if staged:
            args.append("--cached")
        rel = None
        if path is not None:
            rel = self.ctx.jail.relative(self.ctx.jail.resolve(path))
            args += ["--", rel]
        result = run_git(self.ctx, *args)
        if result.exit_code != 0:
            raise git_failure(result, "diff")
        diff, truncated = truncate_output(
            result.stdout, limits.truncate_chars, limits.truncate_lines
        )
        data: dict[str, Any] = {"diff": diff, "truncated": truncated, "staged": bool(staged)}
        if rel is not None:
            data["path"] = rel
        if not result.stdout:
            data["note"] = "no " + ("staged " if staged else "unstaged ") + "changes"
        return data


class GitLogTool(RepoTool):
    name = "git_log"
    description = "List recent commits (newest first), optionally only those touching a path."
    inputs = {
        "max_count": {
            "type": "integer",
            "description": "how many commits (default 10)",
            "nullable": True,
        },
        "path": {
            "type": "string",
            "description": "only commits touching this path",
            "nullable": True,
        },
    }
    example = "git_log(max_count=5)"

    @guarded
    def forward(self, max_count: int | None = None, path: str | None = None) -> dict[str, Any]:
        limits = self.limits
        count = optional_int(
            "max_count", max_count, minimum=1, maximum=limits.truncate_items, default=10
        )
        path = optional_path("path", path, max_chars=limits.max_chars)
        rel = self.ctx.jail.relative(self.ctx.jail.resolve(path)) if path is not None else None
        require_git_repo(self.ctx)
        if head_sha(self.ctx) is None:
            return {"commits": [], "note": "the repository has no commits yet"}
        args = ["log", f"--max-count={count}", "--format=%H%x1f%an%x1f%aI%x1f%s%x1e"]
        if rel is not None:
            args += ["--", rel]
        result = run_git(self.ctx, *args)
        if result.exit_code != 0:
            raise git_failure(result, "log")
        commits = []
        for record in result.stdout.split("\x1e"):
            fields = record.strip().split("\x1f")
            if len(fields) == 4:
                sha, author, date, subject = fields
                commits.append({"sha": sha, "author": author, "date": date, "subject": subject})
        return {"commits": commits}


def repo_is_dirty(ctx: ToolContext) -> bool | None:
    result = run_git(ctx, "status", "--porcelain=v1", "-z", "--untracked-files=normal")
    return bool(result.stdout.strip("\0")) if result.exit_code == 0 else None
