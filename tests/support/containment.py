"""Helpers for containment tests: bubblewrap or a clear skip, places outside every mask.

`require_bwrap()` skips with the reason and the fix when commands cannot be contained here,
except under CI (the `CI` variable set), where that is a failure: CI installs bubblewrap
(`.ci/setup`) and must run the contained path for real.

`outside_dir()` is a fresh directory outside the repository, the private /tmp and the homes:
under /var/tmp, which a contained command does not see at all (only the system's places and
the repository are there), while the test and an uncontained control can.
`planted_home()` is a home directory in it with an SSH key and a shell rc file.
`nobody_dir()` and `as_nobody()` run a script as another user than root (uid 65534), where
the tests run as root: what anyone but root gets (overlay.py, userns.py).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from smol_instruments.base.containment import probe

VISIBLE_SCRATCH = Path("/var/tmp")


def require_bwrap() -> None:
    availability = probe()
    if not availability.works:
        reason = f"command containment unavailable: {availability.line()}"
        if os.environ.get("CI"):
            pytest.fail(f"{reason} (CI is set: .ci/setup installs bubblewrap)")
        pytest.skip(reason)


@contextmanager
def outside_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="smol-outside-", dir=VISIBLE_SCRATCH)).resolve()
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def planted_home(outside: Path, secret: str, rc: str = "# rc\n") -> Path:
    """`outside`/home with `.ssh/id_ed25519` holding `secret` and a `.bashrc` holding `rc`."""
    home = outside / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text(f"PRIVATE KEY {secret}\n")
    (home / ".bashrc").write_text(rc)
    return home


SYSTEM_PYTHON = Path("/usr/bin/python3")
SERVER = Path(__file__).resolve().parents[2] / "server"
NOBODY = 65534


@contextmanager
def nobody_dir() -> Iterator[Path]:
    """A directory of nobody's (with `repo/a.txt`) reachable by nobody (not pytest's
    tmp_path, which is root's alone); skips where no other user can be become."""
    if os.geteuid() != 0:
        pytest.skip("needs root to become another user")
    if not SYSTEM_PYTHON.exists() or not shutil.which("setpriv"):
        pytest.skip("needs /usr/bin/python3 and setpriv")
    nobody = Path(tempfile.mkdtemp(prefix="smol-nobody-")).resolve()
    (nobody / "repo").mkdir(parents=True)
    (nobody / "repo" / "a.txt").write_text("original\n")
    for path in (nobody, nobody / "repo", nobody / "repo" / "a.txt"):
        os.chown(path, NOBODY, NOBODY)
    try:
        yield nobody
    finally:
        shutil.rmtree(nobody, ignore_errors=True)


def as_nobody(
    script: str,
    nobody: Path,
    *,
    python: Path = SYSTEM_PYTHON,
    groups: tuple[int, ...] = (),
    env: dict[str, str] | None = None,
    **popen: Any,
) -> subprocess.Popen[str]:
    """`script` run by `python` as nobody (uid and gid 65534, only `groups` besides), our
    server package importable, HOME and TMPDIR `nobody` (and `env`), the repository its
    one argument."""
    group_option = f"--groups={','.join(map(str, groups))}" if groups else "--clear-groups"
    return subprocess.Popen(
        [
            "setpriv",
            f"--reuid={NOBODY}",
            f"--regid={NOBODY}",
            group_option,
            str(python),
            "-I",
            "-c",
            f"import sys; sys.path.insert(0, {str(SERVER)!r})\n" + script,
            str(nobody / "repo"),
        ],
        env={"PATH": "/usr/bin:/bin", "HOME": str(nobody), "TMPDIR": str(nobody), **(env or {})},
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        **popen,
    )


def finished_as_nobody(
    script: str, nobody: Path, **options: Any
) -> subprocess.CompletedProcess[str]:
    """`as_nobody`, run to its end; skips where nobody cannot read our package."""
    process = as_nobody(script, nobody, **options)
    stdout, stderr = process.communicate(timeout=300)
    if "ModuleNotFoundError" in stderr or "Permission denied: '/" in stderr:
        pytest.skip(f"the package is not readable by another user here: {stderr[-200:]}")
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
