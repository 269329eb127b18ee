"""Patch validation backends behind one small interface (docker, local, none)."""

from .base import CheckResult, NoneSandbox, Sandbox, SandboxUnavailable, Validation

__all__ = ["CheckResult", "NoneSandbox", "Sandbox", "SandboxUnavailable", "Validation"]
