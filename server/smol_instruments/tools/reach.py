"""What a change to a function reaches: the functions of the repository's code that use it, and
those that reach them, hop by hop.

A question about what uses a name, or what changing it would affect, is answered from this and
held to it (agent/evidence.py `reaches`, agent/answers.py `the_reach_is_named`); the context
shows it with the uses (agent/context.py). A use is a function whose code refers to the name
(its syntax tree, not its text: a docstring naming it is no use). By name, a common method
name makes a hop too wide to hold an answer to (fresh dev sv-to-dict-impact: `replace` is any
`str.replace`, and the hop that held next_version was dropped); such a hop is narrowed to the
occurrences rope's static inference is sure of (`self.replace(...)` is `Version.replace`,
`text.replace(...)` is not), in the Python files git lists that the jail lets be read. Rope
alone misses uses it cannot infer (a parameter rebound to an instance), so it only narrows.
"""

from __future__ import annotations

import ast
import logging
import re

from ..base import pyast
from ..base.errors import ToolError
from ..base.pyast import parsed
from ..base.testruns import is_test_path
from ..patches.pysource import DEFINITIONS, enclosing_node
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
    to it affects: dev jp-escape-impact, escape -> from_parts -> join -> __truediv__), apart;
    never a docstring or a comment naming it. What uses a function is followed only when the
    whole stays at most `REACH_NAMES` (too many for an answer to be held to): the deprecated
    `parse` reaching `to_dict` is used by sixteen functions, and `replace` by next_version."""
    refs: dict[str, dict[str, set[str | None]]] = {}  # path -> each function's references
    trees: dict[str, tuple[str, ast.Module]] = {}  # read once, when a hop is first narrowed
    listed = set(files)

    def by_name(of: list[str]) -> list[str]:
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

    def narrowed(of: list[str], wide: list[str]) -> list[str]:
        try:  # too wide by name (`replace` is any str.replace): the uses rope is sure of
            if not trees:
                trees.update(_readable_trees(ctx, files))
            return [user for user in _rope_users(ctx, trees, of) if user != name]
        except Exception:
            log.warning("rope found no uses of %s", ", ".join(of), exc_info=True)
            return wide

    try:  # a help for holding an answer to the code, never a reason to fail the run
        direct = by_name([name])
        if len(direct) > REACH_NAMES:
            direct = narrowed([name], direct)
        if len(direct) > REACH_NAMES:
            return [], []
        more: list[str] = []
        hop = direct if further else []
        while hop:  # each function of a hop on its own: one too wide is not followed
            new: list[str] = []
            for user in hop:
                room = REACH_NAMES - len(direct) - len(more) - len(new)
                seen = {*direct, *more, *new}
                found = [u for u in by_name([user]) if u not in seen]
                if len(found) > room:
                    found = [u for u in narrowed([user], found) if u not in seen]
                new += found if len(found) <= room else []
            more, hop = more + new, new
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


def _readable_trees(ctx: ToolContext, files: list[str]) -> dict[str, tuple[str, ast.Module]]:
    """The text and syntax tree of each Python file of `files` the jail lets be read."""
    trees = {}
    for path in (p for p in files if p.endswith(".py")):
        try:
            text = read_repo_text(ctx, path)[1]
            trees[path] = (text, pyast.parse(text))
        except (ToolError, SyntaxError, ValueError):  # a link out of the jail, not Python
            continue
    return trees


def _rope_users(
    ctx: ToolContext, trees: dict[str, tuple[str, ast.Module]], of: list[str]
) -> list[str]:
    """The functions (tests aside) holding a sure occurrence, by rope, of a definition named in
    `of` outside the tests, `of` itself aside; searched only in the files of `trees`."""
    from rope.base.project import Project
    from rope.contrib.findit import find_occurrences

    code = {path: pair for path, pair in trees.items() if not is_test_path(path)}
    found: dict[str, None] = {}
    project = Project(str(ctx.root), ropefolder=None)
    try:
        resources = [project.get_resource(path) for path in trees]
        for path, (text, tree) in code.items():
            lines = text.splitlines(keepends=True)
            for node in (n for n in ast.walk(tree) if isinstance(n, DEFINITIONS)):
                line = lines[node.lineno - 1] if node.name in of else ""
                named = re.search(rf"\b(?:def|class)\s+({re.escape(node.name)})\b", line)
                if named is None:
                    continue
                offset = sum(map(len, lines[: node.lineno - 1])) + named.start(1)
                where = project.get_resource(path)
                for hit in find_occurrences(project, where, offset, resources=resources):
                    held = code.get(hit.resource.path)
                    user = enclosing_node(held[1] if held else None, hit.lineno)
                    if isinstance(user, ast.FunctionDef | ast.AsyncFunctionDef):
                        found.setdefault(user.name, None)
    finally:
        project.close()
    return [user for user in found if user not in of]
