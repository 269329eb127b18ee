"""Shells and the programs that run shell code or commands: `sh -c`, `eval`, `source`, `xargs`.

Code given as text is parsed and judged like the command itself (`bash -c 'rm -rf /'` is
`rm -rf /`); code read from standard input is judged by where it comes from (a literal, a
here-document, a download); scripts in files need approval. `xargs` and `parallel` run the
command they are given with the arguments they will read, when those are known.
"""

from __future__ import annotations

import re

from ...shell import UNKNOWN, Field
from ..analysis.invocation import Invocation, unknown_field
from ..analysis.state import NONE, UNKNOWN_OUTPUT, Output
from ..arguments import parse_options
from ..places import INSIDE
from ..tables import SHELLS, names
from .registry import handles


@handles(SHELLS)
def shell(inv: Invocation) -> Output:
    """`sh -c CODE`, `bash script.sh`, `sh < file`, `curl ... | sh`."""
    inv.claim()
    args = inv.args
    i = 0
    command_mode = read_stdin = False
    while i < len(args):
        text = args[i].text
        if text in ("-", "--"):
            i += 1
            break
        if len(text) > 1 and text[0] in "-+" and args[i].known:
            if text in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
                i += 2
                continue
            if not text.startswith("--"):
                command_mode = command_mode or "c" in text[1:]
                read_stdin = read_stdin or "s" in text[1:]
            i += 1
            continue
        break
    operands = args[i:]
    if command_mode:
        if not operands:
            inv.emit("approval.unparseable", problem="gives `-c` no command")
            return UNKNOWN_OUTPUT
        inv.shell_code(operands[0], operands[1:])
        return UNKNOWN_OUTPUT
    if operands and not read_stdin:
        if operands[0].text in ("/dev/stdin", "/proc/self/fd/0", "/dev/fd/0"):
            return inv.stdin_code("shell")
        return inv.run_script(operands[0], "shell script")
    return inv.stdin_code("shell")


@handles("eval")
def evaluate(inv: Invocation) -> Output:
    """`eval` runs its arguments, joined, in the current shell."""
    inv.claim()
    if not inv.args:
        return NONE
    if all(arg.known for arg in inv.args):
        # eval runs in the current shell: its assignments and `cd` carry on.
        inv.analysis.run(" ".join(arg.text for arg in inv.args), inv.state)
        return UNKNOWN_OUTPUT
    scripts = tuple(s for arg in inv.args for s in arg.scripts)
    inv.dynamic(Field(UNKNOWN, scripts=scripts), "code")
    return UNKNOWN_OUTPUT


@handles("alias")
def alias(inv: Invocation) -> None:
    for arg in inv.args:
        _, eq, value = arg.text.partition("=")
        if eq:
            inv.shell_code(Field(value) if arg.known else unknown_field(arg))


@handles("trap")
def trap(inv: Invocation) -> None:
    _, operands = parse_options(inv.args, frozenset())
    if len(operands) >= 2 and operands[0].text != "-":
        inv.shell_code(operands[0])


@handles("watch")
def watch(inv: Invocation) -> None:
    args = inv.args
    i = 0
    while i < len(args) and args[i].text.startswith("-"):
        i += 2 if args[i].text in ("-n", "--interval", "-q", "--equexit") else 1
    if i < len(args):
        joined = " ".join(arg.text for arg in args[i:])
        inv.shell_code(Field(joined, scripts=tuple(s for arg in args[i:] for s in arg.scripts)))


@handles("su")
def su(inv: Invocation) -> None:
    for i, arg in enumerate(inv.args[:-1]):
        if arg.text in ("-c", "--command") or arg.text.startswith("--command="):
            inv.shell_code(inv.args[i + 1])


@handles("source", ".")
def source(inv: Invocation) -> Output:
    if not inv.args:
        return NONE
    script = inv.args[0]
    if script.known and script.text in ("/dev/stdin", "/proc/self/fd/0"):
        return inv.stdin_code("shell")
    place = inv.place(script)
    if place.kind == INSIDE and re.search(r"(^|/)bin/activate(\.\w+)?$", place.shown):
        inv.emit("allow.venv-activate")
        return NONE
    return inv.run_script(script, "shell script")


