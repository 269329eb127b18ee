"""The model the evaluation talks to: the product's own embedded llama.cpp server and cache.

`find_model("0.5b" | "1.5b")` is the pinned model's file in the model cache, verified against
its SHA-256 (`smol-instruments model pull` fetches it). `model_server(gguf, ...)` starts the
product's `EmbeddedServer` on it (a child process on a free 127.0.0.1 port, with a random API
key) and stops it on exit. The evaluation puts its recording proxy in front and points the
command line at the proxy (MODEL_BACKEND=server): the same server the CLI would start for
itself with MODEL_BACKEND=embedded, but one per agent for the whole evaluation, so each keeps
its prefix cache across tasks and every call's timings can be read.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

# The evaluation's short names for the catalog's models.
MODELS: dict[str, str] = {"0.5b": "qwen2.5-coder-0.5b", "1.5b": "qwen2.5-coder-1.5b"}


class ModelMissing(Exception):
    """No verified model file, or no server for it: the message says what to do."""


def find_model(choice: str, explicit: str | None = None) -> Path:
    """The verified GGUF file of `choice` (the cached one, or `explicit` checked the same way)."""
    from smol_instruments.base.config import load_settings
    from smol_instruments.llm.catalog import ModelSetupError
    from smol_instruments.llm.catalog import find_model as catalog_entry
    from smol_instruments.llm.pull import model_file, verify_file

    settings = load_settings(None)
    try:
        spec = catalog_entry(settings, MODELS[choice])
    except ModelSetupError as exc:
        raise ModelMissing(str(exc)) from None
    path = Path(explicit).expanduser() if explicit else model_file(settings, spec)
    if not path.is_file():
        raise ModelMissing(
            f"{path} not found; fetch it with `smol-instruments model pull {spec.name}`"
        )
    if not verify_file(path, spec):
        raise ModelMissing(f"{path} is not {spec.name}: its size or SHA-256 differs")
    return path


@contextmanager
def model_server(gguf: Path, *, threads: int, ctx: int, log: Path) -> Iterator[Any]:
    """The product's embedded llama.cpp server on `gguf`, started and, at the end, stopped."""
    from smol_instruments.llm.catalog import ModelSetupError
    from smol_instruments.llm.embedded import EmbeddedServer

    log.parent.mkdir(parents=True, exist_ok=True)
    server = EmbeddedServer(gguf, alias="local", threads=threads, context=ctx, log_file=log)
    try:
        server.start()
    except ModelSetupError as exc:
        raise ModelMissing(str(exc)) from None
    try:
        yield server
    finally:
        server.stop()
