"""The embedded model server's process: llama.cpp's OpenAI-compatible server from xllamacpp.

    python -m smol_instruments.llm.serve --model FILE --port N [--threads N] [--threads-batch N]
                                         [--ctx N] [--batch N] [--slot-dir DIR] [--alias NAME]
                                         [--watch-stdin]

`xllamacpp.Server(params)` loads the model and serves HTTP on 127.0.0.1 from its own threads
until this process ends (`/health` answers 503 while loading, 200 when ready). The server's
log goes to stderr. With --watch-stdin the process exits when its stdin reaches end of file:
the parent holds the pipe's other end, and the kernel closes it however the parent ends, even
by SIGKILL, so the server never outlives it. (PR_SET_PDEATHSIG would fire when the *thread*
that started us exits, which in a daemon's worker pool is not the parent's death.)

An API key, when wanted, comes in the environment (SMOL_LLM_API_KEY), never on the command
line where `ps` shows it. Exit status 3: the server could not start (the log says why).

`--threads` serves generation, `--threads-batch` the reading of prompts (llm/threads.py measures
both). `--batch` is how many prompt tokens are evaluated at once: the server reports the
reading of a prompt (`prompt_progress`) after each batch, so a small batch is a finer progress
bar. `--slot-dir` lets a prompt's evaluated state be saved and restored
(`POST /slots/0?action=save|restore`, llm/prefix.py).
"""

from __future__ import annotations

import argparse
import os
import sys
import threading

EXIT_START_FAILED = 3
#: Prompt tokens per batch: progress every 128 tokens (a few seconds on a small CPU), with a
#: prompt speed within the noise of llama.cpp's default 2,048 (measured, bench/first.py).
DEFAULT_BATCH = 128
API_KEY_VARIABLE = "SMOL_LLM_API_KEY"


def _watch_stdin() -> None:
    """Exit the whole process (the server's threads too) when the parent goes away."""

    def wait_for_eof() -> None:
        try:
            while sys.stdin.buffer.read(4096):
                pass
        finally:
            os._exit(0)

    threading.Thread(target=wait_for_eof, name="parent-watch", daemon=True).start()


def build_params(args: argparse.Namespace) -> object:
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.n_ctx = args.ctx
    params.n_parallel = 1  # one conversation at a time keeps the whole context for it
    params.port = args.port
    params.hostnames = [args.host]
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads_batch or args.threads
    params.n_batch = params.n_ubatch = args.batch
    if args.slot_dir:
        params.slot_save_path = os.path.join(args.slot_dir, "")  # llama.cpp appends the name
    params.use_jinja = True  # the model's own chat template
    params.endpoint_props = True  # /props reports n_ctx (the agent's context budget)
    params.ui = False
    if args.alias:
        params.model_alias = {args.alias}
    key = os.environ.get(API_KEY_VARIABLE)
    if key:
        params.api_keys = [key]
    return params


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="smol_instruments.llm.serve")
    parser.add_argument("--model", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--threads-batch", type=int, default=0, help="default: --threads")
    parser.add_argument("--ctx", type=int, default=8192)
    parser.add_argument("--batch", type=int, default=DEFAULT_BATCH)
    parser.add_argument("--slot-dir", default="")
    parser.add_argument("--alias", default="")
    parser.add_argument("--watch-stdin", action="store_true")
    args = parser.parse_args(argv)
    if args.watch_stdin:
        _watch_stdin()
    try:
        import xllamacpp
    except ImportError as exc:
        print(f"smol-llm: xllamacpp is not installed: {exc}", file=sys.stderr, flush=True)
        return EXIT_START_FAILED
    try:
        server = xllamacpp.Server(build_params(args))
    except Exception as exc:  # llama.cpp logged the reason just before
        print(f"smol-llm: the server did not start: {exc}", file=sys.stderr, flush=True)
        return EXIT_START_FAILED
    print(f"smol-llm: serving on http://{args.host}:{args.port}", file=sys.stderr, flush=True)
    try:
        threading.Event().wait()  # the server runs on its own threads until we are ended
    except KeyboardInterrupt:
        pass
    del server
    return 0


if __name__ == "__main__":
    # os._exit: llama.cpp's threads must not keep the process alive past this point.
    code = main()
    sys.stderr.flush()
    os._exit(code)
