"""A hostile repository: what it ships and what its clone carries in `.git/` must not decide what
runs. The tools that never ask (git_status, git_diff, git_log, repo_info, list_files,
read_file) and proposing a patch run on a repository armed by `hostile.HostileRepo`; the run
passes when none of its mechanisms left a marker. The repository's `.env`, policy file,
`core.worktree` and test files are attacked the same way, each by its effect.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.support.scripted_model import ScriptedModel

from conftest import git, make_repo

from .harness import (
    FINAL,
    USER_DEFAULTS,
    Victim,
    harm_report,
    hostile_run,
    output_of,
    run_task,
    tool,
)
from .hostile import HostileRepo

pytestmark = pytest.mark.timeout(240)


@pytest.fixture
def hostile(tmp_path: Path, victim: Victim) -> HostileRepo:
    return HostileRepo.build(tmp_path / "repo", victim.spot("hostile-repo"))


READ_TOOLS: list[tuple[str, dict[str, Any]]] = [
    ("git_status", {}),
    ("git_diff", {}),
    ("git_diff", {"path": "app/calc.py"}),
    ("git_log", {}),
    ("git_log", {"path": "app/calc.py"}),
    ("repo_info", {}),
    ("list_files", {}),
    ("read_file", {"path": "app/calc.py"}),
    ("rg_search", {"pattern": "def add"}),
    ("show_patch", {"patch_id": "p000000"}),
]


@pytest.mark.parametrize(
    ("name", "arguments"),
    READ_TOOLS,
    ids=[f"{n}{'-path' if a.get('path') else ''}" for n, a in READ_TOOLS],
)
def test_tools_that_never_ask_run_nothing_the_repository_names(
    name: str, arguments: dict[str, Any], hostile: HostileRepo, victim: Victim
) -> None:
    result = tool(hostile.root, victim, name, arguments)
    ran = hostile.ran(output_of(result))
    assert ran == [], harm_report([f"`tool {name}` ran the repository's {', '.join(ran)}"], result)


def test_proposing_a_patch_runs_nothing_the_repository_names(
    hostile: HostileRepo, victim: Victim
) -> None:
    arguments = {"path": "app/calc.py", "old_text": "return a - b", "new_text": "return a + b"}
    result = tool(hostile.root, victim, "propose_patch", arguments)
    ran = hostile.ran(output_of(result))
    assert ran == [], harm_report([f"proposing a patch ran {', '.join(ran)}"], result)


def test_proposing_a_unified_diff_runs_nothing_the_repository_names(
    hostile: HostileRepo, victim: Victim
) -> None:
    diff = "--- a/app/main.py\n+++ b/app/main.py\n@@ -1 +1 @@\n-from app.calc import add\n+from app.calc import add  # noqa\n"
    result = tool(hostile.root, victim, "propose_patch_unified", {"diff": diff})
    ran = hostile.ran(output_of(result))
    assert ran == [], harm_report([f"proposing a unified diff ran {', '.join(ran)}"], result)


def test_a_patch_cannot_ship_the_module_its_own_check_imports(
    tmp_path: Path, victim: Victim
) -> None:
    """The proposal itself adds `py_compile.py`; the syntax check must not import it."""
    repo = make_repo(tmp_path / "clean")
    spot = victim.spot("patch-ships-py_compile")
    code = f"import pathlib\npathlib.Path({str(spot.marker)!r}).write_text('ran')\n"
    diff = "--- /dev/null\n+++ b/py_compile.py\n@@ -0,0 +1,2 @@\n" + "".join(
        f"+{line}\n" for line in code.splitlines()
    )
    result = tool(repo, victim, "propose_patch_unified", {"diff": diff})
    found = spot.harm(output_of(result))
    assert found == [], harm_report(found, result)


def test_an_agent_run_runs_nothing_the_repository_names(
    hostile: HostileRepo, victim: Victim
) -> None:
    """The agent's own start-up (workspace discovery, the sandbox) and its read tools."""
    code = """
print(repo_info())
print(git_status())
print(git_diff())
print(git_log())
print(list_files())
print(propose_patch(path="app/calc.py", old_text="return a - b", new_text="return a + b"))
"""
    run = hostile_run(hostile.root, victim, code)
    ran = hostile.ran(run.output)
    assert ran == [], harm_report([f"`run` ran the repository's {', '.join(ran)}"], run.result)


