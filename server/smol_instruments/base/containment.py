"""Containment: every process the agent starts runs inside a bubblewrap sandbox.

A `Containment` says what a command may touch; `prepare(argv)` turns it into the argv that
runs the command contained, the environment it gets and the file descriptor bubblewrap reads
its seccomp filter from. Inside:

- the whole filesystem is read-only (`--ro-bind / /`), with a private `/tmp` and a fresh
  `/dev` and `/proc`;
- the user's home is an empty tmpfs at its own path (no ~/.ssh, no rc files, no
  credentials; HOME points at it). Toolchains installed under it (pyenv, rustup, nvm,
  ~/.local/bin, the virtual environment, every PATH entry there) are mounted back read-only
  so `python`, `cargo` and `node` still resolve. A few places outside the home that hold the
  machine's secrets (/etc/shadow, SSH host keys, /etc/ssl/private) are hidden too, and when
  we run as root the other users' homes;
- the repository is writable except `.git` and the other places where a write changes what
  later runs without a diff anyone reviews (`.smol-instruments`, `.vscode`, `.idea`,
  `.envrc`); `.git` stays read-only also when it is a file naming a git directory elsewhere
  (that directory is mounted read-only too). The git runner mounts the repository
  read-only altogether (`writable=False`);
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
repository that contains the home directory) `plan_command` fails closed: a command the
policy allows is asked instead, with a reason saying why and how to fix it.
`COMMAND_CONTAINMENT` chooses: `auto` (contain; ask where impossible), `required` (never run
a command uncontained), `off` (the policy's verdict alone; doctor warns).
"""

from __future__ import annotations

import glob
import os
import platform
import pwd
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from . import seccomp
from .launch import Launch
from .lifeline import wrap as lifeline_wrap

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

#: Names in the repository a contained command may read but not change (when they exist),
#: besides `.git` and the git directories it names (`git_dirs`).
PROTECTED_NAMES = (".smol-instruments", ".vscode", ".idea", ".envrc")

#: Toolchains under the home directory, mounted back read-only (none holds credentials:
#: ~/.cargo is split because ~/.cargo/credentials.toml holds registry tokens).
HOME_TOOLCHAINS = (
    ".pyenv",
    ".rbenv",
    ".nodenv",
    ".goenv",
    ".nvm",
    ".volta",
    ".rustup",
    ".cargo/bin",
    ".cargo/registry",
    ".cargo/git",
    ".local/bin",
    ".local/share/uv/python",
    ".local/share/pipx",
    ".local/pipx",
    ".bun/bin",
    ".deno/bin",
    "go/pkg/mod",
    "go/bin",
    ".sdkman/candidates",
    ".m2/repository",
    ".gradle/caches",
    ".gradle/wrapper",
    "miniconda3",
    "miniforge3",
    "anaconda3",
)

#: Variables naming a toolchain's directory; mounted back when they point into the home.
TOOLCHAIN_VARIABLES = (
    "PYENV_ROOT",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "RUSTUP_HOME",
    "NVM_DIR",
    "GOROOT",
    "JAVA_HOME",
    "VOLTA_HOME",
)

