"""Argument validators, line ranges and output truncation (tools/validation.py)."""

from __future__ import annotations

import math

import pytest

from smol_instruments.base.config import Settings
from smol_instruments.base.errors import ErrorType, ToolError
from smol_instruments.base.truncate import truncate_output
from smol_instruments.tools.validation import (
    Limits,
    LineRange,
    closest,
    line_range,
    optional_bool,
    optional_int,
    optional_number,
    optional_str,
    require_str,
    suggest_paths,
    truncate_items,
)

# --- truncate_output ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["", "short", "a\nb\nc\n", "x" * 100, "line\n" * 10, "no newline at end\nsecond"],
)
def test_truncate_output_within_limits_is_untouched(text: str) -> None:
    assert truncate_output(text, max_chars=100, max_lines=10) == (text, False)


def test_truncate_output_exactly_at_char_limit_is_not_cut() -> None:
    text = "y" * 50
    assert truncate_output(text, max_chars=50, max_lines=10) == (text, False)


def test_truncate_output_exactly_max_lines_with_trailing_newline_is_not_cut() -> None:
    # 10 lines ending in "\n": the newline count equals max_lines, but nothing is dropped.
    text = "".join(f"line {i}\n" for i in range(10))
    assert truncate_output(text, max_chars=10_000, max_lines=10) == (text, False)


def test_truncate_output_one_char_over_is_cut_head() -> None:
    text = "z" * 51
    out, cut = truncate_output(text, max_chars=50, max_lines=10)
    assert cut is True
    assert out.startswith("z" * 50)
    assert not out.startswith("z" * 51)
    assert "[truncated: showing 50 of 51 characters" in out


def test_truncate_output_head_keeps_first_lines() -> None:
    text = "".join(f"line {i}\n" for i in range(1, 201))
    out, cut = truncate_output(text, max_chars=100_000, max_lines=20)
    assert cut is True
    body, note = out.rsplit("\n[truncated", 1)
    assert body.splitlines() == [f"line {i}" for i in range(1, 21)]
    assert "200 lines" in note


def test_truncate_output_tail_keeps_last_lines() -> None:
    text = "".join(f"line {i}\n" for i in range(1, 201))
    out, cut = truncate_output(text, max_chars=100_000, max_lines=20, keep="tail")
    assert cut is True
    first, *rest = out.splitlines()
    assert first.startswith("[truncated:")
    assert rest == [f"line {i}" for i in range(181, 201)]


def test_truncate_output_tail_by_chars_keeps_the_end() -> None:
    text = "start " + "m" * 5000 + " FAILED test_x"
    out, cut = truncate_output(text, max_chars=300, max_lines=1000, keep="tail")
    assert cut is True
    assert out.endswith(" FAILED test_x")
    assert "start" not in out
    body = out.split("\n", 1)[1]
    assert len(body) == 300


def test_truncate_output_head_by_chars_bounded() -> None:
    text = "word " * 2000
    out, cut = truncate_output(text, max_chars=1000, max_lines=1000)
    assert cut is True
    body = out.rsplit("\n", 1)[0]
    assert len(body) == 1000
    assert text.startswith(body)


@pytest.mark.parametrize("keep", ["head", "tail"])
def test_truncate_output_flag_matches_reality(keep: str) -> None:
    for size in (0, 10, 99, 100, 101, 1000):
        text = "a" * size
        out, cut = truncate_output(text, max_chars=100, max_lines=10, keep=keep)
        assert cut == (size > 100)
        if not cut:
            assert out == text


# --- truncate_items / Limits ------------------------------------------------------------------


def test_truncate_items() -> None:
    assert truncate_items([1, 2, 3], 3) == ([1, 2, 3], False)
    assert truncate_items([1, 2, 3], 5) == ([1, 2, 3], False)
    assert truncate_items([1, 2, 3, 4], 3) == ([1, 2, 3], True)
    assert truncate_items([], 1) == ([], False)


