"""`doctor`: one line per dependency, each saying what is wrong and how to fix it.

`fail` is for what the tools cannot work without (git, ripgrep, a readable repository);
`warn` for what a run needs but can be started later (the model server, tracing, Docker).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlparse

from ..base.config import Settings

Status = Literal["ok", "warn", "fail"]


@dataclass
class Check:
    name: str
    status: Status
    detail: str
    fix: str | None = None

    def line(self) -> str:
        text = f"{self.status:<4}  {self.name:<10} {self.detail}"
        if self.fix and self.status != "ok":
            text += f" — fix: {self.fix}"
        return text

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _version(argv: list[str]) -> str | None:
    try:
        out = subprocess.run(
            argv, capture_output=True, text=True, timeout=10, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return (out.stdout or out.stderr).strip().splitlines()[0] if out.returncode == 0 else None


def check_python() -> Check:
    version = ".".join(map(str, sys.version_info[:3]))
    if (3, 10) <= sys.version_info[:2] < (3, 14):
        return Check("python", "ok", f"Python {version}")
    return Check("python", "fail", f"Python {version}", "use Python 3.10 to 3.13")


def check_git() -> Check:
    version = _version(["git", "--version"]) if shutil.which("git") else None
    if version:
        return Check("git", "ok", version)
    return Check("git", "fail", "git not found", "install git (apt-get install git)")


def check_ripgrep() -> Check:
    version = _version(["rg", "--version"]) if shutil.which("rg") else None
    if version:
        return Check("ripgrep", "ok", version)
    return Check(
        "ripgrep",
        "fail",
        "rg not found: rg_search cannot run",
        "install ripgrep (apt-get install ripgrep, brew install ripgrep)",
    )


def check_repo(repo: Path) -> Check:
    from ..base.git import find_repo_root

    root = find_repo_root(repo)
    if (root / ".git").exists():
        return Check("repo", "ok", f"git repository at {root}")
    return Check(
        "repo",
        "warn",
        f"{root} is not a git repository: git tools will answer NOT_A_GIT_REPO",
        "run `git init` there, or pass --repo with a git repository",
    )


def check_settings(settings: Settings) -> Check:
    return Check(
        "settings",
        "ok",
        f"MODEL_ID={settings.model_id} MODEL_API_BASE={settings.model_api_base} "
        f"SANDBOX_BACKEND={settings.sandbox_backend}",
    )


def _probe_url(url: str, timeout: float) -> tuple[bool, str]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return True, f"HTTP {response.status}"
    except urllib.error.HTTPError as exc:
        return True, f"HTTP {exc.code}"  # it answered: the server is up
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        return False, str(reason)


def check_model(settings: Settings, timeout: float = 2.0) -> Check:
    base = settings.model_api_base.rstrip("/")
    is_ollama = settings.model_id.startswith(("ollama/", "ollama_chat/"))
    url = f"{base}/api/tags" if is_ollama else f"{base}/models"
    answered, detail = _probe_url(url, timeout)
    if answered:
        return Check("model", "ok", f"{settings.model_id} at {base} answers ({detail})")
    if is_ollama:
        fix = (
            f"start Ollama (`ollama serve`, then `ollama pull {settings.model_id.split('/', 1)[1]}`), "
            "or set MODEL_ID and MODEL_API_BASE to a server you have"
        )
    else:
        fix = "start the model server, or set MODEL_API_BASE to where it listens"
    return Check("model", "warn", f"no model server at {base} ({detail})", fix)


def check_tracing(settings: Settings, timeout: float = 1.0) -> Check:
    if not settings.phoenix_enabled:
        return Check("tracing", "ok", "disabled (PHOENIX_ENABLED=false)")
    endpoint = settings.traces_endpoint
    parsed = urlparse(endpoint)
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    try:
        with socket.create_connection((parsed.hostname or "localhost", port), timeout=timeout):
            return Check("tracing", "ok", f"OTLP endpoint {endpoint} accepts connections")
    except OSError as exc:
        return Check(
            "tracing",
            "warn",
            f"nothing listens at {endpoint} ({exc.strerror or exc}); spans are dropped",
            "start Phoenix (`phoenix serve`), or set PHOENIX_ENABLED=false",
        )


def check_sandbox(settings: Settings) -> Check:
    try:
        from ..sandbox.select import describe_backend
    except ImportError:
        return Check("sandbox", "warn", "patches are not validated (backend none)")
    info = describe_backend(settings)
    status: Status = (
        "warn" if info.get("backend") in {"none", None} or info.get("problem") else "ok"
    )
    detail = f"backend {info.get('backend')}: {info.get('reason', '')}".strip()
    return Check("sandbox", status, detail, info.get("fix"))


def run_checks(settings: Settings, repo: Path) -> list[Check]:
    return [
        check_python(),
        check_settings(settings),
        check_git(),
        check_ripgrep(),
        check_repo(repo),
        check_model(settings),
        check_tracing(settings),
        check_sandbox(settings),
    ]
