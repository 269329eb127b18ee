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
  what could be ("can f take a separator?"), a follow-up's "it". Read as a question, such a
  request that changes nothing is not `completed` (`might_change`);
- the model, its reply held to a JSON schema where the server enforces one (llama.cpp's
  `response_format`; Ollama's `format`), asked after the conversation so far (the cached
  prefix is reused; "it" is resolved from it). A code name it gives is kept only when the
  task or the conversation contains it. It does not overrule the rules on safety (a
  destructive request is declined) nor on a change (a 1.5B model labelled "Fix the bug ... so
  that the tests pass" run-and-report), nor on a bug told as what happens ("NO_COLOR should
  win": a fix; on the 1.5B model over the dev tasks its kinds were no better than the rules');
- the rules again where no schema is enforced or the reply is unusable: a fallback only.

What follows from the kind and the words (failures a change is held to, the first call, the
answer's style) is derived here too, in one place.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from .mentions import code_names, literal_at, literal_calls, naming_style, written_in

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

# --- the rules (the fallback) ---------------------------------------------------------------

_CHANGE_VERBS = (
    r"fix|add|implement|change|update|refactor|rename|write|create|remove|delete|modify|"
    r"make|replace|edit|correct|patch|convert|move|extract|append|insert|improve|rewrite|give|"
    r"document|support|allow|handle|repair|resolve|debug"
)
# An imperative at the start, or after a polite lead-in: "fix the test", "please add ...",
# "can you update ...". A question about a change ("why does fix() fail?") is not one.
_LEAD_IN = (
    r"^\s*(?:(?:please|pls|now|then|ok|okay|so|go ahead and|also|and)[,\s]+)*"
    r"(?:(?:can|could|would|will) you\s+(?:please\s+)?|i (?:want|need|would like) you to\s+"
    r"|let'?s\s+)?"
)
#: Change verbs that ask for an answer here ("give me the failures", "make a list of ...").
_TELLING = r"(?!give\s+(?:me|us)\b|make\s+(?:a\s+list|sure|certain)\b|write\s+down\b)"
_ASKS = re.compile(rf"{_LEAD_IN}{_TELLING}(?:{_CHANGE_VERBS})\b", re.IGNORECASE)
#: The same after a comma or "and" ("the test fails, fix it"), not its subject ("and add is")
_ASKS_THEN = re.compile(
    rf"{_LEAD_IN}{_TELLING}(?:{_CHANGE_VERBS})\b(?!\s*\(|\s+(?:is|are|was|were|does|did|returns?|gives?"
    r"|should|seems?|ha[sd]|have|works?|fails?)\b)",
    re.IGNORECASE,
)
#: Verbs that say plainly to edit files ("make this repository new" is for the model to read).
_EDIT_VERBS = (
    r"fix|add|implement|change|update|refactor|rename|write|create|remove|modify|replace|edit|"
    r"correct|convert|move|extract|insert|rewrite|give|document|repair"
)
_PLAIN_CHANGE = re.compile(rf"{_LEAD_IN}(?:{_EDIT_VERBS})\b", re.IGNORECASE)
#: A bug told by its symptom: "slug('A B') gives 'a_b', it should be 'a-b'".
_SHOULD = re.compile(
    r"\b(?:it|that|this|but)\s+should\s+(?:be|give|return|print|say|raise)\b|\binstead of\b",
    re.IGNORECASE,
)
#: The same, or a default a feature keeps, told as a statement ("... a step? default stays 1").
_WANTS = re.compile(_SHOULD.pattern + r"|\bdefaults?\s+(?:stays?|remains?|should|must)\b", re.I)
#: A bug told as a statement of what happens ("with NO_COLOR set I still get colours. NO_COLOR
#: should win"): a request to fix it, as a symptom with a call is. Not in a question, nor in a
#: request to tell ("explain why it still ...").
_SYMPTOM = re.compile(
    r"\b(?:should(?:n'?t| not)?|still|instead|wrong|broken|needs|(?:does|do|is|are)n'?t work(?:ing)?)\b",
    re.IGNORECASE,
)
_TELLS = re.compile(r"^\s*(?:explain|tell|show|describe|list|summari[sz]e|find|help)\b", re.I)
#: A statement that something is not as it should be ("still gets colours", "X should win").
_COMPLAINT = re.compile(
    r"\b(?:should|shouldn'?t|still|instead|wrong|broken|expected|but|not|never|"
    r"(?:does|do|is|are|was|can|won)n'?t)\b",
    re.IGNORECASE,
)
#: A change asked for inside a sentence ("how do I add a user?", "is it possible to make ...",
#: "run the tests and fix what fails"); not a function named like one ("what does add do?").
_CHANGE_WORD = re.compile(rf"\b(?:to|i|you|we|please|and|then)\s+(?:{_CHANGE_VERBS})\b", re.I)
#: A message phrased as a question.
_QUESTION_FORM = re.compile(
    r"^\s*(?:what|which|where|why|how|who|when|is|are|does|do|did)\b|\?\s*$", re.IGNORECASE
)
#: A question about what could be ("can slugify take a separator?", "is there a way to ..."):
#: a feature asked as a question as often as a question about behaviour.
_ABLE = re.compile(
    r"^\s*(?:can|could|would|will|is (?:it|there) (?:possible|a way|an option)|any way)\b",
    re.IGNORECASE,
)
_ASKS_TO_RUN = re.compile(rf"{_LEAD_IN}(?:run|execute|start)\b", re.IGNORECASE)
#: A change that is a fix: what was broken must work afterwards.
_ASKS_TO_FIX = re.compile(rf"{_LEAD_IN}(?:fix|repair|correct|resolve|debug)\b", re.IGNORECASE)
#: What no agent of a repository does on a message's say-so.
_DESTRUCTIVE = re.compile(
    r"\b(?:delete|remove|wipe|erase|destroy|nuke|drop)\s+(?:\w+\s+){0,2}(?:everything|all\b"
    r"|the (?:whole|entire) (?:repo|repository|project)|(?:the\s+)?(?:git\s+)?history)"
    r"|\bstart (?:over|from scratch)\b|\bforce[- ]push\b|\brm\s+-rf\b|\breset\s+--hard\b",
    re.IGNORECASE,
)
#: Within a sentence: a dot before a letter is a file's ("strings.py"), not the sentence's end.
_IN = r"(?:[^.?!]|\.(?=\w))"
#: "add tests for escape", "write a unit test for average" (not "... so the tests pass").
_ADDS_TESTS = re.compile(
    rf"\b(?:add|write|create)\b{_IN}{{0,30}}?\b(?:unit\s+)?tests?\b(?!\s+(?:pass|fail))", re.I
)
#: "... so that the tests pass", "make the test pass".
_TESTS_PASS = re.compile(rf"\btests?\b{_IN}{{0,20}}\bpass(?:es)?\b", re.IGNORECASE)
#: "One of the tests fails", "test_average is failing", "the failing tests"; not "run the tests
#: and tell me how many fail" (that asks to run them).
_FAILING = re.compile(
    r"\b(?:tests?|specs?|test_\w+)\s+(?:\w+\s+){0,2}(?:fails?|failing|failed|errors?|breaks?"
    r"|broke|(?:is|are)\s+(?:broken|red))\b"
    r"|\b(?:failing|failed|broken)\s+(?:\w+\s+)?(?:tests?|specs?|test_\w+)\b",
    re.IGNORECASE,
)
#: "which tests fail", "what tests are failing" (not "how many fail").
_WHICH_FAIL = re.compile(rf"\b(?:which|what)\b{_IN}*\bfail", re.IGNORECASE)
#: The suite's state asked: "anything red in the test suite?" (dev sv-run-tests), "tests pass?"
_SUITE_STATE = re.compile(
    rf"\b(?:tests?|suite|ci)\b{_IN}*\b(?:red|green|pass(?:es|ing)?|broken)\b"
    rf"|\b(?:red|green)\b{_IN}*\b(?:tests?|suite)\b",
    re.IGNORECASE,
)
_HISTORY = re.compile(
    r"\b(?:commits?|committed|history|git log|(?:last|latest|recent)\s+changes?)\b", re.I
)
_LAST_COMMIT = re.compile(
    r"\b(?:last|latest|recent|newest|previous|head)\s+commit\b|\bHEAD\b", re.IGNORECASE
)
#: A question about what is wrong: a bug, a failure, an error.
_BUG = re.compile(
    r"\bbugs?\b|\bbuggy\b|\bwhat(?:'s| is) wrong\b"
    rf"|\bwhy\b{_IN}*\b(?:fail\w*|break\w*|broken|crash\w*|wrong|error\w*|raise\w*)\b",
    re.IGNORECASE,
)
#: A question that asks what code does or how it works ("how do I get ..." asks for a way).
_EXPLAIN = re.compile(
    r"\b(explain|describe|walk (?:me )?through)\b|\bhow (?:does|do|is)\b(?!\s+(?:i|we)\b)"
    rf"|\bwhat (?:does|do)\b{_IN}*\bdo\b",
    re.IGNORECASE,
)
#: A question that asks for a way to do something with the code: "how do I get camelCase?"
_USE = re.compile(r"\bhow (?:do|can|could|should|would) (?:i|we)\b", re.IGNORECASE)
#: A follow-up that points back at what the conversation was about ("it", "that function").
_REFERS_BACK = re.compile(r"\b(?:it|its|this|that|these|those|them|they|the same)\b", re.I)
_CODE_NOUNS = re.compile(
    r"\b(?:function|method|class|module|file|files|test|tests|bug|code|repo|repository|"
    r"project|commit|line|variable|import|error|argument|parameter|docstring|readme)s?\b",
    re.IGNORECASE,
)
_FILES_QUESTION = re.compile(rf"\b(?:which|what|list)\b{_IN}{{0,30}}\bfiles\b", re.I)
#: "Which Python files ...": the glob list_files is called with.
_LANGUAGE_GLOBS = {"python": "*.py", "typescript": "*.ts", "javascript": "*.js", "rust": "*.rs"}
_LANGUAGE_GLOBS |= {"go": "*.go", "java": "*.java", "markdown": "*.md"}
#: Who uses a name, or what changing it affects: "what calls walk?", "if I change f, what breaks?"
_CALLERS = re.compile(
    r"\b(?:what|who|which \w+)\s+(?:else\s+)?(?:calls?|uses?|imports?|depends? on|rel(?:y|ies)"
    rf" on)\b|\bcallers?\b|\bwhere\b{_IN}*\b(?:used|called)\b|\bwhat\b{_IN}*\b(affect|break|impact)",
    re.IGNORECASE,
)
#: What a request asks outside the repository: publishing, deploying, sending, paying.
_OUTSIDE = re.compile(
    rf"{_LEAD_IN}(?:publish|deploy|upload|release|push|send|e-?mail|post|tweet|pay|buy)\b",
    re.IGNORECASE,
)
#: The same after "and", "then" or a comma ("commit it and push"), and what is made on a
#: forge: the verbs that are no words of code ("release the lock", "send the header" are).
_OUTSIDE_THEN = re.compile(
    rf"{_LEAD_IN}(?:(?:git\s+)?push|publish|deploy|upload|e-?mail|tweet"
    r"|(?:open|create|file|submit|raise|make)\s+(?:a|an|the)?\s*(?:new\s+)?(?:pull request|pr"
    r"|merge request|(?:github|gitlab) (?:issue|release)|issue on (?:github|gitlab)))\b",
    re.IGNORECASE,
)
#: A path in the user's home folder ("~/.aws/credentials", "$HOME/.pypirc"), not one quoted
#: as a value: outside the repository, where the tools cannot reach (safety/jail.py).
_HOME_PATH = re.compile(r"(?<![\w/'\"])(?:~|\$HOME)/")
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
_RENAME = re.compile(
    r"\brename\s+(?:the\s+)?(?:function|method|class)?\s*`?([A-Za-z_][\w.]*)`?(?:\(\))?"
    r"(?:\s+\w+){0,3}?\s+(?:to|as|into)\s+`?([A-Za-z_]\w*)",
    re.IGNORECASE,
)
_POINTERS = frozenset({"it", "this", "that", "them"})
#: A change to a file that is not Python: a README, docs, configuration, JavaScript.
_TEXT_FILE = re.compile(
    r"\b(?:readme|changelog|docs?|toml|ya?ml|json|ini|cfg|markdown|javascript)\b"
    r"|\.(?:md|rst|txt|js|ts|toml|ya?ml|json|cfg|ini)\b",
    re.IGNORECASE,
)
#: A value a question writes: a quoted string, or a number after "for", "pass", "with", "of".
_LITERAL = re.compile(r"""'[^'\n]*'|"[^"\n]*"|\b(?:for|pass|with|of|on) (-?\d+(?:\.\d+)?)\b""")


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

    @property
    def change(self) -> bool:
        return self.kind == "change"

    @property
    def fix(self) -> bool:
        """A change that repairs something (a fix, a symptom to correct)."""
        return self.change and (
            any(_ASKS_TO_FIX.match(s) for s in _sentences(self.task)) or _reports_symptom(self.task)
        )

    @property
    def symptom_calls(self) -> tuple[str, ...]:
        """The calls a change told by its symptom writes ("ordinalize(-1021) gives '-1021th',
        it should be '-1021st'"): a fix must change what they give (tools/patch.py checks
        each proposal by them)."""
        return self.calls if self.change and _SHOULD.search(self.task) else ()

    @property
    def symptom_wants(self) -> dict[str, str]:
        """What the task says its one symptom call should give, as the literal it writes
        ("it should be '-1021st'" -> {"ordinalize(-1021)": "'-1021st'"}): a fix is then checked
        by that value, not only by a change. {} for several calls, or a value that is no
        literal ("it should be plural")."""
        calls = self.symptom_calls
        found = _SHOULD.search(self.task)
        wanted = literal_at(self.task[found.end() :]) if found and len(calls) == 1 else None
        return {calls[0]: wanted} if wanted is not None else {}

    @property
    def held(self) -> Held:
        """Which failures that were there before a change still count against it:
        "all" when the task speaks of failing tests or asks for them to pass; "related" for a
        fix (a failing test using a file the change touches); "none" for other changes."""
        if self.failing_tests or _TESTS_PASS.search(self.task) is not None:
            return "all"
        return "related" if self.fix else "none"

    @property
    def adds_tests(self) -> bool:
        """A change that writes new tests ("add tests for escape"): they go with the tests."""
        return self.change and _ADDS_TESTS.search(self.task) is not None

    @property
    def failing_tests(self) -> bool:
        """The task speaks of tests that fail, or asks which do (their output is read first)."""
        return self.asks_which_fail or _FAILING.search(self.task) is not None

    @property
    def asks_which_fail(self) -> bool:
        """The task asks which tests fail or if they pass (the answer names those run reports)."""
        state = self.kind == "question" and _SUITE_STATE.search(self.task) is not None
        return state or _WHICH_FAIL.search(self.task) is not None

    @property
    def asks_callers(self) -> Literal["callers", "impact", None]:
        """Asks what uses a name ("callers"), or what changing it would affect ("impact")."""
        found = _CALLERS.search(self.task) if self.kind == "question" else None
        return None if found is None else "impact" if found[1] else "callers"

    @property
    def history(self) -> bool:
        return _HISTORY.search(self.task) is not None

    @property
    def last_commit(self) -> bool:
        return _LAST_COMMIT.search(self.task) is not None

    @property
    def refers_back(self) -> bool:
        return _REFERS_BACK.search(self.task) is not None

    @property
    def style(self) -> AnswerStyle:
        """How a question's answer is asked for."""
        if self.history:
            return "history"
        if _BUG.search(self.task):
            return "bug"
        found = _EXPLAIN.search(self.task)  # what it does with a value written is answered first
        if found and (found[1] or not self.asks_value):
            return "explain"
        return "use" if _USE.search(self.task) else "answer"

    @property
    def rename(self) -> tuple[str, str] | None:
        """(old, new) when the change renames a function, class or method; a pointer ("rename
        it") is the name the conversation established."""
        found = _RENAME.search(self.task) if self.change else None
        if found is None:
            return None
        old = found.group(1)
        if old.lower() in _POINTERS:
            pointed = [*self.carried, *self.names]
            if not pointed:
                return None
            old = pointed[0]
        return old, found.group(2)

    @property
    def literal(self) -> str | None:
        """The one value a question asks about, when it writes exactly one and no call ("what
        if I pass '3rd' to ordinalize", "what does it give for 'egg_and_ham'?")."""
        if self.calls or self.kind != "question":
            return None
        found = [m.group(1) or m.group(0) for m in _LITERAL.finditer(self.task)]
        return found[0] if len(found) == 1 else None

    @property
    def asks_value(self) -> bool:
        """A question about what code gives for an input (a call or a value it writes): only
        running it answers that (a small model cannot run code in its head)."""
        return self.kind == "question" and bool(self.calls or self.literal is not None)

    @property
    def might_change(self) -> bool:
        """Read as a question or a command in words that may ask for a change (a change word
        inside, "can f take ...?", a statement of a symptom): changing nothing is not done."""
        if self.kind not in ("question", "command"):
            return False
        if _open_to_change(self.task):
            return True
        statement = _QUESTION_FORM.search(self.task) is None
        return self.kind == "question" and statement and _COMPLAINT.search(self.task) is not None

    @property
    def edits_text(self) -> bool:
        """The change is to a file that is not Python (it is written as SEARCH/REPLACE)."""
        return self.change and _TEXT_FILE.search(self.task) is not None

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
            or _CODE_NOUNS.search(self.task)
        )

    def first_call(self) -> str | None:
        """The call a task plainly asks for first (run the tests, read history, list files)."""
        if self.kind == "command" and re.search(r"\btests?\b", self.task, re.I):
            return "run_tests()"
        if self.history:
            return "git_log(max_count=3)"
        if _FILES_QUESTION.search(self.task):
            words = {word.lower() for word in re.findall(r"\w+", self.task)}
            glob = next((g for lang, g in _LANGUAGE_GLOBS.items() if lang in words), "*")
            return f'list_files(pattern="{glob}")'
        return None

    def first_read(self, repo_files: list[str]) -> str:
        """The call that starts doing what the task asks: the one it plainly asks for, else
        read the file it names, else find the name it mentions."""
        call = self.first_call()
        if call is not None:
            return call
        for path in repo_files:
            if path in self.task:
                return f'read_file(path="{path}")'
        if self.asks_value:  # only running it says what code gives
            name = next(iter([*self.names, *self.carried]), "<function>")
            call = self.calls[0] if self.calls else f"{name}({self.literal})"
            return f"evaluate(code={call!r})"
        for name in [*self.names, *self.carried]:
            return f'rg_search(pattern="{name.rsplit(".", 1)[-1]}")'
        return 'rg_search(pattern="<a name from the question>")'


def rules_kind(task: str) -> IntentKind:
    """The kind of request by the rules (the fallback when no model decides)."""
    sentences = _sentences(task)
    if _DESTRUCTIVE.search(task) or _acts_outside(task):
        return "decline"
    asks = any(_ASKS.match(s) for s in sentences) or any(map(_ASKS_THEN.match, _clauses(sentences)))
    if asks or _reports_symptom(task):
        return "change"
    if any(_ASKS_TO_RUN.match(sentence) for sentence in sentences):
        return "command"
    return "question"


def _reports_symptom(task: str) -> bool:
    """It tells a bug by its symptom ("... it should be '-1021st'", "I still get colours"), not
    in a question ("how do i get camelCase instead of CamelCase out of camelize?", dev)."""
    sentences = _sentences(task)
    if any(_WANTS.search(s) and not _QUESTION_FORM.search(s) for s in sentences):
        return True
    return (
        _SYMPTOM.search(task) is not None
        and not any(_QUESTION_FORM.search(sentence) for sentence in sentences)
        and _TELLS.match(task) is None
    )


def plain_change(task: str) -> bool:
    """A sentence of `task` asks in the imperative for an edit ("Fix the bug ...", "can you
    add ..."): a change, whatever a model's reading of it."""
    return _DESTRUCTIVE.search(task) is None and any(
        _PLAIN_CHANGE.match(sentence) for sentence in _sentences(task)
    )


def from_rules(task: str, *, carried: tuple[str, ...] = ()) -> TaskIntent:
    """The intent by the rules alone."""
    return TaskIntent(
        task=task,
        kind=rules_kind(task),
        names=tuple(code_names(task)),
        calls=tuple(literal_calls(task)),
        carried=carried if _REFERS_BACK.search(task) else (),
    )


def _acts_outside(task: str) -> bool:
    """It asks to act outside the repository: publish, send, or use the user's own files."""
    sentences = _sentences(task)
    return (
        _HOME_PATH.search(task) is not None
        # "send the header first in write()": a word of code where the sentence names code
        or any(
            _OUTSIDE.match(s) and (_OUTSIDE_THEN.match(s) or not code_names(s)) for s in sentences
        )
        or any(_OUTSIDE_THEN.match(clause) for clause in _clauses(sentences))
    )


def settled(intent: TaskIntent, *, follow_up: bool) -> bool:
    """Whether the rules' intent stands without asking the model (see the module's doc)."""
    if intent.kind == "decline":
        return True
    if follow_up and intent.refers_back:
        return False  # "it": the model reads what the conversation established
    if intent.kind == "change":
        return plain_change(intent.task)  # a symptom, "make ...": the model reads it
    plain = intent.kind == "command" or _QUESTION_FORM.search(intent.task) is not None
    return plain and not _open_to_change(intent.task)


def _open_to_change(task: str) -> bool:
    """A change word inside a question or command, or a question about what could be."""
    return _CHANGE_WORD.search(task) is not None or _ABLE.search(task) is not None


Asker = Callable[[str], tuple[str, str] | None]


def decide(task: str, *, follow_up: bool, carried: tuple[str, ...] = (), ask: Asker) -> TaskIntent:
    """The task's intent: by the rules where they settle it, else by the model (`ask` gets the
    question, returns its schema-held reply with the conversation's text, or None), or rules."""
    ruled = from_rules(task, carried=carried)
    if settled(ruled, follow_up=follow_up):
        return ruled
    asked = ask(INTENT_QUESTION.format(task=task))
    if asked is None:
        return ruled
    reply, conversation = asked
    return from_model_reply(task, reply, conversation=conversation, carried=carried) or ruled


def from_model_reply(
    task: str, reply: str, *, conversation: str = "", carried: tuple[str, ...] = ()
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
        if written_in(call, known, values=task) and call not in calls:
            calls.append(call)
    return replace(
        ruled, kind=kind, names=tuple(merged), calls=tuple(calls[:4]), decided_by="model"
    )


def declined_answer(intent: TaskIntent) -> str:
    """The one-step answer to a request the agent declines, with why: it acts outside the
    repository, else it destroys work."""
    outside = not _DESTRUCTIVE.search(intent.task) and _acts_outside(intent.task)
    return DECLINED.format(reason=OUTSIDE_REASON if outside else DESTRUCTIVE_REASON)
