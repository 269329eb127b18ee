"""What a child process gets of our environment: an allowlist by kind of child, read back from
the real child (`env`), and ripgrep that no configuration can make run a program."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import make_repo, make_tools
from smol_instruments.base.config import Settings, load_settings
from smol_instruments.base.process import child_env, run_process
from smol_instruments.safety.approval import AutoApprover

TOKEN = "CHILD-ENV-TOKEN-3b9e0c"

#: A user's environment: the ordinary, the network's, and what no child of ours may get.
USER_ENV = {
    "PATH": os.environ["PATH"],
    "HOME": "/home/someone",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "XDG_CONFIG_HOME": "/home/someone/.config",
    "VIRTUAL_ENV": "/home/someone/project/.venv",
    "PYTHONPATH": "/home/someone/lib",
    "HTTPS_PROXY": "http://proxy.example:3128",
    "PIP_INDEX_URL": "https://mirror.example/simple",
    "SSL_CERT_FILE": "/etc/ssl/certs/ca-certificates.crt",
    "OPENAI_API_KEY": TOKEN,
    "GITHUB_TOKEN": TOKEN,
    "MODEL_API_KEY": TOKEN,
    "RIPGREP_CONFIG_PATH": "/repo/rg.conf",
    "GIT_DIR": "/elsewhere/.git",
    "GIT_CONFIG_GLOBAL": "/repo/gitconfig",
    "LD_PRELOAD": "/repo/evil.so",
    "PYTHONSTARTUP": "/repo/startup.py",
    "BASH_ENV": "/repo/bashrc",
}

NEVER = (
    "OPENAI_API_KEY",
    "GITHUB_TOKEN",
    "MODEL_API_KEY",
    "RIPGREP_CONFIG_PATH",
    "GIT_DIR",
    "GIT_CONFIG_GLOBAL",
    "LD_PRELOAD",
    "PYTHONSTARTUP",
    "BASH_ENV",
)

EXPECTED = {
    "tool": {"PATH", "HOME", "LANG", "LC_ALL", "XDG_CONFIG_HOME"},
    "python": {"PATH", "HOME", "LANG", "LC_ALL", "VIRTUAL_ENV", "PYTHONPATH"},
    "network": {"PATH", "HOME", "HTTPS_PROXY", "PIP_INDEX_URL", "SSL_CERT_FILE", "PYTHONPATH"},
    "command": {"PATH", "HOME", "LANG", "VIRTUAL_ENV", "HTTPS_PROXY", "SSL_CERT_FILE"},
}


def env_of_child(env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """The environment the real child process saw."""
    result = run_process(["env", "-0"], cwd=tmp_path, timeout=30, env=env)
    assert result.exit_code == 0, result.stderr
    pairs = (item.partition("=") for item in result.stdout.split("\0") if item)
    return {name: value for name, _, value in pairs}


@pytest.mark.parametrize("kind", ["tool", "python", "network", "command"])
def test_each_kind_of_child_gets_its_allowlist_only(kind: str, tmp_path: Path) -> None:
    seen = env_of_child(child_env(kind, environ=USER_ENV), tmp_path)  # type: ignore[arg-type]
    assert EXPECTED[kind] <= set(seen), sorted(seen)
    assert [name for name in NEVER if name in seen] == []
    assert TOKEN not in "".join(seen.values())
    assert seen["GIT_TERMINAL_PROMPT"] == "0" and seen["PAGER"] == "cat"


def test_a_tool_gets_no_proxy_and_no_python_path(tmp_path: Path) -> None:
    seen = env_of_child(child_env("tool", environ=USER_ENV), tmp_path)
    assert not {"HTTPS_PROXY", "PIP_INDEX_URL", "PYTHONPATH", "VIRTUAL_ENV"} & set(seen)


def test_an_uncontained_child_gets_the_allowlist_by_default(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("REPO_SERVICE_TOKEN", TOKEN)
    result = run_process(["env"], cwd=tmp_path, timeout=30)
    assert result.exit_code == 0
    assert TOKEN not in result.stdout and "PATH=" in result.stdout
    # What our package set in its own process stays there.
    assert os.environ.get("PYTHON_DOTENV_DISABLED") == "1"
    assert "PYTHON_DOTENV_DISABLED" not in result.stdout


def test_a_command_run_uncontained_does_not_see_our_credentials(
    monkeypatch: pytest.MonkeyPatch, settings: Settings, repo: Path
) -> None:
    """COMMAND_CONTAINMENT=off: the policy alone decides, and `env` is allowed."""
    monkeypatch.setenv("REPO_SERVICE_TOKEN", TOKEN)
    off = load_settings(
        None, sandbox_backend="none", phoenix_enabled=False, command_containment="off"
    )
    _, tools = make_tools(repo, off, AutoApprover())
    result = tools["run_cmd"](command="env")
    assert "error" not in result, result
    assert "PATH=" in result["stdout"] and TOKEN not in str(result)


# --- ripgrep -------------------------------------------------------------------------------


@pytest.fixture
def rg_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A ripgrep config in our environment whose `--pre` writes a marker, and which hides
    notes.md: what RIPGREP_CONFIG_PATH did when a repository's .env set it."""
    if shutil.which("rg") is None:
        pytest.skip("ripgrep is not installed")
    marker = tmp_path / "marker"
    script = tmp_path / "pre.sh"
    script.write_text(f'#!/bin/sh\necho ran >> {marker}\ncat "$1"\n')
    script.chmod(0o755)
    config = tmp_path / "rg.conf"
    config.write_text(f"--pre={script}\n--glob=!notes.md\n")
    monkeypatch.setenv("RIPGREP_CONFIG_PATH", str(config))
    return config, marker


@pytest.fixture
def needle_repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"notes.md": "the needle\n", "a.py": "needle = 1\n"})


def test_control_ripgrep_obeys_the_config_in_its_environment(
    rg_config: tuple[Path, Path], needle_repo: Path
) -> None:
    _, marker = rg_config
    rg = shutil.which("rg")
    assert rg is not None
    out = subprocess.run(
        [rg, "--line-number", "needle", "."], cwd=needle_repo, capture_output=True, text=True
    )
    assert marker.exists() and "notes.md" not in out.stdout


def test_rg_search_reads_no_ripgrep_config(
    rg_config: tuple[Path, Path], needle_repo: Path, settings: Settings
) -> None:
    _, marker = rg_config
    _, tools = make_tools(needle_repo, settings)
    result = tools["rg_search"](pattern="needle")
    assert not marker.exists(), marker.read_text()
    assert sorted(m["path"] for m in result["matches"]) == ["a.py", "notes.md"]


def test_list_files_reads_no_ripgrep_config(
    rg_config: tuple[Path, Path], needle_repo: Path, settings: Settings
) -> None:
    _, marker = rg_config
    _, tools = make_tools(needle_repo, settings)
    result = tools["list_files"]()
    assert "notes.md" in result["files"], result
    assert not marker.exists()
