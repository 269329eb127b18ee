"""What a command changed in its copy-on-write view, sorted for review (overlay.py).

When a contained command has ended, its view's upper layer holds all it wrote in the
repository: files (new or changed), whiteouts (0/0 character devices: deleted), opaque
directories (replaced as a whole: what the repository has below them is gone), links and
anything else. `classify` reads it and sorts every path into one of four kinds:

- **blocked**: a *protected place* — any path through `.git` (nested repositories too), and
  the files and folders that make something run when a folder is opened, entered or
  committed in (PROTECTED_NAMES) — whether it existed before or not. Never proposed, never
  written back; each is said ("created .vscode/tasks.json").
- **byproducts**: bytecode and the caches test runners and linters leave (BYPRODUCT_DIRS,
  BYPRODUCT_FILES, BYPRODUCT_SUFFIXES): dropped, counted.
- **ignored**: paths git ignores (`is_ignored`, git check-ignore: tracked files are never
  ignored). Dropped and counted; after the user approved the very command, written back
  (writeback.py).
- the rest: regular files created, changed or deleted become `Change`s, for the patch
  service to propose. What a patch cannot carry — a link, a mode change, a binary or
  oversized file, a special file, a file replacing a directory — is listed as not proposed.

Both trees are read without following a link: the walk opens one directory at a time with
O_NOFOLLOW from its parent's descriptor, and a file's contents are read through beneath.py
(from the tree's root descriptor, no link followed on the way). The upper layer is the command's work and
the repository the attacker's; either may hold a link where a directory was, and reading
through it would show the user (or the model) a file from anywhere.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .beneath import Beneath
from .overlay import OPAQUE_XATTRS, make_ours
from .places import byproduct, protected

#: Blocked paths named one by one; beyond, a count.
BLOCKED_LISTED = 20
#: A new protected folder with more files than this is said as one line with a count.
BLOCKED_NAMED_IN_A_FOLDER = 3

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC

#: file, dir, link, whiteout, other; `gone`: in the repository, no longer in the view.
Kind = str


@dataclass(frozen=True)
class Change:
    """One regular file as the command left it: `old` None = created, `new` None = deleted."""

    path: str
    old: str | None
    new: str | None


@dataclass
class Changes:
    """Everything one command (or one validation) changed, sorted (see the module's doc)."""

    files: list[Change] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)
    byproducts: int = 0
    ignored: list[str] = field(default_factory=list)  # the outermost ignored paths
    ignored_files: int = 0
    skipped: list[str] = field(default_factory=list)  # "path: why it is not proposed"

    @property
    def nothing(self) -> bool:
        return not (self.files or self.blocked or self.byproducts or self.ignored or self.skipped)


@dataclass
class _Node:
    rel: str
    kind: Kind
    mode: int = 0
    lower: Kind | None = None  # what the repository has at this path
    lower_mode: int = 0
    opaque: bool = False
    children: list[_Node] = field(default_factory=list)

    def walk(self) -> Iterator[_Node]:
        yield self
        for child in self.children:
            yield from child.walk()

    def files(self) -> int:
        return sum(1 for node in self.walk() if not _is_dir(node))


def _kind(mode: int, rdev: int = -1) -> Kind:
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISLNK(mode):
        return "link"
    if stat.S_ISCHR(mode) and rdev == 0:
        return "whiteout"
    return "other"


def _lstat(fd: int | None, name: str) -> os.stat_result | None:
    if fd is None:
        return None
    try:
        return os.stat(name, dir_fd=fd, follow_symlinks=False)
    except OSError:
        return None


def _opaque(fd: int) -> bool:
    for name in OPAQUE_XATTRS:
        try:
            if os.getxattr(fd, name) == b"y":
                return True
        except OSError:
            continue
    return False


def _scan(up: int, low: int | None, prefix: str, hides: bool) -> list[_Node]:
    """The upper layer below `up`, each path with what the repository has there (`low`);
    `hides`: an opaque directory above hides what the repository has here and not above."""
    names = sorted(os.listdir(up))
    nodes = [_node(up, low, prefix, name, hides) for name in names]
    if hides and low is not None:
        nodes += _gone(low, prefix, exclude=set(names))
    return nodes


