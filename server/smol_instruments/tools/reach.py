"""What a change to a function reaches: the functions of the repository's code that use it, and
those that reach them, read from the syntax trees of the files ripgrep finds the names in.

A question about what uses a name, or what changing it would affect, is answered from this and
held to it (agent/evidence.py `reaches`, agent/answers.py `the_reach_is_named`); the context
shows it with the uses (agent/context.py). Written here rather than through rope (a
dependency, for renames): its reference search resolves more (an attribute through its class)
but finds one name's occurrences at a time, across every module, where this reads only the
files that mention the names; a use by name, tests aside, is what an answer is held to.
"""

from __future__ import annotations

import ast
import logging
import re

from ..base.errors import ToolError
from ..base.pyast import parsed
from ..base.testruns import is_test_path
from .base import ToolContext
from .files import read_repo_text
from .search import RgSearchTool

log = logging.getLogger(__name__)

#: How many functions a name's reach lists: past that, the answer need not copy them all.
REACH_NAMES = 8


def reach_hops(
    ctx: ToolContext, name: str, files: list[str], *, further: bool
) -> tuple[list[str], list[str]]:
    """The functions of the repository's code (tests aside) whose code refers to `name`, and
    when `further`, those reaching them, hop by hop until no new one is found (what a change
    to it affects: dev jp-escape-impact, escape -> from_parts -> join -> __truediv__), apart,
    from the syntax trees of the files ripgrep finds the names in, not from the text (a
    docstring saying "underscore" is no use of it). Each hop is kept only when the whole has at
    most `REACH_NAMES` (too many for an answer to be held to)."""
    refs: dict[str, dict[str, set[str | None]]] = {}  # path -> each function's references
    listed = set(files)

    def users(of: list[str]) -> list[str]:
        pattern = r"\b(?:" + "|".join(map(re.escape, of)) + r")\b"
        found = RgSearchTool(ctx).forward(pattern=pattern, glob="*.py", max_results=200)
        named: dict[str, None] = {}
        for path in dict.fromkeys(hit["path"] for hit in found.get("matches", [])):
            if path not in listed or is_test_path(path):
                continue
            if path not in refs:
                try:
                    refs[path] = _references(parsed(read_repo_text(ctx, path)[1]))
                except ToolError:  # unreadable (a link out of the jail): not its code
                    refs[path] = {}
            named.update(dict.fromkeys(f for f, used in refs[path].items() if used & set(of)))
        return [user for user in named if user not in of and user != name]

    try:  # a help for holding an answer to the code, never a reason to fail the run
        direct = users([name])
        if len(direct) > REACH_NAMES:
            return [], []
        more: list[str] = []
        hop = direct if further else []
        while hop:
            hop = [user for user in users(hop) if user not in direct and user not in more]
            if len(direct) + len(more) + len(hop) > REACH_NAMES:
                break
            more += hop
    except Exception:
        log.exception("finding what uses %s failed", name)
        return [], []
    return direct, more


def _references(tree: ast.Module | None) -> dict[str, set[str | None]]:
    """Each function of `tree`, by name, with the names its code refers to (`x`, `obj.x`)."""
    refs: dict[str, set[str | None]] = {}
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            used = refs.setdefault(node.name, set())
            used.update(getattr(n, "id", None) or getattr(n, "attr", None) for n in ast.walk(node))
    return refs
