"""The terminal host: `smol-instruments run | chat | tool | policy | sandbox | doctor | serve`.

Each subcommand is a small function registered in `build_parser`. Errors the user can fix are
one line on stderr with exit status 2; no tracebacks for bad input."""

from __future__ import annotations

import argparse
import json
import logging
import sys
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from .. import __version__
from ..base import userns
from ..base.errors import ErrorType, error_dict, is_error
from ..base.logs import quiet_libraries
from ..base.visible import json_visible
from ..base.wire import to_wire

if TYPE_CHECKING:  # pydantic, under the settings, is not loaded on `serve`'s start-up path
    from ..base.config import Settings

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2

Handler = Callable[[argparse.Namespace, "Settings"], int]


class UsageError(Exception):
    """Bad input the user can fix; printed as one line."""


class ModelUnreachable(Exception):
    """No model server answers; the message says how to start one (exit status 1)."""


def _json(data: Any, *, compact: bool = False) -> str:
    """JSON for stdout: it holds file text, so nothing in it may steer the terminal."""
    return json_visible(data, indent=None if compact else 2)


def _repo_dir(value: str | None) -> Path:
    path = Path(value or ".").expanduser()
    if not path.is_dir():
        said = "not a directory" if path.exists() else "no such directory"
        raise UsageError(f"--repo {value}: {said}")
    return path.resolve()


def configure_logging(settings: Settings, stream: TextIO | None = None) -> None:
    """Logs go to stderr (or a file), never stdout: stdout carries results and JSON-RPC."""
    logging.basicConfig(
        level=settings.log_level,
        stream=stream or sys.stderr,
        format="%(levelname)s %(name)s: %(message)s",
    )
    quiet_libraries()
    if settings.suppress_warnings:
        warnings.filterwarnings("ignore")


# --- tool -------------------------------------------------------------------------------


def _approver_for(args: argparse.Namespace, *, stdin_is_data: bool = False) -> Any:
    from ..safety.approval import AutoApprover, DenyAllApprover, TerminalApprover

    if getattr(args, "yes", False):
        return AutoApprover()
    if not stdin_is_data and sys.stdin.isatty():
        return TerminalApprover(sys.stdin, sys.stderr)
    return DenyAllApprover()


def _open_tools(args: argparse.Namespace, settings: Settings, *, stdin_is_data: bool) -> Any:
    from ..tools import build_tools
    from ..tools.base import ToolContext

    ctx = ToolContext.create(
        _repo_dir(args.repo),
        settings,
        approver=_approver_for(args, stdin_is_data=stdin_is_data),
        sandbox=_open_sandbox(settings, args.repo),
    )
    return ctx, build_tools(ctx)


def _open_sandbox(settings: Settings, repo: str | None) -> Any:
    from ..patches.validation import SandboxUnavailable
    from ..sandbox.select import open_sandbox

    try:
        return open_sandbox(settings, _repo_dir(repo))
    except SandboxUnavailable as exc:
        raise UsageError(str(exc)) from None


def call_tool(tools: dict[str, Any], name: Any, arguments: Any) -> dict[str, Any]:
    """Call one tool as the agent would; bad names and arguments come back as errors."""
    if not isinstance(name, str) or name not in tools:
        from ..tools.validation import closest

        near = closest(str(name), list(tools)) if isinstance(name, str) else []
        return error_dict(
            ErrorType.UNKNOWN_TOOL,
            f"no tool named {name!r}",
            recovery_suggestion=(f"Did you mean {near[0]!r}? " if near else "")
            + f"Tools: {', '.join(tools)}.",
        )
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        return error_dict(
            ErrorType.INVALID_ARGUMENT,
            f"arguments must be a JSON object, got {type(arguments).__name__}",
            tool=name,
            recovery_suggestion='Pass an object such as {"path": "README.md"}.',
        )
    result: dict[str, Any] = tools[name](**arguments)
    return result


def cmd_tool(args: argparse.Namespace, settings: Settings) -> int:
    if args.batch:
        if args.name:
            raise UsageError("tool --batch reads tool calls from stdin; do not also give a NAME")
        return _tool_batch(args, settings)
    if not args.name:
        from ..tools import TOOL_NAMES

        raise UsageError(f"tool needs a NAME: one of {', '.join(TOOL_NAMES)}")
    try:
        arguments = json.loads(args.args) if args.args else {}
    except json.JSONDecodeError as exc:
        print(
            _json(
                error_dict(
                    ErrorType.INVALID_ARGUMENT,
                    f"--args is not valid JSON: {exc.msg} at character {exc.pos}",
                    tool=args.name,
                    recovery_suggestion='Quote it for the shell: --args \'{"path": "README.md"}\'',
                )
            )
        )
        return EXIT_USAGE
    ctx, tools = _open_tools(args, settings, stdin_is_data=False)
    try:
        result = call_tool(tools, args.name, arguments)
    finally:
        ctx.sandbox.close()
    print(_json(result))
    return EXIT_FAILED if is_error(result) else EXIT_OK