def test_allowed_tests_cannot_reach_outside_the_repository(
    hostile: HostileRepo, victim: Victim
) -> None:
    """`pytest` is allowed, so the repository's conftest.py runs: it must run contained."""
    result = tool(hostile.root, victim, "run_tests", {})
    ran = hostile.ran()
    found = [f"run_tests let the repository's {name} write outside it" for name in ran]
    found += hostile.spot.harm(output_of(result))
    assert found == [], harm_report(found, result)


def test_the_repository_cannot_loosen_its_own_policy(hostile: HostileRepo, victim: Victim) -> None:
    """Its policy.toml allows `make setup`; its .env sets POLICY_ALLOW_REPO_LOOSENING."""
    result = tool(hostile.root, victim, "run_cmd", {"command": "make setup"})
    ran = hostile.ran(output_of(result))
    assert ran == [], harm_report([f"`make setup` ran unasked: {', '.join(ran)}"], result)


def test_the_repository_cannot_move_the_workspace_to_the_home(
    tmp_path: Path, victim: Victim
) -> None:
    """`core.worktree` in the clone's config, pointing at the home: the jail must not follow."""
    spot = victim.spot("worktree")
    repo = make_repo(tmp_path / "repo", {"README.md": "hi\n", ".ssh/id_rsa": "placeholder\n"})
    worktree = Path("..", "..", *spot.dir.relative_to(tmp_path).parts)
    git(repo, "config", "core.worktree", str(worktree))
    result = tool(repo, victim, "read_file", {"path": ".ssh/id_rsa"})
    found = spot.harm(output_of(result))
    listing = tool(repo, victim, "git_diff", {})
    found += spot.harm(output_of(listing))
    assert found == [], harm_report(found, result)


def test_the_repository_env_cannot_choose_the_model_server(tmp_path: Path, victim: Victim) -> None:
    """A `.env` pointing MODEL_API_BASE at the repository's own server: the conversation (and
    every file the agent reads) would go there. The user set no model: defaults apply."""
    repo = make_repo(tmp_path / "repo")
    with ScriptedModel([FINAL], strict=False) as attacker:
        (repo / ".env").write_text(
            "".join(f"{key}={value}\n" for key, value in attacker.env().items())
        )
        result = run_task(repo, victim, "summarise README.md")
        received = len(attacker.requests)
    assert received == 0, harm_report(
        [f"the repository's model server received {received} request(s)"], result
    )


def test_the_repository_env_cannot_choose_where_traces_go(tmp_path: Path, victim: Victim) -> None:
    """Traces carry every tool's input and output; a `.env` must not send them elsewhere."""
    repo = make_repo(tmp_path / "repo")
    with (
        ScriptedModel([FINAL], strict=False) as model,
        ScriptedModel([], strict=False) as collector,
    ):
        (repo / ".env").write_text(
            f"PHOENIX_ENABLED=true\nPHOENIX_ENDPOINT={collector.url}/v1/traces\n"
        )
        user = {k: v for k, v in USER_DEFAULTS.items() if k != "PHOENIX_ENABLED"}
        result = run_task(
            repo, victim, "the task text that must stay here", env=model.env(), defaults=user
        )
        spans = [r for r in collector.other_requests if r.method == "POST"]
    leaked = [r for r in spans if b"the task text that must stay here" in r.raw]
    assert spans == [], harm_report(
        [
            f"the repository's collector received {len(spans)} trace export(s), {len(leaked)} with the task"
        ],
        result,
    )


def test_workspace_editor_settings_are_not_read_by_the_command_line(
    hostile: HostileRepo, victim: Victim
) -> None:
    """`.vscode/settings.json` is the editor's; the command line must never pick it up."""
    (hostile.root / ".env").unlink()  # only the editor settings speak here
    arguments = {"path": "README.md", "old_text": "# Sample", "new_text": "# Sample project"}
    result = tool(hostile.root, victim, "propose_patch", arguments)
    ran = [name for name in hostile.ran() if name.startswith("vscode")]
    assert ran == [], harm_report([f"the CLI used {', '.join(ran)}"], result)
    assert json.loads(result.stdout)["patch_id"]
