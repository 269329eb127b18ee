"""Shell text to the syntax tree of `syntax.py`, read with tree-sitter-bash.

tree-sitter-bash (MIT; the grammar Codex CLI reads commands with) finds the structure: lists,
pipelines, compound commands, substitutions, redirections and here-documents. This module
turns its concrete syntax tree into our dataclasses; `words.py` decodes the text tree-sitter
leaves as written (quote removal). Text that is not complete shell is repaired by tree-sitter
(a missing quote is closed, a stray `)` is set aside): `parse_repaired` returns that repaired
tree and a description of the first problem, `parse` raises ShellSyntaxError instead.

Where the grammar's tree is known to be shaped oddly, this module reads around it: the rest
of a pipeline or list written after `<<EOF` hangs under the here-document's node, and a
here-document body is taken from the text between its start line and its delimiter.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

from .lists import Piece, Token, build
from .nodes import EXPANSIONS, outermost
from .recovery import LIST_OPERATORS, REDIRECTS, Recovery, brace_word
from .syntax import (
    ArithCommand,
    Assignment,
    Case,
    CaseArm,
    Command,
    CondCommand,
    For,
    FunctionDef,
    Group,
    Heredoc,
    If,
    Lit,
    Loop,
    Redirect,
    Script,
    ShellSyntaxError,
    SimpleCommand,
    Word,
)
from .words import Context

_LANGUAGE = Language(tree_sitter_bash.language())
_local = threading.local()

# Test operators whose operands bash evaluates as arithmetic, and those that name a variable.
_ARITHMETIC_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
_NAME_TESTS = frozenset({"-v", "-R"})
_TEST_WORD_TOKENS = frozenset({"!", "=", "==", "!=", "=~", "-a", "-o"})


def _parser() -> Parser:
    parser: Parser | None = getattr(_local, "parser", None)
    if parser is None:
        parser = _local.parser = Parser(_LANGUAGE)
    return parser


def parse(source: str) -> Script:
    """The syntax tree of `source`; ShellSyntaxError when it is not complete shell."""
    script, problem = parse_repaired(source)
    if problem is not None:
        raise ShellSyntaxError(problem)
    return script


def parse_repaired(source: str, *, depth: int = 0) -> tuple[Script, str | None]:
    """The tree of `source` as tree-sitter repaired it, and its first problem (None if none).

    `depth` is how deeply the text is already nested (the code of `sh -c` inside `eval` ...).
    """
    data = source.encode("utf-8", "surrogatepass")
    tree = _parser().parse(data.translate(_ASCII_ONLY))
    converter = _Converter(data, depth)
    script = converter.container(tree.root_node.children)
    return script, _first_problem(tree.root_node, data) or converter.problem


# tree-sitter-bash 0.25 reads out of bounds (and may crash the process) on some code points
# above U+DFFFF after `{`. Every byte of a non-ASCII character (and NUL) is a word character
# to bash, so the parser is given `x` for each: the same structure at the same offsets, while
# the text is read from the original bytes.
_ASCII_ONLY = bytes(b if 0 < b < 0x80 else ord("x") for b in range(256))


def _first_problem(root: Node, data: bytes) -> str | None:
    """Where tree-sitter had to repair the text: its first ERROR or missing node."""
    if not root.has_error:
        return None
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_missing:
            if node.type == "heredoc_end" and node.end_byte >= len(data.rstrip()):
                continue  # bash runs a here-document that is closed by the end of input
            return f"`{node.type}` is missing at character {_char_at(data, node.start_byte)}"
        if node.type == "ERROR":
            shown = data[node.start_byte : node.end_byte].decode("utf-8", "replace").strip()
            shown = " ".join(shown.split())[:20] or "end of input"
            return f"unexpected `{shown}` at character {_char_at(data, node.start_byte)}"
        stack.extend(reversed([c for c in node.children if c.has_error or c.is_missing]))
    return None


def _char_at(data: bytes, byte: int) -> int:
    return len(data[:byte].decode("utf-8", "ignore"))


class _Converter(Recovery):
    """Walks one tree's statements; words are read by NodeReader."""

    # -- lists of statements

    def container(self, children: Iterable[Node]) -> Script:
        """The statements among `children` (keywords and brackets are skipped)."""
        if self.too_deep():
            return Script(())
        self.depth += 1
        try:
            tokens: list[Token] = []
            for child in children:
                if child.type in LIST_OPERATORS:
                    tokens.append(child.type)
                elif child.is_named and child.type != "comment":
                    tokens.extend(self.flatten(child))
            return build(tokens, self.slice)
        finally:
            self.depth -= 1

    def flatten(self, node: Node) -> list[Token]:
        """A statement as commands and the operators between them."""
        kind = node.type
        if kind in ("list", "pipeline"):
            tokens: list[Token] = []
            for child in node.children:
                tokens.extend(self.flatten(child) if child.is_named else [child.type])
            return tokens
        if kind == "negated_command":
            return ["!", *(t for c in node.named_children for t in self.flatten(c))]
        if kind == "redirected_statement":
            return self.redirected(node)
        if kind == "ERROR":
            return self.error_tokens(node)
        if kind == "compound_statement" and brace_word(node):
            # `{rm,-rf,/}`: a `{` that touches the next word is brace expansion, not a group.
            brace, first, *rest = node.children
            tokens = self.flatten_with_prefix(first, [brace])
            for child in rest:
                if child.type in LIST_OPERATORS:
                    tokens.append(child.type)
                elif child.is_named:
                    tokens.extend(self.flatten(child))
            return tokens
        if kind == "comment":
            return []
        if kind == "command":
            return self.simple_with_trailers(node, [], [])
        command = self.command(node)
        return [Piece(command, node.start_byte, node.end_byte)]

    def redirected(self, node: Node) -> list[Token]:
        body = node.child_by_field_name("body")
        redirects: list[Redirect] = []
        trailers: list[Token] = []
        arguments: list[Node] = []
        for child in node.children:
            if child.type in REDIRECTS:
                redirects.extend(self.redirect(child, trailers, arguments))
        if body is None:
            end = self.end_without_heredocs(node)
            command: Command = SimpleCommand(
                (), (), tuple(redirects), self.slice(node.start_byte, end)
            )
            return [Piece(command, node.start_byte, end), *trailers]
        if body.type == "command":
            return self.simple_with_trailers(
                body, redirects, trailers, outer=node, arguments=arguments
            )
        inner = self.flatten(body)
        pieces = [t for t in inner if isinstance(t, Piece)]
        target = pieces[0].command if len(pieces) == 1 else None
        if target is not None and not isinstance(target, FunctionDef):
            target.redirects = (*target.redirects, *redirects)
        return [*inner, *trailers]

    def simple_with_trailers(
        self,
        node: Node,
        redirects: list[Redirect],
        trailers: list[Token],
        outer: Node | None = None,
        arguments: list[Node] | None = None,
    ) -> list[Token]:
        own_trailers: list[Token] = []
        command = self.simple(node, own_trailers, arguments or [])
        command.redirects = (*command.redirects, *redirects)
        end = self.end_without_heredocs(outer if outer is not None else node)
        command.raw = self.slice(node.start_byte, end).strip()
        return [Piece(command, node.start_byte, end), *own_trailers, *trailers]

    def end_without_heredocs(self, node: Node) -> int:
        """Where a command's text ends, not counting here-document bodies."""
        end = node.start_byte
        for child in node.children:
            if child.type == "heredoc_redirect":
                start = child.child(1) if child.child_count > 1 else None
                end = max(end, start.end_byte if start is not None else child.start_byte)
            elif child.type == "command":
                end = max(end, self.end_without_heredocs(child))
            else:
                end = max(end, child.end_byte)
        return end

    # -- commands

    def command(self, node: Node) -> Command:
        kind = node.type
        if kind == "subshell":
            return Group(self.container(node.children), True)
        if kind == "compound_statement":
            first = node.child(0)
            if first is not None and first.type == "((":
                return ArithCommand(self.arith(node, quoted=False))
            return Group(self.container(node.children), False)
        if kind == "if_statement":
            return self.if_statement(node)
        if kind == "while_statement":
            condition = [c for i, c in enumerate(node.children) if _field(node, i) == "condition"]
            return Loop(self.container(condition), self.body_of(node))
        if kind == "for_statement":
            return self.for_statement(node)
        if kind == "c_style_for_statement":
            return For("", None, self.body_of(node), self.arith(node, quoted=False))
        if kind == "case_statement":
            return self.case_statement(node)
        if kind == "function_definition":
            return self.function(node)
        if kind == "test_command":
            return self.test_command(node)
        if kind in ("declaration_command", "unset_command"):
            words = [self.word(c) for c in node.children if not _is_punctuation(c)]
            return SimpleCommand((), tuple(words), (), self.text(node))
        if kind in ("variable_assignment", "variable_assignments"):
            assignments = [node] if kind == "variable_assignment" else node.named_children
            return SimpleCommand(
                tuple(self.assignment(a) for a in assignments if a.type == "variable_assignment"),
                (),
                (),
                self.text(node),
            )
        # Anything else tree-sitter calls a statement is read as words.
        words = self.glued_words([c for c in node.children if not _is_punctuation(c)] or [node])
        return SimpleCommand((), tuple(words), (), self.text(node))

    def simple(self, node: Node, trailers: list[Token], arguments: list[Node]) -> SimpleCommand:
        """A command's assignments, words and redirections (`arguments` follow `<<EOF`)."""
        assignments: list[Assignment] = []
        redirects: list[Redirect] = []
        word_nodes: list[Node] = []
        for index, child in enumerate(node.children):
            kind = child.type
            if kind == "variable_assignment" and not word_nodes:
                assignments.append(self.assignment(child))
            elif kind in REDIRECTS:
                redirects.extend(self.redirect(child, trailers, arguments))
            elif (child.is_named and kind not in ("comment", "ERROR")) or _field(node, index) in (
                "name",
                "argument",
            ):
                word_nodes.append(child)
        words = self.glued_words(word_nodes) + self.glued_words(arguments)
        return SimpleCommand(tuple(assignments), tuple(words), tuple(redirects), self.text(node))

    def assignment(self, node: Node) -> Assignment:
        name_node = node.child_by_field_name("name")
        value_node = node.child_by_field_name("value")
        name, index = "", None
        if name_node is not None and name_node.type == "subscript":
            inner = name_node.child_by_field_name("name")
            name = self.text(inner) if inner is not None else ""
            index_node = name_node.child_by_field_name("index")
            if index_node is not None:
                index = self.word(index_node)
        elif name_node is not None:
            name = self.text(name_node)
        raw = self.text(node)
        if value_node is not None and value_node.type == "array":
            elements = tuple(self.glued_words([c for c in value_node.named_children]))
            return Assignment(name, None, elements, raw, index)
        if value_node is None:
            return Assignment(name, Word((), ""), None, raw, index)
        start = value_node.start_byte
        values = [c for c in node.children if c.start_byte >= start and not _is_punctuation(c)]
        return Assignment(name, self.word_of_range(start, node.end_byte, values), None, raw, index)

    def if_statement(self, node: Node) -> If:
        branches: list[tuple[Script, Script]] = []
        else_body: Script | None = None
        for clause in [node, *node.named_children]:
            if clause.type in ("if_statement", "elif_clause"):
                condition, body = _split_at(
                    clause.children, "then", stop=("elif_clause", "else_clause", "fi")
                )
                branches.append((self.container(condition), self.container(body)))
            elif clause.type == "else_clause":
                else_body = self.container(clause.children)
        return If(tuple(branches), else_body)

    def body_of(self, node: Node) -> Script:
        body = node.child_by_field_name("body")
        return self.container(body.children) if body is not None else Script(())

    def for_statement(self, node: Node) -> For:
        variable = node.child_by_field_name("variable")
        has_in = any(c.type == "in" for c in node.children)
        values = [c for i, c in enumerate(node.children) if _field(node, i) == "value"]
        words = tuple(self.glued_words(values)) if has_in else None
        name = self.text(variable) if variable is not None else ""
        return For(name, words, self.body_of(node))

    def case_statement(self, node: Node) -> Case:
        value = node.child_by_field_name("value")
        subject = self.word(value) if value is not None else Word((), "")
        arms: list[CaseArm] = []
        for item in node.named_children:
            if item.type != "case_item":
                continue
            patterns: list[Node] = []
            body: list[Node] = []
            seen_paren = False
            for index, child in enumerate(item.children):
                if _field(item, index) == "value":
                    patterns.append(child)
                elif child.type == ")" and not seen_paren:
                    seen_paren = True
                elif seen_paren:
                    body.append(child)
            arms.append(CaseArm(tuple(self.word(p) for p in patterns), self.container(body)))
        return Case(subject, tuple(arms))

    def function(self, node: Node) -> FunctionDef:
        name = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        command = self.command(body) if body is not None else Group(Script(()), False)
        return FunctionDef(self.text(name) if name is not None else "", command)

    def test_command(self, node: Node) -> Command:
        first = node.child(0)
        words: list[Word] = []
        evaluated: list[Word] = []
        for child in node.children[1:-1] if node.child_count > 1 else []:
            self.test_words(child, words, evaluated)
        if first is not None and first.type == "[[":
            return CondCommand(tuple(words), (), tuple(evaluated))
        bracket = Word((Lit("[", False),), "[")
        closing = Word((Lit("]", False),), "]")
        return SimpleCommand((), (bracket, *words, closing), (), self.text(node))

    def test_words(self, node: Node, words: list[Word], evaluated: list[Word]) -> None:
        """The words of a test expression, in order; operands bash evaluates are noted."""
        kind = node.type
        if kind in ("binary_expression", "unary_expression", "parenthesized_expression"):
            operator = node.child_by_field_name("operator")
            operator_text = self.text(operator) if operator is not None else ""
            for child in node.children:
                before = len(words)
                self.test_words(child, words, evaluated)
                if child is operator or child == operator:
                    continue
                if operator_text in _ARITHMETIC_TESTS or operator_text in _NAME_TESTS:
                    evaluated.extend(words[before:])
            return
        if kind in ("test_operator", *_TEST_WORD_TOKENS):
            text = self.text(node)
            words.append(Word((Lit(text, False),), text))
        elif node.is_named and kind not in ("comment", "ERROR"):
            words.append(self.word(node))

    # -- redirections and here-documents

    def redirect(self, node: Node, trailers: list[Token], arguments: list[Node]) -> list[Redirect]:
        """One redirection; what tree-sitter hangs under a here-document goes to the lists."""
        if node.type == "heredoc_redirect":
            return self.heredoc(node, trailers, arguments)
        fd: int | None = None
        op = ""
        targets: list[Node] = []
        for index, child in enumerate(node.children):
            if child.type == "file_descriptor":
                fd = int(self.text(child)) if self.text(child).isdigit() else None
            elif not child.is_named and not op:
                op = child.type
            elif _field(node, index) == "destination" or (child.is_named and child.type != "ERROR"):
                targets.append(child)
        if op in ("<&-", ">&-"):
            return [Redirect(op[:2], fd, Word((Lit("-", False),), "-"))]
        target = (
            self.word_of_range(targets[0].start_byte, targets[-1].end_byte, targets)
            if targets
            else None
        )
        return [Redirect(op, fd, target)]

    def heredoc(self, node: Node, trailers: list[Token], arguments: list[Node]) -> list[Redirect]:
        op = node.child(0).type if node.child_count else "<<"
        start = next((c for c in node.children if c.type == "heredoc_start"), None)
        end = next((c for c in node.children if c.type == "heredoc_end"), None)
        if start is None:
            return []
        raw_delimiter = self.text(start)
        quoted = any(q in raw_delimiter for q in "'\"\\")
        delimiter = raw_delimiter.replace("\\", "").replace("'", "").replace('"', "")
        newline = self.data.find(b"\n", start.end_byte)
        body_start = len(self.data) if newline < 0 else newline + 1
        body_end = end.start_byte if end is not None and not end.is_missing else len(self.data)
        body_end = max(body_start, body_end)
        extra: list[Redirect] = []
        for index, child in enumerate(node.children):
            if child.start_byte >= body_start or child.type.startswith("heredoc_"):
                continue
            if child.type in REDIRECTS:
                extra.extend(self.redirect(child, trailers, arguments))
            elif _field(node, index) == "argument":
                arguments.append(child)
            elif child.is_named:
                trailers.extend(self.flatten(child))
            elif child.type in LIST_OPERATORS:
                trailers.append(child.type)
        body = self.slice(body_start, body_end)
        if op == "<<-":
            body = "\n".join(line.lstrip("\t") for line in body.split("\n"))
        doc = Heredoc(delimiter, quoted, op == "<<-", body)
        if not quoted and any(c in body for c in "$`\\"):
            nested = list(outermost(node, EXPANSIONS, body_start, body_end))
            parts = self.parts_in(body_start, body_end, nested, Context.HEREDOC)
            doc.word = Word(tuple(parts), body)
        return [Redirect(op, None, None, doc), *extra]


def _field(node: Node, index: int) -> str | None:
    return node.field_name_for_child(index)


def _is_punctuation(node: Node) -> bool:
    return not node.is_named and node.type in ("(", ")", "{", "}", "=", "+=", ";", "&")


def _split_at(
    children: list[Node], keyword: str, stop: tuple[str, ...]
) -> tuple[list[Node], list[Node]]:
    """`if COND; then BODY`: the children before `keyword`, then those up to a `stop` node."""
    before: list[Node] = []
    after: list[Node] = []
    seen = False
    for child in children[1:]:
        if child.type == keyword:
            seen = True
        elif child.type in stop:
            break
        elif seen:
            after.append(child)
        else:
            before.append(child)
    return before, after
