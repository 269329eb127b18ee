"""A fix confirmed by running it, when the model's own is not.

A change told by its symptom that writes the value a call should give ("escape('a/b') gives
'a~01b', it should be 'a~1b'") can be checked by running that call. When the model's proposal
does not give the value (the function copied back unchanged, or a wrong change), the request of
that step is sampled again, hotter, a few times; each version's block is merged into its file
and the call run with it (tools/patch.py `confirms_symptom`, in the sandbox `evaluate` uses),
and the first version that gives the value and passes the checks its proposal would be held to
(the project's tests, where they run) is proposed like any other change. What runs decides,
never the model's words; the version is still shown, and written only when the user accepts.

Measured on Qwen2.5-Coder-1.5B (dev jp-fix-escape): at the agent's temperature it copied
escape() back unchanged seven replies of seven; sampled at 0.9, two of eight versions held the
right order of replacements, and running escape('a/b') told them from the six wrong ones.

Where the call ran through several functions of the repository, the model does not know which
holds the fault: on dev infl-ordinal-negative every one of six versions copied `ordinalize`,
the function the task names, while the wrong suffix came from `ordinal`, which it calls. So
the versions are spread over the functions the call ran (its trace, tools/evaluate.py), the
last entered first, each request ending by asking for that function's new version: where to
change is searched like what to change, and the run tells them apart. Every version is asked
without its docstring (the merge keeps the old one): measured on dev sv-fix-compatible, the
docstring was most of each 340-540-token version, two to three minutes each on a loaded CPU.
The 1.5B model wrote it anyway (dev67: 11 versions of 11); holding the reply to the request
(a grammar, a logit bias against the docstring's quotes) is not done.

A fix told with no value ("is_compatible says 1.2.0 and 1.2.5 arent compatible. pls fix", dev
sv-fix-compatible: the function copied back unchanged until the loop stop) has another judge
when the project's tests failed before the change: a version is taken when it changes the code
and every check passes on it (`_passes`), and only where the tests run on a version at all.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from typing import Any

from smolagents.models import ChatMessage, MessageRole

from ..base.errors import ToolError
from ..patches.pysource import LINE
from ..tools.base import ToolContext
from ..tools.files import read_repo_text
from ..tools.patch import confirms_symptom, merged_diff, patch_checks
from .edits import file_header
from .intent import Held
from .model import for_one_call
from .outcome import failed_checks
from .prompts import CHANGE_AGAIN, CHANGE_THERE, REWRITE_LINES

#: Versions sampled at most, once per run.
SAMPLES = 6
#: Their temperature: hot enough that a model sure of its wrong reply writes others.
TEMPERATURE = 0.9
#: Functions of the call's trace the versions are spread over, at most.
PLACES = 3
#: Tokens a line asked for alone may take (a runaway reply is cut, not waited for).
LINE_TOKENS = 120
#: How like the line a reply's line must be to be its new version (difflib's ratio).
LIKE = 0.4
#: A function of a trace, as tools/evaluate.py TRACER names it: "ordinal (inflection.py)".
_RAN = re.compile(r"^(?P<name>[A-Za-z_]\w*) \((?P<path>[^()]+\.py)\)$")


def search_fix(
    model: Any,
    messages: list[Any],
    ctx: ToolContext,
    repo_files: set[str],
    default_path: str | None,
    held: Held,
) -> tuple[int, str, str] | None:
    """(the sample that gave it, path, block) of the first sampled version of the step whose
    input was `messages` that makes the task's symptom calls give what the task wants (when it
    says; else that changes the code) and passes the checks a proposal is held to; None when
    none of `SAMPLES` does. A block without a `# file:` line goes to `default_path`."""
    by_tests = not ctx.symptom_wants
    if by_tests and patch_checks(ctx) is None:
        return None  # no tests run on a version: nothing tells a right one
    places = _places(ctx, repo_files)
    for seed in range(1, SAMPLES + 1):
        if places:
            name, there = places[(seed - 1) % len(places)]
            ending = CHANGE_THERE.format(name=name, path=there)
        else:
            ending = CHANGE_AGAIN.format(path=default_path or "<path>")
        asked = _ending_with(messages, ending)
        path, body = file_header(_first_block(_sample(model, asked, seed)), repo_files)
        path = path or default_path
        if path is None or not body.strip():
            continue
        diff = merged_diff(ctx, path, body) if by_tests else confirms_symptom(ctx, path, body)
        if diff is not None and _passes(ctx, diff, held, every=by_tests):
            return seed, path, body
    return None


def rewrite_line(model: Any, ctx: ToolContext, task: str) -> tuple[str, str, str, str] | None:
    """(path, where, old lines, new lines) of the lines a proposal that copied its function
    back unchanged holds most of the task's words on (tools/patch.py sets `ctx.copied`), asked
    for alone, at the agent's temperature, then hotter: each line of the reply's block that
    the file does not have replaces the shown line it is likest (difflib, `LIKE` at least);
    None when no reply gives one. Asked once per copy; the run proposes the result like any
    change, checked like any change.

    Seen on the 1.5B model (dev jp-walk-message): `walk` copied back five times, told which
    line holds "member ... not found" and how to replace it alone, and copied again."""
    if ctx.copied is None:
        return None
    (path, held), ctx.copied = ctx.copied, None
    try:  # a line the file has already is no new version of one shown
        lines = LINE.findall(read_repo_text(ctx, path)[1])  # numbered as lines_holding does
    except ToolError:
        return None
    present = {row.strip() for row in lines}
    numbers = [number for number, _ in held]
    where = f"Line {numbers[0]}" if len(numbers) == 1 else f"Lines {', '.join(map(str, numbers))}"
    shown = "\n".join(line.strip() for _, line in held)
    asked = REWRITE_LINES.format(where=where, path=path, lines=shown, task=task)
    for hot in (False, True):
        hotter = {"temperature": TEMPERATURE, "seed": 1} if hot else {}
        with for_one_call(model, max_tokens=LINE_TOKENS, **hotter):
            message = ChatMessage(role=MessageRole.USER, content=asked)
            reply = model.generate([message], stop_sequences=["Observation:", "Calling tools:"])
        content = reply.content if isinstance(reply.content, str) else ""
        rows = (
            [row.strip() for row in _first_block(content).splitlines()] if "```" in content else []
        )
        fresh = [r for r in rows if r and r not in present and not r.startswith("#")]
        # a shown line the reply keeps is not the one it rewrites (a line added beside it is
        # no new version of it); more new lines than shown is no line-for-line rewrite (a
        # statement split over lines); a new version keeps its brackets' balance
        open_ = [(n, line) for n, line in held if line.strip() not in rows]
        if len(fresh) > len(open_):
            continue
        new: dict[int, tuple[float, str]] = {}
        for row in fresh:
            likes = [
                (difflib.SequenceMatcher(None, row, line.strip()).ratio(), number, line)
                for number, line in open_
                if _balance(line) == _balance(row)
            ]
            like, number, line = max(likes, default=(0.0, 0, ""))
            if like >= LIKE and like > new.get(number, (0.0, ""))[0]:
                indent, had = line[: len(line) - len(line.lstrip())], lines[number - 1]
                new[number] = (like, indent + row + had[len(had.rstrip("\r\n")) :])
        if new:
            first, last = min(new), max(new)
            old = "".join(lines[first - 1 : last])
            changed = [new[n][1] if n in new else lines[n - 1] for n in range(first, last + 1)]
            return path, where, old, "".join(changed)
    return None


def _balance(line: str) -> int:
    """Brackets a line opens and does not close."""
    return sum(line.count(c) for c in "([{") - sum(line.count(c) for c in ")]}")


def _places(ctx: ToolContext, repo_files: set[str]) -> list[tuple[str, str]]:
    """(function, file) of the repository's code the symptom's calls ran through, the last
    entered first (the callee that made the value before the caller that passed it on), at
    most `PLACES`; code generated on the fly (`<lambda>`, `<genexpr>`) is no place to change."""
    ran = [item for functions in ctx.symptom_functions.values() for item in functions]
    places: list[tuple[str, str]] = []
    for item in reversed(ran):
        found = _RAN.match(item)
        if found and found["path"] in repo_files and (found["name"], found["path"]) not in places:
            places.append((found["name"], found["path"]))
    return places[:PLACES]


def _ending_with(messages: list[ChatMessage], words: str) -> list[ChatMessage]:
    """`messages` with `words` added to the end of the last message the model reads as the
    user's (a task, or an observation: smolagents sends tool responses as the user's); a copy,
    the run's own messages are not touched."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.role not in (MessageRole.USER, MessageRole.TOOL_RESPONSE):
            continue
        content = message.content
        if isinstance(content, list):
            content = [*content, {"type": "text", "text": words}]
        else:
            content = f"{content or ''}{words}"
        changed = dataclasses.replace(message, content=content)
        return [*messages[:index], changed, *messages[index + 1 :]]
    return messages


