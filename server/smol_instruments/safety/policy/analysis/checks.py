"""The checks every program call gets, whatever its handler decided.

Files written or emptied through options (`sort -o FILE`, `pytest --basetemp=DIR`), shell
code hidden in option values (`ssh -o ProxyCommand=...`), secrets named anywhere in the
arguments, reads outside the repository by programs otherwise allowed, and environment
assignments that change what runs. Also what a here-document feeds a program and what
`${x@P}` evaluates.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ...shell import (
    UNKNOWN,
    Arith,
    Assignment,
    Field,
    FunctionDef,
    Heredoc,
    Param,
    Word,
    expand_word,
)
from ...shell.syntax import Case, Command, For, Group, If, Loop, Script, SimpleCommand
from ..arguments import parse_options
from ..places import SECRET, Effect, rule_for
from ..tables import (
    CHDIR_OPTIONS,
    COMMAND_OPTIONS,
    DELETE_OPTIONS,
    GLOBAL_OPTIONS,
    NAME_OPERANDS,
    OUTPUT_OPERAND,
    PATTERN_FIRST,
    SINGLE_DASH_LONG,
    TOOL_HOOKS,
    VALUE_OPTIONS,
    WRITE_OPTIONS,
)
from ..verdicts import Finding
from .environment import assigned_value, judge_variable
from .evaluated import evaluated_text
from .invocation import Invocation
from .state import TAINTED, Call, Output, State
from .walker import Walker


def assignment(
    analysis: Walker, assigned: Assignment, state: State, display: str, local: list[Finding]
) -> None:
    """`NAME=value` before a command or alone: what it changes, and what bash evaluates."""
    inv = Invocation(analysis, Call("", [], display), state, None, local)
    if assigned.index is not None:
        analysis.evaluated_word(assigned.index, state, display, "an array subscript")
    for element in assigned.array or ():
        if element.raw.startswith("["):  # `a=([SUBSCRIPT]=value)`: evaluated like `a[i]=`
            text = " ".join(f.text for f in expand_word(element, analysis.env(state)))
            subscript = text[1 : _closing_bracket(text)]
            evaluated_text(analysis, subscript, state, display, "an array subscript", element)
    value = assigned_value(inv, assigned.name, assigned.value)
    judge_variable(inv, assigned.name, value if assigned.array is None else None)
    if assigned.name in state.integers and value is not None:
        evaluated_text(analysis, value.text, state, display, "arithmetic", assigned.value)


def heredoc_input(analysis: Walker, doc: Heredoc, state: State) -> Output:
    """What a here-document feeds a program: its text after expansion, when that is known."""
    if doc.word is None:
        return Output("literal", doc.body)
    fields = expand_word(doc.word, analysis.env(state))
    if len(fields) == 1 and fields[0].known:
        return Output("literal", fields[0].text)
    nature = analysis.nature(fields[0].scripts if fields else ())
    return nature if nature.kind in TAINTED else Output("literal", doc.body)


def evaluations(analysis: Walker, word: Word, state: State) -> None:
    """Parts of a word bash evaluates again: `$((...))`, `${x@P}`, `${!x}`, `${a[i]}`, `${x:i}`."""
    env = analysis.env(state)
    display = word.raw
    for part in word.parts:
        if isinstance(part, Arith):
            evaluated_text(analysis, part.text, state, display, "arithmetic", raw=True)
        if not isinstance(part, Param):
            continue
        for inner in part.inner:
            evaluations(analysis, inner, state)
        if part.op.endswith("@P"):
            value = env.var(part.name)
            how = "a prompt string"
            evaluated_text(analysis, value if value is not None else UNKNOWN, state, display, how)
        elif part.op == "!":
            value = env.var(part.name)
            if value is not None:
                evaluated_text(analysis, value, state, display, "a variable name")
        elif part.op.startswith(("[", ":")):
            _subscript_or_offset(analysis, part, state, display)


def _subscript_or_offset(analysis: Walker, part: Param, state: State, display: str) -> None:
    """`${a[SUBSCRIPT]...}` and `${x:OFFSET:LENGTH}` are arithmetic, evaluated again."""
    inner = part.inner[0] if part.inner else None
    text = part.op
    if inner is not None:
        text = " ".join(f.text for f in expand_word(inner, analysis.env(state)))
    if text.startswith("["):
        expression = text[1 : _closing_bracket(text)]
    elif text[1:2] not in ("-", "=", "?", "+"):
        expression = text[1:]
    else:
        return
    evaluated_text(analysis, expression, state, display, "arithmetic", inner)


def _closing_bracket(text: str) -> int:
    """The index of the `]` that closes the `[` at text[0] (the end if none does)."""
    depth = 0
    for i, c in enumerate(text):
        depth += {"[": 1, "]": -1}.get(c, 0)
        if depth == 0:
            return i
    return len(text)


def file_options(inv: Invocation) -> None:
    """Files a tool writes or empties through options or a fixed operand."""
    writes = WRITE_OPTIONS.get(inv.name, frozenset())
    deletes = DELETE_OPTIONS.get(inv.name, frozenset())
    output_at = OUTPUT_OPERAND.get(inv.name)
    if not writes and not deletes and output_at is None:
        return
    value_options = VALUE_OPTIONS.get(inv.name, frozenset()) | writes | deletes
    single_dash = inv.name in SINGLE_DASH_LONG
    options, operands = parse_options(inv.args, value_options, single_dash_long=single_dash)
    for name, value in options:
        if value is not None and name in deletes:
            inv.delete(value, recursive=True)
        elif value is not None and name in writes:
            target = _report_target(name, value)
            if target is not None:
                inv.write(target)
    if output_at is not None and len(operands) > output_at:
        inv.write(operands[output_at])


def _report_target(option: str, value: Field) -> Field | None:
    """Where an output option writes; `--cov-report=html:DIR` names a type, then a place."""
    if option != "--cov-report":
        return value
    _, colon, where = value.text.partition(":")
    return Field(where) if colon and where else None


_SSH_COMMAND = re.compile(r"(?i)(ProxyCommand|LocalCommand|KnownHostsCommand)\s*[= ]\s*(.+)", re.S)


def embedded_commands(inv: Invocation) -> None:
    """Shell commands hidden in option values: `ssh -o ProxyCommand=...`, `tar -I prog`."""
    options = COMMAND_OPTIONS.get(inv.name)
    if options is None:
        return
    parsed, _ = parse_options(inv.args, options)
    for name, value in parsed:
        if value is None or name not in options:
            continue
        text = value.text
        if name == "-o":
            match = _SSH_COMMAND.match(text)
            if match is None:
                continue
            text = match.group(2)
        elif name == "--checkpoint-action":
            if not text.startswith("exec="):
                continue
            text = text[len("exec=") :]
        inv.shell_code(Field(text if value.known else UNKNOWN, scripts=value.scripts))


def tool_hooks(inv: Invocation) -> None:
    """Options that make a test runner or build tool run code named on the command line."""
    hooks = TOOL_HOOKS.get(inv.name)
    if hooks is None:
        return
    value_options = VALUE_OPTIONS.get(inv.name, frozenset()) | frozenset(hooks)
    parsed, _ = parse_options(
        inv.args, value_options, single_dash_long=inv.name in SINGLE_DASH_LONG
    )
    for name, value in parsed:
        kind = hooks.get(name)
        if kind is None or value is None:
            continue
        if (
            kind == "module"
            and value.known
            and (not value.text.startswith(("/", "~", "..")) or inv.place(value).in_repo)
        ):
            continue  # a package of the project, or a file in the repository
        if kind == "python":
            inv.inline_code(value, "python")
            continue
        inv.emit("approval.tool-hook", option=name, what=_HOOK_WHAT[kind])
        if kind == "program":
            inv.shell_code(value)
        elif kind == "make":
            for recipe in _make_recipes(value.text):
                inv.shell_code(Field(recipe))


_HOOK_WHAT = {
    "program": "a program named on the command line",
    "code": "code or configuration named on the command line",
    "module": "a module from outside the repository",
    "make": "make rules given on the command line",
}


def _make_recipes(text: str) -> list[str]:
    """The recipe lines of make syntax: after `target: ;` or on lines starting with a tab."""
    recipes: list[str] = []
    for line in text.split("\n"):
        if line.startswith("\t"):
            recipes.append(line[1:])
        elif ":" in line and ";" in line.split(":", 1)[1]:
            recipes.append(line.split(":", 1)[1].split(";", 1)[1])
    return [r for r in recipes if r.strip()]


def work_dirs(inv: Invocation) -> None:
    """`make -C DIR`, `go -C DIR`, `npm --prefix DIR`: the tool builds or tests DIR's code."""
    chdir = CHDIR_OPTIONS.get(inv.name)
    if chdir is None:
        return
    value_options = (
        VALUE_OPTIONS.get(inv.name, frozenset()) | GLOBAL_OPTIONS.get(inv.name, frozenset()) | chdir
    )
    parsed, _ = parse_options(
        inv.args, value_options, single_dash_long=inv.name in SINGLE_DASH_LONG
    )
    for name, value in parsed:
        if name in chdir and value is not None:
            inv.touch(Effect.READ, value, verb="works in")


