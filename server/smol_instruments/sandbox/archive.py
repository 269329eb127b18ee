"""A copy of a workspace as a tar stream, read link-safe on the host (for the Docker sandbox).

Each listed file is read through base/beneath.py from one descriptor of the root: a symbolic
link is added as a link (never followed), a folder swapped for a link after the listing is left
out and said, and a file that changes while it is read is cut or padded to the size it had
(tar needs it). Streamed: nothing is held in memory but one buffer.
"""

from __future__ import annotations

import io
import os
import stat
import tarfile
from typing import Any, BinaryIO

from ..base.beneath import Beneath, Refused


class Sink:
    """A socket as the write-only file tarfile streams into."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw

    def write(self, data: bytes) -> int:
        self.raw.sendall(data)
        return len(data)


class _Exactly(io.RawIOBase):
    """`size` bytes of `handle`: cut, or padded with zeros, when the file changed meanwhile."""

    def __init__(self, handle: BinaryIO, size: int) -> None:
        self.handle, self.left = handle, size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        want = min(len(buffer), self.left)
        if want <= 0:
            return 0
        data = self.handle.read(want) or bytes(want)
        buffer[: len(data)] = data
        self.left -= len(data)
        return len(data)


def add_workspace(tar: tarfile.TarFile, tree: Beneath, names: list[str], prefix: str) -> list[str]:
    """Add the files `names` (relative to `tree`'s root) under `prefix`, none read through a
    link: a symbolic link is added as a link, a folder swapped for one is left out and said.
    What was left out, one line each (files deleted meanwhile are skipped silently)."""
    problems: list[str] = []
    pending = list(names)
    while pending:
        name = pending.pop(0)
        try:
            entry = tree.lstat(name)
            info = tarfile.TarInfo(f"{prefix}/{name}")
            info.mode, info.mtime = stat.S_IMODE(entry.st_mode) & 0o777, int(entry.st_mtime)
            if stat.S_ISLNK(entry.st_mode):
                info.type, info.linkname = tarfile.SYMTYPE, tree.readlink(name)
                tar.addfile(info)
            elif stat.S_ISDIR(entry.st_mode):  # an untracked nested repository, listed whole
                pending += [f"{name}/{child}" for child in tree.listdir(name) if child != ".git"]
            elif stat.S_ISREG(entry.st_mode):
                with tree.open_file(name) as handle:
                    info.size = os.fstat(handle.fileno()).st_size
                    tar.addfile(info, io.BufferedReader(_Exactly(handle, info.size)))
        except (FileNotFoundError, NotADirectoryError):
            continue
        except Refused as exc:
            problems.append(exc.message)
        except OSError as exc:
            problems.append(f"{name}: {exc.strerror or exc}")
    return problems
