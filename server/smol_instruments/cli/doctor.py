"""`doctor`: one line per dependency, each saying what is wrong and how to fix it.

`fail` is for what the tools cannot work without (git, ripgrep, a readable repository);
`warn` for what a run needs but can be started later (the model server, tracing, Docker).
The model lines say which model runs where: the configured server when it answers, else the
embedded llama.cpp server, whether it is installed, and whether its model file is there and
matches its pinned SHA-256.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlparse

from ..base.process import child_env

if TYPE_CHECKING:  # pydantic is not loaded by the parser `serve` builds
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
            argv,
            env=child_env("tool"),
            capture_output=True,
            text=True,
            timeout=10,
            stdin=subprocess.DEVNULL,
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
    from ..base.git import GitUnavailable, run_git

    try:  # `git --version` reads no repository: nothing to contain
        result = run_git(Path("/"), "--version", repository=False, mode="off", timeout=10)
    except GitUnavailable:
        result = None
    if result is not None and result.exit_code == 0 and result.stdout.strip():
        return Check("git", "ok", result.stdout.strip().splitlines()[0])
    return Check("git", "fail", "git not found", "install git (apt-get install git)")


def check_containment(settings: Settings, repo: Path) -> Check:
    from ..base.containment import availability_for
    from ..base.git import find_repo_root

    mode = settings.command_containment
    if mode == "off":
        return Check(
            "containment",
            "warn",
            "OFF (COMMAND_CONTAINMENT=off): commands the agent runs are NOT contained; the "
            "policy's verdict alone stands between them and your files, keys and network",
            "remove COMMAND_CONTAINMENT=off unless the agent already runs in a throwaway machine",
        )
    availability = availability_for(find_repo_root(repo), mode)
    if availability.works:
        return Check(
            "containment",
            "ok",
            f"{availability.detail}: commands run contained, each in a copy-on-write view "
            "of the repository (what they change is proposed, never written), with no "
            "network and an empty home",
        )
    consequence = (
        "no command can run (COMMAND_CONTAINMENT=required)"
        if mode == "required"
        else "every command is asked before it runs, uncontained"
    )
    return Check(
        "containment",
        "fail" if mode == "required" else "warn",
        f"no sandbox for commands: {availability.detail}; {consequence}",
        availability.fix,
    )


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
        f"MODEL_BACKEND={settings.model_backend} MODEL_ID={settings.model_id} "
        f"MODEL_API_BASE={settings.model_api_base} "
        f"SANDBOX_BACKEND={settings.sandbox_backend} "
        f"COMMAND_CONTAINMENT={settings.command_containment}",
    )


def check_model(settings: Settings, timeout: float = 2.0) -> Check:
    """Does the configured model server (MODEL_ID at MODEL_API_BASE) answer?"""
    from ..llm.resolve import is_ollama, probe_server

    base = settings.model_api_base.rstrip("/")
    answered, detail = probe_server(settings, timeout)
    if answered:
        return Check("model", "ok", f"{settings.model_id} at {base} answers ({detail})")
    if is_ollama(settings):
        fix = (
            f"start Ollama (`ollama serve`, then `ollama pull {settings.model_id.split('/', 1)[1]}`), "
            "set MODEL_ID and MODEL_API_BASE to a server you have, or MODEL_BACKEND=auto to "
            "use the embedded model"
        )
    else:
        fix = "start the model server, or set MODEL_API_BASE to where it listens"
    return Check("model", "warn", f"no model server at {base} ({detail})", fix)


def model_checks(settings: Settings) -> list[Check]:
    """Which model runs where: the configured server, or the embedded one and its file."""
    backend = settings.model_backend
    if backend == "server":
        return [check_model(settings)]
    if backend == "auto":
        server = check_model(settings, timeout=1.5)
        if server.status == "ok":
            server.detail = f"MODEL_BACKEND=auto: {server.detail}; the embedded server is not used"
            return [server]
        reason = f"{server.detail}, so MODEL_BACKEND=auto"
    else:
        reason = "MODEL_BACKEND=embedded"
    return [_embedded_plan(settings, reason), check_embedded(), check_model_file(settings)]


def _embedded_plan(settings: Settings, reason: str) -> Check:
    from ..llm.catalog import ModelSetupError
    from ..llm.resolve import embedded_model, embedded_threads

    try:
        choice = embedded_model(settings)
    except ModelSetupError as exc:
        return Check("model", "warn", f"{reason}: {exc.problem}", exc.fix)
    threads = embedded_threads(settings, choice)
    started = (
        "started when the editor opens a folder (MODEL_WARM_UP) or at the first question"
        if settings.model_warm_up
        else "started at the first question"
    )
    return Check(
        "model",
        "ok",
        f"{reason} uses the embedded llama.cpp server: {choice.alias} "
        f"({threads.describe()}; context {settings.model_num_ctx}) on 127.0.0.1, {started}",
    )


def check_embedded() -> Check:
    from importlib.metadata import PackageNotFoundError, version

    from ..llm.embedded import xllamacpp_available, xllamacpp_missing_error

    if not xllamacpp_available():
        error = xllamacpp_missing_error()
        return Check("embedded", "warn", error.problem, error.fix)
    try:
        found = version("xllamacpp")
    except PackageNotFoundError:
        found = "unknown version"
    return Check("embedded", "ok", f"llama.cpp server available (xllamacpp {found})")


def check_model_file(settings: Settings) -> Check:
    from ..llm.catalog import ModelSetupError
    from ..llm.pull import corrupt_file_error, verify_file
    from ..llm.resolve import embedded_model

    try:
        choice = embedded_model(settings)
    except ModelSetupError as exc:
        return Check("model file", "warn", exc.problem, exc.fix)
    spec, path = choice.spec, choice.path
    if spec is None:
        if path.is_file():
            return Check("model file", "ok", f"{path} (your own file: no pinned hash to check)")
        return Check("model file", "warn", f"{path} not found", "set MODEL_FILE to a .gguf file")
    if not path.exists():
        pull = f"run `smol-instruments model pull {spec.name}`"
        if settings.model_auto_pull:
            return Check(
                "model file",
                "warn",
                f"{spec.name} is not downloaded yet: the first question downloads "
                f"{spec.size / 1e9:.2f} GB",
                f"{pull} now",
            )
        return Check("model file", "warn", f"{path} not found", pull)
    if verify_file(path, spec):
        return Check("model file", "ok", f"{path} matches the pinned SHA-256 of {spec.name}")
    error = corrupt_file_error(path, spec)
    return Check("model file", "warn", error.problem, error.fix)


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
        *model_checks(settings),
        check_tracing(settings),
        check_sandbox(settings),
        check_containment(settings, repo),
    ]
