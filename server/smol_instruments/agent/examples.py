"""The examples a project's own docstrings give, for a document that shows how to use it.

A change that adds a section to a document (a README's Usage) is shown, beside the document,
the first doctest example of each public function and method of the project's code, as its
docstring writes it: the project's own calls and results to copy, not ones invented. Shown, not
run (a bug the examples show is not this change's to find).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from pathlib import PurePosixPath

from ..base.errors import ToolError
from ..base.pyast import parsed
from ..base.testruns import is_test_path
from ..patches.pysource import DEFINITIONS, doctests
from ..tools.base import ToolContext
from .evidence import Evidence

#: The most functions whose examples are shown, and the most lines of each example.
USAGE_FUNCTIONS, USAGE_LINES = 6, 6
#: Files of a project that are not what it offers to use.
_NOT_THE_PROJECT = ("setup.py", "conftest.py", "noxfile.py", "manage.py")

Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def usage_examples(ctx: ToolContext, files: Sequence[str]) -> Evidence | None:
    """The first docstring example of each public function, class and method in the
    repository's code (up to `USAGE_FUNCTIONS`), as written; None where there is none. With
    no example shown, the 1.5B model filled a new Usage section of a README with the README's
    own lines and its tool's output (dev infl-readme-usage)."""
    found: list[str] = []
    for path in files:
        if len(found) >= USAGE_FUNCTIONS:
            break
        if not path.endswith(".py") or is_test_path(path):
            continue
        if PurePosixPath(path).name in _NOT_THE_PROJECT or path.startswith(("docs/", "doc/")):
            continue
        try:
            tree = parsed(ctx.file_text(path))
        except (ToolError, ValueError):  # refused by the guard; a NUL byte in the source
            continue
        for node in _public(tree.body if tree is not None else []):
            if (example := _first_example(node)) is not None:
                found.append(example)
    if not found:
        return None
    title = "Examples the docstrings of this project's code give, as they write them"
    return Evidence(title, "\n".join(found[:USAGE_FUNCTIONS]), kind="examples")


def _public(body: list[ast.stmt]) -> list[Definition]:
    """The public functions and classes of `body`, each class followed by its public methods."""
    nodes: list[Definition] = []
    for node in body:
        if isinstance(node, DEFINITIONS) and not node.name.startswith("_"):
            nodes.append(node)
            if isinstance(node, ast.ClassDef):
                nodes += _public(node.body)
    return nodes


def _first_example(node: Definition) -> str | None:
    """The first `>>>` example of `node`'s docstring that shows a result, with the lines
    before it that set it up (`obj = {...}`), or None."""
    lines: list[str] = []
    for example in doctests(node):
        source = example.source.rstrip("\n").split("\n")
        lines += [f">>> {source[0]}", *(f"... {line}" for line in source[1:])]
        if example.want:
            lines += example.want.rstrip("\n").split("\n")
            return "\n".join(lines[-USAGE_LINES:])
    return None
