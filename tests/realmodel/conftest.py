"""The real-model tier: llama.cpp's server with the 0.5B model, behind the recording proxy.

One server for the whole session (loading the model takes seconds; its prefix cache is what
the tier checks). Without the model file the tier is skipped with the reason on a laptop, and
fails under CI (`CI` set), where the project's own setup must have fetched it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from bench.real.proxy import Call, RecordingProxy
from bench.real.server import LlamaServer, ModelMissing, find_model

MODEL = "0.5b"
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


@dataclass
class RealModel:
    proxy: RecordingProxy

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
    try:
        import xllamacpp  # noqa: F401 - only whether it is installed
    except ImportError:
        _unavailable("xllamacpp (llama.cpp's server) is not installed")
    log = ARTIFACTS / "realmodel-server.log"
    threads = int(os.environ.get("SMOL_REALMODEL_THREADS", "1"))  # the CPU is shared
    with LlamaServer(gguf, threads=threads, log=log) as server, RecordingProxy(server.url) as proxy:
        yield RealModel(proxy)
