"""A reply that is a change (agent/edits.py), through the real agent, LiteLLM and patch store.

Small models write the complete new version of a function well and an exact `old_text`
badly. A block headed `# file: <path>` that only defines things is proposed as a patch that
replaces those definitions; the file on disk is never touched until the user accepts.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import git, make_repo
from tests.support.scripted_model import ScriptedModel
from tests.test_agent import session_for

from smol_instruments.agent import search
from smol_instruments.agent.edits import defined_names
from smol_instruments.agent.intent import from_rules
from smol_instruments.agent.outcome import NOT_VERIFIED, UNTRIED, UNVERIFIED
from smol_instruments.agent.prompts import (
    AFTER_FAILED_CHECK,
    AFTER_OBSERVATION,
    AFTER_OBSERVATION_CHANGE,
    AFTER_PROPOSAL,
    AFTER_STILL_FAILING,
    HOW_TO_ANSWER,
    HOW_TO_EXPLAIN,
    HOW_TO_FIND_BUG,
    HOW_TO_TELL_HISTORY,
    is_plan,
    task_message,
)
from smol_instruments.agent.session import AgentSession
from smol_instruments.base.config import Settings
from smol_instruments.patches.service import diff_of
from smol_instruments.sandbox.local import LocalSandbox

pytestmark = pytest.mark.timeout(180)

UNTRIED_HEAD = UNTRIED.split("{", 1)[0]

FIXED_ADD = "def add(a, b):\n    return a + b\n"


def run_keeping_patches(
    repo: Path, settings: Settings, turns: list[Any], task: str, props: Any = None
) -> tuple[Any, list[Any], list[Any]]:
    """(outcome, requests, patches proposed) of one run (`props`: the server's /props, as
    llama.cpp's answers them)."""
    with ScriptedModel(turns, props=props) as model:
        session = session_for(repo, settings, model)
        try:
            outcome = session.run(task)
            patches = session.ctx.patches.all()
        finally:
            session.close()
        return outcome, model.requests, patches


def the_one_patch(patches: list[Any]) -> str:
    assert len(patches) == 1, patches
    (change,) = patches[0].files
    assert change.path == "app/calc.py"
    return change.proposed


@pytest.mark.parametrize(
    "reply",
    [
        f"```python\n# file: app/calc.py\n{FIXED_ADD}```",  # as the prompt asks
        f"# file: app/calc.py\n{FIXED_ADD}",  # seen on the 1.5B model: no fence at all
        f"```python app/calc.py\n{FIXED_ADD}```",  # the path in the fence's info string
        f"```python\n{FIXED_ADD}```",  # no header: the one file that defines add
    ],
    ids=["header", "unfenced", "fence-path", "no-header"],
)
def test_a_block_with_the_new_function_is_proposed_as_a_patch(
    repo: Path, settings: Settings, reply: str
) -> None:
    turns = [reply, "add() now returns a + b."]
    outcome, requests, patches = run_keeping_patches(
        repo, settings, turns, "Fix the bug in add in app/calc.py"
    )
    # no sandbox: no test ran before the fix, so nothing shows it mends the bug
    assert outcome.status == "incomplete" and outcome.answer.startswith(UNVERIFIED), outcome
    new_text = the_one_patch(patches)
    assert "return a + b" in new_text and "def mul(a, b):\n    return a * b" in new_text
    assert "return a - b" in (repo / "app" / "calc.py").read_text()  # nothing written
    assert "patch_id" in requests[1].last_user_text()


def test_the_task_comes_after_its_code_and_says_how_to_write_the_change(
    repo: Path, settings: Settings
) -> None:
    turns = [
        '```python\nprint(read_file(path="app/main.py"))\n```',
        f"```python\n# file: app/calc.py\n{FIXED_ADD}```",
        "Done: add returns a + b.",
    ]
    _, requests, _ = run_keeping_patches(repo, settings, turns, "Fix the bug in add in app/calc.py")
    first = requests[0].last_user_text()
    assert first.index("def add(a, b)") < first.index("The task: Fix the bug in add")
    assert first.rstrip().endswith(
        "Make the change now: reply with one ```python block whose first line is "
        "`# file: app/calc.py`, then the complete new version of each function or class you "
        "change or add (with any import it needs)."
    )
    assert requests[1].last_user_text().rstrip().endswith(AFTER_OBSERVATION_CHANGE)
    assert requests[2].last_user_text().rstrip().endswith(AFTER_PROPOSAL)


def test_a_question_ends_its_observations_with_the_answer_hint(
    repo: Path, settings: Settings
) -> None:
    turns = ['```python\nprint(read_file(path="app/main.py"))\n```', "main prints add(2, 3)."]
    _, requests, _ = run_keeping_patches(repo, settings, turns, "What does main do?")
    assert requests[1].last_user_text().rstrip().endswith(AFTER_OBSERVATION)


def test_a_new_function_whose_file_is_unclear_is_asked_for_its_file(
    repo: Path, settings: Settings
) -> None:
    turns = [
        "```python\ndef halve(x):\n    return x / 2\n```",
        "```python\n# file: app/calc.py\ndef halve(x):\n    return x / 2\n```",
        "I added halve to app/calc.py.",
    ]
    outcome, requests, patches = run_keeping_patches(repo, settings, turns, "Add a halve helper")
    assert "`# file: <path>`" in requests[1].last_user_text()
    assert outcome.status == "completed"
    assert "def halve(x):" in the_one_patch(patches)


def test_a_written_answer_with_an_illustration_is_the_answer(
    repo: Path, settings: Settings
) -> None:
    """A question's answer that shows the corrected code is not a change and runs nothing."""
    answer = (
        "The bug is in `add` in app/calc.py: it returns `a - b`, so add(2, 3) gives -1 instead "
        "of 5, which is why test_add fails. It should return the sum of its two arguments, "
        "like this:"
    )
    turns = [f"{answer}\n```python\n{FIXED_ADD}```"]
    outcome, requests, patches = run_keeping_patches(
        repo, settings, turns, "Which function in app/calc.py has a bug?"
    )
    assert len(requests) == 1
    assert outcome.status == "completed"
    assert outcome.answer.startswith(answer) and "return a + b" in outcome.answer
    assert patches == []


def test_the_same_change_again_ends_the_run_with_what_was_proposed(
    repo: Path, settings: Settings
) -> None:
    """Seen on the 1.5B model: the fix, then the same fix again until stopped as a loop."""
    change = f"# file: app/calc.py\n{FIXED_ADD}"
    outcome, requests, patches = run_keeping_patches(
        repo, settings, [change, change], "Fix the bug in add in app/calc.py"
    )
    assert len(requests) == 2
    assert requests[1].last_user_text().rstrip().endswith(AFTER_PROPOSAL)
    assert outcome.status == "incomplete"  # not verified: no sandbox ran the tests before it
    patch = patches[0]
    assert outcome.answer.startswith(
        f"{UNVERIFIED} I proposed patch {patch.id} (+1 -1): in app/calc.py it changes `add`."
    )
    assert outcome.answer.endswith("Nothing is written until you accept it.")


def test_a_change_whose_tests_fail_is_not_done(
    repo: Path, settings: Settings, no_search: None
) -> None:
    """The check command fails on the patched copy: the run says so instead of `completed`."""
    wrong = "# file: app/calc.py\ndef add(a, b):\n    return a * b\n"
    checked = settings.model_copy(
        update={
            "sandbox_backend": "local",
            "sandbox_check_command": f"{sys.executable} -m pytest -q -p no:cacheprovider",
        }
    )
    turns = [wrong, "add() now returns a + b."]
    with ScriptedModel(turns) as model:
        session = session_for(repo, checked, model)
        session.ctx.sandbox = LocalSandbox(session.settings, repo)
        try:
            outcome = session.run("Fix the bug in add in app/calc.py")
        finally:
            session.close()
    assert outcome.status == "incomplete"
    assert outcome.answer.startswith(NOT_VERIFIED)
    assert "fails `" in outcome.answer and "1 test failed, 1 test passed" in outcome.answer
    seen = model.requests[1].last_user_text()
    assert "failed" in seen  # the model saw it too, and is asked to correct it
    # test_add failed before too: a fix that leaves it failing fixed nothing
    assert seen.rstrip().endswith(AFTER_STILL_FAILING)


def test_a_failing_change_proposed_twice_is_said_once(
    repo: Path, settings: Settings, no_search: None
) -> None:
    """Seen on the 1.5B model: the run ended on the same failing change written again, and its
    answer gave the proposal's description twice."""
    wrong = "# file: app/calc.py\ndef add(a, b):\n    return a * b\n"
    outcome, _ = _checked_run(repo, settings, [wrong, wrong], "Fix the bug in add in app/calc.py")
    assert outcome.status == "incomplete"
    assert outcome.answer.startswith(NOT_VERIFIED)
    assert outcome.answer.count("I proposed patch") == 1, outcome.answer


def _checked_run(repo: Path, settings: Settings, turns: list[str], task: str) -> tuple[Any, Any]:
    outcome, model, _ = _locally_checked(repo, settings, turns, task)
    return outcome, model


def _locally_checked(
    repo: Path,
    settings: Settings,
    turns: list[str],
    task: str,
    props: Any = None,
    **update: Any,
) -> tuple[Any, Any, list[Any]]:
    """(outcome, model, patches) of a run whose proposals are checked in the local sandbox,
    by the project's tests unless `update` says otherwise (`props`: the server's /props)."""
    checked = settings.model_copy(
        update={
            "sandbox_backend": "local",
            "sandbox_check_command": f"{sys.executable} -m pytest -q -p no:cacheprovider",
            **update,
        }
    )
    with ScriptedModel(turns, props=props) as model:
        session = session_for(repo, checked, model)
        session.ctx.sandbox = LocalSandbox(session.settings, repo)
        try:
            return session.run(task), model, session.ctx.patches.all()
        finally:
            session.close()


def test_a_change_is_not_held_to_tests_that_failed_before_it(
    repo: Path, settings: Settings
) -> None:
    """The sample's test_add fails already: a docstring for mul is not asked to fix it."""
    documented = '# file: app/calc.py\ndef mul(a, b):\n    """The product."""\n    return a * b\n'
    outcome, model = _checked_run(
        repo,
        settings,
        [documented, "mul has a docstring now."],
        "Add a docstring to mul in app/calc.py",
    )
    assert outcome.status == "completed", outcome.answer
    seen = model.requests[1].last_user_text()
    assert "fails_without_patch: True" in seen and "the patch adds no failure" in seen
    assert "without_patch: 1 test failed, 1 test passed" in seen
    assert seen.rstrip().endswith(AFTER_PROPOSAL)


def test_a_fix_is_not_held_to_a_failing_test_of_other_code(repo: Path, settings: Settings) -> None:
    """Seen in the editor: "Fix the formulas in sizes.py" never ended, held to the project's
    test_add, which failed before and does not use sizes.py."""
    (repo / "app" / "sizes.py").write_text("def area(w, h):\n    return w + h\n")
    fixed = "# file: app/sizes.py\ndef area(w, h):\n    return w * h\n"
    outcome, model = _checked_run(
        repo, settings, [fixed, "area() multiplies now."], "Fix the formula in app/sizes.py"
    )
    # not `completed` either: the one test that failed before fails after, and nothing else
    # shows the formula mended
    assert outcome.status == "incomplete" and outcome.answer.startswith(UNVERIFIED), outcome
    seen = model.requests[1].last_user_text()
    assert "fails_without_patch: True" in seen and "related_tests" not in seen
    assert seen.rstrip().endswith(AFTER_PROPOSAL)


def test_a_fix_that_leaves_the_tests_of_its_code_failing_is_not_done(
    repo: Path, settings: Settings, no_search: None
) -> None:
    """test_add fails before and after, and tests app/calc.py, which the fix changed."""
    still_wrong = '# file: app/calc.py\ndef add(a, b):\n    """Sum."""\n    return a - b\n'
    outcome, model = _checked_run(
        repo, settings, [still_wrong, "Fixed."], "Fix the bug in add in app/calc.py"
    )
    assert outcome.status == "incomplete", outcome.answer
    assert outcome.answer.startswith(NOT_VERIFIED)
    seen = model.requests[1].last_user_text()
    assert "related_tests" in seen and "test_add" in seen
    assert seen.rstrip().endswith(AFTER_STILL_FAILING)


def test_a_fix_is_completed_when_a_test_that_failed_before_it_passes_with_it(
    repo: Path, settings: Settings
) -> None:
    """A fix is told done by what ran: the project's tests, run before the first step, fail
    (test_add), and pass with the fix. Control: a fix of other code leaves test_add failing
    (test_a_fix_is_not_held_to_a_failing_test_of_other_code: not verified)."""
    fixed = f"# file: app/calc.py\n{FIXED_ADD}"
    outcome, model = _checked_run(
        repo, settings, [fixed, "add adds now."], "add in app/calc.py is broken, fix it"
    )
    assert "The tests, run with" in model.requests[0].prompt_text()  # run before step 1
    assert outcome.status == "completed", outcome.answer
    assert "passed with it" in outcome.answer and UNVERIFIED not in outcome.answer


def test_a_change_that_breaks_a_passing_test_is_not_done(repo: Path, settings: Settings) -> None:
    """test_add failed before; test_mul did not: breaking it is this change's failure."""
    broken = '# file: app/calc.py\ndef mul(a, b):\n    """The product."""\n    return a + b\n'
    outcome, model = _checked_run(
        repo, settings, [broken, "Done."], "Add a docstring to mul in app/calc.py"
    )
    assert outcome.status == "incomplete", outcome.answer
    assert outcome.answer.startswith(NOT_VERIFIED) and "2 tests failed" in outcome.answer
    assert model.requests[1].last_user_text().rstrip().endswith(AFTER_FAILED_CHECK)


@pytest.mark.parametrize("check_tests", [True, False])
def test_the_projects_tests_check_a_change_unless_turned_off(
    repo: Path, settings: Settings, venv_python_first: None, check_tests: bool, no_search: None
) -> None:
    wrong = "# file: app/calc.py\ndef add(a, b):\n    return a * b\n"
    outcome, _, (patch,) = _locally_checked(
        repo,
        settings,
        [wrong, "add() now returns a + b."],
        "Fix the bug in add in app/calc.py",
        sandbox_check_command=None,
        sandbox_check_tests=check_tests,
    )
    commands = [check["command"] for check in patch.validation["checks"]]
    if check_tests:
        assert commands == ["python3 -m py_compile app/calc.py", "python -m pytest -q"]
        assert outcome.status == "incomplete"
        assert "It fails `python -m pytest -q`: 1 test failed, 1 test passed" in outcome.answer
    else:
        assert commands == ["python3 -m py_compile app/calc.py"]
        # its tests ran before the run (test_add failed), not with the patch: not verified
        assert outcome.status == "incomplete" and outcome.answer.startswith(UNVERIFIED)
    assert not (repo / ".pytest_cache").exists()  # the tests ran on the copy, not here


def test_an_untrusted_folder_runs_no_tests_to_check_a_change(
    repo: Path, settings: Settings, venv_python_first: None
) -> None:
    change = f"# file: app/calc.py\n{FIXED_ADD}"
    with ScriptedModel([change, "add() now returns a + b."]) as model:
        local = settings.model_copy(
            update={
                "sandbox_backend": "local",
                "model_id": model.model_id,
                "model_api_base": model.base_url,
                "model_api_key": "x",
            }
        )
        session = AgentSession(repo, local, sandbox=LocalSandbox(local, repo), trusted=False)
        try:
            session.run("Fix the bug in add in app/calc.py")
            (patch,) = session.ctx.patches.all()
        finally:
            session.close()
    assert all("pytest" not in check["command"] for check in patch.validation.get("checks", []))


def test_a_change_in_a_task_that_asks_none_is_not_proposed(repo: Path, settings: Settings) -> None:
    """Seen on the 1.5B model: asked to run the tests, it wrote a new test file instead."""
    change = "```python\n# file: tests/test_calc.py\ndef test_more():\n    assert True\n```"
    turns = [change, '```python\nprint(run_tests(command="true"))\n```', "1 passed."]
    outcome, requests, patches = run_keeping_patches(
        repo, settings, turns, "Run the tests and tell me how many pass."
    )
    first = requests[0].last_user_text()
    assert first.endswith("Start with the call it needs:\n```python\nprint(run_tests())\n```")
    assert "does not ask to change any file, so nothing was proposed" in requests[1].prompt_text()
    assert "print(run_tests())" in requests[1].last_user_text()
    assert patches == []
    assert outcome.answer == "1 passed."


def test_a_change_cut_at_the_token_limit_is_proposed_without_its_last_line(
    repo: Path, settings: Settings
) -> None:
    cut = "# file: app/calc.py\ndef add(a, b):\n    return a + b\n\n\ndef twice(x):\n    return ("
    outcome, _, patches = run_keeping_patches(
        repo, settings, [cut, "add returns a + b."], "Fix the bug in add in app/calc.py"
    )
    new_text = the_one_patch(patches)
    assert "return a + b" in new_text and "twice" not in new_text
    assert outcome.status == "incomplete" and outcome.answer.startswith(UNVERIFIED)


@pytest.mark.parametrize(
    ("task", "call"),
    [
        ("Which Python files does this repository have?", 'list_files(pattern="*.py")'),
        ("What files are there?", 'list_files(pattern="*")'),
        ("Run the tests, please.", "run_tests()"),
    ],
)
def test_a_task_that_plainly_needs_one_call_names_it(
    repo: Path, settings: Settings, task: str, call: str
) -> None:
    turns = ["Nothing to say.", "Nothing to say."]  # prose before any call: read first, once
    _, requests, _ = run_keeping_patches(repo, settings, turns, task)
    assert (
        f"Start with the call it needs:\n```python\nprint({call})\n```" in requests[0].prompt_text()
    )


@pytest.mark.parametrize(
    ("task", "history", "how"),
    [
        ("What does the function slugify do?", False, HOW_TO_EXPLAIN),
        ("Explain average() to me", False, HOW_TO_EXPLAIN),
        ("Where is the function load_tasks defined?", False, HOW_TO_ANSWER),
        ("Which test checks it?", False, HOW_TO_ANSWER),
        ("What did the last commit change?", True, HOW_TO_TELL_HISTORY),
        (
            "One of the tests fails. Which function has the bug, and what is wrong with it?",
            False,
            HOW_TO_FIND_BUG,
        ),
        ("Why does test_parse fail?", False, HOW_TO_FIND_BUG),
        ("What is wrong with slugify?", False, HOW_TO_FIND_BUG),
    ],
)
def test_a_question_is_told_the_shape_of_answer_it_needs(
    task: str, history: bool, how: str
) -> None:
    intent = from_rules(task)
    assert intent.history is history
    message = task_message(intent, "CODE")
    assert message == f"CODE\n\nThe task: {task}\n{how}"


def test_only_the_last_paragraph_of_a_reply_can_make_it_a_plan() -> None:
    """Seen on the 1.5B model: a right answer that began "To answer this question, I'll go
    through the code step by step:" was sent back as a plan, and the next one was wrong."""
    answer = (
        "To answer this question, I'll go through the code step by step:\n\n"
        "1. The last commit is 8cc99285.\n2. It reads TODO_FILE.\n\n"
        "Therefore, the last commit reads the tasks file from TODO_FILE when it is set."
    )
    assert not is_plan(answer)
    assert is_plan("I will read the file.")
    assert is_plan("The bug is somewhere in calc.\n\nLet me read calc/ops.py first.")
    assert is_plan("To find it:\n\n1. Read the test\n2. Find the function")


def test_an_answer_that_quotes_the_wrong_line_is_the_answer(repo: Path, settings: Settings) -> None:
    """Seen on the 1.5B model: the answer quotes the wrong line in a ```python block; run, that
    block is `return ...` outside a function, a SyntaxError the model is then sent back for."""
    answer = (
        "The function with the bug is `add` in `app/calc.py`. The line that is wrong is:\n"
        "```python\nreturn a - b\n```\n"
        "For add(2, 3) it computes 2 - 3 = -1, but the test expects 5."
    )
    outcome, requests, _ = run_keeping_patches(
        repo, settings, [answer], "Why does test_add fail in tests/test_calc.py?"
    )
    assert len(requests) == 1
    assert outcome.status == "completed"
    assert outcome.answer == answer


def test_an_answer_that_shows_a_shell_command_is_the_answer(repo: Path, settings: Settings) -> None:
    """Dev jp-chat-indent: "use the `--indent` argument", then the command in a ```python
    block; run, it was a SyntaxError, and the right answer ended stuck. A block that is not
    Python under a written answer is part of it; one under a plan is still sent back."""
    answer = (
        "To show the sum, run the main module; it prints add(2, 3). For example:\n"
        "```python\npython -m app.main --verbose\n```"
    )
    outcome, requests, _ = run_keeping_patches(repo, settings, [answer], "how do i run the app?")
    assert len(requests) == 1 and outcome.status == "completed"
    assert outcome.answer == answer
    plan = "I will run it:\n```python\npython -m app.main\n```"
    turns = [plan, *["Run `python -m app.main`: it prints add(2, 3)."] * 3]
    _, requests, _ = run_keeping_patches(repo, settings, turns, "how do i run the app?")
    assert "SyntaxError" in requests[1].last_user_text()


def test_a_block_that_calls_a_tool_is_still_a_call(repo: Path, settings: Settings) -> None:
    reply = (
        "To see why test_add fails I will look at the function it calls, then answer.\n"
        '```python\nprint(read_file_snippet(path="app/calc.py", pattern="def add"))\n```'
    )
    outcome, requests, _ = run_keeping_patches(
        repo, settings, [reply, "add subtracts: `return a - b`."], "Why does test_add fail?"
    )
    assert len(requests) == 2 and "def add(a, b):" in requests[1].prompt_text()
    assert outcome.answer == "add subtracts: `return a - b`."


def test_a_new_tests_guessed_expectation_is_what_the_code_gives(
    repo: Path, settings: Settings
) -> None:
    """Seen on the 1.5B model ("add a test for truncate"): it expected a value from its head,
    and proposed the same failing test three times although pytest showed the real one. In a
    task that adds tests and fixes nothing, the call is run and the proposal expects its value
    (tools/pins.py), and the answer says which values were run rather than guessed."""
    guessed = "# file: tests/test_calc.py\ndef test_mul_negative():\n    assert mul(-2, 3) == 6\n"
    outcome, _, (patch,) = _locally_checked(
        repo, settings, [guessed, "Added test_mul_negative."], "add a test for mul with a negative"
    )
    assert outcome.status == "completed", outcome.answer
    assert "    assert mul(-2, 3) == -6\n" in patch.files[0].proposed
    assert "mul(-2, 3) returns -6, not 6" in outcome.answer
    assert "passed with it" in outcome.answer  # the pinned test is what was checked


@pytest.mark.parametrize(
    ("summary", "shown"),
    [
        (
            "I changed mul in app/calc.py and added a test.",
            "The model's summary, which names `app/calc.py` that this patch does not change: I",
        ),
        ("I added test_mul_negative to tests/test_calc.py.", "The model's summary: I added"),
    ],
    ids=["contradicts-the-diff", "control"],
)
def test_a_summary_naming_a_file_the_patch_leaves_alone_is_not_shown_as_fact(
    repo: Path, settings: Settings, summary: str, shown: str
) -> None:
    """Seen on the 1.5B model: a patch of the tests alone, summed up as "I changed the
    `truncate` function in textutils/strings.py"."""
    test = "# file: tests/test_calc.py\ndef test_mul_negative():\n    assert mul(-2, 3) == -6\n"
    outcome, _ = _checked_run(repo, settings, [test, summary], "add a test for mul with a negative")
    assert shown in outcome.answer, outcome.answer


def test_methods_written_without_their_class_are_a_change_to_that_class(
    repo: Path, settings: Settings
) -> None:
    """Seen on the 1.5B model ("add tests for escape and unescape", a unittest file): the new
    test methods came indented, without their class, and were read as no change at all."""
    from tests.conftest import git

    units = "import unittest\n\nfrom app.calc import mul\n\n\nclass MulTests(unittest.TestCase):\n"
    units += "    def test_small(self):\n        self.assertEqual(mul(1, 1), 1)\n"
    (repo / "tests" / "test_units.py").write_text(units)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "unittest tests")
    method = "    def test_mul(self):\n        self.assertEqual(mul(2, 3), 6)\n"
    method += "\n    def test_mul_zero(self):\n        self.assertEqual(mul(2, 0), 0)\n"
    reply = f"# file: tests/test_units.py\n\n{method}"  # unfenced, as the model wrote it
    task = "add a test for mul to tests/test_units.py"
    _, _, patches = run_keeping_patches(repo, settings, [reply, "Added test_mul."], task)
    (patch,) = patches
    assert patch.files[0].proposed == units + "\n" + method


