"""Patches reviewed on the command line, as a user meets them: `run` on a real pseudo-terminal
(hunk by hunk), without a terminal (what is pending and the command that decides it), with
`--yes` (what passed its checks), and `smol-instruments patches ...` for scripts. Judged by the
bytes of the file on disk and what was printed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest
from tests.conftest import make_repo
from tests.support.scripted_model import ScriptedModel

pytestmark = pytest.mark.timeout(300)

SETTINGS = ("MODEL_", "PHOENIX_", "SANDBOX_", "AGENT_", "OTEL_", "APPROVAL_", "LOG_")
LINES = [f"VALUE_{i} = {i}\n" for i in range(30)]
ORIGINAL = "".join(LINES)
#: Two changes far apart: two hunks.
TWO_HUNKS = (
    "--- a/values.py\n+++ b/values.py\n"
    "@@ -2,3 +2,3 @@\n VALUE_1 = 1\n-VALUE_2 = 2\n+VALUE_2 = 200\n VALUE_3 = 3\n"
    "@@ -25,3 +25,3 @@\n VALUE_24 = 24\n-VALUE_25 = 25\n+VALUE_25 = 2500\n VALUE_26 = 26\n"
)
FIRST_ONLY = ORIGINAL.replace("VALUE_2 = 2\n", "VALUE_2 = 200\n", 1)
SECOND_ONLY = ORIGINAL.replace("VALUE_25 = 25\n", "VALUE_25 = 2500\n")


def _turns(final: str = "I changed VALUE_2 and VALUE_25.") -> list[str]:
    return [
        "```python\nprint(propose_patch_unified(diff="
        + repr(TWO_HUNKS)
        + ', description="bigger values"))\n```',
        f'```python\nfinal_answer("{final}")\n```',
    ]


@pytest.fixture
def values_repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"values.py": ORIGINAL})


def _env(model: ScriptedModel, **extra: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(SETTINGS)}
    base.update({"PHOENIX_ENABLED": "false", "SANDBOX_BACKEND": "none", "NO_COLOR": "1"})
    base.update(model.env())
    base.update(extra)
    return base


def cli(repo: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "smol_instruments", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=repo,
        input="",
        timeout=240,
    )


def test_on_a_terminal_each_hunk_is_asked_accept_one_reject_the_other(values_repo: Path) -> None:
    with ScriptedModel(_turns()) as model:
        child = pexpect.spawn(
            sys.executable,
            ["-m", "smol_instruments", "run", "--repo", str(values_repo), "make the values bigger"],
            env=_env(model),
            cwd=str(values_repo),
            encoding="utf-8",
            timeout=120,
            dimensions=(50, 200),
        )
        child.expect(r"Hunk 0\? ")
        assert "VALUE_2 = 200" in (child.before or "")
        child.sendline("a")
        child.expect(r"Hunk 1\? ")
        assert "VALUE_25 = 2500" in (child.before or "")
        child.sendline("r")
        child.expect(pexpect.EOF)
        shown = child.before or ""
        child.close()
    assert (values_repo / "values.py").read_bytes() == FIRST_ONLY.encode()
    said = " ".join(shown.split())  # as printed, whatever the terminal's width
    assert "is partial: hunk 0 accepted (written to values.py); hunk 1 rejected" in said
    assert child.exitstatus == 0, shown


def test_without_a_terminal_it_says_what_is_pending_and_how_to_decide(values_repo: Path) -> None:
    with ScriptedModel(_turns()) as model:
        result = cli(values_repo, "run", "--json", "make the values bigger", env=_env(model))
    assert (values_repo / "values.py").read_bytes() == ORIGINAL.encode()
    data = json.loads(result.stdout)
    [patch] = data["patches"]
    assert patch["status"] == "pending" and [h["status"] for h in patch["hunks"]] == ["pending"] * 2
    assert "nothing was written" in data["answer"]
    assert f"smol-instruments patches accept {patch['id']} --repo {values_repo}" in data["answer"]

    # ... and that command, run as printed, decides it: one hunk, then the other
    run = _env_plain()
    shown = cli(values_repo, "patches", "show", patch["id"], env=run)
    assert shown.returncode == 0 and "(hunk 0)" in shown.stdout and "(hunk 1)" in shown.stdout
    listed = json.loads(cli(values_repo, "patches", "list", "--json", env=run).stdout)
    assert [p["id"] for p in listed] == [patch["id"]]
    accepted = cli(values_repo, "patches", "accept", patch["id"], "--hunk", "1", env=run)
    assert accepted.returncode == 0, accepted.stderr
    assert (values_repo / "values.py").read_bytes() == SECOND_ONLY.encode()
    rejected = cli(values_repo, "patches", "reject", patch["id"], env=run)
    assert rejected.returncode == 0 and "rejected" in rejected.stdout
    assert (values_repo / "values.py").read_bytes() == SECOND_ONLY.encode()
    again = cli(values_repo, "patches", "accept", patch["id"], env=run)
    assert again.returncode == 2 and "no hunk of it is pending" in again.stderr
    assert json.loads(cli(values_repo, "patches", "list", "--json", env=run).stdout) == []


def _env_plain() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(SETTINGS)}


def test_yes_accepts_a_patch_whose_checks_passed(values_repo: Path) -> None:
    with ScriptedModel(_turns()) as model:
        result = cli(
            values_repo,
            "run",
            "--yes",
            "--json",
            "make the values bigger",
            env=_env(model, SANDBOX_BACKEND="local"),
        )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert [p["status"] for p in data["patches"]] == ["accepted"]
    both = FIRST_ONLY.replace("VALUE_25 = 25\n", "VALUE_25 = 2500\n")
    assert (values_repo / "values.py").read_bytes() == both.encode()


def test_yes_does_not_accept_what_was_not_checked_and_says_so(values_repo: Path) -> None:
    with ScriptedModel(_turns()) as model:
        result = cli(values_repo, "run", "--yes", "make the values bigger", env=_env(model))
    assert (values_repo / "values.py").read_bytes() == ORIGINAL.encode()
    assert "not accepted by --yes: it was not checked" in result.stdout
    assert "nothing was written" in result.stdout.lower()


def test_show_draws_escape_sequences_in_a_patch_visibly(values_repo: Path) -> None:
    hostile = "--- a/values.py\n+++ b/values.py\n@@ -1,1 +1,1 @@\n-VALUE_0 = 0\n+VALUE_0 = 0  # \x1b[2K\x1b[8mhidden\u202e\n"
    turns = [
        "```python\nprint(propose_patch_unified(diff=" + repr(hostile) + "))\n```",
        '```python\nfinal_answer("done")\n```',
    ]
    with ScriptedModel(turns) as model:
        result = cli(values_repo, "run", "--json", "change VALUE_0", env=_env(model))
    [patch] = json.loads(result.stdout)["patches"]
    shown = cli(values_repo, "patches", "show", patch["id"], env=_env_plain())
    assert "\x1b" not in shown.stdout and "\u202e" not in shown.stdout
    assert "␛[2K␛[8mhidden⟨U+202E⟩" in shown.stdout


def test_a_bad_patch_id_is_one_line_with_the_pending_ones(values_repo: Path) -> None:
    result = cli(values_repo, "patches", "accept", "p000000", env=_env_plain())
    assert result.returncode == 2
    assert "no patch with id 'p000000'" in result.stderr
    assert "Traceback" not in result.stderr