def _tool_batch(args: argparse.Namespace, settings: Settings) -> int:
    ctx, tools = _open_tools(args, settings, stdin_is_data=True)
    failures = 0
    try:
        for number, line in enumerate(sys.stdin, start=1):
            if not line.strip():
                continue
            try:
                request = json.loads(line)
            except json.JSONDecodeError as exc:
                result = error_dict(
                    ErrorType.INVALID_ARGUMENT,
                    f"line {number} is not valid JSON: {exc.msg}",
                    recovery_suggestion='Each line must be {"tool": NAME, "args": {...}}.',
                )
            else:
                if not isinstance(request, dict):
                    request = {"tool": None, "args": request}
                result = call_tool(tools, request.get("tool"), request.get("args"))
            failures += is_error(result)
            print(_json(result, compact=True), flush=True)
    finally:
        ctx.sandbox.close()
    return EXIT_FAILED if failures else EXIT_OK


# --- policy -----------------------------------------------------------------------------


def cmd_policy(args: argparse.Namespace, settings: Settings) -> int:
    from ..safety.policy import CommandPolicy

    policy = CommandPolicy.load(
        _repo_dir(args.repo), allow_repo_loosening=settings.policy_allow_repo_loosening
    )
    command = " ".join(args.command)
    if command == "-":
        for line in sys.stdin:
            line = line.rstrip("\n")
            if not line.strip():
                continue
            print(_json(policy.verdict(line).to_dict(), compact=True), flush=True)
        return EXIT_OK
    if not command.strip():
        raise UsageError("policy needs a COMMAND (or - to read commands from stdin)")
    decision = policy.verdict(command)
    if args.json:
        print(_json(decision.to_dict()))
    else:
        print(f"{decision.verdict}  ({decision.rule})\n  {decision.reason}")
    return EXIT_OK


# --- run and chat ---------------------------------------------------------------------


def _model_endpoint(settings: Settings) -> tuple[Any, Callable[[], Any], Any]:
    """The run's model runtime and endpoint source, resolved once now so that a model that
    cannot be reached, fetched or started stops the command with one line before any run."""
    from ..llm.catalog import ModelSetupError
    from ..llm.resolve import ModelRuntime
    from .model import ModelStatus

    if settings.model_backend == "server":
        from .doctor import check_model

        check = check_model(settings, timeout=3.0)
        if check.status != "ok":
            raise ModelUnreachable(f"{check.detail}\n  fix: {check.fix}")
    runtime = ModelRuntime()
    status = ModelStatus()

    def endpoint() -> Any:
        try:
            return runtime.endpoint(settings, on_status=status)
        finally:
            status.close()

    try:
        first = endpoint()
    except ModelSetupError as exc:
        runtime.close()
        raise ModelUnreachable(str(exc)) from None
    return runtime, endpoint, first


def _session(
    args: argparse.Namespace, settings: Settings, renderer: Any, endpoint: Callable[[], Any]
) -> Any:
    from ..agent.session import AgentSession

    return AgentSession(
        _repo_dir(args.repo),
        settings,
        approver=_approver_for(args),
        events=renderer,
        sandbox=_open_sandbox(settings, args.repo),
        endpoint=endpoint,
    )


def _warm(runtime: Any, settings: Settings, session: Any) -> None:
    """Have the local model hold what every conversation starts with: restored from the file
    an earlier command saved, else read now (and saved for the next one)."""
    from .model import ModelStatus

    status = ModelStatus()
    try:
        runtime.warm(settings, session.prefix_messages, on_status=status)
    finally:
        status.close()


def _run_turn(session: Any, task: str) -> Any:
    """Run one turn on a worker thread; Ctrl-C cancels the run instead of killing the process."""
    result: dict[str, Any] = {}

    def work() -> None:  # what it raises is raised here, as itself, not as a missing outcome
        try:
            result["outcome"] = session.run(task)
        except BaseException as exc:
            result["raised"] = exc

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    while worker.is_alive():
        try:
            worker.join(0.2)
        except KeyboardInterrupt:
            print("\nsmol-instruments: cancelling the run ...", file=sys.stderr)
            session.cancel()
    if "raised" in result:
        raise result["raised"]
    return result["outcome"]


def _ask_line(prompt: str) -> str | None:
    """A line typed at the terminal (None at the end of input)."""
    sys.stderr.write(prompt)
    sys.stderr.flush()
    line = sys.stdin.readline()
    return line if line else None