def test_new_test_methods_get_their_class_their_import_and_the_values_the_code_gives(
    repo: Path, settings: Settings
) -> None:
    """Seen on the 1.5B model (jp-add-test-escape, dev): in a unittest file of six classes that
    imports neither function, it wrote the new methods alone, calling escape and unescape, and
    was refused five times over. Now one proposal holds them in a new class, imports what they
    call and expects what the code gives; the answer says all three."""
    from tests.conftest import git

    units = "import unittest\n\nfrom app.calc import mul\n\n\n"
    units += "class MulTests(unittest.TestCase):\n    def test_small(self):\n"
    units += "        self.assertEqual(mul(1, 1), 1)\n\n\n"
    units += "class BigTests(unittest.TestCase):\n    def test_big(self):\n"
    units += "        self.assertEqual(mul(10, 10), 100)\n"
    (repo / "tests" / "test_units.py").write_text(units)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "unittest tests")
    method = "    def test_add_small(self):\n        self.assertEqual(add(2, 3), 5)\n"
    reply = f"```python\n# file: tests/test_units.py\n\n{method}```"
    task = "add tests for add to tests/test_units.py"
    outcome, _, (patch,) = _locally_checked(repo, settings, [reply, "Added tests."], task)
    proposed = patch.files[0].proposed
    assert proposed == units.replace(
        "from app.calc import mul\n", "from app.calc import mul\nfrom app.calc import add\n"
    ) + (
        "\n\nclass AddSmallTests(unittest.TestCase):\n    def test_add_small(self):\n"
        "        self.assertEqual(add(2, 3), -1)\n"
    )
    assert "Added `from app.calc import add` to tests/test_units.py" in outcome.answer
    assert "add(2, 3) returns -1, not 5" in outcome.answer
    assert "test_units.py" in outcome.answer and outcome.status == "completed", outcome.answer


