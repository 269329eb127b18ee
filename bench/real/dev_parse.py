"""Fresh dev tasks on a fifth real repository the agent had never been run on (written
2026-12-07, before any run): `parse` 1.22.4, the reverse of `format()`. The held-out split runs
on three repositories no dev task touched; until now every dev repository had been read and
tuned on for weeks, so the dev split said nothing of a repository seen for the first time.
These eleven ask what held-out asks in kind (exact behaviour, a value told in words, an
exception, impact, a name that does not exist, a chat, a rename, a nested function, a TOML
edit, where something is handled), phrased as people type them. Their first run measures the
agent on a repository none of its rules were written from; after that they are dev like the
others.
"""

from __future__ import annotations

from pathlib import Path

from .checks import (
    all_of,
    answer_gives,
    answer_names_callers,
    answer_raises,
    answer_says,
    hidden_test,
    lines_kept,
    nested_docstring,
    no_name,
    parsed_file,
    says_missing,
    tests_pass,
)
from .tasks import Task, answers, edit

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

PARSE = "parse/__init__.py"
_SETUP = "from parse import findall, parse"
#: the vendored suite: 111 pass, 1 skipped (its doctests of the module and the README included)
_SUITE = 111


def _rename_with_pattern(repo: Path) -> list[str]:
    import re

    for path in [repo / PARSE, *sorted((repo / "tests").glob("*.py"))]:
        path.write_text(re.sub(r"\bwith_pattern\b", "pattern_for", path.read_text()))
    return ["Renamed with_pattern to pattern_for in the module and the tests."]


def _decorator_docstring(repo: Path) -> list[str]:
    edit(
        repo,
        PARSE,
        "    def decorator(func):\n",
        '    def decorator(func):\n        """Give `func` the pattern and its group count."""\n',
    )
    return ["Added a docstring to decorator, the function inside with_pattern."]


def _requires_python(repo: Path) -> list[str]:
    edit(
        repo, "pyproject.toml", 'license = "MIT"\n', 'license = "MIT"\nrequires-python = ">=3.8"\n'
    )
    return ['pyproject.toml now says requires-python = ">=3.8".']


TENTH: tuple[Task, ...] = (
    Task(
        "pa-decimal-int",
        "parse",
        "behaviour",
        ("does parse('{:d}', '3.5') give me 3 or what",),
        answer_gives("parse", "parse('{:d}', '3.5')", setup=_SETUP),
        "answer says parse('{:d}', '3.5') gives None (no match), found by running it",
        answers("No: it gives None, {:d} does not match 3.5 at all."),
    ),
    Task(
        "pa-hex-int",
        "parse",
        "behaviour",
        ("what do i get if i parse 0x1F with {:d}",),
        answer_says(r"\b31\b"),
        "answer says {:d} reads 0x1F as 31 (the value told in words, no call written)",
        answers("{:d} understands the 0x prefix: parse('{:d}', '0x1F')[0] is 31."),
    ),
    Task(
        "pa-case",
        "parse",
        "behaviour",
        ("is matching case sensitive? e.g. 'Hello {}' against 'hello World'",),
        all_of(
            answer_gives("parse", "parse('Hello {}', 'hello World')[0]", setup=_SETUP),
            answer_says(r"case_sensitive"),
        ),
        "answer gives the match ('World': not case sensitive) and names case_sensitive",
        answers(
            "No: parse('Hello {}', 'hello World')[0] is 'World'; pass case_sensitive=True to "
            "make it so."
        ),
    ),
    Task(
        "pa-repeated-name",
        "parse",
        "behaviour",
        ("what happens if i use the same field name twice with different types, {a:d} {a:w}",),
        answer_raises("parse", "parse('{a:d} {a:w}', '1 x')", setup=_SETUP),
        "answer names the exception a field repeated with another type raises, found by running",
        answers("It raises RepeatedNameError: field type 'w' for field \"a\" does not match 'd'."),
    ),
    Task(
        "pa-extract-impact",
        "parse",
        "callers",
        ("if i change extract_format what else would that affect",),
        answer_names_callers("parse", PARSE, "extract_format", transitive=True),
        "answer names every function that calls extract_format, directly or not (from the code)",
        answers(
            "Parser._handle_field calls extract_format; _generate_expression calls it, "
            "__init__ calls that, and parse, search, findall and compile build a Parser."
        ),
    ),
    Task(
        "pa-parse-all",
        "parse",
        "missing",
        ("what does parse_all return",),
        says_missing("parse_all"),
        "answer says parse_all does not exist; nothing written",
        answers("There is no parse_all here; findall() returns every match."),
    ),
    Task(
        "pa-chat-findall",
        "parse",
        "chat",
        (
            "which function finds every match of a pattern in a longer string?",
            "what does it give for '{:d}' in 'a 1 b 22'",
        ),
        all_of(answer_says(r"\bfindall\b", turn=0), answer_says(r"\b22\b")),
        "turn 1: findall; turn 2 (findall run on it): the matches 1 and 22",
        answers(
            "findall(format, string) finds every match.",
            "findall('{:d}', 'a 1 b 22') yields two Results: 1 and 22.",
        ),
    ),
    Task(
        "pa-locate-dates",
        "parse",
        "locate",
        ("where does it handle the date types like {:ti}?",),
        answer_says(r"\b(date_convert|_handle_field)\b"),
        "answer names date_convert or Parser._handle_field, where the date types are handled",
        answers("Parser._handle_field maps ti to a regex and date_convert builds the datetime."),
    ),
    Task(
        "pa-rename-with-pattern",
        "parse",
        "rename",
        ("rename with_pattern to pattern_for across the module and the tests",),
        all_of(
            no_name("with_pattern"),
            hidden_test(
                "import parse\n\n\ndef test_pattern_for():\n"
                "    @parse.pattern_for(r'\\d+')\n    def number(text):\n        return int(text)\n\n"
                "    assert parse.parse('{:n}', '12', {'n': number})[0] == 12\n"
            ),
        ),
        "`with_pattern` in no .py file; hidden test decorates with pattern_for",
        _rename_with_pattern,
    ),
    Task(
        "pa-nested-docstring",
        "parse",
        "nested",
        ("give the inner function of with_pattern a docstring",),
        all_of(
            nested_docstring("parse", PARSE, "with_pattern", "decorator"),
            tests_pass(_SUITE),
        ),
        "decorator (nested in with_pattern) has a docstring; no new top-level def; tests pass",
        _decorator_docstring,
    ),
    Task(
        "pa-requires-python",
        "parse",
        "docs",
        ("say in pyproject that it needs python 3.8 or newer",),
        all_of(
            parsed_file(
                "pyproject.toml",
                tomllib.loads,
                lambda data: data["project"]["requires-python"].replace(" ", "") == ">=3.8",
                'project.requires-python is ">=3.8"',
            ),
            lines_kept("parse", "pyproject.toml"),
        ),
        'pyproject.toml still parses, [project] requires-python = ">=3.8", every line kept',
        _requires_python,
    ),
)
