"""The command line end to end, run the way a user runs it: a real process, a real repository."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import make_repo
from smol_instruments.base.config import Settings
from smol_instruments.patches.store import PatchStore
from smol_instruments.tools import TOOL_NAMES

CALC = "app/calc.py"


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """An empty current directory: no stray .env is read."""
    path = tmp_path / "cwd"
    path.mkdir()
    return path


@pytest.fixture
def cli_env() -> dict[str, str]:
    """The environment without any smol-instruments setting, plus fast, offline choices."""
    names = {name.upper() for name in Settings.model_fields}
    env = {k: v for k, v in os.environ.items() if k.upper() not in names}
    env.update(
        {
            "SANDBOX_BACKEND": "none",
            "PHOENIX_ENABLED": "false",
            "MODEL_BACKEND": "server",  # never start the embedded model here
            "MODEL_API_BASE": "http://127.0.0.1:9",  # nothing listens: the check fails fast
        }
    )
    return env


class Cli:
    def __init__(self, cwd: Path, env: dict[str, str]) -> None:
        self.cwd = cwd
        self.env = env

    def __call__(
        self, *args: str, stdin: str | None = None, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [sys.executable, "-m", "smol_instruments", *args],
            cwd=self.cwd,
            env=env or self.env,
            input=stdin,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert "Traceback" not in result.stderr, result.stderr
        return result


@pytest.fixture
def cli(workdir: Path, cli_env: dict[str, str]) -> Cli:
    return Cli(workdir, cli_env)


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("smol-instruments: ")
    return lines[0]


def as_json(result: subprocess.CompletedProcess[str]) -> Any:
    return json.loads(result.stdout)


def call_tool(
    cli: Cli, repo: Path, name: str, args: dict[str, Any], *flags: str
) -> subprocess.CompletedProcess[str]:
    return cli("tool", name, *flags, "--repo", str(repo), "--args", json.dumps(args))


# --- packaging -------------------------------------------------------------------------------


def test_console_script_exists() -> None:
    script = Path(sys.executable).parent / "smol-instruments"
    assert script.is_file()
    assert os.access(script, os.X_OK)
    result = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0
    assert result.stdout.startswith("smol-instruments ")


def test_no_command_prints_help(cli: Cli) -> None:
    result = cli()
    assert result.returncode == 2
    assert "usage: smol-instruments" in result.stderr


# --- tool ------------------------------------------------------------------------------------


def test_tool_read_file(cli: Cli, repo: Path) -> None:
    result = cli("tool", "read_file", "--repo", str(repo), "--args", '{"path": "app/calc.py"}')
    assert result.returncode == 0, result.stderr
    data = as_json(result)
    assert data["path"] == CALC
    assert data["content"] == (repo / CALC).read_text()
    assert data["truncated"] is False


def test_tool_output_cannot_steer_the_terminal(cli: Cli, repo: Path) -> None:
    """A file's text reaches the terminal with its escapes and bidi overrides as JSON escapes."""
    hostile = "x = 1\x1b[8m  # hidden\x1b[0m\n\u202eevil = 2\u009b2K\n"
    (repo / "app" / "hostile.py").write_text(hostile)
    result = cli("tool", "read_file", "--repo", str(repo), "--args", '{"path": "app/hostile.py"}')
    assert result.returncode == 0, result.stderr
    for raw in ("\x1b", "\u202e", "\u009b"):
        assert raw not in result.stdout
    assert as_json(result)["content"] == hostile


def test_tool_repo_from_a_subdirectory(cli: Cli, repo: Path) -> None:
    result = cli("tool", "repo_info", "--repo", str(repo / "app"))
    assert result.returncode == 0
    assert as_json(result)["root"] == str(repo.resolve())


def test_tool_default_repo_is_the_current_directory(cli_env: dict[str, str], repo: Path) -> None:
    result = Cli(repo, cli_env)("tool", "list_files", "--args", '{"pattern": "*.py"}')
    assert result.returncode == 0
    assert CALC in as_json(result)["files"]


def test_tool_error_is_json_exit_1(cli: Cli, repo: Path) -> None:
    result = cli("tool", "read_file", "--repo", str(repo), "--args", '{"path": "app/calcs.py"}')
    assert result.returncode == 1
    data = as_json(result)
    assert data["error"] == "FILE_NOT_FOUND"
    assert data["tool"] == "read_file"
    assert "'app/calc.py'" in data["recovery_suggestion"]


