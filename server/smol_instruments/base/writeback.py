"""Writing back what an approved command made where git ignores (its `node_modules`, say).

A command the user approved (exactly that command) may keep its outputs in paths git
ignores; everything else it changed is proposed like any command's (tools/shell.py). The copy
never runs as host-side code following paths: `write_back` starts this very file as a script
(`python -I -S -c SOURCE`) inside a second containment where the repository is writable in
place (its `.git` and existing protected places read-only) and the view's upper layer is
mounted read-only. The script then, for each path it is given (stdin, NUL-separated):

- opens every directory on the way with O_NOFOLLOW from the repository's descriptor, making
  the missing ones: a link where a directory should be stops that path (said on stderr);
- applies what the upper layer holds there, as the overlay showed it: a whiteout removes, an
  opaque directory replaces what was there, a directory is merged entry by entry, a file is
  written to a temporary name and renamed over, a link is made again;
- skips protected places and byproducts at any depth (their names come in argv, from
  places.py), so not even a bug in the sorting writes `.git` or `.vscode`.

Below `if __name__ == "__main__"` nothing of ours is imported: the script runs where the
package may not be visible.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .overlay import View
    from .process import ProcessResult

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_OPAQUE = ("user.overlay.opaque", "trusted.overlay.opaque")


def write_back(root: Path, view: View, paths: list[str], *, timeout: float) -> ProcessResult:
    """Merge `paths` from `view`'s upper layer into the repository at `root`, contained."""
    from .containment import Containment
    from .places import (
        BYPRODUCT_DIRS,
        BYPRODUCT_FILES,
        BYPRODUCT_SUFFIXES,
        PROTECTED_NAMES,
        PROTECTED_SUFFIXES,
    )
    from .process import run_process

    refused = {
        "names": sorted(PROTECTED_NAMES | BYPRODUCT_DIRS | BYPRODUCT_FILES),
        "suffixes": [*PROTECTED_SUFFIXES, *BYPRODUCT_SUFFIXES],
    }
    argv = [
        sys.executable,
        "-I",
        "-S",
        "-c",
        Path(__file__).read_text(encoding="utf-8"),
        str(view.upper),
        str(root),
        json.dumps(refused),
    ]
    contain = Containment(root, direct=True, readable=(view.upper,))
    return run_process(
        argv,
        cwd=root,
        timeout=timeout,
        contain=contain,
        stdin_text="".join(f"{path}\0" for path in paths),
    )


class _Merger:
    def __init__(self, upper: int, root: int, names: set[str], suffixes: tuple[str, ...]):
        self.upper, self.root = upper, root
        self.names, self.suffixes = names, suffixes
        self.errors: list[str] = []

    def refused(self, name: str) -> bool:
        return name in self.names or name.endswith(self.suffixes)

    def path(self, rel: str) -> None:
        parts = rel.split("/")
        if any(self.refused(part) or part in ("", ".", "..") for part in parts):
            self.errors.append(f"{rel}: refused")
            return
        source = self.walk(self.upper, parts[:-1], make=False)
        target = self.walk(self.root, parts[:-1], make=True) if source is not None else None
        try:
            if source is None or target is None:
                self.errors.append(f"{rel}: a directory on the way is missing or a link")
                return
            self.entry(source, target, parts[-1], rel)
        finally:
            for fd in (source, target):
                if fd is not None:
                    os.close(fd)

    def walk(self, base: int, parts: list[str], *, make: bool) -> int | None:
        fd = os.dup(base)
        for part in parts:
            try:
                if make and not _exists(fd, part):
                    os.mkdir(part, 0o755, dir_fd=fd)
                child = os.open(part, _DIR, dir_fd=fd)
            except OSError:
                os.close(fd)
                return None
            os.close(fd)
            fd = child
        return fd

    def entry(self, source: int, target: int, name: str, rel: str) -> None:
        try:
            st = os.stat(name, dir_fd=source, follow_symlinks=False)
        except FileNotFoundError:  # hidden below an opaque directory: deleted
            return _remove(target, name)
        mode = st.st_mode
        try:
            if stat.S_ISCHR(mode) and st.st_rdev == 0:
                _remove(target, name)
            elif stat.S_ISDIR(mode):
                self.directory(source, target, name, rel)
            elif stat.S_ISREG(mode):
                _copy(source, target, name, stat.S_IMODE(mode) & 0o755)
            elif stat.S_ISLNK(mode):
                link = os.readlink(name, dir_fd=source)
                _remove(target, name)
                os.symlink(link, name, dir_fd=target)
        except OSError as exc:
            self.errors.append(f"{rel}: {exc.strerror or exc}")

    def directory(self, source: int, target: int, name: str, rel: str) -> None:
        inner = os.open(name, _DIR, dir_fd=source)
        try:
            opaque = any(_xattr(inner, key) == b"y" for key in _OPAQUE)
            there = (
                os.stat(name, dir_fd=target, follow_symlinks=False)
                if _exists(target, name)
                else None
            )
            if there is not None and (opaque or not stat.S_ISDIR(there.st_mode)):
                _remove(target, name)
                there = None
            if there is None:
                os.mkdir(name, 0o755, dir_fd=target)
            into = os.open(name, _DIR, dir_fd=target)
            try:
                for child in sorted(os.listdir(inner)):
                    if self.refused(child):
                        continue
                    self.entry(inner, into, child, f"{rel}/{child}")
            finally:
                os.close(into)
        finally:
            os.close(inner)


def _exists(fd: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def _xattr(fd: int, key: str) -> bytes | None:
    try:
        return os.getxattr(fd, key)
    except OSError:
        return None


def _remove(parent: int, name: str) -> None:
    """Remove `name` below `parent`, a directory with all it holds, following no link."""
    try:
        st = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(st.st_mode):
        os.unlink(name, dir_fd=parent)
        return
    fd = os.open(name, _DIR, dir_fd=parent)
    try:
        for child in os.listdir(fd):
            _remove(fd, child)
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=parent)


def _copy(source: int, target: int, name: str, mode: int) -> None:
    temporary = f".{name}.smol-write-back"
    _remove(target, temporary)
    there = _exists(target, name) and os.stat(name, dir_fd=target, follow_symlinks=False)
    if there and stat.S_ISDIR(there.st_mode):
        _remove(target, name)
    src = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=source)
    try:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        dst = os.open(temporary, flags, mode, dir_fd=target)
        try:
            while block := os.read(src, 1 << 20):
                os.write(dst, block)
        finally:
            os.close(dst)
    finally:
        os.close(src)
    os.replace(temporary, name, src_dir_fd=target, dst_dir_fd=target)


def main(argv: list[str]) -> int:
    upper_path, root_path, refused = argv[0], argv[1], json.loads(argv[2])
    upper = os.open(upper_path, _DIR)
    root = os.open(root_path, _DIR)
    merger = _Merger(upper, root, set(refused["names"]), tuple(refused["suffixes"]))
    for rel in sys.stdin.buffer.read().decode("utf-8", "surrogateescape").split("\0"):
        if rel:
            merger.path(rel)
    for error in merger.errors:
        print(f"write-back: {error}", file=sys.stderr)
    return 1 if merger.errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
