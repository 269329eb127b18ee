"""What a sed script does besides editing text: the files it reads and writes, the commands it runs.

GNU sed's `r`/`R` read a file, `w`/`W` write one (so does `s///w FILE`), `e CMD` runs a
command (and `e` alone or `s///e` runs the pattern space). A file name runs to the end of
its line. The script is read command by command, skipping addresses and the text of `s`,
`y`, `a`, `i` and `c`; what cannot be read this way still counts as an effect.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# Addresses: line numbers, `$`, `/regex/` or `\%regex%`, ranges and steps, negation.
_ADDRESS = re.compile(r"(?:\d+|\$|/(?:[^/\\\n]|\\.)*/[IM]*|\\(.)(?:(?!\1).|\\.)*\1[IM]*)")
# Any mention of a command that writes or runs, as a fallback for what is not read.
_EFFECT_HINT = re.compile(
    r"(?:^|[;{}\n]|\d|\$|/)\s*[wWeRr](?:\s|$)|s(.)(?:(?!\1).)*\1(?:(?!\1).)*\1[gpIiMm0-9]*[we]"
)


@dataclass
class SedEffects:
    reads: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    runs_pattern_space: bool = False
    unread: bool = False

    @property
    def any(self) -> bool:
        return bool(self.writes or self.commands or self.runs_pattern_space or self.unread)


def read_sed_script(script: str) -> SedEffects:
    """The files and commands in a sed script."""
    effects = SedEffects()
    for line in script.split("\n"):
        _read_line(line, effects)
    if _EFFECT_HINT.search(script) and not (effects.any or effects.reads):
        effects.unread = True
    return effects


def _read_line(line: str, effects: SedEffects) -> None:
    i = 0
    while i < len(line):
        i = _skip_address(line, i)
        if i >= len(line):
            return
        command = line[i]
        rest = line[i + 1 :]
        if command in "rRwWe":
            argument = rest.strip()
            if command in "rR":
                effects.reads.append(argument)
            elif command in "wW":
                effects.writes.append(argument)
            elif argument:
                effects.commands.append(argument)
            else:
                effects.runs_pattern_space = True
            return  # a file name or command runs to the end of the line
        if command in "aic":
            return  # text to the end of the line
        if command in "sy":
            end = _after_delimited(line, i + 1)
            if end < 0:
                effects.unread = True
                return
            i = end
            if command == "s":
                flags = re.match(r"[gpIiMme0-9]*", line[i:])
                taken = flags.group(0) if flags else ""
                i += len(taken)
                if "e" in taken:
                    effects.runs_pattern_space = True
                if line[i : i + 1] == "w":
                    effects.writes.append(line[i + 1 :].strip())
                    return
            continue
        if command in ":bTt":
            end = line.find(";", i)
            i = len(line) if end < 0 else end + 1
            continue
        i += 1


def _skip_address(line: str, i: int) -> int:
    """Past blanks, separators, addresses, ranges (`1,5`, `0~2`, `/a/,+3`) and `!`."""
    while i < len(line):
        c = line[i]
        if c in " \t;{}!,~+":
            i += 1
            continue
        match = _ADDRESS.match(line, i)
        if match is None or match.end() == i:
            return i
        i = match.end()
    return i


def _after_delimited(line: str, start: int, parts: int = 3) -> int:
    """After `s/a/b/` or `y/a/b/` (delimiter at `start`, `parts` of them in all), or -1."""
    if start >= len(line):
        return -1
    delimiter = line[start]
    i = start + 1
    seen = 1
    while i < len(line):
        if line[i] == "\\":
            i += 2
            continue
        if line[i] == delimiter:
            seen += 1
            if seen == parts:
                return i + 1
        i += 1
    return -1
