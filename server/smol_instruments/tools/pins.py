"""New tests expect what the code gives: each value a proposed test asserts, run before it is
checked.

Asked to add a test, a small model writes the call well and its expected value from its head:
asked to test `truncate`, the 1.5B model expected the whole string back where the code cut it,
and proposed the same failing test three times although pytest showed the real value each
time (add-test, 4 steps, 18 minutes, nothing usable). A test of code that is not being fixed
states what the code does; the value, run, is what it should pin. So, for a task that adds
tests and fixes nothing (the agent sets `ToolContext.pin_expected`), every assertion the
proposal writes that compares a call with a literal - `assert f(x) == 3`,
`self.assertEqual(f(x), 3)` - has its call run with the repository's code and the test file's
imports, contained as `evaluate` runs it (tools/evaluate.py), and a literal the value differs
from is replaced by the value. The proposal then says so, listing each value changed: what
the user reviews is what the code does now, not a guess, and a value that looks wrong to
them is a bug they have found.

Only literals are replaced, only by values that are literals again (`repr` read back by
`ast.literal_eval`), only on lines the proposal wrote; a call that raises, or that needs the
test's own variables, is left as written.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..base import pyast
from ..base.errors import ToolError
from ..base.testruns import is_test_path
from .base import Changes, ToolContext
from .evaluate import (
    ASSERTION_TIMEOUT_S,
    evaluate_code,
    evaluates_unasked,
    module_imports,
    same_value,
    written_lines,
)

#: Assertions run per proposal (one contained run per file, however many).
MAX_PINNED = 12
#: unittest's assertions that compare their first two arguments for equality.
_EQUAL_ASSERTIONS = frozenset({"assertEqual", "assertEquals", "assertListEqual", "assertDictEqual"})


@dataclass(frozen=True)
class _Expected:
    call: str  # the side that calls, as source
    literal: ast.expr  # the side that is a literal, whose text is replaced


def pinned(ctx: ToolContext, changes: Changes) -> tuple[Changes, list[str]]:
    """`changes` (path, text before, proposed text) with each written test assertion's literal
    replaced by what its call gives, and the sentences that say which ("truncate('ab', 1)
    returns 'a...', not 'a'"). Unchanged, with [], unless every file is a test and the
    repository's code can run unasked."""
    paths = [path for path, _, new in changes if new is not None]
    if not paths or not all(map(is_test_path, paths)) or not evaluates_unasked(ctx):
        return changes, []
    out: Changes = []
    said: list[str] = []
    for path, old, new in changes:
        if new is not None and len(said) < MAX_PINNED:
            new, told = _pin_file(ctx, old, new)
            said.extend(told)
        out.append((path, old, new))
    return out, said


def _pin_file(ctx: ToolContext, old: str | None, new: str) -> tuple[str, list[str]]:
    tree = pyast.parsed(new)
    if tree is None:
        return new, []
    written = written_lines(old, new)
    expected = [
        found
        for node in ast.walk(tree)
        if getattr(node, "lineno", 0) in written and (found := _expected(node)) is not None
    ][:MAX_PINNED]
    if not expected:
        return new, []
    values = _run(ctx, module_imports(tree), [item.call for item in expected])
    edits: list[tuple[int, int, str]] = []
    told: list[str] = []
    starts = _line_starts(new)
    for item, value in zip(expected, values, strict=True):
        if value is None or same_value(value, ast.unparse(item.literal)):
            continue
        start = _offset(new, starts, item.literal.lineno, item.literal.col_offset)
        end = _offset(new, starts, item.literal.end_lineno or 0, item.literal.end_col_offset or 0)
        edits.append((start, end, value))
        told.append(f"{item.call} returns {value}, not {ast.unparse(item.literal)}")
    for start, end, value in sorted(edits, reverse=True):
        new = new[:start] + value + new[end:]
    return new, told


def _expected(node: ast.AST) -> _Expected | None:
    """The call and the literal an equality assertion compares, else None."""
    if isinstance(node, ast.Assert) and isinstance(node.test, ast.Compare):
        test = node.test
        if len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
            return None
        sides = (test.left, test.comparators[0])
    elif (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Attribute)
        and node.value.func.attr in _EQUAL_ASSERTIONS
        and len(node.value.args) >= 2
    ):
        sides = (node.value.args[0], node.value.args[1])
    else:
        return None
    for call, literal in (sides, sides[::-1]):
        if _calls(call) and _literal(literal):
            return _Expected(ast.unparse(call), literal)
    return None


def _calls(node: ast.expr) -> bool:
    return any(isinstance(part, ast.Call) for part in ast.walk(node))


def _literal(source: str | ast.expr) -> bool:
    """Whether `source` (a value's repr, or a node) is a literal `ast.literal_eval` reads."""
    try:
        ast.literal_eval(source)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _run(ctx: ToolContext, imports: str, calls: list[str]) -> list[str | None]:
    """Each call's value as a literal's source, in one contained run; None where it raised,
    needs what the test defines, or gives what no literal can write."""
    thunks = ", ".join(f"lambda: ({call})" for call in calls)
    code = (
        f"{imports}\n"
        "def _pin(thunk):\n"
        "    try:\n"
        "        return repr(thunk())\n"
        "    except BaseException:\n"
        "        return None\n"
        f"[_pin(thunk) for thunk in ({thunks},)]"
    )
    try:
        result = evaluate_code(ctx, code, ASSERTION_TIMEOUT_S)
        values = ast.literal_eval(str(result.get("value")))
    except (ToolError, ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return [None] * len(calls)
    if not isinstance(values, list) or len(values) != len(calls):
        return [None] * len(calls)
    return [value if isinstance(value, str) and _literal(value) else None for value in values]


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


def _offset(text: str, starts: list[int], line: int, col: int) -> int:
    """The index in `text` of an AST position (its column counts UTF-8 bytes)."""
    begin = starts[line - 1]
    rest = text[begin:].encode()[:col].decode(errors="ignore")
    return begin + len(rest)