def test_a_block_for_several_files_is_one_patch_of_each_files_definitions(
    repo: Path, settings: Settings
) -> None:
    """Seen on the 1.5B model: a fix of termcolor.py written under a header of _types.py and
    then its own `# file:` line was merged, whole, into _types.py."""
    reply = (
        "# file: app/calc.py\ndef add(a, b):\n    return a + b\n\n"
        "# file: tests/test_calc.py\ndef test_add_negative():\n    assert add(-1, -1) == -2\n"
    )
    task = "fix add and add a test for negative numbers"
    outcome, _, patches = run_keeping_patches(repo, settings, [reply, "Fixed add."], task)
    (patch,) = patches
    proposed = {change.path: change.proposed for change in patch.files}
    assert proposed["app/calc.py"].startswith("def add(a, b):\n    return a + b\n")
    assert "def mul(a, b):" in proposed["app/calc.py"]  # merged by name: the rest is kept
    assert proposed["tests/test_calc.py"].endswith(
        "def test_add_negative():\n    assert add(-1, -1) == -2\n"
    )
    assert "def test_mul():" in proposed["tests/test_calc.py"]
    assert "app/calc.py" in outcome.answer and "tests/test_calc.py" in outcome.answer


@pytest.mark.parametrize("fenced", [True, False], ids=["fenced", "unfenced"])
def test_a_block_of_module_level_names_under_its_file_line_is_a_change(
    repo: Path, settings: Settings, fenced: bool
) -> None:
    """Seen on the 1.5B model (tc-italic, dev): `# file: src/termcolor/_types.py` over
    `Attribute = Literal[...]` alone ran as code (NameError: Literal), three times over."""
    from tests.conftest import git

    (repo / "app" / "names.py").write_text('MODES = ["a", "b"]\nLIMIT: int = 3\n')
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "names")
    body = '# file: app/names.py\nMODES = Literal["a", "b", "c"]\nLIMIT: int = 4\n'
    reply = f"```python\n{body}```" if fenced else body
    _, requests, patches = run_keeping_patches(
        repo, settings, [reply, "Added c."], "add a mode c to app/names.py"
    )
    (patch,) = patches
    assert patch.files[0].proposed == 'MODES = Literal["a", "b", "c"]\nLIMIT: int = 4\n'
    assert "NameError" not in requests[1].prompt_text()
    # control: the same lines with no file line, in a question, are code to run
    assert defined_names('MODES = ["a"]\n', {"read_file"}) is None


def test_a_fixs_test_is_answered_with_what_the_code_gives_not_rewritten(
    repo: Path, settings: Settings, no_search: None
) -> None:
    """Control: in a fix, a failing new test may be right and the code wrong, so its value is
    not replaced; the model is told what the call gives instead."""
    guessed = "# file: tests/test_calc.py\ndef test_mul_negative():\n    assert mul(-2, 3) == 6\n"
    outcome, model = _checked_run(
        repo, settings, [guessed, "Added test_mul_negative."], "fix mul: add a test for it"
    )
    seen = model.requests[1].last_user_text()
    assert "the failing assertions' calls give: mul(-2, 3) returns -6" in seen, seen
    assert outcome.status == "incomplete"


def test_a_failing_test_of_changed_code_is_not_answered_with_the_old_code(
    repo: Path, settings: Settings
) -> None:
    """Control: the change also edits the code under test, so the repository's code is not
    what the test runs, and no value is told."""
    both = (
        "# file: app/calc.py\ndef mul(a, b):\n    return a * b + 1\n\n\n"
        "# file: tests/test_calc.py\ndef test_mul_negative():\n    assert mul(-2, 3) == 6\n"
    )
    _, model = _checked_run(repo, settings, [both, "Done."], "add a test for mul with a negative")
    seen = model.requests[1].last_user_text()
    assert "test_mul_negative" in seen and "failed" in seen, seen
    assert "the failing assertions' calls give" not in seen


def test_a_fix_told_by_its_symptom_is_checked_by_the_call_it_names(
    repo: Path, settings: Settings, no_search: None
) -> None:
    """Seen on the 1.5B model (a symptom-told bug, "ordinalize(-1021) gives '-1021th', it
    should be '-1021st'"): the "fix" was the function copied unchanged. Each proposal is
    checked by the call the task names, run with it, against the value the task says it should
    give: one that leaves the call as it was fails, and so does one that changes it to another
    wrong value; the run is not done until the call gives what the task asks."""
    unchanged = '# file: app/calc.py\ndef add(a, b):\n    """Add a and b."""\n    return a - b\n'
    wrong = "# file: app/calc.py\ndef add(a, b):\n    return a * b\n"
    fixed = "# file: app/calc.py\ndef add(a, b):\n    return a + b\n"
    task = "add(2, 3) gives -1, it should be 5"
    assert from_rules(task).symptom_calls == ("add(2, 3)",)
    assert from_rules(task).symptom_wants == {"add(2, 3)": "5"}
    outcome, model = _checked_run(repo, settings, [unchanged, wrong, fixed, "add adds now."], task)
    context = model.requests[0].last_user_text()
    assert "add(2, 3) returns -1" in context  # and where it comes from, as it ran:
    assert "app/calc.py:2 (add) return a - b  # a - b = -1" in context, context
    said = "the task says it should give 5"
    first = model.requests[1].last_user_text()
    assert f"add(2, 3) returns -1 with this patch; {said}: not yet" in first, first
    second = model.requests[2].last_user_text()
    assert f"add(2, 3) returns 6 with this patch; {said}: not yet" in second, second
    assert "What ran with the patch:" in second
    assert "app/calc.py:2 (add) return a * b  # a * b = 6" in second
    third = model.requests[3].last_user_text()
    assert f"add(2, 3) returns 5 with this patch; {said}" in third, third
    assert f"{said}: not yet" not in third
    assert outcome.status == "completed", outcome.answer
    assert (repo / "app" / "calc.py").read_text().count("a - b") == 1  # nothing written


def test_a_value_written_as_it_prints_is_checked_against_what_the_value_prints(
    repo: Path, settings: Settings, no_search: None
) -> None:
    """Dev sv-fix-bump-minor: "Version.parse('1.2.3').bump_minor() gives 1.3.3, it should be
    1.3.0" wrote the value as it prints, and a fix could not be checked by it (no Python
    literal), so a wrong fix was proposed as it was. The value is compared with what the
    call's value prints as: a wrong fix is told "not yet", the right one passes."""
    (repo / "app" / "version.py").write_text(
        "class Version:\n    def __init__(self, text):\n"
        "        self.parts = [int(p) for p in text.split('.')]\n\n"
        "    def __str__(self):\n        return '.'.join(map(str, self.parts))\n\n"
        "    def bump(self):\n        return Version(f'{self.parts[0]}.{self.parts[1] + 1}.'\n"
        "                       f'{self.parts[2]}')\n"
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "version")
    head = "# file: app/version.py\ndef bump(self):\n"
    wrong = (
        head + "    return Version(f'{self.parts[0]}.{self.parts[1] + 1}.{self.parts[2] + 0}')\n"
    )
    fixed = head + "    return Version(f'{self.parts[0]}.{self.parts[1] + 1}.0')\n"
    task = "Version('1.2.3').bump() gives 1.3.3, it should be 1.3.0"
    outcome, model = _checked_run(repo, settings, [wrong, fixed, "bump resets the patch."], task)
    said = "the task says it should give '1.3.0'"
    first = model.requests[1].last_user_text()
    assert f"with this patch; {said}: not yet" in first, first
    second = model.requests[2].last_user_text()
    assert said in second and f"{said}: not yet" not in second, second
    assert outcome.status == "completed", outcome.answer


def test_a_copy_that_changes_nothing_is_told_what_the_symptom_call_must_give(
    repo: Path, settings: Settings, no_search: None
) -> None:
    """Seen on the 1.5B model: the function copied unchanged, refused as "it changes
    nothing" before any proposal, again and again. For a task told by its symptom the refusal
    says what the call must give; the control, a task with no symptom, is not told that."""
    same = "# file: app/calc.py\ndef add(a, b):\n    return a - b\n"
    fixed = "# file: app/calc.py\ndef add(a, b):\n    return a + b\n"
    for task, told in [
        ("add(2, 3) gives -1, it should be 5", "add(2, 3) must give 5: change the lines"),
        ("Fix add in app/calc.py", None),
    ]:
        outcome, model = _checked_run(repo, settings, [same, fixed, "add adds now."], task)
        first = model.requests[1].last_user_text()
        assert "it changes nothing" in first, first
        assert outcome.status == "completed", outcome.answer  # the fix after it is proposed
        if told is None:
            assert "must give" not in first
        else:
            assert told in first, first


GREET = '''def greet(name):
    """Greet someone: the message ends with one exclamation mark."""
    prefix = "Hello"
    message = f"{prefix}, {name}"  # the greeting itself
    return message + "!!!"


GREETED = greet("you")
'''


