"""A rename across the repository: rope's, then the text occurrences it leaves.

rope (`Rename(...).get_changes(docs=True)`) renames the definition and every reference it can
resolve, and the name in strings and comments where it stands alone. What it leaves, a
qualified name in a docstring's example or any mention in a README whose doctests run, is
renamed here as an editor's rename renames "text occurrences": the patch is proposed for the
user to review hunk by hunk, never written by this module.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Sequence

from ..base.errors import ErrorType, ToolError
from ..base.testruns import is_test_path
from .base import ToolContext

#: The files besides Python ones a rename follows the name into (READMEs, docs, notes).
DOCUMENTS = (".md", ".rst", ".txt")


def rename_changes(
    ctx: ToolContext,
    old: str,
    new: str,
    python_files: list[str],
    other_files: Sequence[str] = (),
) -> list[tuple[str, str | None, str | None]]:
    """(path, before, after) for each file a rename of `old` to `new` touches: rope's changes,
    then what it leaves in strings and comments and in the `other_files` that are documents
    (`DOCUMENTS`, `_text_occurrences`). Each file is read from disk once.

    `old` may be `name` or `Class.method`; its definition is found in the repository's Python
    files (a file outside the tests first). Nothing is written: rope's changes are read."""
    from rope.base.project import Project
    from rope.refactor.rename import Rename

    if not new.isidentifier():
        raise ToolError(
            ErrorType.INVALID_ARGUMENT,
            f"{new!r} is not a Python name",
            recovery_suggestion="Give the new name as one identifier, e.g. make_slug.",
        )
    short = old.rsplit(".", 1)[-1]
    definition = re.compile(rf"^\s*(?:async\s+)?(?:def|class)\s+{re.escape(short)}\b", re.M)
    homes, texts = [], {}
    for path in python_files:
        try:  # the patch guard's word: a link, or a path through one, is not read
            texts[path] = text = ctx.patches.read_disk(path)
        except (ToolError, OSError):
            continue
        found = definition.search(text or "")
        if found is not None:
            homes.append((is_test_path(path), path, found.end() - len(short)))
    if not homes:
        raise ToolError(
            ErrorType.NO_MATCH,
            f"no function or class named {short} is defined in this repository",
            recovery_suggestion="Search for the name with rg_search and check its spelling.",
        )
    _, path, offset = sorted(homes)[0]
    project = Project(str(ctx.root), ropefolder=None)
    try:
        resource = project.get_resource(path)
        # docs=True: the name in strings and comments too (`__all__`, docstrings, doctests);
        # only the files git lists are searched, never a folder a link leads elsewhere
        changes = Rename(project, resource, offset).get_changes(
            new, docs=True, resources=[project.get_resource(p) for p in texts]
        )
        edits = []
        for change in getattr(changes, "changes", [changes]):
            target = getattr(change, "resource", None)
            contents = getattr(change, "new_contents", None)
            if target is None or contents is None:
                raise ToolError(
                    ErrorType.INVALID_ARGUMENT,
                    f"renaming {old} would move a file, which this rename does not do",
                    recovery_suggestion="Rename the function or class, not its module.",
                )
            disk = (
                texts[target.path] if target.path in texts else ctx.patches.read_disk(target.path)
            )
            edits.append((target.path, _saved(ctx, target.path, disk), contents))
    finally:
        project.close()
    documents = [path for path in other_files if path.endswith(DOCUMENTS)]
    return _with_text_occurrences(ctx, edits, short, new, texts, documents)


def _with_text_occurrences(
    ctx: ToolContext,
    edits: list[tuple[str, str | None, str | None]],
    old: str,
    new: str,
    python_texts: dict[str, str | None],
    documents: Sequence[str],
) -> list[tuple[str, str | None, str | None]]:
    """`edits` with the occurrences rope leaves renamed too: in the Python files' strings and
    comments (a docstring's `>>> @parse.with_pattern(...)`: fresh dev pa-rename-with-pattern,
    whose doctest then failed) and in the documents (a README's examples, which its doctests
    run), as an editor's rename offers "text occurrences" too; the patch is reviewed hunk by
    hunk before anything is written. `python_texts`: the Python files as read from disk."""
    found = {path: (before, after) for path, before, after in edits}
    for path in [*python_texts, *documents]:
        if path in found:
            before, after = found[path]
        elif path in python_texts:
            before = after = python_texts[path]
        else:
            try:  # a link, or a path through one, is not read
                before = after = ctx.patches.read_disk(path)
            except (ToolError, OSError):
                continue
        if after is None:
            continue
        renamed = _text_occurrences(after, old, new, python=path in python_texts)
        if renamed != after:
            if path not in found:  # a file unsaved in the editor refuses only when touched
                _saved(ctx, path, before)
            found[path] = (before, renamed)
    return [(path, before, after) for path, (before, after) in found.items()]


def _saved(ctx: ToolContext, rel: str, disk: str | None) -> str | None:
    """`disk`, the file as read from disk, where a rename is computed; a ToolError when the
    editor holds unsaved changes to it (they would be lost or clash)."""
    if ctx.file_text(rel) != disk:
        raise ToolError(
            ErrorType.INVALID_ARGUMENT,
            f"{rel} has unsaved changes in the editor, and a rename is computed from the files"
            " on disk",
            recovery_suggestion=f"Ask the user to save {rel}, then rename again.",
            context={"path": rel},
        )
    return disk


def _text_occurrences(text: str, old: str, new: str, *, python: bool) -> str:
    """`text` with `old` written `new` where it stands as a whole word in prose about code:
    every such place when `old` reads as code (`with_pattern`, `camelCase`), else only where it
    is called, qualified or quoted (`parse(`, `.parse`, ``parse``), not the English word. In
    Python, only inside strings and comments: the code is rope's."""
    coded = re.fullmatch(r"[a-z]+", old) is None
    spans = _strings_and_comments(text) if python else [range(len(text) + 1)]
    pieces, last = [], 0
    for found in re.finditer(rf"(?<!\w){re.escape(old)}(?!\w)", text):
        start, end = found.span()
        if not any(start in span for span in spans):
            continue
        if coded or text[end : end + 1] == "(" or text[start - 1 : start] in (".", "`"):
            pieces += [text[last:start], new]
            last = end
    return "".join([*pieces, text[last:]])


def _strings_and_comments(text: str) -> list[range]:
    """Where the strings and comments of a Python text are (none when it does not tokenize)."""
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    spans = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type in (tokenize.STRING, tokenize.COMMENT):
                (row, col), (end_row, end_col) = token.start, token.end
                spans.append(range(starts[row - 1] + col, starts[end_row - 1] + end_col))
    except (tokenize.TokenError, SyntaxError):
        return []
    return spans
