"""New tests expect what the code gives: a proposed test's expected values, run (tools/pins.py)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from tests.conftest import make_repo, make_tools

from smol_instruments.base.config import Settings
from smol_instruments.tools.base import Changes
from smol_instruments.tools.pins import pinned

TEXT = '''def truncate(text, width):
    """Cut `text` to `width` characters, ending in "..." when cut."""
    if len(text) <= width:
        return text
    return text[: width - 3] + "..."


def parse(text):
    if not text:
        raise ValueError("empty")
    return int(text)


class Box:
    pass
'''

TESTS = (
    "from lib.text import truncate\n\n\ndef test_short():\n    assert truncate('ab', 5) == 'ab'\n"
)

FILES = {"lib/__init__.py": "", "lib/text.py": TEXT, "tests/test_text.py": TESTS}


@pytest.fixture(autouse=True)
def python_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])


def pin(
    tmp_path: Path, settings: Settings, new: str, path: str = "tests/test_text.py"
) -> tuple[Changes, list[str]]:
    repo = make_repo(tmp_path / "repo", FILES)
    ctx, _ = make_tools(repo, settings)
    old = (repo / path).read_text() if (repo / path).exists() else None
    return pinned(ctx, [(path, old, new)])


def test_a_guessed_value_is_replaced_by_what_the_call_gives(
    tmp_path: Path, settings: Settings
) -> None:
    """The 1.5B model's test of `truncate` expected the whole string back (add-test)."""
    new = TESTS + (
        "\n\ndef test_long():\n"
        "    assert truncate('A man, a plan', 8) == 'A man, a plan'\n"
        "    assert 'ab' == truncate('ab', 9)\n"  # right already, literal on the left
        "    assert truncate('abcdef', 5) != 'x'\n"  # not an equality: as written
    )
    [(_, _, text)], said = pin(tmp_path, settings, new)
    assert text == new.replace("== 'A man, a plan'", "== 'A man...'")
    assert said == ["truncate('A man, a plan', 8) returns 'A man...', not 'A man, a plan'"]


def test_unittest_assertions_and_lines_not_written_are_handled(
    tmp_path: Path, settings: Settings
) -> None:
    """`self.assertEqual(call, literal)` is pinned; the file's old lines never are (its
    `test_short` would stay as it is even if it were wrong), nor a call that raises, nor one
    that needs the test's own variables, nor a value no literal writes."""
    old_wrong = TESTS.replace("== 'ab'", "== 'WRONG'")
    new = old_wrong + (
        "\n\nclass TestText(unittest.TestCase):\n"
        "    def test_it(self):\n"
        "        self.assertEqual(truncate('héllo wörld', 6), 'héllo')\n"
        "        self.assertEqual(parse(''), 0)\n"
        "        value = 'abc'\n"
        "        self.assertEqual(truncate(value, 1), 'a')\n"
        "        self.assertEqual(Box(), 1)\n"
    )
    new = "import unittest\nfrom lib.text import Box, parse\n" + new
    repo = make_repo(tmp_path / "repo", {**FILES, "tests/test_text.py": old_wrong})
    ctx, _ = make_tools(repo, settings)
    [(_, _, text)], said = pinned(ctx, [("tests/test_text.py", old_wrong, new)])
    assert text == new.replace("'héllo')", "'hél...')")  # multi-byte characters before it
    assert said == ["truncate('héllo wörld', 6) returns 'hél...', not 'héllo'"]


def test_code_that_is_not_a_test_is_never_pinned(tmp_path: Path, settings: Settings) -> None:
    """Control: the same assertion in the library's own code is the model's, as written."""
    new = TEXT + "\n\nassert truncate('A man, a plan', 8) == 'A man, a plan'\n"
    [(_, _, text)], said = pin(tmp_path, settings, new, path="lib/text.py")
    assert text == new and said == []


def test_nothing_is_run_in_a_folder_nobody_trusts(tmp_path: Path, settings: Settings) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    ctx, _ = make_tools(repo, settings)
    ctx.trusted = False
    new = TESTS + "\n\ndef test_long():\n    assert truncate('A man, a plan', 8) == 'x'\n"
    changes = [("tests/test_text.py", TESTS, new)]
    assert pinned(ctx, changes) == (changes, [])