@pytest.mark.parametrize(
    ("task", "told"),
    [
        (
            "the greeting message from greet ends with three exclamation marks but one is enough",
            'The task\'s words are on line 4: `message = f"{prefix}, {name}"  # the greeting '
            'itself`; line 5: `return message + "!!!"`: change what they do, or that line '
            "alone: propose_patch(path='app/greet.py', old_text=",
        ),
        ("make greet in app/greet.py shorter", None),  # control: no word of it is on a line
    ],
    ids=["words-on-lines", "control-no-words"],
)
def test_a_copy_that_changes_nothing_is_shown_the_lines_that_hold_the_task_s_words(
    repo: Path, settings: Settings, no_search: None, task: str, told: str | None
) -> None:
    """Seen on the 1.5B model (dev jp-walk-message): `walk` copied back unchanged until the
    loop stop, the message the task speaks of built on one of its lines. The refusal names
    the lines holding most of the task's words (not the def line, docstring or comments, nor
    the function's own name); with no such line it says nothing of them."""
    (repo / "app" / "greet.py").write_text(GREET)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "greet")
    same = "# file: app/greet.py\n" + GREET
    fixed = same.replace('"!!!"', '"!"')
    outcome, model = _checked_run(repo, settings, [same, fixed, "one mark now."], task)
    texts = [request.last_user_text() for request in model.requests]
    first = next(text for text in texts if "it changes nothing" in text)
    if told is None:
        assert "The task's words" not in first, first
    else:
        assert told in first, first
    assert outcome.status in ("completed", "incomplete")  # the change after it is proposed
    assert "!!!" in (repo / "app" / "greet.py").read_text()  # nothing written unasked


def _greet_repo(repo: Path) -> None:
    (repo / "app" / "greet.py").write_text(GREET)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "greet")


BANG = "the greeting message from greet ends with three exclamation marks but one is enough"


@pytest.mark.parametrize(
    "reply",
    [
        '```python\n    return message + "!"\n```',  # the line alone
        "```python\n# file: app/greet.py\n" + GREET.replace('"!!!"', '"!"') + "```",  # whole
    ],
    ids=["the-line", "the-function-around-it"],
)
def test_a_copied_function_s_line_is_asked_for_alone_and_proposed(
    repo: Path, settings: Settings, no_search: None, reply: str
) -> None:
    """Dev jp-walk-message: told which line holds the task's words, the 1.5B model copied
    `walk` back again. That line is asked for alone, and its new version (or the likest new
    line of a function written whole around it) is proposed in place, checked like any
    change; nothing is written unless accepted."""
    _greet_repo(repo)
    same = "```python\n# file: app/greet.py\n" + GREET + "```"
    _outcome, model, patches = _locally_checked(
        repo, settings, [same, reply, "One mark now."], BANG
    )
    asked = model.requests[1].prompt_text()
    shown = 'message = f"{prefix}, {name}"  # the greeting itself\nreturn message + "!!!"'
    assert f"Lines 4, 5 of app/greet.py:\n```python\n{shown}\n```" in asked
    assert BANG in asked
    assert len(patches) == 1
    diff = diff_of(patches[0])  # one line for one, its line end kept (the next line stays)
    assert '-    return message + "!!!"\n+    return message + "!"\n \n \n GREETED' in diff, diff
    assert "asked for alone, proposed changed as patch" in model.requests[2].prompt_text()
    assert "!!!" in (repo / "app" / "greet.py").read_text()


def test_a_copied_function_s_line_is_not_asked_for_alone_with_nothing_to_judge_it(
    repo: Path, settings: Settings, no_search: None
) -> None:
    """Held-out, a fix turned false success after the line was asked for alone: a line
    rewritten where no test fails and no value is wanted is a guess nothing can tell wrong.
    With the project's tests passing, the copy is refused as before and nothing is asked
    for alone (the control above, with a failing test, is asked)."""
    _greet_repo(repo)
    calc = repo / "app" / "calc.py"
    calc.write_text(calc.read_text().replace("a - b", "a + b"))
    git(repo, "commit", "-qam", "add adds")
    same = "```python\n# file: app/greet.py\n" + GREET + "```"
    turns = [same, "It is fine.", "It is fine as it is.", "It is fine as it is."]
    _outcome, model, patches = _locally_checked(repo, settings, turns, BANG)
    assert patches == []
    assert not any("Lines 4, 5 of app/greet.py" in r.prompt_text() for r in model.requests)
    assert "it changes nothing" in model.requests[1].last_user_text()


def test_a_line_given_back_the_same_is_no_change(
    repo: Path, settings: Settings, no_search: None
) -> None:
    """Control: the line given back as it is (and then words, not a line) proposes nothing:
    the run goes on as before and ends saying no change was proposed."""
    _greet_repo(repo)
    same = "```python\n# file: app/greet.py\n" + GREET + "```"
    again = '```python\n    return message + "!!!"\n```'
    turns = [same, again, "It is fine.", "It is fine as it is.", "It is fine as it is."]
    outcome, _model, patches = _locally_checked(repo, settings, turns, BANG)
    assert patches == []
    assert outcome.status == "incomplete" and outcome.answer.startswith("Not done")


@pytest.mark.parametrize(
    "reply",
    [
        # a line added beside the shown ones, which it keeps: no new version of either
        '```python\n    message = f"{prefix}, {name}"  # the greeting itself\n    if not name:\n'
        '        return "!"\n    return message + "!!!"\n```',
        # the statement split over more lines than were shown
        '```python\n    return (\n        message + "!"\n    )\n```',
        # a bracket left open: not the same statement
        '```python\n    return message + ("!"\n```',
    ],
    ids=["a-line-added-beside", "a-statement-split", "a-bracket-left-open"],
)
def test_a_reply_that_is_no_line_for_line_rewrite_proposes_nothing(
    repo: Path, settings: Settings, no_search: None, reply: str
) -> None:
    """Found in review: each new line of the reply replaced the shown line it was likest,
    so a guard added before `return xs[0]` replaced it with the guard's `return None`, and a
    statement split over three lines left its middle line in place of the whole. A reply
    that keeps the shown lines, has more new lines than were shown, or changes a line's
    bracket balance is not taken as their new version."""
    _greet_repo(repo)
    same = "```python\n# file: app/greet.py\n" + GREET + "```"
    turns = [same, reply, reply, "It is fine.", "It is fine as it is.", "It is fine as it is."]
    outcome, _model, patches = _locally_checked(repo, settings, turns, BANG)
    assert patches == [], [diff_of(patch) for patch in patches]
    assert outcome.status == "incomplete"


def _with_double(repo: Path) -> str:
    """Commit `double`, which calls `add` (the sample's wrong one); a copy of it unchanged."""
    import subprocess

    calc = repo / "app" / "calc.py"
    calc.write_text(calc.read_text() + "\n\ndef double(a):\n    return add(a, a)\n")
    subprocess.run(["git", "commit", "-qam", "double"], cwd=repo, check=True)
    return "# file: app/calc.py\ndef double(a):\n    return add(a, a)\n"


def test_the_refusal_names_the_functions_the_symptom_call_ran(
    repo: Path, settings: Settings, no_search: None
) -> None:
    """The 1.5B model kept copying the function the task names while the wrong value came
    from the one it calls: the refusal names every function the call's trace ran through."""
    same = _with_double(repo)
    fixed = "# file: app/calc.py\ndef add(a, b):\n    return a + b\n"
    task = "double(2) gives 0, it should be 4"
    _, model = _checked_run(repo, settings, [same, fixed, "add adds now."], task)
    first = model.requests[1].last_user_text()
    assert "double(2) must give 4: change the lines" in first, first
    assert "double(2) runs double (app/calc.py), add (app/calc.py)" in first, first


@pytest.fixture
def no_search(monkeypatch: pytest.MonkeyPatch) -> None:
    """No version sampled again (agent/search.py): the model's own replies, one by one (a fix
    whose tests failed before is searched for when the model's first change does not pass)."""
    monkeypatch.setattr(search, "SAMPLES", 0)
    monkeypatch.setattr(search, "LINES", 0)


@pytest.fixture
def functions_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whole functions sampled, no statement asked for alone (agent/search.py)."""
    monkeypatch.setattr(search, "LINES", 0)


def test_a_fix_the_model_cannot_write_is_found_among_versions_sampled_and_run(
    repo: Path, settings: Settings, functions_only: None
) -> None:
    """Seen on the 1.5B model (dev jp-fix-escape): escape() copied back unchanged at the
    agent's temperature, reply after reply; sampled hotter, some versions held the fix. After
    the first change that does not give the value the task wants, the same request is sampled
    again and each version's call run: a wrong version is passed over, the first that gives
    the value is proposed, and the model is told so. Nothing is written."""
    unchanged = "# file: app/calc.py\ndef add(a, b):\n    return a - b\n"
    wrong = "# file: app/calc.py\ndef add(a, b):\n    return a * b\n```\n"  # closed, never opened
    fixed = "```python\n# file: app/calc.py\ndef add(a, b):\n    return a + b\n```\nadd adds now."
    task = "add(2, 3) gives -1, it should be 5"
    outcome, model, patches = _locally_checked(
        repo, settings, [unchanged, wrong, fixed, "add adds now."], task
    )
    step, first, second, after = model.requests[:4]
    # the step's own request, asking at its end for the version of the function the call ran
    # without its docstring (the merge keeps it)
    assert first.messages[:-1] == step.messages[:-1] and second.messages == first.messages
    asked = first.last_user_text()
    assert asked.startswith(step.last_user_text().rstrip())
    assert asked.endswith(
        "then the complete new version of `add` with the fix in it, without its docstring: "
        "the one it has is kept."
    ), asked
    assert [(r.body["temperature"], r.body["seed"]) for r in (first, second)] == [
        (search.TEMPERATURE, 1),
        (search.TEMPERATURE, 2),
    ]
    told = after.last_user_text()
    assert "version 2 makes add(2, 3) give 5, as the task says it should" in told, told
    assert "+    return a + b" in told
    assert [p.status for p in patches] == ["pending"]  # the sampled fix; the copy was refused
    assert "return a + b" in diff_of(patches[0]) and "a * b" not in diff_of(patches[0])
    assert outcome.status == "completed", outcome.answer
    assert (repo / "app" / "calc.py").read_text().count("a - b") == 1  # nothing written


@pytest.fixture
def models_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """No statement edited mechanically (patches/mutants.py): every version is the model's."""
    monkeypatch.setattr(search, "statement_mutants", lambda source: iter(()))


def test_a_fix_is_searched_statement_by_statement_before_whole_functions(
    repo: Path, settings: Settings, models_only: None
) -> None:
    """Seen on the 1.5B model (dev sv-fix-not-equal, infl-ordinal-negative): asked for a whole
    function, even a named other one, it wrote back the one the task names, unchanged. After a
    change that does not give the value, each statement the symptom's call ran is asked for
    alone, under the trace, three times: at the agent's temperature, then hotter (a wrong
    version tells nothing of where the fault is); the first version the run confirms is
    proposed, in its function."""
    _with_double(repo)  # double(2) runs double, then add: double's statement is asked first
    unchanged = "# file: app/calc.py\ndef add(a, b):\n    return a - b\n"
    outcome, model, patches = _locally_checked(
        repo,
        settings,
        [
            unchanged,
            "```python\nreturn add(a, a)\n```",  # double's, the same: asked again hotter
            "```python\nreturn add(a, a) + 1\n```",  # a new double that gives 1: wrong
            "```python\nreturn add(a, a)\n```",  # the third reply for it, the same again
            "```python\nreturn a + b\n```",  # add's: the fix
            "double doubles now.",
        ],
        "double(2) gives 0, it should be 4",
    )
    same, hotter, third, fixed, after = model.requests[1:6]
    asked = same.last_user_text()
    assert len(same.messages) == 1 and asked.startswith(
        "The task: double(2) gives 0, it should be 4\ndouble(2) ran with the repository's code"
    ), asked
    assert "double(2) must give 4." in asked
    assert asked.endswith(
        "Suppose the fault is in this statement, line 10 of app/calc.py (in `double`):\n"
        "```python\nreturn add(a, a)\n```\nReply with one ```python block holding that "
        "statement written so that the fault is gone, and nothing else."
    ), asked
    assert "app/calc.py:2 (add) return a - b  # a - b = 0" in asked  # the trace, once for all
    assert same.body.get("temperature") != search.TEMPERATURE
    assert (hotter.body["temperature"], hotter.body["seed"]) == (search.TEMPERATURE, 2)
    assert hotter.last_user_text() == asked == third.last_user_text()
    assert (third.body["temperature"], third.body["seed"]) == (search.TEMPERATURE, 3)
    assert "line 2 of app/calc.py (in `add`)" in fixed.last_user_text()
    told = after.last_user_text()
    assert "version 4 makes double(2) give 4, as the task says it should" in told, told
    assert [diff_of(p).count("+    return a + b") for p in patches] == [1]
    assert "add(a, a) + 1" not in diff_of(patches[0])
    assert outcome.status == "completed", outcome.answer
    assert (repo / "app" / "calc.py").read_text().count("a - b") == 1  # nothing written


