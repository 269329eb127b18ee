"""Prompt templates for small models: what they need and nothing else, and nothing to copy.

smolagents' default CodeAgent system prompt spends thousands of tokens on examples about
images, Wikipedia and planets. A small model with an 8k context needs the tool signatures,
the code-block format, how to change code, and the repository's own file list.

Small models take examples as facts: an example path gets read, an example answer gets given,
a `final_answer("...")` gets copied word for word. So the examples here name no file, function
or answer that could be mistaken for this repository's: calls use `<angle-bracket>` slots,
and `PLACEHOLDERS` lists the texts that are never accepted as an answer. Questions about the
code are answered from the code: nothing invites answering before reading.
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Sequence
from enum import Enum
from typing import Any

from ..tools.rewrite import fence_language
from .intent import AnswerStyle, TaskIntent

SYSTEM_PROMPT = """You are a coding agent working in a git repository. Each reply is one of two things:

1. A call: one ```python block that calls the tools below and prints what they return; the system runs it and shows you the output. For example:
```python
# <one line: what this step does>
print(read_file(path="<a file from the list below>"))
```
2. The answer: plain sentences, no code block, once you know it. Be specific: name the files, functions, values and defaults it rests on.
When a task asks you to change code, it says how to write the change.
Rules:
- Answer questions about this repository from its code, never from a file's name. Code the task names is given with the task; read anything else with the tools.
- Tools return dicts. An error dict has "error" and "recovery_suggestion": do what the suggestion says.
- Never call a tool again with the same arguments: its result is already above.
{%- set py = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "object": "dict", "array": "list", "any": "Any"} %}

Tools:
{%- for tool in tools.values() %}
{{ tool.name }}({% for arg, spec in tool.inputs.items() %}{{ arg }}: {{ py.get(spec.type, spec.type) }}{% if spec.get("nullable") %} = None{% endif %}{% if not loop.last %}, {% endif %}{% endfor %}): {{ tool.description }}
{%- endfor %}
{%- if custom_instructions %}

{{ custom_instructions }}
{%- endif %}
"""

#: The step-limit summary, sent as the LAST user message after the whole history (the system
#: prompt stays the same, so the model server reuses its cached prefix).
STEP_LIMIT_INSTRUCTION = (
    "The step limit is reached: no more tool calls. Task: {{task}}\n"
    "Reply with prose only, no code: in a few sentences, what you found and did, and what "
    "remains undone. Do not claim anything you did not see in the tool results above."
)

#: After every observation: small models read a result and then repeat the call that made it.
AFTER_OBSERVATION = (
    "If you can answer now, reply with the answer in plain sentences, no code; otherwise make "
    "the next call."
)
#: The same, in a run that asks for a change: small models describe the code instead.
AFTER_OBSERVATION_CHANGE = (
    "If no change is proposed yet, reply with it now: one ```python block whose first line is "
    "`# file: <path>`, then the complete new version of each function you change. Once it is "
    "proposed, say in a sentence what you changed."
)

#: After the observation that shows a proposed change: the model proposes it again otherwise.
AFTER_PROPOSAL = (
    "That change is proposed; the user reviews it. If the task needs another change, reply "
    "with it; otherwise reply with one sentence saying what you changed, no code."
)

#: After the observation that shows a proposed change failing its checks.
AFTER_FAILED_CHECK = (
    "That change fails a check: its output is above. Reply with the corrected change: "
    "one ```python block whose first line is `# file: <path>`, then the complete new version "
    "of each function you change."
)

#: The same, when the tests the task is about fail with the change as they did without it.
AFTER_STILL_FAILING = (
    "With that change the failing tests still fail: the output is above. Reply with the "
    "corrected change: one ```python block whose first line is `# file: <path>`, then the "
    "complete new version of each function you change."
)

