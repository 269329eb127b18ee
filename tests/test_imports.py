"""A proposal that uses a repository name its file never imports gets the import (tools/imports.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import make_repo, make_tools
from smol_instruments.agent.outcome import describe_proposal
from smol_instruments.base.config import Settings

CODE = '''"""Pointers."""


def escape(part):
    return part.replace("~", "~0")


def unescape(part):
    return part.replace("~0", "~")


def resolve(doc, path):
    return doc
'''

TESTS = """import unittest

from pkg.pointer import resolve


class ResolveTests(unittest.TestCase):
    def test_resolve(self):
        self.assertEqual(resolve({}, ""), {})
"""

FILES = {"pkg/__init__.py": "", "pkg/pointer.py": CODE, "tests/test_pointer.py": TESTS}

NEW_TESTS = TESTS + (
    "\n    def test_escape(self):\n        self.assertEqual(escape('~'), '~0')\n"
    "        self.assertEqual(unescape('~0'), '~')\n"
)


def propose(tmp_path: Path, settings: Settings, path: str, new: str) -> tuple[dict[str, Any], Any]:
    repo = make_repo(tmp_path / "repo", FILES)
    ctx, tools = make_tools(repo, settings)
    old = (repo / path).read_text()
    result = tools["propose_patch"](path=path, old_text=old, new_text=new)
    assert "patch_id" in result, result
    return result, ctx.patches.get(result["patch_id"])


def test_names_the_proposal_uses_and_never_imports_are_imported(
    tmp_path: Path, settings: Settings
) -> None:
    """Seen on the 1.5B model (jp-add-test-escape, dev): new tests of escape and unescape in a
    file that imports neither; every one of them would fail with a NameError."""
    result, patch = propose(tmp_path, settings, "tests/test_pointer.py", NEW_TESTS)
    assert "+from pkg.pointer import escape, unescape\n" in result["diff"]
    # after the file's last import, the rest as proposed
    assert (
        " from pkg.pointer import resolve\n+from pkg.pointer import escape, unescape\n"
        in (result["diff"])
    )
    said = result["validation"]["imported"]
    assert said == [
        "added `from pkg.pointer import escape, unescape` to tests/test_pointer.py: the "
        "proposal uses it and did not import it"
    ]
    assert "Added `from pkg.pointer import escape, unescape` to tests/test_pointer.py" in (
        describe_proposal(patch)
    )


def test_what_is_not_the_proposals_doing_or_not_the_repositorys_is_left_alone(
    tmp_path: Path, settings: Settings
) -> None:
    # a name the repository defines nowhere: for the checks to report, nothing imported
    result, _ = propose(
        tmp_path / "a", settings, "tests/test_pointer.py", TESTS + "\nvalue = undefined_thing\n"
    )
    assert "+value = undefined_thing\n" in result["diff"]
    assert "import undefined_thing" not in result["diff"]
    assert "imported" not in result["validation"]
    # a name the file already used undefined before the proposal: not the proposal's doing
    before = TESTS + "\nold = escape\n"
    files = {**FILES, "tests/test_pointer.py": before}
    repo = make_repo(tmp_path / "b" / "repo", files)
    _, tools = make_tools(repo, settings)
    result = tools["propose_patch"](
        path="tests/test_pointer.py", old_text="old = escape\n", new_text="old = escape\nx = 1\n"
    )
    assert "import escape" not in result["diff"]
    # a star import may define anything: nothing is added
    starred = TESTS.replace("from pkg.pointer import resolve", "from pkg.pointer import *")
    repo = make_repo(tmp_path / "c" / "repo", {**FILES, "tests/test_pointer.py": starred})
    _, tools = make_tools(repo, settings)
    result = tools["propose_patch"](
        path="tests/test_pointer.py",
        old_text=starred,
        new_text=starred + "\nx = escape('~')\n",
    )
    assert "import escape" not in result["diff"]
    # code outside the tests too: another module's name, imported from where it is defined
    files = {**FILES, "pkg/cli.py": "import sys\n"}
    repo = make_repo(tmp_path / "d" / "repo", files)
    _, tools = make_tools(repo, settings)
    result = tools["propose_patch"](
        path="pkg/cli.py",
        old_text="import sys\n",
        new_text="import sys\n\nprint(escape(sys.argv[1]))\n",
    )
    assert " import sys\n+from pkg.pointer import escape\n" in result["diff"]
    # but never from the tests: a helper of theirs is no name for the code to use
    result = tools["propose_patch"](
        path="pkg/cli.py", old_text="import sys\n", new_text="import sys\n\nprint(ResolveTests)\n"
    )
    assert "import ResolveTests" not in result["diff"]
