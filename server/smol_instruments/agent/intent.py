"""What a task asks, decided once at the start of a run and read by every part of the agent.

A `TaskIntent` says what kind of request a message is (question, change, command, decline) and
what it mentions: code names and calls with literal arguments (`average([2, 4])`). Context,
evidence, prompts, loop, answer checks and outcome read it; none guesses from the words again.

Who decides (`decide`):

- the rules, where they settle it: a destructive request, or one to act outside the
  repository (publish, deploy, send); a plain change (an editing verb in the imperative, after
  at most a polite lead-in: "fix the bug", "can you rename ..."); a question or a request to
  run something whose words ask for no change, unless it is a follow-up pointing back. A model
  call would come before the first word (README, "The first answer") and move the server's
  one cached prompt off the warmed prefix. Left to the model: a symptom, a general verb ("make
  this repository brand new"), a change word inside a question or command, a question about
  what could be ("can f take a separator?"), a follow-up's "it", a value written bare that no
  rule placed in a call ("a ~2 in the pointer"). Read as a question, such a
  request that changes nothing is not `completed` (`might_change`);
- the model, its reply held to a JSON schema where the server enforces one (llama.cpp's
  `response_format`; Ollama's `format`), asked after the conversation so far (the cached
  prefix is reused; "it" is resolved from it). A code name it gives is kept only when the
  task or the conversation contains it. It does not overrule the rules on safety (a
  destructive request is declined) nor on a change (a 1.5B model labelled "Fix the bug ... so
  that the tests pass" run-and-report), nor on a bug told as what happens ("NO_COLOR should
  win", "X is False?? 2.0.0 is clearly not 3.0.0": a fix, proposed for the user to review; on
  the 1.5B model over the dev tasks its kinds were no better than the rules');
- the rules again where no schema is enforced or the reply is unusable: a fallback only.

What follows from the kind and the words (failures a change is held to, the first call, the
answer's style) is derived here too, in one place.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from . import wording
from .mentions import (
    code_names,
    literal_at,
    literal_calls,
    naming_style,
    value_tokens,
    written_in,
)

IntentKind = Literal["question", "change", "command", "decline"]
#: Which failures that were there before a change still count against it.
Held = Literal["all", "related", "none"]
#: How a question's answer is asked for (agent/prompts.py HOW_TO_*).
AnswerStyle = Literal["answer", "explain", "use", "bug", "history"]

#: The JSON schema a model's intent reply is held to (and the reply's fields). Short on
#: purpose: every token of it is generated before the first step (a reason to refuse was
#: measured at 40-60 tokens on the 1.5B model, written for every kind; it is not asked).
#: The words the model chooses from: a small model picks a kind better by what it does.
MODEL_KINDS: dict[str, IntentKind] = {
    "answer_question": "question",
    "edit_files": "change",
    "run_and_report": "command",
    "refuse": "decline",
}
INTENT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "request": {"type": "string", "enum": list(MODEL_KINDS)},
        "names": {"type": "array", "items": {"type": "string"}, "maxItems": 4},
        "calls": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
    },
    "required": ["request", "names"],
}

INTENT_QUESTION = (
    "Before acting, classify the user's newest message: {task}\n\n"
    "Reply with JSON only.\n"
    '"request": "answer_question" when it asks what code does, returns or means, where '
    'something is, or what a change would affect ("if I change f, what breaks?"); "edit_files" '
    'when files must be changed or created (fix, add, rename, document, a README), also when asked politely as a question ("can you give f an '
    'argument?") or told as a symptom ("f(x) gives A, it should be B"); "run_and_report" when '
    'it asks to run something (the tests) and report; "refuse" only when it asks to destroy '
    "work or history (delete everything, reset, force-push) or to act outside this repository "
    "(publish, send mail, the user's accounts or files in their home folder).\n"
    '"names": the functions or classes it is about; for "it" or "that function", the one the '
    "conversation was about.\n"
    '"calls": for a question about what code gives for some input, that call written in '
    'Python with literal arguments ("what if I pass <value> to <function>" -> '
    '"<function>(<value>)"); else none.'
)

# --- the rules (the fallback): their words are in agent/wording.py ------------------------

DECLINED = "I won't do that: {reason} Nothing was changed."
DESTRUCTIVE_REASON = (
    "it would destroy work or history that cannot be recovered from here. If you mean it, do "
    "it yourself with git (for example on a new branch, so nothing is lost), or ask me for one "
    "specific change."
)
OUTSIDE_REASON = (
    "it acts outside this repository (publishing, the network, your accounts and their "
    "credentials), and I only read, run and propose changes inside it. Do it yourself with the "
    "project's own tools; I can prepare changes in the repository for it."
)


#: "rename slugify to make_slug", "rename it everywhere to make_slug".


def _sentences(task: str) -> list[str]:
    return re.split(r"(?<=[.!?\n])\s+", task.strip())


def _clauses(sentences: list[str]) -> list[str]:
    """Each sentence's parts after a comma, "and" or "then" ("the test fails, fix it")."""
    return [c for s in sentences for c in re.split(r"[,;:]\s*|\s+(?:and|then|&)\s+", s)]