#: How to write a change, said where the model needs it ({path}: the file, or a slot).
ONE_BLOCK = "one ```python block whose first line is `# file: {path}`"
WRITE_THE_CHANGE = (
    ONE_BLOCK + ", then the complete new version "
    "of each function or class you change or add (with any import it needs)"
)
#: A fix sampled again (agent/search.py): in the function a symptom's trace ran through, or
#: where the change was asked. Without the docstring a version would be a third as long; the
#: merge keeps the old one (patches/pysource.py `kept_docstring`).
WITHOUT_DOCSTRING = ", without its docstring: the one it has is kept."
CHANGE_THERE = (
    "\nThe wrong value may come from `{name}`: reply with "
    + ONE_BLOCK
    + ", then the complete new version of `{name}` with the fix in it"
    + WITHOUT_DOCSTRING
)
#: Lines asked for alone, after the function they are in came back unchanged (search.py).
REWRITE_LINES = (
    "{where} of {path}:\n```python\n{lines}\n```\nThe task: {task}\nWrite the line that "
    "must change as it must be for the task. Reply with one ```python block holding the new "
    "line only."
)
#: A fix searched statement by statement (search.py): what ran, the same for every statement
#: (the server reuses it), then the one statement to write again.
LINE_FIX_HEAD = (
    "The task: {task}\n{calls} ran with the repository's code as it is. What ran, statement "
    "by statement, with what its expressions gave:\n```text\n{ran}\n```\n{wanted}"
)
LINE_FIX = (
    "Suppose the fault is in this statement, line {number} of {path} (in `{name}`):\n"
    "```python\n{statement}\n```\nReply with one ```python block holding that statement "
    "written so that the fault is gone, and nothing else."
)
CHANGE_AGAIN = (
    "\nReply with "
    + ONE_BLOCK
    + ", then the complete new version of the function with the fix in it"
    + WITHOUT_DOCSTRING
)

