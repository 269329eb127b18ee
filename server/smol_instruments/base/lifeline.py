"""The lifeline: a contained command ends when the process that started it ends, however.

Bubblewrap's `--die-with-parent` asks the kernel for a signal when the parent dies
(PR_SET_PDEATHSIG), but bubblewrap asks only after the sandbox is already starting, in
each of its processes: a parent killed in that window (SIGKILL, on a loaded machine)
leaves the command running to its end, still contained but unwatched. A pipe has no such
window. `Containment.prepare` makes one; we keep the write end (close-on-exec, so no other
child of ours inherits it) and bubblewrap's init holds the read end (`--sync-fd`, which
it keeps open in PID 1 of the sandbox and closes before the command starts). The kernel
closes our end when we end, even by SIGKILL, and a watcher inside the sandbox, started
before the command, blocks on reading it:

    bwrap ... --sync-fd N -- /bin/sh -c WATCH smol-lifeline COMMAND...

`WATCH` forks the watcher (reparented to bubblewrap's init, so the command has no child
it did not start) and `exec`s the command in place of the shell: the command keeps its
PID, its standard streams, its exit status and its signals exactly as before. The watcher
opens the read end through `/proc/1/fd/N` (so the command itself never holds it), and
when reading returns — end of file: we are gone, or the command finished and we let go —
it kills every process of the sandbox's PID namespace (`kill -KILL -1` reaches only that
namespace, and only after checking it is in one: the wrapper shell is PID 2 there). Then
bubblewrap's init has no child left and ends the sandbox.

The watcher runs in the same sandbox as the command, so a command that wants to outlive
us could kill it first; it would still be contained, and still ended by
`--die-with-parent` whenever that signal arrives. If the read end cannot be opened, the
shell says so on the command's stderr and the command runs as it did without a lifeline.
"""

from __future__ import annotations

from collections.abc import Sequence

#: What the wrapper shell calls itself ($0): the name `ps` shows for the watcher.
NAME = "smol-lifeline"

#: The shell the wrapper runs in: POSIX, present wherever bubblewrap is.
SHELL = "/bin/sh"


def watch_script(read_fd: int) -> str:
    """The wrapper: start the watcher on PID 1's copy of `read_fd`, then become the command.

    Every way the watcher cannot work is said on the command's stderr, and then nothing is
    killed: outside a PID namespace of its own (the shell is not PID 2) `kill -1` would
    reach every process of the user, and a read end it cannot open proves nothing.
    """
    line = f"/proc/1/fd/{read_fd}"
    watcher = f"exec <{line} >/dev/null 2>&1 || exit 0; read -r _; kill -KILL -1"
    # said before the command starts: a message from the watcher itself could be lost when
    # the command ends first and the sandbox goes with it
    return (
        f'if [ "$$" != 2 ]; then echo "{NAME}: not PID 2 of a sandbox, no watcher" >&2; '
        f'elif [ ! -e {line} ]; then echo "{NAME}: no lifeline at {line}, no watcher" >&2; '
        f'else ( ( {watcher} ) & ); fi; exec "$@"'
    )


def wrap(argv: Sequence[str], read_fd: int) -> list[str]:
    """`argv` run by the wrapper shell inside the sandbox (goes after bubblewrap's `--`)."""
    return [SHELL, "-c", watch_script(read_fd), NAME, *argv]
