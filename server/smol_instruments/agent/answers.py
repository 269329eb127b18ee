"""The checks a final answer passes before a run ends with it (smolagents' final_answer_checks).

Each raises ValueError with a sentence the model reads ("Check <name> failed with error: ..."),
at most once per run where the model may simply be right; the session judges the outcome after.
"""

from __future__ import annotations

import ast
import logging
import re
from typing import Any

from smolagents import ActionStep
from smolagents.memory import AgentMemory, TaskStep
from smolagents.models import ChatMessage, MessageRole

from ..base.pyast import parsed
from ..base.testruns import COUNT_KINDS, failing_tests
from .evidence import Step, Steps
from .mentions import FENCED
from .model import RunCancelled, for_one_call
from .outcome import needs_a_change, shortfall
from .prompts import TELL_ONE_STEP, Note, Nudge, is_placeholder
from .watch import RunWatch
from .wording import whole_word

log = logging.getLogger(__name__)

# smolagents wraps a failing check as "Check <name> failed with error: <message>": the names
# below are written to be read by the model in that sentence.


def the_answer_is_real(answer: Any, memory: AgentMemory, agent: Any = None) -> bool:
    """A final answer that is an instruction's slot ("...", "<answer>") is no answer."""
    if isinstance(answer, str) and is_placeholder(answer):
        raise ValueError(Nudge.PLACEHOLDER.says())
    if isinstance(answer, str) and _echoes_an_error(answer, memory):
        raise ValueError(Nudge.ERROR_RETOLD.says())
    return True


#: An answer of at least this many words, this share of them words of an error, retells it.
ECHO_MIN_WORDS = 8
ECHO_SHARE = 0.9


def _echoes_an_error(answer: str, memory: AgentMemory) -> bool:
    """The answer repeats (most of) an error or recovery suggestion the run was shown."""
    text = " ".join(answer.split()).strip(" .")
    if len(text) < 20:
        return False
    for step in memory.steps[-4:]:
        observed = str(getattr(step, "observations", None) or "")
        shown = [
            line
            for line in observed.splitlines()
            if line.lstrip().startswith(("message:", "recovery_suggestion:"))
        ]
        if getattr(step, "error", None) is not None:
            # as smolagents shows it: "Error:", the message, its "Now let's retry: ..." (dev
            # infl-find-ordinal-bug: all three came back as the answer, and ended `completed`)
            shown.extend([str(step.error), *_as_shown(step)])
        if any(text in " ".join(part.split()) for part in shown):
            return True
        # the message and its suggestion retold in one breath ("The pattern ... does not occur
        # in x. Use a shorter ..."): nearly every word of the answer is a word of the errors
        words = re.findall(r"\w+", text.lower())
        told = set(re.findall(r"\w+", " ".join(shown).lower()))
        if len(words) >= ECHO_MIN_WORDS and sum(w in told for w in words) >= ECHO_SHARE * len(
            words
        ):
            return True
    return False


def _as_shown(step: Any) -> list[str]:
    """A step's error as smolagents' `to_messages` gives it to the model, from "Error:" on (not
    the step's reply or observation: an answer may quote those)."""
    try:
        messages = step.to_messages()
    except Exception:  # a step of another kind, or another version's: its error alone
        return []
    texts = [
        str(part.get("text", "")) if isinstance(part, dict) else str(part)
        for message in messages
        if message.role == MessageRole.TOOL_RESPONSE
        for part in (message.content if isinstance(message.content, list) else [message.content])
    ]
    errors = [text for text in texts if not text.startswith("Observation:") and "Error:" in text]
    return [text[text.index("Error:") :] for text in errors]


#: An answer at least this long, the same as the previous turn's, answers that turn again.
REPEATED_ANSWER_CHARS = 40


