"""The shell syntax the command policy reads: dataclasses for scripts and words, and walkers.

A parser (`treesitter.py`) builds these from command text; the expansion engine (`expand.py`)
turns a `Word` into the fields a program receives; the policy walks `Script`s. Nothing here
knows which commands are dangerous. `UNKNOWN` stands for characters whose value cannot be known
statically ($VAR, $(cmd), $((1+1))), so a caller can see exactly which part of a path is
uncertain.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

#: Stands for characters whose value cannot be known statically ($VAR, $(cmd), $((1+1))).
UNKNOWN = "\x00"
#: How deeply constructs may nest (subshells, substitutions, sh -c inside sh -c ...).
MAX_NESTING = 40


class ShellSyntaxError(ValueError):
    """The text is not a complete shell command (unbalanced quotes, a stray `)`, ...)."""


# --- the syntax tree ------------------------------------------------------------------------


@dataclass
class Lit:
    """Literal text; `quoted` text is exempt from splitting, globbing and tilde expansion."""

    text: str
    quoted: bool


@dataclass
class Param:
    """`$NAME` or `${NAME...}`; anything after the name (`:-x`, `%/*`) makes the value unknown."""

    name: str
    quoted: bool
    op: str = ""
    inner: tuple[Word, ...] = ()


@dataclass
class CommandSub:
    """`$(...)` or a backtick substitution: the output of a nested script."""

    body: Script
    quoted: bool


@dataclass
class ProcessSub:
    """`<(...)` or `>(...)`: a nested script seen through a /dev/fd path."""

    body: Script
    direction: str


@dataclass
class Arith:
    """`$((...))`, `$[...]` or `((...))`: arithmetic, whose value is unknown.

    `text` is the expression as written; bash evaluates it (and the variables it names) as
    arithmetic, where an array subscript runs any substitution inside it again.
    """

    text: str
    quoted: bool
    subs: tuple[Script, ...] = ()


Part = Lit | Param | CommandSub | ProcessSub | Arith


@dataclass
class Word:
    """One shell word before expansion, as its quoted and unquoted pieces."""

    parts: tuple[Part, ...]
    raw: str

    def literal(self) -> str | None:
        """The word's text after quote removal, or None when it holds any expansion."""
        if all(isinstance(p, Lit) for p in self.parts):
            return "".join(p.text for p in self.parts if isinstance(p, Lit))
        return None

    @property
    def quoted(self) -> bool:
        return any(isinstance(p, Lit) and p.quoted for p in self.parts)


@dataclass
class Heredoc:
    """A here-document; its body is read when the line holding `<<WORD` ends."""

    delimiter: str
    quoted: bool
    strip_tabs: bool
    body: str = ""
    # The body parsed for substitutions; only when the delimiter is unquoted.
    word: Word | None = None


@dataclass
class Redirect:
    """`>`, `>>`, `<`, `2>&1`, `&>`, `<<EOF`, `<<<` ...; `fd` is the number written before it."""

    op: str
    fd: int | None
    target: Word | None
    heredoc: Heredoc | None = None


@dataclass
class Assignment:
    """`NAME=value` (or `NAME=(a b)` when `array` is set) before a command or alone."""

    name: str
    value: Word | None
    array: tuple[Word, ...] | None
    raw: str
    # `NAME[index]=value`: the subscript, which bash evaluates (arithmetic for plain arrays).
    index: Word | None = None


@dataclass
class SimpleCommand:
    """Words (the program and its arguments) with their assignments and redirections."""

    assignments: tuple[Assignment, ...]
    words: tuple[Word, ...]
    redirects: tuple[Redirect, ...]
    raw: str


@dataclass
class Group:
    """`( list )` when `subshell`, else `{ list; }`."""

    body: Script
    subshell: bool
    redirects: tuple[Redirect, ...] = ()


@dataclass
class If:
    """`if`/`elif` branches as (condition, body) pairs, then an optional `else`."""

    branches: tuple[tuple[Script, Script], ...]
    else_body: Script | None
    redirects: tuple[Redirect, ...] = ()


@dataclass
class Loop:
    """`while` / `until` loops."""

    condition: Script
    body: Script
    redirects: tuple[Redirect, ...] = ()


@dataclass
class For:
    """`for NAME in WORDS` (words None: the positional parameters) or `for ((...))`."""

    variable: str
    words: tuple[Word, ...] | None
    body: Script
    arith: Arith | None = None
    redirects: tuple[Redirect, ...] = ()


@dataclass
class CaseArm:
    """One `pattern|pattern) body ;;` of a case statement."""

    patterns: tuple[Word, ...]
    body: Script


