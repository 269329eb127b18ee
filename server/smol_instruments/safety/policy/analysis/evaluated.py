"""Text bash evaluates a second time: arithmetic, variable names with subscripts, prompt strings.

In arithmetic (`(( ))`, `$(( ))`, `$[ ]`, `let`, `[[ a -eq b ]]`, `declare -i` values, array
subscripts) and wherever a builtin takes a variable name (`test -v`, `unset`, `printf -v`,
`read`, `declare`), bash evaluates an array subscript again, running any `$(...)` in it, even
when the text came from quotes or a variable: `[[ 1 -eq 'a[$(rm -rf ~)]' ]]` runs `rm`.
`${x@P}` runs the substitutions in x's value. Such hidden commands need approval and are
judged like any other; text only known at run time (a command's output) needs approval.
"""

from __future__ import annotations

import re

from ...shell import UNKNOWN, CommandSub, Field, Param, ProcessSub, Script, SimpleCommand, Word
from ..arguments import short
from .state import State
from .walker import Walker

_HIDDEN = re.compile(r"\$[({\[]|`")
_QUOTED = re.compile(r"'([^']*)'|\"((?:[^\"\\]|\\.)*)\"")
_IDENTIFIER = re.compile(r"(?<![\w])\$?\{?([A-Za-z_][A-Za-z0-9_]*)")
_SUBSCRIPT_SUBSTITUTION = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\[[^\]]*(\$\(|`)")
#: How many variables deep a value is followed (`x=y; y=z; (( x ))`).
MAX_DEPTH = 4


def evaluated_text(
    analysis: Walker,
    text: str,
    state: State,
    display: str,
    how: str,
    word: Word | None = None,
    *,
    raw: bool = False,
    depth: int = 0,
) -> None:
    """Judge `text` that bash evaluates as `how`.

    `raw` text is an expression as written (`(( ... ))`): its own `$(...)` are ordinary
    substitutions, judged where they are; quoted text in it is what hides commands.
    `word` is where an expanded text came from, to tell run-time data from the environment.
    """
    hidden = [q[0] or q[1] for q in _QUOTED.findall(text)] if raw else [text]
    for piece in hidden:
        if _HIDDEN.search(piece.replace(UNKNOWN, "")):
            shown = piece.replace(UNKNOWN, "…")
            analysis.emit("approval.evaluated-code", display, text=short(shown, 60), how=how)
            analysis.run(": " + piece.replace(UNKNOWN, ""), state.copy())
            return
    if (raw and _SUBSCRIPT_SUBSTITUTION.search(text)) or (
        UNKNOWN in text and (word is None or _runtime_data(word, state))
    ):
        shown = word.raw if word is not None else text.replace(UNKNOWN, "…")
        analysis.emit("approval.evaluated-data", display, text=short(shown, 60), how=how)
        return
    if how == "a prompt string" or depth >= MAX_DEPTH:
        return
    for name in _IDENTIFIER.findall(text):
        if name not in state.env:
            continue  # the user's environment, not text this command controls
        value = state.env[name]
        if value is None:
            analysis.emit("approval.evaluated-data", display, text=name, how=how)
            return
        evaluated_text(analysis, value, state, display, "arithmetic", depth=depth + 1)


# Programs whose output is a number, so evaluating it again runs nothing (`$(wc -l < f)`).
_NUMERIC_OUTPUT = frozenset(["wc", "expr", "seq", "nproc", "date", "id", "stat", "du"])


def _prints_a_number(script: Script) -> bool:
    """Whether every list in a substitution ends in a program that prints only a number."""
    for item in script.items:
        last = item.command.pipelines[-1].commands[-1]
        if not isinstance(last, SimpleCommand) or not last.words:
            return False
        if last.words[0].literal() not in _NUMERIC_OUTPUT:
            return False
    return bool(script.items)


def _runtime_data(word: Word, state: State) -> bool:
    """Whether an unknown part of `word` was produced while the command runs."""
    for part in word.parts:
        if isinstance(part, CommandSub) and _prints_a_number(part.body):
            continue
        if isinstance(part, (CommandSub, ProcessSub)):
            return True
        if isinstance(part, Param) and (
            not part.name or (part.name in state.env and state.env[part.name] is None)
        ):
            return True
        if isinstance(part, Param) and any(_runtime_data(w, state) for w in part.inner):
            return True
    return False


def evaluated_field(analysis: Walker, value: Field, state: State, display: str, how: str) -> None:
    """An argument a builtin evaluates (`let ARG`, `test -v NAME`, `unset NAME[i]`)."""
    evaluated_text(analysis, value.text, state, display, how, value.word)


def evaluated_name(analysis: Walker, name: Field, state: State, display: str) -> None:
    """A variable name a builtin assigns or tests: only a subscript in it is evaluated."""
    if "[" in name.text or not name.known:
        evaluated_field(analysis, name, state, display, "a variable name")
