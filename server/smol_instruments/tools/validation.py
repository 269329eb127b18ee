"""Validators for tool arguments and the truncation of tool output.

CodeAgent does not type-check the arguments generated code passes, so every tool argument
goes through one of these. They raise ToolError with a recovery suggestion a small model can
act on; the tool guard turns that into the error schema.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from ..base.errors import ErrorType, ToolError

T = TypeVar("T")


@dataclass(frozen=True)
class Limits:
    """The validation and truncation limits in force (from Settings)."""

    max_chars: int = 5000
    max_lines: int = 200
    max_line_range: int = 1000
    truncate_chars: int = 3000
    truncate_lines: int = 150
    truncate_items: int = 100

    @classmethod
    def from_settings(cls, settings: Any) -> Limits:
        return cls(
            max_chars=settings.validation_max_chars,
            max_lines=settings.validation_max_lines,
            max_line_range=settings.validation_max_line_range,
            truncate_chars=settings.truncation_max_chars,
            truncate_lines=settings.truncation_max_lines,
            truncate_items=settings.truncation_max_list_items,
        )


def truncate_items(items: Sequence[T], limit: int) -> tuple[list[T], bool]:
    """The first `limit` items and whether any were dropped."""
    return list(items[:limit]), len(items) > limit


def _bad(name: str, message: str, suggestion: str) -> ToolError:
    return ToolError(
        ErrorType.INVALID_ARGUMENT,
        f"{name}: {message}",
        recovery_suggestion=suggestion,
        context={"argument": name},
    )


def require_str(
    name: str,
    value: Any,
    *,
    max_chars: int,
    allow_empty: bool = False,
    example: str = "'...'",
) -> str:
    if not isinstance(value, str):
        raise _bad(
            name,
            f"must be a string, got {type(value).__name__}",
            f"Pass {name} as a string, e.g. {name}={example}.",
        )
    if "\x00" in value:
        raise _bad(name, "contains a NUL byte", f"Pass {name} as plain text without NUL bytes.")
    if not allow_empty and not value.strip():
        raise _bad(name, "is empty", f"Pass a non-empty {name}, e.g. {name}={example}.")
    if len(value) > max_chars:
        raise _bad(
            name,
            f"is {len(value)} characters long (limit {max_chars})",
            f"Shorten {name} to at most {max_chars} characters.",
        )
    return value


def require_path(name: str, value: Any, *, max_chars: int) -> str:
    """A path argument: a NUL byte is an escape attempt (PATH_OUTSIDE_REPO), not a typo."""
    if isinstance(value, str) and "\x00" in value:
        raise ToolError(
            ErrorType.PATH_OUTSIDE_REPO,
            f"{name} {value!r} is refused: it contains a NUL byte",
            recovery_suggestion="Use a plain path relative to the repository root, such as 'src/main.py'.",
            context={"argument": name},
        )
    return require_str(name, value, max_chars=max_chars, example="'src/app.py'")


def optional_path(name: str, value: Any, *, max_chars: int) -> str | None:
    return None if value is None else require_path(name, value, max_chars=max_chars)


def optional_str(name: str, value: Any, *, max_chars: int, example: str = "'...'") -> str | None:
    if value is None:
        return None
    return require_str(name, value, max_chars=max_chars, example=example)


def optional_int(
    name: str, value: Any, *, minimum: int, maximum: int, default: int | None = None
) -> int | None:
    """An optional whole number within [minimum, maximum]; numeric strings are accepted."""
    if value is None:
        return default
    if isinstance(value, bool):
        raise _bad(name, "must be a whole number, got a boolean", f"Pass {name} as e.g. {minimum}.")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value.strip())
    if not isinstance(value, int):
        raise _bad(
            name,
            f"must be a whole number, got {type(value).__name__} {value!r}",
            f"Pass {name} as a whole number from {minimum} to {maximum}.",
        )
    if value < minimum or value > maximum:
        raise _bad(
            name,
            f"{value} is out of range",
            f"Pass {name} as a whole number from {minimum} to {maximum}.",
        )
    return value


def optional_bool(name: str, value: Any) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in {"true", "false"}:
        return value.lower() == "true"
    raise _bad(name, f"must be True or False, got {value!r}", f"Pass {name}=True or {name}=False.")


def optional_number(name: str, value: Any, *, minimum: float, maximum: float) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _bad(
            name,
            f"must be a number, got {type(value).__name__}",
            f"Pass {name} as a number of seconds from {minimum:g} to {maximum:g}.",
        )
    if math.isnan(value) or value <= minimum or value > maximum:
        raise _bad(
            name,
            f"{value} is out of range",
            f"Pass {name} as a number of seconds above {minimum:g} and at most {maximum:g}.",
        )
    return float(value)


@dataclass(frozen=True)
class LineRange:
    start: int
    end: int
    clamped: bool


def line_range(
    start_line: int | None,
    end_line: int | None,
    total_lines: int,
    max_range: int,
    default_span: int,
) -> LineRange:
    """Check a 1-based inclusive line range against a file of `total_lines` lines.

    A missing start means line 1; a missing end means `default_span` lines from the start. An end
    past the end of the file is clamped (models often ask for 1-500 of a 300-line file); a start
    past it, an end before the start, or a span over `max_range` is an INVALID_LINE_RANGE error
    that states the file's length.
    """
    start = 1 if start_line is None else start_line
    length_note = f"the file has {total_lines} line{'s' if total_lines != 1 else ''}"
    if start < 1:
        raise ToolError(
            ErrorType.INVALID_LINE_RANGE,
            f"start_line {start} is before line 1 ({length_note})",
            recovery_suggestion="Lines are numbered from 1: use start_line=1.",
            context={"total_lines": total_lines},
        )
    if total_lines == 0:
        return LineRange(1, 0, clamped=start_line is not None or end_line is not None)
    if start > total_lines:
        raise ToolError(
            ErrorType.INVALID_LINE_RANGE,
            f"start_line {start} is past the end of the file ({length_note})",
            recovery_suggestion=f"Use a start_line from 1 to {total_lines}.",
            context={"total_lines": total_lines},
        )
    if end_line is None:
        end = min(total_lines, start + min(default_span, max_range) - 1)
        return LineRange(start, end, clamped=False)
    if end_line < start:
        raise ToolError(
            ErrorType.INVALID_LINE_RANGE,
            f"end_line {end_line} is before start_line {start} ({length_note})",
            recovery_suggestion=f"Use an end_line from {start} to {total_lines}.",
            context={"total_lines": total_lines},
        )
    if end_line - start + 1 > max_range:
        raise ToolError(
            ErrorType.INVALID_LINE_RANGE,
            f"lines {start}-{end_line} span {end_line - start + 1} lines (limit {max_range}; {length_note})",
            recovery_suggestion=(
                f"Read at most {max_range} lines at a time, e.g. start_line={start}, "
                f"end_line={min(total_lines, start + max_range - 1)}."
            ),
            context={"total_lines": total_lines},
        )
    end = min(end_line, total_lines)
    return LineRange(start, end, clamped=end != end_line)


def closest(word: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    """The candidates most like `word` (by whole path, then by file name)."""
    pool = list(candidates)
    found = difflib.get_close_matches(word, pool, n=n, cutoff=0.5)
    if len(found) < n:
        name = word.rsplit("/", 1)[-1]
        by_name = {c.rsplit("/", 1)[-1]: c for c in pool}
        for match in difflib.get_close_matches(name, list(by_name), n=n, cutoff=0.6):
            if by_name[match] not in found:
                found.append(by_name[match])
    return found[:n]


def suggest_paths(missing: str, existing: Iterable[str]) -> str:
    """A recovery suggestion for a path that does not exist, naming the closest real ones."""
    matches = closest(missing, existing)
    if matches:
        listed = ", ".join(repr(m) for m in matches)
        return f"No file {missing!r}. Closest existing paths: {listed}. Use one of them exactly."
    return f"No file {missing!r}. Call list_files() or rg_search() to find the right path."
