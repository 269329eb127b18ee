"""File tools: `read_file` (whole or a line range) and `read_file_snippet` (around a pattern)."""

from __future__ import annotations

import os
import re
from typing import Any

from ..base.errors import ErrorType, ToolError
from .base import RepoTool, ToolContext, guarded
from .repo import list_repo_files
from .validation import line_range, optional_int, require_path, require_str, suggest_paths

MAX_FILE_BYTES = 20 * 1024 * 1024


def read_repo_text(ctx: ToolContext, path: str, errors: str = "replace") -> tuple[str, str]:
    """(relative path, text) of a repository file, or a ToolError a small model can act on.

    The text is what the user's editor shows when the host gave a reader (unsaved changes
    included), asked only once the jail has allowed the path and the file is a regular one.

    `errors="surrogateescape"` keeps undecodable bytes exactly, for text that will be written.
    """
    resolved = ctx.jail.resolve(path)
    rel = ctx.jail.relative(resolved)
    try:  # opened once, no link followed: the checked name cannot be swapped under us
        handle = ctx.jail.tree.open_file(rel)
    except (FileNotFoundError, NotADirectoryError):
        raise ToolError(
            ErrorType.FILE_NOT_FOUND,
            f"file not found: {path}",
            recovery_suggestion=suggest_paths(rel, list_repo_files(ctx)),
            context={"path": path},
        ) from None
    except IsADirectoryError:
        raise ToolError(
            ErrorType.NOT_A_FILE,
            f"{rel} is a directory, not a file",
            recovery_suggestion=f"List its files with list_files(pattern='{rel.rstrip('/')}/**').",
            context={"path": path},
        ) from None
    with handle:
        size = os.fstat(handle.fileno()).st_size
        if size > MAX_FILE_BYTES:
            raise ToolError(
                ErrorType.INVALID_ARGUMENT,
                f"{rel} is {size} bytes, too large to read",
                recovery_suggestion=f"Search it instead: rg_search(pattern='...', glob='{rel}').",
                context={"path": path, "size": size},
            )
        data = handle.read()
    if b"\0" in data[:8192]:
        raise ToolError(
            ErrorType.BINARY_FILE,
            f"{rel} is a binary file",
            recovery_suggestion="Binary files cannot be read as text; look at the source files instead.",
            context={"path": path, "size": size},
        )
    text = data.decode("utf-8", errors=errors)
    # the jail allowed it and it is a regular file here: now the editor may say what it shows
    shown = ctx.buffer_text(rel, text)
    if shown is not None and len(shown) <= MAX_FILE_BYTES and "\0" not in shown[:8192]:
        return rel, shown
    return rel, text


#: A ranged read of a file this short shows the whole file.
WHOLE_FILE_LINES = 60


class ReadFileTool(RepoTool):
    name = "read_file"
    description = (
        "Read a text file, whole or lines start_line..end_line (1-based, inclusive; a file of "
        f"{WHOLE_FILE_LINES} lines or fewer is always shown whole). "
        "Long files come back cut with truncated=True: read further with start_line."
    )
    inputs = {
        "path": {"type": "string", "description": "file path relative to the repository root"},
        "start_line": {"type": "integer", "description": "first line (1-based)", "nullable": True},
        "end_line": {"type": "integer", "description": "last line (inclusive)", "nullable": True},
    }
    example = "read_file(path='<file>', start_line=1, end_line=80)"

    @guarded
    def forward(
        self, path: str, start_line: int | None = None, end_line: int | None = None
    ) -> dict[str, Any]:
        limits = self.limits
        path = require_path("path", path, max_chars=limits.max_chars)
        start = optional_int("start_line", start_line, minimum=-(10**9), maximum=10**9)
        end = optional_int("end_line", end_line, minimum=-(10**9), maximum=10**9)
        rel, text = read_repo_text(self.ctx, path)
        lines = text.splitlines(keepends=True)
        span = line_range(
            start, end, len(lines), limits.max_line_range, default_span=limits.truncate_lines
        )
        note = None
        if (start is not None or end is not None) and len(lines) <= WHOLE_FILE_LINES:
            # Small models guess line numbers (lines 10-15 of a 16-line file, again and again).
            note = f"the file has only {len(lines)} lines: all of them are shown"
            start = end = None
            span = line_range(
                None, None, len(lines), limits.max_line_range, default_span=len(lines)
            )
        selected = lines[span.start - 1 : span.end]
        shown: list[str] = []
        size = 0
        for line in selected:  # cut on whole lines so end_line says exactly what was shown
            if len(shown) >= limits.truncate_lines or size + len(line) > limits.truncate_chars:
                break
            shown.append(line)
            size += len(line)
        partial = not shown and bool(selected)
        if partial:  # one enormous line: show its start
            shown = [selected[0][: limits.truncate_chars]]
        content = "".join(shown)
        end_shown = span.start + len(shown) - 1
        truncated = (
            partial
            or len(shown) < len(selected)
            or (start is None and end is None and span.end < len(lines))
        )
        data: dict[str, Any] = {
            "path": rel,
            "start_line": span.start,
            "end_line": end_shown,
            "total_lines": len(lines),
            "content": content,
            "truncated": truncated,
        }
        if truncated and end_shown < len(lines):
            data["next"] = f"read_file(path='{rel}', start_line={end_shown + 1})"
        if note is not None:
            data["note"] = note
        return data


