"""The local backend: each patch is applied to a throwaway copy of the repository on the host.

The copy holds the tracked and untracked-not-ignored files as they are on disk now (so a patch
made against unsaved-then-saved edits applies), lives in a temporary directory, and is removed
afterwards. The user's working tree and `.git` are only read. There is no isolation: the
checks run on the host as the user, with the network; use the Docker backend for that.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from ..base.config import Settings
from ..base.git import workspace_files
from ..patches.diff import changed_python_files
from ..patches.validation import CheckResult, Validation
from .checks import check_result, syntax_command


def copy_workspace(root: Path, target: Path) -> int:
    """Copy what a validation needs from `root` into `target`; the number of entries copied.

    Symbolic links stay links; an absolute one into the repository is pointed at the copy,
    so a check writing through it cannot reach the user's files.
    """
    root = root.resolve()
    target.mkdir(parents=True, exist_ok=True)
    count = 0
    for name in workspace_files(root):
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
        count += 1
    return count


def _python() -> str:
    return shutil.which("python3") or sys.executable


class LocalSandbox:
    """Validates patches in a temporary copy on the host (no isolation, no container)."""

    name = "local"

    def __init__(self, settings: Settings, repo_root: Path) -> None:
        self.settings = settings
        self.repo_root = Path(repo_root).resolve()
        self.timeout_s = settings.sandbox_timeout_s

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
        from ..base.process import child_env, run_process

        tree = scratch / "tree"
        copy_workspace(self.repo_root, tree)
        patch_file = scratch / "patch.diff"
        patch_file.write_text(diff, encoding="utf-8", errors="surrogateescape")
        # Git must not find a repository above the copy (a temp dir inside a checkout).
        env = child_env({"GIT_CEILING_DIRECTORIES": str(scratch)})
        env.pop("GIT_DIR", None)
        env.pop("GIT_WORK_TREE", None)

        def run(argv: list[str]) -> tuple[int | None, str, int, bool]:
            result = run_process(argv, cwd=tree, timeout=self.timeout_s, env=env)
            return (
                result.exit_code,
                result.stdout + result.stderr,
                result.duration_ms,
                result.timed_out,
            )

        for argv in (
            ["git", "apply", "--check", str(patch_file)],
            ["git", "apply", str(patch_file)],
        ):
            code, output, _, _ = run(argv)
            if code != 0:
                message = output.strip() or f"{' '.join(argv[:3])} failed"
                return Validation(backend=self.name, applies=False, checks=[], message=message)

        results: list[CheckResult] = []
        max_chars = self.settings.truncation_max_chars
        pyfiles = changed_python_files(diff)
        planned = (
            [(syntax_command(pyfiles), [_python(), "-m", "py_compile", *pyfiles])]
            if pyfiles
            else []
        )
        planned += [(command, ["sh", "-c", command]) for command in commands]
        for command, argv in planned:
            code, output, duration_ms, timed_out = run(argv)
            results.append(
                check_result(
                    command,
                    code,
                    output,
                    duration_ms,
                    timed_out=timed_out,
                    timeout_s=self.timeout_s,
                    max_chars=max_chars,
                )
            )
        return Validation(backend=self.name, applies=True, checks=results)

    def close(self) -> None:
        return None