@pytest.mark.parametrize("bad", ["{path: 'x'}", '{"path": "a"'])
def test_tool_bad_args_json_exit_2(cli: Cli, repo: Path, bad: str) -> None:
    result = cli("tool", "read_file", "--repo", str(repo), "--args", bad)
    assert result.returncode == 2
    data = as_json(result)
    assert data["error"] == "INVALID_ARGUMENT"
    assert "--args is not valid JSON" in data["message"]
    assert "--args '{" in data["recovery_suggestion"]


def test_tool_unknown_name(cli: Cli, repo: Path) -> None:
    result = cli("tool", "read_fil", "--repo", str(repo))
    assert result.returncode == 1
    data = as_json(result)
    assert data["error"] == "UNKNOWN_TOOL"
    assert "Did you mean 'read_file'?" in data["recovery_suggestion"]
    for name in TOOL_NAMES:
        assert name in data["recovery_suggestion"]


def test_tool_without_name(cli: Cli, repo: Path) -> None:
    line = one_line_error(cli("tool", "--repo", str(repo)))
    assert "read_file" in line and "run_tests" in line


def test_tool_batch_with_name_is_a_usage_error(cli: Cli, repo: Path) -> None:
    one_line_error(cli("tool", "read_file", "--batch", "--repo", str(repo), stdin=""))


def test_tool_batch(cli: Cli, repo: Path) -> None:
    lines = [
        json.dumps({"tool": "read_file", "args": {"path": "README.md"}}),
        "{this is not json",
        "",
        json.dumps({"tool": "no_such_tool", "args": {}}),
        json.dumps({"tool": "list_files", "args": {"pattern": "app/*.py"}}),
        json.dumps({"tool": "repo_info"}),
        json.dumps([1, 2]),
        json.dumps({"tool": "read_file", "args": {"path": "../../etc/passwd"}}),
        json.dumps({"tool": "rg_search", "args": {"pattern": "def mul"}}),
        json.dumps({"tool": "read_file", "args": ["app/calc.py"]}),
        json.dumps({"tool": "read_file", "args": {"file": "app/calc.py"}}),
    ]
    result = cli("tool", "--batch", "--repo", str(repo), stdin="\n".join(lines) + "\n")
    assert result.returncode == 1  # some lines failed
    out = result.stdout.splitlines()
    assert len(out) == 10  # one per non-blank line, in order
    results = [json.loads(line) for line in out]
    assert results[0]["content"] == "# Sample\n\nA tiny project for tests.\n"
    assert results[1]["error"] == "INVALID_ARGUMENT"
    assert "line 2 is not valid JSON" in results[1]["message"]
    assert results[2]["error"] == "UNKNOWN_TOOL"
    assert results[3]["files"] == ["app/__init__.py", "app/calc.py", "app/main.py"]
    assert results[4]["branch"] == "main"
    assert results[5]["error"] == "UNKNOWN_TOOL"
    assert results[6]["error"] == "PATH_OUTSIDE_REPO"
    assert "root:x:0:0" not in result.stdout
    assert results[7]["matches"][0]["line"] == 5
    assert results[8]["error"] == "INVALID_ARGUMENT"
    assert "JSON object" in results[8]["message"]
    assert "use path= instead of file=" in results[9]["recovery_suggestion"]


def test_tool_batch_all_ok_exit_0(cli: Cli, repo: Path) -> None:
    stdin = json.dumps({"tool": "git_status", "args": {}}) + "\n"
    result = cli("tool", "--batch", "--repo", str(repo), stdin=stdin)
    assert result.returncode == 0
    assert json.loads(result.stdout)["clean"] is True


