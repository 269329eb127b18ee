"""Containment: every process the agent starts runs inside a bubblewrap sandbox.

A `Containment` says what a command may touch; `prepare(argv)` turns it into the argv that
runs the command contained, the environment it gets and the file descriptors bubblewrap
reads its seccomp filter and the lifeline from. Inside:

- only the system's places are there, read-only (`/usr`, `/etc`, `/lib*`, ...), with the
  toolchains that live elsewhere mounted back, a private `/tmp`, fresh `/dev` and `/proc`,
  and an empty home (filesystem.py says what and why: no `/home`, `/root`, `/var`, `/opt`,
  no other projects; no ~/.ssh, rc files or credentials; the machine's secrets in /etc
  hidden);
- the repository is a copy-on-write view of it when the command may write (`view`,
  overlay.py: the view's changes are sorted by changes.py afterwards, the repository itself
  is never written), read-only otherwise (the git runner); `direct=True`, writable in place
  with `.git` and the existing protected places read-only, only writes back what an
  approved command made where git ignores (writeback.py);
- no network (a new network namespace has only `lo`), its own PID namespace, killed with its
  parent however it ends (`lifeline.py`: a pipe only we can write, watched inside), a new
  session (no terminal to push keystrokes into), no capabilities, and no Unix-domain
  sockets (`seccomp.py`: a Docker socket on a read-only mount is still root);
- a minimal environment from an allowlist: never API keys, tokens or our own settings.

A command the user approves may be *widened* by exactly what the approval names: `network`
(pip install, npm install, git fetch) or `git` (writes to `.git`: commit, branch, stash).
`WIDENINGS` maps the policy's rule id to what a command under that rule needs; the approval
request carries the list so the host shows it.

Where no sandbox can be had (no bubblewrap, user namespaces disabled, macOS for now, a
repository that contains the home directory, no copy-on-write view of it) `plan_command`
fails closed: a command the policy allows is asked instead, with a reason saying why and how
to fix it.
`COMMAND_CONTAINMENT` chooses: `auto` (contain; ask where impossible), `required` (never run
a command uncontained), `off` (the policy's verdict alone; doctor warns).
"""

from __future__ import annotations

import os
import platform
import subprocess
import tempfile
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from . import seccomp
from .filesystem import (
    HIDDEN_DIRS,
    TOOLCHAIN_VARIABLES,
    git_dirs,
    hidden_files,
    home_directories,
    protected_paths,
    system_roots,
    toolchain_dirs,
)
from .launch import Launch
from .lifeline import wrap as lifeline_wrap
from .overlay import FAILURE, View, ViewError, how, missing_programs, mounts_here, which

Mode = Literal["auto", "required", "off"]
Widening = Literal["network", "git"]

#: What an approval of a command under each policy rule lets it do beyond the default.
WIDENINGS: Mapping[str, tuple[Widening, ...]] = {
    "approval.package-install": ("network",),
    "approval.package-run": ("network",),
    "approval.publish": ("network",),
    "approval.network": ("network",),
    "approval.git-network": ("network", "git"),
    "approval.git-push": ("network", "git"),
    "approval.git-force-push": ("network", "git"),
    "approval.git-history": ("git",),
    "approval.git-write": ("git",),
    "approval.git-discard": ("git",),
    "approval.write-git-dir": ("git",),
}

#: How each widening is put to the user.
WIDENING_TEXT: Mapping[str, str] = {
    "network": "network access",
    "git": "writes to .git (commits, branches, the index)",
}

