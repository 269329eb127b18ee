"""A copy-on-write view of the repository: a contained command writes there, never in place.

`View.create(root)` makes a fresh directory of ours (mode 0700, in the temporary directory,
outside the repository, never reused by another command) holding the overlay's upper layer;
the next one is made ahead on a thread of ours, so a command does not wait for it (_Reaper).

Views are mounted where we run, by root and by anyone else whose process entered a user and
mount namespace of its own at start-up (userns.py; cli/main.py does it before any thread):
`view.mount_here()` mounts the overlay (nosuid, nodev) on a directory of the view, bubblewrap
binds that directory as the repository (containment.py), and `view.unmount` detaches it once
the command ended (Launch.release). No program is started for it: one mount(2) and one
umount2(2) call, against the three programs below (bench/containment.py, `contain_view` and
`contain_view_release`). The repository itself is not covered, so what must stay real
(`.git`, for a `git` widening) is bound from where it is. In our own namespace the mount is
never seen by the host and goes with the process; a view root left mounted by a process
killed outright is detached by the next process's sweep before its directory is removed.
`how()` says which path is taken (doctor). Root without CAP_SYS_ADMIN (a container) and
anyone whose process could not enter a namespace of its own (user namespaces disabled,
threads already running) fall back to `view.command(argv)`: the command line that mounts
the view in a mount namespace of its own and then runs `argv` (bubblewrap, for a contained
command) in it:

    unshare --mount [--user --map-root-user] --propagation private -- sh -c '
        mount -t overlay -o lowerdir=ROOT,upperdir=UP,workdir=WORK,userxattr,volatile overlay ROOT
        exec "$@"' ... bwrap ...

Root needs no user namespace (bubblewrap then runs as it always did for root); anyone else
gets one of their own, where bubblewrap runs as its root and gives the command back its own
uid and gid (containment.py: `--unshare-user --uid --gid`, `--cap-drop ALL`). Bubblewrap
binds ROOT, now the overlay, as the repository. Every write of the command lands in UP; a
deletion is a whiteout (a 0/0 character device), a directory replaced as a whole is marked
opaque (`user.overlay.opaque`); the repository itself is only read. When the command has
ended, `changes.py` reads UP (what the command left running is killed at that moment,
lifeline.py; the reading follows no link, so a process still dying cannot lead it astray).

Why the fallback uses util-linux's `unshare` and `mount`, not the same system calls made by
us between fork and exec (and why userns.py enters a namespace once, at start-up): Python forks instead of vforking once there is such a function, and a fork
of a process the size of the daemon cost 40-80 ms against 4-11 ms (measured at load 13 on 2
cores); the three small programs cost a few milliseconds (bench/containment.py,
`contain_view`). `volatile` skips the overlay's sync of the upper filesystem when it goes
away (a sync of the whole disk holding the temporary directory, 3-5 ms under load): the
upper layer is read right after and thrown away, so nothing needs to reach the disk. A
mount that fails is said on the command's stderr (FAILURE) with exit status FAILED.

One view may serve several commands in a row (a validation: `git apply`, then the checks,
see sandbox/local.py): each mount gets a fresh work directory, which `volatile` requires.
`with_repository=True` also binds the repository as it is at `real` before the overlay
covers it, so an approved command widened with `git` writes the real `.git`.
"""

from __future__ import annotations

import atexit
import ctypes
import errno
import functools
import os
import queue
import shutil
import stat
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from . import userns

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW

#: How a view's directory is named: PREFIX, the pid of the process that made it, a random tail.
PREFIX = "smol-view-"

#: Options of every view's overlay (besides its layers).
OPTIONS = "userxattr,volatile"

#: Where the upper layer says a directory hides what the repository has below it.
OPAQUE_XATTRS = ("user.overlay.opaque", "trusted.overlay.opaque")

#: The exit status and the first words of stderr when the view could not be mounted.
FAILED = 125
FAILURE = "smol-instruments: the copy-on-write view could not be mounted"

#: Characters that cannot be passed in overlayfs' option string.
_UNSAFE = frozenset(",:\\\n=")

#: What mounts the view, then runs the command: $1 options, $2 the root, $3 where the
#: repository stays reachable (or empty), $4 "cd" to enter the view's root again (a command
#: run without bubblewrap, which would do it), then the command.
MOUNT_SCRIPT = (
    "o=$1 r=$2 real=$3 enter=$4; shift 4; "
    'if [ -n "$real" ]; then mount -n -i --rbind -- "$r" "$real" '
    f'|| {{ echo "{FAILURE}: mount --rbind" >&2; exit {FAILED}; }}; fi; '
    'mount -n -i -t overlay -o "$o" -- overlay "$r" '
    f'|| {{ echo "{FAILURE}: mount -t overlay" >&2; exit {FAILED}; }}; '
    'if [ -n "$enter" ]; then cd "$(pwd -P)" || exit ' + str(FAILED) + "; fi; "
    'exec "$@"'
)


