"""Commands change the repository without review: a corpus of commands that must never write
the repository unasked — formatters and fixers, test runners that import or run the
repository's own code, build tools, options that name an output file, plain file commands —
each run through `smol-instruments tool run_cmd` with no terminal and no `--yes` (so whatever
the policy does not allow outright is refused), each in a fresh copy of the project.

An attack is judged by its target file: its bytes, its mode and whether it exists, before and
after. What an allowed command writes must come back for review (a proposal the user accepts)
and never land on disk by itself. The control runs each command straight in bash on an
identical project: the target changes, so every command really writes.
"""

from __future__ import annotations

import json
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from conftest import git, make_repo

from .harness import Victim, marked, smol

pytestmark = pytest.mark.timeout(900)

ESCAPES = "escapes today: an allowed command writes the repository without review"

#: A script line that leaves `name` in the repository (Python, no shell quoting needed).
WRITE = "import pathlib; pathlib.Path({name!r}).write_text('written unasked')"

PROJECT = {
    "README.md": "# Sample\n\nA tiny project for tests.\n",
    "app/__init__.py": "",
    "app/calc.py": "def add(a, b):\n    return a + b\n",
    "tests/test_calc.py": "from app.calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
    "pyproject.toml": '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
    "dirty.txt": "committed\n",
    "run.sh": "echo hi\n",
    "docs/keep.md": "documentation\n",
    "lint_me.py": "import os\nimport sys\n\nprint( sys.argv )\n",
    "tests/test_tmp.py": "def test_tmp(tmp_path):\n    assert tmp_path.is_dir()\n",
    "change.diff": (
        "--- a/README.md\n+++ b/README.md\n@@ -1,3 +1,3 @@\n-# Sample\n+# Patched\n"
        " \n A tiny project for tests.\n"
    ),
    ".gitignore": "*.log\n",
}


@dataclass(frozen=True)
class Write:
    name: str
    command: str
    #: The file whose state the command changes.
    target: str
    #: Files the project ships for this attack (beside PROJECT).
    files: dict[str, str] = field(default_factory=dict)


WRITES = [
    # Allowed today: test runners, linters and build tools that run or apply what the
    # repository says.
    Write(
        "pytest-conftest",
        "python -m pytest -q",
        "by-conftest.txt",
        {"conftest.py": WRITE.format(name="by-conftest.txt") + "\n"},
    ),
    Write("pytest-debug-file", "python -m pytest -q --debug=README.md", "README.md"),
    Write("ruff-fix-only", "ruff check --fix-only .", "lint_me.py"),
    Write(
        "ruff-fix-in-config",
        "ruff check .",
        "lint_me.py",
        {"ruff.toml": "fix = true\n"},
    ),
    Write(
        "make-makefile-on-stdin",
        "make -f - test < recipe.mk",
        "by-make-stdin.txt",
        {"recipe.mk": "test:\n\ttouch by-make-stdin.txt\n"},
    ),
    Write(
        "make-test",
        "make test",
        "by-make-test.txt",
        {"Makefile": "test:\n\ttouch by-make-test.txt\n"},
    ),
    Write(
        "make-dry-run-plus-line",
        "make -n test",
        "by-make-n.txt",
        {"Makefile": "test:\n\t+touch by-make-n.txt\n"},
    ),
    Write(
        "make-question-shell",
        "make -q test",
        "by-make-q.txt",
        {"Makefile": "X := $(shell touch by-make-q.txt)\ntest:\n\t@true\n"},
    ),
    Write("make-touch", "make -t build.out", "build.out", {"Makefile": "build.out:\n\t@true\n"}),
    Write(
        "npm-test",
        "npm test",
        "by-npm-test.txt",
        {
            "package.json": json.dumps(
                {
                    "scripts": {
                        "test": "node -e \"require('fs').writeFileSync('by-npm-test.txt','x')\""
                    }
                }
            )
        },
    ),
    Write(
        "npm-run-build",
        "npm run build",
        "by-npm-build.txt",
        {
            "package.json": json.dumps(
                {
                    "scripts": {
                        "build": "node -e \"require('fs').writeFileSync('by-npm-build.txt','x')\""
                    }
                }
            )
        },
    ),
    Write(
        "unittest-discovery",
        "python -m unittest",
        "by-unittest.txt",
        {"test_writes.py": WRITE.format(name="by-unittest.txt") + "\n"},
    ),
    Write(
        "doctest-of-a-text-file",
        "python3 -m doctest README.md",
        "by-doctest.txt",
        {"README.md": f"# Sample\n\n>>> {WRITE.format(name='by-doctest.txt')}\n15\n"},
    ),
    Write(
        "mypy-plugin",
        "mypy -c 'x = 1'",
        "by-mypy.txt",
        {
            "mypy.ini": "[mypy]\nplugins = ./mypy_plugin.py\n",
            "mypy_plugin.py": WRITE.format(name="by-mypy.txt")
            + "\nfrom mypy.plugin import Plugin\n\n\ndef plugin(version):\n    return Plugin\n",
        },
    ),
    Write("pydoc-writes-html", "python -m pydoc -w app", "app.html"),
    Write("touch", "touch by-touch.txt", "by-touch.txt"),
    Write("mkdir", "mkdir by-mkdir", "by-mkdir"),
    # Asked today (refused with nobody to ask): plain writes, git, options naming outputs.
    Write("sed-in-place", "sed -i 's/Sample/Hacked/' README.md", "README.md"),
    Write("redirect", "echo hacked > README.md", "README.md"),
    Write("tee", "tee README.md < /dev/null", "README.md"),
    Write("cp", "cp dirty.txt README.md", "README.md"),
    Write("mv", "mv README.md gone.md", "README.md"),
    Write("rm", "rm README.md", "README.md"),
    Write("truncate", "truncate -s 0 README.md", "README.md"),
    Write("dd", "dd if=/dev/null of=README.md", "README.md"),
    Write("patch", "patch -p1 < change.diff", "README.md"),
    Write("git-apply", "git apply change.diff", "README.md"),
    Write("git-checkout", "git checkout -- dirty.txt", "dirty.txt"),
    Write("git-stash", "git stash", "dirty.txt"),
    Write("git-clean", "git clean -fdx", "untracked.txt", {}),
    Write("pytest-basetemp", "python -m pytest -q --basetemp=docs", "docs/keep.md"),
    Write("pytest-junitxml", "python -m pytest -q --junitxml=README.md", "README.md"),
    Write("ruff-fix", "ruff check --fix .", "lint_me.py"),
    Write("ruff-format", "ruff format .", "lint_me.py"),
    Write("gzip", "python -m gzip README.md", "README.md.gz"),
    Write("chmod", "chmod +x run.sh", "run.sh"),
    Write("find-delete", "find . -name '*.log' -delete", "kept.log"),
]

