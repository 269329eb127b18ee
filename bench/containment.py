"""Figures for command containment: what bubblewrap adds to a command, against the same bare.

`true` shows the sandbox's start-up alone; `python -m pytest -q` on the sample project shows
what an ordinary development command pays; ripgrep as `rg_search` runs it (uncontained, no
config, a tool's environment) against the same contained shows what containing it would cost.
All run through the process runner, contained
(in a copy-on-write view of the repository, and what they changed sorted afterwards, as the
shell tools do) and uncontained, alternating. The view is measured on its own: a contained
`true` in a view (mounted, run, sorted, thrown away) against the same with the repository
bound writable in place, as commands ran before the views; and the same against the release
before the views itself (`contain_view_release`: its server package from `git archive`, each
side in a process of its own). The lifeline (the watcher that ends a command with us) too: a
contained `true` with it against the same without it.

Where the view's time goes. Run as root, the daemon mounts the view itself (one mount(2) on a
directory of the view, bound by bubblewrap) and detaches it afterwards: measured in-process at
load 6, making the view's directory 0.4 ms, mkdir and mount 0.8 ms, umount2 0.06 ms, reading
an empty upper layer 0.05 ms; bubblewrap binding the overlay costs no more than binding the
repository (20.7 ms against 23.0 ms, alternating). `contain_view_release`: 0.90-0.95x at load
1-4, 0.81-1.10x at load 4-10 (1.32x before, same script); `contain_view` 0.89-1.26x at
load 3-10 (+0-5 ms), run-to-run noise of the same size. Removing a view's directory
afterwards (on the reaper's thread) waits 15-30 ms on the disk at that load but uses 0.3 ms
of CPU.
Anyone else: the daemon (and the command line) enters a user and mount namespace of its own
at start-up (base/userns.py) and mounts the view itself, as root does. `contain_view_release`'s
"view" side does the same, in its own process; run as uid 65534 (`setpriv`, the bench's
Python readable by that user): 0.93-1.19x in five runs at load 3-6, 1.04-1.23x in eight runs
of 150 rounds at load 4-5.5, against 1.36-1.41x for the same side without the namespace (the
three programs below; a copy of this script with that one line changed) in runs interleaved
with them. Measured in-process there at load 4:
making the view's directory and four directories 0.15 ms (0.3-0.5 ms on an ext4 /tmp; made
ahead on the reaper's thread since, base/overlay.py), the overlay's mount(2) 0.25-0.5 ms (0.13
ms quiet; its options xino/uuid change nothing),
umount2 0.03 ms, reading the empty upper layer 0.13 ms, removing the directory 0.3 ms (on the
reaper's thread); a view 12.1 ms against 10.7 ms with the repository bound in place.
`contain_view` is timed in the bench's own process, which does not enter a namespace: run as
another user it measures the fallback below (1.23-1.46x at load 3-6).
Where no namespace of our own can be entered (user namespaces disabled or filtered, threads
already running; root without CAP_SYS_ADMIN), the view is mounted before bubblewrap by
util-linux: measured at load 10-16 on 2 cores, bubblewrap alone ~50 ms there: `unshare` +5-8 ms, `sh`
+5 ms, `mount` and the overlay +10-13 ms; every program started costs about 5 ms at that
load. Mounting from Python between fork and exec saves the programs but makes Python fork
the whole process instead of vforking: 40-80 ms for a process of the daemon's size. A perl
one-liner doing the same system calls was slower than the three programs.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from .figures import REPO, Figure, _median_alternating

#: The last release before the views (the merge before commands ran in copy-on-write views):
#: its contained `true` ran with the repository bound writable in place.
RELEASE = "6aa6618"

#: One side of `contain_view_release`, in a process of its own: argv 1 the server package
#: to import, 2 the repository, 3 "view" (ours: bench `_timer`) or "release" (that
#: release's `Containment(root)`); a contained `true` timed per line read, the seconds written.
_SIDE = """
import sys, time
from pathlib import Path
server, repo, how = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
sys.path[:0] = [server, str(Path(server).parent)]
if how == "view":  # as the daemon starts (cli/main.py): in a namespace of its own if it can
    from smol_instruments.base import userns
    userns.enter()
from smol_instruments.base.containment import Containment
from smol_instruments.base.process import run_process
if how == "view":
    from bench.containment import _timer
    once = _timer(["true"], repo, "view")
else:
    def once():
        start = time.perf_counter()
        result = run_process(["true"], cwd=repo, timeout=600, contain=Containment(repo))
        if result.exit_code != 0:
            raise SystemExit(result.stderr)
        return time.perf_counter() - start
once()
for _ in sys.stdin:
    print(once(), flush=True)
