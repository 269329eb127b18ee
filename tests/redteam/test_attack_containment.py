"""What containment held before, tried again in ways its newer parts might open: the network
(the host's 127.0.0.1), Unix sockets (a path in another project, the abstract namespace), a
FIFO another program reads, writes outside (plain, through /proc/self/root and /proc/1/root,
into the host's /dev/shm), signals to the user's other processes, and the lifeline (a process
that keeps running after the command ends). Also what comes back: a huge output.

The repository's conftest makes every attempt during one unasked `tool run_tests`; each attack
is judged by its own detector on the host (a listener that received the token, a file in the
other project, a process that died, a file written after the run ended). The control runs the
same conftest bare: every detector fires.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import make_repo

from .harness import Elsewhere, Listener, Victim, bare_tests, marked, output_of, tool

pytestmark = pytest.mark.timeout(300)

ESCAPES = "escapes today: containment"
TOKEN = "REDTEAM-SENT-THROUGH"
#: How long the left-behind process waits before writing (the run has ended by then).
LATE_S = 3

CONFTEST = """import os, socket, subprocess, sys, time
plan = {plan}

def attempt(name, action):
    try:
        action()
        print("done:", name)
    except Exception as error:
        print("refused:", name, type(error).__name__, error)

def send(family, address, data):
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.settimeout(3)
        s.connect(address)
        s.sendall(data)

def write(path, text):
    with open(path, "a") as handle:
        handle.write(text)

attempt("tcp", lambda: send(socket.AF_INET, ("127.0.0.1", plan["tcp"]), b"{token}"))
attempt("unix", lambda: send(socket.AF_UNIX, plan["unix"], b"{token}"))
attempt("abstract", lambda: send(socket.AF_UNIX, plan["abstract"].encode(), b"{token}"))
attempt("fifo", lambda: os.write(os.open(plan["fifo"], os.O_WRONLY | os.O_NONBLOCK), b"{token}"))
attempt("write-outside", lambda: write(plan["notes"], "{token}"))
attempt("proc-self-root", lambda: write("/proc/self/root" + plan["notes"], "{token}"))
attempt("proc-1-root", lambda: write("/proc/1/root" + plan["notes"], "{token}"))
attempt("dev-shm", lambda: write(plan["shm"], "{token}"))
attempt("signal", lambda: os.kill(plan["sleeper"], 9))
attempt("left-behind", lambda: subprocess.Popen(
    [sys.executable, "-c", "import pathlib, time; time.sleep({late}); pathlib.Path(%r).write_text('late')" % plan["late"]],
    start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
"""

SHOW_A_LOT = "def test_a_lot():\n    print('x' * 1000 + '\\n', end='')\n    print(('y' * 999 + '\\n') * 50000)\n"


@dataclass
class Machine:
    """The host side of every attempt: listeners, a FIFO reader, a process to kill."""

    elsewhere: Elsewhere
    tcp: Listener
    unix: Listener
    abstract: Listener
    abstract_name: str
    fifo: Path
    fifo_received: bytearray
    shm: Path
    sleeper: subprocess.Popen[bytes]
    late: Path

    @property
    def unix_path(self) -> Path:
        """An agent's socket in the other project's parent (not among its files)."""
        return self.elsewhere.dir.parent / "agent.sock"

    def plan(self) -> dict[str, object]:
        return {
            "tcp": self.tcp.port,
            "unix": str(self.unix_path),
            "abstract": self.abstract_name,
            "fifo": str(self.fifo),
            "notes": str(self.elsewhere.notes),
            "shm": str(self.shm),
            "sleeper": self.sleeper.pid,
            "late": str(self.late),
        }


@dataclass(frozen=True)
class Attempt:
    name: str
    reached: Callable[[Machine], bool]


ATTEMPTS = [
    Attempt("tcp-to-the-hosts-localhost", lambda m: TOKEN.encode() in m.tcp.received),
    Attempt("unix-socket-in-another-project", lambda m: TOKEN.encode() in m.unix.received),
    Attempt("abstract-unix-socket", lambda m: TOKEN.encode() in m.abstract.received),
    Attempt("fifo-another-program-reads", lambda m: TOKEN.encode() in m.fifo_received),
    Attempt("write-another-project", lambda m: bool(m.elsewhere.harm())),
    Attempt("hosts-dev-shm", lambda m: m.shm.exists()),
    Attempt("kill-a-process-of-the-user", lambda m: m.sleeper.poll() is not None),
    Attempt("process-left-behind-writes-later", lambda m: m.late.exists()),
]

#: What gets through today.
ESCAPING: set[str] = set()


def _read_fifo(path: Path, into: bytearray, stop: threading.Event) -> None:
    """A program of the user's that reads commands from a FIFO."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        while not stop.is_set():
            try:
                data = os.read(fd, 4096)
            except BlockingIOError:
                data = b""
            if data:
                into += data
            else:
                time.sleep(0.05)
    finally:
        os.close(fd)


@contextmanager
def machine_in(tmp_path: Path) -> Iterator[Machine]:
    with Elsewhere.create() as elsewhere:
        abstract_name = f"\0redteam-{os.getpid()}-{time.monotonic_ns()}"
        fifo = elsewhere.dir.parent / "control.fifo"
        os.mkfifo(fifo)
        received = bytearray()
        stop = threading.Event()
        reader = threading.Thread(target=_read_fifo, args=(fifo, received, stop), daemon=True)
        reader.start()
        sleeper = subprocess.Popen(["sleep", "600"])
        shm = Path("/dev/shm") / f"redteam-{os.getpid()}-{time.monotonic_ns()}"
        with (
            Listener() as tcp,
            Listener(elsewhere.dir.parent / "agent.sock") as unix,
            Listener(abstract_name) as abstract,
        ):
            yield Machine(
                elsewhere,
                tcp,
                unix,
                abstract,
                abstract_name,
                fifo,
                received,
                shm,
                sleeper,
                tmp_path / "late.txt",
            )
        stop.set()
        reader.join(timeout=5)
        sleeper.kill()
        sleeper.wait()
        shm.unlink(missing_ok=True)


def armed_repo(root: Path, machine: Machine) -> Path:
    conftest = CONFTEST.format(plan=json.dumps(machine.plan()), token=TOKEN, late=LATE_S)
    return make_repo(
        root,
        {
            "pyproject.toml": '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
            "conftest.py": conftest,
            "tests/test_ok.py": "def test_ok():\n    assert True\n",
        },
    )


def settle(machine: Machine) -> None:
    """Wait until whatever was left behind would have written, and the listeners read."""
    time.sleep(LATE_S + 3)


# One run serves every attempt: the conftest makes all of them in that run, and each detector
# is independent of the others (a run per attempt was the same run eight times over, twice).
@pytest.fixture(scope="module")
def contained(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Machine, list[str]]]:
    """The armed repository's tests run unasked through the tool, contained; what the
    conftest said it did."""
    tmp_path = tmp_path_factory.mktemp("contained")
    victim = Victim.create(tmp_path / "home")
    with machine_in(tmp_path) as machine:
        repo = armed_repo(tmp_path / "repo", machine)
        result = tool(repo, victim, "run_tests", {"command": "python -m pytest -q -s"})
        settle(machine)
        said = [
            line for line in output_of(result).splitlines() if "done:" in line or "refused:" in line
        ]
        yield machine, said


@pytest.fixture(scope="module")
def bare(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Machine, str]]:
    """Control: the same conftest run bare, as the user's own pytest would."""
    tmp_path = tmp_path_factory.mktemp("bare")
    victim = Victim.create(tmp_path / "home")
    with machine_in(tmp_path) as machine:
        repo = armed_repo(tmp_path / "repo", machine)
        output = bare_tests(repo, victim, "-s")
        settle(machine)
        yield machine, output