def the_answer_is_new(answer: Any, memory: AgentMemory, agent: Any = None) -> bool:
    """A follow-up answered with the previous turn's answer, word for word, is sent back once
    (seen on the 1.5B model: "which test checks it?" got the answer about what it returns);
    the same again is let through marked as what it is, and the run is not `completed`."""
    watch: RunWatch | None = getattr(agent, "watch", None)
    if watch is None or not isinstance(answer, str):
        return True
    earlier = _previous_answer(memory)
    text = " ".join(answer.split())
    if len(text) < REPEATED_ANSWER_CHARS or earlier is None or " ".join(earlier.split()) != text:
        return True  # "Yes." twice can be right
    if Nudge.PREVIOUS_ANSWER in watch.nudged:
        watch.repeated = True
        return True
    watch.nudged.add(Nudge.PREVIOUS_ANSWER)
    raise ValueError(Nudge.PREVIOUS_ANSWER.says(task=watch.intent.task))


def _previous_answer(memory: AgentMemory) -> str | None:
    """The final answer of the conversation's previous turn (None in its first)."""
    tasks = [i for i, step in enumerate(memory.steps) if isinstance(step, TaskStep)]
    if len(tasks) < 2:
        return None
    for step in reversed(memory.steps[tasks[-2] : tasks[-1]]):
        if isinstance(step, ActionStep) and step.is_final_answer:
            return str(step.action_output)
    return None


#: A test run's summary as pytest prints it, "1 failed, 4 passed in 0.57s", or as run_tests
#: says it, "1 test failed, 4 tests passed (0.57 s)" (any order, any kinds).
_RUN_SUMMARY = re.compile(
    rf"((?:\d+ (?:tests? )?(?:{COUNT_KINDS}),? ?)+)(?:in \d+(?:\.\d+)?s\b|\(\d+(?:\.\d+)? s\))"
)
_SHOWN_COUNT = re.compile(r"(\d+) (?:tests? )?(passed|failed|errors?)")
#: How an answer states a count: "1 failed", "4 tests pass", "1 test fails", "2 errors",
#: "4 of 5 tests pass" (the 4; never the 5 of "of 5").
_SAID_COUNT = re.compile(
    r"(?<!of )\b(\d+)\s+(?:of\s+(?:the\s+)?(?:\d+\s+)?)?(?:tests?\s+)?(?:have\s+|has\s+|did\s+)?"
    r"(passed|pass|passing|failed|fails|fail|failing|errors?)\b",
    re.IGNORECASE,
)


def _kind(word: str) -> str:
    word = word.lower()
    return "passed" if word.startswith("pass") else "failed" if word.startswith("fail") else "error"


def the_counts_are_the_outputs(answer: Any, memory: AgentMemory, agent: Any = None) -> bool:
    """An answer that gives test counts gives the ones the last test run printed: sent back
    once (seen on the 1.5B model: "10 failed, 4 passed" from "1 failed, 4 passed"); the same
    mistake again is let through with the printed counts below it, never alone. Not a
    change's answer once it proposed a patch: that is told from the diff and its own checks,
    whose counts are not the last run's (dev sv-finalize-keep-build quoted its validation's)."""
    watch: RunWatch | None = getattr(agent, "watch", None)
    if watch is None or not isinstance(answer, str):
        return True
    if watch.intent.change and watch.last_patch() is not None:
        return True
    said = {_kind(word): int(n) for n, word in _SAID_COUNT.findall(answer)}
    shown_line = _last_run_summary(memory)
    if not said or shown_line is None:
        return True
    shown = {_kind(word): int(n) for n, word in _SHOWN_COUNT.findall(shown_line)}
    wrong = [kind for kind, n in said.items() if shown.get(kind, 0) != n]
    if not wrong:
        return True
    return _sent_back_once(
        agent,
        watch,
        Nudge.COUNTS_DIFFER,
        Note.COUNTS,
        shown=shown_line,
        said=", ".join(f"{said[kind]} {kind}" for kind in wrong),
    )


