"""Every test of the red-team suite carries the `redteam` marker (`pytest -m redteam`); each
gets a victim (a HOME of its own in the test's temp directory).

The suite runs twice in CI: as root, and as a user who is not root (`.ci/redteam-user`, with
SMOL_REDTEAM_UNPRIVILEGED=1), the way a real user meets it. In that run a skip is a failure:
an attack that did not run there was not refuted there (test_run_path.py checks the run is on
the path it claims).
"""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

from .harness import Elsewhere, Victim

HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(item.fspath).parents:
            item.add_marker(pytest.mark.redteam)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item) -> Generator[None, Any, None]:
    """In the unprivileged run, a test that skipped (not one expected to fail) failed."""
    outcome = yield
    report = outcome.get_result()
    if (
        os.environ.get("SMOL_REDTEAM_UNPRIVILEGED")
        and HERE in Path(item.fspath).parents
        and report.skipped
        and not hasattr(report, "wasxfail")
    ):
        report.outcome = "failed"
        report.longrepr = (
            f"skipped in the unprivileged run (SMOL_REDTEAM_UNPRIVILEGED): {report.longrepr}"
        )


@pytest.fixture
def victim(tmp_path: Path) -> Victim:
    return Victim.create(tmp_path / "home")


@pytest.fixture
def elsewhere() -> Iterator[Elsewhere]:
    """Another project on the machine, outside the home (under /var/tmp)."""
    with Elsewhere.create() as place:
        yield place
