"""Small edits of one statement, made mechanically: the candidates a fix is searched among
before a model is asked for one.

A bug told by its symptom is often one token off: a comparison (`<` for `<=`), an operator, a
constant off by one, a tuple of outcomes missing one (semver's `"!=": (1,)` where `(-1, 1)` is
meant: dev sv-fix-not-equal, where the 1.5B model, asked for that statement twelve times,
never wrote it). Mutation testing makes exactly these edits to find tests that miss them;
here each is a candidate fix, and only what runs judges it (the task's symptom call gives the
value the task says, and the project's tests pass: agent/search.py). Libraries for mutation
testing (mutmut, cosmic-ray) drive whole test sessions over a project; none offers "the
mutants of this statement" as a call, so the operators are written here, over `ast`, each
edit replacing only its node's own source text (the diff a user reviews is that token).
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterator

#: Operators each is swapped with: the neighbours a slip confuses.
_SWAPS: dict[type, tuple[type, ...]] = {
    ast.Lt: (ast.LtE, ast.Gt),
    ast.LtE: (ast.Lt, ast.GtE),
    ast.Gt: (ast.GtE, ast.Lt),
    ast.GtE: (ast.Gt, ast.LtE),
    ast.Eq: (ast.NotEq,),
    ast.NotEq: (ast.Eq,),
    ast.In: (ast.NotIn,),
    ast.NotIn: (ast.In,),
    ast.Is: (ast.IsNot,),
    ast.IsNot: (ast.Is,),
    ast.Add: (ast.Sub,),
    ast.Sub: (ast.Add,),
    ast.Mult: (ast.FloorDiv,),
    ast.Div: (ast.FloorDiv,),
    ast.FloorDiv: (ast.Div,),
    ast.And: (ast.Or,),
    ast.Or: (ast.And,),
}
#: Mutants of one statement, at most.
MOST = 40


def statement_mutants(source: str) -> Iterator[str]:
    """The source of `source` (one statement, as written) with one small edit each, at most
    `MOST`, none the same as it: operators swapped with their neighbours, `not` taken off, an
    integer one more or less, True and False swapped, a constant of the statement added to a
    tuple, list or set of constants that lacks it, or one of its items taken out."""
    body = "" if _parsed(source) is not None else "\n    pass"  # a compound statement's header
    whole = source + body
    tree = _parsed(whole)
    if tree is None:
        return
    constants = [value for node in ast.walk(tree) if (value := _literal(node)) is not None]
    seen = {whole}
    for node in ast.walk(tree):
        if not hasattr(node, "lineno") or getattr(node, "end_lineno", None) is None:
            continue
        for changed in _edits(node, constants):
            text = _replaced(whole, node, ast.unparse(changed))
            if text not in seen and _parsed(text) is not None:
                seen.add(text)
                yield text.removesuffix(body) if body else text
                if len(seen) > MOST:
                    return


def _literal(node: ast.AST) -> object | None:
    """The int, bool or str a node writes (`-1` too), else None."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _literal(node.operand)
        return -inner if type(inner) is int else None
    if isinstance(node, ast.Constant) and type(node.value) in (int, bool, str):
        return node.value
    return None


def _edits(node: ast.AST, constants: list[object]) -> Iterator[ast.AST]:
    if isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            for other in _SWAPS.get(type(op), ()):
                compared = copy.deepcopy(node)
                compared.ops[i] = other()
                yield compared
    elif isinstance(node, (ast.BinOp, ast.BoolOp)):
        for other in _SWAPS.get(type(node.op), ()):
            operated = copy.deepcopy(node)
            operated.op = other()
            yield operated
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield copy.deepcopy(node.operand)
    elif isinstance(node, ast.Constant) and type(node.value) is bool:
        yield ast.Constant(not node.value)
    elif isinstance(node, ast.Constant) and type(node.value) is int:
        yield from (ast.Constant(node.value + 1), ast.Constant(node.value - 1))
    elif isinstance(node, (ast.Tuple, ast.List, ast.Set)) and all(
        _literal(item) is not None for item in node.elts
    ):
        values = [_literal(item) for item in node.elts]
        kinds = {type(value) for value in values}
        for value in dict.fromkeys(c for c in constants if type(c) in kinds):
            if value not in values:
                yield _with_items(node, [*node.elts, ast.parse(repr(value), mode="eval").body])
        if len(values) > 1:
            for i in range(len(values)):
                yield _with_items(node, node.elts[:i] + node.elts[i + 1 :])


def _with_items(node: ast.Tuple | ast.List | ast.Set, items: list[ast.expr]) -> ast.expr:
    new = copy.copy(node)
    new.elts = items
    return new


def _parsed(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError):
        return None


def _offsets(data: bytes) -> list[int]:
    """Where each line of `data` starts (ast's offsets are in UTF-8 bytes)."""
    starts, at = [0], 0
    for line in data.splitlines(keepends=True):
        at += len(line)
        starts.append(at)
    return starts


def _replaced(source: str, node: ast.AST, text: str) -> str:
    """`source` with `node`'s own text replaced by `text`."""
    data = source.encode()
    starts = _offsets(data)
    start = starts[node.lineno - 1] + node.col_offset  # type: ignore[attr-defined]
    end = starts[node.end_lineno - 1] + node.end_col_offset  # type: ignore[attr-defined]
    return (data[:start] + text.encode() + data[end:]).decode()
