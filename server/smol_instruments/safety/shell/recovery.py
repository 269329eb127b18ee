"""Reading what tree-sitter could not place: the ERROR nodes of text that is not complete shell.

The policy judges such text anyway (at least approval, and a denial when what is readable
is denied, as in `rm -rf / "oops`), so this mixin rebuilds commands from an ERROR's pieces:
statements inside it stay statements, brackets and keywords separate commands, a
`command_name` starts one, and pieces that touch make one word. It also reads `{rm,-rf,/}`
as bash does, a brace word, where tree-sitter sees the `{` of a group.
"""

from __future__ import annotations

from tree_sitter import Node

from .lists import Piece, Token
from .nodes import NodeReader
from .syntax import SimpleCommand

_EXPRESSIONS = frozenset(
    {
        "binary_expression",
        "unary_expression",
        "ternary_expression",
        "postfix_expression",
        "parenthesized_expression",
    }
)
# Inside an ERROR these end a command: brackets of substitutions and compound commands.
_ERROR_SEPARATORS = frozenset(
    [
        "$(",
        "$((",
        "((",
        "(",
        ")",
        "))",
        "`",
        "<(",
        ">(",
        "${",
        "[[",
        "]]",
        "if",
        "then",
        "elif",
        "else",
        "fi",
        "do",
        "done",
        "case",
        "in",
        "esac",
        "while",
        "until",
        "for",
        "select",
        "function",
    ]
)
REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
LIST_OPERATORS = frozenset({";", "&", "|", "|&", "&&", "||", ";;", ";&", ";;&", "\n"})
STATEMENTS = frozenset(
    {
        "command",
        "redirected_statement",
        "list",
        "pipeline",
        "negated_command",
        "subshell",
        "compound_statement",
        "if_statement",
        "while_statement",
        "for_statement",
        "c_style_for_statement",
        "case_statement",
        "function_definition",
        "declaration_command",
        "unset_command",
        "test_command",
        "variable_assignment",
        "variable_assignments",
    }
)


class Recovery(NodeReader):
    """ERROR nodes to tokens; the statement reader supplies `flatten` and `simple`."""

    def flatten(self, node: Node) -> list[Token]:
        raise NotImplementedError

    def simple(self, node: Node, trailers: list[Token], arguments: list[Node]) -> SimpleCommand:
        raise NotImplementedError

    def error_tokens(self, node: Node) -> list[Token]:
        """Inside an ERROR: statements stay statements, loose words make commands.

        tree-sitter leaves the pieces of text it could not place as a flat list. Brackets
        and keywords separate commands, a `command_name` starts one, and pieces that touch
        make one word (`{` and `rm,-rf,/}` are the brace word `{rm,-rf,/}`).
        """
        tokens: list[Token] = []
        run: list[Node] = []

        def flush() -> None:
            if run:
                words = self.glued_words(run)
                start, end = run[0].start_byte, run[-1].end_byte
                command = SimpleCommand((), tuple(words), (), self.slice(start, end))
                tokens.append(Piece(command, start, end))
                run.clear()

        def visit(children: list[Node]) -> None:
            for child in children:
                kind = child.type
                touching_brace = (
                    bool(run) and run[-1].type == "{" and run[-1].end_byte == child.start_byte
                )
                if kind in LIST_OPERATORS:
                    flush()
                    tokens.append(kind)
                elif kind == "command" and touching_brace:
                    tokens.extend(self.flatten_with_prefix(child, run))
                    run.clear()
                elif kind in STATEMENTS:
                    flush()
                    tokens.extend(self.flatten(child))
                elif kind == "ERROR" and child.child_count == 0:
                    run.append(child)  # text tree-sitter could not read at all
                elif kind in ("ERROR", "case_item", "do_group", "elif_clause", "else_clause"):
                    flush()
                    tokens.extend(self.error_tokens(child))
                elif kind in _EXPRESSIONS:
                    visit(child.children)  # arithmetic tree-sitter guessed: its leaves are words
                elif (
                    kind in REDIRECTS
                    or kind in _ERROR_SEPARATORS
                    or kind == "comment"
                    or child.is_missing
                ):
                    flush()
                elif kind == "command_name" and not touching_brace:
                    flush()
                    run.append(child)
                else:
                    run.append(child)

        visit(node.children)
        flush()
        return tokens

    def flatten_with_prefix(self, node: Node, prefix: list[Node]) -> list[Token]:
        """A command whose name tree-sitter split from the `{` of a brace word."""
        command = self.simple(node, [], [])
        name = node.child_by_field_name("name")
        head = self.glued_words([*prefix, name] if name is not None else prefix)
        rest = command.words[1:] if name is not None else command.words
        command.words = (*head, *rest)
        start = prefix[0].start_byte
        command.raw = self.slice(start, node.end_byte)
        return [Piece(command, start, node.end_byte)]


def brace_word(node: Node) -> bool:
    """A `{` group whose `{` touches its first command: bash reads that as a brace word."""
    if node.child_count < 2:
        return False
    brace, first = node.children[0], node.children[1]
    return brace.type == "{" and first.type == "command" and brace.end_byte == first.start_byte
