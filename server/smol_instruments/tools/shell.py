"""Shell tools: `run_cmd` and `run_tests`, run where the command gate (commands.py) lets them.

A command the gate lets run is contained (base/containment.py) and writes to a fresh
copy-on-write view of the repository (base/overlay.py), never to the repository itself.
When it ends, what it changed is sorted (base/changes.py) and comes back for review:

- regular files it created, changed or deleted become one patch, proposed through the patch
  service like any other (validated, shown by the hosts; summary: the command that made
  it), and the tool's result names the patch: nothing is written until the user accepts;
- protected places (`.git`, `.vscode/`, `.envrc`, ...; base/places.py) are dropped and
  named (`blocked`); what a patch cannot carry (links, mode changes, binary files) is listed
  (`not_proposed`); bytecode, caches and paths git ignores are dropped and counted;
- after the user approved exactly this command, the paths git ignores that it made (the
  `node_modules` of an approved `npm install`) are written back, inside the containment
  (base/writeback.py). A `git` widening (an approved `git commit`) writes the real `.git`.

A command that timed out or was cancelled leaves nothing: its view is thrown away. Where
commands run uncontained (COMMAND_CONTAINMENT=off, or approved where no sandbox can be had)
they write in place. Commands run in the repository root, in their own process group (a
timeout or cancel kills all of it), with no stdin.
"""

from __future__ import annotations

import logging
import shutil
from typing import Any

from ..base.changes import Changes, classify
from ..base.containment import Containment, read_paths
from ..base.errors import ErrorType, ToolError
from ..base.git import apply_diff, ignored_paths, user_identity
from ..base.overlay import View, ViewError
from ..base.process import ProcessResult, run_process
from ..base.testruns import failing_tests, test_summary, without_warnings
from ..base.truncate import truncate_output
from ..base.writeback import write_back
from ..patches.guard import patch_path
from ..patches.model import MAX_PATCH_CHARS
from ..safety.policy.verdicts import PolicyDecision
from .base import RepoTool, ToolContext, guarded
from .commands import decide, detect_test_command
from .patch import propose
from .validation import optional_number, optional_str, require_str

log = logging.getLogger(__name__)

MAX_COMMAND_CHARS = 4000

#: Paths named at most in a report's lists.
LISTED = 20
#: More files than this changed by one command are not proposed (a build's output in a
#: folder git does not ignore, or outside any repository): said instead.
MAX_PROPOSED_FILES = 200


def _shell() -> list[str]:
    return [shutil.which("bash") or "/bin/sh", "-c"]


def gated_run(
    ctx: ToolContext,
    command: str,
    timeout: float,
    *,
    decision: PolicyDecision | None = None,
    argv: list[str] | None = None,
    stdin_text: str | None = None,
    propose_changes: bool = True,
    patch: str | None = None,
) -> tuple[ProcessResult, dict[str, Any]]:
    """Run `command` as the gate decides (ToolError when it must not run), contained in a
    view of the repository; what it changed is proposed, said in the returned report.

    A tool that runs a program of its own (not a shell command the model wrote) passes the
    policy's `decision` for it and its `argv`; `command` is then how it is shown. With
    `propose_changes=False` whatever it wrote is discarded with its view, never proposed
    (`evaluate`: the model's own code, which reads the repository and changes nothing).
    With a `patch` (a unified diff), it is applied in the view first: the command runs on the
    repository as accepting the patch would make it (ToolError when it does not apply)."""
    decided = decide(ctx, command, decision)
    plan, gate = decided.plan, decided.gate
    contain = None
    if plan.contained:
        contain = Containment(
            ctx.root,
            widens=frozenset(plan.widens),
            readable=read_paths(ctx.settings.command_read_paths),
        )
    identity = user_identity() if contain is not None and "git" in plan.widens else None
    ctx.check_cancelled()
    view = _view(ctx, command, gate) if contain is not None else None
    try:
        if patch is not None:
            _apply_in(ctx, command, view, patch)
        result = run_process(
            argv or [*_shell(), command],
            stdin_text=stdin_text,
            cwd=ctx.root,
            timeout=timeout,
            extra_env=identity,
            contain=contain.viewing(view) if contain is not None else None,
            cancel=ctx.cancel,
            registry=ctx.processes,
        )
        done = not (result.cancelled or result.timed_out)
        if view is not None and done and propose_changes:
            gate.update(_reviewed(ctx, command, view, approved=decided.approved))
    finally:
        if view is not None:
            view.close()
    if result.cancelled:
        ctx.check_cancelled()
    if result.timed_out:
        head, _ = truncate_output(result.stdout + result.stderr, 1500, 40, keep="tail")
        raise ToolError(
            ErrorType.TIMEOUT,
            f"`{command}` was stopped after {timeout:g} s; what it changed was discarded",
            recovery_suggestion="Run something narrower (one test file), or pass a larger timeout=.",
            context=gate | {"command": command, "partial_output": head},
        )
    return result, gate