@dataclass(frozen=True)
class TaskIntent:
    """What one message asks. Made by `decide` (model) or `from_rules`; never changed after."""

    task: str
    kind: IntentKind = "question"
    names: tuple[str, ...] = ()
    calls: tuple[str, ...] = ()
    decided_by: Literal["model", "rules"] = "rules"
    #: Names the conversation established for a follow-up that points back ("what about it?").
    carried: tuple[str, ...] = field(default=())
    #: Names the answer before it wrote as code: where a value it gives goes ("pass it 'red'").
    said: tuple[str, ...] = field(default=())

    @property
    def change(self) -> bool:
        return self.kind == "change"

    @property
    def fix(self) -> bool:
        """A change that repairs something (a fix, a symptom to correct)."""
        return self.change and (
            # "test_add fails, fix add": asked in any clause
            any(wording.ASKS_TO_FIX.match(c) for c in _clauses(_sentences(self.task)))
            or _reports_symptom(self.task)
        )

    @property
    def mends(self) -> bool:
        """A fix of what code does now, not a feature told with the default it keeps."""
        return self.fix and wording.DEFAULT_KEPT.search(self.task) is None

    @property
    def symptom_calls(self) -> tuple[str, ...]:
        """The calls a change told by its symptom writes ("ordinalize(-1021) gives '-1021th',
        it should be '-1021st'"): a fix must change what they give (tools/patch.py checks
        each proposal by them)."""
        told = wording.SHOULD.search(self.task) or _complains(self.task) or _states(self.task)
        return self.calls if self.change and told else ()

    @property
    def symptom_wants(self) -> dict[str, str]:
        """What the task says its one symptom call should give, as the literal it writes
        ("it should be '-1021st'" -> {"ordinalize(-1021)": "'-1021st'"}): a fix is then checked
        by that value, not only by a change. {} for several calls, or a value that is no
        literal ("it should be plural")."""
        calls = self.symptom_calls
        found = wording.SHOULD.search(self.task)
        wanted = literal_at(self.task[found.end() :]) if found and len(calls) == 1 else None
        return {calls[0]: wanted} if wanted is not None else {}

    @property
    def words(self) -> tuple[str, ...]:
        """The task's own words, lowercase, of three letters or more, its stop words left out."""
        return tuple(dict.fromkeys(word.lower() for word in wording.own_words(self.task)))

    @property
    def held(self) -> Held:
        """Which failures that were there before a change still count against it:
        "all" when the task speaks of failing tests or asks for them to pass; "related" for a
        fix (a failing test using a file the change touches); "none" for other changes."""
        if self.failing_tests or wording.TESTS_PASS.search(self.task) is not None:
            return "all"
        return "related" if self.fix else "none"

    @property
    def adds_tests(self) -> bool:
        """A change that writes new tests ("add tests for escape"): they go with the tests."""
        return self.change and wording.ADDS_TESTS.search(self.task) is not None

    @property
    def failing_tests(self) -> bool:
        """The task speaks of tests that fail, or asks which do (their output is read first)."""
        return self.asks_which_fail or wording.FAILING.search(self.task) is not None

    @property
    def asks_which_fail(self) -> bool:
        """The task asks which tests fail or if they pass (the answer names those run reports)."""
        state = self.kind == "question" and wording.SUITE_STATE.search(self.task) is not None
        return state or wording.WHICH_FAIL.search(self.task) is not None

    @property
    def asks_why(self) -> bool:
        """Asks why code gives what it gives (or where a part of it comes from)."""
        return self.kind == "question" and wording.WHY.search(self.task) is not None

    @property
    def asks_callers(self) -> Literal["callers", "impact", None]:
        """Asks what uses a name ("callers"), or what changing it would affect ("impact")."""
        found = wording.CALLERS.search(self.task) if self.kind == "question" else None
        return None if found is None else "impact" if found[1] else "callers"

    @property
    def history(self) -> bool:
        return wording.HISTORY.search(self.task) is not None

    @property
    def last_commit(self) -> bool:
        return wording.LAST_COMMIT.search(self.task) is not None

    @property
    def refers_back(self) -> bool:
        return wording.REFERS_BACK.search(self.task) is not None

    @property
    def style(self) -> AnswerStyle:
        """How a question's answer is asked for."""
        if self.history:
            return "history"
        if wording.BUG.search(self.task):
            return "bug"
        found = wording.EXPLAIN.search(
            self.task
        )  # what it does with a value written is answered first
        if found and (found[1] or not self.asks_value):
            return "explain"
        return "use" if wording.USE.search(self.task) else "answer"

    @property
    def rename(self) -> tuple[str, str] | None:
        """(old, new) when the change renames a function, class or method; a pointer ("rename
        it") is the name the conversation established."""
        found = wording.RENAME.search(self.task) if self.change else None
        if found is None:
            return None
        old = found.group(1)
        if old.lower() in wording.POINTERS:
            pointed = [*self.carried, *self.names]
            if not pointed:
                return None
            old = pointed[0]
        return old, found.group(2)

    @property
    def literal(self) -> str | None:
        """The one value a question asks about, when it writes exactly one and no call ("what
        if I pass '3rd' to ordinalize", "what does it give for 'egg_and_ham'?"), else the one
        example it gives bare ("something like iPhone?")."""
        if self.calls or self.kind != "question":
            return None
        found = [m.group(1) or m.group(0) for m in wording.LITERAL.finditer(self.task)]
        if not found:  # "something like iPhone?": a name written bare is a string
            examples = wording.EXAMPLE.findall(self.task)
            found = [e if e[-1].isdigit() else repr(e) for e in examples]
        return found[0] if len(found) == 1 else None

    @property
    def asks_value(self) -> bool:
        """A question about what code gives for an input (a call or a value it writes, placed
        in a call or not): only running it answers that (a small model cannot run code in its
        head). Not where something is, which code it is, or why (fresh dev pa-case and
        pa-repeated-name: no call placed, nothing ran, a prose answer `completed`)."""
        if self.kind != "question":
            return False
        if self.calls or self.literal is not None:
            return True
        told = _unplaced_value(self)
        return told and not re.match(r"\s*(?:where|which)\b", self.task, re.I) and not self.asks_why

    def written_values(self) -> list[str]:
        """The values the task writes, as Python literals: quoted ones, then bare ones, a
        string unless a whole number ("what about 1.2, is that allowed?" of a version parser
        hinted as 1.2 was run with a float: dev sv-chat-parse-junk)."""
        quoted = [m.group(1) or m.group(0) for m in wording.LITERAL.finditer(self.task)]
        bare = value_tokens(self.task)
        return quoted + [v if re.fullmatch(r"-?\d+", v) else repr(v) for v in bare]

    @property
    def might_change(self) -> bool:
        """Read as a question or a command in words that may ask for a change (a change word
        inside, "can f take ...?"): changing nothing is not done. Not
        a question about what a change would affect: "if I change f" supposes the change."""
        if self.kind not in ("question", "command") or self.asks_callers == "impact":
            return False
        return _open_to_change(self.task)

    @property
    def section(self) -> str | None:
        """The title of the section a change adds to a document ("add a Usage section"): the
        change must add a heading with it (agent/outcome.py `adds_heading`)."""
        found = wording.SECTION.search(self.task) if self.change else None
        if found is None or wording.IN_SECTION.search(
            self.task, 0, found.start(found.lastindex or 0)
        ):
            return None  # "add an example to the Usage section": one that is there
        return (found.group(1) or found.group(2)).strip()

    @property
    def edits_text(self) -> bool:
        """The change is to a file that is not Python (it is written as SEARCH/REPLACE)."""
        return self.change and wording.TEXT_FILE.search(self.task) is not None

    def about_code(self, repo_files: list[str]) -> bool:
        """The task names something of this repository (a path, a file, an identifier)."""
        names = set(repo_files) | {path.rsplit("/", 1)[-1] for path in repo_files}
        names |= {name.rsplit(".", 1)[0] for name in names if len(name.rsplit(".", 1)[0]) >= 4}
        words = set(re.findall(r"[\w./-]+", self.task))
        return bool(
            words & names
            or self.names
            or self.asks_value
            or self.calls
            or wording.CODE_NOUNS.search(self.task)
        )

    def first_call(self) -> str | None:
        """The call a task plainly asks for first (run the tests, read history, list files)."""
        if self.kind == "command" and re.search(r"\btests?\b", self.task, re.I):
            return "run_tests()"
        if self.history:
            return "git_log(max_count=3)"
        if wording.FILES_QUESTION.search(self.task):
            words = {word.lower() for word in re.findall(r"\w+", self.task)}
            glob = next((g for lang, g in wording.LANGUAGE_GLOBS.items() if lang in words), "*")
            return f'list_files(pattern="{glob}")'
        return None

    def first_read(self, repo_files: list[str], shown: Sequence[str] = ()) -> str:
        """The call that starts doing what the task asks: the one it plainly asks for, else
        read the file it names, else find the name it mentions (or, for a value, run the
        code `shown` for it: a `<function>` placeholder was run as written, dev jp-no-slash)."""
        call = self.first_call()
        if call is not None:
            return call
        for path in repo_files:
            if path in self.task:
                return f'read_file(path="{path}")'
        if self.asks_value:  # only running it says what code gives
            name = next(iter([*self.names, *self.carried, *shown]), "<function>")
            values = self.literal or ", ".join(self.written_values()[:3])
            call = self.calls[0] if self.calls else f"{name}({values})"
            return f"evaluate(code={call!r})"
        for name in [*self.names, *self.carried]:
            return f'rg_search(pattern="{name.rsplit(".", 1)[-1]}")'
        return 'rg_search(pattern="<a name from the question>")'


