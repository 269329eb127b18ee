"""The examples a change writes into a document, run against the repository: what a README says
code gives is held to what it gives, as an answer is held to what ran. So are the doctest
examples a change writes into a Python file's docstrings (`docstring_examples`).

Two forms are read from the lines a change adds to a Markdown, reStructuredText or text file:

- doctest's (`>>> expr` and the lines it shows under it), parsed by the standard library's
  `doctest.DocTestParser`; the examples before one are run with it (its imports, its names);
- a line of a fenced Python block that ends in a comment saying what it gives
  (`print(f(x))  # Output: y`, `f(x)  # -> y`), run after the block's lines above it. A block
  that says nothing it gives is run whole: one that imports or uses what the code does not
  have is broken (a name it leaves to the reader, `obj`, is not judged).

Each runs as `evaluate` runs code (contained, time-limited: tools/evaluate.py), with the patch.
An example that raises, or gives other than it says, is a failed check of the patch, so the
change is not done and the model is told what it gives (the 1.5B model's Usage section said
`singularize("Cat")` gives `cat`; it gives `Cat`). An example that cannot be run (no
containment, a timeout) is not judged.
"""

from __future__ import annotations

import ast
import doctest
import re
from pathlib import PurePosixPath
from typing import Any

from ..base.errors import ToolError
from ..base.pyast import parsed
from ..patches.pysource import DEFINITIONS, doctests
from .base import ToolContext
from .evaluate import evaluate_code, evaluates_unasked, gives, same_value, written_lines

#: Documents whose examples are run.
DOCUMENTS = frozenset({".md", ".rst", ".txt", ".markdown"})
#: Examples run for one patch, at most, and the seconds each may take.
EXAMPLES_RUN, EXAMPLE_TIMEOUT_S = 4, 10.0
#: What a change's examples are called in its validation.
EXAMPLES_CHECK = "the examples it adds to {path}, run"
#: A fenced block of Python in a Markdown document.
_PY_FENCE = re.compile(r"^[ \t]*```[ \t]*(?:python|py|python3)[ \t]*\n(.*?)^[ \t]*```", re.M | re.S)
#: A line of code that says, in its comment, what it gives.
_SAYS = re.compile(
    r"^(?P<code>[^#\n]*?\S)\s*#\s*(?:=>|->|output\s*:|outputs|prints?\s*:?|returns?\s*:?|"
    r"gives?\s*:?)\s*(?P<want>\S.*?)\s*$",
    re.I,
)
_PRINT = re.compile(r"^print\((?P<expr>.*)\)$")
#: What a block that says nothing it gives is judged by: what it uses does not exist.
_INVENTED = ("ImportError", "ModuleNotFoundError", "AttributeError")


def example_checks(
    ctx: ToolContext, diff: str, changes: list[tuple[str, str | None, str | None]]
) -> list[dict[str, Any]]:
    """A check for each document the change adds examples to, as validation reports checks:
    passed when every example it adds (at most `EXAMPLES_RUN` in all) gives what it says and
    raises nothing. [] when it adds none, or nothing can be run unasked."""
    runs: list[tuple[str, list[tuple[str, str | None]]]] = []
    for path, old, new in changes:
        suffix = PurePosixPath(path).suffix.lower()
        if new is None or suffix not in {*DOCUMENTS, ".py"}:
            continue
        if suffix == ".py":
            found = docstring_examples(old, new)
        else:
            written = written_lines(old, new)  # the lines it adds, the others blank
            lines = enumerate(new.splitlines(), 1)
            found = examples("\n".join(line * (n in written) for n, line in lines))
        if found:
            runs.append((path, found))
    if not runs or not evaluates_unasked(ctx):
        return []
    checks, budget = [], EXAMPLES_RUN
    for path, found in runs:
        said: list[str] = []
        for code, want in found[:budget]:
            budget -= 1
            try:
                result = evaluate_code(ctx, code, timeout=EXAMPLE_TIMEOUT_S, patch=diff)
            except ToolError:
                continue  # could not run: not judged
            if wrong := _wrong(code, want, result, "docstring" if path.endswith(".py") else ""):
                said.append(wrong)
        output = "; ".join(said) or f"every example added to {path} gives what it says"
        if not said:
            output += " (run with this patch)"
        else:
            output += ". Write the examples as they really run."
        checks.append(
            {
                "command": EXAMPLES_CHECK.format(path=path),
                "passed": not said,
                "output": output,
                "exit_code": 1 if said else 0,
            }
        )
    return checks


