"""Every test of the red-team suite carries the `redteam` marker (`pytest -m redteam`); each
gets a victim (a HOME of its own in the test's temp directory)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .harness import Elsewhere, Victim

HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(item.fspath).parents:
            item.add_marker(pytest.mark.redteam)


@pytest.fixture
def victim(tmp_path: Path) -> Victim:
    return Victim.create(tmp_path / "home")


@pytest.fixture
def elsewhere() -> Iterator[Elsewhere]:
    """Another project on the machine, outside the home (under /var/tmp)."""
    with Elsewhere.create() as place:
        yield place