def rules_kind(task: str) -> IntentKind:
    """The kind of request by the rules (the fallback when no model decides)."""
    sentences = _sentences(task)
    if wording.DESTRUCTIVE.search(task) or _acts_outside(task):
        return "decline"
    asks = any(wording.ASKS.match(s) for s in sentences) or any(
        map(wording.ASKS_THEN.match, _clauses(sentences))
    )
    if asks or _reports_symptom(task):
        return "change"
    if any(wording.ASKS_TO_RUN.match(sentence) for sentence in sentences):
        return "command"
    return "question"


def _reports_symptom(task: str) -> bool:
    """It tells a bug by its symptom ("... it should be '-1021st'", "I still get colours"), not
    in a question ("how do i get camelCase instead of CamelCase out of camelize?", dev)."""
    sentences = _sentences(task)
    if any(wording.WANTS.search(s) and not wording.QUESTION_FORM.search(s) for s in sentences):
        return True
    if _complains(task) or _states(task):
        return True
    return (
        wording.SYMPTOM.search(task) is not None
        and not any(wording.QUESTION_FORM.search(sentence) for sentence in sentences)
        and wording.TELLS.match(task) is None
    )


def _complains(task: str) -> bool:
    """It states that code does something wrong, asking nothing ("X is False?? 2.0.0 is clearly
    not 3.0.0", "`compare 1.0.0 2.0.0` prints 1 but 1.0.0 is the older one"): a bug report,
    which a proposal answers (nothing is written unless the user accepts it). Not a message
    phrased as a question, a request to tell, words of someone unsure, or a change asked for
    plainly ("add a flag, but keep the default": a feature)."""
    return (
        wording.QUESTION_FORM.search(task) is None
        and wording.COMPLAINT.search(task) is not None
        and wording.TELLS.match(task) is None
        and wording.UNSURE.search(task) is None
        and not plain_change(task)
    )