#: The last line of a task's message: how to reply to it, by what the task asks.
#: Measured on the 1.5B model, each on its kind of question (three to six samples each):
#: "explain each line" got every detail of an explanation but buried "where is X defined?"
#: under a tour of the code; "answer first" named the place at once but left out details an
#: explanation needs; neither said what a commit was for until asked for its message.
HOW_TO_ANSWER = (
    "Answer from what is above in plain sentences when it is enough: first answer the question "
    "itself in one sentence that names the files, functions and values it rests on, then say "
    "why. Otherwise make a call to read more."
)
#: Asked to explain each line, the 1.5B model wrote a paragraph per line and was cut by the
#: time limit before the line that returns ("explain parameterize": 131 s, no `lower()`): one
#: short sentence per step, in order, to what it returns.
HOW_TO_EXPLAIN = (
    "Answer from what is above in plain sentences when it is enough: first say in one sentence "
    "what it does, then each step it takes in order, one short sentence each (the checks, "
    "values and defaults it uses), down to what it returns. Otherwise make a call to read more."
)
#: A step an explanation left out is asked about on its own (agent/answers.py): sent the
#: whole answer back with the steps it missed, the 1.5B model wrote the same answer again word
#: for word, even sampled hotter (dev explain-slugify left out `text.lower()` twice).
TELL_ONE_STEP = (
    "```python\n{code}\n```\nIn `{name}` above, what does this step do: {step}\n"
    'Answer with one plain sentence that starts with "It", no code, and names what it calls '
    "or uses."
)
#: Asked "how do i get camelCase instead of CamelCase out of camelize?", the 1.5B model told
#: how to rewrite camelize, given its code whose docstring names the argument that does it
#: (dev infl-camel-lower): a question how to do something is answered with the code as it is.
HOW_TO_USE = (
    "Answer from what is above in plain sentences when it is enough: first say how to do it "
    "with the code as it is, in one sentence that names the function and the arguments to pass "
    "(its parameters and defaults are above), with the call written out; then say why it works. "
    "Otherwise make a call to read more."
)
HOW_TO_TELL_HISTORY = (
    "Answer from what is above in plain sentences when it is enough: say what the commit "
    "message says, then what its diff changes, naming the functions, values and settings it "
    "touches. Otherwise make a call to read more."
)
#: Asked "which function has the bug, and what is wrong?" with the failing test's output and
#: the function's code given, the 1.5B model named the function and then invented a reason
#: ("it does not handle an empty list"; the test passes three values); told to quote the wrong
#: line and work out what it computes for the test's input, it named the line every time.
HOW_TO_FIND_BUG = (
    "Answer from what is above in plain sentences, no code block, when it is enough: name the "
    "function with the bug and quote the line of it that is wrong in `backticks`; then work "
    "out, step by step, what that line computes for the failing test's input, and what the "
    "test expects instead. Otherwise make a call to read more."
)
#: For a task that plainly asks for one call first (run the tests, read the history).
HOW_TO_START = "Start with the call it needs:\n```python\nprint({call})\n```"
_HOW_TO: dict[AnswerStyle, str] = {
    "answer": HOW_TO_ANSWER,
    "explain": HOW_TO_EXPLAIN,
    "use": HOW_TO_USE,
    "bug": HOW_TO_FIND_BUG,
    "history": HOW_TO_TELL_HISTORY,
}
#: How to change a file that is not Python: aider's SEARCH/REPLACE format, which small models
#: were trained on. Shown as a block, though its slots' words can come back as the change
#: (the 1.5B model wrote `<lines copied exactly from the file>` back in every reply of dev
#: infl-readme-usage): told in words instead, the same model put the new line in the SEARCH
#: part, under another file's path, where shown the block it wrote the lines again with the
#: change in them (dev tc-py314-classifier, its first reply both ways). Both slots are kept
#: out of a held reply by the grammar (tools/edit.py `edit_blocks_grammar`), and refused as
#: new lines (`parse_edit_blocks`).
WRITE_A_TEXT_CHANGE = (
    "the file's path on its own line, then a block:\n<<<<<<< SEARCH\n<lines copied exactly "
    "from the file>\n=======\n<the new lines>\n>>>>>>> REPLACE\n(an empty SEARCH part adds "
    "the new lines at the end of the file, or creates it)"
)
HOW_TO_CHANGE_TEXT = "Make the change now: reply with " + WRITE_A_TEXT_CHANGE + "."
#: How to change a small file that is not Python: the whole file again. Asked for a
#: SEARCH/REPLACE block, the 1.5B model wrote CHANGES.md whole as SEARCH and the new line alone
#: as REPLACE (38 lines lost), or a README's last line as both (nothing changed); asked for
#: the whole file, it copied every line and made the change, and where "the place the task
#: says" is asked, put a changelog's new section at its top (dev tc-changes-unreleased).
_WHOLE = (
    "{path} on its own line, then the whole file again in one {fence} block: every line of it "
    "as it is, with the change made at the place the task says"
)
WRITE_THE_WHOLE_TEXT = _WHOLE.format(path="the file's path", fence="fenced")
#: The same, first, with the file's path and its fence's language.
HOW_TO_CHANGE_WHOLE = "Make the change now: reply with " + _WHOLE + "."
#: Said when the task asks for a section: the 1.5B model added the examples of a "Usage
#: section" with no heading over them (dev infl-readme-usage).
SECTION_HEADING = (
    " The new section starts with its heading, {title}, marked as the file's other headings are."
)
HOW_TO_CHANGE = "Make the change now: reply with " + WRITE_THE_CHANGE + "."
#: Said of each function shown nested in another, for a change: given the outer function, the
#: 1.5B model copied it down to the nested one unchanged (dev infl-nested-docstring, first
#: request replayed: with this it wrote the nested function with its docstring).
CHANGE_NESTED = (
    " To change `{inner}` (nested in `{outer}`), give only `def {inner}` with its body: it is "
    "merged there."
)
#: Said instead when the task means a function nested in one it names ("the little helper in
#: _nat_cmp needs a docstring"): told only how to give a nested function, the 1.5B model gave
#: `_nat_cmp` itself the docstring and left its helper as it was (dev sv-nested-docstring).
CHANGE_INNER = (
    " The task is about `{inner}`, the function nested in `{outer}`: give only `def {inner}` "
    "with its body (it is merged there)."
)
#: Words by which a task means a function defined inside another.
_INNER_WORDS = re.compile(r"\b(?:helpers?|inner|nested|closure)\b", re.IGNORECASE)