def _sent_back_once(agent: Any, watch: RunWatch, nudge: Nudge, note: Note, **slots: str) -> bool:
    """The answer is sent back once (`nudge`, raised), its next reply sampled hotter (at the
    agent's temperature the 1.5B model gave the same answer again word for word: dev
    jp-walk-callers, sv-build-equal); the same miss a second time is let through with `note`
    below it, never alone."""
    if nudge in watch.nudged:
        if (said := note.says(**slots)) not in watch.corrections:
            watch.corrections.append(said)
        return True
    watch.nudged.add(nudge)
    shake = getattr(agent, "shake", None)
    if callable(shake):
        shake()
    raise ValueError(nudge.says(text=False, **slots))


#: Words by which a sentence says something is not there ("there is no", "does not exist").
_NOT_THERE = re.compile(r"\b(?:no|not|nowhere|none|neither|nor|never|without)\b|n't\b", re.I)


def the_absent_are_not_described(answer: Any, memory: AgentMemory, agent: Any = None) -> bool:
    """A question's answer that names what a search of every file found nowhere says, in a
    sentence naming it, that it is not there: sent back once (dev tc-missing-cprint-bold, told
    `cprint_bold` occurs nowhere, said it prints bold); the same again is let through with the
    search's result below it, and the run is not `completed`."""
    watch: RunWatch | None = getattr(agent, "watch", None)
    if watch is None or not isinstance(answer, str) or watch.intent.change or not watch.absent:
        return True
    sentences = re.split(r"(?<=[.!?])\s+|\n+", answer)
    described = []
    for name in watch.absent:
        word = whole_word(name.rsplit(".", 1)[-1])
        said = [sentence for sentence in sentences if word.search(sentence)]
        if said and not any(_NOT_THERE.search(sentence) for sentence in said):
            described.append(name)
    if not described:
        return True
    names = ", ".join(f"`{name}`" for name in described)
    return _sent_back_once(agent, watch, Nudge.ABSENT_DESCRIBED, Note.ABSENT, names=names)


def the_failures_are_named(answer: Any, memory: AgentMemory, agent: Any = None) -> bool:
    """A run whose task asks about failing tests names the ones the test runner reported:
    sent back once with pytest's list; the same omission again is let through with that list
    below it, never alone."""
    watch: RunWatch | None = getattr(agent, "watch", None)
    if watch is None or not isinstance(answer, str) or not watch.intent.asks_which_fail:
        return True
    failed = _last_failures(memory)
    missing = [test for test in failed if test.rsplit("::", 1)[-1] not in answer]
    if not missing:
        return True
    listed = ", ".join(failed)
    return _sent_back_once(
        agent,
        watch,
        Nudge.FAILURES_NOT_NAMED,
        Note.FAILURES,
        listed=listed,
        missing=", ".join(test.rsplit("::", 1)[-1] for test in missing),
    )


def the_reach_is_named(answer: Any, memory: AgentMemory, agent: Any = None) -> bool:
    """A question about what uses a name, or what changing it affects, names the functions the
    code shows using it, directly or one hop further (agent/evidence.py `reach`): sent back
    once with them (dev jp-walk-callers answered with line numbers, tc-colour-impact missed
    cprint, which reaches it through colored); the same miss again goes below them."""
    watch: RunWatch | None = getattr(agent, "watch", None)
    if watch is None or not isinstance(answer, str) or not watch.reach:
        return True
    named = [user for users in watch.reach.values() for user in users]
    missing = [user for user in named if not re.search(rf"\b{re.escape(user)}\b", answer)]
    if not missing:
        return True
    shown = "; ".join(f"`{name}` used by {', '.join(users)}" for name, users in watch.reach.items())
    return _sent_back_once(
        agent,
        watch,
        Nudge.REACH_NOT_NAMED,
        Note.REACH,
        reach=shown,
        missing=", ".join(missing),
    )


