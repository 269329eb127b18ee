"""Fresh dev tasks for options added to a constructor and to a function that returns a dict
(written 2026-12-07, before any run): the shape of feature the held-out split has never had
solved, where each run ends after one step. On the dev repositories, phrased as people type
them. Their first run measures the agent on requests none of its rules were written from;
after that they are dev like the others.
"""

from __future__ import annotations

from pathlib import Path

from .checks import all_of, hidden_test, tests_pass
from .dev_semver import TESTS, VERSION
from .tasks import Task, edit

POINTER = "jsonpointer.py"


def _skip_none(repo: Path) -> list[str]:
    edit(
        repo,
        VERSION,
        "    def to_dict(self) -> VersionDict:",
        "    def to_dict(self, skip_none: bool = False) -> VersionDict:",
    )
    edit(
        repo,
        VERSION,
        "        return dict(\n            major=self.major,",
        "        parts = dict(\n            major=self.major,",
    )
    edit(
        repo,
        VERSION,
        "            build=self.build,\n        )\n",
        "            build=self.build,\n        )\n"
        "        if skip_none:\n"
        "            return {k: v for k, v in parts.items() if v is not None}  # type: ignore\n"
        "        return parts  # type: ignore\n",
    )
    return ["to_dict(skip_none=True) leaves out the parts that are None."]


def _relative(repo: Path) -> list[str]:
    edit(
        repo,
        POINTER,
        "    def __init__(self, pointer):\n",
        "    def __init__(self, pointer, relative=False):\n        if relative and not pointer.startswith('/'):\n            pointer = '/' + pointer\n",
    )
    return ["JsonPointer(..., relative=True) takes a pointer without its leading slash."]


FIFTH: tuple[Task, ...] = (
    Task(
        "sv-to-dict-skip-none",
        "semver",
        "feature",
        (
            "to_dict() always gives me prerelease: None and build: None. can it take a "
            "skip_none flag that leaves the None ones out? default should stay like now",
        ),
        all_of(
            hidden_test(
                "from semver import Version\n\n\ndef test_skip_none():\n"
                "    full = {'major': 1, 'minor': 2, 'patch': 3, 'prerelease': None, 'build': None}\n"
                "    assert Version(1, 2, 3).to_dict() == full\n"
                "    assert Version(1, 2, 3).to_dict(skip_none=True) == "
                "{'major': 1, 'minor': 2, 'patch': 3}\n"
                "    assert Version.parse('1.2.3-rc.1').to_dict(skip_none=True) == "
                "{'major': 1, 'minor': 2, 'patch': 3, 'prerelease': 'rc.1'}\n"
            ),
            tests_pass(TESTS),
        ),
        "hidden test: to_dict() unchanged, skip_none=True drops the None parts; tests pass",
        _skip_none,
    ),
    Task(
        "jp-pointer-relative",
        "jsonpointer",
        "feature",
        (
            "JsonPointer('a/b') blows up with 'Location must start with /'. could the "
            "constructor take an optional relative arg (False by default) so i can leave the "
            "leading slash off?",
        ),
        all_of(
            hidden_test(
                "import pytest\nfrom jsonpointer import JsonPointer, JsonPointerException\n\n\n"
                "def test_relative():\n"
                "    assert JsonPointer('a/b', relative=True).parts == ['a', 'b']\n"
                "    assert JsonPointer('a/b', relative=True).path == '/a/b'\n"
                "    assert JsonPointer('/a/b').parts == ['a', 'b']\n"
                "    with pytest.raises(JsonPointerException):\n"
                "        JsonPointer('a/b')\n"
            ),
            tests_pass(22),
        ),
        "hidden test: relative=True adds the leading slash, the default still refuses; 22 pass",
        _relative,
    ),
)
