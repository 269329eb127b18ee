"""A real Phoenix for tests: `phoenix serve` from its own virtual environment, on free ports.

Phoenix is about 850 MB, so it lives outside the project's .venv: `bash .ci/phoenix.sh` makes
(or reuses) ~/.cache/smol-instruments/phoenix-venv. `SMOL_PHOENIX_PYTHON` names another
interpreter that has `arize-phoenix`; `SMOL_PHOENIX_VENV` another environment.

    with PhoenixServer() as phoenix:          # starts it, waits for /readyz (10-15 s)
        exporter = OTLPSpanExporter(endpoint=phoenix.traces_endpoint)
        ...
        spans = phoenix.wait_for_spans(name="tool_wrapped.read_file")
        spans[0]["attributes"]["tool.name"]

Spans come back through Phoenix's REST API, `GET /v1/projects/{project}/spans`: each a dict
with name, context {trace_id, span_id}, parent_id, span_kind, start_time, end_time,
status_code, status_message, attributes (flattened to dotted keys) and events.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

# Straight to 127.0.0.1, whatever proxy the environment names.
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))

INSTALL_HINT = "run `bash .ci/phoenix.sh` (installs Phoenix into its own virtualenv)"


def default_venv() -> Path:
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return Path(os.environ.get("SMOL_PHOENIX_VENV") or cache / "smol-instruments" / "phoenix-venv")


def phoenix_python() -> Path | None:
    """The interpreter that has Phoenix: SMOL_PHOENIX_PYTHON, else the default venv's."""
    named = os.environ.get("SMOL_PHOENIX_PYTHON")
    if named:
        return Path(named) if Path(named).is_file() else None
    python = default_venv() / "bin" / "python"
    return python if python.is_file() and (python.parent / "phoenix").is_file() else None


def require_phoenix_python() -> Path:
    """The Phoenix interpreter; when missing, skip the test (fail it when CI is set)."""
    import pytest

    python = phoenix_python()
    if python is None:
        where = os.environ.get("SMOL_PHOENIX_PYTHON") or default_venv()
        reason = f"Phoenix not found at {where}: {INSTALL_HINT}"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return python


def free_port() -> int:
    """A port free on every interface (Phoenix's gRPC receiver binds [::], not 127.0.0.1)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("", 0))
        return int(sock.getsockname()[1])


class PhoenixServer:
    """`phoenix serve` as a subprocess with its own ports and working directory."""

    def __init__(
        self,
        python: Path | None = None,
        *,
        working_dir: Path | None = None,
        startup_timeout: float = 120.0,
    ) -> None:
        self.python = python or require_phoenix_python()
        self.startup_timeout = startup_timeout
        self._own_dir = working_dir is None
        self.working_dir = working_dir or Path(tempfile.mkdtemp(prefix="smol-phoenix-"))
        self.port = 0
        self.grpc_port = 0
        self.startup_s: float | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._log_path = self.working_dir / "phoenix.log"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def traces_endpoint(self) -> str:
        """OTLP/HTTP: PHOENIX_ENDPOINT or the exporter's endpoint."""
        return f"{self.url}/v1/traces"

    def env(self) -> dict[str, str]:
        """The settings that send the project's traces here."""
        return {"PHOENIX_ENABLED": "true", "PHOENIX_ENDPOINT": self.traces_endpoint}

    def start(self) -> PhoenixServer:
        """Start and wait until `/readyz` answers; RuntimeError with the log tail if not."""
        if self._process is not None:
            return self
        self.port, self.grpc_port = free_port(), free_port()
        while self.grpc_port == self.port:
            self.grpc_port = free_port()
        # The developer's own PHOENIX_*/OTEL_* settings (a Postgres URL...) must not leak in.
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PHOENIX_", "OTEL_"))}
        env.update(
            {
                "PHOENIX_TELEMETRY_ENABLED": "false",
                "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false",
                "PHOENIX_WORKING_DIR": str(self.working_dir),
                "PHOENIX_HOST": "127.0.0.1",
                "PHOENIX_PORT": str(self.port),
                "PHOENIX_GRPC_PORT": str(self.grpc_port),
            }
        )
        started = time.monotonic()
        with self._log_path.open("wb") as log:
            self._process = subprocess.Popen(
                [str(self.python), "-m", "phoenix.server.main", "serve"],
                env=env,
                cwd=self.working_dir,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group, stopped as one
            )
        deadline = started + self.startup_timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                tail = self.log_tail()
                self.stop()
                raise RuntimeError(f"phoenix serve exited early:\n{tail}")
            with contextlib.suppress(OSError):
                if self._get("/readyz", timeout=2.0)[0] == 200:
                    self.startup_s = time.monotonic() - started
                    return self
            time.sleep(0.25)
        tail = self.log_tail()
        self.stop()
        raise RuntimeError(f"phoenix serve not ready in {self.startup_timeout:g} s:\n{tail}")

    def spans(
        self,
        project: str = "default",
        name: str | None = None,
        *,
        trace_id: str | None = None,
    ) -> list[dict[str, Any]]:
        """Every span of `project` (oldest first), optionally only those named `name`."""
        params: list[tuple[str, str]] = [("limit", "1000"), ("order", "asc")]
        if name is not None:
            params.append(("name", name))
        if trace_id is not None:
            params.append(("trace_id", trace_id))
        quoted = urllib.parse.quote(project, safe="")
        spans: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            query = params + ([("cursor", cursor)] if cursor else [])
            status, body = self._get(f"/v1/projects/{quoted}/spans?{urllib.parse.urlencode(query)}")
            if status == 404:
                return []  # the project appears with its first span
            if status != 200:
                raise RuntimeError(f"Phoenix answered {status}: {body[:500]!r}")
            page = json.loads(body)
            spans += page["data"]
            cursor = page.get("next_cursor")
            if not cursor:
                break
        # The filters are applied here too, in case a Phoenix version ignores them.
        return [
            s
            for s in spans
            if (name is None or s["name"] == name)
            and (trace_id is None or s["context"]["trace_id"] == trace_id)
        ]

    def wait_for_spans(
        self,
        project: str = "default",
        name: str | None = None,
        *,
        count: int = 1,
        trace_id: str | None = None,
        timeout: float = 20.0,
    ) -> list[dict[str, Any]]:
        """Poll until at least `count` matching spans arrived (Phoenix inserts in batches)."""
        deadline = time.monotonic() + timeout
        while True:
            found = self.spans(project, name, trace_id=trace_id)
            if len(found) >= count or time.monotonic() > deadline:
                return found
            time.sleep(0.2)

    def projects(self) -> list[dict[str, Any]]:
        status, body = self._get("/v1/projects")
        if status != 200:
            raise RuntimeError(f"Phoenix answered {status}: {body[:500]!r}")
        return list(json.loads(body)["data"])

    def log_tail(self, lines: int = 40) -> str:
        try:
            text = self._log_path.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])

    def stop(self) -> None:
        """Stop the process group this server started (SIGTERM, then SIGKILL)."""
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=5)
        if self._own_dir:
            shutil.rmtree(self.working_dir, ignore_errors=True)

    def __enter__(self) -> PhoenixServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _get(self, path: str, timeout: float = 10.0) -> tuple[int, bytes]:
        request = urllib.request.Request(self.url + path, headers={"Accept": "application/json"})
        try:
            with _DIRECT.open(request, timeout=timeout) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()
