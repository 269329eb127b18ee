"""The patch lifecycle: per-hunk accept and reject, offsets, stale hunks, persistence, refusals.

Every test drives the one state machine (patches/service.py) the way the tools, the command
line and the daemon do, and checks the effect on the files and on a reloaded service.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from smol_instruments.base.beneath import Beneath
from smol_instruments.base.errors import ErrorType, ToolError
from smol_instruments.patches import service as service_module
from smol_instruments.patches.diff import unified_diff
from smol_instruments.patches.model import FileChange, Patch, sha256_text, split_lines
from smol_instruments.patches.service import PatchService, diff_of
from smol_instruments.patches.store import (
    PatchStore,
    list_stores,
    read_text,
    store_key,
    write_text,
)
from smol_instruments.patches.view import patch_view
from smol_instruments.safety.jail import PathJail

# Two changes far enough apart to be two hunks: line 2 and line 11.
TEXT = "".join(f"line {n}\n" for n in range(1, 15))
FIRST = TEXT.replace("line 2\n", "line two\n")
BOTH = FIRST.replace("line 11\n", "line eleven\n")
SECOND = TEXT.replace("line 11\n", "line eleven\n")


def service(root: Path, persist: bool = True) -> PatchService:
    return PatchService(
        PathJail(root), PatchStore(root.parent / "state" if persist else None, "repo")
    )


def store_of(root: Path) -> Path:
    """Where `service(root)` keeps its patches: outside the repository, as the real store."""
    return root.parent / "state" / "repo"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "f.txt").write_text(TEXT)
    return repo


def two_hunks(patches: PatchService) -> Patch:
    patch = patches.propose([("f.txt", TEXT, BOTH)], "two changes")
    assert [(h.id, h.start) for h in patch.hunks] == [(0, 1), (1, 10)]
    return patch


# --- per-hunk accept and reject ----------------------------------------------------------------


def test_accepting_the_first_hunk_writes_only_it_and_keeps_the_second_pending(root: Path) -> None:
    patches = service(root)
    patch = two_hunks(patches)
    outcome = patches.accept(patch.id, [0])
    assert (outcome.accepted, outcome.files) == ([0], ["f.txt"])
    assert (root / "f.txt").read_text() == FIRST
    after = patches.require(patch.id)
    assert after.status == "pending"
    assert [(h.id, h.status) for h in after.hunks] == [(0, "accepted"), (1, "pending")]
    # The pending hunk is re-based on the new text: same id, its lines there.
    [change] = after.files
    assert change.base == FIRST and change.base_hash == sha256_text(FIRST)
    assert split_lines(FIRST)[after.hunks[1].start] == "line 11\n"
    patches.accept(patch.id, [1])
    assert (root / "f.txt").read_text() == BOTH
    assert patches.require(patch.id).status == "accepted"


def test_accepting_the_second_hunk_first(root: Path) -> None:
    patches = service(root)
    patch = two_hunks(patches)
    patches.accept(patch.id, [1])
    assert (root / "f.txt").read_text() == SECOND
    assert [h.status for h in patches.require(patch.id).hunks] == ["pending", "accepted"]
    patches.accept(patch.id, [0])
    assert (root / "f.txt").read_text() == BOTH


def test_a_hunk_that_changes_line_counts_rebases_its_sibling(root: Path) -> None:
    patches = service(root)
    grown = TEXT.replace("line 2\n", "line 2a\nline 2b\nline 2c\n").replace("line 12\n", "")
    patch = patches.propose([("f.txt", TEXT, grown)], "grow then shrink")
    patches.accept(patch.id, [0])
    after = patches.require(patch.id)
    assert after.hunks[1].start == 13  # was line 12 (index 11), moved down by two
    patches.accept(patch.id, [1])
    assert (root / "f.txt").read_text() == grown


def test_rejecting_one_hunk_leaves_the_other_pending_and_writes_nothing(root: Path) -> None:
    patches = service(root)
    patch = two_hunks(patches)
    outcome = patches.reject(patch.id, [0], reason="not this one")
    assert outcome.rejected == [0]
    assert (root / "f.txt").read_text() == TEXT
    after = patches.require(patch.id)
    assert [(h.status, h.reason) for h in after.hunks] == [
        ("rejected", "not this one"),
        ("pending", None),
    ]
    assert after.status == "pending"
    patches.accept(patch.id)  # what is left: the second hunk only
    assert (root / "f.txt").read_text() == SECOND
    assert patches.require(patch.id).status == "partial"


@pytest.mark.parametrize(
    ("decisions", "status"),
    [
        ([("accept", 0), ("accept", 1)], "accepted"),
        ([("reject", 0), ("reject", 1)], "rejected"),
        ([("accept", 1), ("reject", 0)], "partial"),
        ([("reject", 1), ("accept", 0)], "partial"),
    ],
)
def test_the_patch_status_is_derived_from_its_hunks(
    root: Path, decisions: list[tuple[str, int]], status: str
) -> None:
    patches = service(root)
    patch = two_hunks(patches)
    for verb, hunk in decisions:
        assert patches.require(patch.id).status == "pending"
        getattr(patches, verb)(patch.id, [hunk])
    assert patches.require(patch.id).status == status


def test_deciding_a_decided_hunk_or_an_unknown_one_is_refused(root: Path) -> None:
    patches = service(root)
    patch = two_hunks(patches)
    patches.accept(patch.id, [0])
    with pytest.raises(ToolError) as info:
        patches.reject(patch.id, [0])
    assert info.value.error == ErrorType.PATCH_NOT_PENDING
    with pytest.raises(ToolError) as info:
        patches.accept(patch.id, [7])
    assert info.value.error == ErrorType.INVALID_ARGUMENT
    assert "[1]" in (info.value.recovery_suggestion or "")  # says what is pending
    patches.accept(patch.id, [1])
    with pytest.raises(ToolError) as info:
        patches.accept(patch.id)
    assert info.value.error == ErrorType.PATCH_NOT_PENDING
    assert (root / "f.txt").read_text() == BOTH


# --- offsets and stale hunks -------------------------------------------------------------------


def test_a_hunk_applies_at_an_offset_when_lines_were_added_above(root: Path) -> None:
    patches = service(root)
    patch = two_hunks(patches)
    (root / "f.txt").write_text("header 1\nheader 2\n" + TEXT)
    patches.accept(patch.id)
    assert (root / "f.txt").read_text() == "header 1\nheader 2\n" + BOTH


def test_a_stale_hunk_does_not_block_its_sibling(root: Path) -> None:
    patches = service(root)
    patch = two_hunks(patches)
    edited = TEXT.replace("line 11\n", "line 11 edited by the user\n")
    (root / "f.txt").write_text(edited)
    outcome = patches.accept(patch.id)
    assert (outcome.accepted, outcome.stale) == ([0], [1])
    assert (root / "f.txt").read_text() == edited.replace("line 2\n", "line two\n")
    after = patches.require(patch.id)
    assert [h.status for h in after.hunks] == ["accepted", "stale"]
    assert after.status == "partial"
    assert "changed" in (after.hunks[1].reason or "")


def test_a_chosen_stale_hunk_writes_nothing_and_its_sibling_stays_pending(root: Path) -> None:
    patches = service(root)
    patch = two_hunks(patches)
    edited = TEXT.replace("line 11\n", "line 11 edited\n")
    (root / "f.txt").write_text(edited)
    outcome = patches.accept(patch.id, [1])
    assert (outcome.accepted, outcome.stale, outcome.files) == ([], [1], [])
    assert (root / "f.txt").read_text() == edited
    assert [h.status for h in patches.require(patch.id).hunks] == ["pending", "stale"]
    patches.accept(patch.id, [0])
    assert (root / "f.txt").read_text() == edited.replace("line 2\n", "line two\n")
    assert patches.require(patch.id).status == "partial"


def test_a_sibling_whose_region_changed_goes_stale_when_the_file_is_rebased(root: Path) -> None:
    patches = service(root)
    patch = two_hunks(patches)
    (root / "f.txt").write_text(TEXT.replace("line 11\n", "line 11 edited\n"))
    patches.accept(patch.id, [0])
    assert [h.status for h in patches.require(patch.id).hunks] == ["accepted", "stale"]


def test_creation_and_deletion(root: Path) -> None:
    (root / "gone.txt").write_text("bye\n")
    patches = service(root)
    patch = patches.propose(
        [("pkg/new.txt", None, "hello\n"), ("gone.txt", "bye\n", None)], "create and delete"
    )
    assert [h.id for h in patch.hunks] == [0, 1]
    patches.accept(patch.id, [1])
    assert not (root / "gone.txt").exists()
    assert not (root / "pkg").exists()
    (root / "pkg").mkdir()
    (root / "pkg/new.txt").write_text("someone was first\n")
    assert patches.accept(patch.id).stale == [0]
    assert (root / "pkg/new.txt").read_text() == "someone was first\n"


def test_a_failed_write_puts_back_every_file_and_says_so(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (root / "b.txt").write_text("b\n")
    patches = service(root)
    patch = patches.propose([("f.txt", TEXT, FIRST), ("b.txt", "b\n", "B\n")], "two files")
    real = service_module.write_text

    def full_disk(tree: Beneath, path: str, text: str, *, create: bool = False) -> None:
        if path == "b.txt" and text == "B\n":
            raise OSError(28, "No space left on device")
        real(tree, path, text, create=create)

    monkeypatch.setattr(service_module, "write_text", full_disk)
    outcome = patches.accept(patch.id)
    assert (outcome.accepted, outcome.failed) == ([], [0, 1])
    assert (root / "f.txt").read_text() == TEXT and (root / "b.txt").read_text() == "b\n"
    assert patches.require(patch.id).status == "failed"
    assert "No space left" in (patches.require(patch.id).reason or "")


def test_refresh_marks_stale_only_the_hunks_that_are_gone(root: Path) -> None:
    patches = service(root)
    patch = two_hunks(patches)
    (root / "f.txt").write_text(TEXT.replace("line 2\n", "line 2 edited\n"))
    assert patches.refresh(patch.id).stale == [0]
    assert [h.status for h in patches.require(patch.id).hunks] == ["stale", "pending"]


def test_wait_returns_once_no_hunk_is_pending(root: Path) -> None:
    import threading

    patches = service(root)
    patch = two_hunks(patches)
    waited: list[Patch | None] = []
    waiter = threading.Thread(target=lambda: waited.append(patches.wait(patch.id, 10)))
    waiter.start()
    patches.accept(patch.id, [0])
    waiter.join(0.3)
    assert waiter.is_alive()  # one hunk is still pending: no decision yet
    patches.reject(patch.id, [1])
    waiter.join(5)
    assert waited and waited[0] is not None and waited[0].status == "partial"
    cancel = threading.Event()
    cancel.set()
    other = patches.propose([("f.txt", BOTH, TEXT)], "back")
    still = patches.wait(other.id, 10, cancel)
    assert still is not None and still.status == "pending"


# --- persistence and what is loaded ------------------------------------------------------------


def test_a_reloaded_service_continues_where_the_last_one_stopped(root: Path) -> None:
    patch = two_hunks(service(root))
    service(root).accept(patch.id, [0])
    again = service(root)
    loaded = again.require(patch.id)
    assert [(h.id, h.status) for h in loaded.hunks] == [(0, "accepted"), (1, "pending")]
    again.accept(patch.id, [1])
    assert (root / "f.txt").read_text() == BOTH
    assert service(root).require(patch.id).status == "accepted"


def test_a_service_without_a_store_writes_no_patch_file(root: Path) -> None:
    service(root, persist=False).propose([("f.txt", TEXT, FIRST)], "x")
    assert sorted(p.name for p in root.iterdir()) == ["f.txt"]


def plant(root: Path, patch_id: str, path: str, old: str | None, new: str) -> Path:
    """A patch file written into the store's directory by some other process."""
    change = FileChange.between(path, old, new)
    store = store_of(root)
    store.mkdir(parents=True, exist_ok=True)
    file = store / f"{patch_id}.json"
    file.write_text(json.dumps(Patch(patch_id, "planted", [change]).to_dict()))
    return file


