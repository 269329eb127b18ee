"""Where patches persist: one JSON file each, written atomically, read back at start-up.

Persistence only. The store lives in the user's own state directory, never in the repository:
`<state>/patches/<key>/` (`$XDG_STATE_HOME/smol-instruments` or `~/.local/state/smol-instruments`
on Linux, the platform's equivalent elsewhere), `<key>` derived from the repository's real
path, with that path written beside the patches in `repository` so a listing can say whose
they are; directories 0700. Nothing the repository holds (a `.git` file naming another git
directory, a link in `.git/`) can move it. Patches an earlier version kept in
`.git/smol-instruments/patches/` are not loaded: a patch file is data a repository could have
planted. The patch service still re-validates what is loaded.

Also the two text primitives every writer of repository files shares, link-safe through
base/beneath.py: a byte-exact `read_text` and an atomic `write_text`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from pathlib import Path

from ..base.beneath import Beneath, Refused
from ..base.userdirs import state_dir
from .model import Patch

log = logging.getLogger(__name__)

#: The file beside a repository's patches that names the repository.
OWNER_FILE = "repository"


def read_text(tree: Beneath, path: str) -> str | None:
    """A file's text exactly as stored (line endings kept), None when it does not exist."""
    try:
        data = tree.read_bytes(path)
    except FileNotFoundError:
        return None
    return data.decode("utf-8", errors="surrogateescape")


def write_text(tree: Beneath, path: str, text: str, *, create: bool = False) -> None:
    """Replace the file with `text` atomically (mode kept, no link followed); `create` makes
    a new file and its missing folders, otherwise its folder must still be there."""
    tree.write_atomic(path, text.encode("utf-8", errors="surrogateescape"), parents=create)


def stores_root() -> Path:
    """The directory holding every repository's patch store."""
    return state_dir() / "patches"


def store_key(root: Path) -> str:
    """The store's name for the repository at `root`: its folder name and a hash of its path."""
    real = str(Path(root).resolve())
    name = re.sub(r"[^A-Za-z0-9._-]", "_", Path(real).name)[:40].lstrip(".") or "root"
    return f"{name}-{hashlib.sha256(real.encode('utf-8', 'surrogateescape')).hexdigest()[:16]}"


def list_stores() -> list[tuple[str, str | None]]:
    """(key, the repository path written beside it) of every store under `stores_root()`."""
    base = stores_root()
    if not base.is_dir():
        return []
    found = []
    with Beneath(base) as tree:
        for key in tree.listdir():
            if tree.kind(key) != "dir":
                continue
            try:
                owner: str | None = tree.read_bytes(f"{key}/{OWNER_FILE}").decode().strip()
            except (OSError, Refused, UnicodeDecodeError):
                owner = None
            found.append((key, owner))
    return found


class PatchStore:
    """Patches as `<key>/<id>.json` beneath `base`; no base means nothing persists."""

    def __init__(self, base: Path | None, key: str = "default", owner: str | None = None) -> None:
        self.base = base
        self.key = key
        self.owner = owner
        self._tree: Beneath | None = None

    @classmethod
    def for_repository(cls, root: Path) -> PatchStore:
        """The store of the repository at `root`, in the user's state directory."""
        base = stores_root()
        real = Path(root).resolve()
        if base.resolve().is_relative_to(real):
            # A repository holding the state directory (the home opened as a project) could
            # write its own store: keep its patches in memory only.
            log.warning("not persisting patches: the state directory %s is inside %s", base, real)
            return cls(None)
        return cls(base, store_key(real), str(real))

    @property
    def directory(self) -> Path | None:
        return self.base / self.key if self.base is not None else None

    def _opened(self) -> Beneath:
        """The base directory, created 0700 and opened once; the key folder 0700 beneath it."""
        assert self.base is not None
        if self._tree is None:
            self.base.mkdir(mode=0o700, parents=True, exist_ok=True)
            self._tree = Beneath(self.base)
            self._tree.makedirs(self.key, mode=0o700)
            if self.owner is not None and self._tree.kind(f"{self.key}/{OWNER_FILE}") is None:
                self._tree.write_atomic(f"{self.key}/{OWNER_FILE}", f"{self.owner}\n".encode())
        return self._tree

    def save(self, patch: Patch) -> None:
        if self.base is None:
            return
        try:
            tree = self._opened()
            data = json.dumps(patch.to_dict()).encode()
            tree.write_atomic(f"{self.key}/{patch.id}.json", data, mode=0o600)
        except (OSError, Refused) as exc:  # a convenience: the service's memory stays authoritative
            log.warning("could not persist patch %s: %s", patch.id, exc)

    def remove(self, patch_id: str) -> None:
        if self.base is None:
            return
        try:
            self._opened().unlink(f"{self.key}/{patch_id}.json", missing_ok=True)
        except (OSError, Refused) as exc:
            log.warning("could not remove the stored patch %s: %s", patch_id, exc)

    def load(self) -> list[Patch]:
        """Every readable patch file; one log line for each that is not a patch."""
        if self.base is None or not (self.base / self.key).is_dir():
            return []
        try:
            tree = self._opened()
            names = [n for n in tree.listdir(self.key) if n.endswith(".json")]
        except (OSError, Refused) as exc:
            log.warning("cannot read the patch store %s: %s", self.directory, exc)
            return []
        patches = []
        for name in names:
            try:
                data = tree.read_bytes(f"{self.key}/{name}")  # a link is refused, not followed
                patch = Patch.from_dict(json.loads(data.decode("utf-8")))
                if name[: -len(".json")] != patch.id:
                    raise ValueError(f"it holds patch {patch.id!r}")
            except (OSError, Refused, ValueError, KeyError, TypeError, AttributeError) as exc:
                why = exc.message if isinstance(exc, Refused) else exc
                log.warning("ignoring the patch file %s: %s", name, why)
                continue
            patches.append(patch)
        return patches
