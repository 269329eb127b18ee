"""THE truncator: every text cut for the model or the user goes through here.

A cut text says so, with a marker naming how much was left out, so the model never mistakes a
part for the whole. `keep="tail"` keeps the end (test output: the failures are at the bottom).
"""

from __future__ import annotations


def truncate_output(
    text: str,
    max_chars: int = 3000,
    max_lines: int = 150,
    *,
    keep: str = "head",
) -> tuple[str, bool]:
    """Cut `text` to the limits; the flag says whether anything was really cut.

    `keep="tail"` keeps the end instead (test output: the failures are at the bottom).
    A cut text ends (or starts) with a marker saying how much was left out.
    """
    if len(text) <= max_chars and text.count("\n") < max_lines:
        return text, False
    lines = text.splitlines(keepends=True)
    total_lines, total_chars = len(lines), len(text)
    lines = lines[-max_lines:] if keep == "tail" else lines[:max_lines]
    cut = "".join(lines)
    if len(cut) > max_chars:
        cut = cut[-max_chars:] if keep == "tail" else cut[:max_chars]
    if len(cut) == total_chars:
        return text, False
    note = f"[truncated: showing {len(cut)} of {total_chars} characters, {total_lines} lines]"
    if keep == "tail":
        return f"{note}\n{cut}", True
    return f"{cut}{'' if cut.endswith(chr(10)) else chr(10)}{note}", True


def keep_tail(text: str, max_chars: int) -> str:
    """The end of `text` (where test failures are), with a note saying how much was cut."""
    if len(text) <= max_chars:
        return text
    tail = text[-max_chars:]
    newline = tail.find("\n")
    if 0 <= newline < len(tail) // 4:  # start on a whole line when that costs little
        tail = tail[newline + 1 :]
    return f"[truncated: showing the last {len(tail)} of {len(text)} characters]\n{tail}"