def _apply_in(ctx: ToolContext, command: str, view: View | None, patch: str) -> None:
    """`patch` applied in `view`, never in the repository (ToolError when it cannot be)."""
    applied = None
    if view is not None:
        applied = apply_diff(ctx.root, patch, mode=ctx.settings.command_containment, view=view)
    if applied is None or applied.exit_code != 0:
        why = "no view to apply it in" if applied is None else applied.stderr.strip()[:300]
        raise ToolError(
            ErrorType.COMMAND_FAILED,
            f"`{command}` was not run on the patched code: the patch did not apply ({why})",
            recovery_suggestion="Propose the change again against the file as it is now.",
        )


def _view(ctx: ToolContext, command: str, gate: dict[str, Any]) -> View:
    try:
        return View.create(ctx.root)
    except ViewError as exc:
        raise ToolError(
            ErrorType.COMMAND_FAILED,
            f"`{command}` was not run: {exc}",
            recovery_suggestion="Continue with the repository tools (read_file, rg_search, "
            "propose_patch); tell the user what failed.",
            context=gate | {"command": command},
        ) from exc


def _reviewed(ctx: ToolContext, command: str, view: View, *, approved: bool) -> dict[str, Any]:
    """`review`, or a line saying why it could not be done: the command ran, its output
    must reach the model whatever happens to the reading of its view."""
    try:
        return review(ctx, command, view, approved=approved)
    except ToolError:
        raise
    except Exception as exc:
        log.exception("reading the view of %r failed", command)
        return {"changes": f"what the command changed could not be read ({exc}); it was discarded"}


def review(ctx: ToolContext, command: str, view: View, *, approved: bool) -> dict[str, Any]:
    """What the command changed in `view`: proposed, written back or dropped, and said."""
    mode = ctx.settings.command_containment
    changes = classify(
        ctx.root,
        view.upper,
        is_ignored=lambda paths: ignored_paths(ctx.root, paths, mode=mode),
        limit=MAX_PATCH_CHARS,
    )
    report: dict[str, Any] = {}
    if changes.nothing:
        return report
    said: list[str] = []
    proposable = _proposable(ctx, changes)
    names = ", ".join(c.path for c in proposable[:5]) + (" ..." if len(proposable) > 5 else "")
    if len(proposable) > MAX_PROPOSED_FILES:
        said.append(
            f"the command changed {_files(len(proposable))} ({names}): too many to propose "
            f"as one patch (at most {MAX_PROPOSED_FILES}); nothing was kept"
        )
    elif proposable:
        try:
            patch = propose(
                ctx, [(c.path, c.old, c.new) for c in proposable], f"Changes made by `{command}`"
            )
        except ToolError as exc:
            said.append(
                f"the command changed {_files(len(proposable))} ({names}), not proposed: {exc}"
            )
        else:
            report["patch_id"] = patch["patch_id"]
            said.append(
                f"the command changed {_files(len(proposable))} ({names}); proposed as patch "
                f"{patch['patch_id']} — nothing is written until the user accepts"
            )
    if changes.ignored:
        kept = approved and _written_back(ctx, view, changes, said)
        if not kept:
            places = ", ".join(changes.ignored[:5]) + (" ..." if len(changes.ignored) > 5 else "")
            said.append(
                f"discarded {_files(changes.ignored_files)} git ignores ({places}); only a "
                "command the user approves keeps them"
            )
    if changes.blocked:
        report["blocked"] = changes.blocked
        said.append(
            "blocked what it did in protected places (never proposed, never written): "
            + "; ".join(changes.blocked[:3])
            + (" ..." if len(changes.blocked) > 3 else "")
        )
    if changes.skipped:
        report["not_proposed"] = changes.skipped[:LISTED]
        said.append(f"{len(changes.skipped)} not proposed (see not_proposed)")
    if changes.byproducts and said:
        said.append(f"dropped {_files(changes.byproducts)} of bytecode and caches")
    if said:
        report["changes"] = "; ".join(said)
    return report