def _states(task: str) -> bool:
    """It says what named code does, asking nothing and no one to tell it ("after i print
    colored('WARN', on_color='on_red') everything after it stays red"): a report, which a
    proposal answers, as a complaint is. Not a message with a question mark or a word that
    asks anywhere in it ("resolve_pointer(...) -> what do i get"), a request to tell, words of
    someone unsure, or a change asked for ("add a test for f", "make f log": no symptom)."""
    return (
        wording.ASKING_WORD.search(task) is None
        and wording.TELLS.match(task) is None
        and wording.UNSURE.search(task) is None
        and bool(code_names(task) or literal_calls(task))
        and not any(wording.ASKS.match(sentence) for sentence in _sentences(task))
    )


def plain_change(task: str) -> bool:
    """A sentence of `task` asks in the imperative for an edit ("Fix the bug ...", "can you
    add ..."): a change, whatever a model's reading of it."""
    return wording.DESTRUCTIVE.search(task) is None and any(
        wording.PLAIN_CHANGE.match(sentence) for sentence in _sentences(task)
    )


def from_rules(task: str, *, carried: tuple[str, ...] = ()) -> TaskIntent:
    """The intent by the rules alone."""
    return TaskIntent(
        task=task,
        kind=rules_kind(task),
        names=tuple(code_names(task)),
        calls=tuple(literal_calls(task)),
        carried=carried if wording.REFERS_BACK.search(task) else (),
    )


