"""The real-model tier: the product's embedded llama.cpp server with the 0.5B model, behind
the recording proxy.

One server for the whole session (loading the model takes seconds; its prefix cache is what
the tier checks). Without the model file (`smol-instruments model pull qwen2.5-coder-0.5b`,
which `.ci/test` runs) the tier is skipped with the reason on a laptop, and fails under CI.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import pytest
from bench.real.proxy import Call, RecordingProxy
from bench.real.server import ModelMissing, find_model, model_server

MODEL = "0.5b"
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


@dataclass
class RealModel:
    proxy: RecordingProxy
    api_key: str
    gguf: Path

    @property
    def api_base(self) -> str:
        return self.proxy.api_base

    def mark(self) -> int:
        return len(self.proxy.records)

    def calls_since(self, mark: int) -> list[Call]:
        return self.proxy.since(mark)


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"real-model tier: {reason} (CI must fetch the model first)", pytrace=False)
    pytest.skip(f"real-model tier: {reason}")


@pytest.fixture(scope="session")
def real_model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealModel]:
    try:
        gguf = find_model(MODEL)
    except ModelMissing as exc:
        _unavailable(str(exc))
    log = ARTIFACTS / "realmodel-server.log"
    threads = int(os.environ.get("SMOL_REALMODEL_THREADS", "1"))  # the CPU is shared
    with ExitStack() as stack:
        try:
            server = stack.enter_context(model_server(gguf, threads=threads, ctx=8192, log=log))
        except ModelMissing as exc:
            _unavailable(str(exc))
        proxy = stack.enter_context(RecordingProxy(server.base_url))
        yield RealModel(proxy, server.api_key, gguf)
