"""Helpers for containment tests: bubblewrap or a clear skip, places outside every mask.

`require_bwrap()` skips with the reason and the fix when commands cannot be contained here,
except under CI (the `CI` variable set), where that is a failure: CI installs bubblewrap
(`.ci/setup`) and must run the contained path for real.

`outside_dir()` is a fresh directory outside the repository, the private /tmp and the homes:
under /var/tmp, which a contained command does not see at all (only the system's places and
the repository are there), while the test and an uncontained control can.
`planted_home()` is a home directory in it with an SSH key and a shell rc file.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

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
