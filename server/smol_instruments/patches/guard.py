"""What a patch may touch: regular files inside the repository, reached without a symlink.

Checked at every point a patch passes — proposal, persistence, load at start-up, and accept
(in the editor's applyEdit path and in the direct write) — because the patch store's directory
can be written by other processes and the tree can change between proposal and accept.
Refused with PATH_OUTSIDE_REPO: anything the path jail refuses (absolute paths, `..`, `~`,
`.git/`, symlinks leading out, devices), and any path that is itself a symbolic link or goes
through one, even one that stays inside.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path, PurePosixPath

from ..base.errors import ErrorType, ToolError
from ..safety.jail import PathJail
from .model import Patch


def _refused(path: str, why: str) -> ToolError:
    return ToolError(
        ErrorType.PATH_OUTSIDE_REPO,
        f"path {path!r} is refused: {why}",
        recovery_suggestion="Patch regular files by their path relative to the repository root.",
        context={"path": path},
    )


def patch_path(jail: PathJail, path: str) -> Path:
    """The file `path` (relative to the root) names, or ToolError if a patch may not touch it.

    NotADirectoryError (an OSError, not a refusal) when a file sits where a directory should.
    """
    if not isinstance(path, str) or not path.strip():
        raise _refused(str(path), "it is empty")
    pure = PurePosixPath(path)
    if pure.is_absolute() or os.path.isabs(path):
        raise _refused(path, "a patch names files relative to the repository root")
    if ".." in pure.parts:
        raise _refused(path, "'..' climbs out of the repository")
    literal = jail.root.joinpath(*pure.parts)
    for parent in reversed(literal.parents):
        if (
            parent.is_relative_to(jail.root)
            and os.path.isfile(parent)
            and not os.path.islink(parent)
        ):
            # A file where a directory should be: not an escape, the tree changed (stale).
            raise NotADirectoryError(
                errno.ENOTDIR, "a file is where a directory should be", str(parent)
            )
    resolved = jail.resolve(path, for_write=True)  # PATH_OUTSIDE_REPO for escapes and .git/
    if resolved != literal or os.path.islink(literal):
        raise _refused(path, "it is a symbolic link or goes through one")
    return literal


def check_patch(jail: PathJail, patch: Patch) -> None:
    """ToolError unless every file of `patch` is one a patch may touch."""
    for change in patch.files:
        try:
            patch_path(jail, change.path)
        except OSError:
            continue  # the tree changed under the path: reading it finds the patch stale