@pytest.mark.parametrize("attempt", marked(ATTEMPTS, ESCAPING, ESCAPES))
def test_a_contained_test_run_reaches_nothing_outside(
    attempt: Attempt, contained: tuple[Machine, list[str]]
) -> None:
    machine, said = contained
    assert not attempt.reached(machine), f"{attempt.name} got through; the conftest said: {said}"


@pytest.mark.parametrize("attempt", ATTEMPTS, ids=lambda a: a.name)
def test_control_the_same_conftest_bare_reaches_everything(
    attempt: Attempt, bare: tuple[Machine, str]
) -> None:
    machine, output = bare
    assert attempt.reached(machine), output[-1500:]


def test_a_huge_output_comes_back_cut_and_the_command_line_stays_well(
    tmp_path: Path, victim: Victim
) -> None:
    """50 MB of test output: the tool answers (one JSON result, its output cut to the tail)."""
    repo = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
            "tests/test_a_lot.py": SHOW_A_LOT,
        },
    )
    result = tool(repo, victim, "run_tests", {"command": "python -m pytest -q -s"})
    answer = json.loads(result.stdout)
    assert answer.get("truncated") is True, {k: answer.get(k) for k in ("truncated", "error")}
    assert len(result.stdout) < 1_000_000, len(result.stdout)


def test_control_the_output_is_huge(tmp_path: Path, victim: Victim) -> None:
    repo = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
            "tests/test_a_lot.py": SHOW_A_LOT,
        },
    )
    assert len(bare_tests(repo, victim, "-s")) > 40_000_000