def meant_inner(task: str, nested: Sequence[tuple[str, str]]) -> tuple[str, str] | None:
    """The one (inner, outer) pair the task means by the name of the function it is in and a
    word for a nested function, or its own name ("the wrapper function inside _comparator");
    None when it means no one pair."""
    named = {
        (i, o)
        for i, o in nested
        if re.search(rf"\b{re.escape(o)}\b", task)
        and (_INNER_WORDS.search(task) or re.search(rf"\b{re.escape(i)}\b", task))
    }
    return named.pop() if len(named) == 1 else None


HOW_TO_CHANGE_UNREAD = (
    "Read the code you need first; then reply with the change: " + WRITE_THE_CHANGE + "."
)


class Note(Enum):
    """Every note the agent puts below an answer (agent/answers.py, agent/outcome.py): what ran
    that the answer still misses, or what the run did not do. Owned here, so that what judges
    the model's own words can cut each one first (bench/real/checks.py `model_part`)."""

    COUNTS = "Note: the tests printed '{shown}'; the counts above are the model's and differ."
    FAILURES = "Note: the test runner reported these tests failing: {listed}."
    ABSENT = "Note: searched every file: {names} occurs nowhere in this repository's code."
    REACH = "Note: from the code, {reach}."
    STEPS = "Note: from the code, the steps of `{name}`: {steps}."
    GAVE = "Note: as it ran, {gave}."
    VALUES = "Note: run with the repository's code, {results}."
    FIELDS = "Note: as it ran, {ran}; the answer above says {said}."
    UNGROUNDED = (
        "Note: nothing was read or run to check this answer against the repository's code; it "
        "is the model's own reading."
    )
    MIGHT_CHANGE = (
        "Note: nothing was changed. If you meant this as a request for a change, ask for it "
        'plainly (for example "change <function> so that ...") and I will propose it.'
    )

    def says(self, **slots: str) -> str:
        return str(self.value).format(**slots)

    @classmethod
    def openings(cls) -> tuple[str, ...]:
        """How each note begins: its words up to its first slot."""
        return tuple(str(note.value).split("{", 1)[0] for note in cls)


#: What the model copies from our instructions instead of answering.
PLACEHOLDERS = frozenset(
    {
        "",
        "...",
        "…",
        "answer",
        "your answer",
        "your final answer",
        "your final answer here",
        "final answer",
    }
)


