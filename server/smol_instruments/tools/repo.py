"""Repository tools: `repo_info` and `list_files` (which honours .gitignore)."""

from __future__ import annotations

import functools
import os
import re
import shutil
from typing import Any

from ..base.errors import ErrorType, ToolError
from ..base.process import ProcessResult, child_env, run_process
from .base import RepoTool, ToolContext, guarded
from .git import current_branch, head_sha, is_git_repo, repo_is_dirty, run_git
from .validation import optional_int, optional_str

LIST_TIMEOUT_S = 30.0


def rg_binary() -> str | None:
    return shutil.which("rg")


def run_rg(
    ctx: ToolContext, rg: str, args: list[str], timeout: float, stdin_text: str | None = None
) -> ProcessResult:
    """ripgrep in the repository, uncontained but unable to run anything: no config file is
    read (`--no-config`: a `--pre` there names a program to run on every file) and its
    environment is the allowlist of a tool (no `RIPGREP_CONFIG_PATH`). We never pass `--pre`
    or `--search-zip`, the only options that start programs. Contained, it would cost a
    sandbox start-up per search (about 50 ms, `python -m bench --only rg`) for nothing."""
    return run_process(
        [rg, "--no-config", *args],
        cwd=ctx.root,
        timeout=timeout,
        env=child_env("tool"),
        cancel=ctx.cancel,
        registry=ctx.processes,
        stdin_text=stdin_text,
    )


def list_repo_files(ctx: ToolContext) -> list[str]:
    """Every file of the repository that .gitignore does not exclude, sorted, POSIX paths.

    ripgrep walks the tree (honouring .gitignore, .ignore and git's excludes, even outside a
    git repository); without it, git's own listing; outside git, a plain walk.
    """
    root = ctx.root
    rg = rg_binary()
    if rg is not None:
        result = run_rg(
            ctx,
            rg,
            ["--files", "--hidden", "--no-require-git", "--glob", "!.git", "--no-messages"],
            LIST_TIMEOUT_S,
        )
        if result.exit_code in (0, 1):
            return sorted(line for line in result.stdout.splitlines() if line)
    if (root / ".git").exists():
        result = run_git(ctx, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
        if result.exit_code == 0:
            files = {p for p in result.stdout.split("\0") if p}
            return sorted(p for p in files if ctx.jail.tree.kind(p) == "file")
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames:
            found.append(os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/"))
    return sorted(found)


@functools.lru_cache(maxsize=256)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """Translate a glob (`**`, `*`, `?`, `[...]`, `{a,b}`) into a regex over POSIX paths."""
    return re.compile("(?s:" + _glob_body(pattern) + ")\\Z")


def _glob_body(pattern: str) -> str:
    out = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            end = pattern.find("]", i + 1)
            if end == -1:
                out.append(re.escape(c))
                i += 1
            else:
                body = pattern[i + 1 : end].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = end + 1
        elif c == "{":
            end = pattern.find("}", i + 1)
            if end == -1:
                out.append(re.escape(c))
                i += 1
            else:
                options = pattern[i + 1 : end].split(",")
                out.append("(?:" + "|".join(_glob_body(o) for o in options) + ")")
                i = end + 1
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def glob_match(path: str, pattern: str) -> bool:
    """Match a repository path; a pattern without '/' matches the file name at any depth."""
    if glob_regex(pattern).match(path):
        return True
    if "/" not in pattern:
        return bool(glob_regex(pattern).match(path.rsplit("/", 1)[-1]))
    return False


def filter_files(files: list[str], pattern: str, ctx: ToolContext) -> list[str]:
    pattern = pattern.strip().removeprefix("./")
    if pattern in {"", "*", "**", "**/*", "."}:
        return files
    if pattern.startswith(("/", "~")) or ".." in pattern.split("/"):
        ctx.jail.resolve(pattern)  # raises PATH_OUTSIDE_REPO with the right reason
    matched = [f for f in files if glob_match(f, pattern)]
    if not matched:
        directory = pattern.rstrip("/")
        kind = None if any(ch in directory for ch in "*?[{") else ctx.jail.tree.kind(directory)
        if kind in ("dir", "link"):  # stat'ed, not followed; a link out is refused by name
            ctx.jail.resolve(directory)
            matched = [f for f in files if f.startswith(directory + "/")]
    return matched


class ListFilesTool(RepoTool):
    name = "list_files"
    description = (
        "List repository files matching a glob (e.g. '**/*.py', 'src/**', '*.{ts,tsx}'); "
        "files ignored by .gitignore are left out."
    )
    inputs = {
        "pattern": {"type": "string", "description": "glob, default '**/*'", "nullable": True},
        "limit": {"type": "integer", "description": "most files to return", "nullable": True},
    }
    example = "list_files(pattern='**/*.py')"

    @guarded
    def forward(self, pattern: str | None = None, limit: int | None = None) -> dict[str, Any]:
        limits = self.limits
        pattern = optional_str("pattern", pattern, max_chars=1000, example="'**/*.py'") or "**/*"
        count = optional_int(
            "limit",
            limit,
            minimum=1,
            maximum=max(10_000, limits.truncate_items),
            default=limits.truncate_items,
        )
        assert count is not None
        files = filter_files(list_repo_files(self.ctx), pattern, self.ctx)
        if not files:
            raise ToolError(
                ErrorType.NO_MATCH,
                f"no files match {pattern!r}",
                recovery_suggestion=(
                    "Try a broader pattern such as '**/*' or '*.py' (a pattern without '/' "
                    "matches file names at any depth)."
                ),
                context={"pattern": pattern},
            )
        shown = files[:count]
        return {"files": shown, "total": len(files), "truncated": len(files) > count}


class RepoInfoTool(RepoTool):
    name = "repo_info"
    description = (
        "Describe the repository: root, branch, HEAD commit, dirty, file count, top-level entries."
    )
    inputs: dict[str, dict[str, Any]] = {}
    example = "repo_info()"

    @guarded
    def forward(self) -> dict[str, Any]:
        from .commands import detect_test_command

        ctx = self.ctx
        files = list_repo_files(ctx)
        is_git = is_git_repo(ctx)
        top = sorted({f.split("/", 1)[0] + ("/" if "/" in f else "") for f in files})
        limit = self.limits.truncate_items
        return {
            "root": str(ctx.root),
            "is_git": is_git,
            "branch": current_branch(ctx) if is_git else None,
            "head": head_sha(ctx) if is_git else None,
            "dirty": repo_is_dirty(ctx) if is_git else None,
            "file_count": len(files),
            "top_level": top[:limit],
            "test_command": detect_test_command(ctx.root),
            "truncated": len(top) > limit,
        }
