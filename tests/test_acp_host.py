"""The ACP host's own pieces, on real parts: the updates drawn from a real patch service's
patches, titles drawn visibly, prompts with attached files, saved conversations. The protocol
end to end is tested by the official TypeScript client (extension/test/protocol/acp.test.ts)."""

from __future__ import annotations

from pathlib import Path

from acp.schema import EmbeddedResourceContentBlock, TextContentBlock, TextResourceContents
from tests.conftest import make_repo

from smol_instruments.acp.agent import prompt_text
from smol_instruments.acp.transcripts import Transcript, Transcripts
from smol_instruments.acp.updates import UpdateMapper, call_title, hunk_diff, hunk_title
from smol_instruments.agent.events import PatchEvent, ToolEvent
from smol_instruments.patches.service import open_patches
from smol_instruments.patches.view import patch_view
from smol_instruments.safety.jail import PathJail


def test_a_command_title_shows_what_would_hide_it() -> None:
    title = call_title("run_cmd", {"command": "ls\x1b[2K\rrm -rf ~\u202e"})
    assert "\x1b" not in title and "\r" not in title and "\u202e" not in title
    assert "␛[2K␍rm -rf ~⟨U+202E⟩" in title


def test_a_patch_is_one_edit_tool_call_with_its_diff_then_its_outcome(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"calc.py": "def add(a, b):\n    return a - b\n"})
    service = open_patches(PathJail(repo))
    patch = service.propose(
        [("calc.py", "def add(a, b):\n    return a - b\n", "def add(a, b):\n    return a + b\n")],
        "fix add",
    )
    mapper = UpdateMapper(service.root, service.get)
    [start] = mapper.updates(PatchEvent(patch=patch_view(patch, service.root)))
    assert (
        start.session_update == "tool_call" and start.kind == "edit" and start.status == "pending"
    )
    [diff] = start.content
    assert diff.path == str(service.root / "calc.py")
    assert diff.old_text.endswith("a - b\n") and diff.new_text.endswith("a + b\n")
    assert mapper.shown(patch) is None  # the editor has it: a permission request points at it
    service.reject(patch.id, None, "rejected in the editor")
    [outcome] = mapper.updates(
        PatchEvent(patch=patch_view(service.require(patch.id), service.root))
    )
    assert outcome.session_update == "tool_call_update" and outcome.status == "failed"
    assert "nothing was written" in outcome.content[-1].content.text
    assert (repo / "calc.py").read_text().endswith("a - b\n")


def test_a_tool_error_reaches_the_editor_with_its_recovery(tmp_path: Path) -> None:
    mapper = UpdateMapper(tmp_path, lambda _id: None)
    error = {
        "error": "file_not_found",
        "message": "file not found: x.py",
        "recovery_suggestion": "Try calc.py.",
    }
    [call] = mapper.updates(
        ToolEvent(step=1, name="read_file", args={"path": "x.py"}, duration_ms=1.0, error=error)
    )
    assert call.status == "failed" and call.kind == "read"
    assert "Try calc.py." in call.content[0].content.text
    assert call.locations[0].path == str(tmp_path / "x.py")


def test_an_attached_file_is_given_with_the_message() -> None:
    blocks = [
        TextContentBlock(type="text", text="Why does this fail?"),
        EmbeddedResourceContentBlock(
            type="resource",
            resource=TextResourceContents(
                uri="file:///w/test_calc.py", text="assert add(2, 3) == 5\n"
            ),
        ),
    ]
    text = prompt_text(blocks)
    assert text.startswith("Why does this fail?")
    assert "Attached /w/test_calc.py:" in text and "assert add(2, 3) == 5" in text


def test_saved_conversations_round_trip_and_refuse_paths_as_ids(tmp_path: Path) -> None:
    store = Transcripts(tmp_path / "sessions")
    transcript = Transcript("abc123", "/w")
    transcript.add("What is in calc.py?", "add and mean.")
    store.save(transcript)
    loaded = store.load("abc123")
    assert loaded is not None and loaded.turns == transcript.turns
    assert "add and mean." in loaded.recall()
    (tmp_path / "secret.json").write_text('{"cwd": "/", "turns": []}')
    for hostile in ("../secret", "/etc/passwd", "a/b", "", "x" * 65):
        store.save(Transcript(hostile, "/w"))
        assert store.load(hostile) is None
    assert sorted(p.name for p in (tmp_path / "sessions").iterdir()) == ["abc123.json"]
    (tmp_path / "sessions" / "bad.json").write_text("{not json")
    assert store.load("bad") is None


def test_a_hunk_question_shows_that_hunk_alone(tmp_path: Path) -> None:
    old = "def add(a, b):\n    return a - b\n\n\n\ndef mul(a, b):\n    return a + b\n"
    new = "def add(a, b):\n    return a + b\n\n\n\ndef mul(a, b):\n    return a * b\n"
    repo = make_repo(tmp_path / "repo", {"calc.py": old})
    service = open_patches(PathJail(repo))
    patch = service.propose([("calc.py", old, new)], "fix both")
    [change] = patch.files
    first, second = change.hunks
    shown = hunk_diff(change, second, service.root)
    assert shown.old_text == old
    assert shown.new_text == old.replace("    return a + b\n", "    return a * b\n")
    assert "a - b" in shown.new_text  # the first hunk is not in the second's question
    title = hunk_title(patch, change, second, 2, 2)
    assert title.startswith(f"Patch {patch.id}, change 2 of 2: calc.py line 7 (+1 −1)")
    assert hunk_diff(change, first, service.root).new_text == old.replace("a - b", "a + b")
