"""The repository's files a task names, for the context to show and a change to go to, and
the forms of a task's words its search of definitions matches names and docstrings by.

By path or file name ("jsonpointer.py"), a top-level file by its stem in capitals ("the
README"), a tool's configuration by its tool's word ("the classifiers in pyproject"). A change
that names no file and no code is named by its words: the one text file that is not code and
holds a word of the task no other file holds (dev sv-classifier: "we support 3.13 now,
add it to the classifiers" went to src/semver/__init__.py as an invented class; `classifiers`
is in setup.cfg alone).
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from ..tools.base import ToolContext
from ..tools.search import RgSearchTool
from .intent import TaskIntent

#: Configuration files people name without their suffix ("in pyproject", "the tsconfig").
CONFIG_STEMS = frozenset({"pyproject", "tsconfig", "jsconfig", "mkdocs", "noxfile", "tox"})
#: Files of text a change told in words may be about (configuration, documentation).
TEXT_SUFFIXES = frozenset(
    {".cfg", ".toml", ".ini", ".yml", ".yaml", ".json", ".md", ".rst", ".txt"}
)
#: A word of a task long enough to be about something ("classifiers", "flake8", not "it").
_LONG_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_-]{5,}")


def _find_word(text: str, word: str) -> int:
    """Where `word` stands in `text` as a word of its own (not part of a path), or -1."""
    hit = re.search(rf"(?<![\w./-]){re.escape(word)}(?![\w/-]|\.\w)", text)
    return hit.start() if hit else -1


def named_files(task: str, files: list[str]) -> list[str]:
    """The files `task` names, in the order it names them."""
    by_name: dict[str, list[str]] = {}
    for path in files:
        by_name.setdefault(PurePosixPath(path).name, []).append(path)
    capitals: dict[str, list[str]] = {}
    for path in files:
        stem = PurePosixPath(path).stem
        if "/" not in path and (
            (stem.isupper() and len(stem) >= 4) or stem.lower() in CONFIG_STEMS
        ):
            capitals.setdefault(stem.lower(), []).append(path)
    hits: list[tuple[int, str]] = []
    for path in files:
        at = _find_word(task, path)
        if at < 0 and len(by_name[PurePosixPath(path).name]) == 1:
            at = _find_word(task, PurePosixPath(path).name)
        stem = PurePosixPath(path).stem.lower()
        if at < 0 and capitals.get(stem) == [path]:
            at = _find_word(task.lower(), stem)
        if at >= 0:
            hits.append((at, path))
    return [path for _, path in sorted(hits)]


def file_of_words(
    ctx: ToolContext, intent: TaskIntent, files: list[str], code: set[str]
) -> str | None:
    """For a change that names no file, no call and none of the repository's `code`:
    the one text file (`TEXT_SUFFIXES`) that holds a long word of the task no other file
    holds; None when no word singles one out or two words single out different files. Where
    the task names what is no code, only those names are its words: "flake8 should allow
    lines up to 100 chars" is about setup.cfg's [flake8] (fresh dev infl-flake8-line-length
    went to a new function), "add a helper slug_of" about no text file."""
    if not intent.change or intent.calls or code & set(intent.names):
        return None
    texts = {path for path in files if PurePosixPath(path).suffix.lower() in TEXT_SUFFIXES}
    chosen: set[str] = set()
    words = intent.names or _LONG_WORD.findall(intent.task)
    for word in dict.fromkeys(w.lower() for w in words if _LONG_WORD.fullmatch(w)):
        found = RgSearchTool(ctx).forward(pattern=rf"(?i)\b{re.escape(word)}\b", max_results=50)
        holding = {match["path"] for match in found.get("matches", [])}
        if len(holding) == 1 and holding <= texts:
            chosen |= holding
    return chosen.pop() if len(chosen) == 1 else None


def word_forms(word: str) -> list[str]:
    """A word's forms in lower case, its plural, past or -ing ending taken off: "resolved" is
    resolve or resolv, "colours" colour; the last is the shortest."""
    word = word.lower()
    forms = [word]
    if word.endswith("ies") and len(word) > 4:
        forms.append(word[:-3] + "y")
    elif word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        forms.append(word[:-1])
    elif word.endswith("ed") and len(word) > 4:
        forms += [word[:-1], word[:-2]]
    elif word.endswith("ing") and len(word) > 5:
        forms += [word[:-3] + "e", word[:-3]]
    return forms


def meets_word(part: str, forms: list[str]) -> bool:
    """A part of a name is one of a word's forms, or starts with one long enough to be more
    than a prefix by chance ("plural" meets `pluralize`)."""
    return any(part == form or (len(form) >= 5 and part.startswith(form)) for form in forms)


def passages(lines: list[str], hits: list[int], around: int) -> list[tuple[int, int]]:
    """The spans (start, end) of `lines` shown for the lines at `hits`: `around` lines either
    side and down to the end of what a hit line opens, spans that meet joined."""
    spans: list[list[int]] = []
    for hit in hits:
        start = max(0, hit - around)
        end = min(len(lines), max(hit + around, _nested_end(lines, hit)) + 1)
        if spans and start <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], end)
        else:
            spans.append([start, end])
    return [(start, end) for start, end in spans]


def _nested_end(lines: list[str], at: int) -> int:
    """The last line of what line `at` opens: the lines indented deeper below it, and the
    bracket that closes them (a TOML or JSON list, a YAML mapping)."""

    def indent(line: str) -> int:
        return len(line) - len(line.lstrip())

    end, depth = at, indent(lines[at])
    while end + 1 < len(lines) and lines[end + 1].strip() and indent(lines[end + 1]) > depth:
        end += 1
    if end + 1 < len(lines) and lines[end + 1].strip()[:1] in ("]", "}", ")"):
        end += 1
    return end