def _node(up: int, low: int | None, prefix: str, name: str, hides: bool) -> _Node:
    st = os.stat(name, dir_fd=up, follow_symlinks=False)
    node = _Node(prefix + name, _kind(st.st_mode, st.st_rdev), st.st_mode)
    below = _lstat(low, name)
    if below is not None:
        node.lower, node.lower_mode = _kind(below.st_mode), below.st_mode
    lower = _open_at(low, name) if node.lower == "dir" else None
    try:
        fd = _open_at(up, name, ours=True) if node.kind == "dir" else None
        if fd is not None:
            try:
                node.opaque = hides or _opaque(fd)
                node.children = _scan(fd, lower, node.rel + "/", node.opaque)
            finally:
                os.close(fd)
        elif node.kind == "whiteout" and lower is not None:
            node.children = _gone(lower, node.rel + "/")
    finally:
        if lower is not None:
            os.close(lower)
    return node


def _open_at(parent: int | None, name: str, *, ours: bool = False) -> int | None:
    """The directory `name` below `parent`, not through a link; None where it cannot be
    opened. In the upper layer (`ours`) a directory the command made unreadable (mode 000)
    is made ours to read again: nothing runs in the view any more."""
    if parent is None:
        return None
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=parent)
    except PermissionError:
        if not ours:
            return None
    except OSError:
        return None
    try:
        make_ours(parent, name)
        return os.open(name, _DIR_FLAGS, dir_fd=parent)
    except OSError:
        return None


def _gone(low: int, prefix: str, exclude: set[str] | None = None) -> list[_Node]:
    """What the repository has below `low` that the view no longer shows."""
    nodes = []
    for name in sorted(os.listdir(low)):
        if exclude and name in exclude:
            continue
        st = os.stat(name, dir_fd=low, follow_symlinks=False)
        node = _Node(prefix + name, "gone", lower=_kind(st.st_mode), lower_mode=st.st_mode)
        fd = _open_at(low, name) if node.lower == "dir" else None
        if fd is not None:
            try:
                node.children = _gone(fd, node.rel + "/")
            finally:
                os.close(fd)
        nodes.append(node)
    return nodes


# --- sorting ---------------------------------------------------------------------------------

_KIND_WORDS = {"link": "a symbolic link", "dir": "a directory", "file": "a file"}


def _what(kind: Kind | None) -> str:
    return _KIND_WORDS.get(kind or "", "a special file")


def classify(
    root: Path, upper: Path, *, is_ignored: Callable[[list[str]], set[str]], limit: int
) -> Changes:
    """Sort what the view's `upper` layer holds against the repository at `root`.

    `is_ignored(paths)` answers which of `paths` git ignores (a directory as "dir/"); file
    contents are read up to `limit` bytes (a longer file is not proposed)."""
    with Beneath(upper) as up, Beneath(root) as low:
        nodes = _scan(up.fd, low.fd, "", False)
        return _Sorter(up, low, limit).sort(nodes, is_ignored)


def _is_dir(node: _Node) -> bool:
    return node.kind == "dir" or (node.kind in ("whiteout", "gone") and node.lower == "dir")


def _key(node: _Node) -> str:
    """How git is asked about `node`: a directory with a slash, unless the repository has
    something else there (git will not look beyond a link, and stops altogether if asked)."""
    return node.rel + "/" if _is_dir(node) and node.lower in (None, "dir") else node.rel


def _askable(nodes: list[_Node]) -> Iterator[_Node]:
    """Every path whose kind git's ignore rules decide (not protected, not a byproduct, not
    below what the repository has as a link or a file)."""
    for node in nodes:
        if protected(node.rel) or byproduct(node.rel):
            continue
        yield node
        if node.lower in (None, "dir"):
            yield from _askable(node.children)