#: The environment a contained command gets from ours (besides LC_*), and nothing else.
PASSED_VARIABLES = frozenset(
    {
        "PATH",
        "LANG",
        "LANGUAGE",
        "TERM",
        "COLORTERM",
        "NO_COLOR",
        "TZ",
        "USER",
        "LOGNAME",
        "SHELL",
        *TOOLCHAIN_VARIABLES,
        "PYENV_VERSION",
        "CONDA_DEFAULT_ENV",
        "RUSTUP_TOOLCHAIN",
        "CARGO_HOME",
        "GOPATH",
        "GOFLAGS",
        "GOTOOLCHAIN",
        "NVM_BIN",
        # Where the trusted certificates are (paths, not secrets).
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "REQUESTS_CA_BUNDLE",
        "CURL_CA_BUNDLE",
        "NODE_EXTRA_CA_CERTS",
        "PIP_CERT",
        "GIT_SSL_CAINFO",
    }
)

#: Passed only to a command approved with `network`: what reaching a registry needs.
NETWORK_VARIABLES = frozenset(
    {
        *(f"{proxy}_proxy" for proxy in ("http", "https", "all", "no")),
        *(f"{proxy}_PROXY" for proxy in ("HTTP", "HTTPS", "ALL", "NO")),
        "PIP_INDEX_URL",
        "PIP_EXTRA_INDEX_URL",
        "PIP_FIND_LINKS",
        "PIP_TRUSTED_HOST",
        "PIP_DEFAULT_TIMEOUT",
        "UV_INDEX_URL",
        "UV_EXTRA_INDEX_URL",
        "NPM_CONFIG_REGISTRY",
        "npm_config_registry",
        "GOPROXY",
        "GONOSUMDB",
        "GOPRIVATE",
    }
)

#: Set for every contained command: nobody can answer a prompt or page output.
FIXED_VARIABLES = {
    "TMPDIR": "/tmp",
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "GIT_TERMINAL_PROMPT": "0",
    "PYTHONUNBUFFERED": "1",
}

INSTALL_FIX = (
    "install bubblewrap (apt-get install bubblewrap, dnf install bubblewrap, pacman -S bubblewrap)"
)
USERNS_FIX = (
    "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; on "
    "Ubuntu 24.04 kernel.apparmor_restrict_unprivileged_userns=0), or run where they are allowed"
)
UTIL_LINUX_FIX = "install util-linux (apt-get install util-linux mount, dnf install util-linux)"
VIEW_FIX = (
    "use Linux 5.11 or later with unprivileged user namespaces, and keep the repository and "
    "the temporary directory (TMPDIR) on a local filesystem (ext4, xfs, btrfs; tmpfs from "
    "Linux 6.6); or set COMMAND_CONTAINMENT=off to run commands in place"
)
MACOS_FIX = (
    "containment on macOS (sandbox-exec) is not built yet, see docs/security.md; until then "
    "every command is asked first"
)


@dataclass(frozen=True)
class Availability:
    """Whether commands can be contained here: `detail` says what runs or what is wrong."""

    works: bool
    detail: str
    fix: str | None = None
    version: str | None = None

    def line(self) -> str:
        return f"{self.detail} (fix: {self.fix})" if self.fix and not self.works else self.detail