def test_a_statement_reply_that_is_no_statement_is_passed_over(
    repo: Path, settings: Settings, models_only: None
) -> None:
    """A reply with prose only, two statements, or code that does not parse is no version of
    the statement: asked again, then the next statement; with none left, the whole function
    is sampled as before."""
    unchanged = "# file: app/calc.py\ndef add(a, b):\n    return a - b\n"
    outcome, model, patches = _locally_checked(
        repo,
        settings,
        [
            unchanged,
            "Change the minus to a plus.",
            "```python\nx = a\nreturn x + b\n```",
            "```python\nreturn (\n```",
            "# file: app/calc.py\ndef add(a, b):\n    return a + b\n",
            "add adds now.",
        ],
        "add(2, 3) gives -1, it should be 5",
    )
    asked = [r.last_user_text() for r in model.requests]
    assert [a.startswith("The task: ") for a in asked[1:5]] == [True] * 3 + [False], asked
    assert asked[4].endswith(search.CHANGE_THERE.format(name="add", path="app/calc.py"))
    assert "version 1 makes add(2, 3) give 5" in asked[5]
    assert [diff_of(p).count("+    return a + b") for p in patches] == [1]
    assert outcome.status == "completed", outcome.answer


@pytest.mark.parametrize(
    ("task", "found"),
    [
        ("double(2) gives 0, it should be 4", True),  # the value written
        ("double(2) is 0?? two twos are clearly not 0", False),  # no value: tests would judge
        ("within(3, 3) is False?? but 3 is within 3", True),  # a bool called wrong: the other
    ],
)
def test_a_fix_one_token_off_is_found_among_the_statements_edits_before_the_model_is_asked(
    repo: Path, settings: Settings, task: str, found: bool
) -> None:
    """Dev sv-fix-not-equal: `"!=": (1,)` where `(-1, 1)` is meant; asked for that statement
    twelve times, the 1.5B model never wrote it. Each statement the symptom's call ran is
    edited mechanically first (an operator swapped, a constant moved by one, an item added to
    a tuple), and each edit judged by running the call: the first that gives the value the
    task says is proposed, with no model call. A complaint that the call gives a bool wants
    the other one. With no value to judge by, no edit is tried (each would be a test run)."""
    import subprocess

    _with_double(repo)
    calc = repo / "app" / "calc.py"
    name = "within" if "within" in task else "double"
    text = calc.read_text().replace("a - b", "a + b" if name == "within" else "a - b")
    calc.write_text(text + "\n\ndef within(a, b):\n    return a < b\n")  # the tests pass
    subprocess.run(["git", "commit", "-qam", "within"], cwd=repo, check=True)
    unchanged = f"# file: app/calc.py\n{_function(calc.read_text(), name)}"
    replies = [unchanged, "Fixed.", "Fixed.", *["```python\nreturn a\n```"] * 30]
    outcome, model, patches = _locally_checked(repo, settings, replies, task)
    asked = [r.last_user_text() for r in model.requests]
    mechanical = [p for p in patches if ("a <= b" in diff_of(p) or "return a + b" in diff_of(p))]
    assert bool(mechanical) is found, [diff_of(p) for p in patches]
    if found:
        assert not any(a.startswith("The task: ") for a in asked), asked  # no statement asked
        assert "as the task says it should" in asked[1], asked[1]
        assert outcome.status == "completed", outcome.answer


def _function(text: str, name: str) -> str:
    start = text.index(f"def {name}(")
    end = text.find("\n\n\n", start)
    return text[start : end if end != -1 else len(text)].rstrip() + "\n"


def test_the_statements_a_trace_ran_are_ordered_and_found_in_their_functions() -> None:
    """The function the call entered first, its last statement first; then the functions it
    entered, the last first. A statement of a nested function is written in the function it
    is nested in; a definition, a docstring or a file outside the repository is none to ask
    for; a compound statement is its header alone."""
    steps = [
        "m.py:2 (outer) x = 1",
        "m.py:3 (outer) if x:",
        "m.py:9 (inner) return 2",
        "lib.py:1 (other) y = 3",
        "m.py:12 (last) return 3",
        "m.py:4 (outer) return x",
    ]
    assert search._statements(steps, {"m.py"}) == [
        ("m.py", 4),
        ("m.py", 3),
        ("m.py", 2),
        ("m.py", 12),
        ("m.py", 9),
    ]
    text = (
        "def outer(x):\n    x = 1\n    if (x\n            > 0):\n        return x\n"
        "    def nested():\n        y = 2\n        return y\n\n\nclass C:\n"
        '    @property\n    def p(self):\n        """Doc."""\n        return 1\n'
    )
    assert search._statement(text, 2) == ("outer", (1, 8), (2, 2), False)
    assert search._statement(text, 3) == ("outer", (1, 8), (3, 4), True)
    # inside `nested`: written in `outer`, which is merged by its name
    assert search._statement(text, 7) == ("outer", (1, 8), (7, 7), False)
    assert search._statement(text, 6) is None  # a definition
    assert search._statement(text, 15) == ("p", (12, 15), (15, 15), False)
    assert search._statement(text, 14) is None  # the docstring
    assert search._new_statement("```python\nif x > 1:\n```", header=True) == "if x > 1:"
    assert search._new_statement("```python\nif x > 1:\n```", header=False) is None
    assert search._new_statement("```python\nreturn (\n```", header=False) is None


def test_sampled_versions_are_spread_over_the_functions_the_call_ran(
    repo: Path, settings: Settings, functions_only: None
) -> None:
    """Seen on the 1.5B model (dev infl-ordinal-negative): all six sampled versions copied the
    function the task names while the wrong value came from the one it calls. Where the call
    ran through several functions, each sampled request ends by asking for one of them, the
    last entered first; the version the run confirms is proposed, whichever it changes."""
    same = _with_double(repo)
    wrong = "# file: app/calc.py\ndef add(a, b):\n    return a * b - b\n"
    fixed = "# file: app/calc.py\ndef add(a, b):\n    return a + b\n"
    outcome, model, patches = _locally_checked(
        repo,
        settings,
        [same, wrong, same, fixed, "add adds now."],
        "double(2) gives 0, it should be 4",
    )
    step, first, second, third, after = model.requests[:5]
    assert first.last_user_text().startswith(step.last_user_text())
    assert first.last_user_text().endswith(
        search.CHANGE_THERE.format(name="add", path="app/calc.py")
    ), first.last_user_text()
    assert second.last_user_text().endswith(
        search.CHANGE_THERE.format(name="double", path="app/calc.py")
    )
    assert third.last_user_text() == first.last_user_text()
    assert "version 3 makes double(2) give 4" in after.last_user_text()
    assert [diff_of(p).count("+    return a + b") for p in patches] == [1]
    assert outcome.status == "completed", outcome.answer


def test_a_failing_tests_assertion_is_a_symptom_whose_fix_is_sampled_and_run(
    repo: Path, settings: Settings, venv_python_first: None, functions_only: None
) -> None:
    """Seen on the 1.5B model (dev fix-failing-test): told "test_average fails", it copied
    average() back unchanged four times, and no version was sampled, since the task writes no
    value. The failing assertion `assert add(2, 3) == 5` writes both: the call and what it
    should give, so the fix is searched as for a symptom. An assertion that is not a call of
    literals compared to a literal makes no symptom: the fix is then told by the failing tests
    passing (the next test)."""
    unchanged = "# file: app/calc.py\ndef add(a, b):\n    return a - b\n"
    wrong = "# file: app/calc.py\ndef add(a, b):\n    return a * b\n"
    fixed = "# file: app/calc.py\ndef add(a, b):\n    return a + b\n"
    task = "test_add fails. Fix the bug so that the tests pass."
    outcome, model, patches = _locally_checked(
        repo, settings, [unchanged, wrong, fixed, "add adds now."], task
    )
    first, second = model.requests[1:3]
    assert [(r.body["temperature"], r.body["seed"]) for r in (first, second)] == [
        (search.TEMPERATURE, 1),
        (search.TEMPERATURE, 2),
    ]
    assert "version 2 makes add(2, 3) give 5" in model.requests[3].last_user_text()
    assert [diff_of(p).count("+    return a + b") for p in patches] == [1]
    assert outcome.status == "completed", outcome.answer
    # `assert add(x, 3) == 5` (a name, not a literal) is no symptom: no value to run for
    test = repo / "tests" / "test_calc.py"
    test.write_text(
        test.read_text()
        .replace("add(2, 3) == 5", "add(x, 3) == 5")
        .replace("def test_add():", "x = 2\n\n\ndef test_add():")
    )
    git(repo, "commit", "-qam", "x")
    _, model, _ = _locally_checked(repo, settings, [unchanged, fixed, "add adds now."], task)
    assert "version 1 changes the code, and the tests that failed pass" in (
        model.requests[2].last_user_text()
    )


@pytest.mark.parametrize(
    "task",
    [
        "add gives the wrong numbers. pls fix",
        # a call with no value it should give (dev sv-fix-nextver-prerelease: the tests were
        # not run, since the task wrote a call, and nothing could tell a version right)
        "add(2, 3) comes out wrong. pls fix",
    ],
)
def test_a_fix_told_with_no_value_is_found_by_the_tests_that_failed(
    repo: Path, settings: Settings, venv_python_first: None, functions_only: None, task: str
) -> None:
    """Seen on the 1.5B model (dev sv-fix-compatible: "is_compatible says 1.2.0 and 1.2.5
    arent compatible, same minor. pls fix"): the function copied back unchanged until the loop
    stop; no value to run, but the project's tests failed before the change. Versions are
    sampled and the first that changes the code and makes them pass is proposed; a wrong one
    is passed over. Controls: where the tests pass before, or where no tests run on a version
    (no check command, tests not run in the sandbox), nothing tells a version right, and
    nothing is sampled."""
    unchanged = "# file: app/calc.py\ndef add(a, b):\n    return a - b\n"
    wrong = "# file: app/calc.py\ndef add(a, b):\n    return a * b\n"
    fixed = "# file: app/calc.py\ndef add(a, b):\n    return a + b\n"
    outcome, model, patches = _locally_checked(
        repo, settings, [unchanged, wrong, fixed, "add adds now."], task
    )
    first, second, after = model.requests[1:4]
    assert [(r.body["temperature"], r.body["seed"]) for r in (first, second)] == [
        (search.TEMPERATURE, 1),
        (search.TEMPERATURE, 2),
    ]
    told = after.last_user_text()
    assert "version 2 changes the code, and the tests that failed pass with it" in told, told
    assert [diff_of(p).count("+    return a + b") for p in patches] == [1]
    assert outcome.status == "completed", outcome.answer
    assert (repo / "app" / "calc.py").read_text().count("a - b") == 1  # nothing written
    # control: no tests run on a proposed version
    _, model, _ = _locally_checked(
        repo,
        settings,
        [unchanged, fixed, "add adds now."],
        task,
        sandbox_check_command="",
        sandbox_check_tests=False,
    )
    assert all(r.body.get("temperature") != search.TEMPERATURE for r in model.requests)
    # control: the tests pass before the change (test_add asserts what add does now)
    test = repo / "tests" / "test_calc.py"
    test.write_text(test.read_text().replace("add(2, 3) == 5", "add(2, 3) == -1"))
    git(repo, "commit", "-qam", "pinned")
    _, model, _ = _locally_checked(repo, settings, [unchanged, fixed, "add adds now."], task)
    assert all(r.body.get("temperature") != search.TEMPERATURE for r in model.requests)