def _files(count: int) -> str:
    return f"{count} file" + ("" if count == 1 else "s")


def _proposable(ctx: ToolContext, changes: Changes) -> list[Any]:
    """The changes a patch may carry (the patch guard's word), the others listed as skipped."""
    chosen = []
    for change in changes.files:
        if not (change.old or change.new):
            changes.skipped.append(f"{change.path}: an empty file, not proposed")
            continue
        try:
            patch_path(ctx.jail, change.path)
        except (ToolError, OSError) as exc:
            changes.skipped.append(f"{change.path}: {exc}")
            continue
        chosen.append(change)
    return chosen


def _written_back(ctx: ToolContext, view: View, changes: Changes, said: list[str]) -> bool:
    result = write_back(ctx.root, view, changes.ignored, timeout=ctx.settings.command_timeout_s)
    if result.exit_code == 0:
        said.append(
            f"kept {_files(changes.ignored_files)} git ignores, as approved: "
            + ", ".join(changes.ignored[:5])
        )
        return True
    said.append(f"could not keep what git ignores: {(result.stderr.strip() or 'failed')[-300:]}")
    return False


class RunCmdTool(RepoTool):
    name = "run_cmd"
    description = (
        "Run a shell command in the repository root. A policy decides: safe read-only commands "
        "run, risky ones need the user's approval, destructive ones are refused."
    )
    inputs = {
        "command": {"type": "string", "description": "shell command"},
        "timeout": {"type": "number", "description": "seconds (default 120)", "nullable": True},
    }
    example = "run_cmd(command='ls')"
    changes_state = True

    @guarded
    def forward(self, command: str, timeout: float | None = None) -> dict[str, Any]:
        command = require_str("command", command, max_chars=MAX_COMMAND_CHARS, example="'ls'")
        seconds = optional_number("timeout", timeout, minimum=0, maximum=3600)
        result, gate = gated_run(self.ctx, command, seconds or self.settings.command_timeout_s)
        limits = self.limits
        stdout, cut_out = truncate_output(
            result.stdout, limits.truncate_chars, limits.truncate_lines
        )
        stderr, cut_err = truncate_output(
            result.stderr, max(500, limits.truncate_chars // 2), limits.truncate_lines, keep="tail"
        )
        return {
            "command": command,
            "exit_code": result.exit_code,
            "stdout": stdout,
            "stderr": stderr,
            "truncated": cut_out or cut_err,
            "duration_ms": result.duration_ms,
            **gate,
        }


#: pytest's exit status when it collected no test.
NO_TESTS_COLLECTED = 5


class RunTestsTool(RepoTool):
    name = "run_tests"
    description = (
        "Run the project's tests (the command is detected when not given). Returns passed, "
        "exit_code, failed_tests (as the test runner reports them) and the end of the output."
    )
    inputs = {
        "command": {
            "type": "string",
            "description": "test command, e.g. 'pytest -q tests/test_x.py'",
            "nullable": True,
        },
    }
    example = "run_tests(command='<the test command>')"

    @guarded
    def forward(self, command: str | None = None) -> dict[str, Any]:
        command = optional_str(
            "command", command, max_chars=MAX_COMMAND_CHARS, example="'pytest -q'"
        )
        if command is None:
            command = detect_test_command(self.ctx.root)
            if command is None:
                raise ToolError(
                    ErrorType.NO_TEST_COMMAND,
                    "no test command could be detected for this repository",
                    recovery_suggestion="Pass it explicitly, e.g. run_tests(command='pytest -q').",
                )
        result, gate = gated_run(self.ctx, command, self.settings.command_timeout_s)
        combined = result.stdout + (("\n" + result.stderr) if result.stderr.strip() else "")
        combined, limits = without_warnings(combined), self.limits
        output, truncated = truncate_output(
            combined, limits.truncate_chars, limits.truncate_lines, keep="tail"
        )
        return {
            "command": command,
            "passed": result.exit_code == 0,
            "exit_code": result.exit_code,
            "summary": (
                "no tests ran: pytest collected none (exit code 5); give the test files, "
                "run_tests(command='pytest -q <test file>')"
                if result.exit_code == NO_TESTS_COLLECTED and "pytest" in command
                else test_summary(result.stdout, result.stderr)
            ),
            # pytest's own report of what failed, never the model's reading of the output
            "failed_tests": failing_tests(combined),
            "output": output,
            "truncated": truncated,
            "duration_ms": result.duration_ms,
            **gate,
        }
