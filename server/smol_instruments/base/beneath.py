"""Link-safe file operations beneath a trusted directory: no component is ever a link followed.

Our code runs outside the sandbox and opens paths inside a tree a hostile repository wrote
and a contained command can change while we work. Checking a path and then opening it by
name again is a race: a folder swapped for a symbolic link in between sends the open to
`~/.ssh` or `/proc/self`. So every operation here starts from a descriptor of the root,
opened once, and resolves each component without following a link:

- Linux 5.6+: one `openat2(2)` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
  RESOLVE_NO_MAGICLINKS` (through ctypes; no maintained PyPI package wraps it without a
  native library: `pathrs` needs libpathrs installed);
- elsewhere (older kernels, seccomp filters that refuse it, macOS): one `openat` per
  component from the parent's descriptor with `O_NOFOLLOW` (and `O_DIRECTORY` on the way).

Paths are relative to the root, `/`-separated; absolute paths and `..` are refused before any
system call. A link met on the way, at any depth and whenever it appeared, is refused with
`Refused` (a ToolError, PATH_OUTSIDE_REPO) naming the component; missing files, a file where
a directory should be, permissions and full disks stay the usual OSErrors. Reads open with
`O_NONBLOCK` and check what was opened (a FIFO swapped in cannot hang us, a device is refused).
Writes are atomic: a temporary file created `O_EXCL | O_NOFOLLOW` in the parent's descriptor,
fsynced, renamed over the target within that descriptor, the target's permission bits kept.
"""

from __future__ import annotations

import ctypes
import errno
import os
import secrets
import stat
import sys
import threading
import weakref
from pathlib import Path
from typing import Any, BinaryIO

from .errors import ErrorType, ToolError

RESOLVE_NO_MAGICLINKS = 0x02
RESOLVE_NO_SYMLINKS = 0x04
RESOLVE_BENEATH = 0x08
_RESOLVE = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS
#: openat2's number, the same on every Linux architecture (new system calls share one table).
SYS_OPENAT2 = 437

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | _CLOEXEC
_READ = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_NOFOLLOW | _CLOEXEC
#: A link met where openat / openat2 refuse to follow it (ENOTDIR: with O_DIRECTORY).
_LINKISH = {errno.ELOOP, errno.ENOTDIR, errno.EMLINK}


class Refused(ToolError):
    """A path that would leave the tree or go through a link; the message names the component."""

    def __init__(self, path: str, why: str, component: str | None = None) -> None:
        super().__init__(
            ErrorType.PATH_OUTSIDE_REPO,
            f"path {path!r} is refused: {why}",
            recovery_suggestion=(
                "Use a path relative to the repository root that goes through no symbolic "
                "link, such as 'src/main.py'; call list_files() to see the files that exist."
            ),
            context={"path": path, **({"link": component} if component else {})},
        )
        self.path = path
        self.component = component


def parts_of(path: str | os.PathLike[str]) -> tuple[str, ...]:
    """The components of a relative path; Refused for absolute paths, `..` and NUL bytes."""
    text = os.fspath(path)
    if not isinstance(text, str):
        raise TypeError(f"expected a str path, got {type(text).__name__}")
    if "\x00" in text:
        raise Refused(text, "it contains a NUL byte")
    if text.startswith("/") or os.path.isabs(text):
        raise Refused(text, "absolute paths are not allowed here; name it from the root")
    parts = tuple(p for p in text.split("/") if p not in ("", "."))
    if ".." in parts:
        raise Refused(text, "'..' climbs out of the repository")
    return parts


