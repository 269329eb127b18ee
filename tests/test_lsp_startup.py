"""What the daemon loads before it answers initialize: nothing the first chat alone needs.

The editor waits on initialize; the agent, LiteLLM, smolagents, the OpenTelemetry exporters,
tree-sitter and the Docker client load on first use. The real daemon runs under
`-X importtime`, which writes one line to stderr for every module as it finishes importing:
every module loaded before the answer was sent is in the file once the answer arrives.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

import pytest
from tests.conftest import make_repo
from tests.support.lsp import daemon_env

pytestmark = pytest.mark.timeout(120)

#: Packages whose import is for a chat, a patch check or a trace, never for initialize.
HEAVY = {
    "smolagents",
    "litellm",
    "openai",
    "opentelemetry",
    "openinference",
    "phoenix",
    "tree_sitter",
    "docker",
    "jedi",
    "rope",
    "huggingface_hub",
    "rich",
    "jinja2",
    "requests",
    "httpx",
    # the settings: validated once the client says it is ready (`initialized`)
    "pydantic",
    "pydantic_core",
    "pydantic_settings",
}

#: Our own modules that reach those packages (the agent, the tools, the model client).
HEAVY_OURS = (
    "smol_instruments.agent.loop",
    "smol_instruments.agent.evidence",
    "smol_instruments.tools",
    "smol_instruments.agent.model",
    "smol_instruments.agent.prompts",
    "smol_instruments.base.telemetry",
)


def _frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _answer(out: IO[bytes], msg_id: int) -> dict[str, Any]:
    """Frames until the answer to `msg_id` (log messages may come first)."""
    while True:
        message = _read_message(out)
        assert message is not None, "the daemon closed stdout before answering"
        if message.get("id") == msg_id and "method" not in message:
            return message


def _read_message(out: IO[bytes]) -> dict[str, Any] | None:
    """The next frame; None once the daemon closed stdout."""
    headers = b""
    while not headers.endswith(b"\r\n\r\n"):
        byte = out.read(1)
        if not byte:
            return None
        headers += byte
    length = int(headers.split(b"Content-Length:")[1].split(b"\r\n")[0])
    message: dict[str, Any] = json.loads(out.read(length))
    return message


def _imported(importtime: str) -> set[str]:
    """Module names from `-X importtime` lines: 'import time: self | cumulative | name'."""
    names = set()
    for line in importtime.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name != "imported package":
                names.add(name)
    return names


def test_initialize_is_answered_before_the_agent_and_its_libraries_load(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"calc.py": "def add(a, b):\n    return a + b\n"})
    stderr_file = tmp_path / "importtime.txt"
    with stderr_file.open("wb") as stderr:
        proc = subprocess.Popen(
            [sys.executable, "-X", "importtime", "-m", "smol_instruments", "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            cwd=repo,
            env=daemon_env(tmp=tmp_path),
        )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        # The settings as the extension sends them: validating them is part of initialize.
        settings = {"modelId": "openai/scripted", "agentMaxSteps": 7, "phoenixEnabled": False}
        proc.stdin.write(
            _frame(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "processId": None,
                        "rootUri": repo.as_uri(),
                        "capabilities": {},
                        "initializationOptions": {"trusted": True, "settings": settings},
                    },
                }
            )
        )
        proc.stdin.flush()
        answer = _answer(proc.stdout, 1)
        loaded = _imported(stderr_file.read_text(errors="replace"))
    finally:
        proc.kill()
        proc.wait()
    assert "capabilities" in answer.get("result", {}), answer
    assert "smol_instruments.lsp.app" in loaded, "importtime lines were not captured"
    heavy = sorted(n for n in loaded if n.split(".")[0] in HEAVY)
    assert heavy == [], f"loaded before initialize was answered: {heavy[:20]}"
    ours = sorted(n for n in loaded if n.startswith(HEAVY_OURS))
    assert ours == [], f"loaded before initialize was answered: {ours}"


def _start(repo: Path, env: dict[str, str], options: Any = None) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "smol_instruments", "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=repo,
        env=env,
    )
    assert proc.stdin is not None
    initialize = {"processId": None, "rootUri": repo.as_uri(), "capabilities": {}}
    if options is not None:
        initialize["initializationOptions"] = options
    proc.stdin.write(
        _frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize})
    )
    proc.stdin.flush()
    return proc


def test_a_bad_setting_is_said_in_the_editor_and_on_stderr_and_the_daemon_exits_2(
    tmp_path: Path,
) -> None:
    """The settings load after initialize is answered; one that does not validate is still
    said, in the editor and on stderr, and the daemon stops before doing anything (status 2,
    the command line's usage error), as it did when they loaded first."""
    repo = make_repo(tmp_path / "repo", {"calc.py": "def add(a, b):\n    return a + b\n"})
    proc = _start(repo, daemon_env({"AGENT_MAX_STEPS": "many"}, tmp=tmp_path))
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    try:
        assert "capabilities" in _answer(proc.stdout, 1).get("result", {})
        proc.stdin.write(_frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        proc.stdin.flush()
        shown = []
        while (message := _read_message(proc.stdout)) is not None:
            if message.get("method") == "window/showMessage":
                shown.append(message["params"])
        status = proc.wait(timeout=30)
        stderr = proc.stderr.read().decode()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert status == 2, stderr
    assert [m["type"] for m in shown] == [1], shown  # one error message
    assert "AGENT_MAX_STEPS" in shown[0]["message"], shown
    assert "AGENT_MAX_STEPS" in stderr and "Traceback" not in stderr, stderr


def test_what_is_logged_before_the_settings_load_reaches_the_log_file(tmp_path: Path) -> None:
    """Until the settings name the log file, records are kept; then written there first."""
    repo = make_repo(tmp_path / "repo", {"calc.py": "def add(a, b):\n    return a + b\n"})
    log_file = tmp_path / "daemon.log"
    # initializationOptions that do not parse: said (and logged) while initialize is handled
    proc = _start(repo, daemon_env(tmp=tmp_path), options={"trusted": {"not": "a bool"}})
    assert proc.stdin is not None and proc.stdout is not None
    try:
        _answer(proc.stdout, 1)
        assert not log_file.exists(), "the log file opened before the settings were loaded"
        proc.stdin.write(_frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        proc.stdin.write(_frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
        proc.stdin.flush()
        _answer(proc.stdout, 2)
        proc.stdin.write(_frame({"jsonrpc": "2.0", "method": "exit"}))
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = log_file.read_text()
    assert "the folder is treated as untrusted" in text, text  # kept, then written
    assert "smol-instruments daemon for" in text, text
