"""`smol-instruments sandbox build | status | validate PATCH`: the sandbox from the terminal.

`--json` prints one JSON document (the backend description, the build result, or PROTOCOL.md's
validation object); without it a short summary. Failures are one line on stderr, no traceback.
Exit status: 0 success (validate: the patch applies and every check passes), 1 failure,
2 bad usage.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..base.logs import quiet_libraries
from ..base.visible import json_visible
from ..patches.validation import SandboxUnavailable, Validation

if TYPE_CHECKING:  # pydantic is not loaded by the parser `serve` builds
    from ..base.config import Settings

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def add_parser(subparsers: Any) -> None:
    """Register `sandbox` and its subcommands on the main CLI's subparsers."""
    parser = subparsers.add_parser(
        "sandbox", help="build the sandbox image, show the backend, validate a patch file"
    )
    sub = parser.add_subparsers(dest="sandbox_command", metavar="{build,status,validate}")
    parser.set_defaults(func=lambda args, settings: _usage(parser))

    build = sub.add_parser("build", help="build the sandbox image (offline when no registry)")
    build.add_argument(
        "--offline", action="store_true", help="skip the registry: build from Debian packages"
    )
    build.add_argument(
        "--force", action="store_true", help="rebuild the cached root file system as well"
    )
    build.add_argument(
        "--mirror", help="Debian mirror for the offline build (default: this machine's apt one)"
    )
    build.add_argument("--json", action="store_true", help="print the result as one JSON document")
    build.set_defaults(func=cmd_build)

    status = sub.add_parser("status", help="which backend validates patches, and why")
    status.add_argument("--json", action="store_true", help="print one JSON document")
    status.set_defaults(func=cmd_status)

    validate = sub.add_parser("validate", help="validate a patch file (unified diff, - for stdin)")
    validate.add_argument("patch", metavar="PATCH", help="a unified diff file, or - for stdin")
    validate.add_argument("--repo", help="the repository the patch is for (default: here)")
    validate.add_argument(
        "--run",
        metavar="CMD",
        action="append",
        help="a check command run on the patched copy (repeatable; default SANDBOX_CHECK_COMMAND)",
    )
    validate.add_argument(
        "--backend", choices=["auto", "docker", "local", "none"], help="override SANDBOX_BACKEND"
    )
    validate.add_argument("--json", action="store_true", help="print the validation as JSON")
    validate.set_defaults(func=cmd_validate)


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return EXIT_USAGE


def _fail(message: str, code: int = EXIT_FAILED) -> int:
    print(f"smol-instruments sandbox: {message}", file=sys.stderr)
    return code


def _progress(message: str) -> None:
    print(f"[sandbox] {message}", file=sys.stderr, flush=True)


# --- build --------------------------------------------------------------------------------


def cmd_build(args: argparse.Namespace, settings: Settings) -> int:
    """Build SANDBOX_IMAGE: the Dockerfile with a registry, Debian packages without."""
    from ..sandbox.docker import docker_client
    from ..sandbox.image import BuildError, build_image

    try:
        client = docker_client(timeout=600)
        result = build_image(
            client,
            settings.sandbox_image,
            offline=True if args.offline else None,
            mirror=args.mirror,
            force=args.force,
            progress=_progress,
        )
    except SandboxUnavailable as exc:
        return _fail(str(exc))
    except BuildError as exc:
        return _fail(f"could not build {settings.sandbox_image}: {exc}")
    except Exception as exc:  # the engine failed mid-way: still one line, no traceback
        return _fail(f"could not build {settings.sandbox_image}: {type(exc).__name__}: {exc}")
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
    else:
        print(
            f"built {result.image} ({result.method}, {result.image_id[:19]}, "
            f"{result.duration_s:.0f} s)"
        )
        for note in result.notes:
            print(f"  {note}")
    return EXIT_OK


# --- status -------------------------------------------------------------------------------


