"""Figures for link-safe host file operations (base/beneath.py) against plain ones.

`read_file` (the tool, end to end) and a patch accept (read, place, atomic write, record) are
each timed with the link-safe primitives they use and with plain path-based ones put in their
place (what the code did before: `os.stat` and `Path.read_bytes` by name in the jail and the read,
`tempfile.mkstemp` + `os.replace` by name for the write), alternating round by round. The bare primitives are reported too: one read and one
atomic write three folders deep, with openat2 and with the per-component walk.
"""

from __future__ import annotations

import os
import stat
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .figures import Figure, _median_alternating

DEPTH = "src/pkg/module"
SOURCE = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(75))  # 300 lines


def _plain_read_text(tree: Any, path: str) -> str | None:
    try:
        data = (tree.root / path).read_bytes()
    except FileNotFoundError:
        return None
    return data.decode("utf-8", errors="surrogateescape")


def _plain_write_text(tree: Any, path: str, text: str, *, create: bool = False) -> None:
    target = tree.root / path
    if create:
        target.parent.mkdir(parents=True, exist_ok=True)
    mode = target.stat().st_mode & 0o7777 if target.exists() else None
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".smol-tmp", dir=target.parent)
    with os.fdopen(fd, "wb") as handle:
        handle.write(text.encode("utf-8", errors="surrogateescape"))
        handle.flush()
        os.fsync(handle.fileno())
    if mode is not None:
        os.chmod(tmp, mode)
    os.replace(tmp, target)


def _plain_read_repo_text(ctx: Any, path: str, errors: str = "replace") -> tuple[str, str]:
    resolved = ctx.jail.resolve(path)
    resolved.stat()
    return ctx.jail.relative(resolved), resolved.read_bytes().decode("utf-8", errors=errors)


def _plain_refuse_special(jail: Any, path: str, relative: Path) -> None:
    try:
        mode = os.stat(jail.root / relative).st_mode
    except FileNotFoundError:
        return
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise ValueError(f"{path} is not a regular file")


@contextmanager
def _swapped(module: Any, **plain: Callable[..., Any]) -> Iterator[None]:
    saved = {name: getattr(module, name) for name in plain}
    for name, function in plain.items():
        setattr(module, name, function)
    try:
        yield
    finally:
        for name, function in saved.items():
            setattr(module, name, function)


def _timed(call: Callable[[], object], inner: int) -> Callable[[], float]:
    def run() -> float:
        start = time.perf_counter()
        for _ in range(inner):
            call()
        return (time.perf_counter() - start) / inner

    return run


def host_file_operations(quick: bool = False) -> list[Figure]:
    from smol_instruments.base.beneath import Beneath
    from smol_instruments.base.config import load_settings
    from smol_instruments.patches import service as service_module
    from smol_instruments.patches.service import PatchService
    from smol_instruments.patches.store import PatchStore
    from smol_instruments.safety.approval import DenyAllApprover
    from smol_instruments.safety.jail import PathJail
    from smol_instruments.tools import build_tools
    from smol_instruments.tools import files as files_module
    from smol_instruments.tools.base import ToolContext

    rounds, inner = (5, 20) if quick else (30, 100)
    figures: list[Figure] = []
    with tempfile.TemporaryDirectory(prefix="smol-bench-hostfs-") as tmp:
        root = Path(tmp) / "repo"
        (root / DEPTH).mkdir(parents=True)
        rel = f"{DEPTH}/code.py"
        (root / rel).write_text(SOURCE)
        settings = load_settings(None, sandbox_backend="none", phoenix_enabled=False)
        ctx = ToolContext.create(root, settings, approver=DenyAllApprover())
        read_file = build_tools(ctx)["read_file"]

        def safe_read() -> float:
            return _timed(lambda: read_file(path=rel, start_line=1, end_line=80), inner)()

        def plain_read() -> float:
            with (
                _swapped(files_module, read_repo_text=_plain_read_repo_text),
                _swapped(PathJail, _refuse_special=_plain_refuse_special),
            ):
                return _timed(lambda: read_file(path=rel, start_line=1, end_line=80), inner)()

        safe, plain = _median_alternating(safe_read, plain_read, rounds)
        figures.append(
            Figure(
                "hostfs_read_file",
                "`read_file` tool, 300-line file 3 folders deep: link-safe vs plain reads",
                safe * 1e6,
                "µs",
                plain * 1e6,
                1.15,
                "ratio",
                note=f"overhead {1e6 * (safe - plain):+.1f} µs per call",
            )
        )

        patches = PatchService(ctx.jail, PatchStore(Path(tmp) / "state", "repo"))

        def accept(plain_ops: bool) -> float:
            text = (root / rel).read_text()
            edited = text.replace("return x + 1\n", f"return x + {time.perf_counter_ns()}\n", 1)
            patch = patches.propose([(rel, text, edited)], "bench")
            start = time.perf_counter()
            if plain_ops:
                with _swapped(
                    service_module, read_text=_plain_read_text, write_text=_plain_write_text
                ):
                    outcome = patches.accept(patch.id)
            else:
                outcome = patches.accept(patch.id)
            elapsed = time.perf_counter() - start
            if not outcome.accepted:
                raise RuntimeError(f"the bench patch was not accepted: {outcome.to_dict()}")
            (root / rel).write_text(SOURCE)
            return elapsed

        safe, plain = _median_alternating(lambda: accept(False), lambda: accept(True), rounds * 2)
        figures.append(
            Figure(
                "hostfs_accept",
                "patch accept (one hunk, 300-line file, fsync'd): link-safe vs plain writes",
                safe * 1000,
                "ms",
                plain * 1000,
                1.15,
                "ratio",
                note=f"overhead {1000 * (safe - plain):+.2f} ms per accept",
            )
        )

        for label, use_openat2 in (("openat2", True), ("walk", False)):
            try:
                tree = Beneath(root, use_openat2=use_openat2)
            except OSError:
                continue  # no openat2 on this kernel
            with tree:
                safe, plain = _median_alternating(
                    _timed(lambda tree=tree: tree.read_bytes(rel), inner),
                    _timed(lambda: (root / rel).read_bytes(), inner),
                    rounds,
                )
            figures.append(
                Figure(
                    f"hostfs_read_{label}",
                    f"one read 3 folders deep ({label}) vs `Path.read_bytes`",
                    safe * 1e6,
                    "µs",
                    plain * 1e6,
                    target_on="report",
                )
            )
    return figures
