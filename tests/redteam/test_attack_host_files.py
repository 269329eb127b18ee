"""Our own code outside the sandbox against a tree that changes under it, and a patch store the
repository tries to move.

A contained command runs at the same time as the agent's host-side work and may write the
repository: here an attacker process (as such a command would) swaps a folder for a link to the
victim's home and back as fast as it can, while patches are accepted and files are read through
the real command line. Then a `.git` *file* naming a git directory whose `smol-instruments`
entry links out, which once moved the patch store outside, and patches planted where earlier
versions kept them. Each attack has a control showing the link really leads out (a plain
`open` of the same path follows it) and a check that the race really happened.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from conftest import git, make_repo
from smol_instruments.base.git import git_dir

from .harness import Spot, Victim, harm_report, output_of, smol, tool
from .test_attack_patches import plant

pytestmark = pytest.mark.timeout(240)

#: The attacker: swap `folder` for a link to `target` and back until told to stop (or a bound),
#: holding each state for a varying moment so that every step of the victim's work meets both.
SWAPPER = r"""
import os, random, sys, time
root, folder, target, stop = sys.argv[1:5]
path = os.path.join(root, folder)
moved = path + ".real"
swaps, deadline = 0, time.monotonic() + 120
while not os.path.exists(stop) and time.monotonic() < deadline:
    try:
        os.rename(path, moved)
        os.symlink(target, path)
        time.sleep(random.uniform(0, 0.002))
        os.unlink(path)
        os.rename(moved, path)
        swaps += 1
    except OSError as exc:  # the victim changed the tree meanwhile: say so, end as found
        print(f"swapper: {exc}", file=sys.stderr)
        break
    time.sleep(random.uniform(0, 0.002))
print(swaps)
"""


@contextmanager
def swapping(root: Path, folder: str, target: Path) -> Iterator[list[int]]:
    """Run the swapper for the duration of the block; the list gets its swap count."""
    stop = root.parent / f"stop-{folder}"
    proc = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(root), folder, str(target), str(stop)],
        stdout=subprocess.PIPE,
        text=True,
    )
    swaps: list[int] = []
    try:
        yield swaps
    finally:
        stop.touch()
        try:
            out, _ = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()  # our own child, by its handle
            out, _ = proc.communicate()
        swaps.append(int(out.strip() or 0))
    assert not (root / folder).is_symlink(), "the swapper left the link in place"


def snapshot(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def batch(
    repo: Path, victim: Victim, calls: list[tuple[str, dict[str, Any]]], *extra: str
) -> tuple[list[dict[str, Any]], str]:
    """`smol-instruments tool --batch` with one line per call; the results and all output."""
    stdin = "".join(json.dumps({"tool": name, "args": args}) + "\n" for name, args in calls)
    result = smol(
        repo, victim, "tool", "--batch", *extra, stdin=stdin, env={"SANDBOX_BACKEND": "none"}
    )
    return [json.loads(line) for line in result.stdout.splitlines() if line.strip()], output_of(
        result
    )


def test_accepting_patches_while_a_folder_is_swapped_for_a_link_writes_nothing_outside(
    tmp_path: Path, victim: Victim
) -> None:
    spot = victim.spot("accept-race")
    count = 40
    names = [f"f{i}.txt" for i in range(count)]
    repo = make_repo(tmp_path / "repo", {f"pkg/{n}": "v0\n" for n in names})
    for name in names:  # the same lines outside: a plan read through the link would match
        (spot.dir / name).write_text("v0\n")
    before = snapshot(spot.dir)
    proposals, output = batch(
        repo,
        victim,
        [
            ("propose_patch", {"path": f"pkg/{n}", "old_text": "v0", "new_text": "v1"})
            for n in names
        ],
    )
    ids = [p.get("patch_id") for p in proposals]
    assert len(ids) == count and all(ids), output[-1500:]

    with swapping(repo, "pkg", spot.dir) as swaps:
        results, output = batch(
            repo, victim, [("apply_patch", {"patch_id": i}) for i in ids], "--yes"
        )
    # The control: the link the swapper made leads out (a plain write follows it).
    (repo / "elsewhere").symlink_to(spot.dir)
    assert (repo / "elsewhere" / names[0]).read_text() == "v0\n"

    found = spot.harm(output)
    if snapshot(spot.dir) != before:
        found.append(f"files outside the repository changed: {spot.dir}")
    assert found == [], harm_report(found) + "\n" + output[-1500:]
    assert len(results) == count, output[-1500:]
    # Refused, stale, or dropped when the service loaded its store: each met the link.
    met_the_link = [r for r in results if r.get("error") or "stale" in json.dumps(r)]
    assert swaps[0] > 0 and met_the_link, f"the race did not happen: {swaps} swaps"
    # What was accepted was written inside (how many depends on the machine's load).
    accepted = {patch_id for patch_id, r in zip(ids, results, strict=True) if r.get("applied")}
    for patch_id, name in zip(ids, names, strict=True):
        assert ((repo / "pkg" / name).read_text() == "v1\n") == (patch_id in accepted), name
    # The control of the accept itself: with nobody swapping, the next one is written. On a
    # file no patch was written to (one met the link, above): the first and the last may both
    # have been accepted under load, and "v0" is then in neither (a CI run's KeyError).
    last = next(name for patch_id, name in zip(ids, names, strict=True) if patch_id not in accepted)
    results, output = batch(
        repo,
        victim,
        [("propose_patch", {"path": f"pkg/{last}", "old_text": "v0", "new_text": "v2"})],
    )
    results, output = batch(
        repo, victim, [("apply_patch", {"patch_id": results[0]["patch_id"]})], "--yes"
    )
    assert (repo / "pkg" / last).read_text() == "v2\n", output[-1500:]


def test_reading_while_a_folder_is_swapped_for_a_link_never_returns_the_key(
    tmp_path: Path, victim: Victim
) -> None:
    spot = victim.spot("read-race")
    repo = make_repo(tmp_path / "repo", {"pkg/id_rsa": "not a key: a test fixture\n"})
    calls = [
        ("read_file", {"path": "pkg/id_rsa"}),
        ("read_file_snippet", {"path": "pkg/id_rsa", "pattern": "."}),
    ]
    with swapping(repo, "pkg", spot.key.parent) as swaps:
        results, output = batch(repo, victim, calls * 100)
    (repo / "elsewhere").symlink_to(spot.key.parent)
    assert spot.secret in (repo / "elsewhere" / "id_rsa").read_text()  # the control

    found = spot.harm(output)
    assert found == [], harm_report(found) + "\n" + output[-1500:]
    refused = [r for r in results if r.get("error")]
    read = [r for r in results if "not a key" in json.dumps(r)]
    assert swaps[0] > 0 and refused and read, f"the race did not happen: {swaps} swaps"


def dot_git_file_repo(root: Path, spot: Spot) -> Path:
    """A repository whose `.git` is a file naming a git directory inside it, in which the
    entry an earlier version kept its patches under is a link to the victim's folder."""
    repo = make_repo(root, {"README.md": "# Sample\n"})
    os.rename(repo / ".git", repo / ".hidden-git")
    (repo / ".git").write_text("gitdir: .hidden-git\n")
    (repo / ".hidden-git" / "smol-instruments").symlink_to(spot.dir)
    git(repo, "status", "--porcelain")  # git itself takes the file
    return repo


