"""The repositories the evaluation's tasks run in, made fresh as git repositories for every run.

Three kinds, all made by `make(name, parent)` into a new repository `parent/name`:

- **Written here** (`FIXTURES`): small libraries written for the first eleven tasks (a
  calculator with a failing test, string helpers, a command-line script), as lists of commits.
- **Vendored** (`VENDORED`): real open-source projects nobody on the team wrote, kept as plain
  files under `bench/real/repos/<name>/` (with their license and a `SOURCE` note, which stays
  out of the repository made from them) and committed in a few steps of history.
- **Variants** (`Variant`, registered by the task modules that use them): a vendored or written
  fixture plus commits of their own, e.g. one realistic bug under an ordinary message. A
  held-out variant is defined in the held-out module, never here.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

GIT = [
    "git",
    "-c",
    "user.email=dev@example.com",
    "-c",
    "user.name=Dev",
    "-c",
    "commit.gpgsign=false",
]

Commit = tuple[str, dict[str, str]]

_PYPROJECT = """[project]
name = "{name}"
version = "0.1.0"

[tool.pytest.ini_options]
pythonpath = ["."]
"""

_GITIGNORE = "__pycache__/\n.pytest_cache/\n*.egg-info/\n"

# --- calc: a calculator library; average() divides by one too few, and its test fails --------

_OPS_FIRST = '''"""Arithmetic helpers."""


def add(a, b):
    return a + b


def subtract(a, b):
    return a - b


def multiply(a, b):
    return a * b


def divide(a, b):
    if b == 0:
        raise ValueError("cannot divide by zero")
    return a / b
'''

_OPS_AVERAGE = """

def average(values):
    if not values:
        raise ValueError("average of an empty list")
    return sum(values) / (len(values) - 1)
"""

_TESTS_FIRST = """import pytest

from calc.ops import add, divide, multiply, subtract


def test_add():
    assert add(2, 3) == 5


def test_subtract():
    assert subtract(5, 3) == 2


def test_multiply():
    assert multiply(4, 3) == 12


def test_divide_by_zero():
    with pytest.raises(ValueError):
        divide(1, 0)
"""

_TESTS_AVERAGE = """

def test_average():
    assert average([2, 4, 6]) == 4
"""

CALC: list[Commit] = [
    (
        "Add the calculator operations",
        {
            "README.md": "# calc\n\nA small calculator library.\n\n"
            "Run the tests with `python -m pytest`.\n",
            "pyproject.toml": _PYPROJECT.format(name="calc"),
            ".gitignore": _GITIGNORE,
            "calc/__init__.py": "from .ops import add, divide, multiply, subtract\n",
            "calc/ops.py": _OPS_FIRST,
            "tests/test_ops.py": _TESTS_FIRST,
        },
    ),
    (
        "Add average() for lists of numbers",
        {
            "calc/__init__.py": "from .ops import add, average, divide, multiply, subtract\n",
            "calc/ops.py": _OPS_FIRST + _OPS_AVERAGE,
            "tests/test_ops.py": _TESTS_FIRST.replace("add, divide", "add, average, divide")
            + _TESTS_AVERAGE,
        },
    ),
]

# --- textutils: string helpers; truncate() has no test --------------------------------------

_STRINGS = '''"""String helpers used by the report generator."""

import re


def slugify(text, max_words=5):
    """Make a URL slug from a title."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    return "-".join(words[:max_words])


def word_count(text):
    return len(text.split())


def truncate(text, width, suffix="..."):
    if len(text) <= width:
        return text
    return text[: width - len(suffix)] + suffix


def is_palindrome(text):
    letters = [c for c in text.lower() if c.isalnum()]
    return letters == letters[::-1]
'''

_STRINGS_TESTS = """from textutils.strings import is_palindrome, slugify, word_count


def test_slugify():
    assert slugify("Hello, World!") == "hello-world"


def test_word_count():
    assert word_count("one two  three") == 3


def test_is_palindrome():
    assert is_palindrome("A man, a plan, a canal: Panama")
"""

TEXTUTILS: list[Commit] = [
    (
        "String helpers for the report generator",
        {
            "README.md": "# textutils\n\nString helpers: slugs, word counts, truncation.\n",
            "pyproject.toml": _PYPROJECT.format(name="textutils"),
            ".gitignore": _GITIGNORE,
            "textutils/__init__.py": "",
            "textutils/strings.py": _STRINGS,
            "tests/test_strings.py": _STRINGS_TESTS,
        },
    ),
]

# --- todo: a command-line script; `list` numbers from 0 while `done` counts from 1 ----------

_TODO = '''"""A tiny to-do list for the terminal."""

