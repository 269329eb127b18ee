"""Git tools: status, diff and log, through argument lists (never a shell) with timeouts."""

from __future__ import annotations

from typing import Any

from ..base import git
from ..base.errors import ErrorType, ToolError
from ..base.process import ProcessResult
from ..base.truncate import truncate_output
from .base import RepoTool, ToolContext, guarded
from .validation import optional_bool, optional_int, optional_path

GIT_TIMEOUT_S = git.GIT_TIMEOUT_S


def run_git(ctx: ToolContext, *args: str, timeout: float = GIT_TIMEOUT_S) -> ProcessResult:
    """Run git in the repository through the hardened runner; ToolError when it cannot run."""
    try:
        result = git.run_git(
            ctx.root,
            *args,
            mode=ctx.settings.command_containment,
            timeout=timeout,
            cancel=ctx.cancel,
            registry=ctx.processes,
        )
    except git.NotARepository:
        raise not_a_repository(ctx) from None
    except git.GitUnavailable as exc:
        raise ToolError(
            ErrorType.TOOL_UNAVAILABLE,
            f"git cannot run: {exc}",
            recovery_suggestion="git is unusable here; use read_file and list_files instead.",
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


def not_a_repository(ctx: ToolContext) -> ToolError:
    return ToolError(
        ErrorType.NOT_A_GIT_REPO,
        f"{ctx.root} is not a git repository",
        recovery_suggestion="Git history is unavailable here; use list_files, read_file and rg_search.",
    )


def is_git_repo(ctx: ToolContext) -> bool:
    """Whether the root has a git directory we trust (no git process: each one costs a sandbox)."""
    return git.git_dir(ctx.root) is not None


def require_git_repo(ctx: ToolContext) -> None:
    if not is_git_repo(ctx):
        raise not_a_repository(ctx)


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
    example = "git_diff(path='<file>')"

    @guarded
    def forward(self, path: str | None = None, staged: bool | None = None) -> dict[str, Any]:
        limits = self.limits
        path = optional_path("path", path, max_chars=limits.max_chars)
        staged = optional_bool("staged", staged)
        require_git_repo(self.ctx)
        args = ["diff", "--no-color"]
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


#: Files listed per commit by git_log.
COMMIT_FILES = 20


class GitLogTool(RepoTool):
    name = "git_log"
    description = (
        "List recent commits (newest first) with the files each changed, optionally only "
        "those touching a path."
    )
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
        # each record starts with a separator; the files it changed follow its fields
        args = [
            "log",
            f"--max-count={count}",
            "--name-only",
            "--format=%x1e%H%x1f%an%x1f%aI%x1f%s%x1f",
        ]
        if rel is not None:
            args += ["--", rel]
        result = run_git(self.ctx, *args)
        if result.exit_code != 0:
            raise git_failure(result, "log")
        commits = []
        for record in result.stdout.split("\x1e"):
            fields = record.split("\x1f")
            if len(fields) == 5:
                sha, author, date, subject, names = fields
                files = [name for name in names.splitlines() if name.strip()]
                commit: dict[str, Any] = {
                    "sha": sha,
                    "author": author,
                    "date": date,
                    "subject": subject,
                    "files": files[:COMMIT_FILES],
                }
                if len(files) > COMMIT_FILES:
                    commit["more_files"] = len(files) - COMMIT_FILES
                commits.append(commit)
        return {"commits": commits}


def repo_is_dirty(ctx: ToolContext) -> bool | None:
    result = run_git(ctx, "status", "--porcelain=v1", "-z", "--untracked-files=normal")
    return bool(result.stdout.strip("\0")) if result.exit_code == 0 else None
