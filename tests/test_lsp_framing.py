"""The daemon survives bad input: the real `smol-instruments serve`, fed raw bytes, on stdio
and on `--tcp` (the same frames are read either way).

Each recoverable bad frame gets a JSON-RPC error and the daemon goes on serving: the normal
request after it (`shutdown`) is answered and `exit` ends the process with status 0. A stream
that ends inside a frame cannot be recovered: the daemon exits with status 1 and says why in
one line on stderr.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from tests.support.lsp import daemon_env

pytestmark = pytest.mark.timeout(120)


def frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


INITIALIZE = frame(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"processId": None, "rootUri": None, "capabilities": {}},
    }
)
SHUTDOWN = frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
EXIT = frame({"jsonrpc": "2.0", "method": "exit"})


class Daemon:
    """`smol-instruments serve` on pipes, or on `--tcp` with one connection; every frame it
    writes, parsed."""

    def __init__(self, tmp_path: Path, transport: str = "stdio") -> None:
        tcp = ["--tcp", "127.0.0.1:0"] if transport == "tcp" else []
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "smol_instruments", "serve", *tcp],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=tmp_path,
            env=daemon_env(tmp=tmp_path),
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.input, self.output = self.proc.stdin, self.proc.stdout
        self.listening = ""
        self.connection: socket.socket | None = None
        if tcp:  # the daemon says where it listens, then takes one client
            assert self.proc.stderr is not None
            self.listening = self.proc.stderr.readline().decode()
            address = self.listening.rsplit(" ", 1)[-1].strip()
            host, _, port = address.rpartition(":")
            connection = socket.create_connection((host, int(port)), timeout=60)
            connection.settimeout(None)
            self.input, self.output = connection.makefile("wb"), connection.makefile("rb")
            self.connection = connection
        self.messages: list[dict[str, Any]] = []
        self.unframed = b""
        self._arrived = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        out = self.output
        while True:
            headers = b""
            while not headers.endswith(b"\r\n\r\n"):
                byte = out.read(1)
                if not byte:
                    self.unframed = headers
                    return
                headers += byte
            length = int(headers.split(b"Content-Length:")[1].split(b"\r\n")[0])
            message = json.loads(out.read(length))
            with self._arrived:
                self.messages.append(message)
                self._arrived.notify_all()

    def send(self, data: bytes) -> None:
        self.input.write(data)
        self.input.flush()

    def close_input(self) -> None:
        self.input.close()
        if self.connection is not None:  # the client hangs up
            self.connection.shutdown(socket.SHUT_WR)

    def answer_to(self, msg_id: int, timeout: float = 60) -> dict[str, Any]:
        with self._arrived:
            found = self._arrived.wait_for(
                lambda: any(m.get("id") == msg_id and "method" not in m for m in self.messages),
                timeout,
            )
        assert found, f"no answer to {msg_id}; got {self.messages}"
        return next(m for m in self.messages if m.get("id") == msg_id and "method" not in m)

    def errors(self) -> list[dict[str, Any]]:
        return [m for m in self.messages if "error" in m]

    def wait(self) -> tuple[int, str]:
        code = self.proc.wait(timeout=60)
        assert self.proc.stderr is not None
        return code, self.proc.stderr.read().decode(errors="replace")


@pytest.fixture(params=["stdio", "tcp"])
def daemon(tmp_path: Path, request: pytest.FixtureRequest) -> Any:
    running = Daemon(tmp_path, request.param)
    yield running
    if running.proc.poll() is None:
        running.proc.kill()
        running.proc.wait()


CODE_ACTION_WITH_BAD_PARAMS = frame(
    {"jsonrpc": "2.0", "id": 9, "method": "textDocument/codeAction", "params": {"bad": 1}}
)

#: Bad input, the error code answered, the id it is answered with, and words in its message.
RECOVERABLE = {
    "oversized": (b"Content-Length: 99999999999999\r\n\r\n{}", -32700, None, "more than"),
    "length-not-a-number": (
        b'Content-Length: abc\r\n\r\n{"jsonrpc": "2.0", "id": 7, "method": "shutdown"}',
        -32700,
        None,
        "not a number",
    ),
    "lost-body-holding-the-header-text": (
        b'Content-Length: 1e3\r\n\r\n{"text": "Content-Length: 12 in a string"}',
        -32700,
        None,
        "not a number",
    ),
    "no-content-length": (b"Content-Type: x\r\n\r\n{}", -32700, None, "without Content-Length"),
    "garbage-header": (b"GET / HTTP/1.1\r\n\r\n", -32700, None, "not 'Name: value'"),
    "empty-body": (b"Content-Length: 0\r\n\r\n", -32700, None, "empty"),
    "not-json": (b"Content-Length: 5\r\n\r\nhello", -32700, None, "not JSON"),
    "not-utf8": (b'Content-Length: 4\r\n\r\n"\xff\xfe"', -32700, None, "not JSON"),
    "json-not-a-message": (b"Content-Length: 6\r\n\r\n[1, 2]", -32600, None, "JSON-RPC 2.0"),
    "params-that-do-not-fit": (CODE_ACTION_WITH_BAD_PARAMS, -32602, 9, "codeAction"),
}


@pytest.mark.parametrize("case", list(RECOVERABLE))
def test_a_bad_frame_is_answered_and_the_daemon_goes_on(case: str, daemon: Daemon) -> None:
    bad, code, msg_id, words = RECOVERABLE[case]
    daemon.send(INITIALIZE)
    daemon.answer_to(1)
    daemon.send(bad + SHUTDOWN)
    assert daemon.answer_to(2).get("result") is None  # the normal request, answered
    [error] = daemon.errors()
    assert error["id"] == msg_id and error["error"]["code"] == code, error
    assert words in error["error"]["message"], error
    daemon.send(EXIT)
    status, stderr = daemon.wait()
    assert status == 0, stderr[-2000:]


def test_two_frames_sent_at_once_are_both_answered(daemon: Daemon) -> None:
    daemon.send(INITIALIZE + SHUTDOWN)
    daemon.answer_to(1)
    daemon.answer_to(2)
    daemon.send(EXIT)
    assert daemon.wait()[0] == 0


@pytest.mark.parametrize(
    "cut",
    [
        b'Content-Length: 60\r\n\r\n{"jsonrpc": "2.0"',  # a short body
        b"Content-Length: 20\r\n\r\n",  # a header with no body
        b"Content-Length: 2",  # a header cut short
        b"Content-Length: abc\r\n\r\n{}",  # lost, and the stream ends before a next frame
    ],
    ids=["short-body", "header-no-body", "cut-header", "lost-then-ended"],
)
def test_a_stream_that_ends_inside_a_frame_exits_non_zero_with_one_line(
    cut: bytes, daemon: Daemon
) -> None:
    daemon.send(INITIALIZE)
    daemon.answer_to(1)
    daemon.send(cut)
    daemon.close_input()
    status, stderr = daemon.wait()
    assert status == 1, stderr[-2000:]
    said = [line for line in stderr.splitlines() if line.startswith("smol-instruments serve:")]
    assert len(said) == 1 and "ended inside" in said[0], stderr[-2000:]


def test_a_stream_that_ends_between_frames_is_a_clean_end(daemon: Daemon) -> None:
    daemon.send(INITIALIZE)
    daemon.answer_to(1)
    daemon.close_input()
    status, stderr = daemon.wait()
    assert status == 0, stderr[-2000:]
    assert "smol-instruments serve:" not in stderr


def test_tcp_says_where_it_listens(tmp_path: Path) -> None:
    daemon = Daemon(tmp_path, "tcp")
    assert daemon.listening.startswith("smol-instruments serve: listening on 127.0.0.1:")
    daemon.send(INITIALIZE)
    assert "capabilities" in daemon.answer_to(1)["result"]
    daemon.send(SHUTDOWN + EXIT)
    assert daemon.wait()[0] == 0


def serve_tcp(tmp_path: Path, address: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "smol_instruments", "serve", "--tcp", address],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=daemon_env(tmp=tmp_path),
        timeout=60,
    )


@pytest.mark.parametrize(
    ("address", "words"),
    [("127.0.0.1:http", "--tcp takes HOST:PORT"), ("2087", "--tcp takes HOST:PORT")],
)
def test_a_bad_tcp_address_is_one_line(tmp_path: Path, address: str, words: str) -> None:
    result = serve_tcp(tmp_path, address)
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and words in result.stderr


def test_a_tcp_port_in_use_is_one_line(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        result = serve_tcp(tmp_path, f"127.0.0.1:{port}")
    assert result.returncode == 2, result.stderr
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"smol-instruments serve: cannot listen on 127.0.0.1:{port}:"), line