def test_a_dot_git_file_cannot_move_the_patch_store_outside(tmp_path: Path, victim: Victim) -> None:
    spot = victim.spot("dot-git-file")
    repo = dot_git_file_repo(tmp_path / "repo", spot)
    # The control: the git directory the old store lived in is the one the file names, and
    # its store folder is the victim's.
    gdir = git_dir(repo)
    assert gdir is not None
    assert (gdir / "smol-instruments" / "patches").resolve().is_relative_to(spot.dir.resolve())

    result = tool(
        repo,
        victim,
        "propose_patch",
        {"path": "README.md", "old_text": "# Sample", "new_text": "# Sample project"},
    )
    patch_id = json.loads(result.stdout).get("patch_id")
    assert patch_id, output_of(result)
    assert (victim.patch_store(repo) / f"{patch_id}.json").is_file()
    assert (victim.patch_store(repo) / "repository").read_text().strip() == str(repo.resolve())
    found = spot.harm(output_of(result))
    if (spot.dir / "patches").exists():
        found.append(f"the patch store was written outside: {spot.dir / 'patches'}")
    assert found == [], harm_report(found, result)


def test_patches_planted_where_earlier_versions_kept_them_are_not_loaded(
    tmp_path: Path, victim: Victim
) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# Sample\n"})
    planted = plant(repo, "README.md", "# Sample\n", "# Planted\n", "Fix a typo in README.md")
    result = tool(repo, victim, "apply_patch", {"patch_id": planted}, "--yes")
    assert json.loads(result.stdout)["error"] == "PATCH_NOT_FOUND", output_of(result)
    assert (repo / "README.md").read_text() == "# Sample\n"
    # The control: the same record in the user's own store is a patch that applies.
    kept = plant(repo, "README.md", "# Sample\n", "# Planted\n", "x", victim.patch_store(repo))
    result = tool(repo, victim, "apply_patch", {"patch_id": kept}, "--yes")
    assert (repo / "README.md").read_text() == "# Planted\n", output_of(result)