def the_steps_are_told(answer: Any, memory: AgentMemory, agent: Any = None) -> bool:
    """An explanation of a function tells each of its steps, by a word of its code
    (agent/evidence.py `function_steps`; dev tc-explain-colour said `_can_do_colour` returns
    True, never naming `os.isatty`). The steps it leaves out are asked about one at a time, and
    the sentences that tell them follow the answer; any still untold, it is sent back once with
    them, and the same miss again goes below them."""
    watch: RunWatch | None = getattr(agent, "watch", None)
    if watch is None or not isinstance(answer, str) or watch.steps is None:
        return True
    name, _, steps = watch.steps

    def untold() -> list[Step]:
        said = " ".join([answer, *watch.told])
        return [step for step in steps if not _tells(step.words, said)]

    if (missing := untold()) and not watch.steps_asked:
        watch.steps_asked = True
        watch.told.extend(_asked_one_at_a_time(agent, watch.steps, missing[:STEPS_ASKED]))
        missing = untold()
    if not missing:
        return True
    return _sent_back_once(
        agent,
        watch,
        Nudge.STEPS_NOT_TOLD,
        Note.STEPS,
        name=name,
        steps="; ".join(step.said for step in steps),
        missing="; ".join(step.said for step in missing),
    )


#: The most steps an explanation left out that are asked about one at a time, and the longest
#: reply to each.
STEPS_ASKED, STEP_REPLY_TOKENS = 4, 80
#: A sentence: up to its full stop, question or exclamation mark and a space, or the end.
_FIRST_SENTENCE = re.compile(r".+?[.!?](?=\s|$)|.+", re.DOTALL)


def _asked_one_at_a_time(agent: Any, function: Steps, missing: list[Step]) -> list[str]:
    """The model's sentence for each of the `missing` steps, asked about on its own with the
    function's code (`TELL_ONE_STEP`): the small model answers a narrow question where, sent
    its whole answer back, it wrote the same one again (dev explain-slugify). Only a sentence
    that tells its step is kept; a failed call ends the asking."""
    model = getattr(agent, "model", None)
    if model is None:
        return []
    kept: list[str] = []
    try:
        with for_one_call(model, max_tokens=STEP_REPLY_TOKENS):
            for step in missing:
                question = TELL_ONE_STEP.format(
                    code=function.code, name=function.name, step=step.said
                )
                message = model.generate(
                    [
                        ChatMessage(
                            role=MessageRole.USER, content=[{"type": "text", "text": question}]
                        )
                    ]
                )
                reply = message.content if isinstance(message.content, str) else ""
                sentence = _one_sentence(reply)
                if sentence and _tells(step.words, sentence):
                    kept.append(sentence)
    except RunCancelled:
        raise
    except Exception as exc:  # the answer is judged without the sentences not had
        log.info("asking about a step failed: %s", exc)
    return kept


def _one_sentence(reply: str) -> str:
    """The first sentence of `reply`'s prose (its code blocks left out), on one line."""
    prose = " ".join(FENCED.sub(" ", reply).split())
    found = _FIRST_SENTENCE.match(prose)
    return found.group(0).strip() if found else ""


#: How many of what a run's expressions gave a why-answer is shown, and how long each.
GAVE_SHOWN, GAVE_CHARS = 8, 80


def the_why_is_what_ran(answer: Any, memory: AgentMemory, agent: Any = None) -> bool:
    """An answer to why code gives what it gives cites what ran: an expression the trace of
    the call shows, or a value one gave (dev infl-why-ordinal was shown `number % 10 = 9` and
    answered that ordinal "checks if the number is divisible by 100"): sent back once with
    them; the same miss again goes below them."""
    watch: RunWatch | None = getattr(agent, "watch", None)
    if watch is None or not isinstance(answer, str) or not watch.gave:
        return True
    # what the call gave counts too, where the task does not say it ("It raises KeyError")
    cited = [said for _, said in watch.gave] + watch.computed
    if any(_cites(said, answer, watch.intent.task) for said in cited):
        return True
    return _sent_back_once(agent, watch, Nudge.WHY_NOT_FROM_RUN, Note.GAVE, gave=_where(watch.gave))


def _where(gave: list[tuple[str, str]]) -> str:
    """What expressions gave, by the function they ran in: "in `ordinal`: number % 10 = 9"
    (dev infl-why-ordinal, sent back with the expressions alone, cited them and never named
    the function that returned the wrong suffix)."""
    by_function: dict[str, list[str]] = {}
    for function, said in gave[:GAVE_SHOWN]:
        by_function.setdefault(function, []).append(said[:GAVE_CHARS])
    return ". ".join(
        f"in `{function}`: " * bool(function) + "; ".join(said)
        for function, said in by_function.items()
    )


