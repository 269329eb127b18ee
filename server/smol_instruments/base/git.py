"""THE git runner, the repository's root and its file list.

A repository is data, never code. Every git process of ours goes through `run_git`, which
ignores whatever the repository configures to execute:

- `core.fsmonitor`, hooks (`core.hooksPath=/dev/null`), the pager (`--no-pager`), signature
  programs (`log.showSignature=false`), transports (`protocol.allow=never`), submodules
  (`submodule.recurse=false`, `--ignore-submodules=all`, no summaries), auto-gc;
- every filter driver's `clean`, `smudge` and `process` command: their names are read with
  `git config` (which executes nothing) inside the same process and each is overridden
  with an empty value and `required=false` (git 2.39 has no `--attr-source` to drop the
  attributes that select them);
- textconv and external diff drivers (`--no-textconv`, `--no-ext-diff` on diff, log, show);
- `core.worktree` and the repository's location: GIT_DIR and GIT_WORK_TREE are set from
  the root we found ourselves; every `GIT_*` variable of the outside environment is dropped.

Overrides travel as GIT_CONFIG_COUNT/KEY/VALUE, which git applies above every config file
and which cannot be misparsed whatever a driver's name holds. git itself runs inside the
containment (base/containment.py) with the repository read-only, unless containment is off.

The repository's root is found in Python (the nearest directory holding `.git`), never by
asking git, whose answer a repository's `core.worktree` would decide.
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Mapping
from pathlib import Path

from .containment import Containment, Mode, availability_for
from .filesystem import git_dirs
from .overlay import View
from .process import ProcessRegistry, ProcessResult, child_env, run_process

GIT_TIMEOUT_S = 20.0

#: What GIT_DIR names when git must work outside any repository.
NO_GIT_DIR = "/nonexistent/smol-instruments-no-repository"

#: Config set on every git call, above every file (name, value).
HARDENED_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("core.quotepath", "off"),
    ("color.ui", "false"),
    ("log.showSignature", "false"),
    ("protocol.allow", "never"),
    ("submodule.recurse", "false"),
    ("diff.ignoreSubmodules", "all"),
    ("status.submoduleSummary", "false"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
)

#: Flags that switch off what a subcommand would run on the repository's say.
SUBCOMMAND_FLAGS: Mapping[str, tuple[str, ...]] = {
    "diff": ("--no-ext-diff", "--no-textconv", "--ignore-submodules=all"),
    "log": ("--no-ext-diff", "--no-textconv", "--no-show-signature"),
    "show": ("--no-ext-diff", "--no-textconv", "--no-show-signature"),
    "status": ("--ignore-submodules=all",),
}

# Reads the filter drivers' names, neutralises each, then runs git; "$@" is git's argv.
_DRIVER = r"""
set -f
IFS='
'
i=$GIT_CONFIG_COUNT
for key in $(git config --name-only --get-regexp '^filter\..+\.(clean|smudge|process)$'); do
  export "GIT_CONFIG_KEY_$i=$key" "GIT_CONFIG_VALUE_$i="
  export "GIT_CONFIG_KEY_$((i + 1))=${key%.*}.required" "GIT_CONFIG_VALUE_$((i + 1))=false"
  i=$((i + 2))
