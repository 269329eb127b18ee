"""The path jail: no path escapes the repository, through the jail or through any tool.

The repository used here contains real symlinks pointing out (to /etc/passwd, /etc, a
directory beside the repository, chains, `..`, relative climbs, loops), a FIFO and a device
file. Every attempt must be refused with PATH_OUTSIDE_REPO, and no file outside may change.
"""

from __future__ import annotations

import hashlib
import os
import socket
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from conftest import make_repo, make_tools
from smol_instruments.base.config import Settings, load_settings
from smol_instruments.base.errors import ErrorType, ToolError
from smol_instruments.safety.approval import AutoApprover
from smol_instruments.safety.jail import PathJail
from smol_instruments.tools import RepoTool

ERROR_KEYS = {"error", "message", "tool", "context", "recovery_suggestion"}
SECRET = "TOP SECRET outside the repository\n"

Tools = dict[str, RepoTool]


def build_escape_repo(base: Path) -> tuple[Path, Path]:
    """A repository full of ways out, and the directory beside it that must stay untouched."""
    outside = base / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "secret.txt").write_text(SECRET)
    (outside / "sub" / "deep.txt").write_text(SECRET)
    sibling = base / "repo_evil"  # shares the repository's name as a string prefix
    sibling.mkdir()
    (sibling / "x.txt").write_text(SECRET)
    root = make_repo(base / "repo")
    links = {
        "link_passwd": "/etc/passwd",
        "link_etc": "/etc",
        "link_out": str(outside),
        "link_secret": str(outside / "secret.txt"),
        "chain2": "link_secret",
        "chain1": "chain2",
        "link_up": "..",
        "app/rel_out": "../../outside/secret.txt",
        "app/rel_dir_out": "../../outside",
        "loop_a": "loop_b",
        "loop_b": "loop_a",
        "link_devnull": "/dev/null",
        "link_git_hooks": ".git/hooks",
        "link_in": "app/calc.py",  # inside: allowed
        "link_app": "app",  # inside: allowed
    }
    for name, target in links.items():
        os.symlink(target, root / name)
    os.mkfifo(root / "pipe")
    try:
        os.mknod(root / "nulldev", stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except (PermissionError, OSError):
        pass  # no CAP_MKNOD: the device-file case is skipped below
    nested = root / "vendor" / "lib"
    make_repo(nested, {"lib.py": "x = 1\n"})
    return root, outside


def snapshot(*places: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    for place in places:
        if place.is_file():
            found[str(place)] = hashlib.sha256(place.read_bytes()).hexdigest()
            continue
        for dirpath, _, filenames in os.walk(place):
            for name in filenames:
                path = Path(dirpath) / name
                if path.is_symlink() or not path.is_file():
                    continue
                found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


class Escape:
    """The repository, its tools (approving everything) and the state outside it."""

    def __init__(self, base: Path, settings: Settings) -> None:
        self.root, self.outside = build_escape_repo(base)
        self.ctx, self.tools = make_tools(self.root, settings, AutoApprover())
        self.jail = self.ctx.jail
        self.watched = [
            self.outside,
            base / "repo_evil",
            self.root / ".git" / "config",
            self.root / ".git" / "hooks",
            Path("/etc/passwd"),
        ]
        self.before = snapshot(*self.watched)

    def assert_nothing_outside_changed(self) -> None:
        assert snapshot(*self.watched) == self.before
        assert not (self.root / ".git" / "hooks" / "pre-commit").exists()
        assert sorted(p.name for p in self.outside.iterdir()) == ["secret.txt", "sub"]


def clean_settings(mp: pytest.MonkeyPatch) -> Settings:
    for name in list(os.environ):
        if name.lower() in Settings.model_fields:
            mp.delenv(name, raising=False)
    return load_settings(None, sandbox_backend="none", phoenix_enabled=False)


@pytest.fixture(scope="module")
def shared_escape(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Escape]:
    """Built once: the refusal tests only read, so they can share one repository."""
    with pytest.MonkeyPatch.context() as mp:
        yield Escape(tmp_path_factory.mktemp("escape"), clean_settings(mp))


@pytest.fixture
def esc(shared_escape: Escape) -> Iterator[Escape]:
    yield shared_escape
    shared_escape.assert_nothing_outside_changed()
    assert shared_escape.ctx.patches.all() == []  # no refused write left a pending patch


@pytest.fixture
def own_escape(tmp_path: Path, settings: Settings) -> Iterator[Escape]:
    """A fresh repository for tests that write."""
    escape = Escape(tmp_path, settings)
    yield escape
    escape.assert_nothing_outside_changed()


def assert_outside(result: Any, tool: str | None = None) -> None:
    assert isinstance(result, dict), result
    assert set(result) >= ERROR_KEYS, result
    assert result["error"] == ErrorType.PATH_OUTSIDE_REPO, result
    assert result["recovery_suggestion"]
    if tool:
        assert result["tool"] == tool
    assert SECRET.strip() not in str(result)
    assert "root:x:0:0" not in str(result)


# Paths that name something outside the repository. `{root}`, `{outside}`, `{base}` are filled in.
ESCAPES = [
    "..",
    "../",
    "../..",
    "../outside/secret.txt",
    "a/../../x",
    "app/../../outside/secret.txt",
    "./../outside",
    "app/./../../outside/sub/deep.txt",
    "app/../link_out/secret.txt",
    "../" * 40 + "etc/passwd",
    "../repo_evil/x.txt",
    "/etc/passwd",
    "/etc",
    "/",
    "//etc/passwd",
    "/tmp",
    "{outside}/secret.txt",
    "{root}/../outside/secret.txt",
    "{base}/repo_evil/x.txt",
    "/proc/self/root/etc/passwd",
    "/dev/null",
    "/dev/zero",
    "/dev/stdin",
    "~",
    "~/",
    "~/.ssh/id_rsa",
    "~root",
    "~root/.bashrc",
    "~+/x",
    "link_passwd",
    "link_etc",
    "link_etc/passwd",
    "link_out",
    "link_out/secret.txt",
    "link_out/sub/deep.txt",
    "link_secret",
    "chain1",
    "link_up",
    "link_up/outside/secret.txt",
    "app/rel_out",
    "app/rel_dir_out/secret.txt",
    "link_app/rel_out",
    "loop_a",
    "link_devnull",
    "pipe",
    " ../outside/secret.txt",
    "\t/etc/passwd\n",
]

NUL_PATHS = ["app/calc.py\x00", "\x00", "../\x00/etc/passwd", "link_passwd\x00.txt"]

# Text that looks like a way out but is a literal (missing) name inside the repository.
LITERALS = [
    "..%2f..%2fetc%2fpasswd",
    "%2e%2e/%2e%2e/etc/passwd",
    "..%2F..%2F",
    "..\\..\\etc\\passwd",
    "..%5c..%5cetc%5cpasswd",
    "app\\..\\..\\outside\\secret.txt",
    "....//....//etc/passwd",
    "...",
    "app/~/x",
    "file:///etc/passwd",
    "$HOME/.bashrc",
    "`cat /etc/passwd`",
]


def fill(path: str, esc: Escape) -> str:
    return (
        path.replace("{root}", str(esc.root))
        .replace("{outside}", str(esc.outside))
        .replace("{base}", str(esc.root.parent))
    )


# --- the jail itself -------------------------------------------------------------------------


def test_corpus_is_large_enough() -> None:
    assert len(ESCAPES) + len(NUL_PATHS) + len(LITERALS) >= 40


@pytest.mark.parametrize("path", ESCAPES)
def test_jail_refuses(esc: Escape, path: str) -> None:
    with pytest.raises(ToolError) as info:
        esc.jail.resolve(fill(path, esc))
    assert info.value.error == ErrorType.PATH_OUTSIDE_REPO
    assert "refused" in info.value.message
    assert not esc.jail.contains(fill(path, esc))


@pytest.mark.parametrize("path", NUL_PATHS)
def test_jail_refuses_nul_bytes(esc: Escape, path: str) -> None:
    with pytest.raises(ToolError) as info:
        esc.jail.resolve(path)
    assert info.value.error == ErrorType.PATH_OUTSIDE_REPO
    assert "NUL" in info.value.message


@pytest.mark.parametrize("path", LITERALS)
def test_jail_treats_encodings_literally(esc: Escape, path: str) -> None:
    resolved = esc.jail.resolve(path)
    assert resolved == esc.root or esc.root in resolved.parents
    assert not resolved.exists()


@pytest.mark.parametrize(
    "path", ["app/calc.py", "./app/calc.py", "app/../app/calc.py", "link_in", "link_app/main.py"]
)
def test_jail_allows_inside(esc: Escape, path: str) -> None:
    resolved = esc.jail.resolve(path)
    assert esc.root in resolved.parents
    assert esc.jail.relative(resolved).startswith("app/")


def test_jail_allows_absolute_inside_and_the_root(esc: Escape) -> None:
    assert esc.jail.resolve(str(esc.root / "README.md")) == esc.root / "README.md"
    assert esc.jail.resolve(".") == esc.root
    assert esc.jail.relative(esc.root) == "."


def test_jail_long_paths(esc: Escape) -> None:
    with pytest.raises(ToolError) as info:
        esc.jail.resolve("a/" * 3000)
    assert info.value.error == ErrorType.INVALID_ARGUMENT
    with pytest.raises(ToolError) as info:
        esc.jail.resolve("x" * 300)  # one component longer than NAME_MAX
    assert info.value.error == ErrorType.PATH_OUTSIDE_REPO


def test_jail_non_string(esc: Escape) -> None:
    for bad in (None, 3, b"app/calc.py", Path("app/calc.py"), ["app"]):
        with pytest.raises(ToolError) as info:
            esc.jail.resolve(bad)  # type: ignore[arg-type]
        assert info.value.error == ErrorType.INVALID_ARGUMENT


WRITE_REFUSED = [
    ".git/config",
    ".git/hooks/pre-commit",
    ".git/HEAD",
    ".git",
    ".GIT/config",
    "app/../.git/config",
    "./.git/objects/x",
    "link_git_hooks/pre-commit",
    ".",
    "{root}",
]


@pytest.mark.parametrize("path", WRITE_REFUSED)
def test_jail_refuses_writes_into_git(esc: Escape, path: str) -> None:
    with pytest.raises(ToolError) as info:
        esc.jail.resolve(fill(path, esc), for_write=True)
    assert info.value.error == ErrorType.PATH_OUTSIDE_REPO


def test_reading_git_config_is_allowed(esc: Escape) -> None:
    assert esc.jail.resolve(".git/config") == esc.root / ".git" / "config"


def test_device_file_inside_repo_refused(esc: Escape) -> None:
    if not (esc.root / "nulldev").exists():
        pytest.skip("cannot create device files here")
    with pytest.raises(ToolError) as info:
        esc.jail.resolve("nulldev")
    assert info.value.error == ErrorType.PATH_OUTSIDE_REPO
    assert "device" in info.value.message
    assert_outside(esc.tools["read_file"](path="nulldev"), "read_file")


def test_socket_inside_repo_refused(tmp_path: Path) -> None:
    short = Path("/tmp") / f"jail-sock-{os.getpid()}"
    short.mkdir()
    try:
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(short / "s"))
        try:
            with pytest.raises(ToolError) as info:
                PathJail(short).resolve("s")
            assert info.value.error == ErrorType.PATH_OUTSIDE_REPO
        finally:
            sock.close()
    finally:
        (short / "s").unlink(missing_ok=True)
        short.rmdir()


def test_fifo_is_refused_without_hanging(esc: Escape) -> None:
    # If the FIFO were opened, read() would block forever (nobody writes to it).
    for name, args in [
        ("read_file", {"path": "pipe"}),
        ("read_file_snippet", {"path": "pipe", "pattern": "x"}),
        ("propose_patch", {"path": "pipe", "old_text": "a", "new_text": "b"}),
        ("propose_patch", {"path": "pipe", "old_text": "", "new_text": "b"}),
    ]:
        assert_outside(esc.tools[name](**args), name)
    # Tools that walk the tree skip it rather than block on it.
    assert "pipe" not in esc.tools["list_files"](limit=1000).get("files", [])
    assert esc.tools["rg_search"](pattern="anything at all").get("error") == ErrorType.NO_MATCH


# --- through the tools ---------------------------------------------------------------------


@pytest.mark.parametrize("path", ESCAPES)
def test_read_tools_refuse(esc: Escape, path: str) -> None:
    p = fill(path, esc)
    assert_outside(esc.tools["read_file"](path=p), "read_file")
    assert_outside(esc.tools["read_file"](path=p, start_line=1, end_line=5), "read_file")
    assert_outside(esc.tools["read_file_snippet"](path=p, pattern="root|SECRET"))


@pytest.mark.parametrize("path", ESCAPES)
def test_git_tools_refuse(esc: Escape, path: str) -> None:
    p = fill(path, esc)
    assert_outside(esc.tools["git_diff"](path=p), "git_diff")
    assert_outside(esc.tools["git_log"](path=p), "git_log")


@pytest.mark.parametrize("path", ESCAPES)
def test_propose_patch_refuses(esc: Escape, path: str) -> None:
    p = fill(path, esc)
    assert_outside(esc.tools["propose_patch"](path=p, old_text="root", new_text="pwned"))
    assert_outside(esc.tools["propose_patch"](path=p, old_text="", new_text="pwned\n"))
    assert esc.ctx.patches.all() == []


@pytest.mark.parametrize("path", [*WRITE_REFUSED, "link_git_hooks/post-checkout"])
def test_propose_patch_into_git_refused(esc: Escape, path: str) -> None:
    p = fill(path, esc)
    assert_outside(esc.tools["propose_patch"](path=p, old_text="", new_text="#!/bin/sh\nid\n"))
    assert_outside(
        esc.tools["propose_patch"](path=p, old_text="[core]", new_text="[core]\n\thooksPath=/tmp")
    )
    assert esc.ctx.patches.all() == []


def test_propose_patch_into_nested_git_refused(own_escape: Escape) -> None:
    esc = own_escape
    result = esc.tools["propose_patch"](
        path="vendor/lib/.git/hooks/pre-commit", old_text="", new_text="#!/bin/sh\nid\n"
    )
    assert_outside(result)


@pytest.mark.parametrize("path", NUL_PATHS)
def test_tools_refuse_nul_bytes(esc: Escape, path: str) -> None:
    for name, args in [
        ("read_file", {"path": path}),
        ("read_file_snippet", {"path": path, "pattern": "x"}),
        ("git_diff", {"path": path}),
        ("git_log", {"path": path}),
        ("propose_patch", {"path": path, "old_text": "", "new_text": "x"}),
        ("list_files", {"pattern": path}),
        ("rg_search", {"pattern": "x", "glob": path}),
    ]:
        result = esc.tools[name](**args)
        assert set(result) >= ERROR_KEYS, (name, result)
        assert "NUL" in result["message"]


def test_tools_refuse_nul_bytes_with_path_outside_repo(esc: Escape) -> None:
    assert_outside(esc.tools["read_file"](path="../\x00/etc/passwd"), "read_file")


@pytest.mark.parametrize("path", LITERALS)
def test_tools_treat_encodings_literally(esc: Escape, path: str) -> None:
    result = esc.tools["read_file"](path=path)
    assert result["error"] == ErrorType.FILE_NOT_FOUND
    assert SECRET.strip() not in str(result) and "root:x:0:0" not in str(result)


LIST_PATTERNS = [
    "..",
    "../*",
    "../**",
    "../outside/*",
    "app/../../**",
    "**/../../outside/*",
    "/etc/*",
    "/",
    "{outside}/*",
    "~",
    "~/*",
    "~root/*",
    "link_etc",
    "link_out",
    "link_up",
    "app/rel_dir_out",
]


@pytest.mark.parametrize("pattern", LIST_PATTERNS)
def test_list_files_refuses(esc: Escape, pattern: str) -> None:
    assert_outside(esc.tools["list_files"](pattern=fill(pattern, esc)), "list_files")


@pytest.mark.parametrize(
    "pattern", ["link_out/*", "link_out/**", "link_etc/*", "link_up/**", "app/rel_dir_out/*", "**"]
)
def test_list_files_never_lists_through_links(esc: Escape, pattern: str) -> None:
    result = esc.tools["list_files"](pattern=pattern, limit=10_000)
    for path in result.get("files", []):
        assert not path.startswith(("/", "../", "link_out/", "link_etc/", "link_up/"))
        assert "rel_dir_out/" not in path
        assert (esc.root / path).resolve().is_relative_to(esc.root)


@pytest.mark.parametrize(
    "glob", [p for p in LIST_PATTERNS if p.startswith(("..", "/", "~", "{", "app/..", "**/.."))]
)
def test_rg_search_glob_refuses(esc: Escape, glob: str) -> None:
    assert_outside(esc.tools["rg_search"](pattern="root|SECRET", glob=fill(glob, esc)))


@pytest.mark.parametrize(
    "glob", [None, "**", "link_out/**", "link_etc/*", "link_passwd", "chain1", "app/rel_out"]
)
def test_rg_search_never_reads_through_links(esc: Escape, glob: str | None) -> None:
    result = esc.tools["rg_search"](pattern="TOP SECRET|root:x:0:0", glob=glob)
    # Nothing outside is ever read: either no match, or the glob itself is refused.
    assert result.get("error") in {ErrorType.NO_MATCH, ErrorType.PATH_OUTSIDE_REPO}, result


def unified(old_path: str, new_path: str, old: str = "TOP SECRET\n") -> str:
    minus = "" if old_path == "/dev/null" else f"-{old}"
    count = "0,0" if old_path == "/dev/null" else "1"
    return f"--- {old_path}\n+++ {new_path}\n@@ -{count} +1 @@\n{minus}+pwned\n"


UNIFIED_ESCAPES = [
    unified("a/../outside/secret.txt", "b/../outside/secret.txt"),
    unified("../outside/secret.txt", "../outside/secret.txt"),
    unified("{outside}/secret.txt", "{outside}/secret.txt"),
    unified("a/{outside}/secret.txt", "b/{outside}/secret.txt"),
    unified("/etc/passwd", "/etc/passwd", "root:x:0:0\n"),
    unified("a/link_out/secret.txt", "b/link_out/secret.txt"),
    unified("a/link_secret", "b/link_secret"),
    unified("a/chain1", "b/chain1"),
    unified("a/app/rel_out", "b/app/rel_out"),
    unified("a/link_up/outside/secret.txt", "b/link_up/outside/secret.txt"),
    unified("/dev/null", "b/../outside/new.txt"),
    unified("/dev/null", "b/link_out/new.txt"),
    unified("/dev/null", "b/.git/hooks/pre-commit"),
    unified("/dev/null", "b/link_git_hooks/pre-commit"),
    unified("a/.git/config", "b/.git/config", "[core]\n"),
    unified("~/.bashrc", "~/.bashrc"),
    unified("a/README.md", "b/../outside/secret.txt", "# Sample\n"),
    "diff --git a/README.md b/README.md\n" + unified("a/README.md", "b/../x", "# Sample\n"),
    unified("a/app/../../outside/secret.txt", "b/app/../../outside/secret.txt"),
    unified("a/pipe", "b/pipe"),
]


@pytest.mark.parametrize("diff", UNIFIED_ESCAPES)
def test_propose_patch_unified_refuses(esc: Escape, diff: str) -> None:
    result = esc.tools["propose_patch_unified"](diff=fill(diff, esc))
    assert_outside(result, "propose_patch_unified")
    assert esc.ctx.patches.all() == []


def test_inside_symlink_still_works_through_tools(own_escape: Escape) -> None:
    esc = own_escape
    result = esc.tools["read_file"](path="link_in")
    assert result["path"] == "app/calc.py"
    assert result["content"].startswith("def add")
    patch = esc.tools["propose_patch"](path="link_in", old_text="a - b", new_text="a + b")
    assert patch["files"] == ["app/calc.py"]
    assert esc.tools["apply_patch"](patch_id=patch["patch_id"])["applied"] is True
    assert (esc.root / "link_in").is_symlink()  # the link is kept, its target edited
    assert "a + b" in (esc.root / "app/calc.py").read_text()


# --- the property: no generated path escapes ----------------------------------------------------

COMPONENTS = [
    "..",
    ".",
    "a",
    "app",
    "calc.py",
    "link_out",
    "link_etc",
    "link_passwd",
    "link_up",
    "link_secret",
    "chain1",
    "loop_a",
    "link_app",
    "rel_out",
    "rel_dir_out",
    "pipe",
    ".git",
    "outside",
    "repo",
    "secret.txt",
    "etc",
    "passwd",
    "/",
    "//",
    "~",
    "~root",
    "\x00",
    "%2e%2e",
    "..%2f",
    "\\",
    "..\\..",
    " ",
    "",
]

component = st.one_of(st.sampled_from(COMPONENTS), st.text(max_size=6))
generated_paths = st.builds(
    lambda lead, parts, sep: lead + sep.join(parts),
    st.sampled_from(["", "", "/", "~", "./", "{root}/", "{outside}/"]),
    st.lists(component, min_size=1, max_size=8),
    st.sampled_from(["/", "/", "", "//"]),
)


def _inside(path: Path, root: Path) -> bool:
    real = Path(os.path.realpath(path))
    return (path == root or root in path.parents) and (real == root or root in real.parents)


@hsettings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(raw=generated_paths)
def test_no_generated_path_escapes(esc: Escape, raw: str) -> None:
    path = fill(raw, esc)
    try:
        resolved = esc.jail.resolve(path)
    except ToolError as exc:
        assert exc.error in {ErrorType.PATH_OUTSIDE_REPO, ErrorType.INVALID_ARGUMENT}
    else:
        assert _inside(resolved, esc.root), (path, resolved)
    try:
        write_target = esc.jail.resolve(path, for_write=True)
    except ToolError:
        pass
    else:
        assert _inside(write_target, esc.root)
        assert ".git" not in esc.jail.relative(write_target).split("/")[:1]
    result = esc.tools["read_file"](path=path)
    assert isinstance(result, dict)
    if "error" in result:
        assert set(result) >= ERROR_KEYS
    else:
        assert _inside(esc.root / result["path"], esc.root), (path, result["path"])
    text = str(result)
    assert "TOP SECRET" not in text and "root:x:0:0" not in text