def secret_scan(inv: Invocation) -> None:
    """Any argument that names a secret (also inside `-v ~/.ssh:/keys` or `file=@...`)."""
    skip = {pattern_operand(inv.call)}
    if inv.name in PATTERN_FIRST:
        # A search pattern is text, not a file: `rg -e /etc/shadow src` reads only src.
        skip |= {
            i + 1 for i, a in enumerate(inv.args) if a.text in ("-e", "--regexp", "--expression")
        }
    for i, arg in enumerate(inv.args):
        if i in skip or (
            i > 0 and inv.name in ("ssh", "scp", "sftp") and inv.args[i - 1].text in ("-i", "-F")
        ):
            continue
        if (
            inv.name in PATTERN_FIRST
            and arg.text.startswith(("--regexp=", "--expression=", "-e"))
            and len(arg.text) > 2
        ):
            continue
        for candidate in path_candidates(arg, inv.analysis.paths.home):
            place = inv.place(candidate)
            if place.kind == SECRET:
                inv.touch(Effect.READ, place, verb="uses")
                return


def path_candidates(arg: Field, home: str) -> Iterator[Field]:
    yield arg
    text = arg.text
    if text.startswith("/") and ":" in text:
        yield Field(text.split(":", 1)[0])  # `docker run -v ~/.ssh:/keys`
    for match in re.finditer(r"[=@:,]([/~][^,;:=@]*)", text):
        value = match.group(1)
        if value.startswith("~"):
            value = home + value[1:]
        yield Field(value)


