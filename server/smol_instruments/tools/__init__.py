"""The fifteen tools of docs/tools.md, bound to one repository through a ToolContext."""

from __future__ import annotations

from .base import RepoTool, ToolContext
from .evaluate import EvaluateTool, assertion_values, symptom_checks
from .examples import example_checks
from .files import ReadFileSnippetTool, ReadFileTool
from .git import GitDiffTool, GitLogTool, GitStatusTool
from .patch import ApplyPatchTool, ProposePatchTool, ProposePatchUnifiedTool, ShowPatchTool
from .repo import ListFilesTool, RepoInfoTool
from .search import RgSearchTool
from .shell import RunCmdTool, RunTestsTool

TOOL_CLASSES: tuple[type[RepoTool], ...] = (
    RepoInfoTool,
    ListFilesTool,
    RgSearchTool,
    ReadFileTool,
    ReadFileSnippetTool,
    GitStatusTool,
    GitDiffTool,
    GitLogTool,
    ProposePatchTool,
    ProposePatchUnifiedTool,
    ShowPatchTool,
    ApplyPatchTool,
    RunCmdTool,
    RunTestsTool,
    EvaluateTool,
)

TOOL_NAMES: tuple[str, ...] = tuple(cls.name for cls in TOOL_CLASSES)


def build_tools(ctx: ToolContext) -> dict[str, RepoTool]:
    """One instance of every tool, bound to `ctx`, by name; and what runs the repository's
    code for a proposal given to `ctx` (see ToolContext.symptom_checks)."""
    ctx.symptom_checks = symptom_checks
    ctx.assertion_values = assertion_values
    ctx.example_checks = example_checks
    return {cls.name: cls(ctx) for cls in TOOL_CLASSES}


__all__ = ["TOOL_CLASSES", "TOOL_NAMES", "RepoTool", "ToolContext", "build_tools"]
