"""Programs that run another program (`sudo`, `env`, `timeout`, `nice`, `runuser`, `toybox`).

`unwrap` finds the command a wrapper runs from its table row (options that take a value,
leading operands, `NAME=value` words, options that change directory), so the engine judges
that command as if it were written alone. `env -S` runs a string as a command line.
"""

from __future__ import annotations

import re

from ...shell import Field
from ..analysis.environment import judge_variable
from ..analysis.invocation import Invocation
from ..analysis.state import State
from ..places import UNKNOWN_PLACE
from ..tables import Wrapper

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
# A function bash imports from the environment: its body runs when the name is called.
_EXPORTED_FUNCTION = re.compile(r"(BASH_FUNC_[^=]*?)(?:%%|\(\))?=\(\)\s*\{(.*)\}\s*$", re.S)
# `env -S STRING`, `env -iS STRING`, `env --split-string=STRING`: STRING is a command line.
_SPLIT_STRING = re.compile(r"-[A-Za-z]*S(.*)|--split-string(?:=(.*))?", re.S)


def unwrap(inv: Invocation, wrapper: Wrapper) -> tuple[list[Field] | None, State]:
    """The command a wrapper runs (`sudo -u x CMD...` -> CMD...) and the state it runs in."""
    args = inv.args
    state = inv.state
    i = 0
    while i < len(args):
        text = args[i].text
        function = _EXPORTED_FUNCTION.match(text) if wrapper.assignments else None
        if function is not None:  # `env 'BASH_FUNC_ls%%=() { ...; }' bash -c ls`
            inv.emit("approval.env-override", name=function.group(1))
            inv.shell_code(Field(function.group(2), scripts=args[i].scripts))
            i += 1
            continue
        if wrapper.assignments and _ASSIGNMENT.match(text):
            name, _, value = text.partition("=")
            judge_variable(inv, name, Field(value, scripts=args[i].scripts))
            i += 1
            continue
        if text == "--":
            i += 1
            break
        if not text.startswith("-") or text == "-":
            break
        split = _SPLIT_STRING.fullmatch(text) if inv.name == "env" else None
        if split is not None:
            attached = split.group(1) or split.group(2)
            code = Field(attached) if attached else (args[i + 1] if i + 1 < len(args) else None)
            if code is not None:
                inv.shell_code(code)
            return None, state
        if inv.name == "command" and text in ("-v", "-V"):
            return None, state
        if inv.name == "env" and text.startswith(("-P", "--path")):
            inv.emit("approval.env-override", name="PATH")  # `env -P DIR cmd` finds cmd in DIR
        name, eq, attached = text.partition("=")
        if name in wrapper.chdir or text[:2] in wrapper.chdir:
            if not eq and text[:2] in wrapper.chdir and len(text) > 2:
                eq, attached = "=", text[2:]  # `-C/`
            directory = Field(attached) if eq else (args[i + 1] if i + 1 < len(args) else None)
            state = _moved(inv, state, directory)
        if text in wrapper.value_options:
            i += 1
        i += 1
    i += wrapper.operands
    return (args[i:] or None), state


def _moved(inv: Invocation, state: State, directory: Field | None) -> State:
    """The state of a command run in `directory` (`env -C DIR`, `sudo -D DIR`)."""
    moved = state.copy()
    place = inv.place(directory) if directory is not None else None
    moved.cwd = place.absolute if place is not None and place.kind != UNKNOWN_PLACE else None
    return moved