_XARGS_VALUES = names(
    "-I -n -L -l -P -s -d -E -a --arg-file --max-args --max-lines --max-procs --delimiter "
    "--replace --eof --max-chars --process-slot-var"
)


@handles("xargs")
def xargs(inv: Invocation) -> Output:
    """`xargs CMD`: CMD runs with the words it reads (known when they are a literal)."""
    inv.claim()
    args = inv.args
    i = 0
    replace: str | None = None
    while i < len(args) and args[i].text.startswith("-") and args[i].text != "-":
        text = args[i].text
        if text == "--":
            i += 1
            break
        if text in ("-I", "--replace") and i + 1 < len(args):
            replace = args[i + 1].text
        elif text.startswith("-I") and len(text) > 2:
            replace = text[2:]
        elif text.startswith("-i") or text.startswith("--replace="):
            replace = text.split("=", 1)[1] if "=" in text else (text[2:] or "{}")
        if text in ("-a", "--arg-file") and i + 1 < len(args):
            inv.read(args[i + 1])
        i += 2 if text in _XARGS_VALUES else 1
    _run_for_items(inv, args[i:] or [Field("echo")], _stdin_items(inv.stdin), replace)
    return UNKNOWN_OUTPUT


def _stdin_items(stdin: Output | None) -> list[Field]:
    """The words a program reads from standard input, as far as they are known."""
    if stdin is not None and stdin.kind == "literal" and stdin.text.split():
        return [Field(t) for t in stdin.text.split()[:8]]
    if stdin is not None and stdin.kind == "paths":
        return [Field(stdin.text, len(stdin.text) - 1)]  # some path below a known directory
    return [Field(UNKNOWN)]


def _run_for_items(
    inv: Invocation, command: list[Field], items: list[Field], replace: str | None
) -> None:
    """Judge `command` run once per item: the item replaces `replace`, or is appended."""
    if replace:
        for item in items:
            inv.launch(
                [
                    Field(arg.text.replace(replace, item.text), scripts=arg.scripts)
                    for arg in command
                ]
            )
    else:
        inv.launch(command + items)


_PARALLEL_VALUES = names(
    "-j --jobs -S --sshlogin -a --arg-file -I --joblog --results --res --delay --timeout "
    "--tmpdir --workdir --wd -d --delimiter --colsep -C --env --halt -n --max-args -N -L -l "
    "--sshloginfile --slf --basefile --bf --return --transferfile --tf -E --eof"
)


@handles("parallel")
def parallel(inv: Invocation) -> Output:
    """GNU parallel: a command run with the arguments after `:::` (or read), or read commands."""
    inv.emit("approval.dynamic-code", what="commands built from its input")
    args = inv.args
    separator = next(
        (k for k, a in enumerate(args) if a.text in (":::", "::::", ":::+")), len(args)
    )
    options, command = parse_options(args[:separator], _PARALLEL_VALUES)
    for name, value in options:
        if value is not None and name in ("--joblog", "--results", "--res"):
            inv.write(value)
        elif value is not None and name in ("-a", "--arg-file"):
            inv.read(value)
    if separator < len(args) and args[separator].text == "::::":
        for path in args[separator + 1 :]:
            inv.read(path)
        items = [Field(UNKNOWN)]
    elif separator < len(args):
        items = [a for a in args[separator + 1 :] if not a.text.startswith(":::")][:8]
    else:
        items = _stdin_items(inv.stdin)
    replace = next((value.text for name, value in options if name == "-I" and value), "{}")
    if command:
        uses = any(replace in arg.text for arg in command)
        _run_for_items(inv, command, items, replace if uses else None)
    elif separator < len(args):
        for item in items:  # no command: every argument is a command line
            inv.shell_code(item)
    else:
        inv.stdin_code("shell")  # no command: every input line is a command line
    return UNKNOWN_OUTPUT
