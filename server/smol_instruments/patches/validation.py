"""The sandbox interface: `validate(diff, checks) -> Validation`.

A backend answers, before the user sees a patch, whether it applies to the repository and
whether the checks pass on the patched copy. It never touches the user's working tree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass
class CheckResult:
    """One check run on the patched copy (a syntax check or the configured check command).

    `fails_without_patch`: the check failed, and the same command fails the same way on the
    repository without the patch (no test fails that did not fail before): the failure is not
    this patch's doing. `without_patch`: what that run without the patch said (its summary
    line), when a failed check was compared with one. `related_tests`: of the tests that
    failed before and still fail, those that use a file the patch changes.
    """

    command: str
    passed: bool
    output: str = ""
    exit_code: int | None = None
    duration_ms: int | None = None
    timed_out: bool = False
    fails_without_patch: bool = False
    without_patch: str | None = None
    related_tests: list[str] = field(default_factory=list)

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
        if self.fails_without_patch:
            data["fails_without_patch"] = True
        if self.without_patch is not None:
            data["without_patch"] = self.without_patch
        if self.related_tests:
            data["related_tests"] = list(self.related_tests)
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
    """No validation at all, said honestly: `backend: none`, nothing was run, and why."""

    name = "none"

    def __init__(self, why: str = "the sandbox backend is 'none'") -> None:
        self.why = why

    def validate(self, diff: str, checks: list[str] | None = None) -> Validation:
        return Validation(
            backend="none", applies=True, checks=[], message=f"not validated: {self.why}"
        )

    def close(self) -> None:
        return None


class SandboxUnavailable(RuntimeError):
    """The requested backend cannot run here; `reason` and `fix` are one line each."""

    def __init__(self, reason: str, fix: str | None = None) -> None:
        super().__init__(f"{reason} (fix: {fix})" if fix else reason)
        self.reason = reason
        self.fix = fix
