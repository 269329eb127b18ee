"""Where a small model's reply begins to repeat itself, so the rest is cut (a model at a low
temperature can write the same line, or the same two sentences, until its token limit: minutes
on a CPU), and how much of a streaming reply can be passed on before that is known."""

from __future__ import annotations

import re

from ..tools.edit import is_marker_line
from ..tools.rewrite import DATA_FENCE

#: A line this long that comes back within one reply is the model repeating itself.
REPEATED_LINE_CHARS = 30


#: Lines in a row that differ only in their numbers and strings, before the rest is cut
#: (`assert truncate("...", 1) == "..."`, then 2, 3, ... until the token limit).
SAME_SHAPE_RUN = 8
_LITERALS = re.compile(r"\d+|\"[^\"]*\"|'[^']*'")
_CODE_WORD = re.compile(r"[A-Za-z]")
#: The first line of a change written as definitions (agent/edits.py `file_header`).
_CHANGE_HEADER = re.compile(r"^\s*#\s*(?:file|path)\s*:", re.IGNORECASE)


def before_repetition(text: str) -> str:
    """`text` up to where a complete line of `REPEATED_LINE_CHARS`+ characters comes back, or
    where a run of `SAME_SHAPE_RUN` lines that differ only in their literals goes on. Each part
    of a SEARCH/REPLACE block is its own: the new lines repeat the old ones they keep (a
    README section added under a long line was cut there, and the block never closed)."""
    seen: set[str] = set()
    offset = 0
    shape, run = "", 0
    change, before = False, ""
    for line in text.splitlines(keepends=True):
        if not line.endswith("\n"):
            break  # not complete yet
        key = line.strip()
        if is_marker_line(line):
            seen.clear()
        change = change or bool(_CHANGE_HEADER.match(line) or DATA_FENCE.match(line.lstrip()))
        if len(key) >= REPEATED_LINE_CHARS:
            # in a change, a line comes back with what comes before it: code repeats lines
            # (semver's bump_* docstrings each have `>>> ver = semver.parse("3.4.5")`, and
            # a class rewritten whole was cut at the second, dev sv-bump-step), so does a
            # file written whole (CHANGES.md says "- Updated copyright." twice)
            probe = f"{before}\n{key}" if change else key
            if probe in seen:
                return text[:offset]
            seen.add(probe)
            this = _LITERALS.sub("_", key)
            # lines of data alone (a list of classifiers, of dependencies) are what the file
            # holds, not a runaway: only a run of code lines of the same shape is cut
            run = run + 1 if this == shape and _CODE_WORD.search(this) else 1
            shape = this
            if run > SAME_SHAPE_RUN:
                return text[:offset]
        else:
            shape, run = "", 0
        before = key or before
        offset += len(line)
    return text[: _repeated_sentence(text)]


#: A sentence: up to its full stop, question or exclamation mark, followed by a space. It
#: starts where a line or the sentence before it ends (the look-behind): the same matches as
#: trying every position, without scanning a long line with no full stop once per character
#: (a reply that never ends a sentence took 60 s to stream 4,000 characters).
_SENTENCE = re.compile(r"(?<![^\n.!?])[^\n.!?]*[.!?](?=\s)")
#: Times a sentence is said before the reply is cut at its second saying: code says one twice
#: (a docstring in the old text and the new), a runaway dozens of times.
SENTENCE_TIMES = 3


def _repeated_sentence(text: str) -> int:
    """Where a sentence of `REPEATED_LINE_CHARS`+ characters outside a code fence comes back a
    second time, once it is said a third (the 1.5B model's summary of dev infl-readme-usage:
    two sentences in turn, in one line, for 1,024 tokens and 250 s; tc-on-color-red: one, 40
    times); `len(text)` when none does."""
    said: dict[str, list[int]] = {}
    offset, fenced = 0, False
    for line in text.splitlines(keepends=True):
        if is_marker_line(line):
            said.clear()
        if line.lstrip().startswith("```"):
            fenced = not fenced
        for found in _SENTENCE.finditer(line) if not fenced else ():
            key = found.group(0).strip()
            if len(key) >= REPEATED_LINE_CHARS:
                at = said.setdefault(key, [])
                at.append(offset + found.start())
                if len(at) >= SENTENCE_TIMES:
                    return at[1]
        offset += len(line)
    return len(text)


def safe_to_pass_on(text: str) -> int:
    """How much of a streaming reply can be passed on: all of it, except an unfinished last
    line that so far repeats the start of an earlier long line (it may become a repeat, and
    a repeat is cut where it begins)."""
    start = text.rfind("\n") + 1
    tail = text[start:].strip()
    if not tail:
        return len(text)
    earlier = (line.strip() for line in text[:start].splitlines())
    if any(len(line) >= REPEATED_LINE_CHARS and line.startswith(tail) for line in earlier):
        return start
    said = list(_SENTENCE.finditer(text))  # the same for a sentence under way in its line
    begun = max([start, *(found.end() for found in said)])
    if (part := text[begun:].strip()) and any(
        len(key) >= REPEATED_LINE_CHARS and key.startswith(part)
        for key in (found.group(0).strip() for found in said)
    ):
        return begun
    return len(text)