def _acts_outside(task: str) -> bool:
    """It asks to act outside the repository: publish, send, or use the user's own files."""
    sentences = _sentences(task)
    return (
        wording.HOME_PATH.search(task) is not None
        # "send the header first in write()": a word of code where the sentence names code
        or any(
            wording.OUTSIDE.match(s) and (wording.OUTSIDE_THEN.match(s) or not code_names(s))
            for s in sentences
        )
        or any(wording.OUTSIDE_THEN.match(clause) for clause in _clauses(sentences))
    )


def settled(intent: TaskIntent, *, follow_up: bool) -> bool:
    """Whether the rules' intent stands without asking the model (see the module's doc)."""
    if intent.kind == "decline":
        return True
    if follow_up and intent.refers_back:
        return False  # "it": the model reads what the conversation established
    if intent.kind == "change":
        return plain_change(intent.task)  # a symptom, "make ...": the model reads it
    plain = intent.kind == "command" or wording.QUESTION_FORM.search(intent.task) is not None
    return plain and not _open_to_change(intent.task) and not _unplaced_value(intent)


def _unplaced_value(intent: TaskIntent) -> bool:
    """A question that writes values no rule placed in a call: bare ("what does JsonPointer do
    with a ~2 in the pointer": dev jp-bad-escape, answered from the code read, a false
    success), or quoted but more than one, with no call ("'Hello {}' against 'hello World'":
    fresh dev pa-case, the same), in its first line and no more than three: the model writes
    the call, held to the task's values."""
    if intent.kind != "question" or intent.calls or intent.literal is not None:
        return False
    asked = intent.task.strip().split("\n", 1)[0]  # not a selection pasted below it
    # a whole number alone is a line, a step or an issue as often as a value ("question 3")
    told = [value for value in value_tokens(asked) if not value.isdigit()]
    return 0 < len(told) <= 3 or wording.LITERAL.search(asked) is not None


def _open_to_change(task: str) -> bool:
    """A change word inside a question or command, or a question about what could be."""
    return wording.CHANGE_WORD.search(task) is not None or wording.ABLE.search(task) is not None


def decide(
    task: str,
    *,
    follow_up: bool,
    carried: tuple[str, ...] = (),
    ask: Callable[[str], tuple[str, str] | None],
    taken: Callable[[tuple[str, ...]], dict[str, set[str]]] = lambda names: {},
) -> TaskIntent:
    """The task's intent: by the rules where they settle it, else by the model (`ask` gets the
    question, returns its schema-held reply with the conversation's text, or None), or rules;
    a question whether a function could take a parameter it does not take is a change
    (`_offers_parameter`; `taken` gives, for each of some names the repository defines, the
    parameters its definitions take)."""
    ruled = from_rules(task, carried=carried)
    if settled(ruled, follow_up=follow_up):
        return _offers_parameter(ruled, taken)
    asked = ask(INTENT_QUESTION.format(task=task))
    if asked is None:
        return _offers_parameter(ruled, taken)
    reply, conversation = asked
    modelled = from_model_reply(
        task, reply, conversation=conversation, carried=carried, defines=lambda n: bool(taken((n,)))
    )
    return _offers_parameter(modelled or ruled, taken)


