"""Words from tree-sitter-bash nodes: strings, expansions, substitutions, arithmetic.

tree-sitter marks where each part of a word begins and ends; the text between those parts is
decoded by `words.py` (quote removal), and each part becomes the `syntax.py` part it stands
for. The statement-level reader (`treesitter.py`) builds on this class: a command
substitution's body is a list of statements, so `container` is left to it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from tree_sitter import Node

from .syntax import MAX_NESTING, Arith, CommandSub, Lit, Param, Part, ProcessSub, Script, Word
from .words import Context, HiddenSubstitution, ansi_c, decode

# Nodes that make a part of a word other than plain text.
PART_NODES = frozenset(
    {
        "string",
        "translated_string",
        "raw_string",
        "ansi_c_string",
        "simple_expansion",
        "expansion",
        "command_substitution",
        "process_substitution",
        "arithmetic_expansion",
    }
)
EXPANSIONS = frozenset(
    {
        "simple_expansion",
        "expansion",
        "command_substitution",
        "process_substitution",
        "arithmetic_expansion",
    }
)
SUBSTITUTIONS = frozenset({"command_substitution", "process_substitution"})
# Words that are plain text (decoded without looking for nested parts) when they are leaves.
_PLAIN_WORDS = frozenset({"word", "number", "command_name"})


class NodeReader:
    """Reads the words of one parsed text; `problem` notes what could not be read."""

    def __init__(self, data: bytes, depth: int = 0) -> None:
        self.data = data
        self.depth = depth
        self.problem: str | None = None

    def text(self, node: Node) -> str:
        return self.slice(node.start_byte, node.end_byte)

    def slice(self, start: int, end: int) -> str:
        return self.data[start:end].decode("utf-8", "surrogateescape")

    def too_deep(self) -> bool:
        if self.depth >= MAX_NESTING:
            self.problem = self.problem or "the command nests too deeply"
            return True
        return False

    def decode(self, text: str, context: Context) -> list[Part]:
        """Plain text; a substitution tree-sitter did not read is an unknown value and a problem."""
        try:
            return decode(text, context)
        except HiddenSubstitution as hidden:
            self.problem = self.problem or f"`{hidden}` could not be read as a substitution"
            return [Param("", context is not Context.UNQUOTED, "?")]

    def container(self, children: Iterable[Node]) -> Script:
        raise NotImplementedError

    def glued_words(self, nodes: list[Node]) -> list[Word]:
        """Nodes that touch make one word (`{` + `rm,-rf,/}` is the word `{rm,-rf,/}`)."""
        words: list[Word] = []
        group: list[Node] = []
        for node in nodes:
            if group and node.start_byte != group[-1].end_byte:
                words.append(self.word_of_range(group[0].start_byte, group[-1].end_byte, group))
                group = []
            group.append(node)
        if group:
            words.append(self.word_of_range(group[0].start_byte, group[-1].end_byte, group))
        return words

    # -- words

    def word(self, node: Node) -> Word:
        return self.word_of_range(node.start_byte, node.end_byte, [node])

    def word_of_range(self, start: int, end: int, nodes: list[Node]) -> Word:
        """One word from the text [start, end) and the nodes that cover it."""
        if len(nodes) == 1 and nodes[0].type in _PLAIN_WORDS:
            node = nodes[0]
            if node.type == "command_name" and node.child_count == 1:
                node = node.children[0]  # the word inside `command_name`
            if node.type in ("word", "number") and node.child_count == 0:
                text = self.slice(start, end)
                return Word(tuple(self.decode(text, Context.UNQUOTED)), text)
        nested = [n for node in nodes for n in outermost(node, PART_NODES, start, end)]
        parts = self.parts_in(start, end, nested, Context.UNQUOTED)
        return Word(tuple(_merge_literals(parts)), self.slice(start, end))

    def parts_in(self, start: int, end: int, nested: list[Node], context: Context) -> list[Part]:
        """Text between the nested nodes is decoded in `context`; each node makes its parts."""
        parts: list[Part] = []
        position = start
        quoted = context is not Context.UNQUOTED
        for node in nested:
            node_start = _real_start(self.data, node)
            if node_start < position:
                continue
            gap = self.slice(position, node_start)
            if gap.endswith("$") and node.type == "string":
                gap = gap[:-1]  # `$"..."`: a translated string is the string
            parts.extend(self.decode(gap, context))
            parts.extend(self.node_parts(node, node_start, quoted))
            position = node.end_byte
        parts.extend(self.decode(self.slice(position, end), context))
        return parts

    def node_parts(self, node: Node, start: int, quoted: bool) -> list[Part]:
        kind = node.type
        text = self.slice(start, node.end_byte)
        if kind in ("string", "translated_string"):
            open_at = start + (2 if text.startswith('$"') else 1)
            close = node.children[-1] if node.child_count else None
            close_at = (
                close.start_byte
                if close is not None
                and close.type == '"'
                and close.end_byte > open_at
                and not close.is_missing
                else node.end_byte
            )
            nested = list(outermost_children(node, EXPANSIONS, open_at, close_at))
            return self.parts_in(open_at, close_at, nested, Context.DOUBLE_QUOTED) or [
                Lit("", True)
            ]
        if kind == "raw_string":
            inner = text[1:-1] if len(text) > 1 and text.endswith("'") else text[1:]
            return [Lit(inner, True)]
        if kind == "ansi_c_string":
            inner = text[2:-1] if len(text) > 2 and text.endswith("'") else text[2:]
            return [Lit(ansi_c(inner), True)]
        if kind == "simple_expansion":
            return [Param(text[1:], quoted)]
        if kind == "expansion":
            return [self.expansion(node, start, quoted)]
        if kind == "command_substitution":
            return [CommandSub(self.container(node.children), quoted)]
        if kind == "process_substitution":
            return [ProcessSub(self.container(node.children), text[:1])]
        if kind == "arithmetic_expansion":
            return [self.arith(node, quoted=quoted)]
        return self.decode(text, Context.DOUBLE_QUOTED if quoted else Context.UNQUOTED)

    def expansion(self, node: Node, start: int, quoted: bool) -> Param:
        """`${...}`: the name, then the operator text and the word inside it."""
        if self.too_deep():
            return Param("", quoted, "?")
        self.depth += 1
        try:
            close = node.children[-1] if node.child_count else None
            close_at = (
                close.start_byte
                if close is not None and close.type == "}" and not close.is_missing
                else node.end_byte
            )
            name_node = next(
                (
                    c
                    for c in node.named_children
                    if c.type in ("variable_name", "special_variable_name", "subscript")
                ),
                None,
            )
            open_at = start + 2
            if name_node is None:
                return Param("", quoted, self.slice(open_at, close_at))
            target = (
                name_node.child_by_field_name("name")
                if name_node.type == "subscript"
                else name_node
            )
            target = target if target is not None else name_node
            prefix = self.slice(open_at, name_node.start_byte).strip()
            op = prefix + self.slice(target.end_byte, close_at)
            rest = [n for n in outermost_children(node, PART_NODES, target.end_byte, close_at)]
            inner_parts = self.parts_in(
                target.end_byte,
                close_at,
                rest,
                Context.DOUBLE_QUOTED if quoted else Context.UNQUOTED,
            )
            inner = (Word(tuple(inner_parts), op),) if rest else ()
            return Param(self.text(target), quoted, op, inner)
        finally:
            self.depth -= 1

    def arith(self, node: Node, *, quoted: bool) -> Arith:
        """The expression between `((`/`$((`/`$[` and its closing brackets."""
        opener = node.children[0] if node.child_count else None
        closer = next((c for c in reversed(node.children) if c.type in ("))", "]")), None)
        start = opener.end_byte if opener is not None else node.start_byte
        if node.type == "c_style_for_statement":
            opener = next((c for c in node.children if c.type == "(("), None)
            start = opener.end_byte if opener is not None else node.start_byte
        end = (
            closer.start_byte
            if closer is not None and closer.start_byte >= start
            else node.end_byte
        )
        subs = tuple(
            self.container(sub.children) for sub in outermost(node, SUBSTITUTIONS, start, end)
        )
        return Arith(self.slice(start, end), quoted, subs)


def _real_start(data: bytes, node: Node) -> int:
    """tree-sitter-bash sometimes starts an expansion at the blank before its `$`."""
    start = node.start_byte
    while start < node.end_byte and data[start : start + 1] in (b" ", b"\t", b"\n"):
        start += 1
    return start


def outermost(node: Node, kinds: frozenset[str], start: int, end: int) -> Iterator[Node]:
    """The nodes of `kinds` within [start, end) under `node` (itself included), not nested."""
    stack = [node]
    while stack:
        current = stack.pop()
        if current.end_byte <= start or current.start_byte >= end:
            continue
        if current.type in kinds and current.start_byte >= start:
            yield current
            continue
        stack.extend(reversed(current.children))


def outermost_children(node: Node, kinds: frozenset[str], start: int, end: int) -> Iterator[Node]:
    for child in node.children:
        yield from outermost(child, kinds, start, end)


def _merge_literals(parts: list[Part]) -> list[Part]:
    merged: list[Part] = []
    for part in parts:
        previous = merged[-1] if merged else None
        if (
            isinstance(part, Lit)
            and isinstance(previous, Lit)
            and previous.quoted == part.quoted
            and part.text
            and previous.text
        ):
            merged[-1] = Lit(previous.text + part.text, part.quoted)
        else:
            merged.append(part)
    return merged