"""

SAMPLE_PROJECT = REPO / "extension" / "sample-project"


def _sample_git_repo(root: Path) -> Path:
    shutil.copytree(SAMPLE_PROJECT, root)
    for argv in (
        ["git", "init", "-q", "-b", "main"],
        ["git", "add", "-A"],
        [
            "git",
            "-c",
            "user.name=Bench",
            "-c",
            "user.email=bench@example.com",
            "commit",
            "-qm",
            "sample",
        ],
    ):
        subprocess.run(argv, cwd=root, check=True, capture_output=True)
    return root


def _timer(argv: list[str], repo: Path, how: str, ok: tuple[int, ...] = (0,)):  # type: ignore[no-untyped-def]
    """`argv` run `how`: "view" (contained in a view, then sorted and thrown away, as
    tools/shell.py runs commands), "direct" (contained, the repository writable in place),
    "read-only" (contained, the repository only read, as git runs) or "bare"."""
    from smol_instruments.base.changes import classify
    from smol_instruments.base.containment import Containment
    from smol_instruments.base.git import ignored_paths
    from smol_instruments.base.overlay import View
    from smol_instruments.base.process import run_process

    def run() -> float:
        start = time.perf_counter()
        if how == "view":
            with View.create(repo) as view:
                contain = Containment(repo, view=view)
                result = run_process(argv, cwd=repo, timeout=600, contain=contain)
                classify(
                    repo,
                    view.upper,
                    is_ignored=lambda paths: ignored_paths(repo, paths),
                    limit=200_000,
                )
        else:
            contain = {
                "direct": Containment(repo, direct=True),
                "read-only": Containment(repo),
            }.get(how)
            result = run_process(argv, cwd=repo, timeout=600, contain=contain)
        elapsed = time.perf_counter() - start
        if result.exit_code not in ok:
            raise RuntimeError(f"{argv} failed: {result.stderr[-300:]}")
        return elapsed

    return run


def _launch_timer(repo: Path, lifeline: bool):  # type: ignore[no-untyped-def]
    from smol_instruments.base.containment import Containment

    def run() -> float:
        start = time.perf_counter()
        launch = Containment(repo, direct=True).prepare(["true"], lifeline=lifeline)
        try:
            subprocess.run(
                launch.argv,
                env=launch.env,
                pass_fds=launch.pass_fds,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                check=True,
            )
        finally:
            launch.close()
        return time.perf_counter() - start

    return run


def _side(server: Path, repo: Path, how: str) -> tuple[subprocess.Popen[str], Callable[[], float]]:
    """A contained `true` timed in a process importing `server` (`_SIDE`), and its timer."""
    worker = subprocess.Popen(
        [sys.executable, "-I", "-c", _SIDE, str(server), str(repo), how],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )

    def run() -> float:
        assert worker.stdin is not None and worker.stdout is not None
        worker.stdin.write("\n")
        worker.stdin.flush()
        line = worker.stdout.readline()
        if not line:
            raise RuntimeError(f"the {how} side of contain_view_release ended")
        return float(line)

    return worker, run


def _against_release(repo: Path, scratch: Path, rounds: int) -> tuple[float, float] | None:
    """Ours in a view against RELEASE's contained `true`, each in a process of its own,
    alternating; None where this clone does not hold that commit (a shallow one)."""
    archive = subprocess.run(
        ["git", "archive", "--format=tar", RELEASE, "server"], cwd=REPO, capture_output=True
    )
    if archive.returncode != 0:
        return None
    release = scratch / "release"
    release.mkdir()
    subprocess.run(["tar", "-x", "-C", str(release)], input=archive.stdout, check=True)
    ours, view = _side(REPO / "server", repo, "view")
    theirs, old = _side(release / "server", repo, "release")
    try:
        return _median_alternating(view, old, rounds)
    finally:
        for worker in (ours, theirs):
            assert worker.stdin is not None
            worker.stdin.close()
            worker.wait()


#: pytest's exit codes when the tests ran (the sample project has failing tests on purpose).
TESTS_RAN = (0, 1)


def containment_overhead(quick: bool = False) -> list[Figure]:
    from smol_instruments.base.containment import probe

    availability = probe()
    if not availability.works:
        raise RuntimeError(availability.line())
    rounds_git = 3 if quick else 20
    with tempfile.TemporaryDirectory(prefix="smol-bench-contain-") as tmp:
        repo = _sample_git_repo(Path(tmp) / "sample")
        true = ["true"]
        value, baseline = _median_alternating(
            _timer(true, repo, "view"), _timer(true, repo, "bare"), 10 if quick else 60
        )
        viewed, direct = _median_alternating(
            _timer(true, repo, "view"), _timer(true, repo, "direct"), 10 if quick else 100
        )
        released = _against_release(repo, Path(tmp), 10 if quick else 100)
        tied, untied = _median_alternating(
            _launch_timer(repo, True), _launch_timer(repo, False), 10 if quick else 60
        )
        pytest = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        tests, tests_bare = _median_alternating(
            _timer(pytest, repo, "view", TESTS_RAN),
            _timer(pytest, repo, "bare", TESTS_RAN),
            2 if quick else 10,
        )
        git_status, git_status_off = _median_alternating(
            _git_status(repo, "auto"), _git_status(repo, "off"), rounds_git
        )
        rg = _rg_argv()
        rg_contained, rg_bare = _median_alternating(
            _timer(rg, REPO / "server", "read-only", (0, 1)),
            _rg_search(REPO / "server", rg),
            5 if quick else 30,
        )
    return [
        Figure(
            "contain_true",
            "contained `true` (bubblewrap start-up) vs bare `true`",
            value * 1000,
            "ms",
            baseline * 1000,
            target_on="report",
            note=f"{availability.detail}; overhead {1000 * (value - baseline):.1f} ms per command "
            "(the sandbox's start-up: what every contained command pays once)",
        ),
        Figure(
            "contain_view",
            "contained `true` in a copy-on-write view (mounted, sorted, thrown away) vs the "
            "repository bound writable in place",
            viewed * 1000,
            "ms",
            direct * 1000,
            1.1,
            "ratio",
            note=f"the view adds {1000 * (viewed - direct):.1f} ms per command",
        ),
        Figure(
            "contain_view_release",
            f"contained `true` in a view vs release {RELEASE}'s contained `true` (the "
            "repository bound writable in place), each in a process of its own",
            None if released is None else released[0] * 1000,
            "ms",
            None if released is None else released[1] * 1000,
            1.1,
            "ratio",
            note=f"the release's commit {RELEASE} is not in this clone"
            if released is None
            else f"{1000 * (released[0] - released[1]):.1f} ms per command",
        ),
        Figure(
            "contain_lifeline",
            "contained `true` with the lifeline (the watcher that ends it with us) vs without",
            tied * 1000,
            "ms",
            untied * 1000,
            target_on="report",
            note=f"the lifeline adds {1000 * (tied - untied):.1f} ms per command",
        ),
        Figure(
            "contain_pytest",
            "contained `python -m pytest -q` on the sample project, in a view, vs bare",
            tests * 1000,
            "ms",
            tests_bare * 1000,
            1.25,
            "ratio",
            note=f"overhead {1000 * (tests - tests_bare):.0f} ms",
        ),
        Figure(
            "contain_git_status",
            "git_status tool, git contained vs COMMAND_CONTAINMENT=off (both hardened)",
            git_status * 1000,
            "ms",
            git_status_off * 1000,
            target_on="report",
            note=f"overhead {1000 * (git_status - git_status_off):.0f} ms (one git process)",
        ),
        Figure(
            "contain_rg_search",
            "ripgrep over server/ contained vs as rg_search runs it (--no-config, tool env)",
            rg_contained * 1000,
            "ms",
            rg_bare * 1000,
            target_on="report",
            note=f"containing it would add {1000 * (rg_contained - rg_bare):.0f} ms per search",
        ),
    ]


def _rg_argv() -> list[str]:
    rg = shutil.which("rg")
    if rg is None:
        raise RuntimeError("ripgrep is not installed")
    return [rg, "--no-config", "--line-number", "--null", "--hidden", "--regexp", "def ", "."]


def _rg_search(root: Path, argv: list[str]):  # type: ignore[no-untyped-def]
    """ripgrep the way the tools run it (tools/repo.py run_rg): uncontained, a tool's env."""
    from smol_instruments.base.process import child_env, run_process

    def run() -> float:
        start = time.perf_counter()
        result = run_process(argv, cwd=root, timeout=600, env=child_env("tool"))
        if result.exit_code not in (0, 1):
            raise RuntimeError(f"rg failed: {result.stderr[-300:]}")
        return time.perf_counter() - start

    return run


def _git_status(repo: Path, mode: str):  # type: ignore[no-untyped-def]
    from smol_instruments.base.config import load_settings
    from smol_instruments.tools.base import ToolContext
    from smol_instruments.tools.git import GitStatusTool

    settings = load_settings(None, command_containment=mode, sandbox_backend="none")
    tool = GitStatusTool(ToolContext.create(repo, settings))

    def run() -> float:
        start = time.perf_counter()
        result = tool.forward()
        elapsed = time.perf_counter() - start
        if "error" in result:
            raise RuntimeError(f"git_status failed: {result}")
        return elapsed

    return run