def _cites(said: str, answer: str, task: str) -> bool:
    """Whether `answer` writes the expression of `said` ("number % 10 = 9"), spaces aside, or
    its value, where the task does not: a string in quotes, anything else as written (True,
    False and None tell nothing)."""
    expression, _, value = said.partition(" = ")
    flat, written = re.sub(r"[\s`]", "", answer), re.sub(r"\s", "", expression)
    if not expression.isidentifier() and written in flat and written not in task.replace(" ", ""):
        return True
    value = value.strip()
    if value in ("", "True", "False", "None") or value.strip("'\"") in task:
        return False
    if value[:1] in ("'", '"') and value[-1:] == value[:1]:
        return any(f"{q}{value[1:-1]}{q}" in answer for q in "'\"`")
    return re.search(rf"(?<![\w.]){re.escape(value)}(?![\w])", answer) is not None


def _tells(words: frozenset[str], answer: str) -> bool:
    """Whether `answer` names one of `words`, as a word or the start of one (`no_color` as
    "no_color", "NO_COLOR" or "no color"; `lower` as "lowercase"); no words, no telling."""
    for word in words:
        pattern = re.escape(word.strip("_")).replace("_", "[_ ]?")
        if re.search(rf"(?<![A-Za-z0-9]){pattern}", answer, re.IGNORECASE):
            return True
    return not words


def _last_failures(memory: AgentMemory) -> list[str]:
    """The tests the last test run shown to the model reported failing (pytest's short
    summary, however the observation indents it): a tool's output or the task's context (dev
    sv-run-tests: the tests run before the first step, two of four failures named)."""
    for step in reversed(memory.steps):
        observed = str(getattr(step, "observations", None) or getattr(step, "task", None) or "")
        tests = failing_tests("\n".join(line.strip() for line in observed.splitlines()))
        if tests:
            return tests
    return []


def _last_run_summary(memory: AgentMemory) -> str | None:
    """The last test-run summary line the run was shown (a tool's output or the task's context)."""
    for step in reversed(memory.steps):
        text = str(getattr(step, "observations", None) or getattr(step, "task", None) or "")
        found = _RUN_SUMMARY.findall(text)
        if found:
            return str(found[-1]).strip().rstrip(",")
    return None


def the_answer_is_grounded(answer: Any, memory: AgentMemory, agent: Any = None) -> bool:
    """An answer about the repository's code rests on something read or run for this run (a
    tool that ran, a proposal, or context given before the first step that answers it: for a
    question about what code gives, only a computed call does). Sent back once to read or run
    first; the same again is let through, marked as unchecked, and the run is not
    `completed`. Every ending goes through here: a code block's final_answer, prose, a
    written answer around a quoted block (agent/loop.py)."""
    watch: RunWatch | None = getattr(agent, "watch", None)
    if watch is None or watch.grounded() or not watch.about_code():
        return True
    return _sent_back_once(
        agent,
        watch,
        Nudge.READ_FIRST,
        Note.UNGROUNDED,
        what="what the code gives" if watch.intent.asks_value else "the repository's code",
        done="run" if watch.intent.asks_value else "read",
        call=watch.first_read(),
    )


#: A computed value longer than this (spaces and quotes left out) need not be in the answer.
TOLD_CHARS = 160


