"""The one error schema: `{error, message, tool, context, recovery_suggestion}`.

Tools never raise into the agent. Inside a tool, code raises `ToolError`; the tool's guard
turns it (and any unexpected exception) into this dict. Every `error` event and failed
command uses the same shape.
"""

from __future__ import annotations

from typing import Any


class ErrorType:
    """The error codes a tool can answer with. Small models key their recovery on these."""

    PATH_OUTSIDE_REPO = "PATH_OUTSIDE_REPO"
    FILE_NOT_FOUND = "FILE_NOT_FOUND"
    NOT_A_FILE = "NOT_A_FILE"
    BINARY_FILE = "BINARY_FILE"
    INVALID_ARGUMENT = "INVALID_ARGUMENT"
    INVALID_LINE_RANGE = "INVALID_LINE_RANGE"
    NO_MATCH = "NO_MATCH"
    AMBIGUOUS_MATCH = "AMBIGUOUS_MATCH"
    NOT_A_GIT_REPO = "NOT_A_GIT_REPO"
    GIT_ERROR = "GIT_ERROR"
    TOOL_UNAVAILABLE = "TOOL_UNAVAILABLE"
    TIMEOUT = "TIMEOUT"
    CANCELLED = "CANCELLED"
    COMMAND_DENIED = "COMMAND_DENIED"
    UNTRUSTED_WORKSPACE = "UNTRUSTED_WORKSPACE"
    APPROVAL_DENIED = "APPROVAL_DENIED"
    COMMAND_FAILED = "COMMAND_FAILED"
    NO_TEST_COMMAND = "NO_TEST_COMMAND"
    PATCH_NOT_FOUND = "PATCH_NOT_FOUND"
    PATCH_DOES_NOT_APPLY = "PATCH_DOES_NOT_APPLY"
    PATCH_STALE = "PATCH_STALE"
    PATCH_NOT_PENDING = "PATCH_NOT_PENDING"
    LOOP_DETECTED = "LOOP_DETECTED"
    UNKNOWN_TOOL = "UNKNOWN_TOOL"
    INTERNAL_ERROR = "INTERNAL_ERROR"


def error_dict(
    error: str,
    message: str,
    *,
    tool: str | None = None,
    context: dict[str, Any] | None = None,
    recovery_suggestion: str | None = None,
) -> dict[str, Any]:
    """Build an error in the one schema; keys are always present so consumers need no guards."""
    return {
        "error": error,
        "message": message,
        "tool": tool,
        "context": context or {},
        "recovery_suggestion": recovery_suggestion,
    }


def is_error(result: Any) -> bool:
    return isinstance(result, dict) and isinstance(result.get("error"), str)


class ToolError(Exception):
    """Raised inside tools and validators; the tool guard turns it into an error dict."""

    def __init__(
        self,
        error: str,
        message: str,
        *,
        recovery_suggestion: str | None = None,
        context: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.error = error
        self.message = message
        self.recovery_suggestion = recovery_suggestion
        self.context = context or {}

    def to_dict(self, tool: str | None = None) -> dict[str, Any]:
        return error_dict(
            self.error,
            self.message,
            tool=tool,
            context=self.context,
            recovery_suggestion=self.recovery_suggestion,
        )
