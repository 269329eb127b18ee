"""The Docker backend: each patch is applied to a copy of the repository inside a container.

One warm container per sandbox (one per session): the repository is not mounted, the root
file system is read-only, scratch space is a size-limited tmpfs at /tmp, there is no network,
the user is not root, memory, pids and CPU are limited, and a reaper runs as PID 1. Each
validation streams the patch and a copy of the workspace's files into ONE `exec` on its
stdin, which unpacks, applies and syntax-checks; each check command is one more `exec`,
killed at its timeout (inside with `timeout -s KILL`, outside by removing the container when
even that hangs). The copy is read on the host (sandbox/archive.py, through base/beneath.py,
from one descriptor of the repository's root): a folder swapped for a link to `~/.ssh` or
`/proc/self` is refused, not read, and a symbolic link is copied as a link, never followed. Containers carry labels naming their owner
process, so the ones a crashed daemon left behind are removed at the next start.
"""

from __future__ import annotations

import atexit
import io
import logging
import os
import socket
import tarfile
import threading
import time
import uuid
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from ..base.beneath import Beneath
from ..base.config import Settings
from ..base.git import workspace_files
from ..base.truncate import keep_tail
from ..patches.diff import changed_python_files
from ..patches.validation import CheckResult, SandboxUnavailable, Validation
from .archive import Sink, add_workspace
from .checks import check_result, syntax_command
from .image import SANDBOX_UID, ensure_available

log = logging.getLogger(__name__)

LABEL = "smol-instruments.sandbox"
OWNER_PID = "smol-instruments.owner-pid"
OWNER_START = "smol-instruments.owner-start"
OWNER_HOST = "smol-instruments.owner-host"

ENGINE_FIX = (
    "start a Docker engine and point DOCKER_HOST at it (as root, `bash .ci/docker.sh` in a "
    "smol-instruments checkout installs and starts one), or set SANDBOX_BACKEND=local"
)

# PID 1 of the warm container: reaps orphans (killed checks leave them) and exits on TERM.
# Being PID 1 it survives `kill -9 -1`, which each check uses to kill its strays.
REAPER = """
import os, signal
wanted = {signal.SIGCHLD, signal.SIGTERM, signal.SIGINT}
signal.pthread_sigmask(signal.SIG_BLOCK, wanted)
while True:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            break
    if signal.sigwaitinfo(wanted).si_signo != signal.SIGCHLD:
        break
"""

# Unpack the copy, apply the patch, syntax-check the changed Python files: one exec.
# Stdin: a tar of `patch.diff` and the workspace's files under `tree/`.
# Arguments: workdir, timeout (s), boundary, cleanup (1/0), tail bytes, then the .py files.
# The copy lives in /tmp; outputs in their own small tmpfs (OUTPUTS), so a check that fills
# /tmp still has its last words reported.
PREPARE = r"""
w=$1 t=$2 b=$3 cleanup=$4 keep=$5
shift 5
o="/run/sandbox/${w##*/}"
ms() { date +%s%3N; }
mkdir -p "$w/tree" "$o" && cd "$w" || exit 90
tar -xf - 2>"$o/copy.err"
[ -f "$w/patch.diff" ] || exit 90
cd "$w/tree" || exit 91
if git apply --check "$w/patch.diff" >"$o/apply.out" 2>&1 \
   && git apply "$w/patch.diff" >>"$o/apply.out" 2>&1; then
  printf '\n%s apply 0\n' "$b"; tail -c "$keep" "$o/apply.out"
  if [ $# -gt 0 ]; then
    s=$(ms)
    timeout -s KILL "$t" python3 -m py_compile "$@" >"$o/syntax.out" 2>&1 </dev/null
    rc=$? e=$(ms) d=-1
    [ -n "$s" ] && [ -n "$e" ] && d=$((e - s))
    printf '\n%s syntax %s %s\n' "$b" "$rc" "$d"; tail -c "$keep" "$o/syntax.out"
  fi
else
  printf '\n%s apply 1\n' "$b"; tail -c "$keep" "$o/apply.out"
  cleanup=1
fi
printf '\n%s copy 0\n' "$b"; tail -c 2000 "$o/copy.err"
if [ "$cleanup" = 1 ]; then cd / && rm -rf "$w" "$o"; fi
printf '\n%s done 0\n' "$b"
"""

