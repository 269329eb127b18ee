"""Reading a program's arguments: its name, its options and their values, its operands.

Every rule and handler reads arguments the same way: `parse_options` splits fields into
(option, value) pairs and operands, `operands` skips a program's global options to find its
subcommand, and `has_arg` / `has_flag` test for an option (also inside `-rf` clusters).
"""

from __future__ import annotations

import re

from ..shell import Field
from .tables import GLOBAL_OPTIONS


def canonical(name: str) -> str:
    """One name per program: python3.12 -> python, pip3 -> pip, nodejs -> node."""
    if re.fullmatch(r"python[0-9.]*|pypy[0-9.]*|py", name):
        return "python"
    if re.fullmatch(r"pip[0-9.]*", name):
        return "pip"
    if name == "nodejs":
        return "node"
    if name == "gmake":
        return "make"
    return name


def short(text: str, limit: int = 80) -> str:
    """Command text for a message: one line, at most `limit` characters."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def operands(name: str, texts: list[str]) -> list[str]:
    """The non-option arguments, after skipping the command's leading global options."""
    global_options = GLOBAL_OPTIONS.get(name, frozenset())
    i = 0
    while i < len(texts) and (
        texts[i].startswith("-") or (name == "cargo" and texts[i].startswith("+"))
    ):
        if texts[i] == "--":
            break
        i += 2 if texts[i] in global_options else 1
    found: list[str] = []
    ended = False
    for text in texts[i:]:
        if text == "--" and not ended:
            ended = True
        elif ended or not text.startswith("-") or text == "-":
            found.append(text)
    return found


def has_arg(texts: list[str], wanted: str) -> bool:
    """`wanted` is an argument (`--hard` also matches `--hard=x`)."""
    return any(
        t == wanted or (wanted.startswith("-") and t.startswith(wanted + "=")) for t in texts
    )


def has_flag(texts: list[str], flag: str) -> bool:
    """A one-letter flag also inside clusters (`f` in `-rf`); a longer one as `--flag`."""
    if len(flag) == 1:
        return any(
            t.startswith("-")
            and not t.startswith("--")
            and len(t) > 1
            and t[1:].isalnum()
            and flag in t[1:]
            for t in texts
        )
    return any(t == "--" + flag or t.startswith("--" + flag + "=") for t in texts)


Options = list[tuple[str, Field | None]]


def parse_options(
    args: list[Field], value_options: frozenset[str], *, single_dash_long: bool = False
) -> tuple[Options, list[Field]]:
    """Split arguments into (option, value) pairs and operands; `--` ends the options.

    `single_dash_long` reads `-name=value` and `-name value` as one option (go's flags).
    """
    options: Options = []
    found: list[Field] = []
    i = 0
    ended = False
    while i < len(args):
        arg = args[i]
        text = arg.text
        if ended or text == "-" or not text.startswith("-"):
            found.append(arg)
        elif text == "--":
            ended = True
        elif text.startswith("--") or single_dash_long or text.partition("=")[0] in value_options:
            name, eq, value = text.partition("=")
            if eq:
                options.append((name, Field(value)))
            elif name in value_options and i + 1 < len(args):
                options.append((name, args[i + 1]))
                i += 1
            else:
                options.append((name, None))
        else:
            i += _short_cluster(args, i, value_options, options)
        i += 1
    return options, found


def _short_cluster(
    args: list[Field], i: int, value_options: frozenset[str], options: Options
) -> int:
    """`-rf` or `-ofile`: each letter is an option until one takes the rest as its value."""
    text = args[i].text
    for k in range(1, len(text)):
        option = "-" + text[k]
        if option in value_options:
            rest = text[k + 1 :]
            if rest:
                options.append((option, Field(rest)))
                return 0
            if i + 1 < len(args):
                options.append((option, args[i + 1]))
                return 1
            options.append((option, None))
            return 0
        options.append((option, None))
    return 0


def option_values(
    args: list[Field], value_options: frozenset[str], wanted: frozenset[str]
) -> list[Field]:
    """The values given to any of the `wanted` options."""
    options, _ = parse_options(args, value_options | wanted)
    return [value for name, value in options if name in wanted and value is not None]