class ViewError(OSError):
    """The view could not be made (said in words a user can act on)."""


#: mount(2) flags: no set-user-id programs and no devices in a view mounted where we run.
_MS_NOSUID, _MS_NODEV = 0x2, 0x4
#: umount2(2): detach now, let go once nothing inside is used any more.
_MNT_DETACH = 0x2

#: Whether we may mount where we run: None until tried; only root or a process in a user
#: namespace of its own (userns.py) ever tries, and an EPERM (a container without
#: CAP_SYS_ADMIN) ends that.
_mounts_here: bool | None = None


def mounts_here() -> bool:
    """Whether views are mounted by us (`View.mount_here`), not by programs (`View.command`)."""
    return _mounts_here is not False and (os.geteuid() == 0 or userns.inside())


def how() -> str:
    """Which way views are mounted here, in words (for `doctor`)."""
    if mounts_here():
        if userns.inside():
            return "mounted by us in a user namespace of our own"
        return "mounted by us as root"
    if os.geteuid() == 0 or userns.inside():
        return "mounted by unshare and mount: mount(2) was refused here"
    return f"mounted by unshare and mount: {userns.why_not()}"


@functools.lru_cache(maxsize=1)
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


#: The programs a view needs (util-linux).
PROGRAMS = ("unshare", "mount")


def missing_programs() -> list[str]:
    return [name for name in PROGRAMS if which(name) is None]


def which(name: str) -> str | None:
    """`shutil.which`, remembered for the PATH it searched (asked for every command)."""
    return _which(name, os.environ.get("PATH", os.defpath))


@functools.lru_cache(maxsize=64)
def _which(name: str, path: str) -> str | None:
    return shutil.which(name, path=path)


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
    _mounted: list[Path] = field(default_factory=list, repr=False)

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
        scratch = _reaper.take_spare(base) or _new_scratch(base)
        _reaper.prepare_spare(base)  # the next view's, off the command's path
        return cls(root, scratch)

    @property
    def upper(self) -> Path:
        """The overlay's upper layer: what the commands in this view wrote."""
        return self.scratch / "upper"

    @property
    def real(self) -> Path:
        """Where the repository as it is stays reachable (only with `with_repository`, made
        then)."""
        return self.scratch / "real"

    def command(
        self, argv: Sequence[str], *, with_repository: bool = False, enter: bool = False
    ) -> list[str]:
        """The command line that mounts this view (a fresh work directory each time) and
        runs `argv` in it; `enter`: start `argv` in the view's root (without bubblewrap)."""
        work, _ = self._next_mount()
        if with_repository:
            self.real.mkdir(exist_ok=True)
        options = f"lowerdir={self.root},upperdir={self.upper},workdir={work},{OPTIONS}"
        user = [] if os.geteuid() == 0 else ["--user", "--map-root-user"]
        return [
            which("unshare") or "unshare",
            "--mount",
            *user,
            "--propagation",
            "private",
            "--",
            "/bin/sh",
            "-c",
            MOUNT_SCRIPT,
            "smol-view",
            options,
            str(self.root),
            str(self.real) if with_repository else "",
            "cd" if enter else "",
            *argv,
        ]

    def mount_here(self) -> Path | None:
        """Mount a fresh overlay of the root in our own mount namespace, at a directory of
        this view, and return it; None where we may not (not root, or root without
        CAP_SYS_ADMIN): then `command` mounts the view in a namespace of its own. Nothing is
        started: a mount(2) call where `command` starts three programs (the module's notes).
        `unmount` the path once the command ended. The view's directory is 0700 and ours,
        the mount is nosuid and nodev, and the command only sees it where bubblewrap binds
        it (containment.py); the repository at `root` is left as it is, so what must stay
        real (`.git` for a `git` widening) is bound from `root` itself."""
        global _mounts_here
        if not mounts_here():
            return None
        work, merged = self._next_mount()
        merged.mkdir(exist_ok=True)
        options = f"lowerdir={self.root},upperdir={self.upper},workdir={work},{OPTIONS}"
        done = _libc().mount(
            b"overlay", os.fsencode(merged), b"overlay", _MS_NOSUID | _MS_NODEV, options.encode()
        )
        if done != 0:
            if ctypes.get_errno() in (errno.EPERM, errno.EACCES):
                _mounts_here = False
            return None
        _mounts_here = True
        self._mounted.append(merged)
        return merged

    def _next_mount(self) -> tuple[Path, Path]:
        """The next mount's fresh work directory (made, or made with the scratch: the
        first) and where it is mounted, when we mount it (`mount_here`)."""
        self._mounts += 1
        work = self.scratch / f"work{self._mounts}"
        work.mkdir(exist_ok=self._mounts == 1)
        return work, self.scratch / f"view{self._mounts}"

    def unmount(self, merged: Path) -> None:
        """Detach what `mount_here` mounted at `merged` (a process still holding a file
        inside keeps only its own reference; the upper layer can be read at once)."""
        if merged in self._mounted:
            self._mounted.remove(merged)
            _libc().umount2(os.fsencode(merged), _MNT_DETACH)

    def close(self) -> None:
        """Throw the view away (in the background: removing a directory tree costs tens of
        milliseconds on a busy disk, and nobody waits for it)."""
        for merged in list(self._mounted):
            self.unmount(merged)
        _reaper.remove(self.scratch)

    def __enter__(self) -> View:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _new_scratch(base: Path) -> Path:
    """A fresh view directory in `base` (0700, ours): its upper layer, the first mount's work
    directory and where that mount goes (`mount_here`)."""
    scratch = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=base))
    for name in ("upper", "work1", "view1"):
        (scratch / name).mkdir()
    return scratch


