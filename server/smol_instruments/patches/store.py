"""Where patches persist: one JSON file each, written atomically, read back at start-up.

Persistence only. The patch service decides what is stored and re-validates what is loaded
(the directory, `.git/smol-instruments/patches/`, can be written by other processes). Also
the two file primitives every writer here shares: a byte-exact `read_text` and `atomic_write`.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from pathlib import Path

from .model import Patch

log = logging.getLogger(__name__)


def read_text(path: Path) -> str | None:
    """A file's text exactly as stored (line endings kept), None when it does not exist."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    return data.decode("utf-8", errors="surrogateescape")


def atomic_write(path: Path, text: str) -> None:
    """Write through a temporary file in the same directory and rename it over the target."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = None
    try:
        mode = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        pass
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".smol-tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8", errors="surrogateescape"))
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


class PatchStore:
    """Patches as `<id>.json` files in `directory`; no directory means nothing persists."""

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory

    def save(self, patch: Patch) -> None:
        if self.directory is None:
            return
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            atomic_write(self.directory / f"{patch.id}.json", json.dumps(patch.to_dict()))
        except OSError as exc:  # a convenience: the service's memory stays authoritative
            log.warning("could not persist patch %s: %s", patch.id, exc)

    def remove(self, patch_id: str) -> None:
        if self.directory is not None:
            (self.directory / f"{patch_id}.json").unlink(missing_ok=True)

    def load(self) -> list[Patch]:
        """Every readable patch file; one log line for each that is not a patch."""
        if self.directory is None or not self.directory.is_dir():
            return []
        patches = []
        for file in sorted(self.directory.glob("*.json")):
            try:
                if file.is_symlink():
                    raise ValueError("the file is a symbolic link")
                patch = Patch.from_dict(json.loads(file.read_text(encoding="utf-8")))
                if file.stem != patch.id:
                    raise ValueError(f"it holds patch {patch.id!r}")
            except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
                log.warning("ignoring the patch file %s: %s", file.name, exc)
                continue
            patches.append(patch)
        return patches