@pytest.mark.parametrize(
    "path",
    ["../outside.txt", "{outside}", "link_dir/outside.txt", "link_file", ".git/config"],
)
def test_a_planted_patch_with_a_path_outside_is_dropped_at_load(
    root: Path, tmp_path: Path, path: str, caplog: pytest.LogCaptureFixture
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("secret\n")
    (root / "link_dir").symlink_to(tmp_path)
    (root / "link_file").symlink_to(root / "f.txt")  # even a link that stays inside
    plant(root, "pevil1", path.format(outside=outside), "secret\n", "pwned\n")
    patches = service(root)
    assert patches.all() == []
    assert [r.message for r in caplog.records if "pevil1" in r.message]  # one line says why
    assert outside.read_text() == "secret\n"


def test_unreadable_patch_files_are_skipped_with_one_line_each(
    root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = store_of(root)
    store.mkdir(parents=True)
    (store / "pbroken.json").write_text("{not json")
    (store / "pmissing.json").write_text(json.dumps({"summary": "no id"}))
    good = plant(root, "pgood01", "f.txt", TEXT, FIRST)
    (store / "pother.json").write_text(good.read_text())  # a file named for another id
    forged = json.loads(good.read_text())
    forged["id"] = "pforged"
    forged["files"][0]["hunks"][0]["old"] = ["not in the base\n"]
    (store / "pforged.json").write_text(json.dumps(forged))
    patches = service(root)
    assert [p.id for p in patches.all()] == ["pgood01"]
    assert len([r for r in caplog.records if "ignoring the patch file" in r.message]) == 4


def test_a_patch_is_not_persisted_when_its_path_became_a_symlink(
    root: Path, tmp_path: Path
) -> None:
    patches = service(root)
    patch = patches.propose([("sub/new.txt", None, "x\n")], "new")
    (root / "sub").symlink_to(tmp_path)
    with pytest.raises(ToolError) as info:
        patches.accept(patch.id)
    assert info.value.error == ErrorType.PATH_OUTSIDE_REPO
    assert list(tmp_path.glob("new.txt")) == []


def test_new_ids_are_unique(root: Path) -> None:
    patches = service(root, persist=False)
    ids = {patches.propose([("f.txt", TEXT, FIRST)], "x").id for _ in range(300)}
    assert len(ids) == 300 and all(i.startswith("p") for i in ids)


def test_listeners_hear_every_change_and_a_broken_one_breaks_nothing(root: Path) -> None:
    patches = service(root)
    seen: list[tuple[str, str]] = []
    unsubscribe = patches.subscribe(lambda p: seen.append((p.id, p.status)))
    patches.subscribe(lambda p: 1 / 0)  # type: ignore[arg-type, func-returns-value]
    patch = two_hunks(patches)
    patches.accept(patch.id, [0])
    patches.reject(patch.id, [1])
    assert seen == [(patch.id, "pending"), (patch.id, "pending"), (patch.id, "partial")]
    unsubscribe()
    patches.propose([("f.txt", BOTH, TEXT)], "more")
    assert len(seen) == 3


# --- files, diffs and the editor's view --------------------------------------------------------


def test_write_text_keeps_mode_and_leaves_no_temp_files(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\necho old\n")
    script.chmod(0o755)
    with Beneath(tmp_path) as tree:
        write_text(tree, "run.sh", "#!/bin/sh\necho new\n")
    assert script.read_text() == "#!/bin/sh\necho new\n"
    assert stat.S_IMODE(script.stat().st_mode) == 0o755
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.sh"]


def test_write_text_failure_keeps_the_original(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "a.txt"
    target.write_text("original\n")

    def no_rename(*args: object, **kwargs: object) -> None:
        raise OSError("rename failed")

    monkeypatch.setattr(os, "replace", no_rename)
    with Beneath(tmp_path) as tree, pytest.raises(OSError, match="rename failed"):
        write_text(tree, "a.txt", "half-written\n")
    assert target.read_text() == "original\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]


def test_read_text_and_a_byte_exact_accept(root: Path) -> None:
    raw = b"crlf\r\nlatin1 \xe9\r\nno newline"
    (root / "f.bin").write_bytes(raw)
    with Beneath(root) as tree:
        text = read_text(tree, "f.bin")
        assert text is not None and read_text(tree, "missing") is None
    patches = service(root)
    patch = patches.propose([("f.bin", text, text.replace("crlf", "CRLF"))], "x")
    patches.accept(patch.id)
    assert (root / "f.bin").read_bytes() == raw.replace(b"crlf", b"CRLF")


def test_the_diffs_apply_with_git(root: Path) -> None:
    patches = service(root)
    patch = two_hunks(patches)
    subprocess.run(
        ["git", "apply", "-p1", "-"], cwd=root, input=diff_of(patch).encode(), check=True
    )
    assert (root / "f.txt").read_text() == BOTH
    (root / "f.txt").write_text(TEXT)
    patches.accept(patch.id, [0])
    pending = diff_of(patches.require(patch.id), pending=True)
    assert "-line 11\n+line eleven\n" in pending and "line two" not in pending.split("@@")[-1][:0]
    subprocess.run(["git", "apply", "-p1", "-"], cwd=root, input=pending.encode(), check=True)
    assert (root / "f.txt").read_text() == BOTH


def test_unified_diff_headers() -> None:
    created = unified_diff("n.py", None, "a\n")
    assert "new file mode 100644" in created and "--- /dev/null\n+++ b/n.py" in created
    deleted = unified_diff("d.py", "a\n", None)
    assert "deleted file mode 100644" in deleted and "--- a/d.py\n+++ /dev/null" in deleted
    assert unified_diff("same.py", "a\n", "a\n") == ""
    assert "-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n" in unified_diff(
        "f", "a\nb", "a\nc"
    )


def _offset(text: str, position: dict[str, int]) -> int:
    lines = split_lines(text)
    return sum(len(line) for line in lines[: position["line"]]) + position["character"]


def apply_view_edits(old: str, hunks: list[dict]) -> str:  # type: ignore[type-arg]
    """Apply the view's pending hunks as an editor applies TextEdits."""
    text = old
    pending = [h for h in hunks if h["status"] == "pending"]
    for hunk in sorted(pending, key=lambda h: _offset(old, h["range"]["start"]), reverse=True):
        start, end = _offset(old, hunk["range"]["start"]), _offset(old, hunk["range"]["end"])
        text = text[:start] + hunk["newText"] + text[end:]
    return text


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("a\nb\nc", "a\nb\nC"),  # the last line has no newline
        ("a\nb\nc", "a\nb\nc\nd"),
        ("a\nb\nc", "a\nb"),
        ("a\nb\nc\n", "a\nb\nc\nd\n"),
        ("a\nb\nc\n", "z\na\nb\nc\n"),
        ("a\nb\nc\n", "a\nc\n"),
        ("", "new file\n"),
        ("x\r\ny\r\n", "x\r\nY\r\n"),
        (
            "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\n",
            "ONE\ntwo\nthree\nfour\nfive\nsix\nseven\nEIGHT\n",
        ),
        ("héllo\nwörld", "héllo\nwörld!"),
    ],
)
def test_view_ranges_reproduce_the_new_text(tmp_path: Path, old: str, new: str) -> None:
    patch = Patch("p1", "s", [FileChange.between("f.txt", old, new)])
    [file] = patch_view(patch, tmp_path)["files"]
    assert apply_view_edits(old, file["hunks"]) == new
    assert file["baseHash"] == sha256_text(old)


def test_view_after_a_partial_accept(root: Path) -> None:
    patches = service(root)
    patch = two_hunks(patches)
    patches.accept(patch.id, [0])
    view = patch_view(patches.require(patch.id), root)
    [file] = view["files"]
    assert view["status"] == "pending"
    assert [(h["id"], h["status"]) for h in file["hunks"]] == [(0, "accepted"), (1, "pending")]
    assert file["baseHash"] == sha256_text(FIRST)  # the ranges are in the text as it is now
    assert apply_view_edits(FIRST, file["hunks"]) == BOTH
    assert file["uri"] == (root / "f.txt").as_uri()


# --- a folder swapped for a link between the guard's check and the use ------------------------


def swap_for_link(root: Path, folder: str, target: Path) -> None:
    """What a contained command can do at any moment: move a folder and link its name out."""
    os.rename(root / folder, root / f"{folder}.moved")
    (root / folder).symlink_to(target)


@pytest.mark.parametrize("at", ["read", "write", "second-write"])
def test_a_folder_swapped_after_the_check_gets_nothing_written_outside(
    at: str, root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    for folder in (outside, root / "pkg"):
        folder.mkdir(exist_ok=True)
        (folder / "a.txt").write_text(TEXT)
        (folder / "b.txt").write_text(TEXT)
    patches = service(root)
    patch = patches.propose(
        [("pkg/a.txt", TEXT, FIRST), ("pkg/b.txt", TEXT, SECOND)], "two files in pkg"
    )
    # The guard runs for each read (2), then for each write (2): swap right after one of them.
    swap_after = {"read": 1, "write": 3, "second-write": 4}[at]
    real, calls = service_module.patch_path, []

    def check_then_swap(jail: PathJail, path: str) -> Path:
        checked = real(jail, path)
        calls.append(path)
        if len(calls) == swap_after:
            swap_for_link(root, "pkg", outside)
        return checked

    monkeypatch.setattr(service_module, "patch_path", check_then_swap)
    with pytest.raises(ToolError) as info:
        patches.accept(patch.id)
    assert info.value.error == ErrorType.PATH_OUTSIDE_REPO
    assert "'pkg' is a symbolic link" in info.value.message
    assert (root / "pkg" / "a.txt").read_text() == TEXT  # the control: by name it leads out now
    assert sorted(p.name for p in outside.iterdir()) == ["a.txt", "b.txt"]
    assert (outside / "a.txt").read_text() == TEXT and (outside / "b.txt").read_text() == TEXT
    # The real folder, moved away: untouched, or (a swap before the second write) holding the
    # first write, which the rollback does not chase through the link that took its name.
    moved = root / "pkg.moved"
    assert (moved / "b.txt").read_text() == TEXT
    assert (moved / "a.txt").read_text() == (FIRST if at == "second-write" else TEXT)
    assert patches.require(patch.id).status == "pending"


# --- where the store lives --------------------------------------------------------------------


def test_the_store_lives_in_the_state_directory_0700_and_says_whose_it_is(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    store = PatchStore.for_repository(root)
    patches = PatchService(PathJail(root), store)
    patch = patches.propose([("f.txt", TEXT, FIRST)], "x")
    folder = tmp_path / "state" / "smol-instruments" / "patches" / store_key(root)
    assert store.directory == folder and (folder / f"{patch.id}.json").is_file()
    assert (folder / "repository").read_text() == f"{root.resolve()}\n"
    for made in (folder, folder.parent):
        assert stat.S_IMODE(made.stat().st_mode) == 0o700
    assert stat.S_IMODE((folder / f"{patch.id}.json").stat().st_mode) == 0o600
    assert list_stores() == [(store_key(root), str(root.resolve()))]
    assert [p.id for p in PatchService(PathJail(root), PatchStore.for_repository(root)).all()] == [
        patch.id
    ]
    assert sorted(p.name for p in root.iterdir()) == ["f.txt"]  # nothing in the repository


def test_a_repository_holding_the_state_directory_keeps_its_patches_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    home = tmp_path / "home"  # the home opened as a project: its state folder is inside it
    home.mkdir()
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    store = PatchStore.for_repository(home)
    assert store.directory is None
    assert "not persisting patches" in caplog.text
    PatchService(PathJail(home), store).propose([("a.txt", None, "x\n")], "x")
    assert not (home / ".local").exists()


def test_a_link_in_the_store_is_refused_not_followed(
    root: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    patch = Patch("plinked", "x", [FileChange.between("f.txt", TEXT, FIRST)])
    (outside / "plinked.json").write_text(json.dumps(patch.to_dict()))
    store_of(root).mkdir(parents=True)
    (store_of(root) / "plinked.json").symlink_to(outside / "plinked.json")
    assert service(root).all() == []
    assert "'repo/plinked.json' is a symbolic link" in caplog.text


def test_lines_holding_names_a_line_once_when_a_class_and_its_method_are_compared() -> None:
    from smol_instruments.patches.pysource import lines_holding

    text = (
        "class Walker:\n"
        '    """Walks a document."""\n'
        "\n"
        "    def walk(self, doc, key):\n"
        "        if key not in doc:\n"
        "            raise KeyError(f'member not found: {doc}')  # the message\n"
        "        return doc[key]\n"
    )
    where = lines_holding(text, ["Walker", "Walker.walk"], ["member", "found", "message"])
    assert where == [(6, "            raise KeyError(f'member not found: {doc}')  # the message")]
    # control: words on no line of the compared code say nothing
    assert lines_holding(text, ["Walker.walk"], ["absent"]) == []


def test_the_mutants_of_a_statement_change_one_token_each_and_keep_its_layout() -> None:
    """patches/mutants.py: semver's `"!=": (1,)` (dev sv-fix-not-equal) gets the tuple's
    missing outcome from the statement's own constants, only that tuple's text changed;
    a compound statement's header is edited alone; no mutant repeats or is the statement."""
    from smol_instruments.patches.mutants import MOST, statement_mutants

    source = 'table = {\n    ">": (1,),\n    "<": (-1,),\n    "!=": (1,),\n    ">=": (0, 1),\n}'
    mutants = list(statement_mutants(source))
    assert source.replace('"!=": (1,)', '"!=": (1, -1)') in mutants
    assert source.replace('">=": (0, 1)', '">=": (1,)') in mutants  # an item taken out
    assert len(mutants) == len(set(mutants)) <= MOST and source not in mutants
    for mutant in mutants:  # one line differs, the others are as written
        assert (
            sum(a != b for a, b in zip(mutant.splitlines(), source.splitlines(), strict=True)) == 1
        )
    header = list(statement_mutants("if n % 100 in (11, 12, 13) and not strict:"))
    assert "if n % 100 not in (11, 12, 13) and not strict:" in header
    assert "if n % 100 in (11, 12, 13) and strict:" in header
    assert "if n % 100 in (11, 12, 13) or not strict:" in header
    assert "if n % 101 in (11, 12, 13) and not strict:" in header
    assert list(statement_mutants("print(name)")) == []  # nothing to edit
    assert list(statement_mutants("return (")) == []  # no statement
