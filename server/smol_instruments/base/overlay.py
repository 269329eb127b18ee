"""A copy-on-write view of the repository: a contained command writes there, never in place.

`View.create(root)` makes a fresh directory of ours (mode 0700, in the temporary directory,
outside the repository, never reused by another command) holding the overlay's upper layer.
`view.enter()` is what the child process runs between fork and exec, before bubblewrap
starts (`Launch.setup`, given to Popen as `preexec_fn`):

    unshare(CLONE_NEWUSER | CLONE_NEWNS)     # root: CLONE_NEWNS alone, as bubblewrap runs today
    /proc/self/{setgroups,uid_map,gid_map}   # our own uid and gid, mapped to themselves
    mount --make-rprivate /                  # nothing we mount reaches another namespace
    mount -t overlay overlay -o lowerdir=ROOT,upperdir=UP,workdir=WORK,userxattr,volatile ROOT

and bubblewrap, exec'd next, binds ROOT (now the overlay) as the repository. Every write of
the command lands in UP; a deletion is a whiteout (a 0/0 character device), a directory
replaced as a whole is marked opaque (`user.overlay.opaque`); the repository itself is only
read. When the command has ended, `changes.py` reads UP to say what the command changed.

Why in the forked child and not `unshare -Urm sh -c 'mount ... && exec bwrap ...'`: the
three extra programs (unshare, sh, mount) cost 7.5 ms a command against 3.5 ms here
(bench/containment.py, `contain_view`); the function only makes system calls prepared
beforehand (no import, no lock), which is what is safe between fork and exec in a process
with threads. A failure there is said on the command's stderr (FAILURE) with exit status
FAILED. `volatile` skips the overlay's sync of the upper filesystem when it goes away
(a sync of the whole disk holding the temporary directory, 3-5 ms under load): the upper
layer is read right after and thrown away, so nothing needs to reach the disk.

One view may serve several commands in a row (a validation: `git apply`, then the checks,
see sandbox/local.py): each mount gets a fresh work directory, which `volatile` requires.
`with_repository=True` also binds the repository as it is at `real` before the overlay
covers it, so an approved command widened with `git` writes the real `.git`.
"""

from __future__ import annotations

import atexit
import ctypes
import ctypes.util
import os
import queue
import shutil
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

# linux/sched.h, linux/mount.h
CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 1 << 18

#: How a view's directory is named: PREFIX, the pid of the process that made it, a random tail.
PREFIX = "smol-view-"

#: Options of every view's overlay (besides its layers).
OPTIONS = "userxattr,volatile"

#: Where the upper layer says a directory hides what the repository has below it.
OPAQUE_XATTRS = ("user.overlay.opaque", "trusted.overlay.opaque")

#: The exit status and the first words of stderr when the view could not be mounted.
FAILED = 125
FAILURE = b"smol-instruments: the copy-on-write view could not be mounted"

#: Characters that cannot be passed in overlayfs' option string.
_UNSAFE = frozenset(",:\\\n=")

_libc: ctypes.CDLL | None = None


class ViewError(OSError):
    """The view could not be made or mounted (said in words a user can act on)."""


def _c() -> ctypes.CDLL:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
    return _libc


def unsafe_path(path: Path) -> str | None:
    """Why `path` cannot be a layer of an overlay (a character its options cannot carry)."""
    bad = sorted(set(str(path)) & _UNSAFE)
    if bad:
        return (
            f"{path} holds {' '.join(repr(c) for c in bad)}, which overlayfs options cannot carry"
        )
    return None


