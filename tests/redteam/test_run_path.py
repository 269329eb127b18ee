"""Which way this run of the suite mounts the copy-on-write views, checked on the real CLI and
daemon: every other attack here is refuted only on the path this says.

As root, views are mounted directly. As any other user (`.ci/redteam-user`, which sets
SMOL_REDTEAM_UNPRIVILEGED=1), the CLI and the daemon enter a user and mount namespace of their
own at start (base/userns.py), whose uid map is the user's one id; with SMOL_REDTEAM_FALLBACK=1
as well, every Python starts with a thread running, so neither can enter one and util-linux's
`unshare` and `mount` mount each view (overlay.py). A run that claims to be unprivileged as
root, or that lands on another path than it claims, fails here.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.support.lsp import Recorder, start_daemon

from conftest import make_repo

from .harness import Victim, smol
from .test_attack_daemon import env_for

UNPRIVILEGED = bool(os.environ.get("SMOL_REDTEAM_UNPRIVILEGED"))
FALLBACK = bool(os.environ.get("SMOL_REDTEAM_FALLBACK"))

#: The initial user namespace's map, as any process outside a namespace of its own shows it.
HOST_MAP = ["0", "0", "4294967295"]


def claimed_path() -> str:
    """How doctor must say views are mounted in this run."""
    if os.geteuid() == 0:
        assert not UNPRIVILEGED, "SMOL_REDTEAM_UNPRIVILEGED is set but the suite runs as root"
        return "mounted by us as root"
    if FALLBACK:
        return "mounted by unshare and mount: threads were already running at start-up"
    return "mounted by us in a user namespace of our own"


def in_a_namespace_of_its_own() -> bool:
    return os.geteuid() != 0 and not FALLBACK


def test_doctor_names_the_path_this_run_is_on(tmp_path: Path, victim: Victim) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# Sample\n"})
    result = smol(repo, victim, "doctor", "--json", "--repo", str(repo))
    checks = {check["name"]: check for check in json.loads(result.stdout)}
    containment = checks["containment"]
    assert containment["status"] == "ok", containment
    assert f"({claimed_path()})" in containment["detail"], containment


async def test_the_daemon_is_in_a_namespace_of_its_own_exactly_when_not_root(
    tmp_path: Path, victim: Victim
) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# Sample\n"})
    client = await start_daemon(repo, Recorder(), env=env_for(victim, tmp_path), cwd=repo)
    try:
        server = client._server
        assert server is not None
        uid_map = Path(f"/proc/{server.pid}/uid_map").read_text().split()
        status = Path(f"/proc/{server.pid}/status").read_text()
    finally:
        await client.shutdown_session()
    uid = str(os.geteuid())
    assert f"\nUid:\t{uid}\t{uid}\t{uid}\t{uid}\n" in status, status
    if in_a_namespace_of_its_own():
        assert uid_map == [uid, uid, "1"], uid_map  # the user's one id, mapped to itself
    else:
        assert uid_map == HOST_MAP, uid_map
