"""Word expansion as bash does it, for words whose values the policy may or may not know.

`expand_word` turns one `Word` into the fields a program receives: brace expansion, tilde
expansion, parameter expansion (with the values an `Environment` knows), command substitution
(when the environment knows what the command prints), field splitting on `IFS`, and glob
marking. Quote removal happened when the word was read. A value that cannot be known becomes
the UNKNOWN marker, so `rm -rf /$X` stays "something directly under /".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Protocol

from .syntax import (
    UNKNOWN,
    Arith,
    CommandSub,
    Lit,
    Param,
    Part,
    ProcessSub,
    Script,
    Word,
    word_scripts,
)

#: Brace expansion stops producing words beyond this many (`{1..100000}` is not expanded).
MAX_BRACE_WORDS = 64

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_GLOB_CHARS = frozenset("*?[")


class Environment(Protocol):
    """What expansion may know: variable values and the output of simple substitutions."""

    def var(self, name: str) -> str | None: ...

    def output(self, script: Script) -> str | None: ...


@dataclass(frozen=True)
class Field:
    """One argument after expansion. UNKNOWN marks characters that cannot be known."""

    text: str
    glob_at: int = -1  # index of the first unquoted glob character, -1 when none
    scripts: tuple[Script, ...] = field(default=(), compare=False)
    # The word it was expanded from, where there was one (to tell where unknown text came from).
    word: Word | None = field(default=None, compare=False)

    @property
    def known(self) -> bool:
        return UNKNOWN not in self.text

    @property
    def glob(self) -> bool:
        return self.glob_at >= 0

    def shown(self) -> str:
        """The text for messages, with unknown parts written as `…`."""
        return re.sub("\x00+", "…", self.text)


# A unit is one character with its quoting, or a not-yet-expanded part.
_Unit = tuple[str, bool] | Param | CommandSub | ProcessSub | Arith


def _units(parts: tuple[Part, ...]) -> list[_Unit]:
    units: list[_Unit] = []
    for part in parts:
        if isinstance(part, Lit):
            if part.quoted and not part.text:
                units.append(("", True))  # "" still makes a (empty) field
            units.extend((c, part.quoted) for c in part.text)
        else:
            units.append(part)
    return units


def _all_scripts(word: Word) -> tuple[Script, ...]:
    return tuple(word_scripts(word))


def expand_word(word: Word, env: Environment, *, assignment_like: bool = False) -> list[Field]:
    """The fields a command word expands to: brace, tilde, parameter, splitting, globs."""
    scripts = _all_scripts(word)
    units = _units(word.parts)
    assignment_like = assignment_like or _looks_like_assignment(units)
    fields: list[Field] = []
    for variant in _brace_expand(units):
        fields.extend(
            _expand_units(_tilde_expand(variant, env, assignment_like), env, scripts, word)
        )
    return fields


def expand_value(word: Word | None, env: Environment) -> str | None:
    """The value an assignment stores: no splitting or globbing; None when unknowable."""
    if word is None:
        return ""
    units = _tilde_expand(_units(word.parts), env, True)
    text: list[str] = []
    for unit in units:
        if isinstance(unit, tuple):
            text.append(unit[0])
            continue
        value = _part_value(unit, env)
        if value is None:
            return None
        text.append(value)
    return "".join(text)


def _looks_like_assignment(units: list[_Unit]) -> bool:
    """`name=value` arguments get tilde expansion after `=` in bash (e.g. dd of=~/x)."""
    name: list[str] = []
    for unit in units:
        if not isinstance(unit, tuple) or unit[1]:
            return False
        if unit[0] == "=":
            return bool(name) and _NAME.fullmatch("".join(name)) is not None
        name.append(unit[0])
    return False


def _brace_expand(units: list[_Unit]) -> list[list[_Unit]]:
    results: list[list[_Unit]] = []
    pending = [units]
    while pending:
        current = pending.pop()
        split = _brace_split(current)
        if split is None or len(results) + len(pending) + len(split) > MAX_BRACE_WORDS:
            results.append(current)
        else:
            pending.extend(reversed(split))
    return results


def _brace_split(units: list[_Unit]) -> list[list[_Unit]] | None:
    """Expand the first `{a,b}` or `{1..3}` in `units`, or None when there is none."""
    stack: list[int] = []
    commas: dict[int, list[int]] = {}
    pairs: list[tuple[int, int]] = []
    for i, unit in enumerate(units):  # one pass: matching braces and their top-level commas
        if unit == ("{", False):
            stack.append(i)
            commas[i] = []
        elif unit == ("}", False) and stack:
            pairs.append((stack.pop(), i))
        elif unit == (",", False) and stack:
            commas[stack[-1]].append(i)
    for open_at, close_at in sorted(pairs):
        prefix, suffix = units[:open_at], units[close_at + 1 :]
        if commas[open_at]:
            bounds = [open_at, *commas[open_at], close_at]
            return [
                prefix + units[bounds[k] + 1 : bounds[k + 1]] + suffix
                for k in range(len(bounds) - 1)
            ]
        sequence = _brace_sequence(units[open_at + 1 : close_at])
        if sequence is not None:
            return [prefix + [(c, False) for c in item] + suffix for item in sequence]
    return None


def _brace_sequence(inner: list[_Unit]) -> list[str] | None:
    if len(inner) > 32:  # `{-100000..100000..10}` is the longest worth reading
        return None
    if not all(isinstance(u, tuple) and not u[1] for u in inner):
        return None
    text = "".join(u[0] for u in inner if isinstance(u, tuple))
    match = re.fullmatch(r"(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?", text)
    if match is None:
        return None
    first, last, step_text = match.groups()
    step = abs(int(step_text)) if step_text else 1
    step = step or 1
    if first.lstrip("-").isdigit() and last.lstrip("-").isdigit():
        a, b = int(first), int(last)
        if abs(b - a) // step > MAX_BRACE_WORDS:
            return None
        values = range(a, b + 1, step) if a <= b else range(a, b - 1, -step)
        return [str(v) for v in values]
    if first.isalpha() and last.isalpha():
        a, b = ord(first), ord(last)
        values = range(a, b + 1, step) if a <= b else range(a, b - 1, -step)
        return [chr(v) for v in values]
    return None


def _tilde_expand(units: list[_Unit], env: Environment, assignment_like: bool) -> list[_Unit]:
    starts = [0]
    if assignment_like:
        starts += [i + 1 for i, u in enumerate(units) if u in (("=", False), (":", False))]
    out = list(units)
    for start in reversed(starts):
        if start >= len(out) or out[start] != ("~", False):
            continue
        end = start + 1
        while end < len(out):
            unit = out[end]
            if not isinstance(unit, tuple) or unit[1] or unit[0] in ("/", ":"):
                break
            end += 1
        if end < len(out):
            unit = out[end]
            if not isinstance(unit, tuple) or unit[1]:
                continue  # `~$X` and `~"x"` are not tilde prefixes
        login = "".join(u[0] for u in out[start + 1 : end] if isinstance(u, tuple))
        if login == "":
            value = env.var("HOME")
        elif login == "+":
            value = env.var("PWD")
        elif login == "-":
            value = env.var("OLDPWD")
        else:
            value = "/" + UNKNOWN  # another user's home: somewhere outside, not knowable
        text = UNKNOWN if value is None else value
        out[start:end] = [(c, True) for c in text]
    return out


def _part_value(part: _Unit, env: Environment) -> str | None:
    if isinstance(part, Param):
        return _param_value(part, env)
    if isinstance(part, CommandSub):
        value = env.output(part.body)
        return value.rstrip("\n") if value is not None else None
    if isinstance(part, ProcessSub):
        return "/dev/fd/63"  # what bash passes; the script itself is in Field.scripts
    return None


def _param_value(param: Param, env: Environment) -> str | None:
    """`$X` and the operators that keep a known value (`${X:-d}`, `${X:?}`, `${X:+alt}`)."""
    value = env.var(param.name)
    if not param.op:
        return value
    match = re.fullmatch(r"(:?)([-=?+])(.*)", param.op, re.S)
    if value is None or match is None:
        return None
    colon, operator, operand = match.groups()
    is_set = bool(value) if colon else True
    if operator in "-=?":
        if is_set:
            return value
        return (
            operand
            if operator != "?" and all(isinstance(p, Lit) for w in param.inner for p in w.parts)
            else None
        )
    return (
        (operand if all(isinstance(p, Lit) for w in param.inner for p in w.parts) else None)
        if is_set
        else ""
    )


def _expand_units(
    units: list[_Unit], env: Environment, scripts: tuple[Script, ...], word: Word
) -> list[Field]:
    fields: list[Field] = []
    text: list[str] = []
    glob_at = -1
    started = False  # a field exists even if empty (quoted "" or an unknown value)
    ifs = env.var("IFS")
    separators = " \t\n" if ifs is None else ifs

    def close() -> None:
        nonlocal glob_at, started
        if started:
            fields.append(Field("".join(text), glob_at, scripts, word))
        text.clear()
        glob_at = -1
        started = False

    for unit in units:
        if isinstance(unit, tuple):
            char, quoted = unit
            if not quoted and char in _GLOB_CHARS and glob_at < 0:
                glob_at = len(text)
            text.append(char)
            started = True
            continue
        quoted = unit.quoted if not isinstance(unit, ProcessSub) else False
        value = _part_value(unit, env)
        if value is None:
            text.append(UNKNOWN)
            started = True
            continue
        if quoted:
            text.append(value)
            started = True
            continue
        for char in value:
            if char in separators:
                close()
                continue
            if char in _GLOB_CHARS and glob_at < 0:
                glob_at = len(text)
            text.append(char)
            started = True
    close()
    return fields
