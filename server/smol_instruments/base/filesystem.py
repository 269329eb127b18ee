"""What a contained command sees of the filesystem (containment.py mounts it in this order).

- The system's programs and libraries, read-only: the top-level places in SYSTEM_ROOTS
  (`/usr`, `/bin`, `/lib*`, `/etc`, `/sys`; `/nix`, `/gnu` and `/snap` where a system keeps
  its programs there), each bound on its own, a link made again as a link.
- Nothing else of the filesystem: `/home`, `/root`, `/var`, `/srv`, `/opt`, `/mnt`,
  `/media`, `/run` and whatever a machine adds at the top (`/work`, `/data`) are not there,
  so neither are other projects, other users' files and the credentials they keep. The
  home directory is an empty tmpfs at its own path (HOME), `/tmp` a private one, `/dev` and
  `/proc` fresh.
- Mounted back, read-only: the toolchains that live elsewhere (the Python running us, every
  PATH entry, the directories TOOLCHAIN_VARIABLES name, the usual toolchains in the home,
  HOME_TOOLCHAINS) so that `python`, `node` and `cargo` resolve as outside; what `/etc`
  links to (`/etc/resolv.conf` -> `/run/...`); and the paths the user allows with
  COMMAND_READ_PATHS (a user-only setting).
- Hidden in `/etc`: the machine's own secrets (HIDDEN_FILES, HIDDEN_DIRS).
- The repository, mounted last (containment.py decides how).

Binding the few system places is also cheaper than binding `/` and hiding the rest: every
mount is work for bubblewrap at start and for the kernel when the sandbox goes.

`git_dirs` says which git directories belong to a repository, `protected_paths` which of its
existing places stay read-only when a command writes the repository in place.
"""

from __future__ import annotations

import glob
import os
import pwd
import re
import sys
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from .places import PROTECTED_NAMES

#: Top-level directories a command sees (read-only): where the system keeps its programs.
SYSTEM_ROOTS = (
    "usr",
    "bin",
    "sbin",
    "lib",
    "lib32",
    "lib64",
    "libx32",
    "etc",
    "sys",
    "nix",
    "gnu",
    "snap",
)

#: Files in /etc that may link elsewhere (`/run`); what they link to is mounted back.
ETC_LINKS = ("/etc/resolv.conf", "/etc/hosts", "/etc/localtime")

#: Made fresh inside: nothing of ours is mounted back there.
FRESH_PATHS = ("/proc", "/dev")

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

#: Variables naming a toolchain's directory; mounted back when they point into a hidden place.
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

#: Secrets of the machine in /etc, hidden inside (when they exist).
HIDDEN_FILES = ("/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-")
HIDDEN_FILE_GLOBS = ("/etc/ssh/ssh_host_*_key",)
HIDDEN_DIRS = ("/etc/ssl/private",)


def system_roots(top: Path = Path("/")) -> list[tuple[Path, str | None]]:
    """The system's top-level places that exist: (path, None) for a directory, (path, target)
    for a link (`/bin -> usr/bin` where /usr is merged), made again as a link inside."""
    found: list[tuple[Path, str | None]] = []
    for name in SYSTEM_ROOTS:
        path = top / name
        if os.path.islink(path):
            found.append((path, os.readlink(path)))
        elif os.path.isdir(path):
            found.append((path, None))
    return found


def hidden_files() -> list[str]:
    """The machine's secrets in /etc, hidden inside (/dev/null in their place)."""
    found = [p for p in HIDDEN_FILES if os.path.lexists(p)]
    return found + [p for pattern in HIDDEN_FILE_GLOBS for p in sorted(glob.glob(pattern))]


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


def toolchain_dirs(
    roots: Sequence[tuple[Path, str | None]],
    homes: Sequence[Path],
    environ: Mapping[str, str],
    readable: Iterable[Path] = (),
    inside: Path | None = None,
) -> list[Path]:
    """What is mounted back read-only besides the system's places (`roots`): the toolchains
    commands need to find their interpreters, what /etc links to, and the `readable` paths
    the user allows. Nothing inside `inside` (the repository, mounted on its own).

    Remembered for TOOLCHAINS_KEPT_S for the same question: every command asks it, and the
    answer (some fifty stats and resolutions) changes only when a toolchain is installed."""
    key = (
        tuple(roots),
        tuple(homes),
        environ.get("PATH", ""),
        tuple(environ.get(name, "") for name in TOOLCHAIN_VARIABLES),
        tuple(readable),
        inside,
        sys.prefix,
        sys.executable,
    )
    now = time.monotonic()
    with _toolchains_lock:
        kept = _toolchains.get(key)
        if kept is not None and now - kept[0] < TOOLCHAINS_KEPT_S:
            return list(kept[1])
    found = _toolchain_dirs(key[0], key[1], environ, key[4], inside)
    with _toolchains_lock:
        if len(_toolchains) > 32:
            _toolchains.clear()
        _toolchains[key] = (now, tuple(found))
    return found


#: How long a list of toolchains is trusted (toolchain_dirs).
TOOLCHAINS_KEPT_S = 10.0
_toolchains_lock = threading.Lock()
_toolchains: dict[tuple[object, ...], tuple[float, tuple[Path, ...]]] = {}


def _toolchain_dirs(
    roots: Sequence[tuple[Path, str | None]],
    homes: Sequence[Path],
    environ: Mapping[str, str],
    readable: Iterable[Path],
    inside: Path | None,
) -> list[Path]:
    system = tuple(f"/{root.name}" for root, _ in roots)
    skipped = tuple(str(h) for h in homes)
    within = str(inside) if inside is not None else None
    found: list[str] = []

    def wanted(path: str) -> bool:
        if path in found or path in skipped or path == "/" or _under(path, FRESH_PATHS):
            return False
        if _under(path, system):
            return False
        return within is None or not (_under(path, (within,)) or _under(within, (path,)))

    def add(path: str, *, directory: bool = True) -> None:
        path = os.path.normpath(path)
        exists = os.path.isdir(path) if directory else os.path.exists(path)
        if wanted(path) and exists:  # False also where we may not look
            found.append(path)

    add(sys.prefix)
    add(os.path.realpath(sys.prefix))
    add(os.path.dirname(sys.executable))
    for home in homes:
        for rel in HOME_TOOLCHAINS:
            add(os.path.join(home, rel))
    candidates = [e for e in environ.get("PATH", "").split(os.pathsep) if os.path.isabs(e)]
    candidates += [environ.get(n, "") for n in TOOLCHAIN_VARIABLES]
    for entry in candidates:
        if os.path.isabs(entry):
            add(entry)
            add(os.path.realpath(entry))
    for link in ETC_LINKS:
        if os.path.islink(link):
            add(os.path.realpath(link), directory=False)
    for path in readable:
        if os.path.isabs(path):
            add(str(path), directory=False)
            add(os.path.realpath(path), directory=False)
    # A toolchain inside another one is mounted with it.
    return [Path(p) for p in found if not any(p != q and _under(p, (q,)) for q in found)]


def _under(path: str, places: Iterable[str]) -> bool:
    return any(path == place or path.startswith(place.rstrip("/") + "/") for place in places)


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
    """What stays read-only when the root is written in place: its git directories and the
    protected places at its top that exist. A symlink is never followed: its target could
    be anywhere (`.vscode -> ~/.ssh`), and mounting it would show it."""
    paths = git_dirs(root)
    try:
        names = sorted(os.listdir(root))
    except OSError:
        names = []
    for name in names:
        path = root / name
        if name != ".git" and name in PROTECTED_NAMES and not path.is_symlink():
            paths.append(path)
    return paths