def test_a_sampled_version_that_gives_the_value_but_fails_the_tests_is_passed_over(
    repo: Path, settings: Settings, functions_only: None
) -> None:
    """Seen on the 1.5B model (dev infl-ordinal-negative): a sampled version gave '-1021st' by
    returning it for -1021 alone, and left the negative-number tests failing. A version is
    taken only when the project's tests pass with it too."""
    unchanged = "# file: app/calc.py\ndef add(a, b):\n    return a - b\n"
    special = (
        "# file: app/calc.py\ndef add(a, b):\n    if (a, b) == (2, 2):\n        return 4\n"
        "    return a - b\n"
    )
    fixed = "# file: app/calc.py\ndef add(a, b):\n    return a + b\n"
    outcome, model, patches = _locally_checked(
        repo,
        settings,
        [unchanged, special, fixed, "add adds now."],
        "add(2, 2) gives 0, it should be 4",
    )
    told = model.requests[3].last_user_text()
    assert "version 2 makes add(2, 2) give 4" in told, told
    assert [diff_of(p).count("(2, 2)") for p in patches] == [0]
    assert outcome.status == "completed", outcome.answer


def test_a_right_first_fix_samples_nothing(repo: Path, settings: Settings) -> None:
    """Control: a first change that gives the value is the change (no sampling). (A symptom
    whose right value is not written is judged by the tests that failed, when some did:
    `test_a_fix_told_with_no_value_is_found_by_the_tests_that_failed`, with its control.)"""
    fixed = "# file: app/calc.py\ndef add(a, b):\n    return a + b\n"
    outcome, model = _checked_run(
        repo, settings, [fixed, "add adds now."], "add(2, 3) gives -1, it should be 5"
    )
    assert outcome.status == "completed" and len(model.requests) == 2


def test_a_symptom_with_no_value_written_holds_a_fix_to_changing_the_call(
    repo: Path, settings: Settings, no_search: None
) -> None:
    """Where the task says what is wrong but writes no value ("it should be the sum"), the
    check can only ask that the call give something else than it gives now."""
    unchanged = '# file: app/calc.py\ndef add(a, b):\n    """Add a and b."""\n    return a - b\n'
    fixed = "# file: app/calc.py\ndef add(a, b):\n    return a + b\n"
    task = "add(2, 3) gives -1, it should be the sum"
    assert from_rules(task).symptom_wants == {}
    outcome, model = _checked_run(repo, settings, [unchanged, fixed, "add adds now."], task)
    first = model.requests[1].last_user_text()
    assert "add(2, 3) returns -1 without this patch and returns -1 with it: the same" in first
    second = model.requests[2].last_user_text()
    assert "add(2, 3) returns -1 without this patch and returns 5 with it" in second, second
    assert outcome.status == "completed", outcome.answer


def test_a_change_that_is_not_told_by_a_symptom_is_not_held_to_its_calls(
    repo: Path, settings: Settings
) -> None:
    """Control: a change that writes a call but tells no symptom keeps no such check."""
    assert from_rules("make add(2, 3) also log its arguments").symptom_calls == ()
    assert from_rules("what does add(2, 3) give?").symptom_calls == ()


NESTED = '''def rules(word):
    """The rules for a word."""
    def upper(text):
        return text.upper()

    return [upper(word), word]
'''


@pytest.mark.parametrize("nested", [True, False], ids=["nested", "control-top-level"])
def test_a_change_is_told_how_to_give_a_function_nested_in_one_it_shows(
    repo: Path, settings: Settings, nested: bool
) -> None:
    """Shown `rules` with `upper` inside it, the 1.5B model copied `rules` down to `upper`
    unchanged: the instruction says a nested function is given alone and merged where it is.
    The model's reply of `upper` alone lands inside `rules`, not as a new top-level function.
    Control: a helper at the top level gets no such sentence."""
    from tests.conftest import git

    top = 'def upper(text):\n    return text.upper()\n\n\ndef rules(word):\n    """The rules."""\n'
    text = NESTED if nested else top + "    return [upper(word), word]\n"
    (repo / "app" / "words.py").write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "words")
    reply = 'def upper(text):\n    """Upper-case text."""\n    return text.upper()\n'
    turns = [f"```python\n# file: app/words.py\n{reply}```", "Added a docstring to upper."]
    _, requests, patches = run_keeping_patches(
        repo, settings, turns, "add a docstring to the helper inside rules in app/words.py"
    )
    first = requests[0].last_user_text().rstrip()
    said = "The task is about `upper`, the function nested in `rules`: give only `def upper`"
    assert (said in first) is nested
    if nested:
        (change,) = patches[0].files
        assert change.proposed == NESTED.replace(
            "    def upper(text):\n", '    def upper(text):\n        """Upper-case text."""\n'
        )
    assert (repo / "app" / "words.py").read_text() == text  # nothing written


@pytest.mark.parametrize("right", [False, True], ids=["outer-documented", "control-helper"])
def test_a_change_that_leaves_the_helper_it_was_asked_for_as_it_was_is_not_done(
    repo: Path, settings: Settings, right: bool, no_search: None
) -> None:
    """Asked for a docstring on the helper inside `rules`, the model gives `rules` one and
    copies `upper` as it was (the 1.5B model, dev sv-nested-docstring): the change is
    proposed as written, and the run is not `completed` — the answer says the helper is as it
    was. Control: the helper given its docstring completes."""
    from tests.conftest import git

    (repo / "app" / "words.py").write_text(NESTED)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "words")
    if right:
        reply = 'def upper(text):\n    """Upper-case text."""\n    return text.upper()\n'
    else:
        reply = NESTED.replace('"""The rules for a word."""', '"""The rules, upper-cased."""')
    turns = [f"```python\n# file: app/words.py\n{reply}```", *["Added the docstring."] * 2]
    outcome, requests, patches = run_keeping_patches(
        repo, settings, turns, "the little helper in rules needs a docstring"
    )
    assert len(patches) == 1
    missed = "the task is about `upper` (nested in `rules`), and this change leaves it as it was"
    # told once before the run ends, from the diff, with how to write the change
    told = [r.last_user_text() for r in requests]
    told = [text for text in told if "Reply with the change again" in text]
    assert (len(told) == 1 and missed in told[0]) is not right
    assert (missed in outcome.answer) is not right, outcome.answer
    assert outcome.status == ("completed" if right else "incomplete"), outcome.answer


@pytest.mark.parametrize(
    ("task", "said"),
    [
        ("the little helper in rules needs a docstring", "The task is about `upper`, the"),
        ("give rules a docstring", "To change `upper` (nested in `rules`), give only"),
        ("document the helper in words.py", "To change `upper` (nested in `rules`), give only"),
    ],
    ids=["helper-of-a-named-function", "the-outer-one", "no-function-named"],
)
def test_a_task_that_means_the_helper_in_a_function_is_told_it_is_about_that_helper(
    task: str, said: str
) -> None:
    """Told only how to give a nested function, the 1.5B model gave the outer function the
    docstring its helper was asked for. When the task's words mean a nested function and it
    names the function around it, the instruction says the change is about the nested one.
    Controls: the outer function asked for, and no function named, keep the general line."""
    message = task_message(from_rules(task), "CODE", nested=[("upper", "rules")])
    assert said in message, message


@pytest.mark.parametrize(
    ("task", "header"),
    [
        ("add(2, 3) gives -1, it should give 5", "`# file: app/calc.py`"),
        ("add a test for add(2, 3)", "`# file: tests/test_calc.py`"),  # not the code file
        ("add(2, 3) gives -1; write double(x) in a new app/more.py", "`# file: <path>`"),
    ],
    ids=["code-file", "tests", "a-file-to-create"],
)
def test_a_change_that_names_no_file_is_headed_with_the_file_of_the_code_shown(
    repo: Path, settings: Settings, task: str, header: str
) -> None:
    """Given `# file: <path>` for "NO_COLOR should win", the 1.5B model wrote invented classes
    into another file of the list; given the file of the code it was shown, it wrote the right
    function there. A task that names no file is headed with the one file of code shown; one
    that writes a file name the repository lacks leaves the header's path to the model."""
    turns = ["I cannot see it.", "I cannot see it.", "I cannot see it."]
    _, requests, _ = run_keeping_patches(repo, settings, turns, task)
    first = requests[0].last_user_text()
    assert "def add(a, b)" in first
    assert f"whose first line is {header}" in first


@pytest.mark.parametrize(
    "reply",
    [
        # as the 1.5B model wrote its sampled versions (dev jp-fix-escape)
        "```python\n# file: jsonpointer.py\ndef escape(s):\n    return s\n```\nThis change ensures ...",
        "# file: jsonpointer.py\ndef escape(s):\n    return s\n```\n```python\n# file: x.py\n```",
        "# file: jsonpointer.py\n\ndef escape(s):\n    return s\n",
    ],
)
def test_a_sampled_reply_is_read_as_its_first_block_fenced_or_not(reply: str) -> None:
    from smol_instruments.agent.search import _first_block

    path, body = search.file_header(_first_block(reply), {"jsonpointer.py"})
    assert (path, body.strip()) == ("jsonpointer.py", "def escape(s):\n    return s")


KLASS = '''class Version:
    """A version."""

    major = 1

    @classmethod
    def compare(cls, a, b):
        def key(part):
            return int(part)

        return key(a) - key(b)

    def other(self):
        return 1
'''


@pytest.mark.parametrize(
    ("proposed", "told"),
    [
        # a method's own lines: the method, not its class
        (KLASS.replace("return 1", "return 2"), "it changes `Version.other`"),
        # a docstring given to a nested helper: the helper, not the method around it
        (
            KLASS.replace("(part):\n", '(part):\n            """The part as a number."""\n'),
            "it changes `Version.compare.<locals>.key`",
        ),
        # a method added: the class's own lines are as they were
        (KLASS + "\n    def new(self):\n        pass\n", "it adds `Version.new`"),
        # the class's own line changed
        (KLASS.replace("major = 1", "major = 2"), "it changes `Version`"),
        # a file left not parsing: the lines it edits and where, not every definition removed
        (
            KLASS.replace("return 1", "return (1"),
            f"it edits line {KLASS.splitlines().index('        return 1') + 1} (in `other`), "
            "after which the file no longer parses",
        ),
    ],
)
def test_a_change_is_told_by_the_definitions_whose_own_lines_changed(
    proposed: str, told: str
) -> None:
    from smol_instruments.agent.outcome import what_changed
    from smol_instruments.patches.model import FileChange, Patch

    patch = Patch("p1", "", [FileChange.between("v.py", KLASS, proposed)])
    assert what_changed(patch) == f"in v.py {told}"


VERSION = """class Version:
    def __init__(self, major, minor=0, patch=0, label=None):
        self.parts = (int(major), int(minor), int(patch))
        self.label = label

    def bump_patch(self):
        major, minor, patch = self.parts
        return Version(major, minor, patch + 1)

    def __repr__(self):
        return "Version(%d, %d, %d)" % self.parts
"""
VERSION_TESTS = """from app.version import Version


def test_label_is_kept():
    assert Version(1, 2, 3, "rc").label == "rc"


def test_bump_patch():
    assert Version(1, 2, 3).bump_patch().parts == (1, 2, 4)
"""


