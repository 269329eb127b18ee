"""A user and mount namespace of our own, entered once at start-up, so that anyone (not only
root) mounts each copy-on-write view with one mount(2) call (overlay.py, `View.mount_here`).

`enter()` is called by the entry points that will run contained commands (cli/main.py: `serve`,
`run`, `chat`, `acp`, `tool`, `doctor`, ...) before anything starts a thread:
unshare(2) with CLONE_NEWUSER refuses a process with more than one thread (EINVAL). It then
does what `unshare --user --mount` does, with one difference:

    unshare(CLONE_NEWUSER | CLONE_NEWNS)
    /proc/self/setgroups = deny, uid_map = "UID UID 1", gid_map = "GID GID 1"
    mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL)

Our uid and gid map to themselves, not to 0: every place that reads them (`os.getuid`, `pwd`,
ssh's and git's owner checks, git's default identity, Docker's `--user`) sees the same ids as
before, and bubblewrap runs as it runs for any user (it makes a user namespace of its own
below ours and gives the command our ids). The capabilities unshare(2) grants are kept by
this process, which never calls execve(2): every program we start (bubblewrap, git, a
contained command, the llama.cpp server) is started as a non-root uid without ambient
capabilities, so execve(2) clears them (tests/test_views.py checks CapEff of both). They are
capabilities over this namespace only: over the host's files we are the user we were (a file
of another user, unmapped here, shows as 65534 and grants nothing). Supplementary groups stay
with the process (the kernel checks them; `os.getgroups` shows them as 65534), so a socket
the user reaches through a group (Docker's) is still reached. Set-user-id programs of root
(unmapped) run without their privilege below us; none of ours needs one.

Mount propagation from the host becomes one-way (MS_SLAVE): a filesystem the user mounts
later is seen, what we mount (the views) never reaches the host, and it all goes when the
process ends (the namespace dies with its last process), so a view left by a process killed
outright is no longer mounted anywhere (the sweep of overlay.py still removes its directory).

Root (real root, who already mounts views itself) does not enter one; where unshare(2) fails
(user namespaces disabled or filtered, as in many containers; threads already running) or
any later step does, nothing has changed and the views are mounted by util-linux's programs
as before; `why_not()` says why (overlay.py's `how()`, shown by `doctor`).
"""

from __future__ import annotations

import ctypes
import errno
import os
import threading

_CLONE_NEWNS, _CLONE_NEWUSER = 0x00020000, 0x10000000
_MS_REC, _MS_SLAVE = 0x4000, 0x80000

#: Whether we are in a user namespace of our own (set once by `enter`).
_inside = False
#: Why we are not (None before `enter` was called).
_why_not: str | None = None


def inside() -> bool:
    """Whether `enter` moved this process into a user and mount namespace of its own."""
    return _inside


def why_not() -> str:
    """Why this process is not in a namespace of its own, in words (for `doctor`)."""
    if _inside:
        return "it is"
    return _why_not or "not entered by this command"


def enter() -> bool:
    """Move this process into a user and mount namespace of its own (the module's notes);
    False, with nothing changed, where it cannot. Call it before any thread starts."""
    global _inside, _why_not
    if _inside:
        return True
    if os.geteuid() == 0:
        _why_not = "root mounts the views where it runs"
        return False
    if threading.active_count() > 1:
        _why_not = "threads were already running at start-up"
        return False
    uid, gid = os.getuid(), os.getgid()
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNS) != 0:
        code = ctypes.get_errno()
        _why_not = f"no user namespace of our own: {os.strerror(code)}" + (
            " (user namespaces are disabled or filtered here)"
            if code in (errno.EPERM, errno.ENOSPC, errno.ENOSYS)
            else ""
        )
        return False
    try:
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1")
        _write("/proc/self/gid_map", f"{gid} {gid} 1")
    except OSError as exc:
        # A process cannot leave a user namespace, and one without our ids cannot create a
        # file: go no further (this does not happen where unshare(2) itself succeeded).
        raise OSError(
            exc.errno, f"the user namespace could not map our ids: {exc.strerror}"
        ) from exc
    # The kernel already made the host's shared mounts slaves of a namespace owned by a
    # user namespace of our own; this says so for every mount, whatever the kernel.
    libc.mount(None, b"/", None, _MS_REC | _MS_SLAVE, None)
    _inside = True
    return True


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)