done
export GIT_CONFIG_COUNT=$i
exec git --no-pager "$@"
"""


class GitUnavailable(RuntimeError):
    """git cannot be run here: not installed, or containment is required and impossible."""


class NotARepository(RuntimeError):
    """The directory is not a git work tree we can trust (or not one at all)."""


def find_repo_root(start: Path) -> Path:
    """The nearest directory at or above `start` holding `.git`, or `start` itself."""
    start = start.resolve()
    for directory in (start, *start.parents):
        if os.path.lexists(directory / ".git"):
            return directory
    return start


def git_dir(root: Path) -> Path | None:
    """The repository's git directory: `.git`, or what a `.git` file names when that
    directory belongs to this root (see containment.git_dirs); None otherwise."""
    dirs = git_dirs(root)
    if not dirs:
        return None
    if dirs[0].is_dir():
        return dirs[0]
    return dirs[1] if len(dirs) > 1 else None


def git_settings(root: Path | None) -> dict[str, str]:
    """The GIT_* variables every call sets: where the repository is and the overrides."""
    settings = {
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_OPTIONAL_LOCKS": "0",
        "GIT_PAGER": "cat",
        "LC_ALL": "C",
    }
    config = list(HARDENED_CONFIG)
    if root is None:
        # Outside any repository: git must find none, not even the directory it runs in
        # (a view of a repository): a git directory that does not exist is no repository.
        settings["GIT_CEILING_DIRECTORIES"] = "/"
        settings["GIT_DIR"] = NO_GIT_DIR
    else:
        gdir = git_dir(root)
        if gdir is None:
            raise NotARepository(f"{root} is not a git repository")
        settings.update(GIT_DIR=str(gdir), GIT_WORK_TREE=str(root))
        config.append(("safe.directory", str(root)))
    settings["GIT_CONFIG_COUNT"] = str(len(config))
    for index, (key, value) in enumerate(config):
        settings[f"GIT_CONFIG_KEY_{index}"] = key
        settings[f"GIT_CONFIG_VALUE_{index}"] = value
    return settings


def git_argv(*args: str) -> list[str]:
    """The command line that runs `git ARGS` hardened (a shell reads the driver names)."""
    if args and args[0] in SUBCOMMAND_FLAGS:
        args = (args[0], *SUBCOMMAND_FLAGS[args[0]], *args[1:])
    return ["sh", "-c", _DRIVER, "git", *args]


def run_git(
    root: Path,
    *args: str,
    mode: Mode = "auto",
    repository: bool = True,
    view: View | None = None,
    timeout: float = GIT_TIMEOUT_S,
    cancel: threading.Event | None = None,
    registry: ProcessRegistry | None = None,
    stdin_text: str | None = None,
) -> ProcessResult:
    """Run `git ARGS` on the repository at `root`, hardened and contained.

    `repository=False` runs in `root` as a plain directory, finding no repository there or
    above (git apply in a view, git config --global). Contained with the repository
    read-only, or writing to `view` (overlay.py) when one is given; where containment is
    impossible, `auto` runs git hardened but uncontained and `required` raises GitUnavailable
    (so does `auto` with a `view`: then a view is not to be had either). With
    COMMAND_CONTAINMENT=off git runs uncontained, in the `view` when one is given.
    """
    if shutil.which("git") is None:
        raise GitUnavailable("git is not installed")
    root = root.resolve()
    contain = None
    if mode != "off":
        availability = availability_for(root, mode, view=view is not None)
        if availability.works:
            contain = Containment(root, view=view)
        elif mode == "required" or view is not None:
            raise GitUnavailable(f"git cannot run contained: {availability.line()}")
    settings = git_settings(root if repository else None)
    return run_process(
        git_argv(*args),
        cwd=root,
        timeout=timeout,
        env=None if contain is not None else child_env("tool"),
        extra_env=settings,
        contain=contain,
        view=view if contain is None else None,
        cancel=cancel,
        registry=registry,
        stdin_text=stdin_text,
    )


def apply_diff(
    root: Path,
    diff: str,
    *flags: str,
    mode: Mode = "auto",
    view: View | None = None,
    timeout: float = GIT_TIMEOUT_S,
) -> ProcessResult:
    """`git apply FLAGS -` with `diff` on stdin, in `root` as a plain directory (no repository
    found there or above), writing into `view` when one is given (`--check` writes nothing)."""
    return run_git(
        root,
        "apply",
        *flags,
        "-",
        mode=mode,
        repository=False,
        view=view,
        timeout=timeout,
        stdin_text=diff,
    )


def ignored_paths(root: Path, paths: list[str], *, mode: Mode = "auto") -> set[str]:
    """Which of `paths` (relative; a directory as "dir/") git ignores in the repository at
    `root`. A tracked file is never ignored. Empty outside a repository, and when git cannot
    say (a path beyond a symbolic link or in a submodule stops `check-ignore` altogether)."""
    if not paths:
        return set()
    try:
        result = run_git(
            root,
            "check-ignore",
            "-z",
            "--stdin",
            mode=mode,
            timeout=60,
            stdin_text="".join(f"{path}\0" for path in paths),
        )
    except (GitUnavailable, NotARepository):
        return set()
    if result.exit_code not in (0, 1):
        return set()
    return {path for path in result.stdout.split("\0") if path}


def user_identity() -> dict[str, str]:
    """The user's own git identity (their global config), as the variables git reads it from.

    A contained command sees an empty home, so a `git commit` the user approved would not
    find `~/.gitconfig`; only the name and email are passed in, nothing else from it.
    """
    identity: dict[str, str] = {}
    for key, names in (
        ("user.name", ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME")),
        ("user.email", ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL")),
    ):
        try:  # the user's own config, read outside any repository: nothing to contain
            result = run_git(
                Path("/"), "config", "--global", "--get", key, repository=False, mode="off"
            )
        except GitUnavailable:
            return {}
        value = result.stdout.strip()
        if result.exit_code == 0 and value:
            identity.update(dict.fromkeys(names, value))
    return identity


def workspace_files(root: Path, *, mode: Mode = "auto") -> list[str]:
    """What a validation copies: tracked and untracked-not-ignored files (all but .git outside git).

    Ignored files (virtualenvs, node_modules, build output) are left out, so a copy of a
    small repository stays small; files deleted from the working tree are skipped.
    """
    try:
        result = run_git(
            root,
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
            mode=mode,
            timeout=60,
        )
    except (GitUnavailable, NotARepository):
        result = None
    if result is not None and result.exit_code == 0:
        names = dict.fromkeys(name.rstrip("/") for name in result.stdout.split("\0") if name)
        return [name for name in names if os.path.lexists(root / name)]
    files: list[str] = []
    for directory, subdirs, filenames in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if d != ".git")
        rel = Path(directory).relative_to(root)
        files += [str(rel / name) if str(rel) != "." else name for name in sorted(filenames)]
    return files
