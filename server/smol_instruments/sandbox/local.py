"""The local backend: each patch is applied to a throwaway copy of the repository on the host.

The copy holds the tracked and untracked-not-ignored files as they are on disk now (so a patch
made against unsaved-then-saved edits applies), lives in a temporary directory, and is removed
afterwards. The user's working tree and `.git` are only read.

Nothing here runs what the repository or the patch says on the host: `git apply` goes
through the hardened git runner; the syntax check is `python3 -I -m py_compile` started
from outside the patched tree (so a `py_compile.py` the repository or the patch ships is
never imported); the check command runs contained (base/containment.py: the copy writable,
no network, an empty home). Where commands cannot be contained, the check command is not
run and the validation says why.

A check that fails is run again on a copy without the patch (once per state of the
repository's files): when it fails there the same way, the result says so
(`fails_without_patch`), so a project whose tests already fail does not fail every proposal.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from ..base.config import Settings
from ..base.containment import Containment, Mode, availability_for
from ..base.git import GitUnavailable, run_git, workspace_files
from ..base.process import ProcessResult, child_env, run_process
from ..patches.diff import changed_python_files
from ..patches.validation import CheckResult, Validation
from .checks import check_result, compared_with_unpatched, syntax_command

#: Runs of a check on the unpatched repository remembered (one per command and tree state).
UNPATCHED_KEPT = 8


def copy_workspace(root: Path, target: Path, *, mode: Mode = "auto") -> list[str]:
    """Copy what a validation needs from `root` into `target`; the names copied.

    Symbolic links stay links; an absolute one into the repository is pointed at the copy,
    so a check writing through it cannot reach the user's files.
    """
    root = root.resolve()
    target.mkdir(parents=True, exist_ok=True)
    copied = []
    for name in workspace_files(root, mode=mode):
        source, destination = root / name, target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            link = os.readlink(source)
            if os.path.isabs(link) and Path(link).is_relative_to(root):
                link = str(target / Path(link).relative_to(root))
            os.symlink(link, destination)
        elif source.is_dir():  # a submodule or an untracked nested repository
            shutil.copytree(source, destination, symlinks=True, dirs_exist_ok=True)
        else:
            try:
                shutil.copy2(source, destination)
            except (PermissionError, FileNotFoundError):
                continue
        copied.append(name)
    return copied


def _fingerprint(tree: Path, names: list[str]) -> str:
    """What the copied files are (name, size, modification time): equal fingerprints, equal
    trees, as far as a check can tell."""
    digest = hashlib.sha256()
    for name in sorted(names):
        try:
            stat = (tree / name).lstat()
        except OSError:
            continue
        digest.update(f"{name}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
    return digest.hexdigest()


def _python() -> str:
    return shutil.which("python3") or sys.executable


class LocalSandbox:
    """Validates patches in a temporary copy on the host (no isolation, no container)."""

    name = "local"

    def __init__(self, settings: Settings, repo_root: Path) -> None:
        self.settings = settings
        self.repo_root = Path(repo_root).resolve()
        self.timeout_s = settings.sandbox_timeout_s
        #: Check commands run on the repository without any patch, by (command, fingerprint):
        #: a failing check is compared with them (a project whose tests already fail).
        self._unpatched: dict[tuple[str, str], CheckResult] = {}

    def validate(self, diff: str, checks: list[str] | None = None) -> Validation:
        started = time.monotonic()
        commands = list(checks) if checks is not None else []
        if checks is None and self.settings.sandbox_check_command:
            commands = [self.settings.sandbox_check_command]
        with tempfile.TemporaryDirectory(prefix="smol-sandbox-") as scratch:
            validation = self._validate_in(
                Path(scratch), diff, [command for command in commands if command.strip()]
            )
        validation.duration_ms = int((time.monotonic() - started) * 1000)
        return validation

    def _validate_in(self, scratch: Path, diff: str, commands: list[str]) -> Validation:
        mode = self.settings.command_containment
        tree = scratch / "tree"
        names = copy_workspace(self.repo_root, tree, mode=mode)
        fingerprint = _fingerprint(tree, names)
        for args in (("apply", "--check", "-"), ("apply", "-")):
            try:
                applied = run_git(
                    tree,
                    *args,
                    mode=mode,
                    repository=False,
                    timeout=self.timeout_s,
                    stdin_text=diff,
                )
            except GitUnavailable as exc:
                return Validation(backend=self.name, applies=False, message=str(exc))
            if applied.exit_code != 0:
                message = (applied.stdout + applied.stderr).strip() or f"git {args[0]} failed"
                return Validation(backend=self.name, applies=False, checks=[], message=message)

        availability = availability_for(scratch, mode)
        contain = Containment(scratch) if availability.works else None
        note = None
        if commands and contain is None and mode != "off":
            note = (
                f"check command not run: no sandbox for commands ({availability.line()}); "
                "it would run the patched code on this machine"
            )
            commands = []
        results: list[CheckResult] = []
        pyfiles = changed_python_files(diff)
        if pyfiles:
            # Isolated (-I) and started outside the tree: the patch cannot shadow py_compile.
            argv = [_python(), "-I", "-m", "py_compile", *(str(tree / f) for f in pyfiles)]
            results.append(self._check(syntax_command(pyfiles), argv, scratch, tree, contain))
        for command in commands:
            result = self._check(command, ["sh", "-c", command], tree, tree, contain)
            results.append(
                compared_with_unpatched(
                    result,
                    lambda c: self._run_unpatched(c, scratch, fingerprint, contain),
                    tree=tree,
                    changed=pyfiles,
                )
            )
        return Validation(backend=self.name, applies=True, checks=results, message=note)

    def _run_unpatched(
        self, command: str, scratch: Path, fingerprint: str, contain: Containment | None
    ) -> CheckResult:
        """`command` on a copy of the repository as it is, without the patch (remembered for
        as long as the repository's files stay the same)."""
        key = (command, fingerprint)
        if key not in self._unpatched:
            before = scratch / "unpatched"
            copy_workspace(self.repo_root, before, mode=self.settings.command_containment)
            result = self._check(command, ["sh", "-c", command], before, before, contain)
            if len(self._unpatched) >= UNPATCHED_KEPT:
                self._unpatched.pop(next(iter(self._unpatched)))
            self._unpatched[key] = result
        return self._unpatched[key]

    def _check(
        self,
        command: str,
        argv: list[str],
        cwd: Path,
        tree: Path,
        contain: Containment | None,
    ) -> CheckResult:
        result: ProcessResult = run_process(
            argv,
            cwd=cwd,
            timeout=self.timeout_s,
            env={k: v for k, v in child_env().items() if k not in ("GIT_DIR", "GIT_WORK_TREE")},
            # Git inside a check must not find a repository above the copy.
            extra_env={"GIT_CEILING_DIRECTORIES": str(tree.parent)},
            contain=contain,
        )
        return check_result(
            command,
            result.exit_code,
            (result.stdout + result.stderr).replace(str(tree) + os.sep, ""),
            result.duration_ms,
            timed_out=result.timed_out,
            timeout_s=self.timeout_s,
            max_chars=self.settings.truncation_max_chars,
        )

    def close(self) -> None:
        return None
