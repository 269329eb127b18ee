"""Commands and operators to lists: `|` binds tighter than `&&`/`||`, those than `;`/`&`.

The tree-sitter reader flattens what it reads into tokens (a command with where its text
begins and ends, or an operator), because the grammar does not always nest a pipeline or
list where bash does (after `<<EOF`, inside an ERROR); `build` puts the nesting back.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .syntax import AndOr, Command, ListItem, Pipeline, Script


@dataclass
class Piece:
    """A command with where its text starts and ends, on the way to a pipeline."""

    command: Command
    start: int
    end: int


Token = Piece | str


def build(tokens: list[Token], text: Callable[[int, int], str]) -> Script:
    """The script the tokens spell; `text(start, end)` gives the source of a pipeline."""
    items: list[ListItem] = []
    pipelines: list[Pipeline] = []
    operators: list[str] = []
    pieces: list[Piece] = []
    negated = False
    pending: str | None = None

    def close_pipeline() -> None:
        nonlocal negated
        if pieces:
            raw = text(pieces[0].start, pieces[-1].end).strip()
            if pipelines and pending in ("&&", "||"):
                operators.append(pending)
            elif pipelines:
                operators.append("&&")
            pipelines.append(Pipeline(tuple(p.command for p in pieces), negated, raw))
        pieces.clear()
        negated = False

    def close_item(background: bool) -> None:
        nonlocal pending
        close_pipeline()
        if pipelines:
            items.append(ListItem(AndOr(tuple(pipelines), tuple(operators)), background))
        pipelines.clear()
        operators.clear()
        pending = None

    previous: Token | None = None
    for token in tokens:
        if isinstance(token, Piece):
            if isinstance(previous, Piece):
                close_item(False)  # two statements on separate lines
            pieces.append(token)
        elif token in ("|", "|&"):
            pass
        elif token in ("&&", "||"):
            close_pipeline()
            pending = token
        elif token == "!":
            negated = negated or not pieces
        else:
            close_item(token == "&")
        previous = token
    close_item(False)
    return Script(tuple(items))
