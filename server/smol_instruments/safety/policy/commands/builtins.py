"""Shell builtins with effects the policy follows: directories, variables, arithmetic, history.

`cd` moves where relative paths point; assignments through `export`/`declare` set variables
(and are judged like `NAME=value`); builtins that take a variable name or arithmetic (`let`,
`declare -i`, `unset`, `read`, `test -v`, `printf -v`) have what they evaluate judged;
`history -r/-w` and `date -f` read and write files; `kill -1` is denied.
"""

from __future__ import annotations

import re

from ...shell import Field
from ..analysis.environment import judge_variable
from ..analysis.evaluated import evaluated_field, evaluated_name
from ..analysis.invocation import Invocation
from ..analysis.state import NONE, Output
from ..arguments import parse_options
from ..places import UNKNOWN_PLACE
from ..tables import names
from .registry import handles

_DECLARATION = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\[[^=]*\])?(\+?)=")


@handles("cd", "pushd", "popd")
def cd(inv: Invocation) -> Output:
    operands = [arg for arg in inv.args if not (arg.text.startswith("-") and arg.text != "-")]
    if inv.name == "popd" or (operands and operands[0].text == "-"):
        inv.state.cwd = None
    elif not operands:
        inv.state.cwd = inv.analysis.paths.home if inv.name == "cd" else None
    else:
        place = inv.place(operands[0])
        inv.state.cwd = place.absolute if place.kind != UNKNOWN_PLACE else None
    return NONE


@handles("export", "declare", "typeset", "local", "readonly")
def declare(inv: Invocation) -> Output:
    """`declare [-i] NAME[=value]`: names with subscripts and `-i` values are evaluated."""
    integer = any(re.fullmatch(r"-\w*i\w*", arg.text) for arg in inv.args)
    for arg in inv.args:
        if arg.text.startswith(("-", "+")):
            continue
        match = _DECLARATION.match(arg.text)
        name_text = match.group(1) + (match.group(2) or "") if match else arg.text
        evaluated_name(inv.analysis, Field(name_text, word=arg.word), inv.state, inv.display)
        if match is None:
            if integer and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", arg.text):
                inv.state.integers.add(arg.text)
            continue
        name, value = match.group(1), arg.text[match.end() :]
        judge_variable(inv, name, Field(value, scripts=arg.scripts))
        if integer or name in inv.state.integers:
            inv.state.integers.add(name)
            field = Field(value, scripts=arg.scripts, word=arg.word)
            evaluated_field(inv.analysis, field, inv.state, inv.display, "arithmetic")
        known = arg.known and not match.group(3) and not match.group(2)
        inv.state.assign(name, value if known else None)
    return NONE


_NAME_VALUES = {
    "read": names("-a -d -i -n -N -p -t -u"),
    "mapfile": names("-d -n -O -s -u -C -c"),
    "readarray": names("-d -n -O -s -u -C -c"),
    "unset": frozenset(),
    "getopts": frozenset(),
}


@handles("read", "mapfile", "readarray", "getopts", "unset")
def forget(inv: Invocation) -> Output:
    """Builtins that set (or unset) variables to values only known at run time."""
    options, operands = parse_options(inv.args, _NAME_VALUES[inv.name])
    for name, value in options:
        if name == "-C" and value is not None:
            inv.shell_code(value)  # mapfile's callback is evaluated as shell code
        elif name == "-a" and value is not None:
            operands.append(value)
    if inv.name == "getopts":
        operands = operands[1:2]  # OPTSTRING NAME [ARGS]
    for arg in operands:
        evaluated_name(inv.analysis, arg, inv.state, inv.display)
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", arg.text):
            inv.state.assign(arg.text, None)
    return NONE


@handles("let")
def let(inv: Invocation) -> Output:
    for arg in inv.args:
        evaluated_field(inv.analysis, arg, inv.state, inv.display, "arithmetic")
    return NONE


@handles("test", "[")
def test(inv: Invocation) -> None:
    """`test -v NAME` evaluates a subscript in NAME (a plain `test` does no arithmetic)."""
    for i, arg in enumerate(inv.args[:-1]):
        if arg.text in ("-v", "-R"):
            evaluated_name(inv.analysis, inv.args[i + 1], inv.state, inv.display)


@handles("kill")
def kill(inv: Invocation) -> None:
    texts = inv.texts
    i = 0
    if texts and texts[0] in ("-s", "-n", "--signal"):
        i = 2
    elif texts and texts[0].startswith("-") and texts[0] != "--" and texts[0] not in ("-l", "-L"):
        i = 1
    rest = texts[i:]
    if rest[:1] == ["--"]:
        rest = rest[1:]
    if any(t in ("-1", "1") for t in rest):
        inv.emit("deny.kill-all")


@handles("history")
def history(inv: Invocation) -> None:
    """`history -r FILE` reads a file into the history (`history` then prints it); `-w` writes."""
    options, operands = parse_options(inv.args, frozenset())
    flags = {name for name, _ in options}
    target = operands[0] if operands else None
    default = Field(inv.analysis.paths.home + "/.bash_history")
    if flags & {"-r", "-n"}:
        inv.read(target or default)
    if flags & {"-w", "-a"}:
        inv.write(target or default)


@handles("date")
def date(inv: Invocation) -> None:
    """`date -f FILE` prints every line of FILE (in its error messages); `-r FILE` stats it."""
    options, _ = parse_options(inv.args, names("-f --file -r --reference -d --date -s --set"))
    for name, value in options:
        if value is not None and name in ("-f", "--file", "-r", "--reference"):
            inv.read(value)
