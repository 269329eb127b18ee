"""A parameter a change adds, written into the signature before the model rewrites the function.

"give Version.parse an allow_v flag (default False) that lets a leading v through": the task
names one thing the repository does not have yet (agent/evidence.py `missing_names`), calls it
an argument, a flag, an option or a parameter, and may say its default. Adding it to the
signature is mechanical; using it is the feature. The function the change rewrites is shown
with the parameter in its signature already, said so, so what is left to the model is the body
(the 1.5B model, shown the function as it was, rewrote the body and left the signature: dev
sv-parse-allow-v, "Not done: the task names `allow_v`, which this change does not add").
Nothing is written here: the model's version is merged and checked like any change, and one
that takes the parameter and never reads it is refused (patches/pysource.py
`unread_parameters`).
"""

from __future__ import annotations

import ast
import keyword
import re
from collections.abc import Sequence
from dataclasses import dataclass

from .mentions import literal_at

#: The words that call a name a parameter, near it: "an allow_v flag", "a `step` argument".
_PARAMETER = re.compile(
    r"\b(?:arg|args|argument|arguments|param|params|parameter|parameters|flag|flags|option|"
    r"options|kwarg|kwargs|keyword)\b",
    re.IGNORECASE,
)
#: Where a default is told: "(default False)", "defaulting to 1", "default stays 1".
_DEFAULT = re.compile(
    r"\bdefault(?:s|ing)?\b(?:\s+(?:value|stays?|remains?|should be|must be|is|of|to|at))*"
    r"\s*(?:[:=]\s*)?[`(]?",
    re.IGNORECASE,
)
#: A default told as a state: "off by default", "enabled by default" (not "not on by ...").
_BY_DEFAULT = re.compile(
    r"(?<!not )(?<!n't )\b(on|off|true|false|enabled|disabled)\s+by\s+default\b", re.IGNORECASE
)
#: Words written for Python's constants in prose ("default false").
_CONSTANTS = {"true": "True", "false": "False", "none": "None", "null": "None", "off": "False"}
#: How many characters either side of the name the word calling it a parameter may be.
_NEAR = 30
#: How far after the name its default may be told (and not past a ";": another clause).
_TOLD = 60


@dataclass(frozen=True)
class Parameter:
    """`name=default`, to be added to the signature of `function`."""

    function: str
    name: str
    default: str

    def __str__(self) -> str:
        return f"{self.name}={self.default}"

    def signed(self, name: str, lines: list[str], start: int, end: int) -> tuple[list[str], str]:
        """`lines` with the parameter in the signature of the definition `name` at
        `start`..`end` when it is the parameter's function, and what to say of it."""
        taking = self.into(lines, start, end) if name == self.function else None
        if taking is None:
            return lines, ""
        said = f" (`{self}` is added to its signature, not in the file yet: keep it, use it)"
        return taking, said

    def into(self, lines: list[str], start: int, end: int) -> list[str] | None:
        """`lines` (a file's, without line ends) with the definition at `start`..`end`
        (1-based) taking the parameter; None when it does not parse, is no function, or has
        a parameter of that name already. The line count stays the same."""
        span = lines[start - 1 : end]
        first = next((line for line in span if line.strip()), "")
        indent = len(first) - len(first.lstrip())
        # its own indentation off each line that has it (a docstring's line may have less)
        source = [line[indent:] if not line[:indent].strip() else line for line in span]
        try:
            tree = ast.parse("\n".join(source))
        except SyntaxError:
            return None
        node = next(iter(tree.body), None)
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            return None
        args = node.args
        every = [*args.posonlyargs, *args.args, args.vararg, *args.kwonlyargs, args.kwarg]
        if any(arg is not None and arg.arg == self.name for arg in every):
            return None
        if args.posonlyargs and not (args.args or args.vararg or args.kwonlyargs):
            return None  # after them is before the "/": it would be positional-only too
        typed = any(arg is not None and arg.annotation is not None for arg in every)
        value = ast.literal_eval(self.default)
        kind = type(value).__name__ if isinstance(value, bool | int | float | str) else ""
        written = f"{self.name}: {kind} = {self.default}" if typed and kind else str(self)
        before = [
            node
            for node in (
                *args.posonlyargs,
                *args.args,
                *args.defaults,
                args.vararg,
                *args.kwonlyargs,
                *(d for d in args.kw_defaults if d is not None),
            )
            if node is not None
        ]
        if before:
            last = max(before, key=lambda n: (n.end_lineno or 0, n.end_col_offset or 0))
            row, col, text = (last.end_lineno or 1) - 1, last.end_col_offset or 0, f", {written}"
        elif args.kwarg is not None:  # only **kwargs: before its stars
            row, col, text = args.kwarg.lineno - 1, args.kwarg.col_offset - 2, f"{written}, "
        else:  # no parameter at all: just inside the parentheses after its name
            row = node.lineno - 1  # the def line, below any decorator
            row = next(r for r in range(row, len(source)) if "(" in source[r])
            col, text = len(source[row][: source[row].index("(") + 1].encode()), written
        line = span[row]
        head = line.encode()[: indent + col].decode(errors="replace")
        changed = head + text + line[len(head) :]
        return [*lines[: start - 1 + row], changed, *lines[start + row :]]


def new_parameter(task: str, absent: Sequence[str], names: Sequence[str]) -> Parameter | None:
    """The parameter a change task adds: the first of the `absent` names written near a word
    that calls it one, with the default the task tells ("default False"; for a flag told none,
    False; otherwise None), to be added to the function the task names (`names`, the first
    that is not absent, its last dotted part). None when the task adds no parameter or names
    no function to add it to."""
    functions = [name.rsplit(".", 1)[-1] for name in names if name not in absent]
    for name in absent:
        found = re.search(rf"\b{re.escape(name)}\b", task)
        if not name.isidentifier() or keyword.iskeyword(name) or not found or not functions:
            continue
        at = found.start()
        near = task[max(0, at - _NEAR) : at + len(name) + _NEAR]
        if not _PARAMETER.search(near):
            continue
        after = task[at : at + len(name) + _TOLD].split(";")[0]
        told = _DEFAULT.search(after)
        default = _default(task[at + told.end() :]) if told else None
        if default is None and (state := _BY_DEFAULT.search(after)):
            default = str(state[1].lower() in ("on", "true", "enabled"))
        flag = re.search(r"\bflags?\b", near, re.IGNORECASE) is not None
        return Parameter(functions[0], name, default or ("False" if flag else "None"))
    return None


def _default(text: str) -> str | None:
    """The Python literal `text` starts with, prose words for constants read as them."""
    word = re.match(r"\s*(\w+)", text)
    if word and word[1].lower() in _CONSTANTS:
        return _CONSTANTS[word[1].lower()]
    found = literal_at(text)
    value = ast.literal_eval(found) if found is not None else ...
    return found if value is None or isinstance(value, bool | int | float | str) else None
