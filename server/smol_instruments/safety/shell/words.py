"""Quote removal for the text tree-sitter leaves undecoded: backslashes, quotes, `$'...'`.

tree-sitter-bash finds where words, strings and substitutions begin and end, but hands back
their text as written. This module decodes that text into `Lit` parts, marking which
characters were quoted (quoted text is exempt from splitting, globbing and tilde expansion),
in the three contexts bash has: unquoted, inside double quotes, and in a here-document body.
"""

from __future__ import annotations

import re
from enum import Enum

from .syntax import Lit, Param, Part


class Context(Enum):
    """Where text sits, which decides what a backslash escapes."""

    UNQUOTED = "unquoted"
    DOUBLE_QUOTED = "double-quoted"
    HEREDOC = "heredoc"


# What a backslash escapes inside double quotes and here-documents (bash manual, "Quoting").
_ESCAPABLE = {Context.DOUBLE_QUOTED: '$`"\\\n', Context.HEREDOC: "$`\\\n"}


_PARAMETER = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*|[0-9@*#?!$-])")
_SUBSTITUTION_START = re.compile(r"\$[({[]|`")
_SPECIAL = re.compile(r"[\\'\"$`]")


class HiddenSubstitution(ValueError):
    """Plain text holds a `$(`, `${`, `$[` or backquote that the parser did not read."""


def decode(text: str, context: Context) -> list[Part]:
    """The parts of `text` as bash reads it in `context`; HiddenSubstitution if it hides one."""
    if not _SPECIAL.search(text):
        return [Lit(text, context is not Context.UNQUOTED)] if text else []
    if context is Context.UNQUOTED:
        return _unquoted(text)
    escapable = _ESCAPABLE[context]
    out = _Parts(quoted=True)
    i = 0
    while i < len(text):
        c = text[i]
        nxt = text[i + 1] if i + 1 < len(text) else ""
        if c == "\\" and nxt and nxt in escapable:
            out.text("" if nxt == "\n" else nxt)
            i += 2
        else:
            i = out.parameter_or_char(text, i)
    return out.done()


def _unquoted(text: str) -> list[Part]:
    """Unquoted text; quotes inside it (tree-sitter usually splits them off) are honoured."""
    out = _Parts(quoted=False)
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\":
            nxt = text[i + 1 : i + 2]
            if nxt in ("", "\n"):
                out.text("\\" if nxt == "" else "")
            else:
                out.add(Lit(nxt, True))
            i += 1 + len(nxt)
        elif c == "'":
            end = text.find("'", i + 1)
            end = len(text) if end < 0 else end
            out.add(Lit(text[i + 1 : end], True))
            i = end + 1
        elif c == '"':
            end = _closing_double_quote(text, i + 1)
            for part in decode(text[i + 1 : end], Context.DOUBLE_QUOTED) or [Lit("", True)]:
                out.add(part)
            i = end + 1
        else:
            i = out.parameter_or_char(text, i)
    return out.done()


class _Parts:
    """Parts being collected: plain characters gather into one `Lit` until another part."""

    def __init__(self, *, quoted: bool) -> None:
        self.quoted = quoted
        self.parts: list[Part] = []
        self.buf: list[str] = []

    def text(self, text: str) -> None:
        self.buf.append(text)

    def add(self, part: Part) -> None:
        self.flush()
        self.parts.append(part)

    def parameter_or_char(self, text: str, i: int) -> int:
        """Take the `$NAME` or the one character at text[i]; the index after it.

        A `$(`, `${`, `$[` or backquote here is one the parser did not read: HiddenSubstitution.
        """
        if text[i] in "$`":
            if _SUBSTITUTION_START.match(text, i):
                raise HiddenSubstitution(text[i : i + 12])
            match = _PARAMETER.match(text, i)
            if match is not None:
                self.add(Param(match.group(1), self.quoted))
                return match.end()
        self.buf.append(text[i])
        return i + 1

    def flush(self) -> None:
        if self.buf:
            self.parts.append(Lit("".join(self.buf), self.quoted))
            self.buf.clear()

    def done(self) -> list[Part]:
        self.flush()
        return [p for p in self.parts if not (isinstance(p, Lit) and not p.text and not p.quoted)]


def _closing_double_quote(text: str, start: int) -> int:
    i = start
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == '"':
            return i
        i += 1
    return len(text)


_SIMPLE_ESCAPES = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


def ansi_c(text: str) -> str:
    """The value of a `$'...'` string's inside (`\\x72m` is `rm`)."""
    out: list[str] = []
    i = 0
    while i < len(text):
        if text[i] != "\\":
            out.append(text[i])
            i += 1
            continue
        decoded, used = _ansi_c_escape(text, i)
        out.append(decoded)
        i += used
    return "".join(out)


def _ansi_c_escape(src: str, pos: int) -> tuple[str, int]:
    """Decode the escape at src[pos] (a backslash); returns (text, characters used)."""
    nxt = src[pos + 1] if pos + 1 < len(src) else ""
    if nxt in _SIMPLE_ESCAPES:
        return _SIMPLE_ESCAPES[nxt], 2
    for marker, size in (("x", 2), ("u", 4), ("U", 8)):
        if nxt == marker:
            digits = re.match(f"[0-9A-Fa-f]{{1,{size}}}", src[pos + 2 :])
            if digits is None:
                return "\\" + marker, 2
            code = int(digits.group(0), 16)
            return (chr(code) if code < 0x110000 else "\ufffd"), 2 + len(digits.group(0))
    if nxt and nxt in "01234567":
        octal = re.match(r"[0-7]{1,3}", src[pos + 1 :])
        assert octal is not None
        return chr(int(octal.group(0), 8) & 0xFF), 1 + len(octal.group(0))
    if nxt == "c" and pos + 2 < len(src):
        return chr(ord(src[pos + 2]) & 0x1F), 3
    return "\\" + nxt, 1 + len(nxt)