def the_computed_value_is_told(answer: Any, memory: AgentMemory, agent: Any = None) -> bool:
    """A question about what code gives, whose calls were run before the first step, is
    answered with what they gave (the value, or the exception's name): sent back once (seen on
    the 1.5B model: shown "returns 20", it explained the function and never said 20); the
    same omission again is let through with the results below it, never alone."""
    watch: RunWatch | None = getattr(agent, "watch", None)
    if watch is None or not isinstance(answer, str) or watch.intent.kind != "question":
        return True
    ran = [(line, *line.split(" = ", 1)) for line in watch.computed]
    # a long value (a whole document) is not asked to be copied out, nor one the question
    # says itself ("why does ordinalize(-1021) come out as -1021th?": asked why, not what),
    # as it is written ('I Phone' is not said by "something like iPhone?": fresh dev) and
    # outside the call: the 20 of "resolve_pointer({'a': [10, 20]}, '/a/01')" is an input
    task = watch.intent.task
    missing = [
        line
        for line, call, value in ran
        if len(bare := _bare(value)) <= TOLD_CHARS
        and not (value_told(bare, answer) and _cased(value, answer))
        and not _written(value, task.replace(call, " "))
    ]
    if not missing:
        return True
    results = "; ".join(missing)
    return _sent_back_once(
        agent,
        watch,
        Nudge.VALUE_NOT_TOLD,
        Note.VALUES,
        results=results,
    )


#: A value run and shown as its class's repr, its fields by name, after " = " or "returns "
#: (`Version.parse('1.0.0+a') = Version(major=1, ..., prerelease=None, build='a')`).
_REPR = re.compile(r"(?:= |returns )[A-Z]\w*\((\w+=[^()\n]*)\)")
#: A clause that supposes rather than tells ("if the prerelease is 'rc.1', ...").
_SUPPOSED = re.compile(r"\b(?:if|when|whenever|unless|suppose)\b", re.IGNORECASE)
_LITERAL = r"'[^'\n]*'|\"[^\"\n]*\"|-?\d+(?:\.\d+)*\b|None\b|True\b|False\b"


def the_fields_are_as_they_ran(answer: Any, memory: AgentMemory, agent: Any = None) -> bool:
    """A question's answer that says a field of a value the run was shown had another value
    than it had in every run shown ("the prerelease part set to 'a'" of `Version(...,
    prerelease=None, build='a')`: dev sv-build-equal, `completed`) is sent back once; the same
    again is let through with the values below it, not `completed`."""
    watch: RunWatch | None = getattr(agent, "watch", None)
    if watch is None or not isinstance(answer, str) or watch.intent.kind != "question":
        return True
    wrong, task = [], watch.intent.task
    for field, value in _fields_shown(memory).items():
        # "field=value" is how an argument is written, not what ran (as in `value_told`)
        claim = rf"\b{re.escape(field)}\b[\s`'\"]*(?:\w+\s+){{0,2}}?(?:is|was|set to|equals?|becomes)\s+`*"
        for found in re.finditer(f"({claim})({_LITERAL})", answer, re.IGNORECASE):
            clause = re.split(r"[,;:\n]|\.\s", answer[: found.start()])[-1]
            said = _bare(found.group(2))
            # a value the question gives the field itself ("and if pre were rc?") is its own
            asked = rf"\b{re.escape(field)}\W+(?:\w+\W+){{0,2}}?{re.escape(said)}\b"
            if said == _bare(value) or _SUPPOSED.search(clause) or re.search(asked, task, re.I):
                continue
            wrong.append((f"{field} is {found.group(2)}", f"{field}={value}"))
            break
    if not wrong:
        return True
    return _sent_back_once(
        agent,
        watch,
        Nudge.FIELD_NOT_AS_RAN,
        Note.FIELDS,
        said="; ".join(said for said, _ in wrong),
        ran="; ".join(ran for _, ran in wrong),
    )


def _fields_shown(memory: AgentMemory) -> dict[str, str]:
    """Each field of the reprs this turn was shown (its context, tools' outputs) that had one
    value in all of them, as source (`None`, `'a'`). An earlier turn's are left out: a
    follow-up asks about other values ("and with min_length 8?")."""
    seen: dict[str, set[str]] = {}
    starts = [i for i, step in enumerate(memory.steps) if isinstance(step, TaskStep)]
    for step in memory.steps[starts[-1] if starts else 0 :]:
        text = str(getattr(step, "observations", None) or getattr(step, "task", None) or "")
        for inner in _REPR.findall(text):
            tree = parsed(f"f({inner})")
            expr = tree.body[0] if tree is not None and tree.body else None
            value = expr.value if isinstance(expr, ast.Expr) else None
            for keyword in value.keywords if isinstance(value, ast.Call) else []:
                if keyword.arg and isinstance(keyword.value, ast.Constant):
                    seen.setdefault(keyword.arg, set()).add(repr(keyword.value.value))
    return {field: values.pop() for field, values in seen.items() if len(values) == 1}


