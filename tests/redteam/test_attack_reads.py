"""Reads outside the repository: another project on the machine (outside the home, which
containment hides, and outside /tmp, which it makes private) holds a secret. Allowed, unasked
commands and the read tools try to print it: by an absolute or relative path handed to a
command that takes files from anywhere (`git diff --no-index`, `git grep --no-index`), through
a link the repository ships (git keeps links), through the repository's own Makefile or tests.

All run in one `tool --batch` (no terminal, no `--yes`); each is judged by the secret's text in
its own result line. The control runs each command straight in bash in the repository: it
prints the secret.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import git, make_repo

from .harness import OTHER_SECRET, Elsewhere, Victim, marked, smol

pytestmark = pytest.mark.timeout(600)

ESCAPES = "escapes today: reads outside the repository"


@dataclass(frozen=True)
class Read:
    name: str
    #: `@S@` the secret file's absolute path, `@R@` the same relative to the repository,
    #: `@D@` the other project's folder.
    command: str
    #: A read tool to call instead of run_cmd (its arguments); the control runs `command`.
    tool: tuple[str, dict[str, str]] | None = None

    def text(self, elsewhere: Elsewhere, repo: Path) -> str:
        return (
            self.command.replace("@S@", str(elsewhere.secret))
            .replace("@R@", os.path.relpath(elsewhere.secret, repo))
            .replace("@D@", str(elsewhere.dir))
        )


READS = [
    # Commands that take a path from anywhere, allowed as read-only.
    Read("git-diff-no-index", "git diff --no-index @S@ /dev/null"),
    Read("git-diff-no-index-relative", "git diff --no-index @R@ /dev/null"),
    Read("git-diff-no-index-reversed", "git diff --no-index /dev/null @S@"),
    # Through a link the repository ships (`outside` -> the other project): plain reads of
    # a path under it are asked; what reads a whole tree, or a path as git does, is not.
    Read("cat-through-a-link", "cat outside/secret.txt"),
    Read("head-through-a-link", "head -c 200 outside/secret.txt"),
    Read("diff-through-a-link", "diff outside/secret.txt /dev/null"),
    Read("git-diff-no-index-through-a-link", "git diff --no-index outside/secret.txt /dev/null"),
    Read("grep-following-links", "grep -R password ."),
    Read("rg-following-links", "rg -L password"),
    # The repository's own code, run by allowed commands.
    Read("make-dry-run-shell", "make -n show"),
    Read("tests-read-elsewhere", "python -m pytest -q -s tests/test_show.py"),
    # Asked today: plain reads of an absolute path outside.
    Read("cat-absolute", "cat @S@"),
    Read("cat-proc-self-root", "cat /proc/self/root@S@"),
    Read("cat-relative", "cat @R@"),
    # The read tools (the path jail) through the link.
    Read("tool-read-file", "cat outside/secret.txt", ("read_file", {"path": "outside/secret.txt"})),
    Read("tool-rg-search", "rg -L password", ("rg_search", {"pattern": "password"})),
    Read(
        "tool-read-file-snippet",
        "cat outside/secret.txt",
        ("read_file_snippet", {"path": "outside/secret.txt", "pattern": "password"}),
    ),
]

#: What leaks today.
ESCAPING: set[str] = set()


def reading_repo(root: Path, elsewhere: Elsewhere) -> Path:
    repo = make_repo(
        root,
        {
            "README.md": "# Sample\n",
            "Makefile": f"show:\n\t@echo $(shell cat {elsewhere.secret})\n",
            "tests/test_show.py": (
                f"def test_show():\n    print(open({str(elsewhere.secret)!r}).read())\n"
            ),
        },
    )
    (repo / "outside").symlink_to(elsewhere.dir)
    git(repo, "add", "outside")
    git(repo, "commit", "-q", "-m", "link to the shared folder")
    return repo


@pytest.fixture(scope="module")
def elsewhere_for_module() -> Iterator[Elsewhere]:
    with Elsewhere.create() as place:
        yield place


@pytest.fixture(scope="module")
def batch(
    tmp_path_factory: pytest.TempPathFactory, elsewhere_for_module: Elsewhere
) -> dict[str, str]:
    """Every read through one `tool --batch`: its result line by attack name."""
    base = tmp_path_factory.mktemp("reads")
    victim = Victim.create(base / "home")
    repo = reading_repo(base / "repo", elsewhere_for_module)
    lines = []
    for read in READS:
        name, arguments = read.tool or (
            "run_cmd",
            {"command": read.text(elsewhere_for_module, repo)},
        )
        lines.append(json.dumps({"tool": name, "args": arguments}))
    result = smol(repo, victim, "tool", "--batch", stdin="\n".join(lines) + "\n", timeout=600)
    out = [line for line in result.stdout.splitlines() if line.strip()]
    assert len(out) == len(READS), result.stderr[-2000:]
    return {read.name: line for read, line in zip(READS, out, strict=True)}


@pytest.mark.parametrize("read", marked(READS, ESCAPING, ESCAPES))
def test_nothing_outside_the_repository_is_read_unasked(read: Read, batch: dict[str, str]) -> None:
    line = batch[read.name]
    assert OTHER_SECRET not in line, f"another project's secret came back: {line[:600]}"


@pytest.mark.parametrize("read", READS, ids=lambda r: r.name)
def test_control_the_command_reads_the_secret_straight(
    read: Read, tmp_path: Path, victim: Victim, elsewhere: Elsewhere
) -> None:
    repo = reading_repo(tmp_path / "repo", elsewhere)
    done = subprocess.run(
        ["bash", "-c", read.text(elsewhere, repo)],
        cwd=repo,
        env=victim.env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert OTHER_SECRET in done.stdout + done.stderr, done.stderr[-800:]
