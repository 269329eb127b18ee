"""What a run does without a model step: a change a library makes, SEARCH/REPLACE blocks.

A rename the task asks for is made by the refactoring library (tools/edit.py, rope) across
the repository and proposed as one patch in one step; the model is not asked to write it.
A reply of SEARCH/REPLACE blocks is proposed through the same edit service. The session
(agent/session.py) hands these an `OneStep` that ends the run with its events.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import PurePosixPath
from typing import Any

from ..base.errors import ToolError
from ..base.pyast import is_python_source
from ..tools.base import ToolContext
from ..tools.edit import (
    definition_changes,
    edit_changes,
    has_edit_blocks,
    parse_edit_blocks,
    propose_changes,
)
from ..tools.rename import rename_changes
from ..tools.rewrite import rewrite_block
from .edits import file_sections
from .events import RunOutcome, RunStatus, ToolEvent
from .intent import TaskIntent
from .outcome import NOT_VERIFIED, describe_proposal, failed_checks

log = logging.getLogger(__name__)

#: Ends a run after one step of ours: (answer, status, the tool event to show, if any).
OneStep = Callable[[str, RunStatus, ToolEvent | None], RunOutcome]


def edit_blocks(
    ctx: ToolContext, reply: str, default_path: str | None, whole: bool = False
) -> dict[str, Any]:
    """A reply's SEARCH/REPLACE blocks (or, without them, a block of definitions for several
    files under their `# file:` lines, merged by name into each, or the lines of a file it
    writes again in a fence, `whole` when it was asked for the whole file, tools/rewrite.py
    `rewrite_block`) proposed as one patch, or the error schema."""
    try:
        sections = file_sections(reply)
        if sections and not has_edit_blocks(reply):
            changes, said = definition_changes(ctx, sections)
            return propose_changes(ctx, changes, said)
        if has_edit_blocks(reply):
            blocks = parse_edit_blocks(reply, default_path)
        else:
            blocks = [rewrite_block(ctx, reply, default_path, whole=whole)]
        paths = ", ".join(dict.fromkeys(block.path for block in blocks))
        changes = edit_changes(ctx, blocks)
        return propose_changes(ctx, changes, f"Edit {paths}")
    except ToolError as exc:
        return exc.to_dict(tool="search/replace")


def python_sources(ctx: ToolContext, repo_files: list[str]) -> list[str]:
    """The repository's Python files: `.py` ones, and scripts without a suffix whose first
    line runs Python (`bin/tool`: a rename must reach them too)."""
    found = []
    for path in repo_files:
        if path.endswith(".py"):
            found.append(path)
        elif "." not in PurePosixPath(path).name:
            try:  # the patch guard's word: a link, or a path through one, is not read
                head = (ctx.patches.read_disk(path) or "")[:200]
            except (ToolError, OSError, UnicodeDecodeError):
                continue
            if is_python_source(path, head):
                found.append(path)
    return found


def rename_in_one_step(
    ctx: ToolContext, repo_files: list[str], intent: TaskIntent, end: OneStep
) -> RunOutcome | None:
    """The rename `intent` asks for, by the library, proposed as one patch; None (the model
    takes over) when the library cannot do it."""
    assert intent.rename is not None
    old, new = intent.rename
    started = time.monotonic()
    try:
        changes = rename_changes(ctx, old, new, python_sources(ctx, repo_files), repo_files)
        result = propose_changes(ctx, changes, f"Rename {old} to {new}")
    except ToolError as exc:
        log.info("rename %s -> %s not done by the library: %s", old, new, exc.message)
        return None
    except Exception:  # a library fault: the model tries instead
        log.exception("rename %s -> %s failed", old, new)
        return None
    patch = ctx.patches.get(str(result.get("patch_id")))
    if patch is None:
        return None
    answer = describe_proposal(patch, held=intent.held)
    status: RunStatus = "completed"
    if failed_checks(patch.validation, held=intent.held):
        status, answer = "incomplete", f"{NOT_VERIFIED} {answer}"
    tool = ToolEvent(
        step=1,
        name="rename",
        args={"old": old, "new": new},
        duration_ms=round((time.monotonic() - started) * 1000, 1),
    )
    return end(answer, status, tool)
