"""The path jail: every path a tool touches resolves inside the repository root.

Refused with PATH_OUTSIDE_REPO: `..` that climbs out, absolute paths outside the root, `~`,
NUL bytes, symlinks (file or directory, at any depth) whose target lies outside, device files,
FIFOs and sockets, and for writes anything inside `.git/`. An absolute path that lies inside
the root is accepted: small models often echo back the root that `repo_info` reported.

The jail checks names; `jail.tree` (base/beneath.py, opened once on the root) is what reads
and writes them, refusing any link met at the moment of use, so a folder swapped for a link
after the check leads nowhere.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..base.beneath import Beneath, Refused
from ..base.errors import ErrorType, ToolError

MAX_PATH_CHARS = 4096


def _outside(path: str, why: str) -> ToolError:
    return ToolError(
        ErrorType.PATH_OUTSIDE_REPO,
        f"path {path!r} is refused: {why}",
        recovery_suggestion=(
            "Use a path relative to the repository root, such as 'src/main.py'; "
            "call list_files() to see the files that exist."
        ),
        context={"path": path},
    )


def _fully_resolved(path: Path) -> bool:
    """True when no symlink is left on the part of `path` that exists."""
    probe = path
    while not os.path.lexists(probe) and probe != probe.parent:
        probe = probe.parent
    try:
        return probe.resolve(strict=True) == probe
    except (OSError, RuntimeError):
        return False


class PathJail:
    """Resolves user- or model-supplied paths against one root and refuses escapes."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root).resolve(strict=True)
        if not self.root.is_dir():
            raise NotADirectoryError(f"repository root {self.root} is not a directory")
        self.tree = Beneath(self.root)

    def resolve(self, path: str, *, for_write: bool = False) -> Path:
        """The absolute, symlink-free path inside the root that `path` names, or ToolError."""
        if not isinstance(path, str):
            raise ToolError(
                ErrorType.INVALID_ARGUMENT,
                f"path must be a string, got {type(path).__name__}",
                recovery_suggestion="Pass the path as a string, e.g. read_file(path='src/app.py').",
            )
        if "\x00" in path:
            raise _outside(path, "it contains a NUL byte")
        if len(path) > MAX_PATH_CHARS:
            raise ToolError(
                ErrorType.INVALID_ARGUMENT,
                f"path is {len(path)} characters long (limit {MAX_PATH_CHARS})",
                recovery_suggestion="Pass one relative file path, not file contents.",
            )
        text = path.strip()
        if not text:
            raise ToolError(
                ErrorType.INVALID_ARGUMENT,
                "path is empty",
                recovery_suggestion="Pass a path relative to the repository root, or '.' for the root.",
            )
        if text.startswith("~"):
            raise _outside(path, "'~' names a home directory outside the repository")
        candidate = Path(text)
        if not candidate.is_absolute():
            candidate = self.root / candidate
        # resolve() follows every symlink on the way, so links to the outside are caught here.
        try:
            resolved = candidate.resolve(strict=False)
        except (OSError, RuntimeError) as exc:  # symlink loops, unreadable components
            raise _outside(path, f"it cannot be resolved ({exc.__class__.__name__})") from None
        if not _fully_resolved(resolved):
            # A symlink loop stops resolve() early and the rest is joined as text, so
            # `loop/../link_out` reads as inside while the kernel would follow link_out.
            raise _outside(path, "it runs through a symlink that cannot be resolved")
        if resolved != self.root and self.root not in resolved.parents:
            if os.path.isabs(text):
                raise _outside(path, "absolute paths outside the repository are not allowed")
            if ".." in Path(text).parts:
                raise _outside(path, "'..' climbs out of the repository")
            raise _outside(path, "it resolves (through a symlink) outside the repository")
        relative = resolved.relative_to(self.root)
        if for_write and any(part.lower() == ".git" for part in relative.parts):
            raise _outside(path, "writing inside .git/ is not allowed")
        if for_write and resolved == self.root:
            raise _outside(path, "the repository root itself cannot be written")
        self._refuse_special(path, relative)
        return resolved

    def relative(self, absolute: Path) -> str:
        """The POSIX-style path of `absolute` relative to the root ('.' for the root)."""
        rel = absolute.relative_to(self.root).as_posix()
        return rel or "."

    def contains(self, path: str, *, for_write: bool = False) -> bool:
        try:
            self.resolve(path, for_write=for_write)
        except ToolError:
            return False
        return True

    def _refuse_special(self, path: str, relative: Path) -> None:
        try:
            mode = self.tree.lstat(relative.as_posix()).st_mode
        except FileNotFoundError:
            return
        except Refused as exc:  # a component became a link since resolve() looked
            link = repr(exc.component) if exc.component else "a component of it"
            raise _outside(path, f"{link} is a symbolic link") from None
        except OSError as exc:
            raise _outside(path, f"it cannot be inspected ({exc.strerror})") from None
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            raise _outside(path, "it is a device, FIFO or socket, not a regular file")