def _written(value: str, task: str) -> bool:
    """Whether `task` writes `value` as it is, its quotes aside (case and spaces count)."""
    return value_told(_bare(value), task) and value.strip("'\"`") in task


def _cased(value: str, answer: str) -> bool:
    """Whether `answer` writes a string `value` ran to (its repr) with its case and its word
    breaks: "it gives 'iPhone'" does not tell 'I Phone' (fresh dev infl-titleize-iphone)."""
    quote = value[:1]
    if len(value) < 2 or quote not in "'\"" or value[-1] != quote or not value[1:-1].split():
        return True
    return re.search(r"\s+".join(map(re.escape, value[1:-1].split())), answer) is not None


def value_told(value: str, answer: str) -> bool:
    """Whether `answer` gives `value` (bare, as `_bare` makes it) as a value of its own: spaces,
    quotes and case aside, not as part of a longer word or number ('20' is not in '200', '1.3'
    not in '1.3.0', '2.0.0' not in '2.0.0-rc.1': dev sv-chat-finalize), nor as what a name is
    set to (`x=True` invents an argument; seen on the 1.5B model), nor beside its opposite
    ("True if they are equal, and False otherwise" tells neither: dev sv-build-equal)."""
    opposite = {"true": "false", "false": "true"}.get(value)
    return _says(value, answer) and not (opposite and _says(opposite, answer))


def _says(value: str, answer: str) -> bool:
    if not value:
        return True
    body = r"[\s'\"`]*".join(map(re.escape, value))
    before = r"\w.'\"`" + "-" * value[0].isdigit()  # '3.0' is not told by '-3.0'
    edge = rf"(?<![{before}])(?<!\w=)" if re.match(r"\w", value) else r"(?<!['\"`])(?<!\w=)"
    tail = r"(?!\w)(?![.+-]\w)" if re.search(r"\w$", value) else ""  # 2.0.0 of 2.0.0-rc.1
    return re.search(edge + r"['\"`]*" + body + tail, answer, re.IGNORECASE) is not None


def _bare(text: str) -> str:
    """Text compared without case, spaces, quotes or backticks ("['a', 0]" ~ '["a",0]')."""
    return re.sub(r"[\s'\"`]", "", text).lower()


def the_change_was_proposed(answer: Any, memory: AgentMemory, agent: Any = None) -> bool:
    """A task that asks for a change gets one reminder when nothing was proposed yet."""
    watch: RunWatch | None = getattr(agent, "watch", None)
    if watch is None or Nudge.NO_CHANGE in watch.nudged or watch.changed():
        return True
    if not needs_a_change(watch.intent, str(answer)):
        return True
    watch.nudged.add(Nudge.NO_CHANGE)
    raise ValueError(Nudge.NO_CHANGE.says(text=watch.form, path=watch.change_file or "<path>"))


def the_change_does_what_was_asked(answer: Any, memory: AgentMemory, agent: Any = None) -> bool:
    """A change proposed that the diff shows leaves out what the task asks (agent/outcome.py
    `shortfall`: dev sv-parse-allow-v wrote a leading-v check and no `allow_v`) is sent back
    once, saying what is missing; the run is judged on the change proposed last."""
    watch: RunWatch | None = getattr(agent, "watch", None)
    last = watch.last_patch() if watch is not None else None
    if watch is None or last is None or Nudge.SHORT in watch.nudged or not watch.intent.change:
        return True
    if (short := shortfall(watch, last)) is None:
        return True
    watch.nudged.add(Nudge.SHORT)
    path = watch.change_file or last.files[0].path
    raise ValueError(Nudge.SHORT.says(text=watch.form, short=short, path=path))