def test_limits_from_settings(settings: Settings) -> None:
    custom = settings.model_copy(
        update={"truncation_max_chars": 1234, "truncation_max_list_items": 7}
    )
    limits = Limits.from_settings(custom)
    assert limits.truncate_chars == 1234
    assert limits.truncate_items == 7
    assert limits.max_chars == 5000
    assert limits.max_line_range == 1000
    assert limits.truncate_lines == 150


# --- line_range -------------------------------------------------------------------------------


def test_line_range_defaults_to_whole_small_file() -> None:
    assert line_range(None, None, 10, 1000, 150) == LineRange(1, 10, clamped=False)


def test_line_range_default_span_caps_a_long_file() -> None:
    assert line_range(None, None, 500, 1000, 150) == LineRange(1, 150, clamped=False)
    assert line_range(201, None, 500, 1000, 150) == LineRange(201, 350, clamped=False)


def test_line_range_default_span_never_exceeds_max_range() -> None:
    assert line_range(1, None, 500, 40, 150) == LineRange(1, 40, clamped=False)


def test_line_range_end_past_eof_is_clamped() -> None:
    assert line_range(1, 500, 300, 1000, 150) == LineRange(1, 300, clamped=True)


def test_line_range_exact_end_is_not_clamped() -> None:
    assert line_range(3, 7, 10, 1000, 150) == LineRange(3, 7, clamped=False)


def _range_error(*args: int | None) -> ToolError:
    with pytest.raises(ToolError) as info:
        line_range(*args)  # type: ignore[arg-type]
    assert info.value.error == ErrorType.INVALID_LINE_RANGE
    return info.value


def test_line_range_start_past_end_states_file_length() -> None:
    err = _range_error(50, None, 6, 1000, 150)
    assert "the file has 6 lines" in err.message
    assert "1 to 6" in (err.recovery_suggestion or "")
    assert err.context["total_lines"] == 6


def test_line_range_start_before_one() -> None:
    for start in (0, -3):
        err = _range_error(start, None, 6, 1000, 150)
        assert "the file has 6 lines" in err.message
        assert "start_line=1" in (err.recovery_suggestion or "")


def test_line_range_end_before_start() -> None:
    err = _range_error(5, 2, 6, 1000, 150)
    assert "the file has 6 lines" in err.message
    assert "5 to 6" in (err.recovery_suggestion or "")


def test_line_range_span_over_limit() -> None:
    err = _range_error(1, 2000, 5000, 1000, 150)
    assert "limit 1000" in err.message
    assert "the file has 5000 lines" in err.message
    assert "end_line=1000" in (err.recovery_suggestion or "")


def test_line_range_singular_line() -> None:
    err = _range_error(3, None, 1, 1000, 150)
    assert "the file has 1 line)" in err.message


def test_line_range_empty_file() -> None:
    assert line_range(None, None, 0, 1000, 150) == LineRange(1, 0, clamped=False)
    assert line_range(1, 10, 0, 1000, 150).clamped is True


# --- validators -------------------------------------------------------------------------------


def _invalid(fn, *args, **kwargs) -> ToolError:  # type: ignore[no-untyped-def]
    with pytest.raises(ToolError) as info:
        fn(*args, **kwargs)
    err = info.value
    assert err.error == ErrorType.INVALID_ARGUMENT
    assert err.recovery_suggestion
    return err


def test_require_str_accepts_text() -> None:
    assert require_str("path", "src/a.py", max_chars=100) == "src/a.py"
    assert require_str("old_text", "", max_chars=100, allow_empty=True) == ""


@pytest.mark.parametrize("value", [1, 1.5, None, ["a"], {"a": 1}, b"bytes", True])
def test_require_str_rejects_non_strings(value: object) -> None:
    err = _invalid(require_str, "path", value, max_chars=100, example="'src/app.py'")
    assert err.message.startswith("path: must be a string")
    assert "path='src/app.py'" in (err.recovery_suggestion or "")
    assert err.context == {"argument": "path"}


