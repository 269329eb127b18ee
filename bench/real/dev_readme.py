"""Fresh dev tasks for sections added to a README (written 2026-12-07, before any run): the
docs kind, where the held-out split has two false successes left on READMEs. On the dev
repositories, phrased as people type them: how to run the tests, under a heading asked for or
not, and a section on a command-line tool with an example of it. Their first run measures the
agent on requests none of its rules were written from; after that they are dev like the
others.
"""

from __future__ import annotations

from pathlib import Path

from .checks import all_of, file_says, lines_kept
from .tasks import Task

#: A reStructuredText heading: its line, then an underline of one repeated mark.
_RST_HEADING = r"^[^\n]*{words}[^\n]*\n[=\-~^\"'`#*+]{{3,}}\s*$"


def _append(repo: Path, rel: str, text: str) -> None:
    path = repo / rel
    path.write_text(path.read_text().rstrip("\n") + "\n\n" + text)


def _semver_tests(repo: Path) -> list[str]:
    _append(repo, "README.rst", "Running the tests\n=================\n\nRun ``pytest``.\n")
    return ["The README says to run pytest."]


def _termcolor_tests(repo: Path) -> list[str]:
    _append(repo, "README.md", "## Testing\n\nRun `tox`, or `python -m pytest`.\n")
    return ["The README has a Testing section."]


def _semver_cli(repo: Path) -> list[str]:
    section = "Command line\n============\n\n.. code-block:: console\n\n"
    section += "    $ pysemver bump minor 1.2.3\n    1.3.0\n"
    _append(repo, "README.rst", section)
    return ["The README shows pysemver bump."]


SEVENTH: tuple[Task, ...] = (
    Task(
        "sv-readme-testing",
        "semver",
        "docs",
        ("add a bit to the readme on how to run the tests",),
        all_of(
            file_says("README.rst", _RST_HEADING.format(words="test"), r"\b(pytest|tox)\b"),
            lines_kept("semver", "README.rst"),
        ),
        "README.rst gains a heading about tests that says pytest or tox, every line kept",
        _semver_tests,
    ),
    Task(
        "tc-readme-testing",
        "termcolor",
        "docs",
        ("how do i run the tests? put it in the readme under a Testing heading",),
        all_of(
            file_says("README.md", r"^#+\s*Testing\s*$", r"\b(pytest|tox)\b"),
            lines_kept("termcolor", "README.md"),
        ),
        "README.md gains a Testing heading that says pytest or tox, every line kept",
        _termcolor_tests,
    ),
    Task(
        "sv-readme-cli",
        "semver",
        "docs",
        ("readme doesnt mention the pysemver command at all. add a section with an example",),
        all_of(
            file_says(
                "README.rst",
                _RST_HEADING.format(words="(command|cli|pysemver)"),
                r"pysemver\s+(bump|compare|check|nextver)\b",
            ),
            lines_kept("semver", "README.rst"),
        ),
        "README.rst gains a heading on the command with a pysemver subcommand, every line kept",
        _semver_cli,
    ),
)
