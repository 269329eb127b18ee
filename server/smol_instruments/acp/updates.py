"""A run's events as ACP `session/update`s: what the editor draws for each thing the agent does.

- the model's streamed reply (its reasoning and the code it writes) is an `agent_thought_chunk`,
  folded by the editors; each step's observation and errors go there too;
- each finished tool call is a `tool_call` with its kind, status, arguments and locations;
  a command that was put to the user is the same tool call as its permission request;
- a proposed patch is an `edit` tool call with one diff per file; its later status changes
  (accepted, rejected, stale) are `tool_call_update`s of it; a question about one of its
  hunks shows that hunk's diff alone;
- the run's answer is the `agent_message_chunk`.

Titles and summaries are drawn through `base/visible.py`: what the user decides on shows every
character. Diff contents carry the files' exact text (the editor draws the diff itself).
Pure mapping and a little state (which patches were shown); no I/O.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from acp import (
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_tool_call,
)
from acp.schema import ToolCallLocation, ToolCallProgress, ToolCallStart, ToolCallStatus, ToolKind

from ..agent.events import (
    AgentEvent,
    ErrorEvent,
    FinalEvent,
    ObservationEvent,
    PatchEvent,
    SessionApprovalEvent,
    TextEvent,
    ToolEvent,
)
from ..base.visible import visible
from ..patches.model import FileChange, Hunk, Patch, apply_placed, printable, split_lines

TOOL_KINDS: dict[str, ToolKind] = {
    "context": "read",
    "repo_info": "read",
    "read_file": "read",
    "read_file_snippet": "read",
    "show_patch": "read",
    "git_status": "read",
    "git_diff": "read",
    "git_log": "read",
    "list_files": "search",
    "rg_search": "search",
    "propose_patch": "edit",
    "propose_patch_unified": "edit",
    "apply_patch": "edit",
    "run_cmd": "execute",
    "run_tests": "execute",
    "evaluate": "execute",
}
#: A patch's status as the status of its tool call.
PATCH_STATUS: dict[str, ToolCallStatus] = {
    "pending": "pending",
    "accepted": "completed",
    "partial": "completed",
    "rejected": "failed",
    "stale": "failed",
    "failed": "failed",
}
TITLE_CHARS = 160

Update = Any  # one of acp.schema's session update models


def _title(text: str) -> str:
    shown = visible(text, breaks=True).replace("\n", " ")
    return shown if len(shown) <= TITLE_CHARS else shown[: TITLE_CHARS - 1] + "…"


def call_title(name: str, args: dict[str, Any]) -> str:
    """`read_file(path='app.py')`; a command is its own title."""
    if name in ("run_cmd", "run_tests") and isinstance(args.get("command"), str):
        return _title(args["command"])
    shown = ", ".join(f"{key}={value!r}" for key, value in args.items())
    return _title(f"{name}({shown})")


def patch_id(patch_id: str) -> str:
    """The tool call id of a patch: the same in the proposal, the permission and its outcome."""
    return f"patch-{patch_id}"


def patch_title(patch: Patch) -> str:
    added, removed = patch.stats()
    return _title(f"Patch {patch.id}: {patch.summary} (+{added} −{removed})")


def patch_diffs(patch: Patch, root: Path) -> list[Any]:
    """One diff per file: what accepting what is pending would do (as proposed once decided)."""
    contents = []
    for change in patch.files:
        pending = bool(change.pending())
        old = change.base if pending else change.original
        new = change.proposed_text() if pending else change.proposed
        contents.append(
            tool_diff_content(
                str(root / change.path),
                printable(new or ""),
                None if old is None else printable(old),
            )
        )
    return contents


def hunk_diff(change: FileChange, hunk: Hunk, root: Path) -> Any:
    """What accepting this one pending hunk would do to its file (the others left out)."""
    old = None if change.creates else change.base or ""
    new = "" if change.deletes else "".join(apply_placed(split_lines(change.base), [hunk]))
    return tool_diff_content(
        str(root / change.path), printable(new), None if old is None else printable(old)
    )


def hunk_title(patch: Patch, change: FileChange, hunk: Hunk, index: int, count: int) -> str:
    """`Patch p1a2b3c, change 2 of 3: calc.py line 12 (+1 −1): fix add`."""
    return _title(
        f"Patch {patch.id}, change {index} of {count}: {change.path} line {hunk.start + 1} "
        f"(+{len(hunk.new)} −{len(hunk.old)}): {patch.summary}"
    )


def patch_locations(patch: Patch, root: Path) -> list[ToolCallLocation]:
    return [
        ToolCallLocation(path=str(root / change.path), line=change.hunks[0].start + 1)
        if change.hunks
        else ToolCallLocation(path=str(root / change.path))
        for change in patch.files
    ]


def _patch_outcome(patch: Patch) -> str:
    if patch.status in ("accepted", "partial"):
        files = ", ".join(
            c.path for c in patch.files if any(h.status == "accepted" for h in c.hunks)
        )
        return f"Patch {patch.id} {patch.status}: written to {files}."
    why = f" ({patch.reason})" if patch.reason else ""
    return f"Patch {patch.id} {patch.status}{why}: nothing was written."


class UpdateMapper:
    """Turns one session's events into session updates; `lookup` finds a patch by id."""

    def __init__(self, root: Path, lookup: Any) -> None:
        self.root = root
        self.lookup = lookup
        self._lock = threading.Lock()
        self._tools = 0
        self._shown: set[str] = set()  # patches whose tool call the editor has
        self._asked: dict[str, str] = {}  # a command put to the user -> its tool call id

    def new_id(self, prefix: str) -> str:
        with self._lock:
            self._tools += 1
            return f"{prefix}-{self._tools}"

    def asked(self, command: str, tool_call_id: str) -> None:
        """A command was put to the user as `tool_call_id`: its run updates that call."""
        with self._lock:
            self._asked[command] = tool_call_id

    def shown(self, patch: Patch) -> ToolCallStart | None:
        """The patch's tool call, the first time it is asked for (None once the editor has it)."""
        with self._lock:
            if patch.id in self._shown:
                return None
            self._shown.add(patch.id)
        return start_tool_call(
            patch_id(patch.id),
            patch_title(patch),
            kind="edit",
            status="pending",
            content=patch_diffs(patch, self.root),
            locations=patch_locations(patch, self.root),
            raw_input={"patchId": patch.id, "summary": patch.summary},
        )

    def updates(self, event: AgentEvent) -> list[Update]:
        handler = getattr(self, f"_on_{event.kind}", None)
        return handler(event) if handler is not None else []

    def _on_text(self, event: TextEvent) -> list[Update]:
        return [update_agent_thought_text(event.text)] if event.text else []

    def _on_observation(self, event: ObservationEvent) -> list[Update]:
        text = event.text.replace("Execution logs:\n", "", 1)
        text = text.replace("Last output from code snippet:\nNone", "").strip()
        if not text:
            return []
        return [update_agent_thought_text(f"\n\nObservation:\n```\n{text}\n```\n\n")]

    def _on_error(self, event: ErrorEvent) -> list[Update]:
        text = f"\n\n⚠ {event.message}"
        if event.recovery_suggestion:
            text += f"\n→ {event.recovery_suggestion}"
        return [update_agent_thought_text(text + "\n\n")]

    def _on_tool(self, event: ToolEvent) -> list[Update]:
        status: ToolCallStatus = "failed" if event.error else "completed"
        content = []
        if event.error:
            message = f"{event.error.get('error')}: {event.error.get('message')}"
            if event.error.get("recovery_suggestion"):
                message += f"\n→ {event.error['recovery_suggestion']}"
            content.append(tool_content(text_block(message)))
        command = event.args.get("command") if event.name in ("run_cmd", "run_tests") else None
        with self._lock:
            asked = self._asked.pop(command, None) if isinstance(command, str) else None
        if asked is not None:  # the permission request's tool call: now it ran
            return [update_tool_call(asked, status=status, content=content or None)]
        locations = None
        path = event.args.get("path")
        if isinstance(path, str) and path and not path.startswith("/"):
            locations = [ToolCallLocation(path=str(self.root / path))]
        return [
            start_tool_call(
                self.new_id("tool"),
                call_title(event.name, event.args),
                kind=TOOL_KINDS.get(event.name, "other"),
                status=status,
                content=content or None,
                locations=locations,
                raw_input={"tool": event.name, "args": event.args},
                raw_output={"durationMs": event.duration_ms, "error": event.error},
            )
        ]

    def _on_approval(self, event: SessionApprovalEvent) -> list[Update]:
        if event.verdict != "deny":  # asked commands have their own tool call already
            return []
        return [
            start_tool_call(
                self.new_id("cmd"),
                _title(event.command),
                kind="execute",
                status="failed",
                content=[
                    tool_content(
                        text_block(f"Refused by the policy ({event.rule}): {event.reason}")
                    )
                ],
            )
        ]

    def _on_patch(self, event: PatchEvent) -> list[Update]:
        patch = self.lookup(event.patch["id"])
        if patch is None:
            return []
        start = self.shown(patch)
        if start is not None:
            return [start] if patch.status == "pending" else [start, self._outcome(patch)]
        return [self._outcome(patch)]

    def _outcome(self, patch: Patch) -> ToolCallProgress:
        return update_tool_call(
            patch_id(patch.id),
            status=PATCH_STATUS[patch.status],
            title=patch_title(patch),
            content=[
                *patch_diffs(patch, self.root),
                tool_content(text_block(_patch_outcome(patch))),
            ],
        )

    def _on_final(self, event: FinalEvent) -> list[Update]:
        return [update_agent_message_text(event.answer)] if event.answer else []


def message(text: str) -> Update:
    return update_agent_message_text(text)
