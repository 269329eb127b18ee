"""PatchStore and Patch: persistence, listeners, staleness, atomic writes, protocol ranges."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from smol_instruments.patches import store as patches_module
from smol_instruments.patches.store import (
    FileChange,
    Patch,
    PatchStore,
    StalePatch,
    atomic_write,
    read_text,
    sha256_text,
    unified_diff,
)


def make_patch(store: PatchStore, *files: FileChange, summary: str = "fix things") -> Patch:
    return Patch(id=store.new_id(), summary=summary, files=list(files), session_id="s1")


# --- persistence ------------------------------------------------------------------------------


def test_persistence_round_trip(tmp_path: Path) -> None:
    persist = tmp_path / "patches"
    store = PatchStore(tmp_path, persist)
    patch = make_patch(
        store,
        FileChange("a.py", "x = 1\n", "x = 2\n"),
        FileChange("new.py", None, "y = 3\n"),
    )
    patch.validation = {"backend": "none", "applies": True, "checks": []}
    patch.trace_id = "abc123"
    store.add(patch)
    store.set_status(patch.id, "rejected", "not now")
    assert (persist / f"{patch.id}.json").is_file()

    again = PatchStore(tmp_path, persist)
    loaded = again.get(patch.id)
    assert loaded is not None
    assert loaded.to_dict() == patch.to_dict()
    assert loaded.status == "rejected"
    assert loaded.status_reason == "not now"
    assert [f.path for f in loaded.files] == ["a.py", "new.py"]
    assert loaded.files[1].old_text is None
    assert loaded.diff == patch.diff


def test_persistence_skips_corrupt_files(tmp_path: Path) -> None:
    persist = tmp_path / "patches"
    persist.mkdir()
    (persist / "pbroken.json").write_text("{not json")
    (persist / "pmissing.json").write_text(json.dumps({"summary": "no id"}))
    store = PatchStore(tmp_path, persist)
    assert store.all() == []


def test_store_without_persistence_writes_nothing(tmp_path: Path) -> None:
    store = PatchStore(tmp_path, None)
    store.add(make_patch(store, FileChange("a.py", "1\n", "2\n")))
    assert list(tmp_path.iterdir()) == []


def test_new_ids_are_unique() -> None:
    store = PatchStore(Path("."), None)
    ids = set()
    for _ in range(300):
        patch = make_patch(store, FileChange("a", "1", "2"))
        store.add(patch)
        ids.add(patch.id)
    assert len(ids) == 300
    assert all(i.startswith("p") for i in ids)


# --- listeners --------------------------------------------------------------------------------


def test_listeners_are_told_of_adds_and_status_changes(tmp_path: Path) -> None:
    store = PatchStore(tmp_path, None)
    seen: list[tuple[str, str]] = []
    unsubscribe = store.subscribe(lambda p: seen.append((p.id, p.status)))

    def broken(_: Patch) -> None:
        raise RuntimeError("a host's listener failed")

    store.subscribe(broken)  # must not stop the others or the store
    patch = make_patch(store, FileChange("a.py", "1\n", "2\n"))
    store.add(patch)
    store.set_status(patch.id, "accepted", "by test")
    assert seen == [(patch.id, "pending"), (patch.id, "accepted")]
    unsubscribe()
    store.set_status(patch.id, "failed")
    assert len(seen) == 2


# --- staleness and writing --------------------------------------------------------------------


def test_stale_detection(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    store = PatchStore(tmp_path, None)
    patch = make_patch(
        store, FileChange("a.py", "x = 1\n", "x = 2\n"), FileChange("b.py", None, "new\n")
    )
    assert store.stale_paths(patch) == []
    (tmp_path / "a.py").write_text("x = 1  # edited by the user\n")
    (tmp_path / "b.py").write_text("someone created it\n")
    assert store.stale_paths(patch) == ["a.py", "b.py"]
    with pytest.raises(StalePatch) as info:
        store.write(patch)
    assert info.value.paths == ["a.py", "b.py"]
    assert "a.py" in str(info.value)
    # Nothing was written.
    assert (tmp_path / "a.py").read_text() == "x = 1  # edited by the user\n"
    assert (tmp_path / "b.py").read_text() == "someone created it\n"


def test_write_applies_every_file(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "gone.py").write_text("bye\n")
    store = PatchStore(tmp_path, None)
    patch = make_patch(
        store,
        FileChange("a.py", "x = 1\n", "x = 2\n"),
        FileChange("pkg/new.py", None, "y = 3\n"),
        FileChange("gone.py", "bye\n", None),
    )
    store.write(patch)
    assert (tmp_path / "a.py").read_text() == "x = 2\n"
    assert (tmp_path / "pkg/new.py").read_text() == "y = 3\n"
    assert not (tmp_path / "gone.py").exists()


def test_write_is_all_or_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.py").write_text("a = 1\n")
    (tmp_path / "b.py").write_text("b = 1\n")
    store = PatchStore(tmp_path, None)
    patch = make_patch(
        store,
        FileChange("a.py", "a = 1\n", "a = 2\n"),
        FileChange("new.py", None, "n = 1\n"),
        FileChange("b.py", "b = 1\n", "b = 2\n"),
    )
    real_write = patches_module.atomic_write
    writes: list[str] = []

    def failing_write(path: Path, text: str) -> None:
        writes.append(path.name)
        if path.name == "b.py" and text == "b = 2\n":
            raise OSError(28, "No space left on device")
        real_write(path, text)

    monkeypatch.setattr(patches_module, "atomic_write", failing_write)
    with pytest.raises(OSError, match="No space left"):
        store.write(patch)
    # The first two were written, then put back: the tree is as before.
    assert (tmp_path / "a.py").read_text() == "a = 1\n"
    assert (tmp_path / "b.py").read_text() == "b = 1\n"
    assert not (tmp_path / "new.py").exists()
    assert writes[:3] == ["a.py", "new.py", "b.py"]


def test_atomic_write_keeps_mode_and_leaves_no_temp_files(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\necho old\n")
    script.chmod(0o755)
    atomic_write(script, "#!/bin/sh\necho new\n")
    assert script.read_text() == "#!/bin/sh\necho new\n"
    assert stat.S_IMODE(script.stat().st_mode) == 0o755
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.sh"]


def test_atomic_write_failure_keeps_the_original(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "a.txt"
    target.write_text("original\n")

    def no_rename(src: str, dst: str) -> None:
        raise OSError("rename failed")

    monkeypatch.setattr(os, "replace", no_rename)
    with pytest.raises(OSError, match="rename failed"):
        atomic_write(target, "half-written\n")
    assert target.read_text() == "original\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]


def test_read_text_is_byte_exact(tmp_path: Path) -> None:
    raw = b"crlf\r\nlatin1 \xe9\r\nno newline"
    (tmp_path / "f").write_bytes(raw)
    text = read_text(tmp_path / "f")
    assert text is not None
    atomic_write(tmp_path / "g", text)
    assert (tmp_path / "g").read_bytes() == raw
    assert read_text(tmp_path / "missing") is None


# --- diffs, stats and hunks -------------------------------------------------------------------


def test_file_change_diff_applies_with_git(tmp_path: Path) -> None:
    old = "".join(f"line {i}\n" for i in range(1, 21))
    new = old.replace("line 10\n", "line ten\n").replace("line 20\n", "line 20\nline 21")
    (tmp_path / "f.txt").write_text(old)
    change = FileChange("f.txt", old, new)
    assert change.base_hash == sha256_text(old)
    assert change.stats() == (2, 1)
    subprocess.run(
        ["git", "apply", "-p1", "-"],
        cwd=tmp_path,
        input=change.diff.encode(),
        check=True,
        capture_output=True,
    )
    assert (tmp_path / "f.txt").read_text() == new


def test_unified_diff_creation_and_deletion_headers() -> None:
    created = unified_diff("n.py", None, "a\n")
    assert "new file mode 100644" in created
    assert "--- /dev/null\n+++ b/n.py" in created
    deleted = unified_diff("d.py", "a\n", None)
    assert "deleted file mode 100644" in deleted
    assert "--- a/d.py\n+++ /dev/null" in deleted
    assert unified_diff("same.py", "a\n", "a\n") == ""


def test_no_newline_marker() -> None:
    diff = unified_diff("f", "a\nb", "a\nc")
    assert "-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n" in diff


# --- Patch.to_protocol ranges ----------------------------------------------------------------


def _offset(text: str, position: dict[str, int]) -> int:
    lines = text.splitlines(keepends=True)
    return sum(len(line) for line in lines[: position["line"]]) + position["character"]


def apply_protocol_edits(old: str, hunks: list[dict]) -> str:  # type: ignore[type-arg]
    """Apply LSP TextEdits (non-overlapping, from the end) the way an editor would."""
    text = old
    for hunk in sorted(hunks, key=lambda h: _offset(old, h["range"]["start"]), reverse=True):
        start = _offset(old, hunk["range"]["start"])
        end = _offset(old, hunk["range"]["end"])
        text = text[:start] + hunk["newText"] + text[end:]
    return text


def test_to_protocol_hunk_at_end_of_file_without_trailing_newline(tmp_path: Path) -> None:
    old = "a\nb\nc"
    new = "a\nb\nC"
    patch = Patch(id="p1", summary="s", files=[FileChange("f.txt", old, new)])
    data = patch.to_protocol(tmp_path)
    [hunk] = data["files"][0]["hunks"]
    assert hunk["range"] == {
        "start": {"line": 2, "character": 0},
        "end": {"line": 2, "character": 1},
    }
    assert hunk["newText"] == "C"
    assert apply_protocol_edits(old, data["files"][0]["hunks"]) == new


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("a\nb\nc", "a\nb\nc\nd"),  # append after a last line without newline
        ("a\nb\nc", "a\nb"),  # delete the last line
        ("a\nb\nc\n", "a\nb\nc\nd\n"),  # append at the end
        ("a\nb\nc\n", "z\na\nb\nc\n"),  # insert at the top
        ("a\nb\nc\n", "a\nc\n"),  # delete in the middle
        ("", "new file\n"),
        ("x\r\ny\r\n", "x\r\nY\r\n"),  # CRLF kept
        ("one\ntwo\nthree\nfour\nfive\nsix\n", "ONE\ntwo\nthree\nfour\nfive\nSIX\n"),
        ("héllo\nwörld", "héllo\nwörld!"),
    ],
)
def test_to_protocol_edits_reproduce_the_new_text(tmp_path: Path, old: str, new: str) -> None:
    patch = Patch(id="p1", summary="s", files=[FileChange("f.txt", old, new)])
    [file] = patch.to_protocol(tmp_path)["files"]
    assert apply_protocol_edits(old, file["hunks"]) == new


def test_to_protocol_fields(tmp_path: Path) -> None:
    patch = Patch(
        id="p9",
        summary="fix add",
        files=[FileChange("app/calc.py", "return a - b\n", "return a + b\n")],
        session_id="s7",
        validation={"backend": "none", "applies": True, "checks": []},
        status_reason="why",
        trace_id="t1",
    )
    data = patch.to_protocol(tmp_path)
    assert data["id"] == "p9"
    assert data["sessionId"] == "s7"
    assert data["status"] == "pending"
    assert data["statusReason"] == "why"
    assert data["traceId"] == "t1"
    assert (data["added"], data["removed"]) == (1, 1)
    [file] = data["files"]
    assert file["uri"] == (tmp_path / "app/calc.py").as_uri()
    assert file["diff"].startswith("diff --git a/app/calc.py b/app/calc.py")
