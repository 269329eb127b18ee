"""THE rendering of untrusted text for a person to decide on: nothing in it stays invisible.

A command, a diff, a path or a summary that a user approves must look like what will run or be
written. A terminal obeys escape sequences (`ESC[8m` hides text, `ESC[2K` erases a line, `\\r`
returns to the start of the line and overwrites it), bidirectional overrides reorder what is
drawn (Trojan Source), and zero-width or format characters take no room at all. Every host
shows such text through here, so that what the user reads is what runs:

- C0 controls and DEL become their Unicode control pictures (`␛`, `␍`, `␀`, `␡`); a tab is
  kept (it hides nothing);
- C1 controls, bidi controls, zero-width and other format characters, spaces other than the
  ASCII one, line and paragraph separators, private-use and unassigned code points become `⟨U+202E⟩`;
- bytes that were not UTF-8 (kept as surrogate escapes by our readers) become `⟨0xNN⟩`;
- with `breaks=True` (a command, a single-line field) every line break is shown as `⏎` and
  still breaks the line, so a second line is neither hidden nor mistaken for a continuation.

The marks are not an encoding: a text that already holds `␛` or `⟨U+202E⟩` literally looks the
same as one holding the character. What matters is that nothing is hidden. `hidden(text)` says
whether a text needed any mark, so a host can also warn in words.

JSON printed for a person's terminal (`tool`, `patches … --json`) is the same text for a
program: `json_visible` writes each character `visible` would mark as a `\\uXXXX` escape
instead, so the output still parses to exactly the original text and the terminal draws it
without obeying it.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

#: Categories drawn as `⟨U+XXXX⟩`: controls, format characters (bidi, zero-width, soft hyphen),
#: spaces other than the ASCII one (a no-break space reads as a word break the shell does not
#: make), line and paragraph separators, surrogates, private use and unassigned code points.
_MARKED_CATEGORIES = frozenset({"Cc", "Cf", "Zs", "Zl", "Zp", "Cs", "Co", "Cn"})
_KEPT = frozenset({"\t", "\n"})
BREAK_MARK = "⏎"

_cache: dict[str, str] = {}


def _mark(char: str) -> str:
    code = ord(char)
    if code < 0x20:
        return chr(0x2400 + code)
    if code == 0x7F:
        return "\u2421"
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape)
        return f"⟨0x{code - 0xDC00:02X}⟩"
    return f"⟨U+{code:04X}⟩"


def _needs_mark(char: str) -> bool:
    if char in _KEPT:
        return False
    code = ord(char)
    if code < 0x20 or code == 0x7F:
        return True
    if code < 0x80:
        return False
    return unicodedata.category(char) in _MARKED_CATEGORIES


def _shown(char: str) -> str:
    shown = _cache.get(char)
    if shown is None:
        shown = _mark(char) if _needs_mark(char) else char
        if len(_cache) < 4096:
            _cache[char] = shown
    return shown


# Everything outside printable ASCII (plus tab and newline) is looked at one by one.
_SUSPECT = re.compile(r"[^\t\n\x20-\x7e]")


def visible(text: str, *, breaks: bool = False) -> str:
    """`text` with every invisible or terminal-controlling character drawn as a visible mark.

    `breaks=True`: each line break is shown as `⏎` before it (a command, a one-line field).
    """
    shown = _SUSPECT.sub(lambda m: _shown(m.group()), text)
    if breaks:
        shown = shown.replace("\n", BREAK_MARK + "\n")
    return shown


def hidden(text: str) -> bool:
    """Whether `text` holds anything `visible` has to mark (a line break does not count)."""
    return any(_needs_mark(c) for c in _SUSPECT.findall(text))


def _json_escape(char: str) -> str:
    code = ord(char)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000  # outside the basic plane: a surrogate pair, as JSON spells it
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def json_visible(data: Any, *, indent: int | None = None) -> str:
    """`data` as JSON whose every character `visible` would mark is a `\\uXXXX` escape.

    Printable text of any script stays as it is. Outside strings JSON holds only ASCII, so the
    escapes land inside strings, where they mean the same character: `json.loads` gives back
    exactly `data`.
    """
    dumped = json.dumps(data, ensure_ascii=False, indent=indent, default=str)
    return _SUSPECT.sub(
        lambda m: _json_escape(m.group()) if _needs_mark(m.group()) else m.group(), dumped
    )