def test_a_merge_leaves_out_a_rewritten_definition_that_breaks_the_tests(
    tmp_path: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seen on the 1.5B model (dev sv-bump-step): asked for a `step` argument, it wrote the
    class around bump_patch with an `__init__` of its own that dropped an attribute, and the
    whole change failed the tests. The whole merge fails, the merge without that `__init__`
    passes: that one is proposed, saying what was kept. Control: a class rewritten with an
    `__init__` that breaks nothing is proposed whole, its validation run once (the merge's,
    not again for the proposal)."""
    repo = make_repo(
        tmp_path / "repo",
        {"app/__init__.py": "", "app/version.py": VERSION, "tests/test_version.py": VERSION_TESTS},
    )
    step = "    def bump_patch(self, step=1):\n        major, minor, patch = self.parts\n"
    step += "        return Version(major, minor, patch + step)\n"
    broken = "class Version:\n    def __init__(self, major, minor, patch):\n"
    broken += "        self.parts = (major, minor, patch)\n\n" + step
    reply = f"# file: app/version.py\n{broken}"
    task = "can bump_patch take a step? default stays 1"
    outcome, _, patches = _locally_checked(repo, settings, [reply, "bump_patch takes step."], task)
    assert len(patches) == 1
    diff = diff_of(patches[0])
    assert "+    def bump_patch(self, step=1):" in diff and "__init__" not in diff, diff
    summary = patches[0].summary
    assert "replaced Version.bump_patch; kept Version.__init__ as it was" in summary, summary
    # nothing that ran passes `step`: proposed, not verified
    assert outcome.status == "incomplete" and outcome.answer.startswith(UNTRIED_HEAD), (
        outcome.answer
    )
    # control: the same class with an __init__ that keeps the label is proposed whole
    kept = broken.replace("patch):\n", "patch, label=None):\n        self.label = label\n")
    kept = kept.replace("(major, minor, patch)\n", "(int(major), int(minor), int(patch))\n")
    runs: list[str] = []
    validate = LocalSandbox.validate

    def counted(self: LocalSandbox, diff: str, *args: Any, **kwargs: Any) -> Any:
        runs.append(diff)
        return validate(self, diff, *args, **kwargs)

    monkeypatch.setattr(LocalSandbox, "validate", counted)
    _, _, patches = _locally_checked(
        repo, settings, [f"# file: app/version.py\n{kept}", "Done."], task
    )
    assert "kept" not in patches[-1].summary and "__init__" in diff_of(patches[-1])
    assert len(runs) == 1, runs


def test_a_sampled_request_asks_for_the_place_at_the_end_of_what_the_model_reads_last() -> None:
    """The place to change goes after the last message the model reads as the user's: the
    task, or an observation (smolagents sends tool responses as the user's). The run's own
    messages are not touched."""
    from smolagents.models import ChatMessage, MessageRole

    def text(words: str) -> list[dict[str, str]]:
        return [{"type": "text", "text": words}]

    messages = [
        ChatMessage(role=MessageRole.SYSTEM, content=text("rules")),
        ChatMessage(role=MessageRole.USER, content=text("the task")),
        ChatMessage(role=MessageRole.ASSISTANT, content=text("a change")),
        ChatMessage(role=MessageRole.TOOL_RESPONSE, content=text("Observation: it fails")),
    ]
    asked = search._ending_with(messages, "\nChange `ordinal`.")
    assert asked[3].content == [*text("Observation: it fails"), *text("\nChange `ordinal`.")]
    assert asked[:3] == messages[:3] and messages[3].content == text("Observation: it fails")
    first = search._ending_with(messages[:2], "\nChange `ordinal`.")
    assert first[1].content == [*text("the task"), *text("\nChange `ordinal`.")]


@pytest.mark.parametrize(
    ("readme", "added", "right"),
    [
        ("README.md", "```python\nadd(1, 2)\n```", False),
        ("README.md", "## Usage\n\n```python\nadd(1, 2)\n```", True),
        ("README.rst", "Usage\n-----\n\n::\n\n    add(1, 2)", True),
    ],
    ids=["examples-alone", "control-markdown-heading", "control-rest-underline"],
)
def test_a_section_asked_for_with_no_heading_for_it_is_not_done(
    repo: Path, settings: Settings, readme: str, added: str, right: bool
) -> None:
    """Asked for a Usage section, the model appends examples with no heading over them (the
    1.5B model, dev infl-readme-usage): the change is proposed as written, told as what it is,
    and the run is not `completed`. Controls: the same examples under a Markdown heading, and
    under a reStructuredText underline, complete; the task's words alone are no heading."""
    from tests.conftest import git

    (repo / readme).write_text("Calc\n====\n\nA calculator.\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "readme")
    block = f"{readme}\n<<<<<<< SEARCH\nA calculator.\n=======\nA calculator.\n\n{added}\n"
    block += ">>>>>>> REPLACE"
    turns = [block, *["I added a Usage section."] * 2]
    task = f"add a Usage section to {readme} with an example"
    outcome, requests, patches = run_keeping_patches(repo, settings, turns, task)
    assert len(patches) == 1 and "add(1, 2)" in patches[0].files[0].proposed
    asked = "The new section starts with its heading, Usage"
    assert any(asked in request.last_user_text() for request in requests)
    missing = "the task asks for a `Usage` section, and this change adds no such heading"
    assert (missing in outcome.answer) is not right, outcome.answer
    assert outcome.status == ("completed" if right else "incomplete"), outcome.answer
    assert (repo / readme).read_text() == "Calc\n====\n\nA calculator.\n"  # nothing written


def test_a_section_asked_for_and_a_change_that_only_removes_lines_is_not_done(
    repo: Path, settings: Settings
) -> None:
    """A change whose hunk adds no line (it only removes one) is judged, not a crash: the
    heading check read the lines after each added line, and a hunk with none raised, which
    ended the real model's run in a traceback (CI's real-model tier)."""
    from tests.conftest import git

    (repo / "README.md").write_text("Calc\n====\n\nA calculator.\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "readme")
    block = "README.md\n<<<<<<< SEARCH\nA calculator.\n=======\n>>>>>>> REPLACE"
    outcome, _, patches = run_keeping_patches(
        repo, settings, [block, "Done.", "Done."], "add a Usage section to README.md"
    )
    assert len(patches) == 1 and "A calculator." not in patches[0].files[0].proposed
    assert outcome.status == "incomplete", outcome.answer
    assert "this change adds no such heading" in outcome.answer, outcome.answer


@pytest.mark.parametrize("right", [False, True], ids=["name-never-written", "control-added"])
def test_a_change_that_never_writes_the_new_name_its_task_names_is_not_done(
    repo: Path, settings: Settings, right: bool
) -> None:
    """Asked to give `mul` a `times` argument the repository does not have, the model is told
    the name is in no file yet and is written as the task writes it (not "say so; do not
    describe it", a question's words); a change that never writes `times` (here: a docstring)
    is proposed as written, and the run is not `completed`. Control: `times` added completes."""
    if right:
        reply = "def mul(a, b, times=1):\n    return a * b * times\n"
    else:
        reply = 'def mul(a, b):\n    """Multiply."""\n    return a * b\n'
    turns = [f"```python\n# file: app/calc.py\n{reply}```", *["Added the argument."] * 2]
    task = "give mul an optional `times` argument, default 1"
    outcome, requests, patches = run_keeping_patches(repo, settings, turns, task)
    first = requests[0].last_user_text()
    assert "`times` is in no file of this repository yet" in first, first
    assert "do not describe it" not in first
    assert len(patches) == 1
    missing = "Not done: the task names `times`, which this change does not add."
    assert (missing in outcome.answer) is not right, outcome.answer
    # right: nothing that ran passes the parameter, so not verified (agent/outcome.py)
    assert outcome.status == "incomplete", outcome.answer
    assert outcome.answer.startswith(UNTRIED_HEAD) is right, outcome.answer


@pytest.mark.parametrize("reads", [False, True], ids=["never-read", "control-read"])
def test_a_new_parameter_the_body_never_reads_fails_its_check(
    repo: Path, settings: Settings, reads: bool
) -> None:
    """Asked for an option, a small model adds it to the signature and uses it nowhere (dev
    sv-finalize-keep-build; the patch writes the name, so it passed for the feature). The
    proposal is told it fails a check, as a failing test would be, and the run is not
    `completed`; the option read in the body completes (control)."""
    body = "a * b * times" if reads else "a * b"
    turns = [f"```python\n# file: app/calc.py\ndef mul(a, b, times=1):\n    return {body}\n```"]
    turns += ["Added the argument."] * 2
    task = "give mul an optional `times` argument, default 1"
    outcome, requests, patches = run_keeping_patches(repo, settings, turns, task)
    said = "`times` is a new parameter of `mul` (app/calc.py) that its body never reads"
    assert (said in requests[1].prompt_text()) is not reads
    checks = [c["command"] for c in patches[0].validation.get("checks", []) if not c["passed"]]
    assert checks == ([] if reads else ["every new parameter is read"])
    # right: nothing that ran passes the parameter, so not verified (agent/outcome.py)
    assert outcome.status == "incomplete", outcome.answer
    assert outcome.answer.startswith(UNTRIED_HEAD) is reads, outcome.answer
    assert ("Not done: the proposed change fails its checks." in outcome.answer) is not reads


@pytest.mark.parametrize("right", [False, True], ids=["another-function", "control-the-one"])
def test_a_change_that_leaves_the_function_the_task_is_about_as_it_was_is_not_done(
    repo: Path, settings: Settings, right: bool
) -> None:
    """Asked for an option on one function, the change goes to another one: what the task is
    about is left as it was, and the run says so rather than `completed`. Control: the change
    to the function the task names completes."""
    name = "mul" if right else "add"
    body = "a * b * times" if right else "a + b + times"
    reply = f"def {name}(a, b, times=1):\n    return {body}\n"
    turns = [f"```python\n# file: app/calc.py\n{reply}```", *["Added the argument."] * 2]
    task = "give mul an optional `times` argument, default 1"
    outcome, _, patches = run_keeping_patches(repo, settings, turns, task)
    assert len(patches) == 1
    untouched = "Not done: the task is about `mul`, and this change neither changes nor uses"
    assert (untouched in outcome.answer) is not right, outcome.answer
    # right: nothing that ran passes the parameter, so not verified (agent/outcome.py)
    assert outcome.status == "incomplete", outcome.answer
    assert outcome.answer.startswith(UNTRIED_HEAD) is right, outcome.answer


@pytest.mark.parametrize("right", [False, True], ids=["a-new-function", "control-a-parameter"])
def test_a_name_given_a_default_that_is_added_as_no_parameter_is_not_done(
    repo: Path, settings: Settings, right: bool
) -> None:
    """Told "rails has preserve_case for this, can we get that too? off by default", the 1.5B
    model added a function `preserve_case` beside `parameterize` and the run was `completed`
    (fresh dev infl-slug-preserve-case). A name the task gives a default is a parameter: a
    change that adds none of that name is not done. Control: the parameter completes."""
    reply = (
        "def mul(a, b, times=1):\n    return a * b * times\n"
        if right
        else "def times(a, b):\n    return a * b\n"
    )
    turns = [f"```python\n# file: app/calc.py\n{reply}```", *["Added it."] * 2]
    task = "mul multiplies once. can we get `times` too? off by default"
    outcome, requests, patches = run_keeping_patches(repo, settings, turns, task)
    assert patches, outcome.answer
    said = "Not done: the task gives `times` a default, so it is a parameter"
    assert (said in outcome.answer) is not right, outcome.answer
    assert (said in requests[-1].prompt_text()) is not right  # told once before the end
    # right: nothing that ran passes the parameter, so not verified (agent/outcome.py)
    assert outcome.status == "incomplete", outcome.answer
    assert outcome.answer.startswith(UNTRIED_HEAD) is right, outcome.answer


@pytest.mark.parametrize(
    ("path", "reply", "right"),
    [
        ("tests/test_calc.py", "def test_mul():\n    assert mul(0, 5) == 0\n", False),
        ("tests/conftest.py", "def test_mul_zero():\n    assert mul(0, 5) == 0\n", False),
        ("tests/test_calc.py", "def test_mul_zero():\n    assert mul(0, 5) == 0\n", True),
    ],
    ids=["an-old-test-changed", "written-in-conftest", "control-new-test"],
)
def test_a_request_for_a_test_that_adds_none_the_runner_collects_is_not_done(
    repo: Path, settings: Settings, path: str, reply: str, right: bool
) -> None:
    """Asked to add a test, the 1.5B model changed an existing one (dev tc-add-test-no-color)
    or wrote new ones in conftest.py, where pytest collects none (dev sv-add-test-to-dict):
    told from the diff, the run is not `completed`. Control: a new test function in a test
    file completes."""
    turns = [f"```python\n# file: {path}\n{reply}```", *["Added the test."] * 2]
    outcome, requests, patches = run_keeping_patches(repo, settings, turns, "add a test for mul")
    assert patches, outcome.answer
    said = "Not done: the task asks for a new test, and this change adds no test function"
    assert (said in outcome.answer) is not right, outcome.answer
    assert (said in requests[-1].prompt_text()) is not right  # told once before the end
    assert outcome.status == ("completed" if right else "incomplete"), outcome.answer


@pytest.mark.parametrize("instead", ["", " instead"], ids=["asked", "told-as-a-complaint"])
@pytest.mark.parametrize("right", [False, True], ids=["the-code-changed", "control-the-readme"])
def test_a_change_that_leaves_the_file_its_task_names_as_it_was_is_not_done(
    repo: Path, settings: Settings, right: bool, instead: str
) -> None:
    """Asked to put an example in the README, the model changed the code (dev
    jp-readme-example) and its summary said the example was added: told from the diff, the
    run is not `completed`, also when "instead" makes the request a complaint, so a fix.
    Control: the README changed completes."""
    if right:
        reply = (
            "README.md\n<<<<<<< SEARCH\nA tiny project for tests.\n=======\n"
            "A tiny project for tests.\n\n    >>> add(2, 3)\n>>>>>>> REPLACE"
        )
    else:
        reply = '```python\n# file: app/calc.py\ndef mul(a, b):\n    """Multiply."""\n'
        reply += "    return a * b\n```"
    task = "the readme says nothing useful. put a small usage example in it" + instead
    outcome, _, patches = run_keeping_patches(repo, settings, [reply, *["Added it."] * 2], task)
    assert patches, outcome.answer
    said = "Not done: the task is about `README.md`, and this change does not touch it."
    assert (said in outcome.answer) is not right, outcome.answer
    assert outcome.status == ("completed" if right else "incomplete"), outcome.answer


NESTED_TWICE = {
    "app/__init__.py": "",
    "app/checks.py": "def typed(op):\n    def wrapper(a, b):\n        return op(a, b)\n\n"
    "    return wrapper\n",
    "app/deco.py": "def logged(f):\n    def wrapper(*args):\n        print('call')\n"
    "        return f(*args)\n\n    return wrapper\n",
}


@pytest.mark.parametrize("right", [False, True], ids=["the-other-wrapper", "control-typed-s"])
def test_a_nested_function_meant_by_its_own_name_and_its_owner_s_is_the_one_changed(
    tmp_path: Path, settings: Settings, right: bool
) -> None:
    """Two functions nest a `wrapper`; the task names it and the function it is in ("the
    wrapper function inside typed", no word like "helper"): the change is asked for in that
    function's file, and one to the other `wrapper` (dev sv-nested-wrapper-doc) is not done.
    Control: the docstring in `typed`'s wrapper completes."""
    repo = make_repo(tmp_path / "repo", NESTED_TWICE)
    if right:
        reply = '# file: app/checks.py\ndef wrapper(a, b):\n    """Apply op."""\n'
        reply += "    return op(a, b)\n"
    else:
        reply = '# file: app/deco.py\ndef wrapper(*args):\n    """Log the call."""\n'
        reply += "    print('call')\n    return f(*args)\n"
    turns = [f"```python\n{reply}```", *["Added the docstring."] * 2]
    task = "document the wrapper function inside typed, it has no docstring"
    outcome, requests, patches = run_keeping_patches(repo, settings, turns, task)
    first = requests[0].last_user_text()
    assert "`wrapper`, the function nested in `typed`" in first, first
    assert "# file: app/checks.py" in first, first
    assert patches, outcome.answer
    said = "Not done: the task is about `wrapper` (nested in `typed`)"
    assert (said in outcome.answer) is not right, outcome.answer
    assert outcome.status == ("completed" if right else "incomplete"), outcome.answer


@pytest.mark.parametrize("right", [False, True], ids=["described", "control-said-absent"])
def test_an_answer_that_describes_a_name_no_file_has_is_sent_back_then_marked(
    repo: Path, settings: Settings, right: bool
) -> None:
    """Told that `mul_all` occurs nowhere, the 1.5B model described it anyway (dev
    tc-missing-cprint-bold): sent back once with the search's result; the same again ends
    with that result below it, not `completed`. Control: saying it is not there completes."""
    if right:
        answer = "mul multiplies two numbers. There is no mul_all in this repository."
    else:
        answer = "mul multiplies two numbers, while mul_all multiplies every number of a list."
    task = "whats the difference between mul and mul_all"
    outcome, requests, _ = run_keeping_patches(repo, settings, [answer] * 3, task)
    told = "a search of every file found no `mul_all` in this repository"
    assert any(told in r.prompt_text() for r in requests) is not right
    note = "Note: searched every file: `mul_all` occurs nowhere in this repository's code."
    assert (note in outcome.answer) is not right, outcome.answer
    assert outcome.status == ("completed" if right else "incomplete"), outcome.answer


@pytest.mark.parametrize("takes", [False, True], ids=["no-such-parameter", "control-it-takes-it"])
def test_a_keyword_argument_no_code_has_is_said_absent_though_a_comment_has_the_word(
    tmp_path: Path, settings: Settings, takes: bool
) -> None:
    """ "does mul reject floats when i pass strict=True?": `strict` is in a comment of
    pyproject.toml only (dev sv-missing-strict), so a search of every file found it and the
    answer described what it does. A keyword argument is looked for in the code: said
    absent. Control: a function that takes `strict` is not said absent."""
    signature = "def mul(a, b, strict=False):" if takes else "def mul(a, b):"
    files = {
        "pyproject.toml": "[tool.mypy]\n# strict = true\n",
        "app/__init__.py": "",
        "app/calc.py": f"{signature}\n    return a * b\n",
    }
    repo = make_repo(tmp_path / "repo", files)
    task = "does mul reject floats when i pass strict=True?"
    _, requests, _ = run_keeping_patches(repo, settings, ["It does not."] * 3, task)
    said = "`strict` occurs nowhere in this repository's code"
    assert (said in requests[0].last_user_text()) is not takes


def test_a_module_written_again_whole_is_proposed_as_its_lines_never_run(
    tmp_path: Path, settings: Settings
) -> None:
    """Asked to take a classifier out of setup.py, the 1.5B model wrote the file again with
    the line gone under `# file: setup.py` (dev jp-drop-py37); module-level code, not
    definitions, so it was run as code and `import io` was refused three times. In a change,
    the lines are the file's new version: proposed as a change of the part they align with."""
    setup = (
        "import io\n\nfrom setuptools import setup\n\nCLASSIFIERS = [\n"
        "    'Python :: 3.7',\n    'Python :: 3.8',\n]\n\n"
        "with io.open('README.md') as readme:\n    long_description = readme.read()\n\n"
        "setup(name='x', classifiers=CLASSIFIERS)\n"
    )
    repo = make_repo(tmp_path / "repo", {"setup.py": setup, "README.md": "x\n"})
    new = setup.replace("    'Python :: 3.7',\n", "")
    turns = [f"```python\n# file: setup.py\n{new}```", *["Took 3.7 out."] * 2]
    outcome, _, patches = run_keeping_patches(repo, settings, turns, "take 3.7 out of setup.py")
    assert len(patches) == 1, outcome.answer
    (change,) = patches[0].files
    assert change.path == "setup.py" and change.proposed == new
    assert (repo / "setup.py").read_text() == setup  # proposed, not written


def test_a_definition_that_does_not_parse_is_told_its_line(repo: Path, settings: Settings) -> None:
    """Dev sv-finalize-keep-build: `cls(..., self.build=None)` in a method's new version was
    read as a file's lines, and the model was told they are not the file's, three times. A
    Python file's block that begins as a definition and does not parse goes to the merge,
    which names its line; the next reply mends it."""
    broken = "# file: app/calc.py\ndef add(a, b):\n    return total(a, b, self.sign=1)\n"
    _, requests, patches = run_keeping_patches(
        repo,
        settings,
        [f"```python\n{broken}```", f"```python\n# file: app/calc.py\n{FIXED_ADD}```", "Fixed."],
        "Fix add in app/calc.py: it subtracts",
    )
    told = requests[1].last_user_text()
    assert "not valid Python (line 2" in told and "`return total(a, b, self.sign=1)`" in told
    assert "not lines of app/calc.py" not in told
    assert the_one_patch(patches).startswith(FIXED_ADD)


LOOKUP = '''def look(doc, pointer, default=None):
    """The value at `pointer` in `doc`."""
    return doc.get(pointer, default)
'''
TOOL_SCRIPT = """#!/usr/bin/env python
import argparse
import json
import sys

import lookup

parser = argparse.ArgumentParser()
parser.add_argument("POINTER")


def main():
    args = parser.parse_args()
    doc = json.load(sys.stdin)
    print(json.dumps(lookup.look(doc, args.POINTER)))


if __name__ == "__main__":
    main()
"""


@pytest.mark.parametrize("right", [False, True], ids=["keyword-not-taken", "control-dumps"])
def test_a_call_a_change_adds_with_a_keyword_its_function_does_not_take_fails_its_check(
    tmp_path: Path, settings: Settings, right: bool
) -> None:
    """Dev jp-cli-sort-keys: asked for a --sort-keys flag, the 1.5B model passed it on as
    `jsonpointer.resolve_pointer(doc, ptr, sort_keys=args.sort_keys)`, a keyword that function
    does not take; the command raised TypeError on first use, the tests (which never run it)
    passed, and the run said `completed`. The proposal fails a check that says so; passing
    it to `json.dumps` (no function of the repository) is not judged (control)."""
    files = {
        "lookup.py": LOOKUP,
        "bin/tool": TOOL_SCRIPT,
        "tests/test_lookup.py": "def test_x(): ...\n",
    }
    repo = make_repo(tmp_path / "repo", files)
    call = (
        "json.dumps(lookup.look(doc, args.POINTER), sort_keys=args.sort_keys)"
        if right
        else ("json.dumps(lookup.look(doc, args.POINTER, sort_keys=args.sort_keys))")
    )
    new = TOOL_SCRIPT.replace(
        'parser.add_argument("POINTER")\n',
        'parser.add_argument("POINTER")\nparser.add_argument("--sort-keys", action="store_true")\n',
    ).replace("json.dumps(lookup.look(doc, args.POINTER))", call)
    block = f"```\n# file: bin/tool\n{new}```"
    turns = [block, *["Added the flag."] * 3]
    task = "add a --sort-keys flag to the tool command, off by default"
    outcome, _, patches = run_keeping_patches(repo, settings, turns, task)
    assert patches, outcome.answer
    failed = [c for c in patches[-1].validation.get("checks", []) if not c["passed"]]
    said = "`sort_keys`, which `look` (lookup.py, line 1) does not take: it takes doc, pointer, default"
    assert any(said in str(c.get("output")) for c in failed) is not right, failed
    assert ("fails its checks" in outcome.answer) is not right, outcome.answer
    assert (outcome.status == "completed") is right, outcome.answer


@pytest.mark.parametrize(
    ("new", "flagged"),
    [
        ("from calc import mul\n\ndef f():\n    return mul(1, 2, times=3)\n", True),
        ("import calc as c\n\ndef f():\n    return c.mul(1, 2, times=3)\n", True),
        ("from calc import Box\n\ndef f():\n    return Box(size=2, colour=1)\n", True),
        ("from calc import mul\n\ndef f():\n    return mul(1, b=2)\n", False),  # taken
        ("from calc import spread\n\ndef f():\n    return spread(1, times=3)\n", False),  # **kw
        ("from calc import mul\n\ndef f(opts):\n    return mul(1, **opts)\n", False),
        ("import json\n\ndef f(x):\n    return json.dumps(x, sort=1)\n", False),  # not ours
        ("from calc import mul\n\ndef f(x):\n    return x.mul(1, times=3)\n", False),  # a method
        ("def g(a):\n    return a\n\ndef f():\n    return g(1, b=2)\n", True),  # its own file
    ],
)
def test_the_keyword_check_reads_only_calls_it_can_resolve(
    tmp_path: Path, settings: Settings, new: str, flagged: bool
) -> None:
    from tests.conftest import make_tools

    from smol_instruments.tools.signatures import keyword_check

    calc = (
        "def mul(a, b):\n    return a * b\n\n\ndef spread(a, **kw):\n    return a\n\n\n"
        "class Box:\n    def __init__(self, size):\n        self.size = size\n"
    )
    repo = make_repo(tmp_path / "repo", {"calc.py": calc, "use.py": "def f():\n    pass\n"})
    ctx, _ = make_tools(repo, settings)
    checks = keyword_check(ctx, [("use.py", "def f():\n    pass\n", new)])
    assert bool(checks) is flagged, checks
    # a call the file already made is the file's, not the change's
    assert keyword_check(ctx, [("use.py", new, new + "\n# more\n")]) == []