#: Secrets of the machine outside any home directory, hidden inside (when they exist).
HIDDEN_FILES = ("/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-")
HIDDEN_FILE_GLOBS = ("/etc/ssh/ssh_host_*_key",)
HIDDEN_DIRS = ("/etc/ssl/private",)

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
    """What one command may touch: `root` (writable unless `writable=False`) and widenings."""

    root: Path
    writable: bool = True
    widens: frozenset[Widening] = field(default_factory=frozenset)

    def widened(self, widens: Iterable[Widening]) -> Containment:
        return Containment(self.root, self.writable, self.widens | frozenset(widens))

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
        env = contained_env(source, homes[0], self.widens)
        if extra_env:
            env.update(extra_env)
        fd = seccomp.filter_fd()
        args = [
            bwrap_path() or "bwrap",
            *self.mounts(homes, source),
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--die-with-parent",
            "--new-session",
        ]
        if "network" not in self.widens:
            args.append("--unshare-net")
        if os.geteuid() == 0:
            args += ["--cap-drop", "ALL"]
        fds: tuple[int, ...] = ()
        if fd is not None:
            args += ["--seccomp", str(fd)]
            fds = (fd,)
        args += ["--chdir", str(cwd or self.root)]
        if not lifeline:
            return Launch([*args, "--", *argv], env, fds)
        # Both ends close-on-exec: bubblewrap gets the read end alone (pass_fds), no child
        # of ours ever gets the write end.
        read_end, write_end = os.pipe()
        args += ["--sync-fd", str(read_end), "--", *lifeline_wrap(argv, read_end)]
        return Launch(args, env, (*fds, read_end), write_end)

    def mounts(self, homes: Sequence[Path], environ: Mapping[str, str]) -> list[str]:
        """The filesystem, in order: each mount hides what an earlier one showed at its path."""
        root = self.root
        args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
        hidden_homes = list(homes)
        if os.geteuid() == 0 and Path("/home").is_dir():
            hidden_homes.append(Path("/home"))  # root reads every user's files
        for home in _outermost(hidden_homes):
            args += ["--tmpfs", str(home)]
        for toolchain in toolchain_dirs(homes, environ):
            args += ["--ro-bind-try", str(toolchain), str(toolchain)]
        for secret in _existing(HIDDEN_DIRS):
            args += ["--tmpfs", secret]
        for secret in _existing(
            [*HIDDEN_FILES, *(p for g in HIDDEN_FILE_GLOBS for p in sorted(glob.glob(g)))]
        ):
            args += ["--ro-bind", "/dev/null", secret]
        if not self.writable:
            args += ["--ro-bind", str(root), str(root)]
            # The git directory of a worktree lives elsewhere, perhaps somewhere hidden above.
            for path in git_dirs(root):
                if not path.is_relative_to(root):
                    args += ["--ro-bind", str(path), str(path)]
            return args
        args += ["--bind", str(root), str(root)]
        git = git_dirs(root) if "git" in self.widens else []
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


def describe_widening(widens: Iterable[str]) -> str:
    """How widenings are put to the user: "network access, writes to .git (...)"."""
    return ", ".join(WIDENING_TEXT.get(w, w) for w in widens)


# --- the parts of the sandbox ------------------------------------------------------------


def home_directories(environ: Mapping[str, str]) -> list[Path]:
    """HOME and the account's home from the password database (both hidden when they differ)."""
    homes: list[Path] = []
    candidates = [environ.get("HOME", "")]
    try:
        candidates.append(pwd.getpwuid(os.getuid()).pw_dir)
    except KeyError:
        pass
    for text in candidates:
        if not text or not os.path.isabs(text):
            continue
        path = Path(text).resolve()
        if path != Path("/") and path.is_dir() and path not in homes:
            homes.append(path)
    return homes


def toolchain_dirs(homes: Sequence[Path], environ: Mapping[str, str]) -> list[Path]:
    """Directories under a home (or /tmp) that commands need to find their interpreters.

    Both are hidden inside (an empty home, a private /tmp); a toolchain that lives there — a
    virtual environment on PATH, this very Python's — is mounted back, read-only.
    """
    found: list[Path] = []
    hidden = [*homes, Path("/tmp")]

    def add(path: Path) -> None:
        if any(path == place for place in hidden) or not path.is_dir():
            return
        if any(path.is_relative_to(place) for place in hidden) and path not in found:
            found.append(path)

    add(Path(sys.prefix))
    add(Path(sys.prefix).resolve())
    add(Path(sys.executable).parent)

    for home in homes:
        for rel in HOME_TOOLCHAINS:
            add(home / rel)
    for entry in environ.get("PATH", "").split(os.pathsep):
        if os.path.isabs(entry):
            add(Path(entry))
            add(Path(entry).resolve())
    for name in TOOLCHAIN_VARIABLES:
        value = environ.get(name, "")
        if os.path.isabs(value):
            add(Path(value))
            add(Path(value).resolve())
    # A toolchain inside another one is mounted with it.
    return [p for p in found if not any(p != q and p.is_relative_to(q) for q in found)]


