"""Text tools: what `echo`, `printf` and `cat` print, and what sed and awk programs do.

What a command prints matters when it is piped into a shell (`echo ls | sh` runs `ls`;
`printf '\\x72m'` is decoded text). sed and awk programs can write files, read files and run
commands (`sed 'w FILE'`, `sed 'r FILE'`, `sed 'e CMD'`, awk's `system()`, `print > FILE`,
`getline < FILE`): the files are judged where they point, the commands like any other.
"""

from __future__ import annotations

import re

from ...shell import Field
from ..analysis.code import unescape
from ..analysis.evaluated import evaluated_name
from ..analysis.invocation import Invocation
from ..analysis.state import DECODED, ENVIRONMENT, NONE, PASSTHROUGH, TAINTED, Output
from ..arguments import parse_options
from ..tables import VALUE_OPTIONS, names
from .registry import handles
from .sedscript import read_sed_script


@handles("sed")
def sed(inv: Invocation) -> None:
    args = inv.args
    in_place = any(
        arg.text.startswith(("-i", "--in-place"))
        or (re.fullmatch(r"-[a-zA-Z]+", arg.text) is not None and "i" in arg.text[1:])
        for arg in args
    )
    options, operands = parse_options(
        [arg for arg in args if not arg.text.startswith(("-i", "--in-place"))],
        VALUE_OPTIONS["sed"],
    )
    scripts = [v.text for name, v in options if name in ("-e", "--expression") and v is not None]
    from_file = [v for name, v in options if name in ("-f", "--file") and v is not None]
    files = operands
    if not scripts and not from_file and operands:
        scripts, files = [operands[0].text], operands[1:]
    for path in from_file:
        inv.emit("approval.run-script", what=f"the sed script `{inv.place(path).shown}`")
    for script in scripts:
        effects = read_sed_script(script)
        for command in effects.commands:
            inv.shell_code(Field(command))
        for name in effects.reads:
            inv.read(Field(name))
        for name in effects.writes:
            inv.write(Field(name))
        if effects.any:
            inv.emit("approval.program-effects", what="a sed script")
    for arg in files:
        inv.write(arg) if in_place else inv.read(arg)


_AWK_PROGRAM_FILES = names("-f --file -E --exec -i --include -l --load")
_SYSTEM = re.compile(r"\bsystem\s*\(\s*\"((?:[^\"\\]|\\.)*)\"")
# awk programs that run commands (system, pipes) or write files (print > "file").
_AWK_EFFECTS = re.compile(
    r"\bsystem\s*\(|(?<!\|)\|(?!\|)|\b(?:print|printf)\b[^;}]*?>{1,2}\s*[\"$a-zA-Z(]|\bgetline\b[^;}]*<"
)
_AWK_WRITE = re.compile(r"\b(?:print|printf)\b[^;}]*?>{1,2}\s*\"((?:[^\"\\]|\\.)*)\"")
_AWK_READ = re.compile(r"\bgetline\b[^;}]*?<\s*\"((?:[^\"\\]|\\.)*)\"")


@handles("awk", "gawk", "mawk", "nawk")
def awk(inv: Invocation) -> None:
    options, operands = parse_options(
        inv.args, VALUE_OPTIONS.get(inv.name, frozenset()) | _AWK_PROGRAM_FILES
    )
    for name, value in options:
        if name not in _AWK_PROGRAM_FILES or value is None:
            continue
        if name in ("-i", "--include") and value.text in ("inplace", "inplace.awk"):
            for arg in operands[1:]:
                inv.write(arg)  # gawk's in-place editing rewrites the input files
        else:
            inv.emit("approval.run-script", what=f"the awk program or library `{value.shown()}`")
            return
    if not operands:
        return
    program = operands[0].text
    for command in _SYSTEM.findall(program):
        inv.shell_code(Field(unescape(command)))
    for path in _AWK_WRITE.findall(program):
        inv.write(Field(unescape(path)))
    for path in _AWK_READ.findall(program):
        inv.read(Field(unescape(path)))
    if _AWK_EFFECTS.search(program):
        inv.emit("approval.program-effects", what="an awk program")


@handles("echo")
def echo(inv: Invocation) -> Output | None:
    args = list(inv.args)
    escapes = False
    while args and re.fullmatch(r"-[neE]+", args[0].text):
        escapes = escapes or "e" in args[0].text
        args = args[1:]
    if not all(arg.known for arg in args):
        nature = inv.analysis.nature(s for arg in args for s in arg.scripts)
        return nature if nature.kind in TAINTED else None
    text = " ".join(arg.text for arg in args)
    if escapes and re.search(r"\\(x[0-9a-fA-F]|[0-7]|0[0-7]|u[0-9a-fA-F])", text):
        return DECODED
    return Output("literal", text + "\n")


@handles("printf")
def printf(inv: Invocation) -> Output | None:
    args = [arg for arg in inv.args if arg.text != "--"]
    if args and args[0].text == "-v":
        if len(args) > 1:
            evaluated_name(inv.analysis, args[1], inv.state, inv.display)
            inv.state.assign(args[1].text, None)
        return NONE
    if not args or not all(arg.known for arg in args):
        return None
    fmt, values = args[0].text, [arg.text for arg in args[1:]]
    if "%b" in fmt or re.search(r"\\(x[0-9a-fA-F]|[0-7]|u[0-9a-fA-F])", fmt):
        return DECODED
    if "%" not in fmt and not values:
        return Output("literal", fmt.replace("\\n", "\n").replace("\\t", "\t"))
    if fmt in ("%s", "%s\\n", "%s\\n\\n") and values:
        return Output("literal", "\n".join(values) + "\n")
    return None


@handles("cat")
def cat(inv: Invocation) -> Output | None:
    operands = [arg for arg in inv.args if not arg.text.startswith("-") or arg.text == "-"]
    if not operands or [arg.text for arg in operands] == ["-"]:
        return PASSTHROUGH
    for arg in operands:
        place = inv.place(arg)
        if place.absolute is not None and place.absolute in inv.state.downloaded:
            return Output("download")
    return None


@handles("printenv")
def printenv(inv: Invocation) -> Output:
    return ENVIRONMENT
