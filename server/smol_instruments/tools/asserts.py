"""What a failing test says a call should give: `assert average([2, 4, 6]) == 4`.

A task told by its symptom writes the call and the value it should give ("f(2) gives 3, it
should be 4"); a task told by a failing test ("test_average fails, fix the bug") has both in the
test's failing assertion. Read from there, they make the same symptom: a proposal is checked by
running the call (tools/evaluate.py `symptom_checks`), and versions of a fix the model cannot
write are sampled and run (agent/search.py). Only an equality of a call whose arguments are all
literals and a literal: the call must run alone, outside the test, and mean the same.
"""

from __future__ import annotations

import ast
import re

from ..base import pyast
from ..base.errors import ToolError
from .base import ToolContext
from .files import read_repo_text

#: Where pytest says an assertion failed: "tests/test_x.py:17: AssertionError".
FAILED_AT = re.compile(r"^(\S+\.py):(\d+): (?:AssertionError|assert)", re.M)
#: Assertions read at most.
MAX_WANTS = 3


def assertion_at(tree: ast.Module, line: int) -> ast.Assert | None:
    """The `assert` statement of `tree` whose lines hold `line` (pytest's failing line)."""
    return next(
        (
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.Assert) and node.lineno <= line <= (node.end_lineno or line)
        ),
        None,
    )


def wanted_by_assertions(ctx: ToolContext, output: str) -> dict[str, str]:
    """{call: the literal it should give} of the failing assertions pytest's `output` points
    at that compare a call with literal arguments to a literal (`==`, either side)."""
    wants: dict[str, str] = {}
    for path, line in dict.fromkeys(FAILED_AT.findall(output)):
        try:
            tree = pyast.parsed(read_repo_text(ctx, path)[1])
        except ToolError:
            continue
        node = assertion_at(tree, int(line)) if tree is not None else None
        found = _call_and_value(node.test) if node is not None else None
        if found is not None and len(wants) < MAX_WANTS:
            wants.setdefault(*found)
    return wants


def _call_and_value(test: ast.expr) -> tuple[str, str] | None:
    """(call, value) of `call == value` or `value == call`; None for anything else."""
    if not (
        isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)
    ):
        return None
    for call, value in ((test.left, test.comparators[0]), (test.comparators[0], test.left)):
        if (
            isinstance(call, ast.Call)
            and _literal(value)
            and all(_literal(arg) for arg in [*call.args, *(k.value for k in call.keywords)])
            and not any(isinstance(arg, ast.Starred) for arg in call.args)
        ):
            return ast.unparse(call), ast.unparse(value)
    return None


def _literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True
