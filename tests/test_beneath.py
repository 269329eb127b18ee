"""Link-safe file operations (base/beneath.py), checked by their effect on real files.

Every operation is tried against a symbolic link as the final component, as a parent, a parent
swapped for a link between a check and the use (from a hook, no sleeps), `..`, absolute paths
and `/proc/self` magic links, with openat2 and with the per-component walk macOS and older
kernels get. Each attack has a control: a plain `open` of the same path follows the link, so
the refusal is what kept the marker outside unwritten and the secret unread.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from smol_instruments.base import beneath as beneath_module
from smol_instruments.base.beneath import Beneath, Refused, parts_of
from smol_instruments.base.errors import ErrorType

SECRET = "BENEATH-SECRET-7f3a91"


@pytest.fixture(params=["openat2", "walk"])
def use_openat2(request: pytest.FixtureRequest) -> bool:
    if request.param == "openat2" and not beneath_module._OPENAT2.available():
        pytest.skip("this kernel has no openat2")
    return request.param == "openat2"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory outside the tree with a secret in it, as `~/.ssh` would be."""
    place = tmp_path / "outside"
    place.mkdir()
    (place / "id_rsa").write_text(SECRET)
    (place / ".bashrc").write_text("# bashrc\n")
    return place


@pytest.fixture
def root(tmp_path: Path, outside: Path) -> Path:
    tree = tmp_path / "repo"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "mod.py").write_text("x = 1\n")
    (tree / "pkg" / "id_rsa").write_text("not the secret\n")
    (tree / "link").symlink_to(outside)  # a folder link leading out
    (tree / "key").symlink_to(outside / "id_rsa")  # a file link leading out
    (tree / "inner").symlink_to("pkg")  # a link that stays inside: refused all the same
    return tree


@pytest.fixture
def tree(root: Path, use_openat2: bool) -> Iterator[Beneath]:
    with Beneath(root, use_openat2=use_openat2) as opened:
        yield opened


def untouched(outside: Path) -> None:
    assert sorted(p.name for p in outside.iterdir()) == [".bashrc", "id_rsa"]
    assert (outside / "id_rsa").read_text() == SECRET
    assert (outside / ".bashrc").read_text() == "# bashrc\n"


def refused(call: Callable[[], object], link: str | None) -> Refused:
    with pytest.raises(Refused) as caught:
        call()
    error = caught.value
    assert error.error == ErrorType.PATH_OUTSIDE_REPO
    assert error.recovery_suggestion
    if link is not None:
        assert error.component == link and f"{link!r} is a symbolic link" in error.message
    return error


def swap_for_link(root: Path, folder: str, target: Path) -> None:
    """What a contained command does: move the folder away and put a link in its place."""
    os.rename(root / folder, root / f"{folder}.moved")
    (root / folder).symlink_to(target)


# --- the controls: a plain open follows every one of these links ------------------------------


def test_control_plain_open_follows_the_links(root: Path, outside: Path) -> None:
    assert (root / "link" / "id_rsa").read_text() == SECRET
    assert (root / "key").read_text() == SECRET
    (root / "link" / "marker").write_text("written through")
    assert (outside / "marker").exists()


# --- each operation against a link as the final component and as a parent --------------------

OPERATIONS: dict[str, Callable[[Beneath, str], object]] = {
    "read_bytes": lambda t, p: t.read_bytes(p),
    "open_file": lambda t, p: t.open_file(p).close(),
    "lstat": lambda t, p: t.lstat(p),
    "listdir": lambda t, p: t.listdir(p),
    "makedirs": lambda t, p: t.makedirs(p),
    "write_atomic": lambda t, p: t.write_atomic(p, b"pwned\n"),
    "unlink": lambda t, p: t.unlink(p),
    "readlink": lambda t, p: t.readlink(p),
}


@pytest.mark.parametrize("operation", OPERATIONS)
def test_a_symlinked_parent_is_refused(
    operation: str, tree: Beneath, root: Path, outside: Path
) -> None:
    for path, link in (
        ("link/id_rsa", "link"),
        ("link/new/marker", "link"),
        ("inner/mod.py", "inner"),
    ):
        refused(lambda path=path: OPERATIONS[operation](tree, path), link)
    untouched(outside)
    assert (root / "pkg" / "mod.py").read_text() == "x = 1\n"


@pytest.mark.parametrize("operation", ["read_bytes", "open_file", "listdir", "write_atomic"])
def test_a_symlinked_final_component_is_refused(
    operation: str, tree: Beneath, root: Path, outside: Path
) -> None:
    for path in ("key", "link", "inner"):
        refused(lambda path=path: OPERATIONS[operation](tree, path), path)
    untouched(outside)
    assert (root / "key").is_symlink() and (root / "link").is_symlink()


