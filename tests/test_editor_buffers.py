"""The agent reads what the editor shows: a host's BufferReader (tools/base.py) in the tools.

The editor here is a dict of unsaved texts behind the reader interface a host implements (the
ACP host's own, over `fs/read_text_file`, is driven by the official client in
extension/test/protocol/acp.test.ts). Everything else is real: the jail, ripgrep, the patch
service and its files on disk. Each case checks what the reader was asked, and what was read.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.conftest import make_repo, make_tools

from smol_instruments.base.config import Settings
from smol_instruments.safety.approval import AutoApprover

CALC = "def add(a, b):\n    return a - b\n"
UNSAVED = "def add(a, b):\n    return a - b\n\n\ndef unsaved_helper():\n    return 42\n"


class Editor:
    """Open buffers by absolute path; records every path it was asked for."""

    def __init__(self, buffers: dict[Path, str]) -> None:
        self.buffers = buffers
        self.asked: list[Path] = []

    def __call__(self, path: Path) -> str | None:
        self.asked.append(path)
        return self.buffers.get(path)


def _setup(tmp_path: Path, settings: Settings, buffers: dict[str, str], approve: bool = False):
    repo = make_repo(tmp_path / "repo", {"calc.py": CALC, "notes.txt": "plain\n"})
    ctx, tools = make_tools(repo, settings, AutoApprover() if approve else None)
    editor = Editor({ctx.root / rel: text for rel, text in buffers.items()})
    ctx.buffers = editor
    return ctx, tools, editor


def test_read_file_reads_the_unsaved_buffer_not_the_disk(
    tmp_path: Path, settings: Settings
) -> None:
    ctx, tools, editor = _setup(tmp_path, settings, {"calc.py": UNSAVED})
    result = tools["read_file"](path="calc.py")
    assert "unsaved_helper" in result["content"]
    assert editor.asked == [ctx.root / "calc.py"]
    # a file the editor has no buffer for is the disk's
    assert tools["read_file"](path="notes.txt")["content"] == "plain\n"


def test_the_jail_decides_before_the_editor_is_asked(tmp_path: Path, settings: Settings) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("TOP-SECRET-OUTSIDE\n")
    ctx, tools, editor = _setup(tmp_path, settings, {})
    # an editor that would hand out any file it is asked for
    editor.buffers[outside] = "TOP-SECRET-OUTSIDE\n"
    (ctx.root / "leak.txt").symlink_to(outside)
    for path in (str(outside), "../secret.txt", "leak.txt"):
        result = tools["read_file"](path=path)
        assert result["error"] == "PATH_OUTSIDE_REPO", (path, result)
        assert "TOP-SECRET" not in str(result)
    assert editor.asked == []


def test_a_search_finds_what_is_only_in_the_unsaved_buffer(
    tmp_path: Path, settings: Settings
) -> None:
    ctx, tools, _ = _setup(tmp_path, settings, {"calc.py": UNSAVED})
    assert tools["rg_search"](pattern="unsaved_helper")["error"] == "NO_MATCH"  # not read yet
    tools["read_file"](path="calc.py")
    found = tools["rg_search"](pattern="unsaved_helper", glob="*.py")
    assert found["matches"] == [{"path": "calc.py", "line": 5, "text": "def unsaved_helper():"}]
    # the editor's text now: once saved (the buffer equals the disk) the disk is searched
    (ctx.root / "calc.py").write_text(UNSAVED)
    assert tools["rg_search"](pattern="unsaved_helper")["matches"][0]["line"] == 5
    assert "calc.py" not in ctx.unsaved


def test_a_patch_is_made_against_the_buffer_and_checked_as_accepting_makes_it(
    tmp_path: Path, settings: Settings
) -> None:
    ctx, tools, _ = _setup(tmp_path, settings, {"calc.py": UNSAVED})
    result = tools["propose_patch"](
        path="calc.py", old_text="    return 42", new_text="    return 43", description="x"
    )
    assert result["status"] == "pending", result
    patch = ctx.patches.require(result["patch_id"])
    [change] = patch.files
    assert change.base == UNSAVED  # the text the agent read
    # the syntax check ran on the disk's copy with the editor's text and the patch in it
    assert result["validation"]["applies"] is not False, result["validation"]
    assert (ctx.root / "calc.py").read_text() == CALC


def test_accepting_a_buffer_patch_against_the_disk_is_stale_and_writes_nothing(
    tmp_path: Path, settings: Settings
) -> None:
    # no editor to write through: accepting plans against the disk, which lacks the lines
    ctx, tools, _ = _setup(tmp_path, settings, {"calc.py": UNSAVED}, approve=True)
    proposed = tools["propose_patch"](
        path="calc.py", old_text="    return 42", new_text="    return 43", description="x"
    )
    ctx.buffers = None  # the editor went away; the disk is what there is
    ctx.unsaved.clear()
    result = tools["apply_patch"](patch_id=proposed["patch_id"])
    assert result["error"] == "PATCH_STALE", result
    assert "nothing was written" in result["message"]
    assert (ctx.root / "calc.py").read_text() == CALC


def test_apply_patch_plans_against_the_editor_text(tmp_path: Path, settings: Settings) -> None:
    # the disk-writing approver (no host write-through): the hunk is found in the editor's
    # text, so it is not refused as stale; written to disk, it is placed in the disk's text
    ctx, tools, _ = _setup(
        tmp_path, settings, {"calc.py": CALC.replace("def add", "# unsaved\ndef add")}, True
    )
    proposed = tools["propose_patch"](
        path="calc.py", old_text="    return a - b", new_text="    return a + b"
    )
    result = tools["apply_patch"](patch_id=proposed["patch_id"])
    assert result["applied"] is True, result
    assert (ctx.root / "calc.py").read_text() == CALC.replace("a - b", "a + b")


def test_search_replace_blocks_apply_to_the_editor_text(tmp_path: Path, settings: Settings) -> None:
    """The edit service (tools/edit.py) edits the text the model read: the unsaved buffer."""
    from smol_instruments.tools.edit import edit_changes, parse_edit_blocks

    ctx, _, editor = _setup(tmp_path, settings, {"calc.py": UNSAVED})
    block = "calc.py\n<<<<<<< SEARCH\n    return 42\n=======\n    return 43\n>>>>>>> REPLACE\n"
    ((path, before, after),) = edit_changes(ctx, parse_edit_blocks(block))
    assert (path, before) == ("calc.py", UNSAVED)
    assert after == UNSAVED.replace("return 42", "return 43")
    assert editor.asked == [ctx.root / "calc.py"]


def test_a_rename_that_would_touch_an_unsaved_file_is_refused_naming_it(
    tmp_path: Path, settings: Settings
) -> None:
    """rope renames the files on disk; a file the editor holds unsaved is named to be saved
    first, and nothing is proposed."""
    from smol_instruments.base.errors import ToolError
    from smol_instruments.tools.rename import rename_changes

    ctx, _, _ = _setup(tmp_path, settings, {"calc.py": UNSAVED})
    with pytest.raises(ToolError) as refused:
        rename_changes(ctx, "add", "add_numbers", ["calc.py"])
    assert "calc.py has unsaved changes" in refused.value.message
    assert "save calc.py" in str(refused.value.recovery_suggestion)
    assert ctx.patches.all() == []
    # saved (the buffer equals the disk): the rename is made
    (ctx.root / "calc.py").write_text(UNSAVED)
    ((path, before, after),) = rename_changes(ctx, "add", "add_numbers", ["calc.py"])
    assert path == "calc.py" and before == UNSAVED and "def add_numbers(a, b):" in after


def test_an_unsaved_file_the_rename_leaves_alone_does_not_stop_it(
    tmp_path: Path, settings: Settings
) -> None:
    """The text occurrences a rename follows (tools/rename.py) are checked against the editor
    only in a file they touch: an unsaved note that never names the function is no reason to
    refuse; one that does is named to be saved first."""
    from smol_instruments.base.errors import ToolError
    from smol_instruments.tools.rename import rename_changes

    ctx, _, _ = _setup(tmp_path, settings, {"notes.txt": "being edited\n"})
    changes = rename_changes(ctx, "add", "add_numbers", ["calc.py"], ["notes.txt"])
    assert [path for path, _, _ in changes] == ["calc.py"]
    (ctx.root / "notes.txt").write_text("call add(1, 2)\n")
    with pytest.raises(ToolError) as refused:
        rename_changes(ctx, "add", "add_numbers", ["calc.py"], ["notes.txt"])
    assert "notes.txt has unsaved changes" in refused.value.message
