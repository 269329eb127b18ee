"""The start of a change written for the model: a function's signature with the new parameter
the task gives it.

Asked for "a keep_build option, off by default" on `finalize_version`, the 1.5B model copied
the method unchanged and wrote a new method `keep_build` under it, three times, told each time
that the task wants a parameter (dev sv-finalize-keep-build; infl-slug-preserve-case the same
with `preserve_case`). Adding a name to a signature is mechanical; what the parameter does is
the model's part. So its reply is held (llama.cpp's GBNF grammar) to start as the function's
new version does: its decorators and its signature up to the new parameter's name. It writes
the rest: the default, the body, anything else.
"""

from __future__ import annotations

import ast
import re

from ..base.errors import ToolError
from ..base.pyast import parsed
from ..patches.pysource import FUNCTIONS
from .base import ToolContext
from .edit import TEXT_LINE, gbnf_literal

#: Lines a held version may have beyond its function's own (the new lines that use it).
EXTRA_LINES = 40


def signature_prefix(source: str, function: str, parameter: str) -> tuple[str, int] | None:
    """The lines of `function` (a top-level function or a method, `Class.method` or its last
    part alone) in `source` from its first decorator to the end of its last parameter, with
    `parameter` written after that, and how many lines the function has. None where the file
    does not parse, has no function or more than one by that name, or the function already
    takes `parameter` or takes `**kwargs` (a new parameter goes before it: not done here)."""
    tree = parsed(source)
    if tree is None or not parameter.isidentifier():
        return None
    definitions = _definitions(tree.body)
    named = [(name, node) for name, node in definitions if _names(function, name)]
    found = [node for name, node in named if name == function] or [node for _, node in named]
    if len(found) != 1 or found[0].args.kwarg is not None:
        return None
    node = found[0]
    args = node.args
    taken = [
        *args.posonlyargs,
        *args.args,
        *([args.vararg] if args.vararg else []),
        *args.kwonlyargs,
    ]
    if parameter in {a.arg for a in taken}:
        return None
    lines = source.splitlines(keepends=True)
    start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    ends = [n for n in (*taken, *args.defaults, *args.kw_defaults) if n is not None]
    if ends:
        last = max(ends, key=lambda n: (n.end_lineno or 0, n.end_col_offset or 0))
        row, column, joint = last.end_lineno or node.lineno, last.end_col_offset or 0, ", "
    else:  # `def f():` -> `def f(<parameter>`
        row, joint = node.lineno, ""
        head = lines[row - 1].encode()
        column = head.index(b"(", head.index(node.name.encode())) + 1
    cut = lines[row - 1].encode()[:column].decode()
    prefix = "".join(lines[start - 1 : row - 1]) + cut + joint + parameter
    size = (node.end_lineno or node.lineno) - start + 1
    qualified = next(name for name, n in named if n is node)
    methods = [n.rsplit(".", 1)[-1] for n, _ in definitions if "." in n]
    if "." in qualified and methods.count(node.name) > 1:
        # a method of several classes (`__init__`) merges by name only inside its class
        owner = _owner(tree, lines, qualified.rsplit(".", 1)[0])
        if owner is None:
            return None
        prefix, size = owner + prefix, size + 1
    return prefix, size


def _owner(tree: ast.Module, lines: list[str], dotted: str) -> str | None:
    """The `class X(...):` line of the class `dotted` names ("A", "A.B"), where it is one line
    of its own and the class has no decorator."""
    body: list[ast.stmt] = tree.body
    node: ast.ClassDef | None = None
    for part in dotted.split("."):
        node = next((n for n in body if isinstance(n, ast.ClassDef) and n.name == part), None)
        if node is None:
            return None
        body = node.body
    if node is None or node.decorator_list:
        return None
    line = lines[node.lineno - 1]
    return line if line.rstrip().endswith(":") else None


def parameter_grammar(
    path: str, source: str, functions: list[str], parameter: str, task: str = ""
) -> str:
    """A GBNF grammar for a reply that is one ```python block: `# file: <path>`, then the new
    version of the first of `functions` that `signature_prefix` finds, else of a function
    of the file that `task` names as a word ("give add an optional keep_sign argument"),
    started for the model up to the new `parameter`, which the line goes on from with no
    more of a name (dev sv-bump-step, held to `step`, wrote `steps`); "" where none is
    found."""
    tree = parsed(source)
    defined = [name for name, _ in _definitions(tree.body)] if tree else []
    words = [
        name for name in defined if re.search(rf"(?<!\w){name.rsplit('.', 1)[-1]}(?!\w)", task)
    ]
    # a class named stands for its constructor ("could the JsonPointer constructor take ...")
    asked = [
        name for function in [*functions, *words] for name in (function, f"{function}.__init__")
    ]
    for function in asked:
        if (found := signature_prefix(source, function, parameter)) is not None:
            prefix, size = found
            opening = gbnf_literal(f"```python\n# file: {path}\n\n{prefix}")
            return (
                f'root ::= {opening} ([^\\nA-Za-z0-9_] [^\\n]*)? "\\n" body "```"\n'
                f"body ::= text{{0,{size + EXTRA_LINES}}}\n"
                f"text ::= {TEXT_LINE}\n"
            )
    return ""


def parameters_of(source: str | None) -> set[str]:
    """The names of the parameters the functions in `source` take (none where it does not
    parse)."""
    tree = parsed(source or "")
    return _parameters(tree) if tree else set()


def _parameters(node: ast.AST) -> set[str]:
    """The names of the parameters the functions in `node` (itself one or not) take."""
    functions = (n for n in ast.walk(node) if isinstance(n, FUNCTIONS))
    return {
        a.arg
        for f in functions
        for a in (
            *f.args.posonlyargs,
            *f.args.args,
            f.args.vararg,
            *f.args.kwonlyargs,
            f.args.kwarg,
        )
        if a is not None
    }


def parameters_in(ctx: ToolContext, found: dict[str, list[str]]) -> dict[str, set[str]]:
    """For each name `found` gives files for, the names of the parameters its definitions
    there take (a function's or method's own; a class's, its constructor's)."""
    taken: dict[str, set[str]] = {}
    for name, paths in found.items():
        for path in paths:
            try:
                tree = parsed(ctx.file_text(path) or "")
            except ToolError:
                continue
            for qualified, node in _definitions(tree.body) if tree else []:
                if _names(name, qualified) or _names(f"{name}.__init__", qualified):
                    taken.setdefault(name, set()).update(_parameters(node))
    return taken


def _definitions(
    body: list[ast.stmt], owner: str = ""
) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """(qualified name, node) of each function defined at the top of `body` or in a class
    there (not those nested in a function)."""
    found: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]] = []
    for node in body:
        if isinstance(node, FUNCTIONS):
            found.append((f"{owner}{node.name}", node))
        elif isinstance(node, ast.ClassDef):
            found += _definitions(node.body, f"{owner}{node.name}.")
    return found


def _names(asked: str, qualified: str) -> bool:
    """`asked` ("parse", "Version.parse", "semver.Version.parse") names `qualified`."""
    return (
        qualified == asked
        or asked.endswith(f".{qualified}")
        or ("." not in asked and qualified.rsplit(".", 1)[-1] == asked)
    )
