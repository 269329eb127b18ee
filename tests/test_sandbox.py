"""The patch sandbox: docker and local backends on real git repositories, and its CLI.

Docker tests (`-m docker`) need an engine with the sandbox image: they skip without one on a
laptop and fail under CI (`. .ci/docker.sh` provides both). Every validation is checked to
leave the user's working tree byte-identical.
"""

from __future__ import annotations

import io
import json
import os
import socket
import subprocess
import sys
import tarfile
import textwrap
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conftest import git, make_repo
from smol_instruments.base.beneath import Beneath
from smol_instruments.base.config import Settings, load_settings
from smol_instruments.base.git import workspace_files
from smol_instruments.base.truncate import keep_tail
from smol_instruments.cli.sandbox import main as sandbox_main
from smol_instruments.patches.diff import changed_files, unified_diff
from smol_instruments.patches.validation import NoneSandbox, SandboxUnavailable, Validation
from smol_instruments.sandbox import docker as docker_module
from smol_instruments.sandbox.archive import add_workspace
from smol_instruments.sandbox.checks import find_related_tests
from smol_instruments.sandbox.docker import (
    LABEL,
    OWNER_HOST,
    OWNER_PID,
    OWNER_START,
    DockerSandbox,
    _process_start,
    _sections,
    remove_stale_containers,
    tmpfs_bytes,
)
from smol_instruments.sandbox.image import DOCKERFILE, _mirror_in, apt_mirror
from smol_instruments.sandbox.local import LocalSandbox
from smol_instruments.sandbox.select import describe_backend, open_sandbox
from support.sandbox_fixtures import require_docker, tree_snapshot

REPO_ROOT = Path(__file__).resolve().parents[1]
NO_ENGINE = "unix:///nonexistent/smol-no-docker.sock"