@dataclass
class Case:
    """`case WORD in ... esac`."""

    word: Word
    arms: tuple[CaseArm, ...]
    redirects: tuple[Redirect, ...] = ()


@dataclass
class FunctionDef:
    """`name() body` or `function name body`; the body is any compound command."""

    name: str
    body: Command


@dataclass
class ArithCommand:
    """`(( expression ))`."""

    expr: Arith
    redirects: tuple[Redirect, ...] = ()


@dataclass
class CondCommand:
    """`[[ ... ]]`: its words, and those bash evaluates as arithmetic or as variable names.

    `-eq`/`-lt`/... operands are arithmetic and `-v` names a variable: in both, an array
    subscript such as `a[$(cmd)]` runs the command even when the text was quoted.
    """

    words: tuple[Word, ...]
    redirects: tuple[Redirect, ...] = ()
    evaluated: tuple[Word, ...] = ()


Command = SimpleCommand | Group | If | Loop | For | Case | FunctionDef | ArithCommand | CondCommand


@dataclass
class Pipeline:
    """Commands joined by `|` or `|&`, optionally negated with `!`; `raw` is its source text."""

    commands: tuple[Command, ...]
    negated: bool = False
    raw: str = ""


@dataclass
class AndOr:
    """Pipelines joined by `&&` / `||`; `operators[i]` sits between pipelines i and i+1."""

    pipelines: tuple[Pipeline, ...]
    operators: tuple[str, ...]


@dataclass
class ListItem:
    """One entry of a list, ended by `;`, a newline or (when `background`) `&`."""

    command: AndOr
    background: bool


@dataclass
class Script:
    """A whole command line, or the inside of a subshell, group or substitution."""

    items: tuple[ListItem, ...]


# --- walking the tree -----------------------------------------------------------------------


def word_scripts(word: Word) -> Iterator[Script]:
    """The scripts nested directly in a word: command, process and arithmetic substitutions."""
    for part in word.parts:
        if isinstance(part, (CommandSub, ProcessSub)):
            yield part.body
        elif isinstance(part, Arith):
            yield from part.subs
        elif isinstance(part, Param):
            for inner in part.inner:
                yield from word_scripts(inner)


def command_words(command: SimpleCommand) -> Iterator[Word]:
    """Every word of a simple command, including assignment values and redirection targets."""
    for assignment in command.assignments:
        if assignment.index is not None:
            yield assignment.index
        if assignment.value is not None:
            yield assignment.value
        yield from assignment.array or ()
    yield from command.words
    for redirect in command.redirects:
        if redirect.target is not None:
            yield redirect.target
        if redirect.heredoc is not None and redirect.heredoc.word is not None:
            yield redirect.heredoc.word


def simple_commands(script: Script) -> Iterator[SimpleCommand]:
    """Every simple command in a script, however deeply nested in compound commands."""
    for item in script.items:
        for pipeline in item.command.pipelines:
            for command in pipeline.commands:
                yield from _simple_commands_in(command)


def _simple_commands_in(command: Command) -> Iterator[SimpleCommand]:
    if isinstance(command, SimpleCommand):
        yield command
    elif isinstance(command, Group):
        yield from simple_commands(command.body)
    elif isinstance(command, If):
        for condition, body in command.branches:
            yield from simple_commands(condition)
            yield from simple_commands(body)
        if command.else_body is not None:
            yield from simple_commands(command.else_body)
    elif isinstance(command, Loop):
        yield from simple_commands(command.condition)
        yield from simple_commands(command.body)
    elif isinstance(command, For):
        yield from simple_commands(command.body)
    elif isinstance(command, Case):
        for arm in command.arms:
            yield from simple_commands(arm.body)
    elif isinstance(command, FunctionDef):
        yield from _simple_commands_in(command.body)


def static_output(script: Script) -> str | None:
    """What `script` prints when that is plain from its text (`echo rm`), else None."""
    if len(script.items) != 1 or script.items[0].background:
        return None
    and_or = script.items[0].command
    if len(and_or.pipelines) != 1 or len(and_or.pipelines[0].commands) != 1:
        return None
    command = and_or.pipelines[0].commands[0]
    if not isinstance(command, SimpleCommand) or command.redirects or command.assignments:
        return None
    texts = [w.literal() for w in command.words]
    if not texts or any(t is None for t in texts):
        return None
    words = [t for t in texts if t is not None]
    if words[0] == "echo":
        args = words[1:]
        while args and args[0] in ("-n", "-E"):
            args = args[1:]
        if args and args[0].startswith("-e"):
            return None
        return " ".join(args)
    if words[0] == "printf" and len(words) == 2 and not any(c in words[1] for c in "%\\"):
        return words[1]
    return None