def _first_block(reply: str) -> str:
    """The reply's first block: from its start (a fence line dropped) to the next fence. The
    model writes a change fenced or not, and often closes a block it never opened."""
    text = reply.strip()
    if text.startswith("```"):
        text = text.partition("\n")[2]
    return text.partition("```")[0]


def _passes(ctx: ToolContext, diff: str, held: Held, *, every: bool = False) -> bool:
    """The version passes the checks its proposal would be held to (the project's tests where
    they run): measured on dev infl-ordinal-negative, a version that gave '-1021st' by
    returning it for -1021 alone left the negative-number tests failing. With `every` (the
    tests are the only judge), every check ran and passed: a failure the fix is not held to
    still says nothing of the version."""
    try:
        validation = ctx.sandbox.validate(diff, patch_checks(ctx)).to_dict()
    except Exception:  # a sandbox that cannot run confirms nothing
        return False
    if validation.get("applies") is False:
        return False
    if every:
        checks = validation.get("checks", [])
        return bool(checks) and all(check.get("passed") for check in checks)
    return not failed_checks(validation, held=held)


def _sample(model: Any, messages: list[Any], seed: int) -> str:
    """One reply to `messages` at `TEMPERATURE` with `seed` (the model's settings restored)."""
    with for_one_call(model, temperature=TEMPERATURE, seed=seed):
        message = model.generate(messages, stop_sequences=["Observation:", "Calling tools:"])
    return message.content if isinstance(message.content, str) else ""
