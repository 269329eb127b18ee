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

Root (real root, who already mounts views itself) does not enter one. A namespace cannot be
left, so the steps are first tried in a forked child (about 2 ms, measured as uid 65534):
where one fails there - unshare(2) refused (user namespaces disabled or filtered, as in many
containers), or a namespace made without capabilities (AppArmor's restriction of
unprivileged user namespaces on Ubuntu 23.10 and later: unshare(2) works, mapping ids or
mounting does not) - or threads already run, this process stays where it was and the views
are mounted by util-linux's programs as before; `why_not()` says why (overlay.py's `how()`,
shown by `doctor`).
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
    # A namespace cannot be left: the steps are tried first in a child of ours, and taken
    # here only where every one of them worked there.
    _why_not = _tried_in_a_child()
    if _why_not is not None:
        return False
    entered, why = _steps()
    if why is not None:
        if entered:  # the child managed, we did not: nothing sane is left to fall back to
            raise OSError(errno.EPERM, why)
        _why_not = why
        return False
    _inside = True
    return True


def _tried_in_a_child() -> str | None:
    """Why the steps fail here, tried by a forked child of this single-threaded process;
    None where they all work."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: the steps, then why not (nothing when they worked), and out
        status = 1
        try:
            os.close(read_end)
            os.write(write_end, (_steps()[1] or "").encode())
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as reader:
        why = reader.read().decode()
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        return why or "trying a user namespace in a child process failed"
    return why or None


def _steps() -> tuple[bool, str | None]:
    """unshare(2), the id maps and the mount propagation, in this process: whether it is in a
    new namespace now, and why a step failed (None when all worked)."""
    uid, gid = os.getuid(), os.getgid()
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNS) != 0:
        code = ctypes.get_errno()
        return False, f"no user namespace of our own: {os.strerror(code)}" + (
            " (user namespaces are disabled or filtered here)"
            if code in (errno.EPERM, errno.ENOSPC, errno.ENOSYS)
            else ""
        )
    try:
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1")
        _write("/proc/self/gid_map", f"{gid} {gid} 1")
    except OSError as exc:
        return True, f"a user namespace here cannot map our ids: {exc.strerror}{_RESTRICTED}"
    # The kernel already made the host's shared mounts slaves of a namespace owned by a
    # user namespace of our own; this says so for every mount, whatever the kernel. It is
    # also the proof that the namespace gives us the capability to mount.
    if libc.mount(None, b"/", None, _MS_REC | _MS_SLAVE, None) != 0:
        reason = os.strerror(ctypes.get_errno())
        return True, f"a user namespace here gives no right to mount: {reason}{_RESTRICTED}"
    return True, None


#: What takes a new user namespace's capabilities away while still creating it.
_RESTRICTED = (
    " (AppArmor's restriction of unprivileged user namespaces does this: "
    "kernel.apparmor_restrict_unprivileged_userns=1, Ubuntu 23.10 and later)"
)


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)
