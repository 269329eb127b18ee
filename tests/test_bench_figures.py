"""The benchmark's figures that need no timing measure at all on the code as it is.

The benchmark's smoke run in CI fails when a figure cannot be measured; the token figure runs
a scripted five-step fix through the agent, so a change in how a run ends can break it. This
runs it here, where the failure shows in the test run and says why.
"""

from __future__ import annotations

import pytest
from bench.figures import tokens_per_task

pytestmark = pytest.mark.timeout(240)


def test_the_token_figure_measures_the_scripted_fix_against_the_stock_agent() -> None:
    [figure] = tokens_per_task(quick=True)
    assert figure.error is None, figure.note
    assert figure.value is not None and figure.baseline is not None
    # both sides ran the same five replies; ours sends less (truncation and a shorter prompt)
    assert 0 < figure.value < figure.baseline, figure