#: Writes that land today, unasked.
ESCAPING: set[str] = set()


def project_for(root: Path, attack: Write) -> Path:
    """A fresh project with what this attack ships, a dirty file and untracked files."""
    repo = make_repo(root, {**PROJECT, **attack.files})
    (repo / "dirty.txt").write_text("committed\nand changed since\n")
    (repo / "untracked.txt").write_text("not yet added\n")
    (repo / "kept.log").write_text("a log the user keeps\n")
    return repo


def state(path: Path) -> tuple[bool, bytes | None, int | None]:
    """Whether `path` exists, its bytes (a file) and its mode."""
    if not path.exists() and not path.is_symlink():
        return (False, None, None)
    data = path.read_bytes() if path.is_file() else None
    return (True, data, path.stat().st_mode & 0o777)


@dataclass
class Ran:
    before: tuple[bool, bytes | None, int | None]
    after: tuple[bool, bytes | None, int | None]
    shown: dict[str, Any]


def through_the_tool(base: Path, attack: Write) -> Ran:
    victim = Victim.create(base / "home")
    repo = project_for(base / "repo", attack)
    before = state(repo / attack.target)
    result = smol(
        repo, victim, "tool", "run_cmd", "--args", json.dumps({"command": attack.command})
    )
    try:
        line = json.loads(result.stdout)
    except ValueError:
        line = {"stdout": result.stdout[-800:], "stderr": result.stderr[-800:]}
    shown = {k: line.get(k) for k in ("verdict", "rule", "approval", "exit_code", "error")}
    return Ran(before, state(repo / attack.target), shown)


def straight(base: Path, attack: Write) -> Ran:
    victim = Victim.create(base / "home")
    repo = project_for(base / "repo", attack)
    before = state(repo / attack.target)
    done = subprocess.run(
        ["bash", "-c", attack.command],
        cwd=repo,
        env=victim.env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return Ran(before, state(repo / attack.target), {"stderr": done.stderr[-500:]})


def run_all(base: Path, how: Any) -> dict[str, Ran]:
    """Every attack in its own project, two at a time."""
    git(base, "--version")  # git is there before threads start
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {a.name: pool.submit(how, base / a.name, a) for a in WRITES}
        return {name: future.result() for name, future in futures.items()}


@pytest.fixture(scope="module")
def tool_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Ran]:
    return run_all(tmp_path_factory.mktemp("writes"), through_the_tool)


@pytest.fixture(scope="module")
def straight_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Ran]:
    return run_all(tmp_path_factory.mktemp("writes-straight"), straight)


@pytest.mark.parametrize(
    "attack",
    marked(WRITES, ESCAPING, ESCAPES),
)
def test_a_command_run_unasked_does_not_change_the_repository(
    attack: Write, tool_runs: dict[str, Ran]
) -> None:
    ran = tool_runs[attack.name]
    assert ran.after == ran.before, (
        f"`{attack.command}` changed {attack.target} unasked: {ran.before[:1]} -> "
        f"{ran.after[:1]}; result: {ran.shown}"
    )


@pytest.mark.parametrize("attack", WRITES, ids=lambda a: a.name)
def test_control_the_command_writes_when_run_straight(
    attack: Write, straight_runs: dict[str, Ran]
) -> None:
    ran = straight_runs[attack.name]
    assert ran.after != ran.before, f"`{attack.command}` wrote nothing: {ran.shown}"
