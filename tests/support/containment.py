"""Helpers for containment tests: bubblewrap or a clear skip, places outside every mask.

`require_bwrap()` skips with the reason and the fix when commands cannot be contained here,
except under CI (the `CI` variable set), where that is a failure: CI installs bubblewrap
(`.ci/setup`) and must run the contained path for real.

`outside_dir()` is a fresh directory that a contained command *can see* (read-only): not
under /tmp (private inside) and not under a home (hidden inside), so a write there that
does not happen shows the read-only mount at work, not a mask.
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