def docstring_examples(old: str | None, new: str) -> list[tuple[str, str | None]]:
    """(code to run, what it gives) for each doctest example a change writes into a docstring
    of a Python file: those the file's docstrings did not have, each run after the examples
    above it in its docstring (its steps). The 1.5B model, asked for an allow_v flag, wrote
    `>>> Version.parse('v1.2.3')` into parse's docstring and the `v` stripped after the
    match: run, the example raises (dev sv-parse-allow-v)."""
    had = {e.source for e in _examples_of(old)}
    found: list[tuple[str, str | None]] = []
    for node in _defined(new):
        sources: list[str] = []
        for example in doctests(node):
            sources.append(example.source.rstrip("\n"))
            if example.source not in had and example.want.strip():
                found.append(("\n".join(sources), example.want.strip()))
    return found


def _defined(text: str | None) -> list[ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef]:
    tree = parsed(text or "")
    return [n for n in ast.walk(tree) if isinstance(n, DEFINITIONS)] if tree else []


def _examples_of(text: str | None) -> list[doctest.Example]:
    return [example for node in _defined(text) for example in doctests(node)]


def examples(text: str) -> list[tuple[str, str | None]]:
    """(code to run, what the text says it gives, or None for a block that says nothing) for
    each example in `text`: doctest's, then each fenced Python block's."""
    found: list[tuple[str, str | None]] = []
    try:
        parsed = doctest.DocTestParser().get_examples(text)
    except ValueError:  # not doctest's form after all (an indented `>>>` of prose)
        parsed = []
    sources: list[str] = []
    for example in parsed:
        sources.append(example.source.rstrip("\n"))
        if example.want.strip():
            found.append(("\n".join(sources), example.want.strip()))
    for block in _PY_FENCE.findall(text):
        above: list[str] = []
        says = False
        for line in block.splitlines():
            if (hit := _SAYS.match(line)) and not line.lstrip().startswith("#"):
                code = hit["code"].strip()
                if printed := _PRINT.match(code):
                    code = printed["expr"]
                found.append(("\n".join([*above, code]), hit["want"]))
                says = True
            above.append(line)
        if not says and "".join(above).strip():
            found.append(("\n".join(above), None))
    return found


def _wrong(code: str, want: str | None, result: dict[str, Any], where: str = "") -> str | None:
    """What is wrong with an example that gave `result`, or None (`where`: what says it gives
    `want`, "document" unless told)."""
    last = code.strip().splitlines()[-1].strip()
    if want is None:  # a block that says nothing it gives: broken when it invents the API
        invented = str(result.get("exception", "")).startswith(_INVENTED)
        return f"`{last}` {gives(result, where=True)}" if invented else None
    if "exception" in result:
        if where == "docstring" and not result.get("raised_at"):
            # raised by the example's own lines, not the repository's code: a name doctest's
            # namespace gives (semver's `ver = semver.parse(...)` is a dict outside it, dev
            # sv-bump-step), which `evaluate` does not
            return None
        return f"`{last}` {gives(result, where=True)}"
    shown = [str(result.get(key)) for key in ("value", "text") if key in result]
    printed = str(result.get("printed") or "").strip()
    if printed:
        shown += [printed, printed.splitlines()[-1].strip()]
    if any(_same(got, want) for got in shown):
        return None
    return f"`{last}` {gives(result)}, and the {where or 'document'} says it gives {want}"


def _same(got: str, want: str) -> bool:
    """Whether a value shown as `got` is what a document writes as `want` (quotes aside)."""
    if same_value(got, want):
        return True
    return _bare(got) == _bare(want)


def _bare(text: str) -> str:
    text = " ".join(text.split())
    return text[1:-1] if len(text) > 1 and text[0] == text[-1] and text[0] in "'\"`" else text