def test_require_str_rejects_nul_empty_and_long() -> None:
    assert "NUL" in _invalid(require_str, "path", "a\x00b", max_chars=100).message
    assert "empty" in _invalid(require_str, "path", "   ", max_chars=100).message
    err = _invalid(require_str, "path", "x" * 101, max_chars=100)
    assert "101 characters" in err.message
    assert "at most 100" in (err.recovery_suggestion or "")


def test_optional_str() -> None:
    assert optional_str("glob", None, max_chars=10) is None
    assert optional_str("glob", "*.py", max_chars=10) == "*.py"
    _invalid(optional_str, "glob", 3, max_chars=10)


def test_optional_int_accepts_numbers_and_numeric_strings() -> None:
    assert optional_int("n", None, minimum=1, maximum=10) is None
    assert optional_int("n", None, minimum=1, maximum=10, default=5) == 5
    assert optional_int("n", 3, minimum=1, maximum=10) == 3
    assert optional_int("n", 3.0, minimum=1, maximum=10) == 3
    assert optional_int("n", " 7 ", minimum=1, maximum=10) == 7
    assert optional_int("n", "-2", minimum=-5, maximum=10) == -2


@pytest.mark.parametrize("value", [True, False, 1.5, "1.5", "seven", [1], {"n": 1}, b"1"])
def test_optional_int_rejects_non_integers(value: object) -> None:
    err = _invalid(optional_int, "max_count", value, minimum=1, maximum=10)
    assert err.message.startswith("max_count:")


@pytest.mark.parametrize("value", [0, 11, "11", -1])
def test_optional_int_rejects_out_of_range_with_the_range(value: object) -> None:
    err = _invalid(optional_int, "max_count", value, minimum=1, maximum=10)
    assert "out of range" in err.message
    assert "from 1 to 10" in (err.recovery_suggestion or "")


def test_optional_bool() -> None:
    assert optional_bool("staged", None) is None
    assert optional_bool("staged", True) is True
    assert optional_bool("staged", "TRUE") is True
    assert optional_bool("staged", "false") is False
    for bad in ("maybe", 1, 0, [True]):
        err = _invalid(optional_bool, "staged", bad)
        assert "staged=True" in (err.recovery_suggestion or "")


def test_optional_number() -> None:
    assert optional_number("timeout", None, minimum=0, maximum=3600) is None
    assert optional_number("timeout", 5, minimum=0, maximum=3600) == 5.0
    assert optional_number("timeout", 0.5, minimum=0, maximum=3600) == 0.5
    for bad in (0, -1, 3601, math.inf, True, "10", [1]):
        _invalid(optional_number, "timeout", bad, minimum=0, maximum=3600)


def test_optional_number_rejects_nan() -> None:
    _invalid(optional_number, "timeout", math.nan, minimum=0, maximum=3600)


# --- closest / suggest_paths ------------------------------------------------------------------

FILES = ["app/calc.py", "app/main.py", "tests/test_calc.py", "README.md", "docs/guide.md"]


def test_closest_by_whole_path_and_by_name() -> None:
    assert closest("app/calcs.py", FILES)[0] == "app/calc.py"
    assert closest("calc.py", FILES)[0] == "app/calc.py"  # by file name at any depth
    assert closest("src/app/main.py", FILES)[0] == "app/main.py"
    assert closest("zzzzzz", FILES) == []
    assert len(closest("a", FILES, n=1)) <= 1


def test_suggest_paths_names_the_closest_existing_file() -> None:
    text = suggest_paths("app/calcs.py", FILES)
    assert "'app/calc.py'" in text
    assert "Closest existing paths" in text
    fallback = suggest_paths("qqqqqqq", FILES)
    assert "list_files()" in fallback
