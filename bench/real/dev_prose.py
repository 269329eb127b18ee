"""Fresh dev tasks for edits of files that are not Python (written 2026-12-07, before any run),
the kind where the held-out split has two false successes left: an ini file, a setup.cfg, a
link added to a short README, and a row added to a table in a long one (too long to be
written whole: its change is a SEARCH/REPLACE block). On the dev repositories, phrased as
people type them. Their first run measures the agent on requests none of its rules were
written from; after that they are dev like the others.
"""

from __future__ import annotations

import configparser
from pathlib import Path

from .checks import all_of, file_says, lines_kept, parsed_file
from .tasks import Task, edit

RELEASES = "https://github.com/stefankoegl/python-json-pointer/releases"


def _ini(text: str) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(text)
    return parser


def _tox_has_314(ini: configparser.ConfigParser) -> bool:
    envs = ini["tox"]["env_list"]
    return "314" in envs and "lint" in envs and all(v in envs for v in ("py3", "313", "39"))


def _flake8_100(ini: configparser.ConfigParser) -> bool:
    return (
        ini["flake8"]["max-line-length"].strip() == "100"
        and ini["flake8"]["exclude"].strip() == "docs/*"
        and ini["mypy"]["strict_equality"].strip() == "True"
        and ini["isort"]["skip"].strip() == ".tox,docs"
    )


def _tox_314(repo: Path) -> list[str]:
    edit(repo, "tox.ini", "py{py3, 313,", "py{py3, 314, 313,")
    return ["tox.ini runs 3.14 too."]


def _flake8_line_length(repo: Path) -> list[str]:
    edit(repo, "setup.cfg", "[flake8]\n", "[flake8]\nmax-line-length = 100\n")
    return ["flake8 allows lines of 100 characters."]


def _releases_link(repo: Path) -> list[str]:
    line = "* Coveralls: https://coveralls.io/r/stefankoegl/python-json-pointer\n"
    edit(repo, "README.md", line, line + f"* Changelog: {RELEASES}\n")
    return ["The README links the releases."]


def _terminal_row(repo: Path) -> list[str]:
    row = "| Mac Terminal | yes     | no   | yes       | yes        | yes     | yes       |\n"
    new = "| Windows Terminal | yes | yes | yes | yes | yes | yes |\n"
    edit(repo, "README.md", row, row + new)
    return ["The terminal table has a Windows Terminal row."]


FOURTH: tuple[Task, ...] = (
    Task(
        "tc-tox-py314",
        "termcolor",
        "docs",
        ("add python 3.14 to the tox envs",),
        parsed_file("tox.ini", _ini, _tox_has_314, "env_list has 314 beside py3, 313, 39, lint"),
        "tox.ini parses; its env_list has 314 and keeps the others",
        _tox_314,
    ),
    Task(
        "infl-flake8-line-length",
        "inflection",
        "docs",
        ("flake8 should allow lines up to 100 chars",),
        parsed_file(
            "setup.cfg", _ini, _flake8_100, "flake8 max-line-length 100, other settings kept"
        ),
        "setup.cfg parses; [flake8] max-line-length = 100; exclude, isort, mypy kept",
        _flake8_line_length,
    ),
    Task(
        "jp-readme-releases-link",
        "jsonpointer",
        "docs",
        (f"can you add the changelog to the links at the end of the readme? it's {RELEASES}",),
        all_of(
            file_says(
                "README.md", r"^\* .*https://github\.com/stefankoegl/python-json-pointer/releases"
            ),
            lines_kept("jsonpointer", "README.md"),
        ),
        "README.md lists the releases link as one of its links; no line lost",
        _releases_link,
    ),
    Task(
        "tc-readme-terminal-row",
        "termcolor",
        "docs",
        (
            "put Windows Terminal in the terminal properties table in the readme, it supports "
            "all of them (yes everywhere)",
        ),
        all_of(
            file_says("README.md", r"^\|\s*Windows Terminal\s*(\|\s*yes\s*){6}\|\s*$"),
            lines_kept("termcolor", "README.md"),
        ),
        "README.md's terminal table has a Windows Terminal row of six yes; no line lost",
        _terminal_row,
    ),
)