class Nudge(Enum):
    """Every reminder the agent sends the model back, by the situation that sends it: after
    each observation (agent/loop.py `SmolCodeAgent.words_after`), for a reply that is not what
    it should be (agent/loop.py), and from the final-answer checks (agent/answers.py). A pair
    is the words for a change to Python definitions, then for a change to a file that is not
    Python (SEARCH/REPLACE blocks, `writes_text`)."""

    OBSERVED = AFTER_OBSERVATION
    OBSERVED_CHANGE = (
        AFTER_OBSERVATION_CHANGE,
        "If no change is proposed yet, reply with it now: "
        + WRITE_A_TEXT_CHANGE
        + ". Once it is proposed, say in a sentence what you changed.",
        "If no change is proposed yet, reply with it now: "
        + WRITE_THE_WHOLE_TEXT
        + ". Once it is proposed, say in a sentence what you changed.",
    )
    PROPOSED = AFTER_PROPOSAL
    CHECK_FAILED = AFTER_FAILED_CHECK
    STILL_FAILING = AFTER_STILL_FAILING
    # After a change that does not give what the task wants (or leaves the failing tests
    # failing), and a sampled version that does (agent/search.py): the change is made; what is
    # left is to say it.
    REWRITTEN = (
        "{where} of {path}, asked for alone, proposed changed as patch {patch}:\n{diff}\n"
        "Say in a sentence what this change does."
    )
    CONFIRMED = (
        "Other versions of this change were sampled and run: version {tries} {made}. It is "
        "proposed as patch {patch}:\n{diff}\n"
        "Say in a sentence what this change does."
    )
    # After a call refused as a repeat: the model has what it needs and keeps asking for it.
    REPEATED_CALL = (
        "You already have that result above. Do not call it again. Answer the task now, in "
        "plain sentences with no code: {task}"
    )
    REPEATED_CALL_CHANGE = (
        "You already have that result above. Do not call it again. Make the change now: "
        + WRITE_THE_CHANGE.format(path="<path>")
        + ".",
        "You already have that result above. Do not call it again. Make the change now: "
        + WRITE_A_TEXT_CHANGE
        + ".",
        "You already have that result above. Do not call it again. Make the change now: "
        + WRITE_THE_WHOLE_TEXT
        + ".",
    )
    # A reply with no block that says what it will do ("I will read the file.").
    PLAN = (
        "You said what you will do, but did not do it. Do it now, in exactly one block that "
        "starts with a # comment, for example:\n```python\n# Read the code first.\n"
        "print({call})\n```"
    )
    # A reply with no block that is no answer either (empty, a placeholder).
    NO_BLOCK = (
        "Your reply had no ```python code block. Reply with exactly one block that starts with "
        'a # comment, e.g.:\n```python\n# Read the file.\nprint(read_file(path="<a file from '
        'the list>"))\n```'
    )
    ONLY_A_COMMENT = (
        "The block had only a comment and no code, so nothing ran. Write the call under the "
        'comment (e.g. print(read_file(path="<a file>"))), or final_answer("<your answer>").'
    )
    NOT_ASKED = (
        "This task does not ask to change any file, so nothing was proposed. Do what it asks: "
        "start with print({call}), then answer in plain sentences."
    )
    NO_FILE = (
        "This block only defines {names}: that changes no file. To change a file, put "
        "`# file: <path>` as the block's first line, then the complete new version of each "
        "function you change.",
        # a ```python block of the tools' own functions, for a README (dev infl-readme-usage)
        "This block only defines {names}: that changes no file, and the file to change is not "
        "Python. Reply with " + WRITE_A_TEXT_CHANGE + ".",
        "This block only defines {names}: that changes no file, and the file to change is not "
        "Python. Reply with " + WRITE_THE_WHOLE_TEXT + ".",
    )
    # The final-answer checks' words, read by the model as "Check <name> failed with error: ..."
    PLACEHOLDER = (
        "that is the placeholder from the instructions, not an answer. Call final_answer "
        "with what you found, in your own words."
    )
    ERROR_RETOLD = (
        "that is the text of an error message, not an answer. Do what its suggestion says "
        "first; call final_answer when you have found what the task asks."
    )
    PREVIOUS_ANSWER = (
        "that is your answer to the previous question, word for word. Answer this one: {task}"
    )
    READ_FIRST = (
        "this asks about {what}, and nothing has been {done} for it yet. Do that first, in "
        "exactly one block that starts with a # comment, for example:\n"
        "```python\n# Look at the code first.\nprint({call})\n```\nthen answer from what it "
        "shows."
    )
    VALUE_NOT_TOLD = (
        "the question asks what the code gives, and it was run: {results}. Answer again, "
        "saying that result first, then why."
    )
    FIELD_NOT_AS_RAN = (
        "this answer says {said}, but as it ran, {ran}. Answer again from what ran: which "
        "values it had, and what that makes the code give."
    )
    COUNTS_DIFFER = (
        "the tests printed '{shown}', but this answer says {said}. Answer again with the "
        "numbers the output shows."
    )
    ABSENT_DESCRIBED = (
        "a search of every file found no {names} in this repository, but this answer "
        "describes it. Answer again: say plainly that it does not exist here, then what the "
        "repository has instead."
    )
    FAILURES_NOT_NAMED = (
        "the test runner reported these tests failing: {listed}; this answer does not name "
        "{missing}. Answer again, naming each failing test."
    )
    REACH_NOT_NAMED = (
        "the code shows {reach}; this answer does not name {missing}. Answer again, naming each "
        "function that uses it, directly or through another."
    )
    WHY_NOT_FROM_RUN = (
        "it was run above, and as it ran, {gave}. This answer names none of them. Answer "
        "again: say in which function, and which of these makes it give what it gave, and why."
    )
    STEPS_NOT_TOLD = (
        "this answer leaves out these steps of `{name}`: {missing}. Write the answer again "
        "with one more sentence for each of them, saying in plain words what it does."
    )
    # A change proposed that leaves out what the task asks, told from its diff (agent/outcome.py
    # `shortfall`): the helper it means, a section's heading, a name it adds, its function.
    SHORT = (
        "{short} Reply with the change again: " + WRITE_THE_CHANGE + ".",
        "{short} Reply with the change again: " + WRITE_A_TEXT_CHANGE + ".",
        "{short} Reply with the change again: " + WRITE_THE_WHOLE_TEXT + ".",
    )
    NO_CHANGE = (
        "no change has been proposed for this task yet. Reply with the change: "
        + WRITE_THE_CHANGE
        + ". If you cannot make the change, say why in plain sentences.",
        "no change has been proposed for this task yet. Reply with the change: "
        + WRITE_A_TEXT_CHANGE
        + ". If you cannot make the change, say why in plain sentences.",
        "no change has been proposed for this task yet. Reply with the change: "
        + WRITE_THE_WHOLE_TEXT
        + ". If you cannot make the change, say why in plain sentences.",
    )

    def says(self, *, text: int = 0, **slots: str) -> str:
        """The words for how the change is written, `text` (RunWatch.form): 0 as Python
        definitions, 1 as SEARCH/REPLACE blocks, 2 as the whole file (where a pair has no
        third, its second), their `{slots}` filled."""
        words: str = (
            self.value
            if isinstance(self.value, str)
            else self.value[min(text, len(self.value) - 1)]
        )
        return words.format(**slots) if slots else words


