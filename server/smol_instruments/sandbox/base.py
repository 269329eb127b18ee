"""The sandbox interface: `validate(diff, checks) -> Validation`.

A backend answers, before the user sees a patch, whether it applies to the repository and
whether the checks pass on the patched copy. It never touches the user's working tree.
"""

from __future__ import annotations

import codecs
import os
import shlex
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

#: The syntax check run on every Python file a patch creates or changes.
SYNTAX_CHECK = "python3 -m py_compile"


@dataclass
class CheckResult:
    """One check run on the patched copy (a syntax check or the configured check command)."""

    command: str
    passed: bool
    output: str = ""
    exit_code: int | None = None
    duration_ms: int | None = None
    timed_out: bool = False

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "command": self.command,
            "passed": self.passed,
            "output": self.output,
        }
        if self.exit_code is not None:
            data["exit_code"] = self.exit_code
        if self.duration_ms is not None:
            data["duration_ms"] = self.duration_ms
        if self.timed_out:
            data["timed_out"] = True
        return data


@dataclass
class Validation:
    """PROTOCOL.md's `validation` object, with a message explaining `applies: false`."""

    backend: str
    applies: bool
    checks: list[CheckResult] = field(default_factory=list)
    message: str | None = None
    duration_ms: int | None = None

    @property
    def passed(self) -> bool:
        return self.applies and all(check.passed for check in self.checks)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "backend": self.backend,
            "applies": self.applies,
            "checks": [check.to_dict() for check in self.checks],
        }
        if self.message:
            data["message"] = self.message
        if self.duration_ms is not None:
            data["duration_ms"] = self.duration_ms
        return data


class Sandbox(Protocol):
    """What the patch tools need from a sandbox backend."""

    name: str

    def validate(self, diff: str, checks: list[str] | None = None) -> Validation:
        """Apply `diff` (git unified diff, a/ b/ paths) to a copy and run `checks` there."""
        ...

    def close(self) -> None:
        """Release containers or copies held for this session."""
        ...


class NoneSandbox:
    """No validation at all, said honestly: `backend: none`, nothing was run."""

    name = "none"

    def validate(self, diff: str, checks: list[str] | None = None) -> Validation:
        return Validation(
            backend="none",
            applies=True,
            checks=[],
            message="not validated: the sandbox backend is 'none'",
        )

    def close(self) -> None:
        return None


class SandboxUnavailable(RuntimeError):
    """The requested backend cannot run here; `reason` and `fix` are one line each."""

    def __init__(self, reason: str, fix: str | None = None) -> None:
        super().__init__(f"{reason} (fix: {fix})" if fix else reason)
        self.reason = reason
        self.fix = fix


def keep_tail(text: str, max_chars: int) -> str:
    """The end of `text` (where test failures are), with a note saying how much was cut."""
    if len(text) <= max_chars:
        return text
    tail = text[-max_chars:]
    newline = tail.find("\n")
    if 0 <= newline < len(tail) // 4:  # start on a whole line when that costs little
        tail = tail[newline + 1 :]
    return f"[truncated: showing the last {len(tail)} of {len(text)} characters]\n{tail}"


def _unquote_git_path(path: str) -> str:
    if len(path) >= 2 and path[0] == path[-1] == '"':
        raw = codecs.escape_decode(path[1:-1].encode("latin-1"))[0]
        return bytes(raw).decode("utf-8", errors="replace")
    return path


def changed_files(diff: str) -> list[str]:
    """Paths a unified diff creates or modifies (new side, `b/` removed; deletions excluded)."""
    paths: list[str] = []
    for line in diff.splitlines():
        if not line.startswith("+++ "):
            continue
        path = line[4:]
        if not path.startswith('"'):
            path = path.split("\t", 1)[0].rstrip()
        path = _unquote_git_path(path)
        if path == "/dev/null":
            continue
        if path.startswith("b/"):
            path = path[2:]
        if path not in paths:
            paths.append(path)
    return paths


def changed_python_files(diff: str) -> list[str]:
    return [path for path in changed_files(diff) if path.endswith(".py")]


def syntax_command(files: list[str]) -> str:
    return f"{SYNTAX_CHECK} {shlex.join(files)}"


def workspace_files(root: Path) -> list[str]:
    """What a validation copies: tracked and untracked-not-ignored files (all but .git outside git).

    Ignored files (virtualenvs, node_modules, build output) are left out, so a copy of a
    small repository stays small; files deleted from the working tree are skipped.
    """
    try:
        out = subprocess.run(
            [
                "git",
                "-C",
                str(root),
                "ls-files",
                "-z",
                "--cached",
                "--others",
                "--exclude-standard",
            ],
            capture_output=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        out = None
    if out is not None and out.returncode == 0:
        names = dict.fromkeys(
            name.rstrip("/")
            for name in out.stdout.decode("utf-8", errors="surrogateescape").split("\0")
            if name
        )
        return [name for name in names if os.path.lexists(root / name)]
    files: list[str] = []
    for directory, subdirs, filenames in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if d != ".git")
        rel = Path(directory).relative_to(root)
        files += [str(rel / name) if str(rel) != "." else name for name in sorted(filenames)]
    return files


def check_result(
    command: str,
    exit_code: int | None,
    output: str,
    duration_ms: int,
    *,
    timed_out: bool,
    timeout_s: float,
    max_chars: int,
) -> CheckResult:
    """One CheckResult, its output cut to the tail and a timeout said in words."""
    if timed_out:
        output = f"{output.rstrip()}\n[killed: still running after {timeout_s:g} s]".lstrip()
    return CheckResult(
        command=command,
        passed=exit_code == 0 and not timed_out,
        output=keep_tail(output, max_chars),
        exit_code=exit_code,
        duration_ms=duration_ms,
        timed_out=timed_out,
    )