def test_patch_across_separate_invocations(cli: Cli, repo: Path) -> None:
    original = (repo / CALC).read_text()
    args = {"path": CALC, "old_text": "return a - b", "new_text": "return a + b"}

    def propose() -> str:
        result = cli("tool", "propose_patch", "--repo", str(repo), "--args", json.dumps(args))
        assert result.returncode == 0, result.stdout
        return str(as_json(result)["patch_id"])

    patch_id = propose()
    store = PatchStore.for_repository(repo).directory
    assert store is not None and (store / f"{patch_id}.json").is_file()
    assert not (repo / ".git/smol-instruments").exists()  # nothing of ours in the repository
    assert (repo / CALC).read_text() == original

    shown = cli(
        "tool", "show_patch", "--repo", str(repo), "--args", json.dumps({"patch_id": patch_id})
    )
    assert shown.returncode == 0
    data = as_json(shown)
    assert data["status"] == "pending"
    assert "+    return a + b" in data["diff"]

    # No --yes and stdin is not a terminal: nobody can approve, so it is rejected.
    refused = cli(
        "tool", "apply_patch", "--repo", str(repo), "--args", json.dumps({"patch_id": patch_id})
    )
    assert refused.returncode == 0
    assert as_json(refused)["applied"] is False
    assert as_json(refused)["status"] == "rejected"
    assert (repo / CALC).read_text() == original

    patch_id = propose()
    accepted = call_tool(cli, repo, "apply_patch", {"patch_id": patch_id}, "--yes")
    assert accepted.returncode == 0
    assert as_json(accepted)["applied"] is True
    assert (repo / CALC).read_text() == original.replace("a - b", "a + b")
    again = cli(
        "tool", "show_patch", "--repo", str(repo), "--args", json.dumps({"patch_id": patch_id})
    )
    assert as_json(again)["status"] == "accepted"


def test_tool_non_utf8_file_does_not_crash(cli: Cli, repo: Path) -> None:
    (repo / "legacy.py").write_bytes(b'name = "caf\xe9"\nx = 1\n')
    env = dict(cli.env, PYTHONIOENCODING="utf-8:strict")
    args = json.dumps({"path": "legacy.py", "old_text": "x = 1", "new_text": "x = 2"})
    result = Cli(cli.cwd, env)("tool", "propose_patch", "--repo", str(repo), "--args", args)
    assert result.returncode == 0


STATS = """\"\"\"Small statistics.\"\"\"

from app.util import clamp


def average(xs):
    return sum(xs) / len(xs)


def spread(xs):
    return max(xs) - min(xs)


def clamped(xs, low, high):
    return [clamp(x, low, high) for x in xs]


def total(xs):
    return sum(xs)
"""


def propose_and_apply(cli: Cli, repo: Path, args: dict[str, Any]) -> dict[str, Any]:
    """propose_patch, then apply_patch --yes: the proposal's result."""
    proposed = call_tool(cli, repo, "propose_patch", args)
    assert proposed.returncode == 0, proposed.stdout
    data = as_json(proposed)
    applied = call_tool(cli, repo, "apply_patch", {"patch_id": data["patch_id"]}, "--yes")
    assert as_json(applied)["applied"] is True, applied.stdout
    return dict(data)


def test_patch_merges_complete_functions_by_name(cli: Cli, repo: Path) -> None:
    """What small models write well: the whole new function, not old_text copied exactly."""
    (repo / "app/stats.py").write_text(STATS)
    new_text = (
        "from app.util import truncate\n\n"
        "def average(xs):\n    if not xs:\n        return 0.0\n    return sum(xs) / len(xs)\n\n"
        "def top(xs, n):\n    return truncate(sorted(xs), n)\n"
    )
    args = {"path": "app/stats.py", "old_text": "", "new_text": new_text}
    data = propose_and_apply(cli, repo, args)
    assert data["merged"] == "replaced average; added top; import extended: truncate"
    assert data["summary"] == "merged: " + data["merged"]
    assert [(h["line"], h["added"], h["removed"]) for h in data["hunks"]] == [
        (3, 1, 1),
        (7, 2, 0),
        (20, 4, 0),
    ]
    assert "+from app.util import clamp, truncate\n" in data["diff"]
    assert (repo / "app/stats.py").read_text() == (
        STATS.replace("import clamp", "import clamp, truncate").replace(
            "def average(xs):\n", "def average(xs):\n    if not xs:\n        return 0.0\n"
        )
        + "\n\ndef top(xs, n):\n    return truncate(sorted(xs), n)\n"
    )


def test_patch_merges_a_method_into_its_class_keeping_crlf(cli: Cli, repo: Path) -> None:
    original = "class Stack:\r\n    def push(self, x):\r\n        self.items.append(x)\r\n\r\n"
    original += "    def pop(self):\r\n        return self.items.pop(0)\r\n"
    (repo / "app/stack.py").write_bytes(original.encode())
    new_text = "def pop(self):\n    return self.items.pop()\n"
    args = {"path": "app/stack.py", "old_text": "", "new_text": new_text}
    data = propose_and_apply(cli, repo, args)
    assert data["merged"] == "replaced Stack.pop"
    assert "-        return self.items.pop(0)" in data["diff"]
    assert (repo / "app/stack.py").read_bytes() == original.replace("pop(0)", "pop()").encode()