#: A reply that announces what it will do instead of answering ("I will read the file.").
_PLAN = re.compile(
    r"^(?:sure[,.!]?\s*)?(?:i\s+will|i'll|i\s+am\s+going\s+to|i'm\s+going\s+to|i\s+need\s+to"
    r"|let\s+me|let's|first,?\s+i|to\s+(?:answer|find|see|check|do|fix)\b[^.]*,\s*i)\b",
    re.IGNORECASE,
)


#: A line of a plan: "# Find the function with the bug", "1. Read the test".
_STEP = re.compile(
    r"^(?:[#*\-\s]|\d+[.)])*\s*(?:then\s+|next,?\s+|first,?\s+)?(?:read|find|analy[sz]e|examine|"
    r"identify|run|check|look|search|open|fix|call|list|locate|inspect|review|determine|"
    r"understand|verify|test|write|propose|use|get|see|go|start)\b",
    re.IGNORECASE,
)


def is_plan(reply: str) -> bool:
    """True when a prose reply ends by saying what it is about to do (or on a colon), or with
    a list of steps to take ("# Find the function", "# Examine the test"). Only its last
    paragraph counts: "To answer this, I'll go through the code: ... Therefore, X." answers."""
    text = reply.strip().removesuffix("```").strip()
    last = re.split(r"\n\s*\n", text)[-1].strip()
    lines = [line for line in last.splitlines() if line.strip(" #*-")]
    steps = bool(lines) and all(_STEP.match(line) for line in lines)
    return bool(_PLAN.match(last.lstrip("# "))) or text.endswith(":") or steps


