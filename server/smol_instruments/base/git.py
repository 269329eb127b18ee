"""Where the repository is: its root and its git directory (stdlib only, cheap to import)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def find_repo_root(start: Path) -> Path:
    """The git top level containing `start`, or `start` itself outside a repository."""
    start = start.resolve()
    try:
        out = subprocess.run(
            ["git", "-C", str(start), "rev-parse", "--show-toplevel"],
            capture_output=True,
            text=True,
            timeout=10,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return start
    if out.returncode == 0 and out.stdout.strip():
        return Path(out.stdout.strip()).resolve()
    return start


def git_dir(root: Path) -> Path | None:
    dot_git = root / ".git"
    if dot_git.is_dir():
        return dot_git
    if dot_git.is_file():  # a worktree or submodule: ".git" names the real directory
        text = dot_git.read_text(errors="replace").strip()
        if text.startswith("gitdir:"):
            target = Path(text.split(":", 1)[1].strip())
            return target if target.is_absolute() else (root / target).resolve()
    return None


def workspace_files(root: Path) -> list[str]:
    """What a validation copies: tracked and untracked-not-ignored files (all but .git outside git).

    Ignored files (virtualenvs, node_modules, build output) are left out, so a copy of a
    small repository stays small; files deleted from the working tree are skipped.
    """
    try:
        out = subprocess.run(
            [
                "git",
                "-C",
                str(root),
                "ls-files",
                "-z",
                "--cached",
                "--others",
                "--exclude-standard",
            ],
            capture_output=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        out = None
    if out is not None and out.returncode == 0:
        names = dict.fromkeys(
            name.rstrip("/")
            for name in out.stdout.decode("utf-8", errors="surrogateescape").split("\0")
            if name
        )
        return [name for name in names if os.path.lexists(root / name)]
    files: list[str] = []
    for directory, subdirs, filenames in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if d != ".git")
        rel = Path(directory).relative_to(root)
        files += [str(rel / name) if str(rel) != "." else name for name in sorted(filenames)]
    return files
