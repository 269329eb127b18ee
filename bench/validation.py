"""Figures for the local validation: a patch checked in copy-on-write views, against the
host-side copy it replaced, side by side in the same run.

The baseline is the previous local backend, kept here only to be measured: copy the tracked
and untracked files with host-side Python into a scratch folder, `git apply --check` and
`git apply` there, the syntax check, the check command, each contained with the scratch
folder writable in place. It is unsafe (a check may leave links where the copy is written
next) and lives nowhere in the product. The new one is `LocalSandbox.validate`: one view, no
copy. Both on the sample project, with and without the project's tests as the check.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from .figures import Figure, _median_alternating, _sample_repo


def _copy_workspace(root: Path, target: Path) -> None:
    """The copy as the previous backend made it (sandbox/local.py before the views)."""
    from smol_instruments.base.git import workspace_files

    for name in workspace_files(root):
        source, destination = root / name, target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            os.symlink(os.readlink(source), destination)
        elif source.is_file():
            shutil.copy2(source, destination)


def _copied_validation(repo: Path, diff: str, checks: list[str]) -> bool:
    """The previous local validation: host-side copy, then each step contained in place."""
    from smol_instruments.base.containment import Containment
    from smol_instruments.base.git import git_argv, git_settings
    from smol_instruments.base.process import run_process
    from smol_instruments.patches.diff import changed_python_files
    from smol_instruments.sandbox.local import _python

    with tempfile.TemporaryDirectory(prefix="smol-sandbox-") as scratch:
        tree = Path(scratch) / "tree"
        tree.mkdir()
        _copy_workspace(repo, tree)
        contain = Containment(Path(scratch), direct=True)
        for args in (("apply", "--check", "-"), ("apply", "-")):
            applied = run_process(
                git_argv(*args),
                cwd=tree,
                timeout=60,
                extra_env=git_settings(None),
                contain=contain,
                stdin_text=diff,
            )
            if applied.exit_code != 0:
                raise RuntimeError(applied.stderr)
        files = [str(tree / f) for f in changed_python_files(diff)]
        ok = run_process(
            [_python(), "-I", "-m", "py_compile", *files],
            cwd=Path(scratch),
            timeout=60,
            contain=contain,
        )
        passed = ok.exit_code == 0
        for command in checks:
            result = run_process(["sh", "-c", command], cwd=tree, timeout=120, contain=contain)
            passed = passed and result.exit_code == 0
        return passed


def validation_overhead(quick: bool = False) -> list[Figure]:
    from smol_instruments.base.config import load_settings
    from smol_instruments.base.containment import availability_for
    from smol_instruments.patches.diff import unified_diff
    from smol_instruments.sandbox.local import LocalSandbox

    figures = []
    with tempfile.TemporaryDirectory(prefix="smol-bench-validation-") as tmp:
        repo = _sample_repo(Path(tmp) / "repo")
        availability = availability_for(repo)
        if not availability.works:
            raise RuntimeError(availability.line())
        text = (repo / "app/calc.py").read_text()
        diff = unified_diff("app/calc.py", text, text.replace("return a - b", "return a + b"))
        tests = f"{sys.executable} -m pytest -q -p no:cacheprovider"
        settings = load_settings(None, sandbox_backend="local", phoenix_enabled=False)
        sandbox = LocalSandbox(settings, repo)
        for key, checks, rounds in (
            ("validation_syntax", [], 3 if quick else 20),
            ("validation_tests", [tests], 2 if quick else 10),
        ):

            def viewed(checks: list[str] = checks) -> float:
                start = time.perf_counter()
                validation = sandbox.validate(diff, checks)
                if not validation.passed:
                    raise RuntimeError(f"the view validation failed: {validation.to_dict()}")
                return time.perf_counter() - start

            def copied(checks: list[str] = checks) -> float:
                start = time.perf_counter()
                if not _copied_validation(repo, diff, checks):
                    raise RuntimeError("the copy validation failed")
                return time.perf_counter() - start

            value, baseline = _median_alternating(viewed, copied, rounds)
            what = "the syntax check" if not checks else "the syntax check and the tests"
            figures.append(
                Figure(
                    key,
                    f"local validation in a view vs the host-side copy it replaced ({what})",
                    value * 1000,
                    "ms",
                    baseline * 1000,
                    1.1,
                    "ratio",
                    note=f"{1000 * (value - baseline):+.0f} ms a validation; {availability.detail}",
                )
            )
    return figures
