"""A merge narrowed to what passes: the model's versions of definitions it was not asked to
change, left out when they break the checks and the rest does not.

Small models given a method to change often write its class around it, with members of their
own making; merged by name, each replaces the file's. When the whole merge fails checks that
pass without it, each replaced definition is put back as the file has it, one at a time, and
the first version that passes is proposed instead, saying what was kept. What runs decides:
nothing is narrowed that passes, and nothing is guessed from the model's words.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..patches.diff import unified_diff
from ..patches.pysource import restored
from .base import ToolContext


def narrowed_merge(
    ctx: ToolContext,
    rel: str,
    text: str,
    merged: str,
    replaced: Sequence[str],
    checks_of: Callable[[ToolContext], list[str] | None],
    seen: dict[str, dict[str, Any]] | None = None,
) -> tuple[str, str] | None:
    """(the merge with one replaced definition kept as it was, its name) when the whole merge
    fails checks that pass without it and that one does not. Dev sv-bump-step: asked for a
    `step` argument, the 1.5B model wrote `class Version` with bump_patch right and a short
    `__init__` of its own, which failed 123 tests; the argument alone failed none. Each
    validation run is kept in `seen` by its diff, so the proposal of a merge that passed
    whole is not validated twice."""
    if len(replaced) < 2:
        return None

    def fails(new_text: str) -> bool:
        try:
            diff = unified_diff(rel, text, new_text)
            validation = ctx.sandbox.validate(diff, checks_of(ctx)).to_dict()
        except Exception:  # a sandbox that cannot run narrows nothing
            return False
        if seen is not None:
            seen[diff] = validation
        checks = validation.get("checks", [])
        return validation.get("applies") is False or any(
            not c.get("passed") and not c.get("timed_out") and not c.get("fails_without_patch")
            for c in checks
        )

    if not fails(merged):
        return None
    for name in replaced:
        candidate = restored(text, merged, name) if " " not in name else None
        if candidate is not None and candidate != text and not fails(candidate):
            return candidate, name
    return None