def test_a_final_link_is_described_and_removed_itself_never_followed(
    tree: Beneath, root: Path, outside: Path
) -> None:
    assert stat.S_ISLNK(tree.lstat("key").st_mode)
    assert tree.kind("key") == "link" and tree.kind("link/id_rsa") is None
    assert tree.readlink("key") == str(outside / "id_rsa")
    tree.unlink("key")
    assert not os.path.lexists(root / "key")
    untouched(outside)


@pytest.mark.parametrize("path", ["../outside/id_rsa", "pkg/../../outside/id_rsa", ".."])
def test_dot_dot_is_refused_before_anything_is_opened(
    path: str, tree: Beneath, outside: Path
) -> None:
    for operation in OPERATIONS.values():
        error = refused(lambda operation=operation: operation(tree, path), None)
        assert "'..' climbs out" in error.message
    untouched(outside)


def test_absolute_paths_are_refused(tree: Beneath, outside: Path) -> None:
    for operation in OPERATIONS.values():
        error = refused(lambda operation=operation: operation(tree, str(outside / "id_rsa")), None)
        assert "absolute paths" in error.message
    untouched(outside)


def test_proc_self_magic_links_are_refused(tree: Beneath, root: Path, outside: Path) -> None:
    held = os.open(outside / "id_rsa", os.O_RDONLY)
    try:
        (root / "self").symlink_to("/proc/self")
        (root / "fd").symlink_to(f"/proc/self/fd/{held}")
        # The control: through either link a plain open reads the secret.
        assert (root / "self" / "fd" / str(held)).read_text() == SECRET
        assert (root / "fd").read_text() == SECRET
        refused(lambda: tree.read_bytes(f"self/fd/{held}"), "self")
        refused(lambda: tree.read_bytes("self/environ"), "self")
        refused(lambda: tree.read_bytes("fd"), "fd")
        refused(lambda: tree.write_atomic("fd", b"pwned"), "fd")
    finally:
        os.close(held)
    untouched(outside)


# --- a parent swapped for a link between the check and the use --------------------------------


def checked(root: Path, path: str) -> str:
    """A check by name, as the path jail does: the path resolves inside the root, no link."""
    resolved = (root / path).resolve()
    assert resolved == root / path and resolved.is_relative_to(root)
    return path


@pytest.mark.parametrize("operation", OPERATIONS)
def test_a_parent_swapped_after_the_check_is_refused(
    operation: str, tree: Beneath, root: Path, outside: Path
) -> None:
    path = checked(root, "pkg/id_rsa")
    swap_for_link(root, "pkg", outside)
    assert (root / path).read_text() == SECRET  # the control: by name, it now leads out
    refused(lambda: OPERATIONS[operation](tree, path), "pkg")
    untouched(outside)