class _How(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


_HOW_SIZE = ctypes.sizeof(_How)


class _OpenAt2:
    """openat2(2) through libc's syscall(), probed once per process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._works: bool | None = None
        self._syscall: Any = None

    def available(self) -> bool:
        if self._works is None:
            with self._lock:
                if self._works is None:
                    self._works = self._probe()
        return self._works

    def _probe(self) -> bool:
        if not sys.platform.startswith("linux"):
            return False
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            syscall = libc.syscall
        except (OSError, AttributeError):
            return False
        syscall.restype = ctypes.c_long
        # Declared once (ctypes then converts without building wrappers per call); glibc's
        # syscall() reads its arguments from the registers a plain call fills.
        syscall.argtypes = [
            ctypes.c_long,
            ctypes.c_int,
            ctypes.c_char_p,
            ctypes.POINTER(_How),
            ctypes.c_size_t,
        ]
        self._syscall = syscall
        try:
            fd = self.call(-100, ".", os.O_RDONLY | os.O_DIRECTORY, 0)  # AT_FDCWD
        except OSError:  # ENOSYS (old kernel), EPERM (a seccomp filter), EINVAL, E2BIG
            return False
        os.close(fd)
        return True

    def disable(self) -> None:
        self._works = False

    def call(self, dir_fd: int, path: str, flags: int, mode: int) -> int:
        assert self._syscall is not None
        how = _How(flags | _CLOEXEC, mode if flags & os.O_CREAT else 0, _RESOLVE)
        fd = self._syscall(SYS_OPENAT2, dir_fd, os.fsencode(path), how, _HOW_SIZE)
        if fd < 0:
            code = ctypes.get_errno()
            raise OSError(code, os.strerror(code), path)
        return int(fd)


_OPENAT2 = _OpenAt2()


class Beneath:
    """File operations on paths relative to `root`, none of them following a link.

    `root` is the directory the user chose (the caller resolves it); it is opened once and
    every path is resolved from that descriptor. `use_openat2=False` forces the
    per-component walk (the path macOS and old kernels take).
    """

    def __init__(self, root: Path | str, *, use_openat2: bool | None = None) -> None:
        self.root = Path(root)
        self._fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | _CLOEXEC)
        self._finalizer = weakref.finalize(self, os.close, self._fd)
        self._openat2 = _OPENAT2.available() if use_openat2 is None else use_openat2
        if self._openat2 and not _OPENAT2.available():
            raise OSError(errno.ENOSYS, "openat2 is not available on this system")

    @property
    def fd(self) -> int:
        """The root's descriptor (ours: closed by `close`), for walking the tree from it."""
        return self._fd

    @property
    def uses_openat2(self) -> bool:
        return self._openat2

    def close(self) -> None:
        self._finalizer()

    def __enter__(self) -> Beneath:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- resolution -----------------------------------------------------------------------

    def _open(self, path: str, parts: tuple[str, ...], flags: int, mode: int = 0o666) -> int:
        """A descriptor of `parts` opened with `flags`, no link followed on the way."""
        if not parts:
            return os.open(".", flags & ~os.O_NOFOLLOW | _CLOEXEC, dir_fd=self._fd)
        if self._openat2:
            for _ in range(3):
                try:
                    return _OPENAT2.call(self._fd, "/".join(parts), flags, mode)
                except OSError as exc:
                    if exc.errno == errno.EAGAIN:  # a rename raced the lookup: try again
                        continue
                    if exc.errno == errno.ENOSYS:
                        _OPENAT2.disable()
                        self._openat2 = False
                        break
                    if exc.errno == errno.EXDEV:
                        raise Refused(path, "it leads outside the repository") from None
                    raise self._explained(path, parts, exc) from None
        return self._walk(path, parts, flags, mode)

    def _walk(self, path: str, parts: tuple[str, ...], flags: int, mode: int) -> int:
        current = self._fd
        try:
            for index, name in enumerate(parts):
                last = index == len(parts) - 1
                try:
                    if last:
                        fd = os.open(name, flags | os.O_NOFOLLOW | _CLOEXEC, mode, dir_fd=current)
                    else:
                        fd = os.open(name, _DIRECTORY, dir_fd=current)
                except OSError as exc:
                    raise self._explained(path, parts[: index + 1], exc) from None
                if current != self._fd:
                    os.close(current)
                current = fd
            return current
        except BaseException:
            if current != self._fd:
                os.close(current)
            raise

    def _explained(self, path: str, parts: tuple[str, ...], exc: OSError) -> Exception:
        """Refused naming the link when `exc` came from one; otherwise `exc` with the path."""
        if exc.errno in _LINKISH:
            link = self._first_link(parts)
            if link is not None:
                return Refused(path, f"{link!r} is a symbolic link", component=link)
            if exc.errno == errno.ELOOP:
                return Refused(path, "a component of it is a symbolic link")
        return type(exc)(exc.errno, exc.strerror, path)

    def _first_link(self, parts: tuple[str, ...]) -> str | None:
        """The first prefix of `parts` that is a link now (for the message only)."""
        for end in range(1, len(parts) + 1):
            prefix = "/".join(parts[:end])
            try:
                mode = os.stat(prefix, dir_fd=self._fd, follow_symlinks=False).st_mode
            except OSError:
                return None
            if stat.S_ISLNK(mode):
                return prefix
            if not stat.S_ISDIR(mode):
                return None
        return None

    def _parent(self, path: str, *, create: bool = False, mode: int = 0o777) -> tuple[int, str]:
        """(descriptor of the parent directory, final name) of a path that is not the root."""
        parts = parts_of(path)
        if not parts:
            raise IsADirectoryError(errno.EISDIR, "the root itself", path)
        if create:
            return self._makedirs(path, parts[:-1], mode), parts[-1]
        return self._open(path, parts[:-1], _DIRECTORY), parts[-1]

    def _makedirs(self, path: str, parts: tuple[str, ...], mode: int) -> int:
        current = os.dup(self._fd)
        try:
            for index, name in enumerate(parts):
                for _ in range(3):
                    try:
                        fd = os.open(name, _DIRECTORY, dir_fd=current)
                        break
                    except FileNotFoundError:
                        try:
                            os.mkdir(name, mode, dir_fd=current)
                        except FileExistsError:
                            pass  # made by someone else meanwhile: open what is there
                    except OSError as exc:
                        raise self._explained(path, parts[: index + 1], exc) from None
                else:
                    raise FileNotFoundError(errno.ENOENT, "it keeps disappearing", path)
                os.close(current)
                current = fd
            return current
        except BaseException:
            os.close(current)
            raise

    # --- operations -----------------------------------------------------------------------

    def open_file(self, path: str) -> BinaryIO:
        """A regular file opened for reading; IsADirectoryError for a directory, Refused for
        a device, FIFO or socket."""
        fd = self._open(path, parts_of(path), _READ)
        try:
            mode = os.fstat(fd).st_mode
            if stat.S_ISDIR(mode):
                raise IsADirectoryError(errno.EISDIR, "is a directory", path)
            if not stat.S_ISREG(mode):
                raise Refused(path, "it is a device, FIFO or socket, not a regular file")
            os.set_blocking(fd, True)
            return os.fdopen(fd, "rb")
        except BaseException:
            os.close(fd)
            raise

    def read_bytes(self, path: str) -> bytes:
        with self.open_file(path) as handle:
            return handle.read()

    def read_prefix(self, path: str, limit: int) -> bytes | None:
        """At most `limit` + 1 bytes of the regular file at `path` (more than `limit`: the
        file is longer); None where there is no regular file to read there without following
        a link (missing, a directory, a device or FIFO, a link on the way)."""
        try:
            handle = self.open_file(path)
        except (OSError, Refused):
            return None
        with handle:
            return handle.read(limit + 1)

    def lstat(self, path: str) -> os.stat_result:
        """The entry itself (a link is described, not followed)."""
        parts = parts_of(path)
        if not parts:
            return os.fstat(self._fd)
        parent, name = self._parent(path)
        try:
            return os.stat(name, dir_fd=parent, follow_symlinks=False)
        finally:
            os.close(parent)

    def kind(self, path: str) -> str | None:
        """'file', 'dir', 'link' or 'other' for what is there now; None when nothing is (or it
        cannot be reached without following a link)."""
        try:
            mode = self.lstat(path).st_mode
        except (OSError, Refused):
            return None
        if stat.S_ISREG(mode):
            return "file"
        if stat.S_ISDIR(mode):
            return "dir"
        return "link" if stat.S_ISLNK(mode) else "other"

    def listdir(self, path: str = ".") -> list[str]:
        fd = self._open(path, parts_of(path), _DIRECTORY)
        try:
            return sorted(os.listdir(fd))
        finally:
            os.close(fd)

    def readlink(self, path: str) -> str:
        parent, name = self._parent(path)
        try:
            return os.readlink(name, dir_fd=parent)
        finally:
            os.close(parent)

    def makedirs(self, path: str, mode: int = 0o777) -> None:
        """Create `path` and its missing parents; Refused when one of them is a link."""
        os.close(self._makedirs(path, parts_of(path), mode))

    def write_atomic(
        self,
        path: str,
        data: bytes,
        *,
        mode: int | None = None,
        parents: bool = False,
        dir_mode: int = 0o777,
    ) -> None:
        """Replace (or create) the file at `path` with `data`, all or nothing.

        With `parents`, missing parent directories are created (`dir_mode`); without, a
        missing one is FileNotFoundError. The file keeps its permission bits; a new one gets
        `mode`, by default what `open` would give it (0o666 less the umask). Refused when the
        target or a parent is a link.
        """
        parent, name = self._parent(path, create=parents, mode=dir_mode)
        temp = f".{name[:180]}.{secrets.token_hex(4)}.smol-tmp"
        try:
            try:
                current = os.stat(name, dir_fd=parent, follow_symlinks=False)
            except FileNotFoundError:
                current = None
            if current is not None:
                if stat.S_ISLNK(current.st_mode):
                    raise Refused(path, f"{path!r} is a symbolic link", component=path)
                if stat.S_ISDIR(current.st_mode):
                    raise IsADirectoryError(errno.EISDIR, "is a directory", path)
                mode = stat.S_IMODE(current.st_mode) & 0o777
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | _CLOEXEC
            fd = os.open(temp, flags, 0o600 if mode is not None else 0o666, dir_fd=parent)
            try:
                if mode is not None:
                    os.fchmod(fd, mode)
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(temp, name, src_dir_fd=parent, dst_dir_fd=parent)
        except BaseException:
            try:
                os.unlink(temp, dir_fd=parent)
            except OSError:
                pass
            raise
        finally:
            os.close(parent)

    def unlink(self, path: str, *, missing_ok: bool = False) -> None:
        """Remove the entry at `path` (a link is removed itself, never followed)."""
        try:
            parent, name = self._parent(path)
        except FileNotFoundError:
            if missing_ok:
                return
            raise
        try:
            os.unlink(name, dir_fd=parent)
        except FileNotFoundError:
            if not missing_ok:
                raise FileNotFoundError(errno.ENOENT, "no such file", path) from None
        finally:
            os.close(parent)