# One check command on the patched copy; then its strays are killed (`kill -9 -1` spares
# only PID 1 and the caller). Arguments: workdir, timeout (s), boundary, cleanup (1/0),
# tail bytes, the command. A duration of -1 means `date` could not run (pids exhausted).
CHECK = r"""
w=$1 t=$2 b=$3 cleanup=$4 keep=$5 cmd=$6
o="/run/sandbox/${w##*/}"
ms() { date +%s%3N; }
cd "$w/tree" || exit 90
s=$(ms)
timeout -s KILL "$t" sh -c "$cmd" >"$o/check.out" 2>&1 </dev/null
rc=$?
kill -9 -1 2>/dev/null
e=$(ms) d=-1
[ -n "$s" ] && [ -n "$e" ] && d=$((e - s))
printf '\n%s check %s %s\n' "$b" "$rc" "$d"; tail -c "$keep" "$o/check.out"
if [ "$cleanup" = 1 ]; then cd / && rm -rf "$w" "$o"; fi
printf '\n%s done 0\n' "$b"
"""
OUTPUTS = "/run/sandbox"


def docker_host() -> str:
    return os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"


def docker_client(timeout: float = 60) -> Any:
    """A client for the engine DOCKER_HOST names; SandboxUnavailable with the fix when none."""
    try:
        import docker
    except ImportError:
        raise SandboxUnavailable(
            "the docker Python package is not installed", "pip install 'docker>=7'"
        ) from None
    try:
        client = docker.from_env(timeout=max(1, int(timeout)))
        client.ping()
    except Exception as exc:
        detail = _engine_error(exc)
        raise SandboxUnavailable(
            f"no Docker engine answers at {docker_host()} ({detail})", ENGINE_FIX
        ) from None
    return client


def _engine_error(exc: Exception) -> str:
    text = str(exc)
    for needle, words in (
        ("FileNotFoundError", "no such socket"),
        ("ConnectionRefused", "connection refused"),
        ("PermissionError", "permission denied on the socket"),
        ("timed out", "timed out"),
    ):
        if needle in text:
            return words
    return text.splitlines()[0][:160] if text else type(exc).__name__


