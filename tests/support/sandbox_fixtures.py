"""Helpers for sandbox tests: a Docker engine or a clear skip, and working-tree snapshots.

`require_docker()` returns a client for an engine that has the sandbox image; without one the
test skips with the reason and the fix, except under CI (the `CI` variable set), where a
missing engine or image is a failure: CI must run the Docker backend for real
(`. .ci/docker.sh` starts an engine and builds the image).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from smol_instruments.patches.validation import SandboxUnavailable


def require_docker(image: str) -> Any:
    """A docker client with `image` present; skip (fail under CI) otherwise."""
    from smol_instruments.sandbox.docker import docker_client
    from smol_instruments.sandbox.image import ensure_available

    try:
        client = docker_client(timeout=10)
        ensure_available(client, image)
    except SandboxUnavailable as exc:
        reason = f"Docker sandbox unavailable: {exc}"
        if os.environ.get("CI"):
            pytest.fail(f"{reason} (CI is set: run `. .ci/docker.sh` before the tests)")
        pytest.skip(reason)
    return client


def tree_snapshot(root: Path) -> dict[str, str]:
    """Every file under `root` (`.git` included) by its hash, plus `git status --porcelain`.

    `--no-optional-locks` keeps git status itself from refreshing the index, so two snapshots
    of an untouched repository are equal byte for byte.
    """
    snapshot: dict[str, str] = {}
    for directory, subdirs, files in os.walk(root):
        subdirs.sort()
        for name in sorted(files):
            path = Path(directory) / name
            rel = str(path.relative_to(root))
            if path.is_symlink():
                snapshot[rel] = "link:" + os.readlink(path)
            else:
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                snapshot[rel] = f"{digest}:{oct(path.stat().st_mode)}"
        for name in subdirs:
            snapshot[str((Path(directory) / name).relative_to(root)) + "/"] = "dir"
    status = subprocess.run(
        ["git", "--no-optional-locks", "status", "--porcelain", "--untracked-files=all"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    snapshot["<git status>"] = status.stdout
    return snapshot
