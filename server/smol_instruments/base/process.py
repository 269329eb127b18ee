"""Running child processes: argument lists, timeouts, and kills of the whole process group.

Every subprocess the tools start goes through `run_process`: it never uses a shell unless the
caller passes one explicitly (run_cmd, after the policy allowed the command), starts the child
in its own session so a timeout or a cancel kills everything it spawned, and never lets the
child read our stdin (in the daemon that is the JSON-RPC channel).

What a child gets of our environment is an allowlist, by what the child is (`child_env`,
`CHILD_VARIABLES`): ripgrep and git read files and need little more than PATH and the home;
our own Python child (the model server) its interpreter's path; pip fetching a model the
user's proxies, certificates and pip settings; a command run uncontained what a contained one
gets (containment.py's allowlist) with the real home. Never API keys, tokens, our settings or
the variables that turn a tool's behaviour into running something (`RIPGREP_CONFIG_PATH`,
`GIT_*`, `LD_PRELOAD`, `PYTHONSTARTUP`). A contained command's environment is decided by
containment.py alone. An uncontained child runs as the user and could read our
`/proc/PID/environ`: the allowlist keeps credentials out of what a child prints or sends by
mistake; containment is what keeps them from a child that means harm.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from .containment import NETWORK_VARIABLES, PASSED_VARIABLES, Containment
from .launch import Launch
from .overlay import View

POLL_S = 0.05

ChildKind = Literal["tool", "python", "network", "command"]

#: What every child may get: where programs are, who the user is, the locale, the terminal,
#: the time zone, where temporary files go (and every LC_* variable).
_EVERY_CHILD = frozenset(
    {"PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TERM", "TMPDIR"}
)
_XDG = frozenset({"XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"})
_PYTHON = frozenset({"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"})
_COMMAND = _EVERY_CHILD | PASSED_VARIABLES | NETWORK_VARIABLES | _XDG | {"SSH_AUTH_SOCK"}

#: The variables each kind of child gets from our environment, and nothing else.
CHILD_VARIABLES: Mapping[ChildKind, frozenset[str]] = {
    # ripgrep, git: the user's own config (global gitignore, ~/.gitconfig) and nothing that
    # makes them run a program (RIPGREP_CONFIG_PATH, GIT_*).
    "tool": _EVERY_CHILD | {"XDG_CONFIG_HOME"},
    # our own Python (the embedded model server): its interpreter finds what we found.
    "python": _EVERY_CHILD | _PYTHON,
    # pip fetching a model: the user's proxies, certificates, pip configuration (and PIP_*).
    "network": _COMMAND | _PYTHON,
    # a command the user approved or the policy allowed, run uncontained: what a contained
    # one gets (containment.py), with the real home, proxies and the SSH agent of the user's
    # own `git push` (an uncontained command reaches those files anyway).
    "command": _COMMAND,
}
#: Families of variables a kind of child gets whole.
CHILD_PREFIXES: Mapping[ChildKind, tuple[str, ...]] = {
    "tool": ("LC_",),
    "python": ("LC_",),
    "network": ("LC_", "PIP_"),
    "command": ("LC_",),
}

#: Set for every child: nobody can answer a prompt or page output.
CHILD_FIXED = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    "PYTHONUNBUFFERED": "1",
}


@dataclass
class ProcessResult:
    argv: list[str]
    exit_code: int | None
    stdout: str
    stderr: str
    duration_ms: int
    timed_out: bool = False
    cancelled: bool = False
    contained: bool = False


class ProcessRegistry:
    """The process groups running for one session, so a cancel can kill them all at once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pids: set[int] = set()

    def add(self, pid: int) -> None:
        with self._lock:
            self._pids.add(pid)

    def discard(self, pid: int) -> None:
        with self._lock:
            self._pids.discard(pid)

    def kill_all(self) -> int:
        with self._lock:
            pids = list(self._pids)
        for pid in pids:
            kill_group(pid)
        return len(pids)


def kill_group(pid: int) -> None:
    """SIGKILL the process group led by `pid` (children started with start_new_session)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def child_env(
    kind: ChildKind = "command",
    extra: Mapping[str, str] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment of a `kind` child: its allowlisted part of `environ` (default: ours),
    the fixed settings, then `extra`."""
    source = os.environ if environ is None else environ
    allowed = CHILD_VARIABLES[kind]
    prefixes = CHILD_PREFIXES[kind]
    env = {
        name: value
        for name, value in source.items()
        if name in allowed or (name.startswith(prefixes) and name.isupper())
    }
    env.setdefault("PATH", os.defpath)
    env.setdefault("TERM", "dumb")
    env.update(CHILD_FIXED)
    if extra:
        env.update(extra)
    return env