@pytest.mark.parametrize(
    ("new_text", "message", "suggestion"),
    [
        ("def add(a, b):\n    return a - b\n", "is the same as what app/calc.py has (add)", "fix"),
        ("def add(a, b:\n    return a + b\n", "not valid Python (line 1:", "Fix line 1"),
        ("print(add(1, 2))\n", "line 1 of new_text (`print(add(1, 2))`)", "old_text"),
    ],
)
def test_patch_merge_refusals_say_what_to_do(
    cli: Cli, repo: Path, new_text: str, message: str, suggestion: str
) -> None:
    result = call_tool(
        cli, repo, "propose_patch", {"path": CALC, "old_text": "", "new_text": new_text}
    )
    assert result.returncode == 1
    data = as_json(result)
    assert data["error"] == "INVALID_ARGUMENT"
    assert message in data["message"]
    assert suggestion in data["recovery_suggestion"]
    store = PatchStore.for_repository(repo).directory
    assert store is not None and not list(store.glob("*.json"))


def test_patch_empty_old_text_on_an_existing_non_python_file(cli: Cli, repo: Path) -> None:
    args = {"path": "README.md", "old_text": " ", "new_text": "# Other\n"}
    result = call_tool(cli, repo, "propose_patch", args)
    assert result.returncode == 1
    data = as_json(result)
    assert data["error"] == "INVALID_ARGUMENT"
    assert "README.md already exists" in data["message"]
    assert "only for Python" in data["recovery_suggestion"]


def test_tool_run_cmd_needs_yes_for_approval(cli: Cli, repo: Path) -> None:
    command = json.dumps({"command": "pip install --no-index no-such-package-xyz"})
    refused = cli("tool", "run_cmd", "--repo", str(repo), "--args", command)
    assert refused.returncode == 1
    assert as_json(refused)["error"] == "APPROVAL_DENIED"
    denied = cli(
        "tool", "run_cmd", "--yes", "--repo", str(repo), "--args", '{"command": "rm -rf /"}'
    )
    assert denied.returncode == 1
    assert as_json(denied)["error"] == "COMMAND_DENIED"  # --yes never runs a deny


# --- policy ----------------------------------------------------------------------------------


def test_policy_json_deny(cli: Cli, repo: Path) -> None:
    result = cli("policy", "--repo", str(repo), "--json", "rm -rf /")
    assert result.returncode == 0
    data = as_json(result)
    assert data["command"] == "rm -rf /"
    assert data["verdict"] == "deny"
    assert data["rule"] and data["reason"]


def test_policy_text(cli: Cli, repo: Path) -> None:
    result = cli("policy", "--repo", str(repo), "ls", "-la")
    assert result.returncode == 0
    assert result.stdout.startswith("allow")


def test_policy_stdin(cli: Cli, repo: Path) -> None:
    commands = ["ls", "cat README.md", "", "python -m pytest", "pip install x", "rm -rf /"]
    result = cli("policy", "--repo", str(repo), "-", stdin="\n".join(commands) + "\n")
    assert result.returncode == 0
    out = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(out) == 5
    for data in out:
        assert set(data) >= {"command", "verdict", "rule", "reason"}
        assert data["verdict"] in {"allow", "require_approval", "deny"}
    assert [d["command"] for d in out] == [c for c in commands if c]
    assert [d["verdict"] for d in out] == [
        "allow",
        "allow",
        "allow",
        "require_approval",
        "deny",
    ]


def test_policy_without_command(cli: Cli, repo: Path) -> None:
    one_line_error(cli("policy", "--repo", str(repo)))


# --- doctor ----------------------------------------------------------------------------------


def test_doctor(cli: Cli, repo: Path) -> None:
    result = cli("doctor", "--repo", str(repo))
    assert result.returncode == 0, result.stdout  # git and rg are installed here
    lines = result.stdout.splitlines()
    checks = [line for line in lines if line.split(" ", 1)[0] in {"ok", "warn", "fail"}]
    names = [line.split()[1] for line in checks]
    for name in ("python", "settings", "git", "ripgrep", "repo", "model", "tracing", "sandbox"):
        assert names.count(name) == 1, lines
    for line in lines:
        assert line in checks or line.strip().startswith("fix: "), line
    by_name = dict(zip(names, checks, strict=True))
    assert by_name["git"].startswith("ok")
    assert by_name["ripgrep"].startswith("ok")
    assert by_name["model"].startswith("warn")  # nothing listens on port 9


