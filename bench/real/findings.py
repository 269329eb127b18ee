"""Known failure modes of small models in an agent loop, detected in a run's model calls.

Each detector reads what went over the wire (every reply, and the observation the next call
carried back) and returns the places it fired: `call N: what was seen`. The report counts the
runs each mode hit, per agent, so a fix to the agent shows up as a count that drops. They are
heuristics over text; the transcripts hold the evidence for each hit.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from smol_instruments.tools import TOOL_NAMES

from .proxy import Call

TOOLS = TOOL_NAMES
READING = ("list_files", "rg_search", "read_file", "read_file_snippet", "git_log", "git_diff")
_CODE = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)(?:```|$)|<code>(.*?)(?:</code>|$)", re.S)
_TOOL_CALL = re.compile(r"\b(" + "|".join(TOOLS) + r")\s*\(")


def _prompt_slots() -> tuple[str, ...]:
    """The `<slots>` of today's prompts, recovery messages and tool examples."""
    from smol_instruments.agent import prompts
    from smol_instruments.tools import TOOL_CLASSES

    texts = [v for k, v in vars(prompts).items() if isinstance(v, str) and not k.startswith("__")]
    texts += [cls.example for cls in TOOL_CLASSES]
    return tuple(sorted({slot for t in texts for slot in re.findall(r"<[^<>\n]{3,60}>", t)}))


# Text only our prompts contain: the slots of today's examples, and what earlier prompts had
# (an example path, an example answer, a placeholder answer).
_PROMPT_EXAMPLES = (
    *_prompt_slots(),
    "src/app.py",
    "returns a - b: a bug",
    'final_answer("...")',
)


@dataclass(frozen=True)
class Mode:
    key: str
    title: str
    detect: Callable[[list[Call], list[str]], list[str]]


def code_of(reply: str) -> str:
    """The code of every block in a reply, joined, as smolagents joins them."""
    return "\n".join((a or b) for a, b in _CODE.findall(reply))


def _new_input(calls: list[Call], index: int) -> str:
    """What the call after `index` carried back: its messages after the reply (observations)."""
    if index + 1 >= len(calls):
        return ""
    following = calls[index + 1].messages
    return "\n".join(str(m["content"]) for m in following[-2:] if m["role"] != "system")


def _hits(calls: list[Call], test: Callable[[int, Call], str | None]) -> list[str]:
    found = []
    for index, call in enumerate(calls):
        seen = test(index, call)
        if seen:
            found.append(f"call {index + 1}: {seen}")
    return found


def _short(text: str, limit: int = 140) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def tool_and_final_answer(calls: list[Call], _: list[str]) -> list[str]:
    def test(_: int, call: Call) -> str | None:
        code = code_of(call.reply)
        tools = set(_TOOL_CALL.findall(code))
        return (
            f"{sorted(tools)} + final_answer in one reply"
            if tools and "final_answer(" in code
            else None
        )

    return _hits(calls, test)


def prose_reply(calls: list[Call], _: list[str]) -> list[str]:
    def test(_: int, call: Call) -> str | None:
        if call.reply.strip() and not _CODE.search(call.reply) and "final_answer" not in call.reply:
            return _short(call.reply)
        return None

    return _hits(calls, test)


def invented_observation(calls: list[Call], _: list[str]) -> list[str]:
    def test(_: int, call: Call) -> str | None:
        match = re.search(r"```.*?```(.*)|</code>(.*)", call.reply, re.S)
        after = (match.group(1) or match.group(2) or "") if match else ""
        seen = re.search(r"(the )?(observation|output|result)( is)?:", after, re.I)
        return _short(after[seen.start() :]) if seen else None

    return _hits(calls, test)


def parse_error(calls: list[Call], _: list[str]) -> list[str]:
    def test(index: int, _: Call) -> str | None:
        text = _new_input(calls, index)
        seen = re.search(r"SyntaxError|Code parsing failed|invalid syntax", text)
        return _short(text[max(0, seen.start() - 40) : seen.start() + 100]) if seen else None

    return _hits(calls, test)


def loop_refused(calls: list[Call], _: list[str]) -> list[str]:
    def test(index: int, _: Call) -> str | None:
        return "LOOP_DETECTED" if "LOOP_DETECTED" in _new_input(calls, index) else None

    return _hits(calls, test)


def repeated_reply(calls: list[Call], _: list[str]) -> list[str]:
    def test(index: int, call: Call) -> str | None:
        if index and " ".join(call.reply.split()) == " ".join(calls[index - 1].reply.split()):
            return _short(call.reply, 80)
        return None

    return _hits(calls, test)


def prompt_example_copied(calls: list[Call], _: list[str]) -> list[str]:
    def test(_: int, call: Call) -> str | None:
        copied = [e for e in _PROMPT_EXAMPLES if e in call.reply]
        return f"wrote {copied}" if copied else None

    return _hits(calls, test)


def history_reprocessed(calls: list[Call], _: list[str]) -> list[str]:
    """A later call re-evaluated most of a long prompt: the cached prefix was thrown away."""

    def test(index: int, call: Call) -> str | None:
        prompt, evaluated = call.prompt_tokens or 0, call.prompt_n or 0
        if index and prompt > 1500 and evaluated > prompt // 2:
            return f"evaluated {evaluated} of {prompt} prompt tokens ({call.seconds:.0f} s)"
        return None

    return _hits(calls, test)


def abandoned_call(calls: list[Call], _: list[str]) -> list[str]:
    return _hits(calls, lambda _, c: f"after {c.seconds:.0f} s" if c.client_gone else None)


def answered_without_reading(calls: list[Call], answers: list[str]) -> list[str]:
    """The run answered but no reply ever called a tool that reads the repository."""
    if not answers or not any(a.strip() for a in answers):
        return []
    for call in calls:
        if any(tool in READING for tool in _TOOL_CALL.findall(code_of(call.reply))):
            return []
    return [f"answer: {_short(answers[-1])}"] if calls else []


MODES: tuple[Mode, ...] = (
    Mode("tool+final", "final_answer in the same reply as a tool call", tool_and_final_answer),
    Mode("prose", "a reply in prose (ours: an answer; stock: a format error)", prose_reply),
    Mode("invented-obs", "text after the code block invents an observation", invented_observation),
    Mode("parse-error", "the reply's code did not parse", parse_error),
    Mode("loop", "a repeated call was refused (LOOP_DETECTED)", loop_refused),
    Mode("same-reply", "the same reply as the call before", repeated_reply),
    Mode("example", "text of our prompt's examples in a reply", prompt_example_copied),
    Mode("reprocess", "a later call re-evaluated most of a long prompt", history_reprocessed),
    Mode("abandoned", "a model call the client cut (a repeat, or a timeout)", abandoned_call),
    Mode(
        "no-reading",
        "no tool call read the repository (ours: code comes with the task)",
        answered_without_reading,
    ),
)


def detect(calls: list[Call], answers: list[str]) -> dict[str, list[str]]:
    """The modes that fired in one run, each with where."""
    found = {}
    for mode in MODES:
        hits = mode.detect(calls, answers)
        if hits:
            found[mode.key] = hits
    return found