class _Sorter:
    def __init__(self, up: Beneath, low: Beneath, limit: int) -> None:
        self.up, self.low, self.limit = up, low, limit
        self.changes = Changes()
        self.ignored: set[str] = set()

    def sort(self, nodes: list[_Node], is_ignored: Callable[[list[str]], set[str]]) -> Changes:
        asked = [_key(node) for node in _askable(nodes)]
        self.ignored = is_ignored(asked) if asked else set()
        for node in nodes:
            self.visit(node)
        blocked = self.changes.blocked
        if len(blocked) > BLOCKED_LISTED:
            blocked[BLOCKED_LISTED:] = [f"and {len(blocked) - BLOCKED_LISTED} more"]
        return self.changes

    def visit(self, node: _Node) -> None:
        if protected(node.rel):
            return self.block(node)
        if byproduct(node.rel):
            self.changes.byproducts += node.files()
            return None
        if _key(node) in self.ignored:
            self.changes.ignored.append(node.rel)
            return self.count_ignored(node)
        if node.kind == "dir":
            if node.lower not in (None, "dir"):
                self.skip(node, f"{_what(node.lower)} replaced by a directory")
            for child in node.children:
                self.visit(child)
        elif node.kind == "file":
            self.file(node)
        elif node.kind in ("whiteout", "gone"):
            self.deleted(node)
        elif node.kind == "link":
            replaced = f" (replacing {_what(node.lower)})"
            self.skip(node, "a symbolic link" + (replaced if node.lower else ""))
        else:
            self.skip(node, "a special file (a pipe, socket or device)")
        return None

    def block(self, node: _Node) -> None:
        """Say what the command did in a protected place, file by file; a new folder with
        many files (`git init`) as one line."""
        if node.kind == "dir" and node.lower is None and node.files() > BLOCKED_NAMED_IN_A_FOLDER:
            count = node.files()
            self.changes.blocked.append(
                f"created {node.rel}/"
                + (f" ({count} file{'' if count == 1 else 's'})" if count else "")
            )
        elif node.kind == "dir":
            for child in node.children:
                self.block(child)
        elif node.kind in ("whiteout", "gone"):
            if node.lower == "dir":
                self.changes.blocked.append(f"deleted {node.rel}/")
            else:
                self.changes.blocked.append(f"deleted {node.rel}")
        else:
            self.changes.blocked.append(f"{'changed' if node.lower else 'created'} {node.rel}")

    def count_ignored(self, node: _Node) -> None:
        for child in node.children:
            if protected(child.rel):
                self.block(child)
            elif byproduct(child.rel):
                self.changes.byproducts += child.files()
            else:
                self.count_ignored(child)
        if not _is_dir(node):
            self.changes.ignored_files += 1

    def skip(self, node: _Node, why: str) -> None:
        self.changes.skipped.append(f"{node.rel}: {why}")

    def file(self, node: _Node) -> None:
        if node.lower not in (None, "file"):
            return self.skip(node, f"a file replacing {_what(node.lower)}")
        new = self.up.read_prefix(node.rel, self.limit)
        old = self.low.read_prefix(node.rel, self.limit) if node.lower == "file" else None
        if new is None:
            return self.skip(node, "could not be read")
        executable = bool(node.mode & 0o111) and not (node.lower_mode & 0o111)
        if old == new:
            if (node.mode ^ node.lower_mode) & 0o111:
                self.skip(node, "a mode change (chmod), not proposed")
            return None
        texts = self.texts(node, old, new)
        if texts is not None:
            self.changes.files.append(Change(node.rel, *texts))
            if executable:
                self.skip(node, "made executable; the executable bit is not proposed")
        return None

    def deleted(self, node: _Node) -> None:
        if node.lower == "dir":
            for child in node.children:
                self.visit(child)
        elif node.lower == "file":
            old = self.low.read_prefix(node.rel, self.limit)
            texts = self.texts(node, old, None) if old is not None else None
            if texts is not None:
                self.changes.files.append(Change(node.rel, texts[0], None))
        elif node.lower is not None:
            self.skip(node, f"{_what(node.lower)} deleted, not proposed")

    def texts(
        self, node: _Node, old: bytes | None, new: bytes | None
    ) -> tuple[str | None, str | None] | None:
        """Both sides as text, or None (said) when one is binary or too large."""
        sides = [side for side in (old, new) if side is not None]
        if any(len(side) > self.limit for side in sides):
            self.skip(node, f"larger than {self.limit} bytes, not proposed")
            return None
        try:
            if any(b"\0" in side for side in sides):
                raise UnicodeDecodeError("utf-8", b"", 0, 1, "NUL byte")
            return (
                None if old is None else old.decode("utf-8"),
                None if new is None else new.decode("utf-8"),
            )
        except UnicodeDecodeError:
            self.skip(node, "a binary file, not proposed")
            return None