def _process_start(pid: int) -> str | None:
    """The start time of `pid` (clock ticks since boot), to tell a reused pid apart."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[-1].split()[19]


def owner_alive(pid: int, start: str | None) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    current = _process_start(pid)
    return not (start and current and current != start)


def remove_stale_containers(client: Any) -> list[str]:
    """Remove sandbox containers of this machine whose owner process is gone."""
    removed: list[str] = []
    try:
        containers = client.containers.list(
            all=True, filters={"label": [f"{LABEL}=1", f"{OWNER_HOST}={socket.gethostname()}"]}
        )
    except Exception as exc:
        log.warning("could not list sandbox containers: %s", exc)
        return removed
    for container in containers:
        labels = container.labels or {}
        try:
            pid = int(labels.get(OWNER_PID, ""))
        except ValueError:
            pid = 0
        if pid and owner_alive(pid, labels.get(OWNER_START)):
            continue
        try:
            container.remove(force=True)
            removed.append(container.name)
            log.info(
                "removed stale sandbox container %s (owner pid %s is gone)", container.name, pid
            )
        except Exception as exc:
            log.warning("could not remove stale container %s: %s", container.name, exc)
    return removed


_LIVE: weakref.WeakSet[DockerSandbox] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for sandbox in list(_LIVE):
        sandbox.close()


def tmpfs_bytes(memory: str) -> int:
    """Scratch space: half the memory limit, which it counts against (the rest for processes)."""
    units = {"k": 2**10, "m": 2**20, "g": 2**30}
    number, unit = (memory[:-1], memory[-1].lower()) if memory[-1].isalpha() else (memory, "")
    return int(number) * units.get(unit, 1) // 2


def _sandbox_user() -> tuple[int, int]:
    """The host user when it is not root (so its files are readable), else `smol`."""
    uid = os.getuid() if hasattr(os, "getuid") else 0
    if uid == 0:
        return SANDBOX_UID, SANDBOX_UID
    return uid, os.getgid()


class DockerSandbox:
    """Validates patches in one warm container per session; `close()` removes it."""

    name = "docker"

    def __init__(
        self,
        settings: Settings,
        repo_root: Path,
        *,
        client: Any = None,
        prestart: bool = True,
    ) -> None:
        self.settings = settings
        self.repo_root = Path(repo_root).resolve()
        self.tree = Beneath(self.repo_root)
        self.image = settings.sandbox_image
        self.timeout_s = settings.sandbox_timeout_s
        self.client = client or docker_client(timeout=self.timeout_s + 120)
        # A silent check holds the exec's socket for up to its timeout: reads must outwait it.
        self.client.api.timeout = max(self.client.api.timeout or 0, self.timeout_s + 120)
        ensure_available(self.client, self.image)
        self.removed_stale = remove_stale_containers(self.client)
        self.container: Any = None
        self._container_lock = threading.Lock()
        self._validate_lock = threading.Lock()
        self._closed = False
        _LIVE.add(self)
        if prestart:
            threading.Thread(target=self._prestart, name="sandbox-warm", daemon=True).start()

    # --- the warm container ---------------------------------------------------------------

    def _prestart(self) -> None:
        try:
            self._ensure_container()
        except Exception as exc:  # reported again by the first validate
            if not self._closed:
                log.warning("could not start the sandbox container: %s", exc)

    def _ensure_container(self) -> Any:
        with self._container_lock:
            if self._closed:
                raise SandboxUnavailable("the sandbox is closed")
            if self.container is None:
                self.container = self._start_container()
            return self.container

    def _start_container(self) -> Any:
        import docker

        uid, gid = _sandbox_user()
        settings = self.settings
        cpus = settings.sandbox_cpus
        try:
            cpus = min(cpus, float(self.client.info().get("NCPU") or cpus))
        except Exception:
            pass
        name = f"smol-sandbox-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        try:
            return self.client.containers.run(
                self.image,
                command=["python3", "-c", REAPER],
                name=name,
                detach=True,
                user=f"{uid}:{gid}",
                working_dir="/tmp",
                environment={
                    "HOME": "/tmp",
                    "LANG": "C.UTF-8",
                    "PYTHONUNBUFFERED": "1",
                    "PYTHONDONTWRITEBYTECODE": "1",
                    "GIT_TERMINAL_PROMPT": "0",
                },
                labels={
                    LABEL: "1",
                    OWNER_PID: str(os.getpid()),
                    OWNER_START: _process_start(os.getpid()) or "",
                    OWNER_HOST: socket.gethostname(),
                },
                read_only=True,
                tmpfs={
                    "/tmp": f"size={tmpfs_bytes(settings.sandbox_memory)},mode=1777,exec",
                    OUTPUTS: "size=64m,mode=1777",
                },
                network_mode="none",
                mem_limit=settings.sandbox_memory,
                memswap_limit=settings.sandbox_memory,
                pids_limit=settings.sandbox_pids_limit,
                nano_cpus=int(cpus * 1e9),
                cap_drop=["ALL"],
                security_opt=["no-new-privileges"],
            )
        except docker.errors.ImageNotFound:
            raise SandboxUnavailable(
                f"the sandbox image {self.image} is missing",
                "run `smol-instruments sandbox build` (works offline)",
            ) from None

    def _discard_container(self) -> None:
        """Kill and remove the container (it hung, or the sandbox closes)."""
        with self._container_lock:
            container, self.container = self.container, None
        if container is not None:
            try:
                container.remove(force=True)
            except Exception as exc:
                log.debug("removing %s: %s", getattr(container, "name", "?"), exc)

    def close(self) -> None:
        """Remove the warm container; the sandbox cannot be used afterwards."""
        self._closed = True
        _LIVE.discard(self)
        self._discard_container()

    # --- validation -------------------------------------------------------------------------

    def validate(self, diff: str, checks: list[str] | None = None) -> Validation:
        started = time.monotonic()
        commands = list(checks) if checks is not None else []
        if checks is None and self.settings.sandbox_check_command:
            commands = [self.settings.sandbox_check_command]
        commands = [command for command in commands if command.strip()]
        with self._validate_lock:
            validation = self._validate_locked(diff, commands)
        validation.duration_ms = int((time.monotonic() - started) * 1000)
        return validation

    def _validate_locked(self, diff: str, commands: list[str]) -> Validation:
        workdir = f"/tmp/smol-{uuid.uuid4().hex[:12]}"
        boundary = f"@@smol-{uuid.uuid4().hex}@@"
        max_chars = self.settings.truncation_max_chars
        keep = str(max_chars * 4 + 200)  # bytes: UTF-8 is up to 4 per character
        pyfiles = changed_python_files(diff)
        cleanup = "0" if commands else "1"
        argv = ["sh", "-c", PREPARE, "sh", workdir, f"{self.timeout_s:g}", boundary, cleanup, keep]
        problems: list[str] = []

        def job(sink: Sink) -> None:
            problems[:] = self._write_job(diff, sink)

        deadline = self.timeout_s + 60
        container = self._ensure_container()
        try:
            sections = self._exec(container, [*argv, *pyfiles], boundary, deadline, job)
        except TimeoutError:
            raise
        except Exception as exc:
            # The warm container died or cannot start a process (a check left the pids limit
            # exhausted, memory full...): start a fresh one and try once more.
            log.info("sandbox container unusable (%s): starting a fresh one", exc)
            self._discard_container()
            container = self._ensure_container()
            sections = self._exec(container, [*argv, *pyfiles], boundary, deadline, job)

        apply = sections.get("apply", (["1"], "the sandbox script did not report"))
        copy_errors = "\n".join([*problems, sections.get("copy", ([], ""))[1].strip()]).strip()
        if apply[0][0] != "0":
            reason = apply[1].strip() or "git apply --check failed"
            return Validation(backend=self.name, applies=False, checks=[], message=reason)
        results = []
        if "syntax" in sections:
            (rc, ms, *_), output = sections["syntax"]
            results.append(self._result(syntax_command(pyfiles), rc, ms, output, max_chars))
        if commands:
            results += self._run_checks(container, workdir, boundary, keep, commands)
        message: str | None = None
        if copy_errors:
            message = f"some files could not be copied: {keep_tail(copy_errors, 500)}"
        return Validation(backend=self.name, applies=True, checks=results, message=message)

    def _run_checks(
        self, container: Any, workdir: str, boundary: str, keep: str, commands: list[str]
    ) -> list[CheckResult]:
        """Each command in its own exec; the last one removes the copy."""
        max_chars = self.settings.truncation_max_chars
        results: list[CheckResult] = []
        removed = False
        try:
            for index, command in enumerate(commands):
                last = "1" if index == len(commands) - 1 else "0"
                argv = ["sh", "-c", CHECK, "sh", workdir, f"{self.timeout_s:g}", boundary, last]
                started = time.monotonic()
                try:
                    sections = self._exec(
                        container, [*argv, keep, command], boundary, self.timeout_s + 30
                    )
                except Exception as exc:
                    # The check took the container down with it (or hung past the guard).
                    removed = True
                    ms = str(int((time.monotonic() - started) * 1000))
                    rc = "137" if isinstance(exc, TimeoutError) else "-1"
                    lost = self._lost(container, exc)
                    self._discard_container()
                    results.append(self._result(command, rc, ms, lost, max_chars))
                    break
                (rc, ms, *_), output = sections["check"]
                if int(ms) < 0:
                    ms = str(int((time.monotonic() - started) * 1000))
                results.append(self._result(command, rc, ms, output, max_chars))
                removed = last == "1"
        finally:
            if not removed:
                self._remove_quietly(container, workdir)
        return results

    def _lost(self, container: Any, exc: Exception) -> str:
        """Why an exec died with its container, in words (out of memory, most often)."""
        if isinstance(exc, TimeoutError):
            return ""
        try:
            container.reload()
            state = container.attrs.get("State", {})
        except Exception:
            state = {}
        if state.get("OOMKilled"):
            return (
                f"the sandbox ran out of memory (SANDBOX_MEMORY={self.settings.sandbox_memory}) "
                "and was killed"
            )
        return f"the sandbox lost this check: {exc}"

    def _remove_quietly(self, container: Any, workdir: str) -> None:
        try:
            outputs = f"{OUTPUTS}/{workdir.rsplit('/', 1)[-1]}"
            self.client.api.exec_start(
                self.client.api.exec_create(container.id, ["rm", "-rf", workdir, outputs])["Id"]
            )
        except Exception as exc:
            log.debug("could not remove %s: %s", workdir, exc)

    def _result(self, command: str, rc: str, ms: str, output: str, max_chars: int) -> Any:
        exit_code, duration_ms = int(rc), max(0, int(ms))
        # `timeout -s KILL` kills itself too: 137 once the time is up means "timed out".
        timed_out = exit_code in (124, 137) and duration_ms >= self.timeout_s * 1000 - 50
        return check_result(
            command,
            None if timed_out else exit_code,
            output,
            duration_ms,
            timed_out=timed_out,
            timeout_s=self.timeout_s,
            max_chars=max_chars,
        )

    def _write_job(self, diff: str, sink: Sink) -> list[str]:
        """Stream the tar PREPARE reads: the patch, then the workspace's files under `tree/`,
        read link-safe. What could not be copied, one line each."""
        names = workspace_files(self.repo_root, mode=self.settings.command_containment)
        with tarfile.open(fileobj=cast(Any, sink), mode="w|", format=tarfile.PAX_FORMAT) as tar:
            data = diff.encode("utf-8", errors="surrogateescape")
            info = tarfile.TarInfo("patch.diff")
            info.size, info.mode = len(data), 0o600
            tar.addfile(info, io.BytesIO(data))
            return add_workspace(tar, self.tree, names, "tree")

    def _exec(
        self,
        container: Any,
        argv: list[str],
        boundary: str,
        deadline_s: float,
        stdin: Callable[[Sink], None] | None = None,
    ) -> dict[str, tuple[list[str], str]]:
        """Run `argv` in the container, what `stdin` writes streamed in; its stdout split by
        `boundary`.

        If the exec outlives `deadline_s` (the kill inside failed: a fork bomb can leave no
        pid to run `kill`), the container is removed and TimeoutError raised; the next
        validation starts a fresh one.
        """
        from docker.utils.socket import frames_iter

        api = self.client.api
        fired = threading.Event()

        def hung() -> None:
            fired.set()
            self._discard_container()

        guard = threading.Timer(deadline_s, hung)
        guard.daemon = True
        guard.start()
        stdout: list[bytes] = []
        stderr: list[bytes] = []
        try:
            exec_id = api.exec_create(container.id, argv, stdin=stdin is not None)["Id"]
            sock = api.exec_start(exec_id, socket=True)
            try:
                raw = getattr(sock, "_sock", sock)
                if stdin is not None:
                    stdin(Sink(raw))
                raw.shutdown(socket.SHUT_WR)
                for stream, data in frames_iter(sock, tty=False):
                    (stdout if stream == 1 else stderr).append(data)
            finally:
                sock.close()
        except Exception:
            if not fired.is_set():
                raise
        finally:
            guard.cancel()
        if fired.is_set():
            guard.join(timeout=60)  # the container is removed before anyone goes on
            raise TimeoutError(f"the sandbox did not answer within {deadline_s:g} s")
        sections = _sections(b"".join(stdout).decode("utf-8", errors="replace"), boundary)
        if "done" not in sections:
            errors = b"".join(stderr).decode("utf-8", errors="replace").strip()
            raise RuntimeError(
                f"the sandbox script failed: {keep_tail(errors, 500) or 'no output'}"
            )
        return sections


def _sections(text: str, boundary: str) -> dict[str, tuple[list[str], str]]:
    """`{kind: ([fields...], body)}` from the framed output of PREPARE / CHECK.

    Each header line is `\\n<boundary> kind fields...`: the newline before it keeps a body
    without a final newline from swallowing the header, and is removed from the body again.
    """
    sections: dict[str, tuple[list[str], str]] = {}
    kind, fields, body = "", [], []  # type: ignore[var-annotated]

    def close() -> None:
        text = "".join(body)
        sections[kind] = (fields, text[:-1] if text.endswith("\n") else text)

    for line in text.splitlines(keepends=True):
        if line.startswith(boundary + " "):
            close()
            kind, *fields = line[len(boundary) + 1 :].split()
            body = []
        else:
            body.append(line)
    close()
    return sections