def is_placeholder(answer: str) -> bool:
    """True when `answer` is empty, an ellipsis, or an instruction's slot such as `<...>`."""
    text = answer.strip().strip("\"'`").strip().lower()
    return text in PLACEHOLDERS or bool(re.fullmatch(r"<[^<>]{0,80}>", text))


def writes_text(intent: TaskIntent, path: str | None) -> bool:
    """The change is written as SEARCH/REPLACE blocks (a file that is not Python: the task
    says so, or the one file it names), not as whole Python definitions."""
    return intent.edits_text or (path is not None and not path.endswith(".py"))


def task_message(
    intent: TaskIntent,
    context: str,
    *,
    path: str | None = None,
    nested: Sequence[tuple[str, str]] = (),
    whole: bool = False,
) -> str:
    """The task as the model gets it: the code read for it first, then the task itself, then
    how to reply. Small models answer the last thing they read: a question put before a page
    of code is answered from memory, after it from the code. `path`: the one file the task
    names, for a change's header; `nested`: (inner, outer) of the functions shown nested in
    another; `whole`: the change is written as the whole file (a small file that is not
    Python, `WRITE_THE_WHOLE_TEXT`)."""
    task = intent.task
    if intent.change and whole and path:
        how = HOW_TO_CHANGE_WHOLE.format(path=path, fence=f"```{fence_language(path)}")
        how += SECTION_HEADING.format(title=intent.section) * bool(intent.section)
    elif intent.change and writes_text(intent, path):
        how = HOW_TO_CHANGE_TEXT + SECTION_HEADING.format(title=intent.section) * bool(
            intent.section
        )
    elif intent.change:
        how = (HOW_TO_CHANGE if context else HOW_TO_CHANGE_UNREAD).format(path=path or "<path>")
        if meant := meant_inner(task, nested):
            how += CHANGE_INNER.format(inner=meant[0], outer=meant[1])
        else:
            how += "".join(CHANGE_NESTED.format(inner=i, outer=o) for i, o in nested[:2])
    elif context:
        how = _HOW_TO[intent.style]
    else:
        call = intent.first_call()
        how = HOW_TO_START.format(call=call) if call else ""
    if not context:
        return f"{task}\n{how}".rstrip()
    return f"{context}\n\nThe task: {task}\n{how}".rstrip()


def default_prompt_templates() -> dict[str, Any]:
    """smolagents' own CodeAgent templates (also the baseline the benchmark compares with)."""
    return copy.deepcopy(_smolagents_templates())


@functools.cache
def _smolagents_templates() -> dict[str, Any]:
    """The templates' YAML, parsed once per process: it took 70 ms of every new conversation,
    before its first request (measured, bench/first.py's later question)."""
    import importlib.resources

    import yaml

    text = importlib.resources.files("smolagents.prompts").joinpath("code_agent.yaml").read_text()
    return dict(yaml.safe_load(text))


def prompt_templates(repo_files: list[str] | None = None, limit: int = 80) -> dict[str, Any]:
    """smolagents' CodeAgent templates with the system and step-limit prompts replaced.

    The repository's files (the first `limit`) go at the end of the system prompt, so the
    model knows the real paths before its first call and needs no list_files to start.
    """
    templates = default_prompt_templates()
    system = SYSTEM_PROMPT
    if repo_files:
        shown = repo_files[:limit]
        more = len(repo_files) - len(shown)
        listing = "\n".join(shown) + (
            f"\n... and {more} more (list_files shows them)" if more else ""
        )
        # raw: a file name with braces must not be read as a template
        system += f"\nFiles in this repository:\n{{% raw %}}{listing}{{% endraw %}}\n"
    templates["system_prompt"] = system
    templates["final_answer"] = {"pre_messages": "", "post_messages": STEP_LIMIT_INSTRUCTION}
    return templates
