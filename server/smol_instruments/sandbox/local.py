"""The local backend: each patch is checked in a copy-on-write view of the repository.

No copy is made on the host. A validation mounts a fresh view of the repository as it is on
disk now (base/overlay.py: tracked, untracked and ignored files alike, uncommitted edits
included; `.git` readable) and runs, each contained (base/containment.py: no network, an
empty home, only the system and the repository to read), all inside that one view:

1. `git apply -` of the diff, through the hardened git runner, outside any repository;
2. the syntax check, `python3 -I -m py_compile`, started from `/` (so a `py_compile.py` the
   repository or the patch ships is never imported);
3. the check commands, at the repository's root.

What they write stays in the view, which is thrown away; nothing of ours reads or writes
where a check could have written (the patched test files a comparison needs are read from
the view right after `git apply`, before any check ran). With COMMAND_CONTAINMENT=off the
three run uncontained, as the user chose, but still in a view. Where commands cannot be
contained (no sandbox, no overlayfs) the patch is only checked to apply (`git apply --check`
on the repository, which writes nothing) and the validation says why.

A check that fails is run again in another fresh view without the patch (once per state of
the repository's files, by a fingerprint read without following links): when it fails there
the same way, the result says so (`fails_without_patch`), so a project whose tests already
fail does not fail every proposal.
"""

from __future__ import annotations

import hashlib
import shutil
import stat
import sys
import time
from pathlib import Path

from ..base.beneath import Beneath, Refused
from ..base.config import Settings
from ..base.containment import Containment, availability_for, read_paths
from ..base.git import GitUnavailable, apply_diff, workspace_files
from ..base.overlay import FAILURE, View, ViewError
from ..base.process import ProcessResult, child_env, run_process
from ..patches.diff import changed_files, changed_python_files
from ..patches.model import MAX_PATCH_CHARS
from ..patches.validation import CheckResult, Validation
from .checks import check_result, compared_with_unpatched, syntax_command

#: Runs of a check on the unpatched repository remembered (one per command and tree state).
UNPATCHED_KEPT = 8


def fingerprint(root: Path, names: list[str]) -> str:
    """What the repository's files are (name, type, size, modification time), each read
    without following a link: equal fingerprints, equal trees, as far as a check can tell."""
    digest = hashlib.sha256()
    with Beneath(root) as tree:
        for name in sorted(names):
            try:
                st = tree.lstat(name)
            except (OSError, Refused):
                digest.update(f"{name}\0-\0".encode())
                continue
            kind = stat.S_IFMT(st.st_mode)
            digest.update(f"{name}\0{kind}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    return digest.hexdigest()


def _python() -> str:
    return shutil.which("python3") or sys.executable


class LocalSandbox:
    """Validates patches in copy-on-write views of the repository, contained."""

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
        commands = [command for command in commands if command.strip()]
        mode = self.settings.command_containment
        availability = availability_for(self.repo_root, mode)
        if availability.works or mode == "off":
            try:
                with View.create(self.repo_root) as view:
                    validation = self._validate_in(view, diff, commands)
            except ViewError as exc:
                validation = self._applies(diff, f"no copy-on-write view: {exc}")
        else:
            validation = self._applies(diff, f"no sandbox for commands: {availability.line()}")
        validation.duration_ms = int((time.monotonic() - started) * 1000)
        return validation

    def _applies(self, diff: str, why: str) -> Validation:
        """Whether the patch applies, said by `git apply --check` on the repository."""
        applied = self._git_apply(diff, "--check", view=None)
        if isinstance(applied, Validation):
            return applied
        return Validation(
            backend=self.name,
            applies=True,
            message=f"only checked to apply (no syntax check, no check command): {why}",
        )

    def _git_apply(self, diff: str, *flags: str, view: View | None) -> Validation | None:
        try:
            applied = apply_diff(
                self.repo_root,
                diff,
                *flags,
                mode=self.settings.command_containment,
                view=view,
                timeout=self.timeout_s,
            )
        except GitUnavailable as exc:
            return Validation(backend=self.name, applies=False, message=str(exc))
        if applied.exit_code != 0:
            message = (applied.stdout + applied.stderr).strip() or "git apply failed"
            return Validation(backend=self.name, applies=False, checks=[], message=message)
        return None

    def _validate_in(self, view: View, diff: str, commands: list[str]) -> Validation:
        refused = self._git_apply(diff, view=view)
        if refused is not None and (refused.message or "").startswith(FAILURE):
            return self._applies(diff, refused.message or "")  # the view, not the patch
        if refused is not None:
            return refused
        root = self.repo_root
        pyfiles = changed_python_files(diff)
        # What the patch made of its files, read before any check could write there.
        with Beneath(view.upper) as upper:
            patched = {
                path: upper.read_prefix(path, MAX_PATCH_CHARS) for path in changed_files(diff)
            }

        def read(path: str) -> str | None:
            data = patched[path] if path in patched else self._read_repository(path)
            return None if data is None else data.decode("utf-8", errors="replace")

        results: list[CheckResult] = []
        if pyfiles:
            # Isolated (-I) and started from `/`: the patch cannot shadow py_compile.
            argv = [_python(), "-I", "-m", "py_compile", *(str(root / f) for f in pyfiles)]
            results.append(self._check(syntax_command(pyfiles), argv, view, cwd=Path("/")))
        for command in commands:
            result = self._check(command, ["sh", "-c", command], view)
            results.append(
                compared_with_unpatched(result, self._run_unpatched, read=read, changed=pyfiles)
            )
        return Validation(backend=self.name, applies=True, checks=results)

    def _read_repository(self, path: str) -> bytes | None:
        with Beneath(self.repo_root) as tree:
            return tree.read_prefix(path, MAX_PATCH_CHARS)

    def _run_unpatched(self, command: str) -> CheckResult:
        """`command` in a fresh view of the repository as it is, without the patch
        (remembered for as long as the repository's files stay the same)."""
        mode = self.settings.command_containment
        key = (command, fingerprint(self.repo_root, workspace_files(self.repo_root, mode=mode)))
        if key not in self._unpatched:
            with View.create(self.repo_root) as view:
                result = self._check(command, ["sh", "-c", command], view)
            if len(self._unpatched) >= UNPATCHED_KEPT:
                self._unpatched.pop(next(iter(self._unpatched)))
            self._unpatched[key] = result
        return self._unpatched[key]

    def _check(
        self, command: str, argv: list[str], view: View, *, cwd: Path | None = None
    ) -> CheckResult:
        contain = None
        if self.settings.command_containment != "off":
            contain = Containment(
                self.repo_root, view=view, readable=read_paths(self.settings.command_read_paths)
            )
        result: ProcessResult = run_process(
            argv,
            cwd=cwd or self.repo_root,
            timeout=self.timeout_s,
            env={k: v for k, v in child_env().items() if k not in ("GIT_DIR", "GIT_WORK_TREE")},
            contain=contain,
            view=view if contain is None else None,
        )
        return check_result(
            command,
            result.exit_code,
            result.stdout + result.stderr,
            result.duration_ms,
            timed_out=result.timed_out,
            timeout_s=self.timeout_s,
            max_chars=self.settings.truncation_max_chars,
        )

    def close(self) -> None:
        return None
