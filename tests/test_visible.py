"""base/visible.py: what a person decides on shows every character that could hide something."""

from __future__ import annotations

import json

import pytest

from smol_instruments.base.visible import BREAK_MARK, hidden, json_visible, visible


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("ls -la", "ls -la"),
        ("a\tb", "a\tb"),
        ("\x1b[8msecret\x1b[0m", "␛[8msecret␛[0m"),
        ("safe\rrm -rf ~", "safe␍rm -rf ~"),
        ("x\x00y\x7f", "x␀y␡"),
        ("\u202eevil", "⟨U+202E⟩evil"),
        ("a\u200bb\ufeffc\u00add", "a⟨U+200B⟩b⟨U+FEFF⟩c⟨U+00AD⟩d"),
        ("\u2028\u2029\u0085\u009b", "⟨U+2028⟩⟨U+2029⟩⟨U+0085⟩⟨U+009B⟩"),
        ("caf\udce9", "caf⟨0xE9⟩"),
        ("rm -rf /tmp/x\u00a0/", "rm -rf /tmp/x⟨U+00A0⟩/"),
        ("naïve — ok ✓ 日本", "naïve — ok ✓ 日本"),
    ],
)
def test_every_hiding_character_is_drawn(text: str, shown: str) -> None:
    assert visible(text) == shown


def test_line_breaks_are_shown_and_still_break() -> None:
    assert visible("git add README.md\ngit config core.fsmonitor x", breaks=True) == (
        f"git add README.md{BREAK_MARK}\ngit config core.fsmonitor x"
    )
    assert visible("a\nb") == "a\nb"


def test_what_is_drawn_holds_no_control_character() -> None:
    every = "".join(chr(c) for c in range(0x0, 0x3000)) + "\udc80\udcff"
    shown = visible(every, breaks=True)
    assert all(c in "\t\n" or c.isprintable() for c in shown)


def test_hidden_says_whether_anything_was_marked() -> None:
    assert hidden("echo hi\x1b[2K")
    assert hidden("x\u2066y")
    assert not hidden("plain text\twith a tab\nand a line")
    assert not hidden("résumé ✓")


def test_the_shared_table_holds_for_python() -> None:
    """tests/visible_cases.json: the same table keeps extension/src/visible.ts equal to this."""
    from pathlib import Path

    from smol_instruments.safety.approval import text_warnings

    table = json.loads((Path(__file__).parent / "visible_cases.json").read_text())
    for case in table["cases"]:
        assert visible(case["text"]) == case["shown"], case
        assert visible(case["text"], breaks=True) == case["shown_breaks"], case
        assert hidden(case["text"]) is case["hidden"], case
    for case in table["warnings"]:
        assert text_warnings(case["text"], case["kind"]) == case["warnings"], case


def test_json_for_a_terminal_hides_nothing_and_loses_nothing() -> None:
    every = "".join(chr(c) for c in range(0x0, 0x3000)) + "\udc80\U0001f600\U000e0041"
    data = {"content": every, "naïve": ["日本", "\u202eevil"]}
    shown = json_visible(data, indent=2)
    assert all(c in "\t\n" or c.isprintable() for c in shown)
    assert json.loads(shown) == data  # a program reads exactly what was there
    assert "naïve" in shown and "日本" in shown  # readable text stays readable
    assert "\\u202e" in shown and "\\udb40\\udc41" in shown  # a tag character: a pair
    # the control: plain JSON for humans leaves the bidi override and C1 controls raw
    plain = json.dumps(data, ensure_ascii=False)
    assert "\u202e" in plain and "\u009b" in plain
