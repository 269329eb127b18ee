"""Environment assignments that change what runs: `PATH=`, `LD_PRELOAD=`, `GIT_*=`, `PYTHONPATH=`.

The same check serves every way a variable is set: before a command (`X=1 cmd`), alone,
through `export`/`declare`, through `env X=1 cmd`, and as a `make X=1` override. Search
paths for code (`PYTHONPATH`, `NODE_PATH`, ...) are judged by where they point: inside the
repository they name the project's own code, anywhere else they need approval.
"""

from __future__ import annotations

from ...shell import UNKNOWN, Field, Word, expand_word
from ..places import IN_REPO
from ..tables import CODE_PATH_ENV, COMMAND_ENV, RISKY_ENV, RISKY_ENV_PREFIXES
from .invocation import Invocation


def risky_variable(name: str) -> bool:
    """Whether setting `name` changes which programs, libraries or settings run."""
    upper = name.upper()
    return name in RISKY_ENV or upper.startswith(RISKY_ENV_PREFIXES)


def judge_variable(inv: Invocation, name: str, value: Field | None) -> None:
    """Record what setting `name` (to `value`, None for an array) means."""
    if risky_variable(name):
        inv.emit("approval.env-override", name=name)
        if name in COMMAND_ENV and value is not None:
            inv.shell_code(value)  # a command line the program (or bash) will run
    elif name in CODE_PATH_ENV and value is not None and not _inside_repository(inv, value):
        inv.emit("approval.env-override", name=name)


def _inside_repository(inv: Invocation, value: Field) -> bool:
    """Every entry of a `:`-separated search path names a place in the repository."""
    for entry in value.text.split(":"):
        if not entry:
            continue  # the current directory
        if UNKNOWN in entry or inv.place(Field(entry)).kind not in IN_REPO:
            return False
    return True


def assigned_value(inv: Invocation, name: str, word: Word | None) -> Field | None:
    """What `NAME=word` stores, with the variable's own earlier value (`$PYTHONPATH`) as ""."""
    if word is None:
        return None
    state = inv.state.copy()
    state.env.setdefault(name, "")
    fields = expand_word(word, inv.analysis.env(state), assignment_like=True)
    return Field("".join(f.text for f in fields), scripts=fields[0].scripts if fields else ())
