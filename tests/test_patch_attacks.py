"""Patches as an attacker uses them, judged by effect: a secret's text, a file outside changed.

A hostile model proposes diffs that add a symbolic link to a secret, change a file's mode to
executable, or write through a link; a hostile process plants a pending patch naming a file
outside the repository in the patch store's directory. Through the command line and through
the daemon, the secret's text appears nowhere and the outside file never changes.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.support.lsp import Recorder, _plain, daemon_env, start_daemon
from tests.support.scripted_model import ScriptedModel, Turn

from smol_instruments.base.config import Settings
from smol_instruments.patches.model import FileChange, Patch
from smol_instruments.patches.store import PatchStore

SECRET = "ssh-ed25519 AAAA-the-secret-key-material"

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "secret" / "id_ed25519"
    path.parent.mkdir()
    path.write_text(SECRET + "\n")
    return path


def cli(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    names = {name.upper() for name in Settings.model_fields}
    env = {k: v for k, v in os.environ.items() if k.upper() not in names}
    env.update({"SANDBOX_BACKEND": "none", "PHOENIX_ENABLED": "false"})
    return subprocess.run(
        [sys.executable, "-m", "smol_instruments", "tool", *args, "--repo", str(repo)],
        cwd=repo,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


def propose(repo: Path, diff: str) -> tuple[dict[str, Any], str]:
    result = cli(repo, "propose_patch_unified", "--args", json.dumps({"diff": diff}))
    return json.loads(result.stdout), result.stdout + result.stderr


def symlink_diffs(secret: Path) -> list[str]:
    target = str(secret)
    return [
        # A new symbolic link, git style: applying it and reading back would print the secret.
        f"diff --git a/leak b/leak\nnew file mode 120000\n--- /dev/null\n+++ b/leak\n"
        f"@@ -0,0 +1 @@\n+{target}\n\\ No newline at end of file\n",
        # The same with an index line carrying the mode.
        f"diff --git a/leak b/leak\nnew file mode 120000\nindex 0000000..1234567\n"
        f"--- /dev/null\n+++ b/leak\n@@ -0,0 +1 @@\n+{target}\n",
        # An existing link in the tree, edited through its path.
        "--- a/link_secret\n+++ b/link_secret\n@@ -1 +1 @@\n-x\n+y\n",
        # A link inside the repository, still a link.
        "--- a/link_in\n+++ b/link_in\n@@ -1 +1 @@\n-def add(a, b):\n+def add(a, b):  # x\n",
        # A new file under a directory that is a link to the secret's directory.
        "--- /dev/null\n+++ b/link_dir/planted\n@@ -0,0 +1 @@\n+x\n",
    ]


@pytest.mark.parametrize("index", range(5))
def test_a_diff_through_a_symlink_leaks_nothing_and_stores_nothing(
    repo: Path, secret: Path, index: int
) -> None:
    (repo / "link_secret").symlink_to(secret)
    (repo / "link_in").symlink_to(repo / "app" / "calc.py")
    (repo / "link_dir").symlink_to(secret.parent)
    result, output = propose(repo, symlink_diffs(secret)[index])
    assert result["error"] in {"INVALID_ARGUMENT", "PATH_OUTSIDE_REPO"}, result
    assert SECRET not in output
    assert not (repo / "leak").exists() and not os.path.lexists(repo / "leak")
    assert sorted(p.name for p in secret.parent.iterdir()) == ["id_ed25519"]
    store = repo / ".git" / "smol-instruments" / "patches"
    assert not store.exists() or list(store.iterdir()) == []


@pytest.mark.parametrize(
    "diff",
    [
        "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n",
        "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n--- a/run.sh\n"
        "+++ b/run.sh\n@@ -1 +1 @@\n-echo hi\n+echo pwned\n",
        "diff --git a/new.sh b/new.sh\nnew file mode 100755\n--- /dev/null\n+++ b/new.sh\n"
        "@@ -0,0 +1 @@\n+echo pwned\n",
    ],
    ids=["mode-only", "mode-and-text", "new-executable"],
)
def test_a_mode_change_to_executable_is_refused(repo: Path, diff: str) -> None:
    (repo / "run.sh").write_text("echo hi\n")
    result, _ = propose(repo, diff)
    assert result["error"] == "INVALID_ARGUMENT"
    assert "refused" in result["message"] or "not a unified diff" in result["message"]
    assert stat.S_IMODE((repo / "run.sh").stat().st_mode) & 0o111 == 0
    assert (repo / "run.sh").read_text() == "echo hi\n" and not (repo / "new.sh").exists()


def plant(repo: Path, patch_id: str, path: str) -> None:
    """A pending patch written into the store's directory by another process of the user's."""
    store = PatchStore.for_repository(repo).directory
    assert store is not None
    store.mkdir(parents=True, exist_ok=True)
    change = FileChange.between(path, "the user's own file\n", "pwned\n")
    patch = Patch(patch_id, "innocent looking", [change])
    (store / f"{patch_id}.json").write_text(json.dumps(patch.to_dict()))


@pytest.mark.parametrize("kind", ["dotdot", "absolute", "link_dir", "link_file"])
def test_a_planted_patch_outside_the_repo_is_never_applied(
    repo: Path, tmp_path: Path, kind: str
) -> None:
    outside = tmp_path / "outside" / "target.txt"
    outside.parent.mkdir()
    outside.write_text("the user's own file\n")
    (repo / "link_dir").symlink_to(outside.parent)
    (repo / "link_file").symlink_to(outside)
    path = {
        "dotdot": os.path.relpath(outside, repo),
        "absolute": str(outside),
        "link_dir": "link_dir/target.txt",
        "link_file": "link_file",
    }[kind]
    plant(repo, "pevil01", path)
    result = cli(repo, "apply_patch", "--yes", "--args", json.dumps({"patch_id": "pevil01"}))
    assert json.loads(result.stdout)["error"] == "PATCH_NOT_FOUND"
    assert result.stderr.count("pevil01") == 1  # one line says the stored patch was dropped
    assert outside.read_text() == "the user's own file\n"
    listed = cli(repo, "show_patch", "--args", json.dumps({"patch_id": "pevil01"}))
    assert json.loads(listed.stdout)["error"] == "PATCH_NOT_FOUND"


def _block(code: str) -> str:
    return f"Thought: I will do it.\n```python\n{code}\n```"


async def test_the_daemon_never_shows_a_symlinked_secret_or_applies_a_planted_patch(
    repo: Path, tmp_path: Path, secret: Path
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("the user's own file\n")
    plant(repo, "pevil02", os.path.relpath(outside, repo))
    diff = symlink_diffs(secret)[0]
    turns = [
        Turn(_block(f"result = propose_patch_unified(diff={diff!r})\nprint(result)")),
        Turn(_block('print(show_patch(patch_id="pevil02"))')),
        Turn(_block('print(apply_patch(patch_id="pevil02"))')),
        Turn(_block('final_answer("done")')),
    ]
    recorder = Recorder()
    with ScriptedModel(turns) as model:
        client = await start_daemon(repo, recorder, env=daemon_env(model.env(), tmp_path))
        try:
            result = _plain(
                await client.protocol.send_request_async("smol/chat", {"message": "go"})
            )
            assert result["status"] == "completed"
            listing = _plain(await client.protocol.send_request_async("smol/patches", {}))
        finally:
            await client.shutdown_session()
        seen_by_model = json.dumps([r.to_dict() for r in model.requests])
    everything = json.dumps(
        [recorder.events, listing, _plain(recorder.messages), _plain(recorder.edits)]
    )
    assert SECRET not in everything and SECRET not in seen_by_model
    assert "PATCH_NOT_FOUND" in seen_by_model  # the planted patch does not exist for the agent
    assert listing == {"patches": []}
    assert recorder.edits == []
    assert outside.read_text() == "the user's own file\n"
    assert not os.path.lexists(repo / "leak")
