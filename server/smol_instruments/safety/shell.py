"""A POSIX/bash parser for policy decisions: command text in, syntax tree and expanded words out.

The command policy decides from structure, never from prefixes: `r''m -rf /`, `\\rm -rf /`,
`sh -c "rm -rf /"` and `rm${IFS}-rf${IFS}/` must all reach the policy as the command `rm`
with the arguments `-rf` and `/`. This module knows shell *syntax* (quoting, lists, pipes,
compound commands, substitutions, redirections, here-documents) and shell *expansion*
(brace, tilde, parameter, field splitting, globs); it knows nothing about which commands are
dangerous. Text the policy cannot know (an unset variable, a command's output) expands to
the UNKNOWN marker, so a caller can see exactly which part of a path is uncertain.

Written from the bash manual; no third-party parser (bashlex is GPL).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Protocol

#: Stands for characters whose value cannot be known statically ($VAR, $(cmd), $((1+1))).
UNKNOWN = "\x00"
#: How deeply constructs may nest (subshells, substitutions, sh -c inside sh -c ...).
MAX_NESTING = 40
#: Brace expansion stops producing words beyond this many (`{1..100000}` is not expanded).
MAX_BRACE_WORDS = 64

_METACHARS = frozenset(" \t\n|&;<>()")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\[[^\]]*\])?(\+?)=")
_REDIRECT = re.compile(r"(\d{1,4})?(&>>|&>|<<<|<<-|<<|<>|<&|>>|>&|>\||<|>)")
_KEYWORDS = frozenset(
    [
        "if",
        "then",
        "elif",
        "else",
        "fi",
        "do",
        "done",
        "case",
        "esac",
        "while",
        "until",
        "for",
        "select",
        "function",
        "in",
        "{",
        "}",
        "!",
        "[[",
        "]]",
        "time",
    ]
)
# Words that may not start a command: they only close or continue a compound command.
_CLOSERS = frozenset(["then", "elif", "else", "fi", "do", "done", "esac", "}"])
_GLOB_CHARS = frozenset("*?[")
_EXTGLOB_PREFIX = frozenset("?*+@!")


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
    """`$((...))`: arithmetic, whose value is unknown; it may still hold substitutions."""

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
    """`[[ ... ]]`: only its words matter (they may hold substitutions)."""

    words: tuple[Word, ...]
    redirects: tuple[Redirect, ...] = ()


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


# --- the parser -----------------------------------------------------------------------------


def parse(source: str, *, depth: int = 0) -> Script:
    """The syntax tree of `source`; ShellSyntaxError when it is not complete shell."""
    return _Parser(source, depth).parse_all()


def parse_prefix(source: str, *, depth: int = 0) -> tuple[Script, str | None]:
    """Like parse(), but on a syntax error also returns the complete commands before it.

    Bash runs a script line by line, so the lines before a syntax error still run.
    """
    parser = _Parser(source, depth)
    try:
        return parser.parse_all(), None
    except ShellSyntaxError as exc:
        return Script(tuple(parser.completed)), str(exc)
    except RecursionError:
        return Script(tuple(parser.completed)), "the command nests too deeply"


class _Parser:
    """Recursive descent over the characters of one source string."""

    def __init__(self, src: str, depth: int) -> None:
        self.src = src
        self.n = len(src)
        self.pos = 0
        self.depth = depth
        self.pending: list[Heredoc] = []
        # Top-level commands parsed so far; parse_prefix() reports them after an error.
        self.completed: list[ListItem] = []

    # -- small helpers

    def error(self, message: str) -> ShellSyntaxError:
        return ShellSyntaxError(f"{message} (at character {self.pos})")

    def peek(self, offset: int = 0) -> str:
        i = self.pos + offset
        return self.src[i] if i < self.n else ""

    def at(self, text: str) -> bool:
        return self.src.startswith(text, self.pos)

    def nest(self) -> None:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise self.error("the command nests too deeply")

    def skip_blanks(self) -> None:
        while self.pos < self.n:
            c = self.src[self.pos]
            if c in " \t":
                self.pos += 1
            elif c == "\\" and self.peek(1) == "\n":
                self.pos += 2
            else:
                return

    def skip_comment(self) -> None:
        if self.peek() == "#":
            end = self.src.find("\n", self.pos)
            self.pos = self.n if end < 0 else end

    def newline(self) -> None:
        """Consume one newline, then the bodies of any here-documents begun on that line."""
        self.pos += 1
        pending, self.pending = self.pending, []
        for doc in pending:
            self.read_heredoc_body(doc)

    def skip_linebreaks(self) -> None:
        while True:
            self.skip_blanks()
            self.skip_comment()
            if self.peek() == "\n":
                self.newline()
            else:
                return

    def peek_keyword(self) -> str | None:
        """The reserved word at the cursor, if the next word is exactly one."""
        if self.at("[["):
            end = self.pos + 2
        else:
            end = self.pos
            while (
                end < self.n and self.src[end] not in _METACHARS and self.src[end] not in "'\"\\$`"
            ):
                end += 1
        if end < self.n and self.src[end] not in _METACHARS:
            return None
        word = self.src[self.pos : end]
        return word if word in _KEYWORDS else None

    def expect_keyword(self, keyword: str) -> None:
        self.skip_linebreaks()
        if self.peek_keyword() != keyword:
            found = self.src[self.pos : self.pos + 12] or "end of input"
            raise self.error(f"expected `{keyword}`, found {found!r}")
        self.pos += len(keyword)

    # -- lists

    def parse_all(self) -> Script:
        script = self.parse_list(frozenset(), top=True)
        if self.pos < self.n:
            raise self.error(f"unexpected {self.src[self.pos]!r}")
        return script

    def at_stop(self, stops: frozenset[str]) -> bool:
        c = self.peek()
        if c == "":
            return True
        if c == ")" and ")" in stops:
            return True
        if ";;" in stops and (self.at(";;") or self.at(";&")):
            return True
        keyword = self.peek_keyword()
        return keyword is not None and keyword in stops

    def parse_list(self, stops: frozenset[str], *, top: bool = False) -> Script:
        items: list[ListItem] = []
        while True:
            self.skip_linebreaks()
            if self.at_stop(stops):
                break
            command = self.parse_and_or()
            self.skip_blanks()
            c = self.peek()
            background = False
            if c == ";":
                if self.at(";;") or self.at(";&"):
                    if ";;" not in stops:
                        raise self.error("`;;` outside a case statement")
                else:
                    self.pos += 1
            elif c == "&":
                self.pos += 1
                background = True
            elif c == "\n":
                self.newline()
            elif c == "#":
                self.skip_comment()
            elif not self.at_stop(stops):
                raise self.error(f"unexpected {c!r}")
            item = ListItem(command, background)
            items.append(item)
            if top:
                self.completed.append(item)
        return Script(tuple(items))

    def parse_and_or(self) -> AndOr:
        pipelines = [self.parse_pipeline()]
        operators: list[str] = []
        while True:
            self.skip_blanks()
            if self.at("&&") or self.at("||"):
                operators.append(self.src[self.pos : self.pos + 2])
                self.pos += 2
                self.skip_linebreaks()
                pipelines.append(self.parse_pipeline())
            else:
                return AndOr(tuple(pipelines), tuple(operators))

    def parse_pipeline(self) -> Pipeline:
        self.skip_blanks()
        start = self.pos
        negated = False
        while True:
            keyword = self.peek_keyword()
            if keyword == "!":
                negated = True
                self.pos += 1
            elif keyword == "time":
                self.pos += 4
                self.skip_blanks()
                if self.at("-p") and (
                    self.pos + 2 >= self.n or self.src[self.pos + 2] in _METACHARS
                ):
                    self.pos += 2
            else:
                break
            self.skip_blanks()
        commands = [self.parse_command()]
        while True:
            self.skip_blanks()
            if self.at("||"):
                break
            if self.at("|&") or self.at("|"):
                self.pos += 2 if self.at("|&") else 1
                self.skip_linebreaks()
                commands.append(self.parse_command())
            else:
                break
        return Pipeline(tuple(commands), negated, self.src[start : self.pos].strip())

    # -- commands

    def parse_command(self) -> Command:
        self.skip_blanks()
        self.nest()
        try:
            return self._parse_command()
        finally:
            self.depth -= 1

    def _parse_command(self) -> Command:
        c = self.peek()
        if c == "(":
            if self.at("(("):
                start = self.pos
                try:
                    self.pos += 2
                    expr = self.read_arith_body(quoted=False)
                    return ArithCommand(expr, self.parse_redirects())
                except ShellSyntaxError:
                    self.pos = start
            self.pos += 1
            body = self.parse_list(frozenset({")"}))
            if self.peek() != ")":
                raise self.error("`(` is never closed")
            self.pos += 1
            return Group(body, True, self.parse_redirects())
        keyword = self.peek_keyword()
        if keyword == "{":
            self.pos += 1
            body = self.parse_list(frozenset({"}"}))
            self.expect_keyword("}")
            return Group(body, False, self.parse_redirects())
        if keyword == "if":
            return self.parse_if()
        if keyword in ("while", "until"):
            self.pos += len(keyword)
            condition = self.parse_list(frozenset({"do"}))
            self.expect_keyword("do")
            body = self.parse_list(frozenset({"done"}))
            self.expect_keyword("done")
            return Loop(condition, body, self.parse_redirects())
        if keyword in ("for", "select"):
            return self.parse_for(len(keyword))
        if keyword == "case":
            return self.parse_case()
        if keyword == "function":
            return self.parse_function_keyword()
        if keyword == "[[":
            return self.parse_cond()
        if keyword in _CLOSERS:
            raise self.error(f"unexpected `{keyword}`")
        if c == "" or c in "\n;&|)":
            raise self.error("expected a command")
        return self.parse_simple()

    def parse_redirects(self) -> tuple[Redirect, ...]:
        redirects: list[Redirect] = []
        while True:
            self.skip_blanks()
            redirect = self.try_redirect()
            if redirect is None:
                return tuple(redirects)
            redirects.append(redirect)

    def parse_if(self) -> If:
        self.pos += 2
        branches: list[tuple[Script, Script]] = []
        else_body: Script | None = None
        while True:
            condition = self.parse_list(frozenset({"then"}))
            self.expect_keyword("then")
            body = self.parse_list(frozenset({"elif", "else", "fi"}))
            branches.append((condition, body))
            self.skip_linebreaks()
            keyword = self.peek_keyword()
            if keyword == "elif":
                self.pos += 4
                continue
            if keyword == "else":
                self.pos += 4
                else_body = self.parse_list(frozenset({"fi"}))
            self.expect_keyword("fi")
            return If(tuple(branches), else_body, self.parse_redirects())

    def parse_body_group(self) -> Script:
        """The `do ... done` (or bash's `{ ... }`) body of a for/select loop."""
        self.skip_linebreaks()
        if self.peek_keyword() == "{":
            self.pos += 1
            body = self.parse_list(frozenset({"}"}))
            self.expect_keyword("}")
            return body
        self.expect_keyword("do")
        body = self.parse_list(frozenset({"done"}))
        self.expect_keyword("done")
        return body

    def parse_for(self, keyword_length: int) -> For:
        self.pos += keyword_length
        self.skip_blanks()
        if self.at("(("):
            self.pos += 2
            arith = self.read_arith_body(quoted=False)
            self.skip_blanks()
            if self.peek() == ";":
                self.pos += 1
            body = self.parse_body_group()
            return For("", None, body, arith, self.parse_redirects())
        name_word = self.read_word()
        name = name_word.literal() if name_word else None
        if not name or not _NAME.fullmatch(name):
            raise self.error("`for` needs a variable name")
        self.skip_linebreaks()
        words: list[Word] | None = None
        if self.peek_keyword() == "in":
            self.pos += 2
            words = []
            while True:
                self.skip_blanks()
                if self.peek() in ("", ";", "\n"):
                    break
                word = self.read_word()
                if word is None:
                    raise self.error(f"unexpected {self.peek()!r} in `for` words")
                words.append(word)
        self.skip_blanks()
        if self.peek() == ";":
            self.pos += 1
        body = self.parse_body_group()
        return For(
            name, tuple(words) if words is not None else None, body, None, self.parse_redirects()
        )

    def parse_case(self) -> Case:
        self.pos += 4
        self.skip_blanks()
        subject = self.read_word()
        if subject is None:
            raise self.error("`case` needs a word")
        self.expect_keyword("in")
        arms: list[CaseArm] = []
        while True:
            self.skip_linebreaks()
            if self.peek_keyword() == "esac":
                self.pos += 4
                break
            if self.peek() == "":
                raise self.error("`case` is never closed with `esac`")
            if self.peek() == "(":
                self.pos += 1
            patterns: list[Word] = []
            while True:
                self.skip_blanks()
                pattern = self.read_word()
                if pattern is None:
                    raise self.error("a case pattern is missing")
                patterns.append(pattern)
                self.skip_blanks()
                if self.peek() == "|":
                    self.pos += 1
                    continue
                if self.peek() == ")":
                    self.pos += 1
                    break
                raise self.error("a case pattern must end with `)`")
            body = self.parse_list(frozenset({";;", "esac"}))
            self.skip_blanks()
            for terminator in (";;&", ";;", ";&"):
                if self.at(terminator):
                    self.pos += len(terminator)
                    break
            arms.append(CaseArm(tuple(patterns), body))
        return Case(subject, tuple(arms), self.parse_redirects())

    def parse_function_keyword(self) -> FunctionDef:
        self.pos += len("function")
        self.skip_blanks()
        name_word = self.read_word()
        name = name_word.literal() if name_word else None
        if not name:
            raise self.error("`function` needs a name")
        self.skip_blanks()
        if self.at("()"):
            self.pos += 2
        elif self.peek() == "(":
            self.pos += 1
            self.skip_blanks()
            if self.peek() != ")":
                raise self.error("expected `)` after `(` in a function definition")
            self.pos += 1
        self.skip_linebreaks()
        return FunctionDef(name, self.parse_command())

    def parse_cond(self) -> CondCommand:
        self.pos += 2
        words: list[Word] = []
        while True:
            self.skip_linebreaks()
            if self.at("]]") and (self.pos + 2 >= self.n or self.src[self.pos + 2] in _METACHARS):
                self.pos += 2
                break
            c = self.peek()
            if c == "":
                raise self.error("`[[` is never closed with `]]`")
            if c in "()<>|&;":
                self.pos += 1
                continue
            word = self.read_word()
            if word is None:
                raise self.error(f"unexpected {c!r} inside `[[ ]]`")
            words.append(word)
        return CondCommand(tuple(words), self.parse_redirects())

    def parse_simple(self) -> Command:
        start = self.pos
        assignments: list[Assignment] = []
        words: list[Word] = []
        redirects: list[Redirect] = []
        while True:
            self.skip_blanks()
            c = self.peek()
            redirect = self.try_redirect()
            if redirect is not None:
                redirects.append(redirect)
                continue
            if c == "" or c in "\n;&|)":
                break
            if c == "#":
                self.skip_comment()
                break
            if c == "(":
                if len(words) == 1 and not assignments and not redirects:
                    return self.parse_function_def(words[0])
                raise self.error("unexpected `(`")
            word: Word | None
            if c in "<>" and self.peek(1) == "(":
                word = self.read_process_sub_word()
            else:
                word = self.read_word()
            if word is None:
                raise self.error(f"unexpected {c!r}")
            if not words:
                assignment = self.as_assignment(word)
                if assignment is not None:
                    assignments.append(assignment)
                    continue
            words.append(word)
        raw = self.src[start : self.pos].strip()
        return SimpleCommand(tuple(assignments), tuple(words), tuple(redirects), raw)

    def parse_function_def(self, name_word: Word) -> FunctionDef:
        name = name_word.literal()
        if not name:
            raise self.error("a function name must be plain text")
        self.pos += 1
        self.skip_blanks()
        if self.peek() != ")":
            raise self.error("expected `)` in a function definition")
        self.pos += 1
        self.skip_linebreaks()
        return FunctionDef(name, self.parse_command())

    def as_assignment(self, word: Word) -> Assignment | None:
        first = word.parts[0] if word.parts else None
        if not isinstance(first, Lit) or first.quoted:
            return None
        match = _ASSIGNMENT.match(first.text)
        if match is None:
            return None
        rest = first.text[match.end() :]
        value_parts: list[Part] = ([Lit(rest, False)] if rest else []) + list(word.parts[1:])
        if not value_parts and self.peek() == "(":
            return Assignment(match.group(1), None, self.read_array(), word.raw)
        return Assignment(
            match.group(1), Word(tuple(value_parts), word.raw[match.end() :]), None, word.raw
        )

    def read_array(self) -> tuple[Word, ...]:
        self.pos += 1
        elements: list[Word] = []
        while True:
            self.skip_linebreaks()
            if self.peek() == ")":
                self.pos += 1
                return tuple(elements)
            word = self.read_word()
            if word is None:
                raise self.error("an array assignment is never closed with `)`")
            elements.append(word)

    # -- redirections and here-documents

    def try_redirect(self) -> Redirect | None:
        match = _REDIRECT.match(self.src, self.pos)
        if match is None:
            return None
        fd_text, op = match.group(1), match.group(2)
        if fd_text and op.startswith("&"):
            return None
        if op in ("<", ">") and match.end() < self.n and self.src[match.end()] == "(":
            return None  # a process substitution, read as a word
        self.pos = match.end()
        self.skip_blanks()
        target = self.read_word()
        if target is None:
            raise self.error(f"`{op}` needs a target")
        fd = int(fd_text) if fd_text else None
        if op in ("<<", "<<-"):
            delimiter = "".join(
                p.text if isinstance(p, Lit) else _part_spelling(p) for p in target.parts
            )
            doc = Heredoc(delimiter, target.quoted or "\\" in target.raw, op == "<<-")
            self.pending.append(doc)
            return Redirect(op, fd, None, doc)
        return Redirect(op, fd, target)

    def read_heredoc_body(self, doc: Heredoc) -> None:
        lines: list[str] = []
        while self.pos < self.n:
            end = self.src.find("\n", self.pos)
            line = self.src[self.pos : self.n if end < 0 else end]
            self.pos = self.n if end < 0 else end + 1
            if doc.strip_tabs:
                line = line.lstrip("\t")
            if line == doc.delimiter:
                break
            lines.append(line)
        doc.body = "\n".join(lines) + ("\n" if lines else "")
        if not doc.quoted and any(c in doc.body for c in "$`\\"):
            sub = _Parser(doc.body, self.depth + 1)
            doc.word = Word(tuple(sub.read_double_quoted(heredoc=True)), doc.body)

    # -- words

    def read_word(self) -> Word | None:
        """One unquoted-context word, up to the next blank or metacharacter."""
        start = self.pos
        parts: list[Part] = []
        buf: list[str] = []

        def flush() -> None:
            if buf:
                parts.append(Lit("".join(buf), False))
                buf.clear()

        while self.pos < self.n:
            c = self.src[self.pos]
            if c == "(" and buf and buf[-1] in _EXTGLOB_PREFIX:
                buf.append(self.read_balanced_parens())
                continue
            if c in _METACHARS:
                break
            if c == "\\":
                nxt = self.peek(1)
                if nxt == "\n":
                    self.pos += 2
                elif nxt == "":
                    buf.append("\\")
                    self.pos += 1
                else:
                    flush()
                    parts.append(Lit(nxt, True))
                    self.pos += 2
            elif c == "'":
                end = self.src.find("'", self.pos + 1)
                if end < 0:
                    raise self.error("a single quote is never closed")
                flush()
                parts.append(Lit(self.src[self.pos + 1 : end], True))
                self.pos = end + 1
            elif c == '"':
                flush()
                self.pos += 1
                parts.extend(self.read_double_quoted())
            elif c == "$":
                flush()
                parts.extend(self.read_dollar(quoted=False))
            elif c == "`":
                flush()
                parts.append(self.read_backticks(quoted=False))
            else:
                buf.append(c)
                self.pos += 1
        flush()
        if self.pos == start:
            return None
        return Word(tuple(parts), self.src[start : self.pos])

    def read_balanced_parens(self) -> str:
        """An extglob group such as `@(a|b)`, kept as unquoted pattern text."""
        start = self.pos
        level = 0
        while self.pos < self.n:
            c = self.src[self.pos]
            self.pos += 1
            if c == "\\":
                self.pos += 1
            elif c == "(":
                level += 1
            elif c == ")":
                level -= 1
                if level == 0:
                    return self.src[start : self.pos]
        raise self.error("a pattern group `(` is never closed")

    def read_process_sub_word(self) -> Word:
        start = self.pos
        direction = self.src[self.pos]
        self.pos += 2
        body = self.read_nested_list()
        return Word((ProcessSub(body, direction),), self.src[start : self.pos])

    def read_nested_list(self) -> Script:
        """The script inside `$(...)`, `<(...)` or `>(...)`; the cursor is past the `(`."""
        self.nest()
        try:
            body = self.parse_list(frozenset({")"}))
        finally:
            self.depth -= 1
        if self.peek() != ")":
            raise self.error("`$(` or `<(` is never closed")
        self.pos += 1
        return body

    def read_double_quoted(self, *, heredoc: bool = False) -> list[Part]:
        """Parts up to the closing `"` (or, for a here-document body, the end)."""
        parts: list[Part] = []
        buf: list[str] = []
        escapable = "$`\\\n" if heredoc else '$`"\\\n'

        def flush() -> None:
            if buf:
                parts.append(Lit("".join(buf), True))
                buf.clear()

        while True:
            if self.pos >= self.n:
                if heredoc:
                    break
                raise self.error("a double quote is never closed")
            c = self.src[self.pos]
            if c == '"' and not heredoc:
                self.pos += 1
                break
            if c == "\\":
                nxt = self.peek(1)
                if nxt and nxt in escapable:
                    if nxt != "\n":
                        buf.append(nxt)
                    self.pos += 2
                else:
                    buf.append("\\")
                    self.pos += 1
            elif c == "$":
                flush()
                parts.extend(self.read_dollar(quoted=True))
            elif c == "`":
                flush()
                parts.append(self.read_backticks(quoted=True))
            else:
                buf.append(c)
                self.pos += 1
        flush()
        if not parts:
            parts.append(Lit("", True))
        return parts

    def read_dollar(self, *, quoted: bool) -> list[Part]:
        nxt = self.peek(1)
        if nxt == "'" and not quoted:
            self.pos += 2
            return [Lit(self.read_ansi_c(), True)]
        if nxt == '"' and not quoted:
            self.pos += 2
            return self.read_double_quoted()
        if self.at("$(("):
            start = self.pos
            try:
                self.pos += 3
                return [self.read_arith_body(quoted=quoted)]
            except ShellSyntaxError:
                self.pos = start
        if nxt == "(":
            self.pos += 2
            return [CommandSub(self.read_nested_list(), quoted)]
        if nxt == "[":
            end = self.src.find("]", self.pos)
            if end < 0:
                raise self.error("`$[` is never closed")
            text = self.src[self.pos + 2 : end]
            self.pos = end + 1
            return [Arith(text, quoted)]
        if nxt == "{":
            self.pos += 2
            return [self.read_braced_param(quoted)]
        match = _NAME.match(self.src, self.pos + 1)
        if match is not None:
            self.pos = match.end()
            return [Param(match.group(0), quoted)]
        if nxt and (nxt.isdigit() or nxt in "@*#?-$!"):
            self.pos += 2
            return [Param(nxt, quoted)]
        self.pos += 1
        return [Lit("$", quoted)]

    def read_ansi_c(self) -> str:
        out: list[str] = []
        while True:
            if self.pos >= self.n:
                raise self.error("a $'...' quote is never closed")
            c = self.src[self.pos]
            if c == "'":
                self.pos += 1
                return "".join(out)
            if c != "\\":
                out.append(c)
                self.pos += 1
                continue
            text, used = _ansi_c_escape(self.src, self.pos)
            out.append(text)
            self.pos += used

    def read_braced_param(self, quoted: bool) -> Param:
        """`${...}`: the name, then any operator text up to the matching `}`."""
        self.nest()
        try:
            return self._read_braced_param(quoted)
        finally:
            self.depth -= 1

    def _read_braced_param(self, quoted: bool) -> Param:
        prefix = ""
        if self.peek() in "#!" and self.peek(1) not in "}":
            prefix = self.peek()
            self.pos += 1
        match = _NAME.match(self.src, self.pos)
        if match is not None:
            name = match.group(0)
            self.pos = match.end()
        elif self.peek() and (self.peek().isdigit() or self.peek() in "@*#?-$!"):
            name = self.peek()
            self.pos += 1
        else:
            name = ""
        op_start = self.pos
        parts: list[Part] = []
        buf: list[str] = []
        level = 0

        def flush() -> None:
            if buf:
                parts.append(Lit("".join(buf), quoted))
                buf.clear()

        while True:
            if self.pos >= self.n:
                raise self.error("`${` is never closed")
            c = self.src[self.pos]
            if c == "}" and level == 0:
                break
            if c == "\\":
                buf.append(self.src[self.pos : self.pos + 2])
                self.pos += 2
            elif c == "'" and not quoted:
                end = self.src.find("'", self.pos + 1)
                if end < 0:
                    raise self.error("a single quote is never closed")
                flush()
                parts.append(Lit(self.src[self.pos + 1 : end], True))
                self.pos = end + 1
            elif c == '"':
                flush()
                self.pos += 1
                parts.extend(self.read_double_quoted())
            elif c == "$":
                flush()
                parts.extend(self.read_dollar(quoted=quoted))
            elif c == "`":
                flush()
                parts.append(self.read_backticks(quoted=quoted))
            else:
                if c == "{":
                    level += 1
                elif c == "}":
                    level -= 1
                buf.append(c)
                self.pos += 1
        flush()
        op = prefix + self.src[op_start : self.pos]
        self.pos += 1
        inner = (Word(tuple(parts), op),) if parts else ()
        return Param(name, quoted, op, inner)

    def read_arith_body(self, *, quoted: bool) -> Arith:
        """Arithmetic text up to the closing `))`; the cursor is past the opening `((`."""
        start = self.pos
        subs: list[Script] = []
        level = 0
        while True:
            if self.pos >= self.n:
                raise self.error("`((` is never closed")
            c = self.src[self.pos]
            if c == "$" and self.peek(1) == "(" and self.peek(2) != "(":
                self.pos += 2
                subs.append(self.read_nested_list())
            elif c == "`":
                sub = self.read_backticks(quoted=True)
                subs.append(sub.body)
            elif c == "(":
                level += 1
                self.pos += 1
            elif c == ")":
                if level == 0:
                    if self.peek(1) != ")":
                        raise self.error("arithmetic `((` closed by a single `)`")
                    text = self.src[start : self.pos]
                    self.pos += 2
                    return Arith(text, quoted, tuple(subs))
                level -= 1
                self.pos += 1
            else:
                self.pos += 1

    def read_backticks(self, *, quoted: bool) -> CommandSub:
        self.pos += 1
        out: list[str] = []
        while True:
            if self.pos >= self.n:
                raise self.error("a backquote is never closed")
            c = self.src[self.pos]
            if c == "`":
                self.pos += 1
                break
            if c == "\\" and self.pos + 1 < self.n:
                nxt = self.src[self.pos + 1]
                if nxt in "$`\\" or (quoted and nxt == '"'):
                    out.append(nxt)
                    self.pos += 2
                    continue
            out.append(c)
            self.pos += 1
        if self.depth + 1 > MAX_NESTING:
            raise self.error("the command nests too deeply")
        return CommandSub(_Parser("".join(out), self.depth + 1).parse_all(), quoted)


def _part_spelling(part: Part) -> str:
    """A best-effort source spelling of a non-literal part (for here-document delimiters)."""
    if isinstance(part, Param):
        return "$" + part.name
    return ""


_SIMPLE_ESCAPES = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


def _ansi_c_escape(src: str, pos: int) -> tuple[str, int]:
    """Decode the $'...' escape at src[pos] (a backslash); returns (text, characters used)."""
    nxt = src[pos + 1] if pos + 1 < len(src) else ""
    if nxt in _SIMPLE_ESCAPES:
        return _SIMPLE_ESCAPES[nxt], 2
    for marker, size, base in (("x", 2, 16), ("u", 4, 16), ("U", 8, 16)):
        if nxt == marker:
            digits = re.match(f"[0-9A-Fa-f]{{1,{size}}}", src[pos + 2 :])
            if digits is None:
                return "\\" + marker, 2
            code = int(digits.group(0), base)
            return (chr(code) if code < 0x110000 else "\ufffd"), 2 + len(digits.group(0))
    if nxt and nxt in "01234567":
        digits = re.match(r"[0-7]{1,3}", src[pos + 1 :])
        assert digits is not None
        return chr(int(digits.group(0), 8) & 0xFF), 1 + len(digits.group(0))
    if nxt == "c" and pos + 2 < len(src):
        return chr(ord(src[pos + 2]) & 0x1F), 3
    return "\\" + nxt, 1 + len(nxt)


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


# --- expansion ------------------------------------------------------------------------------


class Environment(Protocol):
    """What expansion may know: variable values and the output of simple substitutions."""

    def var(self, name: str) -> str | None: ...

    def output(self, script: Script) -> str | None: ...


@dataclass(frozen=True)
class Field:
    """One argument after expansion. UNKNOWN marks characters that cannot be known."""

    text: str
    glob_at: int = -1  # index of the first unquoted glob character, -1 when none
    scripts: tuple[Script, ...] = field(default=(), compare=False)

    @property
    def known(self) -> bool:
        return UNKNOWN not in self.text

    @property
    def glob(self) -> bool:
        return self.glob_at >= 0

    def shown(self) -> str:
        """The text for messages, with unknown parts written as `…`."""
        return re.sub("\x00+", "…", self.text)


# A unit is one character with its quoting, or a not-yet-expanded part.
_Unit = tuple[str, bool] | Param | CommandSub | ProcessSub | Arith


def _units(parts: tuple[Part, ...]) -> list[_Unit]:
    units: list[_Unit] = []
    for part in parts:
        if isinstance(part, Lit):
            if part.quoted and not part.text:
                units.append(("", True))  # "" still makes a (empty) field
            units.extend((c, part.quoted) for c in part.text)
        else:
            units.append(part)
    return units


def _all_scripts(word: Word) -> tuple[Script, ...]:
    return tuple(word_scripts(word))


def expand_word(word: Word, env: Environment, *, assignment_like: bool = False) -> list[Field]:
    """The fields a command word expands to: brace, tilde, parameter, splitting, globs."""
    scripts = _all_scripts(word)
    units = _units(word.parts)
    assignment_like = assignment_like or _looks_like_assignment(units)
    fields: list[Field] = []
    for variant in _brace_expand(units):
        fields.extend(_expand_units(_tilde_expand(variant, env, assignment_like), env, scripts))
    return fields


def expand_value(word: Word | None, env: Environment) -> str | None:
    """The value an assignment stores: no splitting or globbing; None when unknowable."""
    if word is None:
        return ""
    units = _tilde_expand(_units(word.parts), env, True)
    text: list[str] = []
    for unit in units:
        if isinstance(unit, tuple):
            text.append(unit[0])
            continue
        value = _part_value(unit, env)
        if value is None:
            return None
        text.append(value)
    return "".join(text)


def _looks_like_assignment(units: list[_Unit]) -> bool:
    """`name=value` arguments get tilde expansion after `=` in bash (e.g. dd of=~/x)."""
    name: list[str] = []
    for unit in units:
        if not isinstance(unit, tuple) or unit[1]:
            return False
        if unit[0] == "=":
            return bool(name) and _NAME.fullmatch("".join(name)) is not None
        name.append(unit[0])
    return False


def _brace_expand(units: list[_Unit]) -> list[list[_Unit]]:
    results: list[list[_Unit]] = []
    pending = [units]
    while pending:
        current = pending.pop()
        split = _brace_split(current)
        if split is None or len(results) + len(pending) + len(split) > MAX_BRACE_WORDS:
            results.append(current)
        else:
            pending.extend(reversed(split))
    return results


def _brace_split(units: list[_Unit]) -> list[list[_Unit]] | None:
    """Expand the first `{a,b}` or `{1..3}` in `units`, or None when there is none."""
    stack: list[int] = []
    commas: dict[int, list[int]] = {}
    pairs: list[tuple[int, int]] = []
    for i, unit in enumerate(units):  # one pass: matching braces and their top-level commas
        if unit == ("{", False):
            stack.append(i)
            commas[i] = []
        elif unit == ("}", False) and stack:
            pairs.append((stack.pop(), i))
        elif unit == (",", False) and stack:
            commas[stack[-1]].append(i)
    for open_at, close_at in sorted(pairs):
        prefix, suffix = units[:open_at], units[close_at + 1 :]
        if commas[open_at]:
            bounds = [open_at, *commas[open_at], close_at]
            return [
                prefix + units[bounds[k] + 1 : bounds[k + 1]] + suffix
                for k in range(len(bounds) - 1)
            ]
        sequence = _brace_sequence(units[open_at + 1 : close_at])
        if sequence is not None:
            return [prefix + [(c, False) for c in item] + suffix for item in sequence]
    return None


def _brace_sequence(inner: list[_Unit]) -> list[str] | None:
    if len(inner) > 32:  # `{-100000..100000..10}` is the longest worth reading
        return None
    if not all(isinstance(u, tuple) and not u[1] for u in inner):
        return None
    text = "".join(u[0] for u in inner if isinstance(u, tuple))
    match = re.fullmatch(r"(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?", text)
    if match is None:
        return None
    first, last, step_text = match.groups()
    step = abs(int(step_text)) if step_text else 1
    step = step or 1
    if first.lstrip("-").isdigit() and last.lstrip("-").isdigit():
        a, b = int(first), int(last)
        if abs(b - a) // step > MAX_BRACE_WORDS:
            return None
        values = range(a, b + 1, step) if a <= b else range(a, b - 1, -step)
        return [str(v) for v in values]
    if first.isalpha() and last.isalpha():
        a, b = ord(first), ord(last)
        values = range(a, b + 1, step) if a <= b else range(a, b - 1, -step)
        return [chr(v) for v in values]
    return None


def _tilde_expand(units: list[_Unit], env: Environment, assignment_like: bool) -> list[_Unit]:
    starts = [0]
    if assignment_like:
        starts += [i + 1 for i, u in enumerate(units) if u in (("=", False), (":", False))]
    out = list(units)
    for start in reversed(starts):
        if start >= len(out) or out[start] != ("~", False):
            continue
        end = start + 1
        while end < len(out):
            unit = out[end]
            if not isinstance(unit, tuple) or unit[1] or unit[0] in ("/", ":"):
                break
            end += 1
        if end < len(out):
            unit = out[end]
            if not isinstance(unit, tuple) or unit[1]:
                continue  # `~$X` and `~"x"` are not tilde prefixes
        login = "".join(u[0] for u in out[start + 1 : end] if isinstance(u, tuple))
        if login == "":
            value = env.var("HOME")
        elif login == "+":
            value = env.var("PWD")
        elif login == "-":
            value = env.var("OLDPWD")
        else:
            value = "/" + UNKNOWN  # another user's home: somewhere outside, not knowable
        text = UNKNOWN if value is None else value
        out[start:end] = [(c, True) for c in text]
    return out


def _part_value(part: _Unit, env: Environment) -> str | None:
    if isinstance(part, Param):
        return _param_value(part, env)
    if isinstance(part, CommandSub):
        value = env.output(part.body)
        return value.rstrip("\n") if value is not None else None
    if isinstance(part, ProcessSub):
        return "/dev/fd/63"  # what bash passes; the script itself is in Field.scripts
    return None


def _param_value(param: Param, env: Environment) -> str | None:
    """`$X` and the operators that keep a known value (`${X:-d}`, `${X:?}`, `${X:+alt}`)."""
    value = env.var(param.name)
    if not param.op:
        return value
    match = re.fullmatch(r"(:?)([-=?+])(.*)", param.op, re.S)
    if value is None or match is None:
        return None
    colon, operator, operand = match.groups()
    is_set = bool(value) if colon else True
    if operator in "-=?":
        if is_set:
            return value
        return (
            operand
            if operator != "?" and all(isinstance(p, Lit) for w in param.inner for p in w.parts)
            else None
        )
    return (
        (operand if all(isinstance(p, Lit) for w in param.inner for p in w.parts) else None)
        if is_set
        else ""
    )


def _expand_units(units: list[_Unit], env: Environment, scripts: tuple[Script, ...]) -> list[Field]:
    fields: list[Field] = []
    text: list[str] = []
    glob_at = -1
    started = False  # a field exists even if empty (quoted "" or an unknown value)
    ifs = env.var("IFS")
    separators = " \t\n" if ifs is None else ifs

    def close() -> None:
        nonlocal glob_at, started
        if started:
            fields.append(Field("".join(text), glob_at, scripts))
        text.clear()
        glob_at = -1
        started = False

    for unit in units:
        if isinstance(unit, tuple):
            char, quoted = unit
            if not quoted and char in _GLOB_CHARS and glob_at < 0:
                glob_at = len(text)
            text.append(char)
            started = True
            continue
        quoted = unit.quoted if not isinstance(unit, ProcessSub) else False
        value = _part_value(unit, env)
        if value is None:
            text.append(UNKNOWN)
            started = True
            continue
        if quoted:
            text.append(value)
            started = True
            continue
        for char in value:
            if char in separators:
                close()
                continue
            if char in _GLOB_CHARS and glob_at < 0:
                glob_at = len(text)
            text.append(char)
            started = True
    close()
    return fields