def git_dirs(root: Path) -> list[Path]:
    """`.git` and the git directories a `.git` file names, when they belong to this root.

    A `.git` file is the repository's to write, so what it names is trusted only when it is
    inside the root (then it is protected like `.git`) or points back at this root: a
    worktree's directory names our `.git` file in its `gitdir`, a submodule's names our
    root as its `core.worktree`. Anything else is never mounted, or a `.git` file saying
    `gitdir: ~/.ssh` would show the keys to the command.
    """
    dot_git = root / ".git"
    if dot_git.is_symlink() or not os.path.lexists(dot_git):
        return []
    paths = [dot_git]
    if dot_git.is_file():
        text = dot_git.read_text(errors="replace").strip()
        target = Path(text.removeprefix("gitdir:").strip()) if text.startswith("gitdir:") else None
        if target is not None:
            gitdir = (target if target.is_absolute() else root / target).resolve()
            if gitdir.is_relative_to(root) and gitdir.exists():
                paths.append(gitdir)
            elif (gitdir / "HEAD").is_file() and _belongs_to(gitdir, root):
                paths.append(gitdir)
                common = gitdir / "commondir"
                if common.is_file():
                    shared = Path(common.read_text(errors="replace").strip())
                    shared = (shared if shared.is_absolute() else gitdir / shared).resolve()
                    if (shared / "HEAD").is_file():
                        paths.append(shared)
    return paths


_WORKTREE_SETTING = re.compile(r"^\s*worktree\s*=\s*(.+?)\s*$", re.M | re.I)


def _belongs_to(gitdir: Path, root: Path) -> bool:
    back = gitdir / "gitdir"  # a worktree of another repository
    if back.is_file():
        return Path(back.read_text(errors="replace").strip()) == root / ".git"
    try:  # a submodule: its directory lives in the superproject's .git/modules
        config = (gitdir / "config").read_text(errors="replace")
    except OSError:
        return False
    match = _WORKTREE_SETTING.search(config)
    if match is None:
        return False
    worktree = Path(match[1].strip('"'))
    return (worktree if worktree.is_absolute() else gitdir / worktree).resolve() == root


def protected_paths(root: Path) -> list[Path]:
    """What stays read-only inside a writable root. A symlink is never followed: its target
    could be anywhere (`.vscode -> ~/.ssh`), and mounting it would show it."""
    paths = git_dirs(root)
    for name in PROTECTED_NAMES:
        path = root / name
        if os.path.lexists(path) and not path.is_symlink():
            paths.append(path)
    return paths


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


def _outermost(paths: Iterable[Path]) -> list[Path]:
    unique = list(dict.fromkeys(paths))
    return [p for p in unique if not any(p != q and p.is_relative_to(q) for q in unique)]


def _existing(paths: Iterable[str]) -> list[str]:
    return [p for p in paths if os.path.lexists(p)]


# --- is bubblewrap usable here? ----------------------------------------------------------


def bwrap_path() -> str | None:
    return shutil.which("bwrap")


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
        launch = Containment(Path(scratch).resolve()).prepare(["true"])
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
        except (OSError, subprocess.TimeoutExpired) as exc:
            return Availability(False, f"bubblewrap did not start: {exc}", INSTALL_FIX, version)
        finally:
            launch.close()
    if result.returncode == 0:
        return Availability(
            True, f"bubblewrap {version or '(unknown version)'} works", None, version
        )
    error = (result.stderr.strip().splitlines() or [f"exit code {result.returncode}"])[-1]
    return Availability(
        False, f"bubblewrap cannot create its sandbox: {error}", USERNS_FIX, version
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


def availability_for(root: Path, mode: Mode = "auto") -> Availability:
    """Whether commands in `root` can be contained (`off` reports itself as not contained)."""
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
    return machine
