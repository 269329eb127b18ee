"""The model server the evaluation talks to: llama.cpp's own server, from the xllamacpp wheel.

`LlamaServer(gguf, threads=..., ctx=...)` starts it in a child process on a free 127.0.0.1
port, waits until `/health` answers, and stops it on exit. Each agent of a side-by-side run
gets its own server with the same model file, so each keeps its own prefix cache.

Run as `python -m bench.real.server GGUF PORT THREADS CTX`, it is that child process.
"""

from __future__ import annotations

import hashlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ModelFile:
    name: str
    file: str
    sha256: str


MODELS: dict[str, ModelFile] = {
    "0.5b": ModelFile(
        "Qwen2.5-Coder-0.5B-Instruct Q4_K_M",
        "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    ),
    "1.5b": ModelFile(
        "Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
        "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    ),
}

# Where a model file is looked for, first match wins (SMOL_BENCH_MODEL_DIR comes first).
MODEL_DIRS = (
    Path.home() / ".cache" / "smol-instruments" / "models",
    Path.home() / ".cache" / "smol-dev-models",
)


class ModelMissing(Exception):
    """No verified model file: the message says where it was looked for."""


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def find_model(choice: str, explicit: str | None = None, *, verify: bool = True) -> Path:
    """The GGUF file for `choice` (0.5b or 1.5b), checked against its pinned SHA-256."""
    model = MODELS[choice]
    env_dir = os.environ.get("SMOL_BENCH_MODEL_DIR")
    candidates = (
        [Path(explicit)]
        if explicit
        else [Path(d) / model.file for d in ([env_dir] if env_dir else []) + list(MODEL_DIRS)]
    )
    for path in candidates:
        if path.is_file():
            if verify and sha256_of(path) != model.sha256:
                raise ModelMissing(f"{path} is not {model.name}: its SHA-256 differs")
            return path
    where = ", ".join(str(p) for p in candidates)
    raise ModelMissing(f"no {model.name} file ({model.file}); looked in {where}")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LlamaServer:
    """llama.cpp's OpenAI-compatible server for one GGUF file, in a child process."""

    def __init__(self, gguf: Path, *, threads: int = 1, ctx: int = 8192, log: Path) -> None:
        self.gguf = gguf
        self.threads = threads
        self.ctx = ctx
        self.port = free_port()
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> LlamaServer:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "bench.real.server",
                    str(self.gguf),
                    str(self.port),
                    str(self.threads),
                    str(self.ctx),
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the model server exited; see {self.log}")
            try:
                with urllib.request.urlopen(f"{self.url}/health", timeout=2) as response:
                    if response.status == 200:
                        return self
            except OSError:
                pass
            time.sleep(0.5)
        self.__exit__()
        raise RuntimeError(f"the model server did not answer within 180 s; see {self.log}")

    def __exit__(self, *exc: object) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _serve(gguf: str, port: int, threads: int, ctx: int) -> None:
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = gguf
    params.n_ctx = ctx
    params.n_parallel = 1
    params.port = port
    params.hostnames = ["127.0.0.1"]
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.use_jinja = True  # the model's own chat template
    server = xllamacpp.Server(params)
    try:
        while True:
            time.sleep(3600)
    finally:
        del server


if __name__ == "__main__":
    gguf_arg, port_arg, threads_arg, ctx_arg = sys.argv[1:5]
    _serve(gguf_arg, int(port_arg), int(threads_arg), int(ctx_arg))