def cmd_status(args: argparse.Namespace, settings: Settings) -> int:
    """Which backend `auto` (or SANDBOX_BACKEND) gives, the engine and the image."""
    from ..sandbox.select import describe_backend

    info = describe_backend(settings)
    if args.json:
        print(json.dumps(info, indent=2, default=str))
    else:
        print(f"backend  {info['backend']} (SANDBOX_BACKEND={info['requested']})")
        print(f"reason   {info['reason']}")
        engine = info.get("engine")
        if engine:
            answers = f"Docker {engine.get('version')}" if engine["answers"] else "no answer"
            print(f"engine   {answers} at {engine['host']}")
        image = info.get("image")
        if image:
            if image.get("present"):
                state = (
                    f"present ({image.get('id')}, {image.get('size_mb')} MB, "
                    f"built by {image.get('built_by') or 'unknown'})"
                )
            else:
                state = "missing" if image.get("present") is False else "unknown (no engine)"
            print(f"image    {image['name']} {state}")
        if info.get("fix"):
            print(f"fix      {info['fix']}")
    unusable = info["requested"] == "docker" and info.get("problem")
    return EXIT_FAILED if unusable else EXIT_OK


# --- validate -----------------------------------------------------------------------------


def _read_patch(name: str) -> str | None:
    if name == "-":
        return sys.stdin.read()
    try:
        return Path(name).expanduser().read_text(encoding="utf-8", errors="surrogateescape")
    except OSError as exc:
        print(f"smol-instruments sandbox: {name}: {exc.strerror or exc}", file=sys.stderr)
        return None


def cmd_validate(args: argparse.Namespace, settings: Settings) -> int:
    """Validate PATCH against --repo in the configured sandbox and report it."""
    from ..base.git import find_repo_root
    from ..sandbox.select import open_sandbox

    diff = _read_patch(args.patch)
    if diff is None:
        return EXIT_USAGE
    repo = Path(args.repo or ".").expanduser()
    if not repo.is_dir():
        return _fail(f"--repo {args.repo}: no such directory", EXIT_USAGE)
    if args.backend:
        settings = settings.model_copy(update={"sandbox_backend": args.backend})
    try:
        sandbox = open_sandbox(settings, find_repo_root(repo))
    except SandboxUnavailable as exc:
        return _fail(str(exc))
    try:
        validation = sandbox.validate(diff, args.run)
    except SandboxUnavailable as exc:
        return _fail(str(exc))
    except Exception as exc:  # the engine went away mid-way, and the like
        return _fail(f"validation could not run: {exc}")
    finally:
        sandbox.close()
    if args.json:
        print(json_visible(validation.to_dict(), indent=2))
    else:
        print(summary(validation))
    return EXIT_OK if validation.passed else EXIT_FAILED


def summary(validation: Validation, output_lines: int = 15) -> str:
    """A compact, readable account of a validation (the failing checks' output tail)."""
    seconds = f" in {validation.duration_ms / 1000:.2f} s" if validation.duration_ms else ""
    if not validation.applies:
        lines = [f"backend {validation.backend}: the patch does NOT apply{seconds}"]
        lines += [f"  {line}" for line in (validation.message or "").splitlines()]
        return "\n".join(lines)
    failed = sum(not check.passed for check in validation.checks)
    verdict = f"{failed} of {len(validation.checks)} checks FAILED" if failed else "all checks pass"
    if not validation.checks:
        verdict = "no checks configured (SANDBOX_CHECK_COMMAND or --run)"
    lines = [f"backend {validation.backend}: the patch applies; {verdict}{seconds}"]
    if validation.message:
        lines.append(f"  note: {validation.message}")
    for check in validation.checks:
        if check.timed_out:
            how = "timed out"
        elif check.passed:
            how = "ok"
        else:
            how = f"FAIL (exit {check.exit_code})"
        lines.append(f"  {how:<14} {check.command}  ({(check.duration_ms or 0) / 1000:.2f} s)")
        if not check.passed and check.output.strip():
            lines += [
                f"      {line}" for line in check.output.rstrip().splitlines()[-output_lines:]
            ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """`python -m smol_instruments.sandbox.cli build|status|validate ...` (no main CLI needed)."""
    from ..base.config import SettingsError, load_settings

    parser = argparse.ArgumentParser(prog="smol-instruments")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["sandbox", *(sys.argv[1:] if argv is None else argv)])
    try:
        settings = load_settings()
    except SettingsError as exc:
        return _fail(str(exc), EXIT_USAGE)
    logging.basicConfig(level=settings.log_level, stream=sys.stderr)
    quiet_libraries()
    try:
        code: int = args.func(args, settings)
        return code
    except KeyboardInterrupt:
        return _fail("interrupted", 130)


if __name__ == "__main__":
    raise SystemExit(main())
