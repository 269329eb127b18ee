"""`smol-instruments patches list | show | accept | reject [--hunk N]`: patches decided by a script.

For editors without a UI and for scripts: the patches the agent left in a repository, from the
same store the daemon and the command line use, decided through the patch service. Output goes
through `base/visible.py`; `--json` prints data instead. Exit status 1 when a decision wrote
nothing it was asked to (a stale hunk, a failed write), 2 for a bad id or hunk.

`main.py` imports this module to build its parser on every start, `serve` too: `review.py`
(which reaches the agent and smolagents) is imported where a patch is shown, not here.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..base.errors import ErrorType, ToolError
from ..base.visible import json_visible, visible
from ..patches.service import PatchService, open_patches

if TYPE_CHECKING:  # pydantic is not loaded by the parser `serve` builds
    from ..base.config import Settings

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def _service(args: argparse.Namespace) -> PatchService:
    from ..base.git import find_repo_root
    from ..safety.jail import PathJail

    path = Path(args.repo or ".").expanduser()
    if not path.is_dir():
        raise ToolError(ErrorType.INVALID_ARGUMENT, f"--repo {args.repo}: no such directory")
    return open_patches(PathJail(find_repo_root(path.resolve())))


def cmd_patches(args: argparse.Namespace, settings: Settings) -> int:
    try:
        service = _service(args)
        return int(ACTIONS[args.action](args, service))
    except ToolError as exc:
        hint = f" ({exc.recovery_suggestion})" if exc.recovery_suggestion else ""
        print(f"smol-instruments: {visible(exc.message, breaks=True)}{hint}", file=sys.stderr)
        return EXIT_USAGE


def _list(args: argparse.Namespace, service: PatchService) -> int:
    from .review import Painter, patch_summary

    patches = [p for p in service.all() if args.all or not p.resolved]
    if args.json:
        print(json_visible([patch_summary(p) for p in patches], indent=2))
        return EXIT_OK
    if not patches:
        print("no pending patches" if not args.all else "no patches")
        return EXIT_OK
    paint = Painter(sys.stdout.isatty())
    for patch in patches:
        pending = sum(h.pending for h in patch.hunks)
        print(paint.header(patch) + paint("", f"  {pending}/{len(patch.hunks)} hunks pending"))
    return EXIT_OK


def _show(args: argparse.Namespace, service: PatchService) -> int:
    from .review import Painter, patch_summary

    patch = service.require(args.patch_id)
    if not patch.resolved:
        patch = service.refresh(patch.id).patch  # stale against the disk as it is now
    if args.json:
        print(json_visible(patch_summary(patch), indent=2))
    else:
        print(Painter(sys.stdout.isatty()).patch(patch))
    return EXIT_OK


def _decide(args: argparse.Namespace, service: PatchService) -> int:
    from .review import describe, patch_summary

    hunks: list[int] | None = args.hunk or None
    if args.action == "accept":
        outcome = service.accept(args.patch_id, hunks, "accepted from the command line")
    else:
        outcome = service.reject(args.patch_id, hunks, "rejected from the command line")
    if args.json:
        data: dict[str, Any] = {"patch": patch_summary(outcome.patch), **outcome.to_dict()}
        print(json_visible(data, indent=2))
    else:
        print(visible(describe(outcome)))
    asked_written = args.action == "accept"
    return EXIT_FAILED if asked_written and (outcome.stale or outcome.failed) else EXIT_OK


ACTIONS = {"list": _list, "show": _show, "accept": _decide, "reject": _decide}


def add_parser(sub: Any) -> None:
    patches = sub.add_parser(
        "patches", help="the agent's proposed patches: list, show, accept or reject them"
    )
    actions = patches.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="pending patches (--all: every kept patch)")
    listing.add_argument("--all", action="store_true", help="also the decided ones")
    show = actions.add_parser("show", help="a patch as a diff, hunk by hunk, with hunk numbers")
    show.add_argument("patch_id")
    for name, verb in (("accept", "write"), ("reject", "drop")):
        action = actions.add_parser(name, help=f"{verb} a patch's pending hunks (or --hunk N)")
        action.add_argument("patch_id")
        action.add_argument(
            "--hunk",
            type=int,
            action="append",
            metavar="N",
            help=f"{verb} only hunk N (repeatable); see the numbers with `patches show`",
        )
    for parser in (listing, show, *[actions.choices[n] for n in ("accept", "reject")]):
        parser.add_argument("--repo", help="repository root (default: the current directory)")
        parser.add_argument("--json", action="store_true", help="print data as JSON")
    patches.set_defaults(func=cmd_patches)