@dataclass(frozen=True)
class Containment:
    """What one command may touch.

    The repository at `root` is read-only, unless a `view` is given: then it is that
    copy-on-write view (overlay.py), and whatever the command writes there stays in the view
    for changes.py to sort. `direct=True` makes it writable in place (its `.git` and protected
    places read-only): only for writing back what an approved command made (writeback.py)
    and for measuring what the view costs (bench/containment.py). `readable`: paths the user
    allows commands to read (COMMAND_READ_PATHS) besides the system's and the repository."""

    root: Path
    view: View | None = None
    direct: bool = False
    widens: frozenset[Widening] = field(default_factory=frozenset)
    readable: tuple[Path, ...] = ()

    def widened(self, widens: Iterable[Widening]) -> Containment:
        return replace(self, widens=self.widens | frozenset(widens))

    def viewing(self, view: View | None) -> Containment:
        return replace(self, view=view, direct=False)

    def prepare(
        self,
        argv: Sequence[str],
        *,
        cwd: Path | None = None,
        environ: Mapping[str, str] | None = None,
        extra_env: Mapping[str, str] | None = None,
        lifeline: bool = True,
    ) -> Launch:
        """The bubblewrap command line that runs `argv` in `cwd` (default: the root).

        `lifeline=False` leaves out the watcher that ends the command with us: only to
        measure what it costs (bench/containment.py)."""
        source = os.environ if environ is None else environ
        homes = home_directories(source)
        env = contained_env(source, homes[0] if homes else None, self.widens)
        if extra_env:
            env.update(extra_env)
        fd = seccomp.filter_fd()
        # Root, or a process in a user namespace of its own (userns.py), mounts the view
        # where we run, and bubblewrap binds it (no program started for it); anyone else
        # has it mounted in a namespace of its own (`_viewed`).
        merged = self.view.mount_here() if self.view is not None else None
        release = None
        if merged is not None:
            view = self.view
            assert view is not None

            def release() -> None:
                view.unmount(merged)

        args = [
            bwrap_path() or "bwrap",
            *self.mounts(homes, source, merged),
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--die-with-parent",
            "--new-session",
        ]
        if "network" not in self.widens:
            args.append("--unshare-net")
        if merged is None and self.view is not None and os.geteuid() != 0:
            # bubblewrap runs as root of the view's user namespace: the command gets our ids
            args += ["--unshare-user", "--uid", str(os.geteuid()), "--gid", str(os.getegid())]
        if os.geteuid() == 0 or self.view is not None:
            args += ["--cap-drop", "ALL"]
        fds: tuple[int, ...] = ()
        if fd is not None:
            args += ["--seccomp", str(fd)]
            fds = (fd,)
        args += ["--chdir", str(cwd or self.root)]
        if not lifeline:
            return Launch(self._viewed([*args, "--", *argv], merged), env, fds, release=release)
        # Both ends close-on-exec: bubblewrap gets the read end alone (pass_fds), no child
        # of ours ever gets the write end.
        read_end, write_end = os.pipe()
        args += ["--sync-fd", str(read_end), "--", *lifeline_wrap(argv, read_end)]
        return Launch(self._viewed(args, merged), env, (*fds, read_end), write_end, release)

    def _viewed(self, bwrap: list[str], merged: Path | None) -> list[str]:
        """Bubblewrap's command line, started once the view (if any) is mounted."""
        if self.view is None or merged is not None:
            return bwrap
        return self.view.command(bwrap, with_repository="git" in self.widens)

    def mounts(
        self, homes: Sequence[Path], environ: Mapping[str, str], merged: Path | None = None
    ) -> list[str]:
        """The filesystem, in order: each mount hides what an earlier one showed at its path
        (filesystem.py says what is seen); `merged`: where the view is mounted, if not on
        the root itself (View.mount_here)."""
        root = self.root
        roots = system_roots()
        args: list[str] = []
        for path, target in roots:
            if target is None:
                args += ["--ro-bind", str(path), str(path)]
            else:
                args += ["--symlink", target, str(path)]
        args += ["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
        for home in homes:  # HOME exists and is empty
            args += ["--tmpfs", str(home)]
        for path in toolchain_dirs(roots, homes, environ, self.readable, inside=root):
            args += ["--ro-bind-try", str(path), str(path)]
        for secret in HIDDEN_DIRS:
            if os.path.isdir(secret):
                args += ["--tmpfs", secret]
        for secret in hidden_files():
            args += ["--ro-bind", "/dev/null", secret]
        args += self.repository(merged)
        # Nothing else of the top level is writable (what bubblewrap made there to mount on).
        return [*args, "--remount-ro", "/"]

    def repository(self, merged: Path | None = None) -> list[str]:
        """How the repository is mounted: read-only, as the view (mounted on the root in
        bubblewrap's parent namespace, or at `merged` where we run), or in place."""
        root = self.root
        gits = git_dirs(root)
        if self.view is not None:
            args = ["--bind", str(merged or root), str(root)]
            writes_git = "git" in self.widens
            # where the repository as it is stays reachable: the root itself unless the
            # view was mounted on it
            reachable = root if merged is not None else self.view.real
            for path in gits:
                if path.is_relative_to(root):
                    if writes_git:  # the real one, not the view's
                        real = reachable / path.relative_to(root)
                        args += ["--bind", str(real), str(path)]
                else:  # a worktree's git directory lives elsewhere, perhaps hidden above
                    args += ["--bind" if writes_git else "--ro-bind", str(path), str(path)]
            return args
        args = []
        if not self.direct:
            args += ["--ro-bind", str(root), str(root)]
            for path in gits:
                if not path.is_relative_to(root):
                    args += ["--ro-bind", str(path), str(path)]
            return args
        args += ["--bind", str(root), str(root)]
        git = gits if "git" in self.widens else []
        for path in protected_paths(root):
            if path not in git:
                args += ["--ro-bind", str(path), str(path)]
            elif not path.is_relative_to(root):
                args += ["--bind", str(path), str(path)]
        return args

    def problem(self, environ: Mapping[str, str] | None = None) -> str | None:
        """Why this root cannot be contained (it holds the home directory, or its `.git` is a
        symbolic link a command could replace), or None."""
        root = self.root.resolve()
        if (root / ".git").is_symlink():
            return f"{root / '.git'} is a symbolic link; a command could replace it"
        for home in home_directories(os.environ if environ is None else environ):
            if home == root or home.is_relative_to(root):
                return f"the repository {root} contains the home directory {home}"
        return None


@dataclass(frozen=True)
class CommandPlan:
    """How one command runs: contained or not, asked or not, widened by what, or refused."""

    contained: bool
    ask: bool
    widens: tuple[Widening, ...] = ()
    refuse: str | None = None
    note: str | None = None


def plan_command(
    verdict: str, rule: str | None, mode: Mode, availability: Availability
) -> CommandPlan:
    """Combine the policy's verdict with what containment can do here; fail closed."""
    asked = verdict != "allow"
    if mode == "off":
        return CommandPlan(contained=False, ask=asked, note="containment is off")
    if availability.works:
        widens = WIDENINGS.get(rule or "", ()) if asked else ()
        return CommandPlan(contained=True, ask=asked, widens=widens)
    why = f"no sandbox for commands: {availability.line()}"
    if mode == "required":
        return CommandPlan(contained=False, ask=False, refuse=why)
    return CommandPlan(contained=False, ask=True, note=f"would run uncontained; {why}")


def read_paths(setting: str | None) -> tuple[Path, ...]:
    """COMMAND_READ_PATHS (absolute paths separated by ':') as the paths commands may read."""
    return tuple(Path(p) for p in (setting or "").split(os.pathsep) if os.path.isabs(p))


def describe_widening(widens: Iterable[str]) -> str:
    """How widenings are put to the user: "network access, writes to .git (...)"."""
    return ", ".join(WIDENING_TEXT.get(w, w) for w in widens)


# --- the parts of the sandbox ------------------------------------------------------------


def contained_env(
    environ: Mapping[str, str], home: Path | None, widens: Iterable[Widening] = ()
) -> dict[str, str]:
    """The allowlisted part of `environ`, HOME at the (empty) home, and the fixed settings."""
    allowed = PASSED_VARIABLES | (NETWORK_VARIABLES if "network" in widens else frozenset())
    env = {
        name: value
        for name, value in environ.items()
        if name in allowed or (name.startswith("LC_") and name.isupper())
    }
    env.setdefault("PATH", os.defpath)
    env.setdefault("TERM", "dumb")
    env["HOME"] = str(home) if home is not None else "/tmp"
    env.update(FIXED_VARIABLES)
    return env


# --- is bubblewrap usable here? ----------------------------------------------------------


def bwrap_path() -> str | None:
    return which("bwrap")


_probe_lock = threading.Lock()
_probe_result: Availability | None = None


def probe(*, refresh: bool = False) -> Availability:
    """Run `bwrap ... true` once per process with the flags real commands get; cache it."""
    global _probe_result
    with _probe_lock:
        if _probe_result is None or refresh:
            _probe_result = _probe()
        return _probe_result


def _probe() -> Availability:
    if platform.system() != "Linux":
        return Availability(False, f"no command sandbox on {platform.system()}", MACOS_FIX)
    path = bwrap_path()
    if path is None:
        return Availability(False, "bubblewrap (bwrap) is not installed", INSTALL_FIX)
    version = _bwrap_version(path)
    with tempfile.TemporaryDirectory(prefix="smol-contain-probe-") as scratch:
        try:
            returncode, stderr = _run_true(Containment(Path(scratch).resolve()))
        except (OSError, subprocess.TimeoutExpired) as exc:
            return Availability(False, f"bubblewrap did not start: {exc}", INSTALL_FIX, version)
    if returncode == 0:
        return Availability(
            True, f"bubblewrap {version or '(unknown version)'} works", None, version
        )
    error = (stderr.strip().splitlines() or [f"exit code {returncode}"])[-1]
    return Availability(
        False, f"bubblewrap cannot create its sandbox: {error}", USERNS_FIX, version
    )


def _run_true(spec: Containment) -> tuple[int, str]:
    """`true`, contained as `spec` says: its exit status and stderr."""
    launch = spec.prepare(["true"])
    try:
        result = subprocess.run(
            launch.argv,
            env=launch.env,
            pass_fds=launch.pass_fds,
            capture_output=True,
            text=True,
            timeout=20,
            stdin=subprocess.DEVNULL,
        )
    finally:
        launch.close()
    return result.returncode, result.stderr


_views_lock = threading.Lock()
_views: dict[Path, Availability] = {}


def probe_view(root: Path, *, refresh: bool = False) -> Availability:
    """Whether a copy-on-write view of `root` can be mounted here (once per root, cached)."""
    root = root.resolve()
    with _views_lock:
        if refresh or root not in _views:
            _views[root] = _probe_view(root)
        return _views[root]


def _probe_view(root: Path) -> Availability:
    missing = [] if mounts_here() else missing_programs()
    if missing:
        return Availability(
            False,
            f"no copy-on-write view of the repository: {' and '.join(missing)} missing",
            UTIL_LINUX_FIX,
        )
    try:
        with View.create(root) as view:
            returncode, stderr = _run_true(Containment(root, view=view))
    except ViewError as exc:
        return Availability(False, f"no copy-on-write view of the repository: {exc}", VIEW_FIX)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Availability(False, f"the copy-on-write view did not start: {exc}", VIEW_FIX)
    if returncode == 0:
        return Availability(True, f"overlayfs views work ({how()})")
    error = (stderr.strip().splitlines() or [f"exit code {returncode}"])[-1]
    error = error.removeprefix(FAILURE + ": ")
    return Availability(
        False, f"no copy-on-write view of the repository (overlayfs): {error}", VIEW_FIX
    )


def _bwrap_version(path: str) -> str | None:
    try:
        out = subprocess.run(
            [path, "--version"],
            capture_output=True,
            text=True,
            timeout=10,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    words = out.stdout.split()
    return words[-1] if out.returncode == 0 and words else None


def availability_for(root: Path, mode: Mode = "auto", *, view: bool = True) -> Availability:
    """Whether commands in `root` can be contained (`off` reports itself as not contained);
    with `view`, also whether they can write to a copy-on-write view of it (what every
    command that may write needs; git, which only reads, does not)."""
    if mode == "off":
        return Availability(False, "containment is off (COMMAND_CONTAINMENT=off)")
    machine = probe()
    if not machine.works:
        return machine
    problem = Containment(root).problem()
    if problem:
        return Availability(
            False, problem, "open a project directory inside your home, not the home itself"
        )
    if view:
        cow = probe_view(root)
        if not cow.works:
            return Availability(False, cow.detail, cow.fix, machine.version)
        return Availability(True, f"{machine.detail}; {cow.detail}", None, machine.version)
    return machine
