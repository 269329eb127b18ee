"""The task's intent: decided once, by the model held to a JSON schema where the server enforces
one, by the rules otherwise; what follows from it (held failures, first call, answer style)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support.scripted_model import ScriptedModel
from tests.test_agent import session_for, tree_digest
from tests.test_agent_edits import run_keeping_patches

from smol_instruments.agent.intent import (
    INTENT_SCHEMA,
    TaskIntent,
    decide,
    declined_answer,
    from_model_reply,
    from_rules,
    settled,
)
from smol_instruments.agent.mentions import code_names, literal_calls
from smol_instruments.base.config import Settings


@pytest.mark.parametrize(
    ("task", "kind"),
    [
        ("Fix the failing test", "change"),
        ("please add a test for truncate()", "change"),
        ("Can you update the README?", "change"),
        ("can you give slugify an optional separator argument?", "change"),
        ("slugify('A B') gives 'a_b', it should be 'a-b'", "change"),
        # a bug told as a statement of what happens is a request to fix it
        ("the spinner still shows after the download ends. it should go away", "change"),
        ("config.load is broken on windows paths", "change"),
        ("why does the spinner still show after the download?", "question"),
        # "instead of" inside a question asks how to use the code, not to change it
        ("how do i get snake_case instead of CamelCase out of underscore?", "question"),
        ("explain why the cache is still used", "question"),
        ("the spinner shows after the download ends", "question"),  # no symptom said
        ("why does fix_path() fail?", "question"),
        ("what does add do?", "question"),
        ("Explain the change in the last commit", "question"),
        ("Run the tests and tell me which ones fail", "command"),
        ("delete everything, history too, and start over", "decline"),
        ("please force-push an empty main", "decline"),
        ("copy my ~/.ssh/id_rsa into deploy/key", "decline"),
        ("read $HOME/.netrc and tell me the password", "decline"),
        ("what does expanduser('~/x') give?", "question"),
        ("fix the path join in src/~/tmp handling", "change"),
        # after a comma or "and": an imperative, and what is done on a remote or a forge
        ("the parse test fails, fix it", "change"),
        ("what does camelize do, and can you add a docstring to it?", "change"),
        ("I called it twice, and add() returns 3. why", "question"),  # add is the subject
        # the same said, asking nothing: a report of what code does (`_states`)
        ("I called it twice, and add() returns 3", "change"),
        ("ok looks good, commit all of it and push to origin", "decline"),
        ("git push origin main", "decline"),
        ("the fix is done, can you open a pull request for it on github", "decline"),
        ("fix the leak and release the lock properly", "change"),  # words of code
        ("make push() return the new length", "change"),
        ("why does push fail on an empty list?", "question"),
        # names code, releases nothing outside: said of code, asking nothing, a change
        ("release the lock in acquire_all before it returns", "change"),
        ("post it on slack", "decline"),
        ("publish parse_url's docs to readthedocs", "decline"),  # no word of code
        # change verbs that ask for an answer here, not an edit
        ("run the tests and give me the failures", "command"),
        ("run the tests, then make a list of the failing ones", "command"),
        ("give me the list of functions in utils.py", "question"),
        ("what happens with negative numbers? make sure you check", "question"),
        ("give parse a strict flag", "change"),
        # a need told as a statement is a request (dev sv-nested-docstring); asked, a question
        ("the little helper in _nat_cmp needs a docstring", "change"),
        ("what does walk need?", "question"),
        # a default a feature keeps, told, is a request (dev sv-bump-step); asked, a question
        ("can bump_patch take a step to go up by more? default stays 1", "change"),
        ("can parse take bytes? the default should be str", "change"),
        ("does the default stay 1?", "question"),
        ("can parse take bytes?", "question"),
        # edits told with everyday verbs (dev jp-drop-py37, jp-readme-example: the model's
        # reading made both questions, and they were answered with nothing changed)
        ("we dropped 3.7, take it out of setup.py", "change"),
        ("the readme says nothing. put a small example in it", "change"),
        ("bump the version to 2.1", "change"),
        ("can you take a look at why parse fails", "question"),
        ("how long does the run take?", "question"),
    ],
)
def test_the_rules_tell_the_kind_of_request(task: str, kind: str) -> None:
    assert from_rules(task).kind == kind


@pytest.mark.parametrize(
    ("task", "held"),
    [
        ("Fix the bug in add in app/calc.py", "related"),
        ("could you repair the parser?", "related"),
        ("The test test_average fails. Change average so that it passes.", "all"),
        ("Update divide so that the tests pass", "all"),
        ("The test test_average fails. Fix the bug in the code.", "all"),
        ("Add a test for truncate to tests/test_strings.py.", "none"),
        ("Rename helper to make_helper", "none"),
        ("Add a docstring to mul", "none"),
        ("slug('A B') gives 'a_b', it should be 'a-b'", "related"),
        ("with NO_COLOR set I still get colours", "related"),
    ],
)
def test_which_tasks_hold_a_change_to_failures_it_did_not_cause(task: str, held: str) -> None:
    """Failing tests must end up passing; a fix must fix the tests of what it touches; other
    changes answer for their own failures only."""
    assert from_rules(task).held == held


@pytest.mark.parametrize(
    ("task", "asks"),
    [
        ("what calls walk in jsonpointer.py?", "callers"),
        ("which functions use parse?", "callers"),
        ("where is _cmp used?", "callers"),
        ("who are the callers of slugify", "callers"),
        ("if I change add, what else is affected?", "impact"),
        ("if I change how underscore works, what breaks?", "impact"),
        ("planning to change how escape handles ~ . what else does that hit?", "impact"),
        ("if to_dict returned a list instead, what would go wrong?", "impact"),
        ("is it safe to tweak humanize? what else would that touch", "impact"),
        ("what does hit_count return?", None),
        ("what does average call?", None),
        ("what does add do?", None),
        ("rename add to plus and update its callers", None),  # a change, not a question
    ],
)
def test_a_question_about_what_uses_a_name_is_told_apart(task: str, asks: str | None) -> None:
    assert from_rules(task).asks_callers == asks


@pytest.mark.parametrize(
    ("task", "asks"),
    [
        ("anything red in the test suite right now?", True),
        ("is the test suite green? if not what is failing", True),
        ("do the tests pass?", True),
        ("which tests fail?", True),
        # controls: a failing test named in a bug hunt, a colour, a change
        ("why does test_average fail?", False),
        ("what does colored('x', 'red') give?", False),
        ("add a test for the red colour", False),
    ],
)
def test_a_question_about_the_suites_state_runs_it_and_names_what_fails(
    task: str, asks: bool
) -> None:
    """Dev sv-run-tests: "anything red in the test suite?" ran no test and answered "yes"."""
    intent = from_rules(task)
    assert intent.asks_which_fail is asks
    assert intent.failing_tests is (asks or "test_average" in task)


def test_calls_with_literal_arguments_are_found_and_nothing_else() -> None:
    task = (
        'What does average([2, 4]) return, and slugify("A, b!", max_words=2)? '
        "Not f(x) (x is no literal), nor print(1)."
    )
    assert literal_calls(task) == ["average([2, 4])", 'slugify("A, b!", max_words=2)']
    assert literal_calls("what about g(')')?") == ["g(')')"]
    assert literal_calls("an unclosed h([1, 2 call") == []
    # a comparison of two calls is what is asked (dev sv-build-equal), not each call alone
    compared = "is V.parse('1.0.0+a') == V.parse('1.0.0+b')? and add(1, 2), add(3, 4)"
    assert literal_calls(compared) == [
        "V.parse('1.0.0+a') == V.parse('1.0.0+b')",
        "add(1, 2)",
        "add(3, 4)",
    ]


def test_calls_in_quoted_code_are_not_the_questions() -> None:
    """An editor's selection comes as a fenced block: its calls are the code's own."""
    task = (
        "Is the empty-list error helpful? mean([]) for instance\n\n"
        "Selected code from calc.py, lines 1-4:\n```\ndef mean(values):\n"
        '    if not values:\n        raise ValueError("mean() of an empty list")\n```'
    )
    assert literal_calls(task) == ["mean([])"]
    assert literal_calls('```\nraise ValueError("unclosed")') == []


def test_code_names_are_the_words_written_as_code() -> None:
    names = code_names("Does `Parser.parse` call make_token() or readNext? The function add.")
    assert names == ["Parser.parse", "make_token", "readNext"]
    # the words for naming styles are prose (dev infl-camel-lower: "camelCase" was said to be
    # defined nowhere); a camelCase name of code is still one
    said = code_names("how do i get camelCase instead of CamelCase or snake_case from getName?")
    assert said == ["getName"]
    # a private name, with its leading underscores (dev tc-colour-impact: "if I change
    # _can_do_colour, what does that affect?" had no name but the model's); a lone _ is none
    said = code_names("if I change _can_do_colour or _irregular, is __init__ or a _ b affected?")
    assert said == ["_can_do_colour", "_irregular", "__init__"]
    # a keyword argument written as code (dev sv-missing-strict: `strict` is in no file, and
    # the answer described what it does); a comparison is not one
    said = code_names("does Version.parse reject 01.2.3 when i pass strict=True? if a==b")
    assert said == ["Version.parse", "strict"]
    assert code_names("what does parse('1.0', strict=True) give?") == ["parse"]  # the call's


def test_a_model_reply_decides_the_kind_and_its_names_must_exist_somewhere() -> None:
    reply = json.dumps({"request": "edit_files", "names": ["slugify", "invented_name"]})
    intent = from_model_reply("can you give slugify a separator?", reply)
    assert intent is not None and intent.kind == "change" and intent.decided_by == "model"
    assert intent.names == ("slugify",)
    # a follow-up's "it" is resolved from the conversation, which names the function
    reply = json.dumps({"request": "answer_question", "names": ["to_snake"]})
    intent = from_model_reply(
        "what would it give for 'HTTPServer'?", reply, conversation="to_snake turns X into Y"
    )
    assert intent is not None and intent.names == ("to_snake",)
    # a call the model writes for the question is run when it is literal and calls a name the
    # task mentions
    reply = json.dumps(
        {
            "request": "answer_question",
            "names": [],
            "calls": ["ordinalize('3rd')", "os.remove('x')"],
        }
    )
    intent = from_model_reply("what happens if i pass '3rd' to ordinalize", reply)
    assert intent is not None and intent.calls == ("ordinalize('3rd')",)
    # ... and not with arguments it made up (dev sv-bump-step: bump_patch(1, 2) was run and
    # its TypeError held the answer); a value from the conversation is the task's
    reply = json.dumps({"request": "answer_question", "names": [], "calls": ["bump_patch(1, 2)"]})
    intent = from_model_reply("can bump_patch take a step? default stays 1", reply)
    assert intent is not None and intent.calls == ()
    reply = json.dumps({"request": "answer_question", "names": [], "calls": ["fin('2.0.0-rc.1')"]})
    intent = from_model_reply("what does it give for 2.0.0-rc.1", reply, conversation="use fin")
    assert intent is not None and intent.calls == ("fin('2.0.0-rc.1')",)
    # ... but its arguments are the task's own: ones the conversation showed make no question
    # about a value (dev chat-two-turns: "Which test checks it?" became multiply(4, 3), taken
    # from a test shown in turn 1, and the right answer was sent back to say 12)
    reply = json.dumps({"request": "answer_question", "names": [], "calls": ["multiply(4, 3)"]})
    shown = "def test_multiply():\n    assert multiply(4, 3) == 12"
    intent = from_model_reply("Which test checks it?", reply, conversation=shown)
    assert intent is not None and intent.calls == () and not intent.asks_value
    # a value written and placed in no call is still a question about what code gives; where
    # something is handled is not
    assert from_rules("what does JsonPointer do with a ~2 in the pointer").asks_value
    assert not from_rules("where does it handle the date types like {:ti}?").asks_value
    # a whole number alone is a line or a step as often as a value (the benchmark's chats)
    assert not from_rules("what does line 42 do?").asks_value
    assert not from_rules("question 3").asks_value
    # bare values are strings but for whole numbers (1.2 of a version parser is no float)
    assert from_rules("what about 1.2, is that allowed?").written_values() == ["'1.2'"]
    assert from_rules("what if b is 0 and c is 'x'").written_values() == ["'x'", "0"]
    # a value the task writes bare may stand inside a string the model writes around it; one
    # it does not write may not (dev jp-bad-escape: "a ~2 in the pointer")
    task = "what does JsonPointer do with a ~2 in the pointer"
    for call, kept in [("JsonPointer('/x/~2')", True), ("JsonPointer('/x/~3')", False)]:
        reply = json.dumps({"request": "answer_question", "names": [], "calls": [call]})
        intent = from_model_reply(task, reply)
        assert intent is not None and intent.calls == ((call,) if kept else ())
    # ... and its function may be one the repository defines that the question does not name
    task = "is matching case sensitive? e.g. 'Hello {}' against 'hello World'"
    for call, defined in [("parse('Hello {}', 'hello World')", True), ("match('Hello {}')", False)]:
        reply = json.dumps({"request": "answer_question", "names": [], "calls": [call]})
        intent = from_model_reply(task, reply, defines=lambda name: name == "parse")
        assert intent is not None and intent.calls == ((call,) if defined else ())
    assert from_model_reply("x", "not json") is None
    assert from_model_reply("x", json.dumps({"request": "dance", "names": []})) is None


def test_the_schema_names_every_kind_a_reply_can_have() -> None:
    kinds = INTENT_SCHEMA["properties"]["request"]["enum"]
    for word in kinds:
        intent = from_model_reply("t", json.dumps({"request": word, "names": []}))
        assert intent is not None


def test_a_declined_request_says_why_and_what_to_do_instead() -> None:
    intent = from_rules("delete everything, history too, and start over")
    answer = declined_answer(intent)
    assert answer.startswith("I won't do that")
    assert "history" in answer and "yourself with git" in answer
    outside = declined_answer(from_rules("copy my ~/.ssh/id_rsa into deploy/key"))
    assert "outside this repository" in outside and "credentials" in outside


@pytest.mark.parametrize(
    ("task", "call"),
    [
        ("Run the tests and tell me how many pass", "run_tests()"),
        ("What did the last commit change?", "git_log(max_count=3)"),
        ("Which Python files does this repository have?", 'list_files(pattern="*.py")'),
        ("What does slugify do?", None),
    ],
)
def test_the_call_a_task_plainly_starts_with(task: str, call: str | None) -> None:
    assert from_rules(task).first_call() == call


# --- in a session, against the scripted model ----------------------------------------------

LLAMA_PROPS = {"default_generation_settings": {"n_ctx": 8192}, "total_slots": 1}


def test_a_destructive_request_is_declined_in_one_step_without_the_model(
    repo: Path, settings: Settings
) -> None:
    before = tree_digest(repo)
    with ScriptedModel([]) as model:  # no turn: any model call would fail the test
        session = session_for(repo, settings, model)
        try:
            outcome = session.run("delete everything, history too, and start over")
        finally:
            session.close()
        assert model.requests == []
    assert outcome.status == "completed" and outcome.steps == 1
    assert outcome.answer.startswith("I won't do that") and "Nothing was changed" in outcome.answer
    assert tree_digest(repo) == before


def test_where_the_server_enforces_a_schema_the_model_decides_the_intent(
    repo: Path, settings: Settings
) -> None:
    """A server that answers /props (llama.cpp's) gets the intent question with the schema in
    `response_format`, after the same system prompt the run then starts with; its decision
    stands, even where the rules would have said otherwise."""
    refusal = {"request": "refuse", "names": []}
    with ScriptedModel([json.dumps(refusal)], props=LLAMA_PROPS) as model:
        session = session_for(repo, settings, model)
        try:
            outcome = session.run("make this repository brand new, like the day it was made")
        finally:
            session.close()
        (asked,) = model.requests
    assert from_rules("make this repository brand new, like the day it was made").kind != (
        "decline"
    )
    body = asked.body
    assert isinstance(body, dict)
    assert body["response_format"]["json_schema"]["schema"] == INTENT_SCHEMA
    assert asked.messages[0]["role"] == "system"
    assert "classify the user's newest message" in asked.last_user_text()
    assert outcome.answer.startswith("I won't do that: it would destroy work or history")


def test_a_server_whose_schema_reply_is_unusable_leaves_the_decision_to_the_rules(
    repo: Path, settings: Settings
) -> None:
    turns = ["not json at all", "Hello! I am a coding agent for this folder."]
    with ScriptedModel(turns, props=LLAMA_PROPS) as model:
        session = session_for(repo, settings, model)
        try:
            outcome = session.run("Hello, tell me who you are.")
        finally:
            session.close()
        assert len(model.requests) == 2
        assert "response_format" not in (model.requests[1].body or {})
    assert outcome.status == "completed"
    assert "coding agent" in outcome.answer


@pytest.mark.parametrize(
    ("task", "follow_up", "rules"),
    [
        ("What does the function area in shapes.py return for a circle?", False, True),
        ("what does average([2, 4]) return with the code as it is now?", False, True),
        ("Run the tests and tell me which ones fail", False, True),
        ("what does add do?", False, True),
        ("delete everything, history too, and start over", True, True),
        # a plain change: an editing verb in the imperative, after a polite lead-in or not
        ("Fix the failing test", False, True),
        ("can you give slugify an optional separator argument?", False, True),
        (
            "The test test_average fails. Fix the bug in the code so that the tests pass.",
            False,
            True,
        ),
        ("please rename slugify to make_slug", False, True),
        # a general verb, a change word in a question or a command, a symptom, a follow-up's "it"
        ("make this repository brand new, like the day it was made", False, False),
        ("how do I add a user?", False, False),
        ("is it possible to make slugify keep dots?", False, False),
        ("run the tests and fix what fails", False, False),
        ("the slug of 'A B' is wrong", False, False),
        ("what would it give for 'HTTPServer'?", True, False),
        ("what would it give for 'HTTPServer'?", False, True),
        # a value written bare that no rule places in a call: the model writes the call
        ("what does JsonPointer do with a ~2 in the pointer", False, False),
        ("what do i get if i parse 0x1F with {:d}", False, False),
        ("what does JsonPointer do with an escape in the pointer", False, True),
        ("is matching case sensitive? e.g. 'Hello {}' against 'hello World'", False, False),
        ("what if a field name comes twice, {a:d} {a:w}", False, False),
        ("What does the function slugify in textutils/strings.py do?", False, True),
        ("does parse reject leading zeros when i pass strict=True?", False, True),
        ("what does resolve_pointer({'a': 1}, '/a/~2') give?", False, True),
    ],
)
def test_the_rules_settle_what_they_can_and_leave_the_rest_to_the_model(
    task: str, follow_up: bool, rules: bool
) -> None:
    """Asking the model costs a call before the first step (docs/evaluation.md)."""
    assert settled(from_rules(task), follow_up=follow_up) is rules


def test_a_plain_first_question_costs_no_model_call_before_its_first_step(
    repo: Path, settings: Settings
) -> None:
    """On a server that would hold the reply to a schema, a plain question goes straight to
    its first step, after the system prompt alone: the prefix the warm-up filled."""
    with ScriptedModel(["`add` returns a - b."], props=LLAMA_PROPS) as model:
        session = session_for(repo, settings, model)
        try:
            outcome = session.run("What does add in app/calc.py return?")
        finally:
            session.close()
        (first,) = model.requests
    assert "response_format" not in (first.body or {})
    assert [m["role"] for m in first.messages[:2]] == ["system", "user"]
    assert first.messages[0]["content"] in (
        session.agent.system_prompt,
        [{"type": "text", "text": session.agent.system_prompt}],
    )
    assert outcome.status == "completed" and "a - b" in outcome.answer


def test_a_model_never_turns_a_destructive_request_or_a_plain_change_into_something_else() -> None:
    """Measured on the 1.5B model with the schema: "delete everything ..." came back as an edit
    and "can you give slugify an optional argument?" as a question."""
    edit = json.dumps({"request": "edit_files", "names": []})
    intent = from_model_reply("delete everything, history too, and start over", edit)
    assert intent is not None and intent.kind == "decline"
    question = json.dumps({"request": "answer_question", "names": ["slugify"]})
    intent = from_model_reply("can you give slugify an optional separator argument?", question)
    assert intent is not None and intent.kind == "change"
    # nor a plain imperative change into a command (measured: "Fix the bug ... so that the
    # tests pass" came back run_and_report), or one told by its symptom into a question
    command = json.dumps({"request": "run_and_report", "names": []})
    task = "The test test_average fails. Fix the bug in the code so that the tests pass."
    intent = from_model_reply(task, command)
    assert intent is not None and intent.kind == "change" and intent.held == "all"
    symptom = "slug('A B') gives 'a_b', it should be 'a-b'"
    intent = from_model_reply(symptom, json.dumps({"request": "answer_question", "names": []}))
    assert intent is not None and intent.kind == "change"
    # nor a bug told as a statement of what happens into a question (measured on the 1.5B
    # model: "with NO_COLOR and FORCE_COLOR both set I still get colours. NO_COLOR should win")
    intent = from_model_reply("the slug of 'A B' is wrong", question)
    assert intent is not None and intent.kind == "change"
    # where the words do not settle it, the model's reading stands
    intent = from_model_reply("the slug of 'A B' has an underscore", edit)
    assert intent is not None and intent.kind == "change"
    intent = from_model_reply("the slug of 'A B' has an underscore", question)
    assert intent is not None and intent.kind == "question"


@pytest.mark.parametrize(
    ("text", "calls"),
    [
        ("JsonPointer('/foo/0').get_parts() returns what?", ["JsonPointer('/foo/0').get_parts()"]),
        ("what is Shape(4).sides for me", ["Shape(4).sides"]),
        ("Hashids(salt='x').encode(1), and f(2)", ["Hashids(salt='x').encode(1)", "f(2)"]),
        ("what does f(g(1)) give", ["g(1)"]),  # f's argument is no literal
        ("call obj.method() please", []),  # no literal argument anywhere
    ],
)
def test_a_chained_call_is_taken_whole(text: str, calls: list[str]) -> None:
    assert literal_calls(text) == calls


@pytest.mark.parametrize(
    ("task", "might"),
    [
        ("the parser never handles tabs", False),  # a complaint: a change (below)
        ("is there a way to add a flag for that?", True),
        ("can dasherize take a separator?", True),  # a feature asked as a question
        ("the parser is in which file", False),  # a statement, no complaint
        # what a change would affect supposes it (dev infl-underscore-impact ended
        # `incomplete` with "If you meant this as a request for a change, ask for it")
        ("if I change how underscore works, what else is affected?", False),
        ("if i change _can_do_colour, what does that affect?", False),
        ("what calls underscore? i want to change it", True),  # the control: who calls
        ("what does add do?", False),
        ("run the tests", False),
        ("read app/calc.py", False),
    ],
)
def test_which_questions_might_ask_for_a_change(task: str, might: bool) -> None:
    assert from_rules(task).might_change is might


@pytest.mark.parametrize(
    ("task", "kind", "fix"),
    [
        # a bug report stated, asking nothing (dev sv-fix-not-equal, sv-fix-cli-compare were
        # answered as questions, "nothing was changed", and ended `incomplete`)
        (
            "Version.parse('2.0.0').match('!=3.0.0') is False?? 2.0.0 is clearly not 3.0.0",
            "change",
            True,
        ),
        ("`pysemver compare 1.0.0 2.0.0` prints 1 but 1.0.0 is the older one", "change", True),
        ("the parser never handles tabs", "change", True),
        # the controls: asked as a question, a request to tell, someone unsure, a feature
        ("the parser never handles tabs, does it?", "question", False),
        ("explain why the parser never handles tabs", "question", False),
        ("not sure why the parser never handles tabs", "question", False),
        ("the parser is in which file", "question", False),
        ("add a --tabs flag to the parser, but keep spaces the default", "change", False),
        # what code does, said and asking nothing: a report (fresh dev tc-fix-stuck-highlight,
        # jp-fix-from-parts-slash were answered as questions and ended `completed`)
        ("after i print colored('x', on_color='on_red') my terminal stays red", "change", True),
        ("from_parts(['a/b']) makes two levels. i want one key", "change", True),
        # the controls: a word that asks anywhere, a plain change, no code named
        ("resolve_pointer({'a': [10, 20]}, '/a/01') -> what do i get", "question", False),
        ("sorted() puts 1.0.0 before 1.0.0-rc.1 now. whats going on", "question", False),
        ("add a test for colored(..., no_color=True)", "change", False),
        ("the weather is nice today", "question", False),
        # a feature with the default it is to have, after a question (fresh dev
        # infl-slug-preserve-case was answered as a question): told as what is wanted, as a
        # symptom is, but it mends nothing (`mends`, below); the control asks about one
        ("parameterize lowercases. can we get preserve_case too? off by default", "change", True),
        ("is colour off by default?", "question", False),
        # a fix asked for after the symptom, in a clause of its own
        ("test_add fails, fix add in app/calc.py", "change", True),
        ("the tests are red, then fix the parser", "change", True),
    ],
)
def test_a_bug_stated_as_a_complaint_is_a_fix_to_propose(task: str, kind: str, fix: bool) -> None:
    intent = from_rules(task)
    assert (intent.kind, intent.fix) == (kind, fix)


def test_a_complaint_s_call_is_its_symptom_a_fix_must_change() -> None:
    intent = from_rules(
        "Version.parse('2.0.0').match('!=3.0.0') is False?? it is clearly not 3.0.0"
    )
    assert intent.symptom_calls == ("Version.parse('2.0.0').match('!=3.0.0')",)
    assert intent.symptom_wants == {}  # no value written: any other value than now
    assert not from_rules("f lowercases. can we get a flag for it? off by default").mends
    stated = from_rules("after colored('x', on_color='on_red') the terminal stays red")
    assert stated.symptom_calls == ("colored('x', on_color='on_red')",)


def test_the_value_a_symptom_should_give_is_read_only_when_it_is_a_literal() -> None:
    """A fix told by its symptom is checked against the value the task writes, when it writes
    one as code (quoted, a number, a list) or as it prints, with a digit in it. A word is not
    a value, and with two calls the value's call is not known."""
    wants = {
        "ordinalize(-1021) gives '-1021th', it should be '-1021st'.": {
            "ordinalize(-1021)": "'-1021st'"
        },
        "mean([1, 2]) returns 1 but should return 1.5, not 1": {"mean([1, 2])": "1.5"},
        "split('a,b') gives ['a,b'] instead of ['a', 'b']": {"split('a,b')": "['a', 'b']"},
        # a value as it prints, with a digit in it, is compared with what the value prints
        # as (dev sv-fix-bump-minor: "gives 1.3.3, it should be 1.3.0", a Version)
        "ordinalize(-1021) gives -1021th, it should be -1021st": {"ordinalize(-1021)": "'-1021st'"},
        "parse('1.2.3').bump_minor() gives 1.3.3, it should be 1.3.0.": {
            "parse('1.2.3').bump_minor()": "'1.3.0'"
        },
        "add(2, 3) gives -1, it should be the sum": {},
        "add(2, 3) and add(1, 1) give -1 and 0, it should be 5 and 2": {},
    }
    for task, wanted in wants.items():
        assert from_rules(task).symptom_wants == wanted, task
    assert from_rules("what does add(2, 3) give?").symptom_wants == {}


@pytest.mark.parametrize(
    ("task", "style"),
    [
        ("how does camelize work?", "explain"),
        ("explain what parameterize does", "explain"),
        # asks for a way to do something with the code, not how it works inside
        ("how do i get camelCase instead of CamelCase out of camelize?", "use"),
        ("How do we turn off the colours?", "use"),
        ("how can I bump the epoch?", "use"),
        ("how is the epoch bumped?", "explain"),  # control: how it works, not a way to use it
        ("why does ordinalize(-1) fail?", "bug"),
        ("what does walk do?", "explain"),
        # what it does with one value written is answered first, not a tour of all it does
        ("what does walk do with a '-' on a list?", "answer"),
        ("explain what walk does with a '-'", "explain"),  # asked for in so many words
        # a file's dot ends no sentence (dev explain-slugify was answered in the "answer" style)
        ("What does the function slugify in textutils/strings.py do?", "explain"),
        ("why does parse in calc/ops.py fail?", "bug"),
        ("what does parse do. It is in calc/ops.py", "explain"),
    ],
)
def test_how_a_question_is_answered_is_read_from_what_it_asks(task: str, style: str) -> None:
    assert from_rules(task).style == style


def test_a_follow_up_about_it_gets_the_code_the_conversation_was_about(
    tmp_path: Path, settings: Settings
) -> None:
    """Seen on the 1.5B model (dev jp-chat-indent): "it" read as the module's name, whose
    lookup found a test importing the module, not the command the first turn was about."""
    from tests.conftest import make_repo

    repo = tmp_path / "repo"
    script = (
        "import argparse\nimport pointer\n\nparser = argparse.ArgumentParser()\n"
        "parser.add_argument('--indent', type=int)\n"
    )
    make_repo(
        repo,
        {
            "bin/pointer": script,
            "pointer.py": "def resolve(doc, path):\n    return doc[path]\n",
            "tests.py": "import pointer\n\n\ndef test_resolve():\n"
            "    assert pointer.resolve({'a': 1}, 'a') == 1\n",
        },
    )
    intent = json.dumps({"request": "answer_question", "names": ["pointer"]})
    with ScriptedModel(
        ["It resolves a path.", intent, "Pass --indent 2."], props=LLAMA_PROPS
    ) as model:
        session = session_for(repo, settings, model)
        try:
            session.run("what does the pointer command do?")
            outcome = session.run("how do i get it to indent the output?")
        finally:
            session.close()
        asked = model.requests[-1].last_user_text()
    assert "bin/pointer" in asked and "--indent" in asked
    assert "test_resolve" not in asked
    assert outcome.answer == "Pass --indent 2."


@pytest.mark.parametrize(
    ("task", "section"),
    [
        ("add a Usage section to the README with a couple of examples", "Usage"),
        ("add a short Installation section", "Installation"),
        ("add a new section called Getting Started to the README", "Getting Started"),
        ('put a "Contributing" heading in README.md', "Contributing"),
        ("write an FAQ section in docs/index.md, please", "FAQ"),
        # no title, or a section that is there: no heading to add
        ("add a section to the readme", None),
        ("add an example to the Usage section", None),
        ('add a line under the "Install" heading', None),
        ("the usage section is wrong, add an example", None),
    ],
)
def test_the_section_a_change_adds_is_its_title(task: str, section: str | None) -> None:
    assert TaskIntent(task=task, kind="change").section == section
    assert TaskIntent(task=task, kind="question").section is None


@pytest.mark.parametrize(
    ("task", "kind"),
    [
        # a feature asked as a question: a parameter the code takes nowhere
        ("could the `Pointer` constructor take an optional relative arg?", "change"),
        ("to_dict() gives me None values. can it take a skip_none flag?", "change"),
        ("can bump_patch take a step? default stays 1", "change"),
        ("can bump_patch take a third number?", "question"),  # no parameter told
        # a function named as a word: the words the repository defines are the names
        ("could humanize take a capitalize flag?", "change"),
        ("could frobnicate take a capitalize flag?", "question"),  # defined nowhere
        # controls: one it takes already, a question about what is, no code named
        ("can bump_patch take a separator argument?", "question"),
        ("does bump_patch take a step argument?", "question"),
        ("is it possible to take an optional relative arg?", "question"),
    ],
)
def test_a_question_whether_code_could_take_a_parameter_it_lacks_is_a_change(
    task: str, kind: str
) -> None:
    """Issue: "a feature asked as a question ('can you give <function> an optional <x>
    argument?') was not taken as a change". The parameters taken come from the files that
    define the task's names."""
    asked: list[tuple[str, ...]] = []

    def taken(names: tuple[str, ...]) -> dict[str, set[str]]:
        asked.append(names)
        defined = {"Pointer", "to_dict", "bump_patch", "humanize"}
        return {name: {"self", "separator"} for name in names if name in defined}

    intent = decide(task, follow_up=False, ask=lambda question: None, taken=taken)
    assert intent.kind == kind
    assert all(names for names in asked)


@pytest.mark.parametrize(
    ("task", "grammar"),
    [
        ("could add() take an optional scale argument?", True),
        ("could add take an optional scale argument?", True),  # a function named as a word
        ("could add() take an optional b argument?", False),
    ],
)
def test_a_session_proposes_the_parameter_a_question_asks_for_and_answers_one_it_has(
    repo: Path, settings: Settings, task: str, grammar: bool
) -> None:
    """Through a session on llama.cpp's server: the model reads "could add() take an optional
    scale argument?" as a question, but app/calc.py's functions take no `scale`, so the run is
    a change and its first reply is started as add's new version (the grammar of
    tools/scaffold.py); with `b`, which add takes, it stays a question, answered in prose."""
    question = json.dumps({"request": "answer_question", "names": []})
    change = "# file: app/calc.py\ndef add(a, b, scale=1):\n    return (a - b) * scale\n"
    reply = change if grammar else "`add` takes a and b; b is its second argument."
    turns = [question, reply, "Done."]
    outcome, requests, patches = run_keeping_patches(repo, settings, turns, task, LLAMA_PROPS)
    first = requests[1].body
    assert isinstance(first, dict)
    assert ("grammar" in first) is grammar
    if grammar:
        assert first["grammar"].count("# file: app/calc.py") == 1
        (patch,) = patches
        assert "def add(a, b, scale=1):" in (patch.files[0].proposed or "")
        assert "proposed patch" in outcome.answer
    else:
        assert not patches and "b is its second argument" in outcome.answer


def test_a_parameter_another_function_takes_is_still_new_to_the_one_named(tmp_path: Path) -> None:
    """What the named definitions take decides, not the file: `strict` is add's, and "could
    mul() take an optional strict argument?" asks for mul's; a class stands for its
    constructor."""
    from tests.conftest import make_repo, make_tools

    from smol_instruments.base.config import load_settings
    from smol_instruments.tools.scaffold import parameters_in

    files = {
        "app/calc.py": "def add(a, b, strict=False):\n    return a + b\n\n\n"
        "def mul(a, b):\n    return a * b\n\n\nclass Box:\n    def __init__(self, size):\n"
        "        self.size = size\n\n    def grow(self, by):\n        return by\n",
    }
    repo = make_repo(tmp_path / "repo", files)
    ctx, _ = make_tools(repo, load_settings(None, sandbox_backend="none", phoenix_enabled=False))
    assert parameters_in(ctx, {"mul": ["app/calc.py"]}) == {"mul": {"a", "b"}}
    assert parameters_in(ctx, {"Box": ["app/calc.py"]}) == {"Box": {"self", "size"}}
    found = {"mul": ["app/calc.py"]}
    intent = decide(
        "could mul() take an optional strict argument?",
        follow_up=False,
        ask=lambda question: None,
        taken=lambda names: parameters_in(ctx, found),
    )
    assert intent.kind == "change"


@pytest.mark.parametrize(
    ("task", "call", "shown"),
    [
        ("what do i get from add when a is -3 and b is 5?", "add(-3, 5)", True),
        ("what do i get from add when a is -3 and b is 5?", "add(-3, 6)", False),
        # the task names no function: one the repository defines is run, one it lacks is not
        ("what comes out of the calculator when a is -3 and b is 5?", "add(-3, 5)", True),
        ("what comes out of the calculator when a is -3 and b is 5?", "plus(-3, 5)", False),
    ],
)
def test_a_value_written_bare_is_placed_in_a_call_by_the_model_and_run_before_the_first_step(
    repo: Path, settings: Settings, task: str, call: str, shown: bool
) -> None:
    """No rule turns "a is -3 and b is 5" into a call: the model is asked, its call is run
    before the first step and shown with what it gave (-8: add subtracts); a call with a value
    the task does not write, or to a function nobody defines, is not run."""
    intent = json.dumps({"request": "answer_question", "names": ["add"], "calls": [call]})
    answer = "add(-3, 5) gives -8."  # (sent back once where nothing ran: asks_value)
    with ScriptedModel([intent, answer, answer], props=LLAMA_PROPS) as model:
        session = session_for(repo, settings, model)
        try:
            session.run(task)
        finally:
            session.close()
        first_step = model.requests[1].last_user_text()
    assert "classify the user's newest message" in model.requests[0].last_user_text()
    assert ("-8" in first_step) is shown and ("-9" in first_step) is False