def _offers_parameter(
    intent: TaskIntent, taken: Callable[[tuple[str, ...]], dict[str, set[str]]]
) -> TaskIntent:
    """`intent`, a change where it is a question or a command asking whether code could take a
    parameter it names that the definitions it names do not take ("could the constructor
    take an optional relative arg?", "can it take a skip_none flag?"): a feature asked as a
    question, proposed for the user to review (nothing is written unless they accept), not
    described in prose and left undone. A parameter they take already ("can slugify take a
    separator?" where it does) leaves a question about what is. Where the task writes no
    code name ("can dasherize take a separator?"), the words it uses that the repository
    defines are the names. Measured on the 1.5B model: read as questions, such requests
    ended after one prose step."""
    if intent.kind not in ("question", "command"):
        return intent
    if not any(wording.ABLE.match(sentence) for sentence in _sentences(intent.task)):
        return intent
    if not (wording.PARAMETER.search(intent.task) or wording.DEFAULT_KEPT.search(intent.task)):
        return intent  # "can add take a third number?": no parameter is told
    told = {
        found.group(found.lastindex or 0).lower()
        for found in wording.NAMED_PARAMETER.finditer(intent.task)
    } - wording.NOT_A_NAME
    words = (w for w in re.findall(r"[A-Za-z_]\w{2,}", intent.task) if w.lower() not in told)
    names = intent.names or tuple(dict.fromkeys(words))
    defined = taken(names) if told and names else {}
    params = {name.lower() for found in defined.values() for name in found}
    if not defined or not told - params:
        return intent
    return replace(intent, kind="change", names=intent.names or tuple(defined))


def from_model_reply(
    task: str,
    reply: str,
    *,
    conversation: str = "",
    carried: tuple[str, ...] = (),
    defines: Callable[[str], bool] = lambda name: False,
) -> TaskIntent | None:
    """The intent from a model's JSON reply (None when it is not the schema's). The model's
    names are kept when the task or the conversation contains them (a follow-up's "it"), never
    invented ones; the rules' names and calls are added to them."""
    try:
        data = json.loads(reply)
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("request") not in MODEL_KINDS:
        return None
    kind = MODEL_KINDS[data["request"]]
    ruled = from_rules(task, carried=carried)
    if ruled.kind == "decline" or (
        ruled.kind == "change" and (kind != "decline" or plain_change(task))
    ):
        # Safety is never left to a model's reading (a destructive request is declined
        # whatever it says), and a request the words make a change is not turned into a
        # question or a command: measured on the 1.5B model, "can you add ..." came back a
        # question and "Fix the bug ... so that the tests pass" run-and-report
        kind = ruled.kind
    given = data.get("names")
    said: list[Any] = given if isinstance(given, list) else []
    known = task + "\n" + conversation
    names = [
        str(name).strip("`() ")
        for name in said
        if isinstance(name, str) and re.fullmatch(r"[A-Za-z_][\w.]*(?:\(\))?", name.strip("` "))
    ]
    names = [n for n in names if re.search(rf"\b{re.escape(n)}\b", known) and not naming_style(n)]
    merged = list(dict.fromkeys([*ruled.names, *names]))
    # a call the model writes counts when it is literal, its name the task's or the talk's, its
    # arguments the task's ("Which test checks it?" became a test's multiply(4, 3): dev)
    given_calls = data.get("calls")
    written = [
        c for c in (given_calls if isinstance(given_calls, list) else []) if isinstance(c, str)
    ]
    calls = list(ruled.calls)
    for call in (found for text in written for found in literal_calls(text)):
        # ... or a function the repository defines, which the question need not name
        # ("is matching case sensitive? e.g. 'Hello {}' against 'hello World'": fresh dev pa-case)
        callee = call.split("(", 1)[0].rsplit(".", 1)[-1]
        where = f"{known} {callee}" if defines(callee) else known
        if written_in(call, where, values=task) and call not in calls:
            calls.append(call)
    return replace(
        ruled, kind=kind, names=tuple(merged), calls=tuple(calls[:4]), decided_by="model"
    )


def declined_answer(intent: TaskIntent) -> str:
    """The one-step answer to a request the agent declines, with why: it acts outside the
    repository, else it destroys work."""
    outside = not wording.DESTRUCTIVE.search(intent.task) and _acts_outside(intent.task)
    return DECLINED.format(reason=OUTSIDE_REASON if outside else DESTRUCTIVE_REASON)
