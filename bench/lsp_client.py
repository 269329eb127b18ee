"""A minimal JSON-RPC client over a subprocess's stdio, for timing without test frameworks."""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


class StdioClient:
    """Starts a language server and exchanges JSON-RPC messages with it."""

    def __init__(
        self, argv: list[str], env: dict[str, str] | None = None, cwd: Path | None = None
    ) -> None:
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=cwd,
        )
        self._next_id = 0
        self._responses: dict[int, Any] = {}
        self._cond = threading.Condition()
        self.notifications: list[tuple[float, dict[str, Any]]] = []
        self.on_notification: Callable[[float, dict[str, Any]], None] | None = None
        self.on_request: Callable[[dict[str, Any]], Any] | None = None
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def _read(self) -> None:
        stream = self.proc.stdout
        assert stream is not None
        while True:
            length = 0
            while True:
                line = stream.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            message = json.loads(stream.read(length))
            now = time.perf_counter()
            if "id" in message and "method" in message:  # a request from the server
                result = self.on_request(message) if self.on_request else None
                self._send({"jsonrpc": "2.0", "id": message["id"], "result": result})
            elif "id" in message:
                with self._cond:
                    self._responses[message["id"]] = message
                    self._cond.notify_all()
            else:
                self.notifications.append((now, message))
                if self.on_notification is not None:
                    self.on_notification(now, message)

    def send_request(self, method: str, params: Any) -> int:
        """Send a request without waiting; its id."""
        self._next_id += 1
        self._send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        return self._next_id

    def request(self, method: str, params: Any, timeout: float = 120.0) -> Any:
        msg_id = self.send_request(method, params)
        deadline = time.monotonic() + timeout
        with self._cond:
            while msg_id not in self._responses:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"{method} got no answer in {timeout} s")
                self._cond.wait(left)
            reply = self._responses.pop(msg_id)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply.get("result")

    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def initialize(
        self,
        root: Path,
        settings: dict[str, Any] | None = None,
        capabilities: dict[str, Any] | None = None,
    ) -> float:
        """Send initialize (+ initialized); the seconds from process start to the answer."""
        self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root.as_uri(),
                "capabilities": capabilities or {"window": {"workDoneProgress": False}},
                "initializationOptions": {"settings": settings or {}},
            },
        )
        elapsed = time.perf_counter() - self.started
        self.notify("initialized", {})
        return elapsed

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def close(self) -> None:
        try:
            self.request("shutdown", None, timeout=10)
            self.notify("exit", None)
            self.proc.wait(timeout=10)
        except Exception:
            self.proc.kill()
            self.proc.wait()
