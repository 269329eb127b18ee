"""A parameter a change adds, read from the task and written into a signature
(agent/parameters.py)."""

from __future__ import annotations

import ast

import pytest

from smol_instruments.agent.parameters import Parameter, new_parameter

SOURCE = """class Version:
    @classmethod
    def parse(
        cls: type, version: str, optional_minor_and_patch: bool = False
    ) -> "Version":
        return cls()

    def many(self, *args, k=3, **kw):
        pass

    def keywords(**kw):
        pass

    def bare():
        pass

    def héllo():
        pass
"""


@pytest.mark.parametrize(
    ("task", "absent", "names", "wanted"),
    [
        (
            "people keep passing 'v1.2.3' to Version.parse. give it an allow_v flag (default "
            "False) that lets a leading v through",
            ["allow_v"],
            ["Version.parse", "allow_v"],
            Parameter("parse", "allow_v", "False"),
        ),
        (
            "give parameterize an optional max_length argument",
            ["max_length"],
            ["parameterize", "max_length"],
            Parameter("parameterize", "max_length", "None"),
        ),
        (
            "can you give bump a `step` parameter? default stays 1",
            ["step"],
            ["bump", "step"],
            Parameter("bump", "step", "1"),
        ),
        (
            "add a sep option to join, defaulting to ', '",
            ["sep"],
            ["join", "sep"],
            Parameter("join", "sep", "', '"),
        ),
        (
            "finalize_version throws away the build metadata too. add a keep_build option so i "
            "can keep it, off by default",
            ["keep_build"],
            ["finalize_version", "keep_build"],
            Parameter("finalize_version", "keep_build", "False"),
        ),
        # found in review: a default told of something else, a negated state, a keyword
        (
            "add a strict flag to parse; retries in fetch default to 3",
            ["strict"],
            ["parse", "strict"],
            Parameter("parse", "strict", "False"),
        ),
        (
            "add a debug flag to run, not enabled by default",
            ["debug"],
            ["run", "debug"],
            Parameter("run", "debug", "False"),
        ),
        ("add a lambda argument to fit", ["lambda"], ["fit", "lambda"], None),
        # controls: a missing name not called a parameter; no function named to add it to
        ("add a bump_epoch function", ["bump_epoch"], ["bump_epoch"], None),
        ("add an allow_v flag", ["allow_v"], ["allow_v"], None),
    ],
)
def test_the_parameter_a_task_adds(
    task: str, absent: list[str], names: list[str], wanted: Parameter | None
) -> None:
    assert new_parameter(task, absent, names) == wanted


@pytest.mark.parametrize(
    ("parameter", "start", "end", "line", "wanted"),
    [
        (
            Parameter("parse", "allow_v", "False"),
            2,
            6,
            4,
            "        cls: type, version: str, optional_minor_and_patch: bool = False, "
            "allow_v: bool = False",
        ),
        (Parameter("many", "x", "None"), 8, 9, 8, "    def many(self, *args, k=3, x=None, **kw):"),
        (Parameter("keywords", "x", "'é'"), 11, 12, 11, "    def keywords(x='é', **kw):"),
        (Parameter("bare", "x", "1"), 14, 15, 14, "    def bare(x=1):"),
        (Parameter("héllo", "x", "1"), 17, 18, 17, "    def héllo(x=1):"),
    ],
)
def test_a_parameter_goes_into_the_signature_and_nowhere_else(
    parameter: Parameter, start: int, end: int, line: int, wanted: str
) -> None:
    lines = SOURCE.splitlines()
    taken = parameter.into(lines, start, end)
    assert taken is not None and len(taken) == len(lines)
    assert taken[line - 1] == wanted
    assert [row for n, row in enumerate(taken) if n != line - 1] == [
        row for n, row in enumerate(lines) if n != line - 1
    ]
    ast.parse("\n".join(taken))  # still Python
    # a signature that has it already, or no function, is left as it is
    assert parameter.into(taken, start, end) is None
    assert Parameter("Version", "x", "1").into(lines, 1, 18) is None


def test_no_parameter_goes_after_a_bare_slash() -> None:
    """After positional-only parameters alone, a new one would be positional-only too."""
    assert Parameter("f", "flag", "False").into(["def f(a, /):", "    pass"], 1, 2) is None


def test_a_method_whose_docstring_has_a_line_at_column_zero_takes_it() -> None:
    """semver's `Version.parse` has a docstring example line at column 0: dedenting the
    method as a whole left it indented, it did not parse, and the parameter was not added
    (dev sv-parse-allow-v)."""
    source = [
        "class Version:",
        "    @classmethod",
        "    def parse(cls, version):",
        '        """Parse it.',
        "",
        "        >>> Version(1,",
        "prerelease='pre.2')",
        '        """',
        "        return cls(version)",
    ]
    taken = Parameter("parse", "allow_v", "False").into(source, 2, 9)
    assert taken is not None and taken[2] == "    def parse(cls, version, allow_v=False):"
    assert taken[6] == "prerelease='pre.2')"