FILES = {
    "README.md": "# demo\n",
    ".gitignore": "build/\n*.log\n",
    "app/__init__.py": "",
    "app/calc.py": "def add(a, b):\n    return a + b\n",
    "tests/test_calc.py": (
        "from app.calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    ),
}

GOOD = """\
diff --git a/app/calc.py b/app/calc.py
--- a/app/calc.py
+++ b/app/calc.py
@@ -1,2 +1,6 @@
 def add(a, b):
     return a + b
+
+
+def sub(a, b):
+    return a - b
diff --git a/tests/test_sub.py b/tests/test_sub.py
new file mode 100644
--- /dev/null
+++ b/tests/test_sub.py
@@ -0,0 +1,5 @@
+from app.calc import sub
+
+
+def test_sub():
+    assert sub(5, 3) == 2
"""

BREAKS_TESTS = """\
diff --git a/app/calc.py b/app/calc.py
--- a/app/calc.py
+++ b/app/calc.py
@@ -1,2 +1,2 @@
 def add(a, b):
-    return a + b
+    return a - b
"""

DOES_NOT_APPLY = """\
diff --git a/app/calc.py b/app/calc.py
--- a/app/calc.py
+++ b/app/calc.py
@@ -1,2 +1,2 @@
 def add(x, y):
-    return x * y
+    return x + y
"""

SYNTAX_ERROR = """\
diff --git a/app/calc.py b/app/calc.py
--- a/app/calc.py
+++ b/app/calc.py
@@ -1,2 +1,2 @@
 def add(a, b):
-    return a + b
+    return a +
"""

# Made against the working tree: README.md has an uncommitted edit the patch builds on.
ON_UNCOMMITTED_EDIT = """\
diff --git a/README.md b/README.md
--- a/README.md
+++ b/README.md
@@ -1,2 +1,2 @@
 # demo
-local edit, not committed
+local edit, now reviewed
"""


def make_demo_repo(root: Path) -> Path:
    """A committed project plus what real working trees have: an edit, untracked, ignored."""
    make_repo(root, FILES)
    (root / "README.md").write_text("# demo\nlocal edit, not committed\n")
    (root / "notes.txt").write_text("untracked but not ignored\n")
    (root / "build").mkdir()
    (root / "build" / "out.log").write_text("ignored\n")
    return root


def sandbox_settings(**overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "sandbox_timeout_s": 20,
        "sandbox_pids_limit": 64,
        "sandbox_memory": "512m",
        "phoenix_enabled": False,
    }
    return load_settings(None, **(values | overrides))


@dataclass
class Backend:
    sandbox: Any
    python: str  # the interpreter the checks use on that side
    repo: Path

    def pytest(self) -> str:
        return f"{self.python} -m pytest -q -p no:cacheprovider"


@pytest.fixture(scope="module")
def demo_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_demo_repo(tmp_path_factory.mktemp("sandbox") / "repo")


@pytest.fixture(scope="module")
def docker_client() -> Any:
    return require_docker(sandbox_settings().sandbox_image)


@pytest.fixture(scope="module")
def docker_sandbox(docker_client: Any, demo_repo: Path) -> Iterator[DockerSandbox]:
    sandbox = DockerSandbox(sandbox_settings(), demo_repo, client=docker_client)
    yield sandbox
    sandbox.close()


@pytest.fixture(scope="module", params=["local", pytest.param("docker", marks=pytest.mark.docker)])
def backend(request: pytest.FixtureRequest, demo_repo: Path) -> Backend:
    if request.param == "docker":
        return Backend(request.getfixturevalue("docker_sandbox"), "python3", demo_repo)
    return Backend(LocalSandbox(sandbox_settings(), demo_repo), sys.executable, demo_repo)


@pytest.fixture
def unchanged(demo_repo: Path) -> Iterator[None]:
    """Fails the test if the user's working tree changed in any byte."""
    before = tree_snapshot(demo_repo)
    yield
    assert tree_snapshot(demo_repo) == before


# --- both backends --------------------------------------------------------------------------


def test_a_good_patch_validates_and_its_check_passes(backend: Backend, unchanged: None) -> None:
    validation = backend.sandbox.validate(GOOD, [backend.pytest()])

    assert validation.backend == backend.sandbox.name
    assert validation.applies is True
    assert validation.passed, validation.to_dict()
    syntax, tests = validation.checks
    assert syntax.command == "python3 -m py_compile app/calc.py tests/test_sub.py"
    assert syntax.passed and syntax.exit_code == 0
    assert tests.command == backend.pytest()
    assert "2 passed" in tests.output
    assert validation.duration_ms is not None


def test_a_patch_that_does_not_apply_reports_gits_message(
    backend: Backend, unchanged: None
) -> None:
    validation = backend.sandbox.validate(DOES_NOT_APPLY, [backend.pytest()])

    assert validation.applies is False
    assert validation.checks == []  # nothing runs on a patch that does not apply
    assert "patch does not apply" in (validation.message or "")
    assert "app/calc.py" in (validation.message or "")
    assert validation.to_dict()["applies"] is False


def test_a_patch_that_breaks_the_tests_is_reported_failing(
    backend: Backend, unchanged: None
) -> None:
    validation = backend.sandbox.validate(BREAKS_TESTS, [backend.pytest()])

    assert validation.applies is True
    assert not validation.passed
    syntax, tests = validation.checks
    assert syntax.passed
    assert not tests.passed and tests.exit_code == 1
    assert "assert -1 == 5" in tests.output
    assert "1 failed" in tests.output


def test_a_syntax_error_fails_the_syntax_check(backend: Backend, unchanged: None) -> None:
    validation = backend.sandbox.validate(SYNTAX_ERROR, [])

    (syntax,) = validation.checks
    assert syntax.command == "python3 -m py_compile app/calc.py"
    assert not syntax.passed
    assert "SyntaxError" in syntax.output


def test_the_copy_is_the_working_tree_not_head(backend: Backend, unchanged: None) -> None:
    untracked = backend.sandbox.validate(
        ON_UNCOMMITTED_EDIT, ["cat README.md; cat notes.txt; ls build 2>&1 || true"]
    )

    assert untracked.applies, untracked.message
    (listing,) = untracked.checks
    assert "local edit, now reviewed" in listing.output
    assert "untracked but not ignored" in listing.output
    if backend.sandbox.name == "local":  # a view of the repository: ignored files are there
        assert "out.log" in listing.output
    else:
        assert "No such file" in listing.output  # ignored files are not copied


def test_long_output_keeps_its_tail(backend: Backend) -> None:
    validation = backend.sandbox.validate(GOOD, ["seq 1 20000; exit 3"])

    check = validation.checks[-1]
    assert not check.passed and check.exit_code == 3
    assert check.output.startswith("[truncated")
    assert check.output.rstrip().endswith("20000")
    assert len(check.output) <= sandbox_settings().truncation_max_chars + 100


def test_no_check_configured_runs_only_the_syntax_check(backend: Backend) -> None:
    validation = backend.sandbox.validate(BREAKS_TESTS)  # SANDBOX_CHECK_COMMAND is unset

    assert [check.command for check in validation.checks] == ["python3 -m py_compile app/calc.py"]
    assert validation.passed


@pytest.mark.parametrize("kind", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_a_runaway_check_is_killed_at_its_timeout(
    kind: str, request: pytest.FixtureRequest, demo_repo: Path, unchanged: None
) -> None:
    settings = sandbox_settings(sandbox_timeout_s=1.5)
    if kind == "docker":
        client = request.getfixturevalue("docker_client")
        sandbox: Any = DockerSandbox(settings, demo_repo, client=client)
    else:
        sandbox = LocalSandbox(settings, demo_repo)
    try:
        started = time.monotonic()
        validation = sandbox.validate(GOOD, ["echo started; sleep 1000"])
        elapsed = time.monotonic() - started
    finally:
        sandbox.close()

    check = validation.checks[-1]
    assert check.timed_out and not check.passed
    assert "started" in check.output and "1.5 s" in check.output
    assert elapsed < 300  # killed, not left to sleep for 1000 s


# --- a project whose tests already fail (local) ------------------------------------------------

BROKEN_FILES = {
    "app/__init__.py": "",
    "app/calc.py": "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a + b\n",
    "tests/test_calc.py": (
        "from app.calc import add, sub\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
        "def test_sub():\n    assert sub(5, 3) == 2\n"
    ),
}


def _edit(repo: Path, path: str, old: str, new: str) -> str:
    before = (repo / path).read_text()
    return unified_diff(path, before, before.replace(old, new))


def test_a_check_that_fails_without_the_patch_too_is_not_the_patchs(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "broken", BROKEN_FILES)
    sandbox = LocalSandbox(sandbox_settings(), repo)
    tests = f"{sys.executable} -m pytest -q -p no:cacheprovider"
    before = tree_snapshot(repo)

    # a change that touches nothing the failing test uses: it fails as it did without it
    docstring = _edit(repo, "app/calc.py", "def add(a, b):\n", 'def add(a, b):\n    """Sum."""\n')
    same = sandbox.validate(docstring, [tests])
    check = same.checks[-1]
    assert not check.passed and check.fails_without_patch, check
    assert check.without_patch is not None and "1 test failed, 1 test passed" in check.without_patch
    assert same.to_dict()["checks"][-1]["fails_without_patch"] is True
    # test_sub still fails, and it imports what the patch changed
    assert check.related_tests == ["tests/test_calc.py::test_sub"]

    # a new module no test imports: the same failure, and no test of it
    elsewhere = sandbox.validate(unified_diff("app/sizes.py", None, "AREA = 1\n"), [tests])
    check = elsewhere.checks[-1]
    assert check.fails_without_patch and check.related_tests == [], check
    assert "related_tests" not in elsewhere.to_dict()["checks"][-1]

    # a change that breaks a test that passed: its failure, whatever failed before
    breaks = sandbox.validate(
        _edit(repo, "app/calc.py", "return a + b\n\n", "return a - b\n\n"), [tests]
    )
    check = breaks.checks[-1]
    assert not check.passed and not check.fails_without_patch, check
    assert "test_add" in check.output
    assert "1 test failed, 1 test passed" in (check.without_patch or "")

    # the fix: it passes, and nothing was compared
    fixed = sandbox.validate(_fix_sub(repo), [tests])
    assert fixed.passed, fixed.to_dict()
    assert fixed.checks[-1].without_patch is None
    assert tree_snapshot(repo) == before


def _fix_sub(repo: Path) -> str:
    text = (repo / "app/calc.py").read_text()
    head, tail = text.split("def sub", 1)
    return unified_diff("app/calc.py", text, head + "def sub" + tail.replace("a + b", "a - b"))


def test_the_run_without_the_patch_is_remembered_while_the_files_stay(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "broken", BROKEN_FILES)
    sandbox = LocalSandbox(sandbox_settings(), repo)
    runs: list[str] = []
    check = sandbox._check

    def counted(command: str, *args: Any, **kwargs: Any) -> Any:
        runs.append(command)
        return check(command, *args, **kwargs)

    sandbox._check = counted  # type: ignore[method-assign]
    tests = f"{sys.executable} -m pytest -q -p no:cacheprovider"
    docstring = _edit(repo, "app/calc.py", "def add(a, b):\n", 'def add(a, b):\n    """Sum."""\n')
    for _ in range(2):
        assert sandbox.validate(docstring, [tests]).checks[-1].fails_without_patch
    # with the patch twice, without it once
    assert runs.count(tests) == 3, runs
    (repo / "notes.txt").write_text("a new file: another tree\n")
    assert sandbox.validate(docstring, [tests]).checks[-1].fails_without_patch
    assert runs.count(tests) == 5, runs


# --- docker only ----------------------------------------------------------------------------


@pytest.mark.docker
def test_docker_has_no_network(docker_sandbox: DockerSandbox) -> None:
    probe = "python3 -c \"import socket; socket.create_connection(('1.1.1.1', 53), timeout=3)\""
    validation = docker_sandbox.validate(GOOD, [probe, "ls /sys/class/net"])

    network, interfaces = validation.checks[1:]
    assert not network.passed
    assert "Network is unreachable" in network.output
    assert interfaces.output.split() == ["lo"]  # only the loopback interface exists


@pytest.mark.docker
def test_docker_sees_no_repository_and_user_not_root(docker_client: Any, tmp_path: Path) -> None:
    # World-writable files: nothing but the container's own walls could refuse the writes.
    repo = make_demo_repo(tmp_path / "open")
    (repo / "README.md").chmod(0o666)
    repo.chmod(0o777)
    (repo / ".env").write_text("API_TOKEN=ignored-and-secret\n")
    (repo / ".gitignore").write_text("build/\n*.log\n.env\n")
    before = tree_snapshot(repo)
    sandbox = DockerSandbox(sandbox_settings(), repo, client=docker_client)
    try:
        validation = sandbox.validate(
            GOOD,
            [
                f"ls {repo} /workspace",
                "cat .env; ls -a",
                "echo x > README.md && cat README.md",
                "id -u",
                "touch /etc/x",
            ],
        )
    finally:
        sandbox.close()

    mounted, ignored, copy, uid, rootfs = validation.checks[1:]
    assert not mounted.passed and "No such file" in mounted.output  # the repository: not there
    assert "ignored-and-secret" not in ignored.output and ".git\n" not in ignored.output
    assert "notes.txt" in ignored.output  # untracked files are copied, ignored ones are not
    assert copy.passed  # the copy is the check's to change
    assert uid.passed and uid.output.strip() != "0"
    assert not rootfs.passed  # the container's own root file system is read-only
    assert tree_snapshot(repo) == before


@pytest.mark.docker
def test_docker_copy_never_follows_a_link_on_the_host(
    docker_client: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The copy is read on the host: a tracked folder swapped for a link to `~/.ssh` after the
    file list was made (a hook here, at exactly that moment) is refused, and a tracked link
    is copied as a link, never followed."""
    secret = "DOCKER-COPY-SECRET-5d1e"
    home = tmp_path / "home" / ".ssh"
    home.mkdir(parents=True)
    (home / "id_rsa").write_text(secret)
    repo = make_repo(tmp_path / "repo", {**FILES, "pkg/id_rsa": "not a key\n"})
    os.symlink(home / "id_rsa", repo / "key")
    git(repo, "add", "key")
    git(repo, "commit", "-qm", "a link out")
    real = docker_module.workspace_files

    def list_then_swap(root: Path, **kwargs: Any) -> list[str]:
        names = real(root, **kwargs)
        os.rename(repo / "pkg", repo / "pkg.moved")
        (repo / "pkg").symlink_to(home)
        return names

    monkeypatch.setattr(docker_module, "workspace_files", list_then_swap)
    sandbox = DockerSandbox(sandbox_settings(), repo, client=docker_client)
    try:
        validation = sandbox.validate(GOOD, ["ls -la pkg; cat pkg/id_rsa", "readlink key; cat key"])
    finally:
        sandbox.close()
    assert secret in (repo / "pkg" / "id_rsa").read_text()  # the control: by name it leads out
    swapped, link = validation.checks[1:]
    assert secret not in swapped.output and secret not in link.output
    assert link.output.splitlines()[0] == str(home / "id_rsa")  # a link, as it is
    assert "'pkg' is a symbolic link" in (validation.message or "")


@pytest.mark.docker
def test_docker_fork_bomb_is_contained_by_the_pids_limit(docker_sandbox: DockerSandbox) -> None:
    bomb = textwrap.dedent(
        """\
        python3 -c "
        import subprocess, sys
        children = []
        while len(children) < 10000:
            try:
                children.append(subprocess.Popen(['sleep', '30']))
            except OSError as exc:
                print('stopped at', len(children), exc.errno)
                sys.exit(7)
        "
        """
    )
    validation = docker_sandbox.validate(GOOD, [bomb, "ls /proc | grep -c '^[0-9]'"])

    contained, after = validation.checks[1:]
    assert contained.exit_code == 7, contained.output
    stopped_at = int(contained.output.split("stopped at")[1].split()[0])
    assert stopped_at < docker_sandbox.settings.sandbox_pids_limit
    # The bomb's children were killed with the check: the next one sees a handful of pids.
    assert after.passed and int(after.output.strip()) < 10


@pytest.mark.docker
def test_docker_strays_of_a_check_do_not_outlive_it(docker_sandbox: DockerSandbox) -> None:
    validation = docker_sandbox.validate(
        GOOD, ["sleep 600 & setsid sleep 601 & echo left behind", "ps -e 2>/dev/null || ls /proc"]
    )

    left, after = validation.checks[1:]
    assert left.passed and "left behind" in left.output
    assert "sleep" not in after.output


@pytest.mark.docker
def test_docker_filling_the_scratch_space_is_reported(docker_sandbox: DockerSandbox) -> None:
    validation = docker_sandbox.validate(GOOD, ["dd if=/dev/zero of=big bs=1M count=4096"])

    check = validation.checks[-1]
    assert not check.passed
    assert "No space left on device" in check.output
    # The copy was removed with the big file: the next validation has its space back.
    assert docker_sandbox.validate(GOOD, ["dd if=/dev/zero of=big bs=1M count=100"]).passed


@pytest.mark.docker
def test_docker_reuses_one_warm_container(docker_client: Any, demo_repo: Path) -> None:
    # its own sandbox: the module's shared one was just given a fork bomb and a full disk, and
    # replacing a container those left unusable is right (test_docker_hung_exec_...)
    sandbox = DockerSandbox(sandbox_settings(), demo_repo, client=docker_client)
    try:
        sandbox.validate(GOOD)
        container = sandbox.container
        for _ in range(3):
            assert sandbox.validate(GOOD).passed

        # One warm container serves every validation (its speed is the benchmark's to measure).
        assert sandbox.container is container
        assert container.labels[LABEL] == "1"
        assert container.labels[OWNER_PID] == str(os.getpid())
    finally:
        sandbox.close()


@pytest.mark.docker
def test_docker_hung_exec_removes_the_container_and_recovers(
    docker_client: Any, demo_repo: Path
) -> None:
    sandbox = DockerSandbox(sandbox_settings(), demo_repo, client=docker_client)
    try:
        container = sandbox._ensure_container()
        with pytest.raises(TimeoutError):
            sandbox._exec(container, ["sleep", "30"], "@@x@@", deadline_s=1)
        assert sandbox.container is None
        assert _gone(docker_client, container.id)
        assert sandbox.validate(GOOD).passed  # a fresh container
    finally:
        sandbox.close()


def _gone(client: Any, container_id: str) -> bool:
    import docker

    try:
        client.containers.get(container_id)
    except docker.errors.NotFound:
        return True
    return False


@pytest.mark.docker
def test_docker_close_leaves_no_container(docker_client: Any, demo_repo: Path) -> None:
    sandbox = DockerSandbox(sandbox_settings(), demo_repo, client=docker_client)
    assert sandbox.validate(GOOD).passed
    container_id = sandbox.container.id

    sandbox.close()
    sandbox.close()  # idempotent

    assert _gone(docker_client, container_id)
    with pytest.raises(SandboxUnavailable):
        sandbox.validate(GOOD)


@pytest.mark.docker
def test_docker_containers_of_a_crashed_process_are_removed(
    docker_client: Any, demo_repo: Path, tmp_path: Path
) -> None:
    script = tmp_path / "crash.py"
    script.write_text(
        textwrap.dedent(
            f"""\
            import os, sys
            from pathlib import Path
            from smol_instruments.base.config import load_settings
            from smol_instruments.sandbox.docker import DockerSandbox
            sandbox = DockerSandbox(load_settings(None), Path({str(demo_repo)!r}))
            sandbox._ensure_container()
            print(sandbox.container.id, flush=True)
            os.kill(os.getpid(), 9)  # a crash: no close(), no atexit
            """
        )
    )
    crashed = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60
    )
    container_id = crashed.stdout.strip()
    assert crashed.returncode == -9 and container_id, crashed.stderr
    assert not _gone(docker_client, container_id)  # the crash left it behind

    removed = remove_stale_containers(docker_client)

    assert _gone(docker_client, container_id)
    assert any(name.startswith("smol-sandbox-") for name in removed)


@pytest.mark.docker
def test_docker_stale_cleanup_keeps_live_owners_and_spots_reused_pids(docker_client: Any) -> None:
    image = sandbox_settings().sandbox_image
    dead = subprocess.Popen(["true"])
    dead.wait()
    me = str(os.getpid())
    labels = {
        "dead": {OWNER_PID: str(dead.pid), OWNER_START: ""},
        "live": {OWNER_PID: me, OWNER_START: _process_start(os.getpid()) or ""},
        "reused": {OWNER_PID: me, OWNER_START: "1"},  # same pid, another process's start
    }
    containers = {
        name: docker_client.containers.create(
            image,
            ["sleep", "60"],
            network_mode="none",
            labels={LABEL: "1", OWNER_HOST: socket.gethostname(), **extra},
        )
        for name, extra in labels.items()
    }
    try:
        remove_stale_containers(docker_client)

        assert _gone(docker_client, containers["dead"].id)
        assert _gone(docker_client, containers["reused"].id)
        assert not _gone(docker_client, containers["live"].id)
    finally:
        for container in containers.values():
            if not _gone(docker_client, container.id):
                container.remove(force=True)


@pytest.mark.docker
def test_docker_atexit_removes_the_container_of_a_normal_exit(
    docker_client: Any, demo_repo: Path, tmp_path: Path
) -> None:
    script = tmp_path / "exit.py"
    script.write_text(
        textwrap.dedent(
            f"""\
            from pathlib import Path
            from smol_instruments.base.config import load_settings
            from smol_instruments.sandbox.docker import DockerSandbox
            sandbox = DockerSandbox(load_settings(None), Path({str(demo_repo)!r}))
            sandbox._ensure_container()
            print(sandbox.container.id, flush=True)
            """  # no close(): the atexit hook removes it
        )
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)

    assert done.returncode == 0, done.stderr
    assert _gone(docker_client, done.stdout.strip())


@pytest.mark.docker
def test_auto_picks_docker_when_an_engine_answers(docker_client: Any, demo_repo: Path) -> None:
    sandbox = open_sandbox(sandbox_settings(sandbox_backend="auto"), demo_repo)
    try:
        assert sandbox.name == "docker"
        assert sandbox.validate(GOOD).backend == "docker"
    finally:
        sandbox.close()
    info = describe_backend(sandbox_settings(sandbox_backend="auto"))
    assert info["backend"] == "docker" and not info.get("problem")
    assert info["image"]["present"] is True


@pytest.mark.docker
def test_cli_validate_docker_json(
    docker_client: Any, demo_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    patch = tmp_path / "good.diff"
    patch.write_text(GOOD)

    run = ["--run", "python3 -m pytest -q -p no:cacheprovider"]
    code = sandbox_main(
        ["validate", str(patch), "--repo", str(demo_repo), "--backend", "docker", "--json", *run]
    )

    out = capsys.readouterr().out
    document = json.loads(out)  # exactly one JSON document
    assert code == 0
    assert document["backend"] == "docker" and document["applies"] is True
    assert [check["passed"] for check in document["checks"]] == [True, True]


# --- selection, status and the CLI without an engine ------------------------------------------


@pytest.fixture
def no_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", NO_ENGINE)
    for name in list(os.environ):
        if name.upper().startswith("SANDBOX_"):
            monkeypatch.delenv(name)


def test_backend_none_and_local_are_taken_as_asked(demo_repo: Path) -> None:
    assert isinstance(
        open_sandbox(sandbox_settings(sandbox_backend="none"), demo_repo), NoneSandbox
    )
    assert isinstance(
        open_sandbox(sandbox_settings(sandbox_backend="local"), demo_repo), LocalSandbox
    )
    assert describe_backend(sandbox_settings(sandbox_backend="none"))["backend"] == "none"
    assert describe_backend(sandbox_settings(sandbox_backend="local"))["backend"] == "local"


def test_auto_without_an_engine_falls_back_to_local(demo_repo: Path, no_engine: None) -> None:
    sandbox = open_sandbox(sandbox_settings(sandbox_backend="auto"), demo_repo)
    assert sandbox.name == "local"

    info = describe_backend(sandbox_settings(sandbox_backend="auto"))
    assert info["backend"] == "local"
    assert NO_ENGINE in info["reason"] and info["problem"]
    assert ".ci/docker.sh" in info["fix"]


def test_explicit_docker_without_an_engine_is_an_error_with_the_fix(
    demo_repo: Path, no_engine: None
) -> None:
    with pytest.raises(SandboxUnavailable) as raised:
        open_sandbox(sandbox_settings(sandbox_backend="docker"), demo_repo)

    assert "SANDBOX_BACKEND=docker" in raised.value.reason
    assert raised.value.fix and "DOCKER_HOST" in raised.value.fix


def test_cli_validate_local_json_and_exit_status(
    demo_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], no_engine: None
) -> None:
    good, broken = tmp_path / "good.diff", tmp_path / "broken.diff"
    good.write_text(GOOD)
    broken.write_text(BREAKS_TESTS)
    base = ["--repo", str(demo_repo), "--backend", "local"]
    pytest_run = ["--run", f"{sys.executable} -m pytest -q -p no:cacheprovider"]

    assert sandbox_main(["validate", str(good), *base, *pytest_run, "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["backend"] == "local" and document["applies"] is True
    assert set(document["checks"][0]) >= {"command", "passed", "output"}

    assert sandbox_main(["validate", str(broken), *base, *pytest_run]) == 1
    summary = capsys.readouterr().out
    assert "1 of 2 checks FAILED" in summary and "assert -1 == 5" in summary

    assert sandbox_main(["validate", str(tmp_path / "missing.diff"), *base]) == 2


def test_cli_validate_reads_stdin(
    demo_repo: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    no_engine: None,
) -> None:
    import io

    monkeypatch.setattr(sys, "stdin", io.StringIO(DOES_NOT_APPLY))
    code = sandbox_main(["validate", "-", "--repo", str(demo_repo), "--backend", "local"])

    assert code == 1
    assert "does NOT apply" in capsys.readouterr().out


def test_cli_without_an_engine_fails_in_one_line(
    capsys: pytest.CaptureFixture[str], no_engine: None
) -> None:
    assert sandbox_main(["build"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("smol-instruments sandbox: no Docker engine answers")
    assert "Traceback" not in err and len(err.splitlines()) == 1

    assert sandbox_main(["status", "--json"]) == 0  # auto: the local fallback works
    status = json.loads(capsys.readouterr().out)
    assert status["backend"] == "local" and status["engine"]["answers"] is False


def test_status_registers_on_the_main_parser() -> None:
    import argparse

    from smol_instruments.cli.sandbox import add_parser

    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["sandbox", "validate", "p.diff", "--run", "a", "--run", "b"])
    assert args.run == ["a", "b"] and callable(args.func)


# --- helpers ----------------------------------------------------------------------------------


def test_changed_files_reads_the_new_side_of_git_diffs() -> None:
    diff = (
        unified_diff("app/x.py", "a\n", "b\n")
        + unified_diff("gone.py", "a\n", None)
        + '--- "a/caf\\303\\251.py"\n+++ "b/caf\\303\\251.py"\n@@ -1 +1 @@\n-a\n+b\n'
        + "--- a/with space.py\t2024-01-01\n+++ b/with space.py\t2024-01-01\n@@ -1 +1 @@\n-a\n+b\n"
        + unified_diff("app/x.py", "b\n", "c\n")
    )
    assert changed_files(diff) == ["app/x.py", "café.py", "with space.py"]
    assert changed_files(GOOD) == ["app/calc.py", "tests/test_sub.py"]


def test_keep_tail_keeps_the_end_and_says_so() -> None:
    text = "".join(f"line {n}\n" for n in range(1000))
    cut = keep_tail(text, 100)
    assert cut.startswith("[truncated: showing the last")
    assert cut.endswith("line 999\n") and len(cut) < 160
    assert keep_tail("short", 100) == "short"


def test_workspace_files_are_tracked_and_untracked_not_ignored(demo_repo: Path) -> None:
    files = set(workspace_files(demo_repo))
    assert {"README.md", "app/calc.py", "notes.txt", ".gitignore"} <= files
    assert "build/out.log" not in files
    assert not any(name.startswith(".git/") for name in files)


def test_workspace_files_outside_git_skip_dot_git(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.py").write_text("")
    (tmp_path / ".git").mkdir()  # not a real repository: git ls-files fails
    (tmp_path / ".git" / "HEAD").write_text("garbage")
    assert sorted(workspace_files(tmp_path)) == ["a.py", "sub/b.py"]


def test_local_copy_never_writes_to_the_working_tree(demo_repo: Path, tmp_path: Path) -> None:
    link_repo = make_repo(tmp_path / "links", {"data.txt": "original\n"})
    os.symlink(link_repo / "data.txt", link_repo / "abs-link")
    git(link_repo, "add", "abs-link")
    git(link_repo, "commit", "-qm", "link")
    before = tree_snapshot(link_repo)

    sandbox = LocalSandbox(sandbox_settings(), link_repo)
    validation = sandbox.validate(
        "--- a/data.txt\n+++ b/data.txt\n@@ -1 +1 @@\n-original\n+patched\n",
        ["echo clobbered > abs-link; cat data.txt"],
    )

    assert validation.applies and "clobbered" in validation.checks[-1].output
    assert tree_snapshot(link_repo) == before


def test_apt_mirror_reads_both_source_formats(tmp_path: Path) -> None:
    deb822 = tmp_path / "debian.sources"
    deb822.write_text(
        "Types: deb\nURIs: http://mirror.example/debian-security\nSuites: bookworm-security\n"
        "Components: main\n\n"
        "Types: deb\n# a comment\nURIs: http://mirror.example/debian/\n"
        "Suites: bookworm bookworm-updates\nComponents: main\n"
    )
    one_line = tmp_path / "sources.list"
    one_line.write_text(
        "# deb http://old.example/debian bookworm main\n"
        "deb [arch=amd64] http://line.example/debian bookworm main\n"
    )

    assert apt_mirror([deb822]) == "http://mirror.example/debian"
    assert apt_mirror([tmp_path / "missing.list", one_line]) == "http://line.example/debian"
    assert apt_mirror([]) == "http://deb.debian.org/debian"
    assert _mirror_in("deb http://x/ubuntu jammy main\n", "bookworm", deb822=False) is None


def test_the_dockerfile_is_the_one_the_build_uses() -> None:
    assert (REPO_ROOT / "sandbox" / "Dockerfile").read_text() == DOCKERFILE


def test_tmpfs_is_half_the_memory_limit() -> None:
    assert tmpfs_bytes("1g") == 512 * 2**20
    assert tmpfs_bytes("512m") == 256 * 2**20
    assert tmpfs_bytes("1000") == 500


def test_sections_survive_output_without_a_final_newline() -> None:
    text = "\n@@b@@ check 1 25\npartial line\n@@b@@ done 0\n"
    sections = _sections(text, "@@b@@")
    assert sections["check"] == (["1", "25"], "partial line")
    assert "done" in sections


def test_validation_object_matches_the_protocol(demo_repo: Path) -> None:
    validation = LocalSandbox(sandbox_settings(), demo_repo).validate(GOOD, ["true"])
    document = validation.to_dict()
    assert isinstance(validation, Validation)
    assert {"backend", "applies", "checks"} <= set(document)
    assert all({"command", "passed", "output"} <= set(check) for check in document["checks"])


@pytest.mark.parametrize(
    ("imports", "uses"),
    [
        ("from app.calc import add", True),
        ("from app import calc", True),
        ("import app.calc as c", True),
        ("import app", False),  # its package's __init__ only
        ("from calc import add  # on a path the test set up", True),
        ("from app.calculator import add", False),
        ("from app import calculator", False),
        ("import os", False),
        ("def broken(:", False),
    ],
)
def test_which_failing_tests_use_a_changed_file(tmp_path: Path, imports: str, uses: bool) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_it.py").write_text(f"{imports}\n\n\ndef test_it():\n    pass\n")
    ids = ["tests/test_it.py::test_it", "tests/test_gone.py::test_gone"]
    expected = ["tests/test_it.py::test_it"] if uses else []

    def read(path: str) -> str | None:
        return (tmp_path / path).read_text() if (tmp_path / path).is_file() else None

    assert find_related_tests(ids, read, ["app/calc.py"]) == expected
    # the package's __init__ importing the module makes the package's importers use it
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__init__.py").write_text("from .calc import add\n")
    widened = uses or imports in ("import app", "from app import calculator")
    assert find_related_tests(ids, read, ["app/calc.py"]) == (ids[:1] if widened else [])
    # a test file the patch changes is one of its tests, whatever it imports
    assert find_related_tests(ids, read, ["tests/test_it.py"]) == ["tests/test_it.py::test_it"]


def test_the_workspace_archive_keeps_links_and_refuses_a_swapped_folder(tmp_path: Path) -> None:
    """What the Docker sandbox streams in, without Docker: read on the host, no link followed."""
    secret = "ARCHIVE-SECRET-0b7c"
    home = tmp_path / "home"
    home.mkdir()
    (home / "id_rsa").write_text(secret)
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "id_rsa").write_text("not a key\n")
    (repo / "run.sh").write_text("echo hi\n")
    (repo / "run.sh").chmod(0o755)
    (repo / "key").symlink_to(home / "id_rsa")
    os.rename(repo / "pkg", repo / "pkg.moved")  # swapped after the listing
    (repo / "pkg").symlink_to(home)
    assert secret in (repo / "pkg" / "id_rsa").read_text()  # the control: by name it leads out

    buffer = io.BytesIO()
    with Beneath(repo) as tree, tarfile.open(fileobj=buffer, mode="w|") as tar:
        problems = add_workspace(tar, tree, ["pkg/id_rsa", "key", "run.sh", "gone.txt"], "tree")
    buffer.seek(0)
    with tarfile.open(fileobj=buffer) as tar:
        members = {m.name: m for m in tar.getmembers()}
        script = tar.extractfile("tree/run.sh")
        assert script is not None and script.read() == b"echo hi\n"
    assert secret.encode() not in buffer.getvalue()
    assert sorted(members) == ["tree/key", "tree/run.sh"]
    assert members["tree/key"].issym() and members["tree/key"].linkname == str(home / "id_rsa")
    assert members["tree/run.sh"].mode == 0o755
    assert problems == ["path 'pkg/id_rsa' is refused: 'pkg' is a symbolic link"]