def test_doctor_json_outside_git(cli: Cli, workdir: Path) -> None:
    result = cli("doctor", "--json", "--repo", str(workdir))
    assert result.returncode == 0  # not a git repository is a warning, not a failure
    checks = as_json(result)
    assert {c["name"] for c in checks} >= {"git", "ripgrep", "settings", "model", "repo"}
    for check in checks:
        assert check["status"] in {"ok", "warn", "fail"}
        if check["status"] != "ok":
            assert check["fix"], check
    repo_check = next(c for c in checks if c["name"] == "repo")
    assert repo_check["status"] == "warn"
    assert "NOT_A_GIT_REPO" in repo_check["detail"]


# --- bad settings and bad --repo ---------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [("doctor",), ("tool", "repo_info")],
)
def test_invalid_setting_is_one_line_exit_2(
    workdir: Path, cli_env: dict[str, str], repo: Path, argv: tuple[str, ...]
) -> None:
    env = dict(cli_env, SANDBOX_BACKEND="podman")
    line = one_line_error(Cli(workdir, env)(argv[0], "--repo", str(repo), *argv[1:]))
    assert "SANDBOX_BACKEND" in line
    assert "podman" in line
    assert "auto, docker, local or none" in line


def test_invalid_setting_in_dotenv(workdir: Path, cli_env: dict[str, str]) -> None:
    (workdir / ".env").write_text("MODEL_TEMPERATURE=hot\n")
    line = one_line_error(Cli(workdir, cli_env)("doctor"))
    assert "MODEL_TEMPERATURE" in line
    assert "from 0 to 2" in line


@pytest.mark.parametrize(
    "argv",
    [
        ("tool", "read_file", "--args", '{"path": "x"}'),
        ("policy", "ls"),
    ],
)
def test_repo_that_does_not_exist(cli: Cli, tmp_path: Path, argv: tuple[str, ...]) -> None:
    missing = tmp_path / "no" / "such" / "repo"
    # Options go before the command: `policy` takes everything after it as the command.
    line = one_line_error(cli(argv[0], "--repo", str(missing), *argv[1:], stdin=""))
    assert str(missing) in line
    assert "no such directory" in line


def test_repo_that_is_a_file(cli: Cli, repo: Path) -> None:
    line = one_line_error(cli("tool", "repo_info", "--repo", str(repo / "README.md")))
    assert "not a directory" in line


def test_tool_on_a_plain_directory(cli: Cli, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    make_repo(plain, {"a.txt": "hello\n"})
    subprocess.run(["rm", "-rf", str(plain / ".git")], check=True)
    result = cli("tool", "git_status", "--repo", str(plain))
    assert result.returncode == 1
    assert as_json(result)["error"] == "NOT_A_GIT_REPO"


@pytest.mark.parametrize(
    "args",
    [
        ("tool", "run_cmd", "--args", '{"command": "ls"}', "--repo", "REPO"),
        ("policy", "--repo", "REPO", "ls"),
    ],
)
def test_a_malformed_repository_policy_is_one_line_and_no_traceback(
    cli: Cli, repo: Path, args: tuple[str, ...]
) -> None:
    policy = repo / ".smol-instruments" / "policy.toml"
    policy.parent.mkdir()
    policy.write_text('[[rule]]\nverdict = "sometimes"\n')
    line = one_line_error(cli(*[str(repo) if a == "REPO" else a for a in args]))
    assert "policy.toml" in line


def test_a_fault_in_a_run_reaches_the_command_as_itself() -> None:
    """What a run raises on its worker thread is raised by the command as itself (a judge
    that raised once ended `run` in `KeyError: 'outcome'`, the fault itself lost in a
    thread's traceback); control: an outcome comes back as it is."""
    from smol_instruments.cli.main import _run_turn

    class Session:
        def __init__(self, fault: Exception | None) -> None:
            self.fault = fault

        def run(self, task: str) -> str:
            if self.fault is not None:
                raise self.fault
            return f"done: {task}"

    with pytest.raises(ValueError, match="zip"):
        _run_turn(Session(ValueError("zip() argument 2 is longer")), "t")
    assert _run_turn(Session(None), "t") == "done: t"