def test_a_parent_swapped_during_the_walk_is_not_followed(
    root: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The per-component walk holds each directory's descriptor: a swap after `pkg` was
    opened leaves the walk in the real folder (moved, still inside), never in the link's."""
    real_open = os.open
    swapped: list[str] = []

    def open_then_swap(
        path: str, flags: int, mode: int = 0o777, *, dir_fd: int | None = None
    ) -> int:
        fd = real_open(path, flags, mode, dir_fd=dir_fd)
        if path == "pkg" and not swapped:
            swap_for_link(root, "pkg", outside)
            swapped.append(path)
        return fd

    def restore() -> None:
        (root / "pkg").unlink()
        os.rename(root / "pkg.moved", root / "pkg")
        swapped.clear()

    with Beneath(root, use_openat2=False) as tree:
        monkeypatch.setattr(beneath_module.os, "open", open_then_swap)
        assert tree.read_bytes("pkg/id_rsa") == b"not the secret\n"
        restore()
        tree.write_atomic("pkg/mod.py", b"x = 2\n")
        monkeypatch.undo()
    assert swapped == ["pkg"]
    assert (root / "pkg.moved" / "mod.py").read_text() == "x = 2\n"
    untouched(outside)


# --- what the operations do when nothing is attacked ------------------------------------------


def test_write_atomic_creates_parents_keeps_the_mode_and_leaves_no_temp_file(
    tree: Beneath, root: Path
) -> None:
    script = root / "pkg" / "run.sh"
    script.write_text("old\n")
    script.chmod(0o751)
    tree.write_atomic("pkg/run.sh", b"new\n")
    assert script.read_text() == "new\n" and stat.S_IMODE(script.stat().st_mode) == 0o751
    with pytest.raises(FileNotFoundError):  # a folder is made only when asked for
        tree.write_atomic("a/b/c.txt", b"deep\n")
    assert not (root / "a").exists()
    tree.write_atomic("a/b/c.txt", b"deep\n", parents=True, dir_mode=0o700)
    assert (root / "a/b/c.txt").read_bytes() == b"deep\n"
    assert stat.S_IMODE((root / "a").stat().st_mode) == 0o700
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE((root / "a/b/c.txt").stat().st_mode) == 0o666 & ~umask
    tree.write_atomic("secret.txt", b"s", mode=0o600)
    assert stat.S_IMODE((root / "secret.txt").stat().st_mode) == 0o600
    assert not [p for p in root.rglob("*.smol-tmp")]


def test_a_failed_write_keeps_the_original_and_removes_its_temporary_file(
    tree: Beneath, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_rename(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(beneath_module.os, "replace", no_rename)
    with pytest.raises(OSError, match="No space left"):
        tree.write_atomic("pkg/mod.py", b"half\n")
    assert (root / "pkg" / "mod.py").read_text() == "x = 1\n"
    assert sorted(p.name for p in (root / "pkg").iterdir()) == ["id_rsa", "mod.py"]


def test_reads_refuse_fifos_without_blocking_and_say_what_a_directory_is(
    tree: Beneath, root: Path
) -> None:
    os.mkfifo(root / "pipe")  # an open for reading would wait for a writer forever
    error = refused(lambda: tree.read_bytes("pipe"), None)
    assert "FIFO" in error.message
    with pytest.raises(IsADirectoryError):
        tree.read_bytes("pkg")
    with pytest.raises(FileNotFoundError):
        tree.read_bytes("pkg/missing.py")
    with pytest.raises(NotADirectoryError):
        tree.read_bytes("pkg/mod.py/x")
    assert tree.kind("pipe") == "other" and tree.kind("pkg") == "dir"


def test_read_prefix_reads_a_regular_file_up_to_one_past_the_limit_and_nothing_else(
    tree: Beneath, root: Path, outside: Path
) -> None:
    """What changes.py and the local validation read a view and the repository with: None for
    anything that is not a regular file reached without a link, never the secret."""
    (root / "pkg" / "long.txt").write_text("0123456789")
    os.mkfifo(root / "pipe")
    assert tree.read_prefix("pkg/long.txt", 4) == b"01234"  # longer than the limit: 5 bytes
    assert tree.read_prefix("pkg/long.txt", 100) == b"0123456789"
    for path in ("key", "link/id_rsa", "inner/mod.py", "pipe", "pkg", "pkg/missing", "../x"):
        assert tree.read_prefix(path, 100) is None, path
    assert (root / "link" / "id_rsa").read_text() == SECRET  # the control: through the link


def test_list_unlink_and_the_root_itself(tree: Beneath, root: Path) -> None:
    assert tree.listdir() == ["inner", "key", "link", "pkg"]
    assert tree.listdir("pkg") == ["id_rsa", "mod.py"]
    assert stat.S_ISDIR(tree.lstat(".").st_mode)
    tree.unlink("pkg/id_rsa")
    tree.unlink("pkg/id_rsa", missing_ok=True)
    tree.unlink("gone/x", missing_ok=True)
    with pytest.raises(FileNotFoundError):
        tree.unlink("pkg/id_rsa")
    with pytest.raises(IsADirectoryError):
        tree.write_atomic(".", b"x")
    assert tree.listdir("pkg") == ["mod.py"]


def test_parts_of_normalises_and_refuses() -> None:
    assert parts_of("./a//b/") == ("a", "b")
    assert parts_of(".") == ()
    for bad in ("/etc/passwd", "a/../../b", "a\x00b"):
        with pytest.raises(Refused):
            parts_of(bad)


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet="ab./\x00~", max_size=12))
def test_any_path_is_read_or_refused_never_followed_out(
    tmp_path_factory: pytest.TempPathFactory, path: str
) -> None:
    base = tmp_path_factory.getbasetemp() / "beneath-any"
    if not base.exists():
        (base / "repo" / "a").mkdir(parents=True)
        (base / "out").mkdir()
        (base / "out" / "b").write_text(SECRET)
        (base / "repo" / "b").symlink_to(base / "out")
        (base / "repo" / "a" / "b").write_text("inside")
    with Beneath(base / "repo") as tree:
        try:
            data = tree.read_bytes(path)
        except (Refused, OSError):
            return
    assert SECRET.encode() not in data
