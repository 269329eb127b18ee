"""A user and mount namespace of our own (base/userns.py), by its effect, as another user than
root: views mounted by us with one mount(2), the command still the user without capabilities,
files the user's on the host, mounts never seen by the host, and the fallback said in words.

The scripts run as nobody (uid 65534) under the system's Python, each in a process of its own:
entering a namespace cannot be undone, so never in pytest's process.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.support.containment import (
    NOBODY,
    as_nobody,
    finished_as_nobody,
    nobody_dir,
    require_bwrap,
)

pytestmark = pytest.mark.usefixtures("bwrap")


@pytest.fixture
def bwrap() -> None:
    require_bwrap()


INSIDE = """
import os, sys
from pathlib import Path
from smol_instruments.base import userns
print(userns.enter(), os.getuid(), os.getgid())
from smol_instruments.base.containment import Containment, probe_view
from smol_instruments.base.overlay import View
from smol_instruments.base.process import run_process
repo = Path(sys.argv[1])
print(probe_view(repo).detail)
view = View.create(repo)
script = ("id -u; id -g; grep CapEff /proc/self/status; echo changed >> a.txt; "
          "mount -t tmpfs none /tmp 2>/dev/null && echo MOUNTED || echo refused")
done = run_process(["sh", "-c", script], cwd=repo, timeout=60,
                   contain=Containment(repo, view=view))
print(" ".join(done.stdout.split()))
bare = run_process(["grep", "CapEff", "/proc/self/status"], cwd=repo, timeout=60)
print(" ".join(bare.stdout.split()))
(Path(os.environ["HOME"]) / "made-by-us").write_text("ours")
print(view.upper)
print(view.mount_here(), flush=True)
sys.stdin.readline()
"""


def test_in_a_namespace_of_our_own_we_mount_the_view_and_the_command_is_still_the_user() -> None:
    with nobody_dir() as nobody:
        process = as_nobody(INSIDE, nobody, stdin=subprocess.PIPE)
        assert process.stdout is not None and process.stdin is not None
        lines = [process.stdout.readline().strip() for _ in range(6)]
        if process.poll() not in (None, 0):
            stderr = process.stderr.read() if process.stderr else ""
            if "ModuleNotFoundError" in stderr or "Permission denied" in stderr:
                pytest.skip(f"the package is not readable by another user here: {stderr[-200:]}")
        try:
            assert lines[0] == f"True {NOBODY} {NOBODY}", lines  # our ids map to themselves
            assert lines[1] == (
                "overlayfs views work (mounted by us in a user namespace of our own)"
            ), lines
            # The command: the user's uid and gid, no capability, no mount.
            assert lines[2] == f"{NOBODY} {NOBODY} CapEff: 0000000000000000 refused", lines
            # A program we start uncontained: execve(2) dropped our namespace's capabilities.
            assert lines[3] == "CapEff: 0000000000000000", lines
            upper, merged = Path(lines[4]), lines[5]
            # What the command and what we wrote belong to the user on the host.
            assert (upper / "a.txt").read_text() == "original\nchanged\n"
            assert (upper / "a.txt").stat().st_uid == NOBODY
            assert (upper / "a.txt").stat().st_gid == NOBODY
            assert (nobody / "made-by-us").stat().st_uid == NOBODY
            assert (nobody / "repo" / "a.txt").read_text() == "original\n"
            # The view is mounted in the process's namespace, and not on the host.
            theirs = Path(f"/proc/{process.pid}/mountinfo").read_text()
            assert f" {merged} " in theirs
            assert merged not in Path("/proc/self/mountinfo").read_text()
        finally:
            process.stdin.write("\n")
            process.stdin.close()
            process.wait(timeout=60)
        assert process.returncode == 0, process.stderr.read() if process.stderr else ""
        assert merged not in Path("/proc/self/mountinfo").read_text()


THREADED = """
import sys, threading
from pathlib import Path
from smol_instruments.base import userns
threading.Thread(target=threading.Event().wait, daemon=True).start()
print(userns.enter())
from smol_instruments.base.containment import probe_view
print(probe_view(Path(sys.argv[1])).detail)
"""


def test_where_it_cannot_enter_one_the_views_still_work_and_it_says_why() -> None:
    with nobody_dir() as nobody:
        done = finished_as_nobody(THREADED, nobody)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "False",
        "overlayfs views work (mounted by unshare and mount: threads were already running "
        "at start-up)",
    ]


DOCTOR = """
import sys
sys.argv = ["smol-instruments", "doctor", "--json", "--repo", sys.argv[1]]
from smol_instruments.cli.main import main
raise SystemExit(main())
"""


def test_the_cli_enters_one_before_any_thread_and_doctor_says_so() -> None:
    """The real entry point, as the user: doctor's containment check names the path."""
    with nobody_dir() as nobody:
        subprocess.run(["git", "init", "-q", str(nobody / "repo")], check=True)
        subprocess.run(["chown", "-R", f"{NOBODY}:{NOBODY}", str(nobody / "repo")], check=True)
        done = finished_as_nobody(
            DOCTOR, nobody, python=Path(sys.executable), env={"PATH": os.environ["PATH"]}
        )
    stdout, stderr = done.stdout, done.stderr
    assert '"containment"' in stdout, stderr
    assert "mounted by us in a user namespace of our own" in stdout, stdout


