"""Parsing Python source into an AST, safe to do from any thread.

CPython 3.11 keeps the AST constructor's recursion counter in one place per interpreter
(python/cpython#106905, fixed only in later versions). When two parses overlap - a thread
switch while one is building its tree, which happens whenever a garbage collection runs a
finaliser - the one that finishes last raises `SystemError: AST constructor recursion depth
mismatch` although its source is fine. Overlaps are ordinary here: the daemon runs agents on
worker threads, and Python 3.11's `traceback` module parses source to draw its carets, so
any thread that formats a traceback (LiteLLM's logging threads do) parses too.

A parse has no side effect, so the cure is to parse again: the counter is reset at the start
of every parse. Every parse in this package goes through `parse`.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Literal, TypeVar, overload

T = TypeVar("T")

#: Overlaps are rare; three in a row would be something else, and is raised as it is.
PARSE_ATTEMPTS = 3
_MISMATCH = "AST constructor recursion depth mismatch"


def is_parse_race(exc: BaseException) -> bool:
    """Whether `exc` is the shared-counter error above, not a fault of the source."""
    return isinstance(exc, SystemError) and _MISMATCH in str(exc)


def retried(call: Callable[[], T]) -> T:
    """`call()`, called again when a parse in it met another thread's parse. Only for calls
    that parse before they do anything else: `call` may run up to PARSE_ATTEMPTS times."""
    for attempt in range(PARSE_ATTEMPTS):
        try:
            return call()
        except SystemError as exc:
            if not is_parse_race(exc) or attempt == PARSE_ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")


@overload
def parse(source: str, filename: str = ..., mode: Literal["exec"] = ...) -> ast.Module: ...
@overload
def parse(source: str, filename: str = ..., *, mode: Literal["eval"]) -> ast.Expression: ...
def parse(source: str, filename: str = "<unknown>", mode: str = "exec") -> ast.AST:
    """`ast.parse`, parsed again when another thread's parse overlapped it."""
    return retried(lambda: ast.parse(source, filename, mode))


def parsed(source: str | None) -> ast.Module | None:
    """The module `source` holds, or None when there is none or it does not parse (a file
    that is not UTF-8, read with surrogateescape, or holds a null byte: ValueError)."""
    if source is None:
        return None
    try:
        return parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def is_python_source(path: str, text: str | None) -> bool:
    """A file of Python: its name says so, or its first line runs Python (`bin/tool`)."""
    first = (text or "").partition("\n")[0]
    return path.endswith(".py") or (first.startswith("#!") and "python" in first)