@dataclass
class View:
    """One fresh copy-on-write view of `root`; `close()` removes its directory."""

    root: Path
    scratch: Path
    _mounts: int = field(default=0, repr=False)

    @classmethod
    def create(cls, root: Path) -> View:
        root = Path(root).resolve()
        base = Path(tempfile.gettempdir()).resolve()
        if base == root or base.is_relative_to(root):
            raise ViewError(f"the temporary directory {base} lies inside the repository {root}")
        problem = unsafe_path(root) or unsafe_path(base)
        if problem:
            raise ViewError(problem)
        _reaper.sweep(base)
        scratch = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=base))  # 0700
        for name in ("upper", "real"):
            (scratch / name).mkdir()
        return cls(root, scratch)

    @property
    def upper(self) -> Path:
        """The overlay's upper layer: what the commands in this view wrote."""
        return self.scratch / "upper"

    @property
    def real(self) -> Path:
        """Where the repository as it is stays reachable (only with `with_repository`)."""
        return self.scratch / "real"

    def enter(self, *, with_repository: bool = False) -> Callable[[], None]:
        """The function that mounts this view in a forked child, prepared here: once called
        it only makes system calls (no import, no lock taken)."""
        self._mounts += 1
        work = self.scratch / f"work{self._mounts}"
        work.mkdir()
        root = os.fsencode(self.root)
        options = os.fsencode(
            f"lowerdir={self.root},upperdir={self.upper},workdir={work},{OPTIONS}"
        )
        real = os.fsencode(self.real) if with_repository else None
        return _enterer(root, options, real)

    def close(self) -> None:
        """Throw the view away (in the background: removing a directory tree costs tens of
        milliseconds on a busy disk, and nobody waits for it)."""
        _reaper.remove(self.scratch)

    def __enter__(self) -> View:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Reaper:
    """Removes thrown-away views on a thread of its own; what is left when we exit is
    removed then, and what a process killed outright left, by the next one's `sweep`."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[Path | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._swept: set[Path] = set()
        self._pending: set[Path] = set()

    def remove(self, scratch: Path) -> None:
        with self._lock:
            self._pending.add(scratch)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="smol-views", daemon=True)
                self._thread.start()
                atexit.register(self.drain)
        self._queue.put(scratch)

    def _run(self) -> None:
        while (scratch := self._queue.get()) is not None:
            remove_tree(scratch)
            with self._lock:
                self._pending.discard(scratch)

    def drain(self) -> None:
        with self._lock:
            pending = list(self._pending)
        for scratch in pending:
            remove_tree(scratch)

    def sweep(self, base: Path) -> None:
        """Remove views in `base` whose process is gone (once per base and process)."""
        with self._lock:
            if base in self._swept:
                return
            self._swept.add(base)
        try:
            names = os.listdir(base)
        except OSError:
            return
        for name in names:
            pid = name.removeprefix(PREFIX).split("-", 1)[0]
            if name.startswith(PREFIX) and pid.isdigit() and not _alive(int(pid)):
                remove_tree(base / name)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_tree(path: Path) -> None:
    """Remove `path` and all below, following no link, also where a command left a
    directory we may not enter or change (mode 000): we own it, so we may chmod it."""
    shutil.rmtree(path, ignore_errors=True)
    if os.path.lexists(path):
        _unlock(str(path))
        shutil.rmtree(path, ignore_errors=True)


def _unlock(path: str) -> None:
    """Make every directory from `path` down ours to enter and change (no link followed:
    only directories are changed, and nothing runs in the view any more)."""
    try:
        os.chmod(path, 0o700)
        entries = list(os.scandir(path))
    except OSError:
        return
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            _unlock(entry.path)


_reaper = _Reaper()


def _enterer(root: bytes, options: bytes, real: bytes | None) -> Callable[[], None]:
    libc = _c()
    unshare, mount = libc.unshare, libc.mount
    get_errno = ctypes.get_errno
    user = os.geteuid() != 0
    flags = CLONE_NEWNS | (CLONE_NEWUSER if user else 0)
    maps = (
        (
            (b"/proc/self/setgroups", b"deny"),
            (b"/proc/self/uid_map", b"%d %d 1" % (os.geteuid(), os.geteuid())),
            (b"/proc/self/gid_map", b"%d %d 1" % (os.getegid(), os.getegid())),
        )
        if user
        else ()
    )
    overlay, slash = b"overlay", b"/"

    def fail(what: str, number: int) -> None:
        # Between fork and exec nobody can catch an exception: say it on the command's
        # stderr and end with FAILED, so the caller reads it as the command's failure.
        os.write(2, b"%s: %s: %s\n" % (FAILURE, what.encode(), os.strerror(number).encode()))
        os._exit(FAILED)

    def enter() -> None:
        if unshare(flags) != 0:
            fail("unshare", get_errno())
        for path, text in maps:
            try:
                fd = os.open(path, os.O_WRONLY)
                os.write(fd, text)
                os.close(fd)
            except OSError as exc:
                fail(f"writing {path.decode()}", exc.errno or 0)
        if mount(None, slash, None, MS_REC | MS_PRIVATE, None) != 0:
            fail("mount --make-rprivate /", get_errno())
        if real is not None and mount(root, real, None, MS_BIND | MS_REC, None) != 0:
            fail("mount --rbind", get_errno())
        if mount(overlay, root, overlay, 0, options) != 0:
            fail("mount -t overlay", get_errno())
        try:  # a working directory in the repository is the view's from now on
            os.chdir(os.getcwd())
        except OSError as exc:
            fail("chdir", exc.errno or 0)

    return enter