class _Reaper:
    """Removes thrown-away views on a thread of its own; what is left when we exit is
    removed then, and what a process killed outright left, by the next one's `sweep`.

    The same thread makes the next view's directory ahead (`prepare_spare`): making four
    directories cost 0.3-0.5 ms on an ext4 disk, a third of what a view adds to a command
    (bench/containment.py), and a command waits for none of it when the spare is ready. A
    spare is as fresh as one made on the spot: empty, 0700, ours, never used before, and
    taken by one view only."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[tuple[str, Path] | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._swept: set[Path] = set()
        self._pending: set[Path] = set()
        self._spares: dict[Path, Path] = {}  # base: a spare view directory in it

    def remove(self, scratch: Path) -> None:
        with self._lock:
            self._pending.add(scratch)
        self._put(("remove", scratch))

    def take_spare(self, base: Path) -> Path | None:
        """A view directory made ahead in `base`, now the caller's; None if none is ready."""
        with self._lock:
            spare = self._spares.pop(base, None)
        # a process forked from the one that made it has its own views
        if spare is not None and not spare.name.startswith(f"{PREFIX}{os.getpid()}-"):
            return None
        return spare

    def prepare_spare(self, base: Path) -> None:
        """Make the next view's directory in `base` on the reaper's thread."""
        self._put(("prepare", base))

    def _put(self, job: tuple[str, Path]) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="smol-views", daemon=True)
                self._thread.start()
                atexit.register(self.drain)
        self._queue.put(job)

    def _run(self) -> None:
        while (job := self._queue.get()) is not None:
            what, path = job
            if what == "remove":
                remove_tree(path)
                with self._lock:
                    self._pending.discard(path)
                continue
            with self._lock:
                if path in self._spares:
                    continue
            try:
                spare = _new_scratch(path)
            except OSError:
                continue  # the next view makes its own, and says what went wrong
            with self._lock:
                if path in self._spares or self._thread is None:
                    stale = spare
                else:
                    self._spares[path], stale = spare, None
            if stale is not None:
                remove_tree(stale)

    def drain(self) -> None:
        with self._lock:
            pending = list(self._pending) + list(self._spares.values())
            self._spares.clear()
            self._thread = None  # a spare made from now on is not kept
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
                if os.geteuid() == 0 and _mounts_here is not False:
                    unmount_below(base / name)  # ours die with our namespace (userns.py)
                remove_tree(base / name)


def unmount_below(path: Path) -> None:
    """Detach every mount at or below `path` (what a process killed outright left mounted),
    deepest first, so that removing the tree never walks into a view."""
    prefix = os.fsencode(path)
    try:
        with open("/proc/self/mountinfo", "rb") as table:
            points = [_unescape(line.split()[4]) for line in table]
    except OSError:
        return
    for point in sorted(points, key=len, reverse=True):
        if point == prefix or point.startswith(prefix + b"/"):
            _libc().umount2(point, _MNT_DETACH)


def _unescape(field: bytes) -> bytes:
    """A path as /proc/self/mountinfo writes it (space, tab, newline, backslash as \\ooo)."""
    return field.decode("unicode_escape").encode("latin-1") if b"\\" in field else field


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
        parent = os.open(path.parent, _DIR | os.O_CLOEXEC)
        try:
            _unlock(parent, path.name)
        finally:
            os.close(parent)
        shutil.rmtree(path, ignore_errors=True)


def make_ours(parent: int, name: str) -> None:
    """chmod 0700 the directory `name` below `parent`, never through a link (an O_PATH
    descriptor opened with O_NOFOLLOW is what is changed)."""
    fd = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=parent)
    try:
        os.chmod(f"/proc/self/fd/{fd}", 0o700)
    finally:
        os.close(fd)


def _unlock(parent: int, name: str) -> None:
    """Make the directory `name` and every one below it ours to enter and change."""
    try:
        make_ours(parent, name)
        fd = os.open(name, _DIR | os.O_CLOEXEC, dir_fd=parent)
    except OSError:
        return
    try:
        for child in os.listdir(fd):
            try:
                st = os.stat(child, dir_fd=fd, follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                _unlock(fd, child)
    finally:
        os.close(fd)


_reaper = _Reaper()