def compile_pattern(pattern: str) -> re.Pattern[str]:
    """The pattern as a regex; if it is not a valid one, as the literal text the model meant."""
    try:
        return re.compile(pattern)
    except re.error:
        return re.compile(re.escape(pattern))


class ReadFileSnippetTool(RepoTool):
    name = "read_file_snippet"
    description = "Show the lines around each match of a pattern (regex or plain text) in one file."
    inputs = {
        "path": {"type": "string", "description": "file path relative to the repository root"},
        "pattern": {"type": "string", "description": "regex or plain text to find"},
        "context_lines": {
            "type": "integer",
            "description": "lines before and after (default 3)",
            "nullable": True,
        },
    }
    example = "read_file_snippet(path='<file>', pattern='<name>')"

    @guarded
    def forward(self, path: str, pattern: str, context_lines: int | None = None) -> dict[str, Any]:
        limits = self.limits
        path = require_path("path", path, max_chars=limits.max_chars)
        pattern = require_str("pattern", pattern, max_chars=1000, example="'def main'")
        around = optional_int("context_lines", context_lines, minimum=0, maximum=50, default=3)
        assert around is not None
        rel, text = read_repo_text(self.ctx, path)
        regex = compile_pattern(pattern)
        lines = text.splitlines()
        hits = [i for i, line in enumerate(lines) if regex.search(line)]
        if not hits and regex.pattern != re.escape(pattern):
            # "def average(values):" is valid as a regex and matches nothing: the text was meant
            regex = re.compile(re.escape(pattern))
            hits = [i for i, line in enumerate(lines) if regex.search(line)]
        if not hits:
            folded = re.compile(regex.pattern, re.IGNORECASE)
            near = [i + 1 for i, line in enumerate(lines) if folded.search(line)][:5]
            hint = (
                f"It matches if case is ignored at lines {near}: use pattern='(?i){pattern}'."
                if near
                else "Use a shorter or simpler pattern, or rg_search(pattern=...) to search every file."
            )
            raise ToolError(
                ErrorType.NO_MATCH,
                f"{pattern!r} does not occur in {rel} ({len(lines)} lines)",
                recovery_suggestion=hint,
                context={"path": rel, "pattern": pattern, "total_lines": len(lines)},
            )
        matches: list[dict[str, Any]] = []
        budget = limits.truncate_chars
        truncated = False
        for index in hits[: limits.truncate_items]:
            first, last = max(0, index - around), min(len(lines), index + around + 1)
            snippet = "\n".join(
                f"{n + 1:>5}{':' if n == index else ' '} {lines[n]}" for n in range(first, last)
            )
            if budget - len(snippet) < 0 and matches:
                truncated = True
                break
            budget -= len(snippet)
            matches.append({"line": index + 1, "snippet": snippet})
        truncated = truncated or len(hits) > len(matches)
        return {
            "path": rel,
            "matches": matches,
            "total_matches": len(hits),
            "total_lines": len(lines),
            "truncated": truncated,
        }