def _review(args: argparse.Namespace, session: Any) -> Any:
    """Decide the patches the turn left pending (cli/review.py): asked, by --yes, or said."""
    from .review import Review

    review = Review(
        session.ctx.patches,
        sys.stderr,
        ask=_ask_line if sys.stdin.isatty() and not args.yes else None,
        accept_checked=args.yes,
        color=sys.stderr.isatty(),
    )
    return review.run(session.session_id)


def _with_review(answer: str, said: Any) -> str:
    """The answer, followed by what became of its patches (never a change that was not made)."""
    return "\n\n".join([answer.rstrip(), *said.lines]).strip()


def _answer(text: str) -> str:
    """The answer as written: every character visible on a terminal, exact when piped."""
    from ..base.visible import visible

    return visible(text) if sys.stdout.isatty() else text


def cmd_run(args: argparse.Namespace, settings: Settings) -> int:
    from .terminal import TerminalRenderer

    task = " ".join(args.task).strip()
    if task == "-":
        task = sys.stdin.read().strip()
    if not task:
        raise UsageError("run needs a TASK, e.g. smol-instruments run 'explain app.py'")
    runtime, endpoint, _ = _model_endpoint(settings)
    renderer = TerminalRenderer(verbose=args.verbose)
    try:
        session = _session(args, settings, renderer, endpoint)
        try:
            _warm(runtime, settings, session)
            outcome = _run_turn(session, task)
            said = _review(args, session)
        finally:
            session.close()
    finally:
        runtime.close()
    renderer.summary(outcome)
    answer = _with_review(outcome.answer, said)
    if args.json:
        from .review import patch_summary

        data = to_wire(outcome)
        data["answer"] = answer
        data["patches"] = [patch_summary(patch) for patch in said.patches]
        print(_json(data))
    else:
        print(_answer(answer))
    return EXIT_OK if outcome.status == "completed" else EXIT_FAILED


def cmd_chat(args: argparse.Namespace, settings: Settings) -> int:
    from .terminal import TerminalRenderer

    runtime, endpoint, first = _model_endpoint(settings)
    renderer = TerminalRenderer(verbose=args.verbose)
    try:
        session = _session(args, settings, renderer, endpoint)
        _warm(runtime, settings, session)
    except BaseException:
        runtime.close()
        raise
    interactive = sys.stdin.isatty()
    unfinished = 0  # turns that did not complete: the exit status says so
    print(
        f"smol-instruments chat in {session.root} with {first.where}. "
        "Ctrl-C stops a run; Ctrl-D or 'exit' quits.",
        file=sys.stderr,
    )
    try:
        while True:
            try:
                message = input("you> ") if interactive else sys.stdin.readline()
            except EOFError:
                break
            if not interactive and message == "":
                break
            message = message.strip()
            if message in {"exit", "quit"}:
                break
            if not message:
                continue
            outcome = _run_turn(session, message)
            said = _review(args, session)
            renderer.summary(outcome)
            print(f"agent> {_answer(_with_review(outcome.answer, said))}", flush=True)
            unfinished += outcome.status != "completed"
    except KeyboardInterrupt:
        pass
    finally:
        session.close()
        runtime.close()
    return EXIT_FAILED if unfinished else EXIT_OK


# --- serve ------------------------------------------------------------------------------


def cmd_serve(args: argparse.Namespace) -> int:
    """The daemon loads its settings once it has answered initialize (lsp/app.py `serve`)."""
    from ..lsp.app import serve

    port = args.tcp.rpartition(":")[2] if args.tcp else "0"
    if args.tcp and (":" not in args.tcp or not port.isdigit() or int(port) > 65535):
        raise UsageError("--tcp takes HOST:PORT, e.g. --tcp 127.0.0.1:2087 (port 0: any free one)")
    return serve(_load_settings, args.tcp)


def _load_settings() -> Settings:
    from ..base.config import load_settings

    return load_settings()


def cmd_acp(args: argparse.Namespace, settings: Settings) -> int:
    from ..acp.agent import serve as serve_acp

    return serve_acp(settings)


# --- doctor -----------------------------------------------------------------------------


def cmd_doctor(args: argparse.Namespace, settings: Settings) -> int:
    from .doctor import run_checks

    checks = run_checks(settings, _repo_dir(args.repo))
    if args.json:
        print(_json([check.to_dict() for check in checks]))
    else:
        for check in checks:
            print(check.line())
    return EXIT_FAILED if any(check.status == "fail" for check in checks) else EXIT_OK


