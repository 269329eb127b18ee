"""A change written as a file's lines again, in a fence, rather than as SEARCH/REPLACE blocks.

Small models copy the lines they were shown with the change in them. Two forms are read here:

- some lines of a file, changed (`rewrite_block`): the part of the file they align with is
  what they replace, and where that is not clear nothing is guessed;
- a small file that is not Python, written whole because it was asked for that way
  (`writes_whole`): the block is the new file, provided it ends as the file does (a reply cut
  at its token limit would drop the file's tail) and holds most of its lines.

A README's block holds fenced examples of its own: in a block of prose, a fence with a
language opens one inside it (`fenced_blocks`).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath

from ..base.errors import ErrorType, ToolError
from .base import ToolContext

#: The most characters a file that is not Python may have to be written whole. Asked for a
#: SEARCH/REPLACE block instead, the 1.5B model wrote a 38-line CHANGES.md whole as SEARCH and
#: its one new line as REPLACE; written whole, it copied every line (a reply's 1,024 tokens
#: hold this much and a new section).
WHOLE_TEXT_CHARS = 2000
#: A fence in the language of a file that is not code to run (a fragment of pyproject.toml,
#: a README's section): `[tool.x]` and `key = "3.14"` parse as Python, but running them
#: only says "`tool` is not defined".
DATA_FENCE = re.compile(
    r"```[ \t]*(?:toml|ya?ml|json|ini|cfg|rst|md|markdown|text|txt|html|xml|css)\b", re.I
)
#: A fence that opens a block (what comes before it on its line aside), and its language.
_OPENING = re.compile(r"```[ \t]*([\w+-]*)[^\n`]*$", re.M)
#: A line inside a block that closes it, or opens one inside it, and its language.
_FENCE_LINE = re.compile(r"^[ \t]*```[ \t]*([\w+-]*)[^\n]*$", re.M)
#: Languages of prose, whose blocks may hold fenced blocks of their own.
_PROSE = frozenset({"markdown", "md", "rst", "text", "txt"})
#: A line naming a block's file: `README.md`, `# file: docs/a.md`, `**pyproject.toml**`.
PATH_LINE = re.compile(
    r"^\s*(?:#+\s*(?:file|path|filename)?\s*:?\s*)?[*`]*([\w.\-/]+\.[A-Za-z0-9]+|[\w.\-/]*"
    r"(?:README|Makefile|Dockerfile|LICENSE)[\w.]*)[*`:]*\s*$",
    re.I,
)
#: The language a file's fence is marked with, by its suffix: a README.rst shown in a bare
#: fence and asked for whole, the 1.5B model wrote a ```python block of tool functions.
_LANGUAGE = {".py": "python", ".js": "javascript", ".ts": "typescript", ".go": "go", ".rs": "rust"}
_LANGUAGE |= {".toml": "toml", ".md": "markdown", ".yml": "yaml", ".yaml": "yaml", ".json": "json"}
_LANGUAGE |= {".rst": "rst", ".cfg": "ini", ".ini": "ini", ".txt": "text"}
#: Lines of the file a rewritten block may span beyond its own length (lines it drops).
REWRITE_SLACK = 3


@dataclass(frozen=True)
class Replacement:
    """One SEARCH/REPLACE block: in `path`, `search` (exact lines; empty: append) becomes
    `replace`."""

    path: str
    search: str
    replace: str


def fence_language(path: str) -> str:
    """The language a fence of `path`'s lines is marked with ("" where none is known)."""
    return _LANGUAGE.get(PurePosixPath(path).suffix, "")


def writes_whole(ctx: ToolContext, path: str | None) -> bool:
    """A change to `path` is written as the whole file: it is not Python, it exists, and it
    has at most `WHOLE_TEXT_CHARS` characters (a file the guard refuses is not)."""
    if path is None or path.endswith(".py"):
        return False
    try:
        text = ctx.file_text(path)
    except ToolError:
        return False
    return text is not None and 0 < len(text) <= WHOLE_TEXT_CHARS


def fenced_blocks(text: str) -> Iterator[tuple[int, int, str]]:
    """Each fenced block of `text`: where its opening fence starts, where its closing fence's
    backticks end (the end of `text` when it never closes), and its lines. In a block of prose
    (```markdown), a fence with a language opens a block inside it, which the next bare fence
    closes: a README written whole holds its examples."""
    pos = 0
    while (opening := _OPENING.search(text, pos)) is not None:
        prose, depth = opening.group(1).lower() in _PROSE, 0
        body = opening.end() + 1
        end = last = len(text)
        for fence in _FENCE_LINE.finditer(text, min(body, len(text))):
            if prose and fence.group(1):
                depth += 1
            elif depth:
                depth -= 1
            else:
                last, end = fence.start(), text.index("```", fence.start()) + 3
                break
        yield opening.start(), end, text[body:last]
        if end >= len(text):
            return
        pos = end


def unclosed_block(text: str) -> bool:
    """The last fenced block of `text` never closes (a reply cut at its token limit, or
    where it began to repeat itself)."""
    blocks = list(fenced_blocks(text))
    if not blocks:
        return False
    start, _, lines = blocks[-1]
    body = text.find("\n", start)
    return body == -1 or text[body + 1 :] == lines