def pattern_operand(call: Call) -> int:
    """The index of the pattern or program operand of grep/sed/awk/jq, else -1."""
    exempt = PATTERN_FIRST.get(call.name)
    if exempt is None:
        return -1
    options, operands = parse_options(call.args, VALUE_OPTIONS.get(call.name, frozenset()))
    if any(name in exempt.split() for name, _ in options) or not operands:
        return -1
    first = operands[0]
    return next((i for i, a in enumerate(call.args) if a is first), -1)


def read_scan(inv: Invocation) -> None:
    """The first path an allowed program reads outside the repository (or `.` elsewhere)."""
    skip = pattern_operand(inv.call)
    options, operands = parse_options(inv.args, VALUE_OPTIONS.get(inv.name, frozenset()))
    candidates = [a for a in operands if skip < 0 or a is not inv.args[skip]]
    patterns = ("-e", "--regexp", "--expression") if inv.name in PATTERN_FIRST else ()
    # Option values are data (`cut -d /`) except files: `-f FILE` and `--long=/path`.
    candidates += [
        v
        for n, v in options
        if v is not None
        and n not in patterns
        and (n == "-f" or n.startswith("--"))
        and v.text.startswith(("/", "~"))
    ]
    if inv.name in NAME_OPERANDS:
        candidates = [a for a in candidates if a.text.startswith(("/", "~", "..")) or not a.known]
    if not operands:
        # No operand: it reads the working directory, which `cd` may have moved.
        candidates.append(Field(".") if inv.state.cwd else Field(UNKNOWN))
    for arg in candidates:
        place = inv.place(arg)
        if rule_for(Effect.READ, place.kind):
            inv.read(place)
            return


def fork_bomb(function: FunctionDef) -> bool:
    """True when a function calls itself in a pipe or in the background."""
    name = function.name

    def calls(command: Command) -> bool:
        return (
            isinstance(command, SimpleCommand)
            and bool(command.words)
            and command.words[0].literal() == name
        )

    def walk(command: Command) -> bool:
        if isinstance(command, Group):
            return walk_script(command.body)
        if isinstance(command, If):
            return any(walk_script(c) or walk_script(b) for c, b in command.branches) or (
                command.else_body is not None and walk_script(command.else_body)
            )
        if isinstance(command, Loop):
            return walk_script(command.condition) or walk_script(command.body)
        if isinstance(command, For):
            return walk_script(command.body)
        if isinstance(command, Case):
            return any(walk_script(arm.body) for arm in command.arms)
        return False

    def walk_script(script: Script) -> bool:
        for item in script.items:
            for pipeline in item.command.pipelines:
                concurrent = len(pipeline.commands) > 1 or item.background
                if concurrent and any(calls(c) for c in pipeline.commands):
                    return True
                if any(walk(c) for c in pipeline.commands):
                    return True
        return False

    return walk(function.body)