import argparse

from todolib.storage import load_tasks, save_tasks


def build_parser():
    parser = argparse.ArgumentParser(prog="todo")
    sub = parser.add_subparsers(dest="command", required=True)
    add = sub.add_parser("add", help="add a task")
    add.add_argument("text")
    sub.add_parser("list", help="show the tasks")
    done = sub.add_parser("done", help="mark a task as done")
    done.add_argument("number", type=int)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    tasks = load_tasks()
    if args.command == "add":
        tasks.append({"text": args.text, "done": False})
        save_tasks(tasks)
    elif args.command == "list":
        for index, task in enumerate(tasks):
            mark = "x" if task["done"] else " "
            print(f"{index}. [{mark}] {task['text']}")
    elif args.command == "done":
        tasks[args.number - 1]["done"] = True
        save_tasks(tasks)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
'''

_STORAGE_FIRST = '''"""Where the tasks live: a JSON file in the home directory."""

import json
from pathlib import Path


def tasks_file():
    return Path.home() / ".todo.json"


def load_tasks():
    path = tasks_file()
    if not path.exists():
        return []
    return json.loads(path.read_text())


def save_tasks(tasks):
    tasks_file().write_text(json.dumps(tasks, indent=2))
'''

_STORAGE_ENV = _STORAGE_FIRST.replace("import json\n", "import json\nimport os\n").replace(
    'return Path.home() / ".todo.json"',
    'return Path(os.environ.get("TODO_FILE") or Path.home() / ".todo.json")',
)

TODO: list[Commit] = [
    (
        "A to-do list for the terminal",
        {
            "README.md": '# todo\n\nA tiny to-do list: `python todo.py add "buy milk"`, '
            "`python todo.py list`, `python todo.py done 1`.\n",
            ".gitignore": _GITIGNORE,
            "todo.py": _TODO,
            "todolib/__init__.py": "",
            "todolib/storage.py": _STORAGE_FIRST,
        },
    ),
    (
        "Read the tasks file from TODO_FILE when it is set",
        {"todolib/storage.py": _STORAGE_ENV},
    ),
]

FIXTURES: dict[str, list[Commit]] = {"calc": CALC, "textutils": TEXTUTILS, "todo": TODO}

# --- vendored open-source projects ----------------------------------------------------------

REPOS = Path(__file__).with_name("repos")
_NOT_VENDORED = {"SOURCE"}  # the note of where the files came from stays out of the repository


@dataclass(frozen=True)
class Vendored:
    """A project under `repos/<name>/`, committed in steps: each step takes the files under its
    prefixes that no earlier step took; the last step takes all the rest."""

    name: str
    history: tuple[tuple[str, tuple[str, ...]], ...]

    def files(self) -> list[str]:
        root = REPOS / self.name
        return sorted(
            str(p.relative_to(root))
            for p in root.rglob("*")
            if p.is_file() and p.name not in _NOT_VENDORED and "__pycache__" not in p.parts
        )


VENDORED: dict[str, Vendored] = {
    v.name: v
    for v in (
        Vendored(
            "inflection",
            (
                (
                    "Port the Rails inflector: camelize, underscore, pluralize and friends",
                    ("inflection/", "LICENSE", "setup.py", "setup.cfg"),
                ),
                ("Add tests for every inflection", ("test_inflection.py",)),
                ("Write the README", ()),
            ),
        ),
        Vendored(
            "jsonpointer",
            (
                ("Resolve JSON pointers (RFC 6901)", ("jsonpointer.py", "LICENSE.txt", "AUTHORS")),
                ("Add the jsonpointer command", ("bin/",)),
                ("Add the unit tests", ("tests.py",)),
                ("Packaging and README", ()),
            ),
        ),
        Vendored(
            "hashids",
            (
                ("Implement the hashids algorithm", ("hashids.py", "LICENSE")),
                ("Test encode/decode and the legacy API", ("test/",)),
                ("Package with flit; README", ()),
            ),
        ),
        Vendored(
            "dj_database_url",
            (
                (
                    "Parse DATABASE_URL into a Django DATABASES entry",
                    ("dj_database_url/", "LICENSE"),
                ),
                ("Add tests for every scheme", ("tests/",)),
                ("Packaging and README", ()),
            ),
        ),
        Vendored(
            "termcolor",
            (
                ("ANSI colours for terminal output", ("src/", "COPYING.txt")),
                ("Add the test suite", ("tests/",)),
                (
                    "CI: tests on every Python, lint with pre-commit",
                    (".github/", ".pre-commit-config.yaml", "tox.ini"),
                ),
                ("Packaging, README and changelog", ()),
            ),
        ),
        Vendored(
            "semver",
            (
                ("Version: parse, compare and bump semantic versions", ("src/", "LICENSE.txt")),
                ("Tests for parsing, comparing, bumping and the command", ("tests/",)),
                ("Packaging, README and changelog", ()),
            ),
        ),
        Vendored(
            "parse",
            (
                ("parse(): the opposite of format()", ("parse/", "LICENSE")),
                ("Tests for parsing, searching and the field types", ("tests/",)),
                ("Packaging and README", ()),
            ),
        ),
        Vendored(
            "docopt",
            (
                (
                    "Parse arguments from the usage message; examples",
                    ("docopt.py", "LICENSE-MIT", "examples/"),
                ),
                ("Add tests for patterns, options and arguments", ("tests/",)),
                ("Packaging and README", ()),
            ),
        ),
    )
}


def _vendored_commits(spec: Vendored) -> list[tuple[str, list[str]]]:
    left = spec.files()
    steps: list[tuple[str, list[str]]] = []
    for index, (subject, prefixes) in enumerate(spec.history):
        last = index == len(spec.history) - 1
        taken = [f for f in left if last or any(f == p or f.startswith(p) for p in prefixes)]
        if not taken:
            raise ValueError(f"{spec.name}: the step {subject!r} takes no file")
        left = [f for f in left if f not in taken]
        steps.append((subject, taken))
    return steps


# --- variants: a fixture plus commits of their own -----------------------------------------

Edit = tuple[str, str, str]  # path, text that must be there exactly once, its replacement


@dataclass(frozen=True)
class Variant:
    name: str
    base: str
    commits: tuple[tuple[str, tuple[Edit, ...]], ...]


VARIANTS: dict[str, Variant] = {}


def register(*variants: Variant) -> None:
    for variant in variants:
        if variant.name in VARIANTS and VARIANTS[variant.name] != variant:
            raise ValueError(f"two variants are named {variant.name}")
        VARIANTS[variant.name] = variant


def root_of(name: str) -> str:
    """The fixture a variant is made from, through its bases; a fixture's own name otherwise."""
    while name in VARIANTS:
        name = VARIANTS[name].base
    return name


def names() -> list[str]:
    return [*FIXTURES, *VENDORED, *VARIANTS]


def git(repo: Path, *args: str) -> str:
    out = subprocess.run([*GIT, *args], cwd=repo, capture_output=True, text=True, check=True)
    return out.stdout


def _commit(repo: Path, subject: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", subject)


def _apply(repo: Path, edits: tuple[Edit, ...], variant: str) -> None:
    for rel, old, new in edits:
        path = repo / rel
        text = path.read_text()
        if text.count(old) != 1:
            raise ValueError(f"variant {variant}: {rel} holds {text.count(old)} copies of {old!r}")
        path.write_text(text.replace(old, new))


def _build(name: str, repo: Path) -> None:
    if name in FIXTURES:
        for subject, files in FIXTURES[name]:
            for rel, text in files.items():
                path = repo / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
            _commit(repo, subject)
    elif name in VENDORED:
        source = REPOS / name
        (repo / ".gitignore").write_text(_GITIGNORE)
        for subject, files in _vendored_commits(VENDORED[name]):
            for rel in files:
                path = repo / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes((source / rel).read_bytes())
                path.chmod((source / rel).stat().st_mode & 0o777)
            _commit(repo, subject)
    elif name in VARIANTS:
        variant = VARIANTS[name]
        _build(variant.base, repo)
        for subject, edits in variant.commits:
            _apply(repo, edits, name)
            _commit(repo, subject)
    else:
        raise KeyError(f"no fixture {name}; fixtures: {', '.join(names())}")


def make(name: str, parent: Path) -> Path:
    """A new git repository `parent/name` holding the fixture's commits, in order."""
    repo = parent / name
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    _build(name, repo)
    return repo