def no_file(what: str) -> ToolError:
    """A block of a change whose file no line above it names."""
    return ToolError(
        ErrorType.INVALID_ARGUMENT,
        f"{what} does not say which file it changes",
        recovery_suggestion="Put the file's path on its own line above the block.",
    )


def rewrite_block(
    ctx: ToolContext, reply: str, default_path: str | None, *, whole: bool = False
) -> Replacement:
    """A reply that writes lines of a file again, changed, in a fence: the lines of the file
    it aligns with, first to last, are what it replaces (`_rewritten_region`), or, `whole`,
    the file (`_whole_file`); where that is not clear, nothing is guessed (NO_MATCH)."""
    found = next(fenced_blocks(reply), None)
    if found is None:
        raise ToolError(ErrorType.INVALID_ARGUMENT, "the reply holds no block of lines")
    path = default_path
    for line in reply[: found[0]].splitlines():
        named = PATH_LINE.match(line)
        if named:
            path = named.group(1).removeprefix("./")
    if path is None:
        raise no_file("the block")
    text = ctx.file_text(path)
    if text is None:
        raise ToolError(
            ErrorType.FILE_NOT_FOUND,
            f"{path} does not exist",
            recovery_suggestion="To create it, write a SEARCH/REPLACE block with an empty "
            "SEARCH part.",
        )
    block = found[2]
    if whole and _whole_file(text, block):  # it ends as the file does: one newline, or none
        if _lines(block) == _lines(text):
            # the file copied back, its last blank line dropped, was proposed as the change
            # (fresh dev infl-flake8-line-length, `completed`)
            raise ToolError(
                ErrorType.INVALID_ARGUMENT,
                f"the block is {path} as it is (blank lines and trailing spaces aside): the "
                "change the task asks for is not in it",
                recovery_suggestion=f"Write {path} whole again, with the change made in it.",
                context={"path": path},
            )
        return Replacement(path, text, block.rstrip("\n") + "\n" * text.endswith("\n"))
    return Replacement(path, _rewritten_region(text, block, path), block)


def _pairs(text: str, block: str) -> tuple[list[int], list[str], list[tuple[int, int]]]:
    """The indexes of `text`'s non-blank lines, `block`'s non-blank lines (stripped), and the
    (file line, block line) pairs that align, in order (difflib)."""
    lines = text.splitlines()
    ours = [(i, line.strip()) for i, line in enumerate(lines) if line.strip()]
    theirs = [line.strip() for line in block.splitlines() if line.strip()]
    matcher = difflib.SequenceMatcher(None, [k for _, k in ours], theirs, autojunk=False)
    pairs = [(m.a + k, m.b + k) for m in matcher.get_matching_blocks() for k in range(m.size)]
    return [i for i, _ in ours], theirs, pairs


def _lines(text: str) -> list[str]:
    """`text`'s lines that are not blank, trailing spaces dropped."""
    return [line.rstrip() for line in text.splitlines() if line.strip()]


def _whole_file(text: str, block: str) -> bool:
    """`block` is `text` written again: it holds the file's last line (a reply cut at its
    token limit lacks the tail) and at least half of its lines."""
    ours, _, pairs = _pairs(text, block)
    return bool(pairs) and pairs[-1][0] == len(ours) - 1 and 2 * len(pairs) >= len(ours)


def _rewritten_region(text: str, block: str, path: str) -> str:
    """The lines of `text` that `block` is a new version of, its lines aligned with the
    file's in order (difflib, blank lines aside): from the line its first line is to the one
    its last line is; lines between that the file lacks are new or changed text. Refused
    (NO_MATCH) when its first or last line is not a line of the file, when less than half of
    its lines are, or when they spread over more of the file than the block holds (a block
    that would silently drop lines it never showed)."""
    lines = text.splitlines(keepends=True)
    ours, theirs, pairs = _pairs(text, block)
    if not pairs or pairs[0][1] != 0 or pairs[-1][1] != len(theirs) - 1:
        pairs = []  # the block's first and last lines must be the file's: its two ends
    matched = [ours[a] for a, _ in pairs]
    substantial = [i for i in matched if len(lines[i].strip()) > 2]  # not a lone bracket
    spread = matched[-1] - matched[0] + 1 if matched else 0
    if (
        not substantial
        or 2 * len(matched) < len(theirs)
        or spread > len(block.splitlines()) + REWRITE_SLACK
    ):
        raise ToolError(
            ErrorType.NO_MATCH,
            f"the block's lines are not lines of {path} as it is, so what it replaces is not clear",
            recovery_suggestion=(
                f"Write the change as a SEARCH/REPLACE block: {path} on its own line, then "
                "<<<<<<< SEARCH, the lines to change copied exactly, =======, the new lines, "
                ">>>>>>> REPLACE (an empty SEARCH part adds the new lines at the end)."
            ),
            context={"path": path},
        )
    return "".join(lines[matched[0] : matched[-1] + 1])