DOCKER = """
import os, sys
from pathlib import Path
from smol_instruments.base import userns
print(userns.enter(), flush=True)
from smol_instruments.base.config import load_settings
from smol_instruments.sandbox.docker import DockerSandbox
repo = Path(sys.argv[1])
diff = "--- a/a.txt\\n+++ b/a.txt\\n@@ -1 +1 @@\\n-original\\n+patched\\n"
sandbox = DockerSandbox(load_settings(None, phoenix_enabled=False), repo)
try:
    validation = sandbox.validate(diff, ["cat a.txt && id -u"])
finally:
    sandbox.close()
print(validation.passed, " ".join(validation.checks[0].output.split()))
"""


@pytest.mark.docker
def test_a_socket_reached_through_a_group_is_still_reached_from_our_namespace() -> None:
    """Docker's socket (group docker): the validation runs in a namespace of our own."""
    socket = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock").removeprefix("unix://")
    if not os.path.exists(socket):
        pytest.skip(f"no Docker engine at {socket} (run `. .ci/docker.sh` first)")
    group = os.stat(socket).st_gid
    with nobody_dir() as nobody:
        done = finished_as_nobody(
            DOCKER,
            nobody,
            python=Path(sys.executable),
            groups=(group,),
            env={"PATH": os.environ["PATH"], "DOCKER_HOST": f"unix://{socket}"},
        )
    stdout, stderr = done.stdout, done.stderr
    assert stdout.splitlines() == ["True", f"True patched {NOBODY}"], stdout + stderr


#: A seccomp filter that refuses mount(2) with EPERM and allows everything else, as a kernel
#: that makes a user namespace without capabilities does (AppArmor's restriction of
#: unprivileged user namespaces: unshare(2) works, what needs the namespace's CAP_SYS_ADMIN
#: does not). Installed by the script in its own process before anything else.
NO_MOUNT = """
import ctypes, os, platform, struct, sys
MOUNT = {"x86_64": 165, "aarch64": 40}[platform.machine()]
code = b"".join(struct.pack("HBBI", *op) for op in [
    (0x20, 0, 0, 0),                 # load the system call's number
    (0x15, 0, 1, MOUNT),             # mount?
    (0x06, 0, 0, 0x00050000 | 1),    # then fail with EPERM
    (0x06, 0, 0, 0x7FFF0000),        # else allow
])
buffer = ctypes.create_string_buffer(code)
program = struct.pack("HxxxxxxQ", 4, ctypes.addressof(buffer))
libc = ctypes.CDLL(None, use_errno=True)
assert libc.prctl(38, 1, 0, 0, 0) == 0  # no new privileges
assert libc.prctl(22, 2, ctypes.c_char_p(program), 0, 0) == 0, os.strerror(ctypes.get_errno())
"""

MOUNTLESS = (
    NO_MOUNT
    + """
from smol_instruments.base import userns
# The control: here a user namespace is made, and mounting in it is refused.
pid = os.fork()
if pid == 0:
    made = libc.unshare(0x10000000 | 0x00020000) == 0
    mounted = libc.mount(None, b"/", None, 0x4000 | 0x80000, None) == 0
    os._exit(10 * made + mounted)
print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
before = os.readlink("/proc/self/ns/user")
print(userns.enter(), os.readlink("/proc/self/ns/user") == before)
print(userns.why_not())
"""
)


@pytest.mark.skipif(
    os.uname().machine not in ("x86_64", "aarch64"), reason="the filter names mount(2) by number"
)
def test_where_a_namespace_comes_without_the_right_to_mount_we_stay_where_we_were() -> None:
    with nobody_dir() as nobody:
        done = finished_as_nobody(MOUNTLESS, nobody)
    assert done.returncode == 0, done.stderr
    control, entered, why = done.stdout.splitlines()
    assert control == "10", done.stdout  # a namespace was made, and mounting in it refused
    assert entered == "False True"  # not entered, and still in the user namespace we were in
    assert why.startswith("a user namespace here gives no right to mount: Operation not permitted")