# --- the parser -------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="smol-instruments",
        description="A coding agent for local, low-power language models.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command_name", metavar="COMMAND")

    tool = sub.add_parser("tool", help="call one tool as the agent would; prints its JSON result")
    tool.add_argument("name", nargs="?", help="tool name (omit with --batch)")
    tool.add_argument("--repo", help="repository root (default: the current directory)")
    tool.add_argument("--args", help='arguments as a JSON object, e.g. \'{"path": "README.md"}\'')
    tool.add_argument(
        "--batch",
        action="store_true",
        help='read {"tool": ..., "args": {...}} lines on stdin, print one JSON result line each',
    )
    tool.add_argument(
        "--yes", action="store_true", help="approve commands the policy leaves to the user"
    )
    tool.set_defaults(func=cmd_tool)

    policy = sub.add_parser("policy", help="the policy verdict for a shell command")
    policy.add_argument(
        "command", nargs=argparse.REMAINDER, help="the command, or - to read lines from stdin"
    )
    policy.add_argument("--json", action="store_true", help="print the decision as JSON")
    policy.add_argument("--repo", help="repository root (default: the current directory)")
    policy.set_defaults(func=cmd_policy)

    doctor = sub.add_parser(
        "doctor", help="check git, ripgrep, settings, model, sandbox and tracing"
    )
    doctor.add_argument("--repo", help="repository root (default: the current directory)")
    doctor.add_argument("--json", action="store_true", help="print the checks as JSON")
    doctor.set_defaults(func=cmd_doctor)

    run = sub.add_parser("run", help="run one task; steps stream to the terminal")
    run.add_argument("task", nargs="+", help="what to do (- reads it from stdin)")
    run.add_argument("--repo", help="repository root (default: the current directory)")
    run.add_argument(
        "--yes",
        action="store_true",
        help="approve what the policy leaves to the user (never a deny), and accept the "
        "patches whose checks passed",
    )
    run.add_argument("--json", action="store_true", help="print the result object as JSON")
    run.add_argument("-v", "--verbose", action="store_true", help="show the code of every step")
    run.set_defaults(func=cmd_run)

    chat = sub.add_parser("chat", help="interactive session with memory")
    chat.add_argument("--repo", help="repository root (default: the current directory)")
    chat.add_argument(
        "--yes",
        action="store_true",
        help="approve what the policy leaves to the user (never a deny)",
    )
    chat.add_argument("-v", "--verbose", action="store_true", help="show the code of every step")
    chat.set_defaults(func=cmd_chat)

    serve = sub.add_parser("serve", help="the LSP daemon (stdio by default)")
    serve.add_argument(
        "--tcp", metavar="HOST:PORT", help="listen on TCP instead of stdio (debugging)"
    )
    serve.add_argument(
        "--stdio", action="store_true", help="talk over stdio (the default; editors pass it)"
    )
    serve.set_defaults(func=cmd_serve)

    acp = sub.add_parser(
        "acp", help="the Agent Client Protocol agent on stdio (Zed, JetBrains, Neovim, Emacs)"
    )
    acp.set_defaults(func=cmd_acp)

    for register in _optional_commands():
        register(sub)
    return parser


def _optional_commands() -> list[Callable[[Any], None]]:
    """Subcommands that live in their own feature modules."""
    registrars: list[Callable[[Any], None]] = []
    try:
        from .sandbox import add_parser as sandbox_parser

        registrars.append(sandbox_parser)
    except ImportError:
        pass
    from .model import add_parser as model_parser
    from .patches import add_parser as patches_parser

    registrars.extend([model_parser, patches_parser])
    return registrars


#: Subcommands that run no contained command (the rest enter a namespace of their own).
RUN_NOTHING = frozenset({"policy", "model"})


def main(argv: list[str] | None = None) -> int:
    """The program (argv None: this process is ours) or one command run in-process."""
    parser = build_parser()
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    if argv is None and args.command_name not in RUN_NOTHING:
        # Before anything starts a thread (pygls, the model, tracing): views are then
        # mounted by us with one mount(2) call, for any user (base/userns.py).
        userns.enter()
    if args.func is cmd_serve:  # the settings (and pydantic) load after initialize is answered
        return _run(lambda: cmd_serve(args))
    from ..base.config import SettingsError, load_settings

    try:
        settings = load_settings()
    except SettingsError as exc:
        print(f"smol-instruments: {exc}", file=sys.stderr)
        return EXIT_USAGE
    configure_logging(settings)
    handler: Handler = args.func
    return _run(lambda: handler(args, settings))


def _run(command: Callable[[], int]) -> int:
    """The command's exit status; what it raised that a user can act on, said in one line."""
    try:
        return command()
    except UsageError as exc:
        print(f"smol-instruments: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ModelUnreachable as exc:
        print(f"smol-instruments: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        print("smol-instruments: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:
        # The policy engine is not imported on `serve`'s start-up path: it costs 0.2 s.
        from ..safety.policy import PolicyConfigError

        if not isinstance(exc, PolicyConfigError):
            raise
        print(f"smol-instruments: {exc}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    raise SystemExit(main())