def run_process(
    argv: Sequence[str],
    *,
    cwd: Path,
    timeout: float,
    env: Mapping[str, str] | None = None,
    extra_env: Mapping[str, str] | None = None,
    contain: Containment | None = None,
    view: View | None = None,
    cancel: threading.Event | None = None,
    registry: ProcessRegistry | None = None,
    stdin_text: str | None = None,
    max_output_bytes: int = 8 * 1024 * 1024,
) -> ProcessResult:
    """Run `argv` in `cwd`; on timeout or cancel the whole process group is killed.

    Uncontained, the child gets `env`, by default `child_env("command")`. With `contain`, the
    command runs inside that containment (bubblewrap): `env` (default: ours) is then only the
    source its allowlisted environment is taken from, and `extra_env` is set inside. With a
    `view` and no containment (COMMAND_CONTAINMENT=off) the command runs uncontained but
    writes the repository's view, not the repository. When the command ends, times out or is cancelled we let go
    of its lifeline (`lifeline.py`), and everything it started in the sandbox is killed;
    if we are killed, the kernel lets go for us.

    Output beyond `max_output_bytes` per stream is dropped so a runaway command cannot fill
    memory; the caller truncates further for the model.
    """
    start = time.monotonic()
    if contain is not None:
        launch = contain.prepare(argv, cwd=cwd, environ=env, extra_env=extra_env)
    else:
        child = dict(env) if env is not None else child_env()
        child.update(extra_env or {})
        command = view.command(argv, enter=True) if view is not None else list(argv)
        launch = Launch(command, child)
    try:
        proc = subprocess.Popen(
            launch.argv,
            cwd=str(cwd),
            env=launch.env,
            pass_fds=launch.pass_fds,
            stdin=subprocess.PIPE if stdin_text is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except BaseException:
        launch.close()
        raise
    launch.started()
    if registry is not None:
        registry.add(proc.pid)
    chunks: dict[str, list[bytes]] = {"stdout": [], "stderr": []}

    def pump(name: str, stream: object) -> None:
        size = 0
        read = stream.read  # type: ignore[attr-defined]
        while True:
            block = read(65536)
            if not block:
                break
            if size < max_output_bytes:
                chunks[name].append(block[: max_output_bytes - size])
            size += len(block)

    readers = [
        threading.Thread(target=pump, args=("stdout", proc.stdout), daemon=True),
        threading.Thread(target=pump, args=("stderr", proc.stderr), daemon=True),
    ]
    for reader in readers:
        reader.start()
    if stdin_text is not None and proc.stdin is not None:
        try:
            proc.stdin.write(stdin_text.encode())
            proc.stdin.close()
        except BrokenPipeError:
            pass
    timed_out = cancelled = False
    try:
        while True:
            # Joining the stdout reader returns the moment the pipe closes (the process is
            # done); Popen.wait(timeout) would poll with growing sleeps and add milliseconds.
            readers[0].join(POLL_S)
            if not readers[0].is_alive():
                try:
                    proc.wait(timeout=POLL_S)
                    break
                except subprocess.TimeoutExpired:
                    pass
            elif proc.poll() is not None:
                break
            if cancel is not None and cancel.is_set():
                cancelled = True
                kill_group(proc.pid)
                proc.wait()
                break
            if time.monotonic() - start > timeout:
                timed_out = True
                kill_group(proc.pid)
                proc.wait()
                break
    finally:
        if proc.poll() is None:
            kill_group(proc.pid)
            proc.wait()
        # Contained, this kills what the command left running; uncontained, a killed group
        # may leave grandchildren holding the pipes: don't wait forever on them.
        launch.close()
        for reader in readers:
            reader.join(timeout=2)
        for stream in (proc.stdout, proc.stderr, proc.stdin):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
        if registry is not None:
            registry.discard(proc.pid)
    return ProcessResult(
        argv=list(argv),
        exit_code=None if (timed_out or cancelled) else proc.returncode,
        stdout=b"".join(chunks["stdout"]).decode("utf-8", errors="replace"),
        stderr=b"".join(chunks["stderr"]).decode("utf-8", errors="replace"),
        duration_ms=int((time.monotonic() - start) * 1000),
        timed_out=timed_out,
        cancelled=cancelled,
        contained=contain is not None,
    )
