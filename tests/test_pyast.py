"""Parsing while another parse is under way (CPython 3.11's shared AST depth counter).

The overlap is made without timing: a garbage-collection callback parses in the middle of a
parse, just as another thread does when a collection runs a finaliser and the interpreter
switches threads. One overlap is made per test; the parse that follows it is clean. Only
collections that run inside `ast.parse` are counted: how many run before it (pytest's own
allocations between the fixture and the call) varies from run to run.
"""

from __future__ import annotations

import ast
import gc
import sys
from collections.abc import Iterator

import pytest
from smolagents.local_python_executor import InterpreterError

from smol_instruments.agent.executor import ToolFunctionsExecutor
from smol_instruments.base import pyast

#: Big enough that its tree is built across many collections.
SOURCE = "\n".join(
    f"def f{i}(a, b):\n    return [x + {i} for x in (a, b) if x]\n" for i in range(300)
)


def parse_from_deeper(frames: int) -> None:
    """Parses `frames` calls deeper than its caller. The overlapped parse's counter is left at
    the depth this parse started from: from well below any depth of SOURCE's tree, it cannot
    happen to land where the outer parse would have been."""
    if frames:
        parse_from_deeper(frames - 1)
    else:
        ast.parse("y = [1, 2, 3]")


@pytest.fixture
def one_overlap() -> Iterator[list[int]]:
    """The next parse of SOURCE meets one other parse, made by the fifth collection in it."""
    parsing = ast.parse.__code__
    made: list[int] = []
    collections = 0

    def parse_in_the_middle(phase: str, info: dict[str, int]) -> None:
        nonlocal collections
        if phase != "start" or made or sys._getframe(1).f_code is not parsing:
            return
        collections += 1
        if collections == 5:
            made.append(1)
            parse_from_deeper(30)

    threshold = gc.get_threshold()
    gc.set_threshold(50)
    gc.callbacks.append(parse_in_the_middle)
    try:
        yield made
    finally:
        gc.callbacks.remove(parse_in_the_middle)
        gc.set_threshold(*threshold)


@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="the counter is 3.11's, as CI runs")
def test_the_overlap_breaks_a_plain_parse(one_overlap: list[int]) -> None:
    with pytest.raises(SystemError, match="recursion depth mismatch"):
        ast.parse(SOURCE)
    assert one_overlap


def test_a_parse_that_meets_another_gives_the_tree(one_overlap: list[int]) -> None:
    tree = pyast.parse(SOURCE)
    assert one_overlap
    assert [node.name for node in tree.body[:2]] == ["f0", "f1"]  # type: ignore[attr-defined]
    assert len(tree.body) == 300


def test_a_syntax_error_is_still_one(one_overlap: list[int]) -> None:
    with pytest.raises(SyntaxError):
        pyast.parse("def broken(:\n")


def test_the_agents_block_runs_once_when_its_parse_meets_another(
    one_overlap: list[int],
) -> None:
    executor = ToolFunctionsExecutor([])
    calls: list[int] = []
    executor.send_tools({})
    executor.static_tools["note"] = lambda: calls.append(1)
    output = executor(SOURCE + "\nnote()\nprint(f7(1, 2))")
    assert one_overlap
    assert calls == [1]  # ran once: the parse that failed ran nothing
    assert "[8, 9]" in output.logs


def test_an_error_in_the_block_is_not_taken_for_the_overlap() -> None:
    executor = ToolFunctionsExecutor([])
    executor.send_tools({})
    with pytest.raises(InterpreterError, match="ZeroDivisionError"):
        executor("x = 1 / 0")
