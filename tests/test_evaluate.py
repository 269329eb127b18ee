"""`evaluate`: the repository's own code run, contained, to say what it really gives."""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import make_repo, make_tools

from smol_instruments.base.config import Settings
from smol_instruments.tools.base import ToolContext

CALC = '''"""A tiny calculator."""


def add(a, b):
    """Return the sum of a and b."""
    return a - b


def average(values):
    return add(0, sum(values)) / len(values)


def parse(text):
    if not text:
        raise ValueError("empty input")
    return int(text)
'''

FILES = {
    "calc/__init__.py": "",
    "calc/ops.py": CALC,
    "src/shapes/__init__.py": "SIDES = {'square': 4}\n",
    "tests/test_ops.py": "from calc.ops import add\n\n\ndef add_twice(a):\n    return a\n",
}


@pytest.fixture
def python_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])


def evaluate_in(
    tmp_path: Path, settings: Settings, code: str, **kw: Any
) -> tuple[ToolContext, dict[str, Any]]:
    repo = tmp_path / "repo"
    if not repo.exists():
        make_repo(repo, FILES)
    ctx, tools = make_tools(repo, settings.model_copy(update=kw))
    return ctx, dict(tools["evaluate"](code=code))


def evaluate(tmp_path: Path, settings: Settings, code: str, **kw: Any) -> dict[str, Any]:
    return evaluate_in(tmp_path, settings, code, **kw)[1]


def test_it_gives_what_the_code_really_returns_not_what_its_docstring_says(
    tmp_path: Path, settings: Settings, python_on_path: None
) -> None:
    result = evaluate(tmp_path, settings, "average([2, 4])")
    assert result["value"] == "-3.0" and result["type"] == "float"
    assert result["imported"] == ["from calc.ops import average"]


def test_an_exception_is_reported_with_where_it_was_raised(
    tmp_path: Path, settings: Settings, python_on_path: None
) -> None:
    result = evaluate(tmp_path, settings, "parse('')")
    assert result["exception"] == "ValueError: empty input"
    assert any(
        frame.startswith("calc/ops.py:") and "in parse" in frame for frame in result["raised_at"]
    )
    assert not any(str(tmp_path) in frame for frame in result["raised_at"])  # the repository's path


def test_code_whose_own_lines_use_a_name_nothing_defines_is_an_invalid_argument(
    tmp_path: Path, settings: Settings, python_on_path: None
) -> None:
    """Dev sv-why-release-first: the 1.5B model ran `sorted(versions, key=float)`, got the
    NameError for `versions` and answered from it. Code that ran none of the repository is
    told to define the name or call the repository; a NameError the repository's own code
    raises is what it gives (control), and a method named as a function says whose it is."""
    files = dict(FILES)
    files["calc/broken.py"] = "def total(values):\n    return summ(values)\n"
    files["calc/box.py"] = "class Box:\n    def size(self):\n        return 4\n"
    make_repo(tmp_path / "repo", files)
    result = evaluate(tmp_path, settings, "sorted(versions, key=float)")
    assert result["error"] == "INVALID_ARGUMENT", result
    assert "`versions` is not defined in this code" in result["message"]
    assert "versions = ..." in result["recovery_suggestion"]
    assert "import it" in evaluate(tmp_path, settings, "re.match('a', 'a')")["recovery_suggestion"]
    method = evaluate(tmp_path, settings, "size()")
    assert "a method of `Box` (calc.box)" in method["message"]
    # control: the repository's code raising NameError is its answer, with where it raised
    raised = evaluate(tmp_path, settings, "total([1, 2])")
    assert raised["exception"] == "NameError: name 'summ' is not defined"
    assert any(frame.startswith("calc/broken.py:2") for frame in raised["raised_at"])


def test_code_that_runs_none_of_the_repository_is_an_invalid_argument(
    tmp_path: Path, settings: Settings, python_on_path: None
) -> None:
    """Dev sv-why-release-first: asked why sorted() puts a release before its prerelease, the
    model sorted strings with a library of its own, and the answer was told as resting on
    what ran "with this repository's code". Code that runs none of the repository's code and
    opens none of its files is told to call the repository; code that calls it, or reads one
    of its files, runs (controls)."""
    outside = evaluate(tmp_path, settings, "sorted(['1.0.0', '1.0.0-rc.1'])")
    assert outside["error"] == "INVALID_ARGUMENT", outside
    assert "ran none of the repository's code" in outside["message"]
    assert "value" not in outside
    assert evaluate(tmp_path, settings, "sorted([average([2, 4]), 1])")["value"] == "[-3.0, 1]"
    read = evaluate(tmp_path, settings, "open('calc/ops.py').read().count('def ')")
    assert read["value"] == "3" and "untouched" not in read


def test_several_lines_prints_and_src_layout(
    tmp_path: Path, settings: Settings, python_on_path: None
) -> None:
    code = "from shapes import SIDES\nprint('sides', SIDES)\nx = add(5, 2)\nx * 10"
    result = evaluate(tmp_path, settings, code)
    assert result["value"] == "30"
    assert "sides {'square': 4}" in result["printed"]


def test_the_code_runs_contained_without_network_or_any_write_that_stays(
    tmp_path: Path, settings: Settings, python_on_path: None
) -> None:
    hook = tmp_path / "repo" / "calc" / "ops.py"
    outside = tmp_path / "outside.txt"
    code = (
        "import socket\n"
        f"open({str(outside)!r}, 'w').write('x')\n"
        f"open({str(hook)!r}, 'w').write('pwned')\n"
        f"seen = open({str(hook)!r}).read()\n"
        "try:\n    socket.create_connection(('1.1.1.1', 53), timeout=2)\n    net = True\n"
        "except OSError:\n    net = False\n"
        "(seen, net)"
    )
    ctx, result = evaluate_in(tmp_path, settings, code)
    # it wrote its view of the repository (and read that back), with no network ...
    assert result["value"] == "('pwned', False)"
    # ... and the view went with it: nothing written, nothing proposed
    assert hook.read_text() == CALC
    assert ctx.patches.all() == [] and "patch_id" not in result
    assert not outside.exists()  # /tmp inside is a throwaway tmpfs


def test_bad_code_and_endless_code_get_clear_errors(
    tmp_path: Path, settings: Settings, python_on_path: None
) -> None:
    bad = evaluate(tmp_path, settings, "average([2, 4]")
    assert bad["error"] == "INVALID_ARGUMENT" and "not valid Python" in bad["message"]
    endless = evaluate(tmp_path, settings, "while True:\n    pass", command_timeout_s=2)
    assert endless["error"] in ("TIMEOUT", "COMMAND_FAILED")


def test_an_untrusted_folder_runs_nothing(tmp_path: Path, settings: Settings) -> None:
    from smol_instruments.safety.approval import DenyAllApprover
    from smol_instruments.tools import build_tools
    from smol_instruments.tools.base import ToolContext

    repo = make_repo(tmp_path / "repo", FILES)
    marker = repo / "ran.txt"
    ctx = ToolContext.create(repo, settings, approver=DenyAllApprover(), trusted=False)
    result = build_tools(ctx)["evaluate"](code=f"open({str(marker)!r}, 'w').write('x')")
    assert result["error"] == "UNTRUSTED_WORKSPACE"
    assert not marker.exists()


# --- in a session: what a question's calls give, and names that do not exist ---------------

FAILING_TEST = (
    "from calc.ops import add, average\n\n\n"
    "def test_add():\n    assert add(2, 3) == 5\n\n\n"
    "def test_average():\n    assert average([2, 4]) == 3\n\n\n"
    "def test_type():\n    assert isinstance(add(1, 1), int)\n"
)


def session_repo(tmp_path: Path) -> Path:
    files = dict(FILES)
    files["tests/test_ops.py"] = FAILING_TEST
    files["pytest.ini"] = "[pytest]\n"
    return make_repo(tmp_path / "repo", files)


def test_a_call_in_a_question_is_computed_before_the_first_step(
    tmp_path: Path, settings: Settings, python_on_path: None
) -> None:
    from tests.test_agent import run

    repo = session_repo(tmp_path)
    task = "What does average([2, 4]) return with the code as it is now? And frobnicate_all?"
    outcome, requests = run(repo, settings, ["It returns -3.0."], task)
    assert outcome.status == "completed"
    prompt = requests[0].last_user_text()
    assert "average([2, 4]) returns -3.0" in prompt  # run, not imagined
    assert "`frobnicate_all` occurs nowhere in this repository" in prompt
    # and how it came, as it ran: where a value comes from answers "why" and "where from"
    # (jp-find-escape-bug, dev: the answer named the caller; the callee that made it was unseen)
    ran = prompt.split("average([2, 4]) returns -3.0", 1)[1]
    assert "what ran, statement by statement" in ran
    assert "(add) return a - b" in ran and "add returned -6" in ran


def test_a_method_named_as_a_function_runs_on_an_instance_of_its_class(
    tmp_path: Path, settings: Settings, python_on_path: None
) -> None:
    """Seen on the 1.5B model (jp-explain-walk, dev): `walk('-')` (a method) ran as a function,
    and the answer ended "run with the repository's code, walk('-') = NameError". A method of
    one class made with no arguments is run on `Class()`: the question is answered by a run."""
    from tests.test_agent import run

    cart = "class Cart:\n    def total(self, n):\n        return n * 2\n"
    files = {**FILES, "calc/cart.py": cart, "tests/test_ops.py": FAILING_TEST}
    repo = make_repo(tmp_path / "repo", files)
    outcome, requests = run(repo, settings, ["It gives 6."], "what does total(3) give?")
    prompt = requests[0].last_user_text()
    assert "Cart().total(3) returns 6" in prompt, prompt
    assert "NameError" not in prompt
    assert outcome.answer == "It gives 6." and outcome.status == "completed"


def test_of_a_name_defined_twice_the_code_shown_is_the_one_the_tasks_call_ran(
    tmp_path: Path, settings: Settings, python_on_path: None
) -> None:
    """Dev sv-fix-bump-minor: "Version.parse('1.2.3').bump_minor() gives 1.3.3" was shown the
    deprecated module-level bump_minor (the first file defining the name), not the method the
    call ran; the model rewrote the whole class. The definition shown is the one that ran."""
    from tests.test_agent import run

    old = "from calc.version import Version\n\n\ndef bump(text):\n    return Version(text).bump()\n"
    version = (
        "class Version:\n    def __init__(self, n):\n        self.n = int(n)\n\n"
        "    def bump(self):\n        return self.n + 2\n"
    )
    files = {**FILES, "calc/_old.py": old, "calc/version.py": version}
    repo = make_repo(tmp_path / "repo", files)
    task = "Version('1').bump() gives 3, it should be 2"
    fix = "```python\n# file: calc/version.py\ndef bump(self):\n    return self.n + 1\n```"
    outcome, requests = run(repo, settings, [fix, "bump adds one."], task)
    prompt = requests[0].last_user_text()
    assert "calc/version.py, lines 5-6: `bump`" in prompt, prompt
    assert "calc/_old.py" not in prompt.split("The task:")[0].split("what ran")[0]
    assert outcome.status == "completed" and "replaced Version.bump" in requests[1].last_user_text()


def test_a_chained_call_traces_its_last_call_and_shows_its_code_first(
    tmp_path: Path, settings: Settings, python_on_path: None
) -> None:
    """Dev sv-fix-bump-minor: "Version.parse('1.2.3').bump_minor() gives 1.3.3" traced parse
    first and showed parse's code, which filled the room; bump_minor's code went unshown and
    the model rewrote parse. The receiver is worked out untraced and said with its value; the
    trace is bump_minor's, and the code it ran comes before the code the task only names."""
    from tests.test_agent import run

    version = (
        "class Version:\n    def __init__(self, n):\n        self.n = n\n\n"
        "    @classmethod\n    def parse(cls, text):\n        number = int(text)\n"
        "        return cls(number)\n\n    def bump(self):\n        return self.n + 2\n"
    )
    repo = make_repo(tmp_path / "repo", {**FILES, "calc/version.py": version})
    task = "Version.parse('1').bump() gives 3, it should be 2"
    fix = "```python\n# file: calc/version.py\ndef bump(self):\n    return self.n + 1\n```"
    outcome, requests = run(repo, settings, [fix, "bump adds one."], task)
    prompt = requests[0].last_user_text()
    assert "  where Version.parse('1') = <calc.version.Version object" in prompt, prompt
    assert "calc/version.py:11 (bump) return self.n + 2" in prompt
    assert "(parse)" not in prompt  # not traced
    assert prompt.index("`bump`") < prompt.index("`parse`")
    assert ": `Version`" not in prompt  # a class around methods shown: not for a change
    assert outcome.status == "completed"


def test_a_method_whose_class_needs_arguments_is_said_with_how_to_run_it(
    tmp_path: Path, settings: Settings, python_on_path: None
) -> None:
    """Its class cannot be made with no arguments: the call could not run (never told as what
    the code gives), and the model is told how to run it; its code, shown, answers it."""
    from tests.test_agent import run

    cart = "class Cart:\n    def __init__(self, items):\n        self.items = items\n\n"
    cart += "    def total(self, n):\n        return n * 2\n"
    files = {**FILES, "calc/cart.py": cart, "tests/test_ops.py": FAILING_TEST}
    repo = make_repo(tmp_path / "repo", files)
    outcome, requests = run(repo, settings, ["It gives 6."], "what does total(3) give?")
    prompt = requests[0].last_user_text()
    assert (
        "total(3) could not be run: total is a method of `Cart` (calc.cart): run it on an "
        'instance, evaluate(code="Cart(...).total(...)")' in prompt
    ), prompt
    assert "def total(self, n)" in prompt
    assert "NameError" not in outcome.answer and outcome.status == "completed"


@pytest.mark.parametrize(
    "task", ["how does average([2, 4]) work?", "why is average([2, 4]) wrong?"]
)
def test_a_question_how_or_why_a_call_gives_its_value_gets_its_trace(
    tmp_path: Path, settings: Settings, python_on_path: None, task: str
) -> None:
    from tests.test_agent import run

    repo = session_repo(tmp_path)
    # (asked why, an answer citing nothing of what ran is sent back once: the second cites it)
    said = ["add subtracts, so average gives -3.0.", "add gives a - b = -6, so it gives -3.0."]
    _, requests = run(repo, settings, said, task)
    prompt = requests[0].last_user_text()
    assert "average([2, 4]) returns -3.0" in prompt
    assert "calc/ops.py:6 (add) return a - b  # a - b = -6" in prompt, prompt


def test_which_tests_fail_is_answered_from_the_runner_report(
    tmp_path: Path, settings: Settings, python_on_path: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.test_agent import run

    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    repo = session_repo(tmp_path)
    turns = [
        "```python\nprint(run_tests())\n```",
        "Two tests fail: the add one.",  # names one of the two: sent back once
        "Two tests fail: test_add.",  # the same omission: let through with pytest's list
    ]
    outcome, requests = run(repo, settings, turns, "Run the tests and tell me which ones fail")
    assert "the test runner reported these tests failing" in requests[2].last_user_text()
    # still missing one after being told: not `completed`, the runner's list below it
    assert outcome.status == "incomplete"
    assert outcome.answer.startswith("Two tests fail: test_add.")
    assert "tests/test_ops.py::test_average" in outcome.answer


def test_failures_of_a_run_before_the_first_step_must_be_named_too(
    tmp_path: Path, settings: Settings, python_on_path: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Dev sv-run-tests: "anything red in the test suite right now?" had its tests run before
    the first step, and the answer named two of four failing tests unchecked."""
    from tests.test_agent import run

    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    repo = session_repo(tmp_path)
    turns = ["Yes: test_add fails.", "Yes: test_add and test_average fail."]
    outcome, requests = run(repo, settings, turns, "anything red in the test suite right now?")
    assert "FAILED" in requests[0].last_user_text()  # run before the first step
    assert "the test runner reported these tests failing" in requests[1].last_user_text()
    assert outcome.answer == "Yes: test_add and test_average fail."


@pytest.mark.parametrize(
    ("task", "computed", "reply"),
    [
        # the one value a question names is passed to the one function it is about
        (
            "what happens if i pass 'ten' to parse",
            "parse('ten') raises ValueError: invalid literal",
            "It raises ValueError.",
        ),
        # a chain's value is the one asked about, not its first call's
        ("parse('7').bit_length() returns what?", "parse('7').bit_length() returns 3", "3."),
    ],
    ids=["one-value", "chained-call"],
)
def test_what_a_question_asks_code_to_give_is_computed_before_the_first_step(
    tmp_path: Path, settings: Settings, python_on_path: None, task: str, computed: str, reply: str
) -> None:
    from tests.test_agent import run

    repo = session_repo(tmp_path)
    outcome, requests = run(repo, settings, [reply], task)
    assert outcome.status == "completed"
    assert computed in requests[0].last_user_text()


# --- every ending is grounded in what ran -----------------------------------------------------

VALUE_QUESTION = "what does the parser give for 'ten'?"  # names no function: nothing computed


@pytest.mark.parametrize(
    ("guess", "question", "hint"),
    [
        ("It gives 10.", VALUE_QUESTION, "<function>('ten')"),
        ("```python\nfinal_answer('It gives 10.')\n```", VALUE_QUESTION, "<function>('ten')"),
        # a value written bare, in no call (fresh dev pa-case: answered from the code read)
        ("It gives 10.", "what does the parser make of a ~10 in there", "<function>('~10')"),
        # ... where the code its words found is shown, that code, not a placeholder the 1.5B
        # model ran as written (dev jp-no-slash)
        ("It gives 10.", "what would the average be with a ~10 in there", "average('~10')"),
    ],
    ids=["prose", "final_answer", "bare", "bare-shown"],
)
def test_a_value_answered_without_running_anything_is_sent_back_to_run_it(
    tmp_path: Path, settings: Settings, python_on_path: None, guess: str, question: str, hint: str
) -> None:
    """Prose or a final_answer block: the same check sends the guess back once, and the call
    it suggests is the one that runs the code."""
    from tests.test_agent import run

    repo = session_repo(tmp_path)
    turns = [
        guess,
        "```python\nprint(evaluate(code=\"parse('ten')\"))\n```",
        "It raises ValueError: invalid literal for int().",
    ]
    outcome, requests = run(repo, settings, turns, question)
    sent_back = requests[1].prompt_text()
    assert "this asks about what the code gives, and nothing has been run" in sent_back
    assert f'print(evaluate(code="{hint}"))' in sent_back  # the tool that runs it
    assert "ValueError" in requests[2].prompt_text()  # it ran: its result was shown
    assert outcome.status == "completed"
    assert outcome.answer == "It raises ValueError: invalid literal for int()."


MATCHER = '''"""Match text against a pattern."""

__all__ = ["match"]


class Match:
    """What a match holds."""

    def __init__(self, pattern, text):
        self.pattern = pattern
        self.text = text


def _fold(a, b):
    return a.lower(), b.lower()


def match(pattern, text, case_sensitive=False):
    """Match `text` against `pattern`."""
    if not case_sensitive:
        pattern, text = _fold(pattern, text)
    return text.startswith(pattern.split("{")[0])
'''


def test_a_value_question_naming_no_function_is_sent_to_run_a_function_its_values_fit(
    tmp_path: Path, settings: Settings, python_on_path: None
) -> None:
    """Its words found a class (fresh dev pa-case: `Match` for "matching"); what it may run is
    the function the module exports that takes its two values, not the class, whose instance
    says nothing of the question, nor a private helper that also takes two."""
    from tests.test_agent import run

    repo = make_repo(tmp_path / "repo", {"matcher/__init__.py": MATCHER, "pytest.ini": ""})
    turns = ["No, it is case sensitive.", "No.", "No."]
    question = "is matching case sensitive? e.g. 'Hello {}' against 'hello World'"
    _, requests = run(repo, settings, turns, question)
    sent_back = requests[1].prompt_text()
    assert "nothing has been run" in sent_back
    assert "print(evaluate(code=\"match('Hello {}', 'hello World')\"))" in sent_back


def test_what_a_value_question_may_run_is_ranked_by_what_its_module_exports_and_shows(
    tmp_path: Path, settings: Settings
) -> None:
    from smol_instruments.tools.imports import fitting_callables

    pointer = (
        "class Pointer:\n    def __init__(self, text, strict=True):\n        self.text = text\n\n\n"
        "class Other:\n    def __init__(self, a):\n        self.a = a\n\n\n"
        "def pairwise(items):\n    return zip(items, items[1:])\n\n\n"
        "def _private(a):\n    return a\n\n\n"
        "def two(a, b):\n    return a\n"
    )
    repo = make_repo(tmp_path / "repo", {"matcher/__init__.py": MATCHER, "pointer.py": pointer})
    ctx, _ = make_tools(repo, settings)
    # a module with no __all__: the class the question's words found first, then public
    # functions its one value fits; a class no one showed, a private one, `two` left out
    assert fitting_callables(ctx, ["pointer.py"], 1, ["Pointer"]) == ["Pointer", "pairwise"]
    assert fitting_callables(ctx, ["pointer.py"], 1) == ["pairwise"]
    # with __all__: what it exports before the class shown; a helper never
    assert fitting_callables(ctx, ["matcher/__init__.py"], 2, ["Match"]) == ["match", "Match"]
    assert fitting_callables(ctx, ["matcher/__init__.py"], 3) == ["match"]
    assert fitting_callables(ctx, ["matcher/__init__.py"], 4) == []
    # an __all__ that is no literal list is no list of exports: every public name counts
    (repo / "odd.py").write_text("__all__ = 3\n\n\ndef one(a):\n    return a\n")
    (repo / "mixed.py").write_text("__all__ = ['one'] + []\n\n\ndef one(a):\n    return a\n")
    assert fitting_callables(ctx, ["odd.py", "mixed.py"], 1) == ["one"]


def test_an_object_whose_text_says_nothing_is_told_by_its_attributes(
    tmp_path: Path, settings: Settings, python_on_path: None
) -> None:
    repo = make_repo(tmp_path / "repo", {"matcher/__init__.py": MATCHER})
    _, tools = make_tools(repo, settings)
    result = dict(tools["evaluate"](code="Match('Hello {}', 'hello World')"))
    assert result["value"].startswith("<matcher.Match object at 0x")
    assert result["attributes"] == {"pattern": "'Hello {}'", "text": "'hello World'"}
    told = dict(tools["evaluate"](code="match('Hello {}', 'hello World')"))  # control
    assert told["value"] == "True" and "attributes" not in told


def test_a_value_guessed_twice_is_not_an_outcome(
    tmp_path: Path, settings: Settings, python_on_path: None
) -> None:
    from tests.test_agent import run

    repo = session_repo(tmp_path)
    outcome, requests = run(repo, settings, ["It gives 10.", "It gives 10."], VALUE_QUESTION)
    assert len(requests) == 2
    assert outcome.status == "incomplete"
    assert outcome.answer.startswith("It gives 10.")
    assert "nothing was read or run to check this answer" in outcome.answer


def test_reading_the_code_does_not_answer_what_it_gives(
    tmp_path: Path, settings: Settings, python_on_path: None
) -> None:
    """A read is not a run: after reading, a guessed value is still sent back once."""
    from tests.test_agent import run

    repo = session_repo(tmp_path)
    turns = [
        '```python\nprint(read_file(path="calc/ops.py"))\n```',
        "It gives 10.",
        "It gives 10.",
    ]
    outcome, requests = run(repo, settings, turns, VALUE_QUESTION)
    assert "nothing has been run" in requests[2].prompt_text()
    assert outcome.status == "incomplete"


LISTED = '```python\nprint(list_files(pattern="*.py"))\n```'


@pytest.mark.parametrize(
    ("task", "turns", "status"),
    [
        (
            "sorted() puts 10 before 9 now. whats going on",
            [LISTED, "The files list holds the names.", "The files list holds the names."],
            "incomplete",
        ),
        (
            "which python files are there?",
            [LISTED, "calc/ops.py and tests/test_ops.py."],
            "completed",
        ),
    ],
    ids=["about-the-code", "control-about-the-files"],
)
def test_listing_the_files_answers_only_a_question_about_the_files(
    tmp_path: Path,
    settings: Settings,
    python_on_path: None,
    task: str,
    turns: list[str],
    status: str,
) -> None:
    """Dev sv-why-release-first: after list_files, the 1.5B model explained its result's fields
    as why versions sort wrong, and the run said `completed`. A list of names shows no code."""
    from tests.test_agent import run

    repo = session_repo(tmp_path)
    outcome, requests = run(repo, settings, turns, task)
    assert "calc/ops.py" in requests[1].prompt_text()  # the listing ran in both
    assert outcome.status == status
    assert len(requests) == len(turns)
    if status == "incomplete":
        assert "nothing has been read" in requests[2].prompt_text()
        assert "nothing was read or run to check this answer" in outcome.answer


OWN_CODE = '```python\nprint(evaluate(code="sorted(versions, key=float)"))\n```'
REPO_CODE = '```python\nprint(evaluate(code="average([2, 4])"))\n```'


@pytest.mark.parametrize(
    ("turns", "status"),
    [
        ([OWN_CODE, "versions is not defined.", "versions is not defined."], "incomplete"),
        ([REPO_CODE, "average([2, 4]) gives -3.0: add subtracts."], "completed"),
    ],
    ids=["ran-none-of-the-repository", "control-ran-its-code"],
)
def test_code_that_ran_none_of_the_repository_grounds_no_answer(
    tmp_path: Path, settings: Settings, python_on_path: None, turns: list[str], status: str
) -> None:
    """Dev sv-why-release-first: the model's own `sorted(versions, key=float)` raised
    NameError, it answered from that, and the run said `completed`."""
    from tests.test_agent import run

    repo = session_repo(tmp_path)
    outcome, requests = run(repo, settings, turns, "sorted() puts 10 before 9 now. whats going on")
    assert outcome.status == status
    assert len(requests) == len(turns)
    if status == "incomplete":
        assert "`versions` is not defined in this code" in requests[1].prompt_text()
        assert "nothing was read or run to check this answer" in outcome.answer


def test_an_answer_that_leaves_out_the_computed_value_is_sent_back_once(
    tmp_path: Path, settings: Settings, python_on_path: None
) -> None:
    from tests.test_agent import run

    repo = session_repo(tmp_path)
    turns = ["average adds the values and divides by their count.", "It returns -3.0."]
    outcome, requests = run(repo, settings, turns, "average([2, 4]) -> what do i get")
    assert "it was run: average([2, 4]) = -3.0" in requests[1].prompt_text()
    assert outcome.status == "completed"
    assert outcome.answer == "It returns -3.0."


def test_the_computed_value_left_out_twice_is_shown_below_the_answer(
    tmp_path: Path, settings: Settings, python_on_path: None
) -> None:
    from tests.test_agent import run

    repo = session_repo(tmp_path)
    said = "average adds the values and divides by their count."
    outcome, _ = run(repo, settings, [said, said], "average([2, 4]) -> what do i get")
    assert outcome.answer.startswith(said)
    assert outcome.answer.endswith("Note: run with the repository's code, average([2, 4]) = -3.0.")
    # an answer that does not give what ran is not `completed`: the user is told it is not
    # settled (dev sv-build-equal said False twice, its comparison giving True)
    assert outcome.status == "incomplete"


def test_an_answer_about_what_uses_a_name_names_what_the_code_shows(
    tmp_path: Path, settings: Settings, python_on_path: None
) -> None:
    """Dev jp-walk-callers answered "what calls walk?" with line numbers, tc-colour-impact
    missed cprint (it reaches _can_do_colour through colored): what uses a name is read from
    the code's syntax trees (a test, or a docstring naming it, is no use), and an answer that
    leaves one out is sent back once with them; left out again, they go below it and the run
    is not `completed`."""
    from tests.test_agent import run

    repo = session_repo(tmp_path)
    (repo / "calc" / "stats.py").write_text(
        "from calc.ops import average\n\n\ndef report(values):\n    return average(values)\n\n\n"
        'def summary(values):\n    """Says the average; it does not call it."""\n'
        "    return f'mean {report(values)}'\n"
    )
    said = "average is used in calc/stats.py line 5."
    outcome, requests = run(repo, settings, [said, "report calls it."], "what calls average?")
    assert "the code shows `average` used by report; this answer does not name report" in (
        requests[1].prompt_text()
    )
    # sent back, its next reply is sampled hotter: at its own temperature the model said the
    # same again (dev jp-walk-callers)
    from smol_instruments.agent.model import SHAKEN_TEMPERATURE

    assert requests[0].body["temperature"] < SHAKEN_TEMPERATURE == requests[1].body["temperature"]
    assert outcome.status == "completed"
    # what changing it affects reaches one hop further: summary, through report
    outcome, requests = run(repo, settings, [said, said], "if I change average, what breaks?")
    assert "`average` used by report, summary" in requests[1].prompt_text()
    assert outcome.status == "incomplete"
    assert outcome.answer.endswith("Note: from the code, `average` used by report, summary.")
    # naming them, it is answered: "if I change" supposes the change, it asks for none (an
    # impact question ended `incomplete`, told to ask for the change it meant: dev)
    right = "Changing average affects report, and summary through report."
    outcome, _ = run(repo, settings, [right], "if I change average, what breaks?")
    assert outcome.status == "completed" and outcome.answer == right


def test_what_a_change_affects_is_followed_hop_by_hop_and_asked_in_other_words(
    tmp_path: Path, settings: Settings, python_on_path: None
) -> None:
    """Dev jp-escape-impact: "planning to change how escape handles ~ . what else does that
    hit?" was no impact question to the rules, and what reaches escape three calls away
    (from_parts, join, __truediv__) was never shown; sv-to-dict-impact ("what would go
    wrong?") was answered `completed` leaving out next_version, two calls away. What a change
    affects is followed until no new function reaches it; the model's made-up call
    (escape('~', '.'), which does not fit escape) is not run as the question's."""
    from tests.test_agent import run

    repo = session_repo(tmp_path)
    (repo / "calc" / "stats.py").write_text(
        "from calc.ops import average\n\n\ndef report(values):\n    return average(values)\n\n\n"
        "def summary(values):\n    return f'mean {report(values)}'\n\n\n"
        "def headline(values):\n    return summary(values).upper()\n"
    )
    said = "average is used by report."
    task = "planning to change how average rounds . what else does that hit?"
    outcome, requests = run(repo, settings, [said, said], task)
    assert "`average` used by report, summary, headline" in requests[1].prompt_text()
    assert outcome.status == "incomplete"
    right = "report calls average, summary calls report and headline calls summary."
    outcome, _ = run(repo, settings, [right], "if average rounded, what would go wrong?")
    assert outcome.status == "completed" and outcome.answer == right


def test_which_code_turns_one_value_into_another_is_found_by_running_the_code(
    tmp_path: Path, settings: Settings, python_on_path: None
) -> None:
    """Fresh dev infl-chat-singular: "which function turns people into person?" found no code
    by its words (the irregular pairs are a table outside the function), and the model
    answered `inflection.inflect`, which does not exist. Each top-level function of the
    repository's code is run on the first value; those giving the second are said, with their
    code shown; a function that raises, or gives something else, is not."""
    from tests.test_agent import run

    repo = session_repo(tmp_path)
    (repo / "calc" / "words.py").write_text(
        "IRREGULAR = {'people': 'person'}\n\n\ndef singular(word):\n"
        "    return IRREGULAR.get(word, word.rstrip('s'))\n\n\n"
        "def plural(word):\n    return word + 's'\n\n\ndef shout(word):\n    raise OSError(word)\n"
    )
    turns = ["plural does.", "singular does."]
    outcome, requests = run(repo, settings, turns, "which function turns people into person?")
    prompt = requests[0].last_user_text()
    assert "singular('people') = 'person'" in prompt, prompt
    assert "plural(" not in prompt.split("The task:")[0] and "shout(" not in prompt
    assert "calc/words.py, lines 4-5: `singular`" in prompt
    # an answer naming another is sent back with what ran (the 1.5B model, shown the run,
    # said `humanize`: fresh dev)
    assert "giving 'person' for 'people' = singular" in requests[1].prompt_text()
    assert outcome.status == "completed" and outcome.answer == "singular does."
    look = '```python\n# Look.\nprint(rg_search(pattern="cats"))\n```'
    outcome, requests = run(
        repo, settings, [look, "None does."], "which function turns people into cats?"
    )
    assert "= 'cats'" not in requests[0].last_user_text()


def test_a_call_the_model_makes_up_that_does_not_fit_its_function_is_not_run_as_asked(
    tmp_path: Path, settings: Settings
) -> None:
    """The intent's model wrote escape('~', '.') for "how escape handles ~ ." (dev
    jp-escape-impact): its TypeError was shown as what the code gives, and the answer held to
    telling it. A call that does not fit its own function is the question's only when the
    question writes it."""
    from smol_instruments.agent.evidence import computed_calls
    from smol_instruments.agent.intent import from_rules

    repo = session_repo(tmp_path)
    ctx, _ = make_tools(repo, settings)
    asked = "planning to change how average rounds . what else does that hit?"
    intent = replace(from_rules(asked), calls=("average([2, 4], '.')", "add(1, 2)"))
    found = computed_calls(ctx, intent)
    assert found is not None and found.names == ["add(1, 2) = -1"]
    assert "TypeError" not in found.body
    written = "what does average([2, 4], '.') do?"
    intent = replace(from_rules(written), calls=("average([2, 4], '.')",))
    found = computed_calls(ctx, intent)
    assert found is not None and found.names == ["average([2, 4], '.') = TypeError"]


def test_an_explanation_tells_each_step_of_the_function_it_explains(
    tmp_path: Path, settings: Settings, python_on_path: None
) -> None:
    """Dev tc-explain-colour said `_can_do_colour` returns True, never naming `os.isatty`;
    explain-slugify left out the lower-casing, and sent its answer back with it, wrote the
    same answer again. The steps an explanation leaves out (a default, a call, a way it ends
    and its condition) are asked about one at a time, with the function's code, and the
    sentences that tell them follow the answer; those still untold, it is sent back once with
    them; left out again, they go below it and the run is not `completed`."""
    from tests.test_agent import run

    repo = session_repo(tmp_path)
    (repo / "calc" / "words.py").write_text(
        "import re\n\n\nclass Slugs:\n    def slug(self, text, limit=5):\n"
        "        words = re.findall('[a-z]+', text.lower())\n"
        "        if not words:\n            raise ValueError('nothing to slug')\n"
        "        return '-'.join(words[:limit])\n"
    )
    vague = "It makes a slug out of a title."
    sentences = [
        "The limit parameter defaults to 5 words.",
        "```python\nwords = ...\n```\nIt lower-cases the text and finds its words. Then more.",
        "It raises ValueError when there are no words.",
        "It joins the first words with a dash.",
    ]
    outcome, requests = run(repo, settings, [vague, *sentences], "explain slug to me")
    asked = requests[1].prompt_text()
    assert (
        "def slug(self, text, limit=5):\n    words = re.findall(" in asked
    )  # the method, dedented
    assert "In `slug` above, what does this step do: `limit` defaults to 5" in asked
    assert "`words = re.findall('[a-z]+', text.lower())`" in requests[2].prompt_text()
    assert "if not words: `raises ValueError('nothing to slug')`" in requests[3].prompt_text()
    assert len(requests) == 5 and outcome.status == "completed"
    told = " ".join(sentences).replace("```python\nwords = ...\n```\n", "")
    assert outcome.answer == f"{vague} {told.replace(' Then more.', '')}"
    # asked, a sentence that tells nothing of its step is not kept; the answer is sent back
    # with the steps still untold, and a second answer that tells them is the answer
    whole = (
        "It lower-cases the text and finds its words; with none it raises ValueError; "
        "otherwise it joins the first 5 with '-'."
    )
    nothing = "It does what the code says."
    turns = [vague, sentences[0], nothing, nothing, nothing, whole]
    outcome, requests = run(repo, settings, turns, "explain slug to me")
    sent = requests[5].prompt_text()
    assert "this answer leaves out these steps of `slug`: `words = re.findall(" in sent
    assert "`limit` defaults to 5; `words" not in sent  # told by its sentence
    assert outcome.status == "completed"
    assert outcome.answer == f"{whole} {sentences[0]}"
    # the same steps left out again: they go below it, and it is not settled
    outcome, _ = run(repo, settings, [vague, *[nothing] * 4, vague], "explain slug to me")
    assert outcome.status == "incomplete"
    assert outcome.answer.startswith(vague)
    assert "Note: from the code, the steps of `slug`: `limit` defaults to 5; " in outcome.answer
    # the control: a question that is no request to explain is not held to the steps
    outcome, requests = run(repo, settings, [vague], "which file defines slug?")
    assert len(requests) == 1 and outcome.answer == vague


def test_a_step_is_told_by_the_words_that_tell_it_apart(tmp_path: Path, settings: Settings) -> None:
    """Dev tc-explain-colour: "it checks sys.stdout.fileno ... otherwise it returns True" told
    the `hasattr(sys.stdout, 'fileno')` check and, by the same words, the
    `return os.isatty(sys.stdout.fileno())` it got wrong. A step is named by the words no other
    step has, else by those beyond a step whose words it holds all of."""
    from smol_instruments.agent.evidence import function_steps
    from smol_instruments.agent.intent import from_rules

    repo = session_repo(tmp_path)
    (repo / "calc" / "tty.py").write_text(
        "import os\nimport sys\n\n\ndef can_colour(force=False):\n"
        "    if force:\n        return True\n"
        "    if not hasattr(sys.stdout, 'fileno'):\n        return False\n"
        "    return os.isatty(sys.stdout.fileno())\n"
    )
    ctx, _ = make_tools(repo, settings)
    found = function_steps(ctx, from_rules("explain can_colour"), [("calc/tty.py", "can_colour")])
    assert found is not None and found.name == "can_colour"
    words = {step.said: set(step.words) for step in found.steps}
    assert words == {
        "`force` defaults to False": {"False"},  # `force` is the next step's too
        "if force: `returns True`": {"force"},
        "if not hasattr(sys.stdout, 'fileno'): `returns False`": {"fileno", "stdout"},
        "`returns os.isatty(sys.stdout.fileno())`": {"isatty"},
    }


def test_an_answer_to_why_cites_what_ran(
    tmp_path: Path, settings: Settings, python_on_path: None
) -> None:
    """Dev infl-why-ordinal was shown `number % 10 = 9` in the trace of the call it asked
    about and answered that ordinal "checks if the number is divisible by 100": an answer to
    why that cites nothing the run's expressions gave is sent back once with them; citing
    none again, they go below it and the run is not `completed`."""
    from tests.test_agent import run

    repo = session_repo(tmp_path)
    # the value the question says itself (-3.0) need not be said again: asked why, not what
    guessed = "Because average divides the sum of the values by their count."
    cited = "add(0, 6) computes a - b, which is -6, and -6 / 2 is -3.0."
    question = "why does average([2, 4]) give -3.0?"
    outcome, requests = run(repo, settings, [guessed, cited], question)
    sent = requests[1].prompt_text()
    # what the expressions gave, told with the function they ran in
    assert "as it ran, in `add`: " in sent and "a - b = -6" in sent
    assert outcome.status == "completed" and outcome.answer == cited
    outcome, _ = run(repo, settings, [guessed, guessed], question)
    assert outcome.status == "incomplete"
    assert outcome.answer.startswith(guessed) and "Note: as it ran, " in outcome.answer
    # the control: the same call asked for its value is held to the value, not to the trace
    outcome, requests = run(repo, settings, ["It gives -3.0."], "what does average([2, 4]) give?")
    assert len(requests) == 1 and outcome.status == "completed"


def test_what_uses_a_name_is_searched_once_for_callers_and_never_fails_a_run(
    tmp_path: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    from smol_instruments.agent import evidence
    from smol_instruments.tools.repo import list_repo_files

    repo = session_repo(tmp_path)
    ctx, _ = make_tools(repo, settings)
    files = list_repo_files(ctx)
    searched: list[str] = []
    forward = evidence.RgSearchTool.forward

    def counted(self: Any, pattern: str, glob: Any = None, max_results: Any = None) -> Any:
        searched.append(pattern)
        return forward(self, pattern=pattern, glob=glob, max_results=max_results)

    monkeypatch.setattr(evidence.RgSearchTool, "forward", counted)
    assert evidence.reach(ctx, "add", files, further=False) == ["average"]
    assert len(searched) == 1  # callers: no second hop
    assert evidence.reach(ctx, "add", files, further=True) == ["average"]
    assert len(searched) == 3  # impact: what uses average too (nothing here)

    def broken(self: Any, pattern: str, glob: Any = None, max_results: Any = None) -> Any:
        raise RuntimeError("ripgrep vanished")

    monkeypatch.setattr(evidence.RgSearchTool, "forward", broken)
    assert evidence.reach(ctx, "add", files, further=True) == []


def test_a_use_too_wide_by_name_is_narrowed_to_what_rope_is_sure_of(
    tmp_path: Path, settings: Settings
) -> None:
    """Fresh dev sv-to-dict-impact: what reaches `to_dict` goes through `Version.replace`, and
    by name `replace` is every `str.replace`: the hop holding next_version was too wide and
    was dropped, and an answer leaving next_version out was `completed`. A function too wide
    by name is narrowed to rope's sure uses; one still too wide is not followed, the others
    are."""
    from smol_instruments.tools.reach import reach_hops
    from smol_instruments.tools.repo import list_repo_files

    cleaners = "".join(
        f"def clean{i}(text):\n    return text.replace('-', '_')\n\n\n" for i in range(9)
    )
    callers = "".join(f"def use{i}():\n    return old_parse('1')\n\n\n" for i in range(9))
    version = (
        "class Version:\n    def to_dict(self):\n        return {'major': 1}\n\n"
        "    def replace(self, **parts):\n        return {**self.to_dict(), **parts}\n\n"
        "    def next_version(self):\n        return self.replace(major=2)\n\n\n"
        "def old_parse(text):\n    return Version().to_dict()\n\n\n"
    )
    repo = make_repo(tmp_path / "repo", {**FILES, "calc/version.py": version + cleaners + callers})
    ctx, _ = make_tools(repo, settings)
    direct, further = reach_hops(ctx, "to_dict", list_repo_files(ctx), further=True)
    assert sorted(direct) == ["old_parse", "replace"] and further == ["next_version"]


def test_an_object_that_prints_otherwise_is_told_as_it_prints(
    tmp_path: Path, settings: Settings, python_on_path: None
) -> None:
    """Dev sv-prerelease-bump: shown `Version(major=1, ..., prerelease='rc.2', build=None)`
    alone, the 1.5B model never said the version; how it prints (1.2.3-rc.2) is what is
    asked, and what the answer is held to."""
    from tests.test_agent import run

    repo = session_repo(tmp_path)
    (repo / "calc" / "ver.py").write_text(
        "class Ver:\n    def __init__(self, *parts):\n        self.parts = parts\n\n"
        "    def __repr__(self):\n        return f'Ver(parts={self.parts!r})'\n\n"
        "    def __str__(self):\n        return '.'.join(map(str, self.parts)) + '-rc.2'\n\n\n"
        "def bumped(text):\n    return Ver(*map(int, text.split('.')))\n"
    )
    turns = ["It gives a Ver object.", "It gives 1.2.3-rc.2."]
    outcome, requests = run(repo, settings, turns, "what does bumped('1.2.3') give?")
    assert "(str() of it, as print shows it: 1.2.3-rc.2)" in requests[0].last_user_text()
    assert "it was run: bumped('1.2.3') = 1.2.3-rc.2" in requests[1].prompt_text()
    assert outcome.status == "completed"


@pytest.mark.parametrize(
    ("value", "answer", "told"),
    [
        ("-3.0", "It returns -3.0.", True),
        ("True", "compare gives **True** here", True),
        ("[1, 'a']", 'it gives `[1,"a"]`', True),
        ("ValueError", "it raises ValueError: bad input", True),
        ("True", "optional_minor_and_patch=True", False),  # an argument made up, no value told
        ("20", "it gives 200", False),
        ("1.3", "it gives 1.3.0", False),
        ("2.0.0", "what does it give for 2.0.0-rc.1+build.3", False),  # a longer literal's head
        ("2.0.0", "it gives 2.0.0-rc.1", False),
        ("2.0.0", "it gives 2.0.0.", True),
        ("3.0", "it gives -3.0", False),
        ("-3.0", "x=-3.0", False),
        ("True", "it returns True if they are equal, and False otherwise", False),
        ("False", "it gives False", True),
    ],
)
def test_a_computed_value_is_told_as_a_value_of_its_own(
    value: str, answer: str, told: bool
) -> None:
    from smol_instruments.agent.answers import _bare, value_told

    assert value_told(_bare(value), answer) is told


def traced_runner(tmp_path: Path, settings: Settings, files: dict[str, str]) -> Any:
    """`evaluate_code` on a repository of `files`, traced: call(code) -> its result."""
    from smol_instruments.tools.evaluate import evaluate_code

    repo = tmp_path / "repo"
    make_repo(repo, files)
    ctx, _ = make_tools(repo, settings)
    return lambda code, trace=20: evaluate_code(ctx, code, trace=trace)


def test_a_call_through_the_repositorys_own_package_name_runs(
    tmp_path: Path, settings: Settings, python_on_path: None
) -> None:
    """Dev infl-chat-tableize: `inflection.tableize('egg_and_ham')`, as a user writes it, was
    told NameError: name 'inflection' is not defined."""
    files = {"shapes/__init__.py": "def area(w, h):\n    return w * h\n", "box.py": "SIDE = 4\n"}
    evaluate = traced_runner(tmp_path, settings, files)
    assert evaluate("shapes.area(2, 3)")["value"] == "6"
    assert evaluate("box.SIDE * 2")["value"] == "8"
    assert "NameError" in evaluate("nowhere.area(2, 3)")["exception"]  # not the repository's


def test_a_module_that_fails_to_import_is_said_as_its_import(
    tmp_path: Path, settings: Settings, python_on_path: None
) -> None:
    evaluate = traced_runner(tmp_path, settings, {"broken.py": "raise ImportError('no c part')\n"})
    result = evaluate("broken.f()")
    assert result["import_errors"] == ["import broken: ImportError: no c part"]


ORDINAL = """def ordinal(number):
    if number % 100 in (11, 12, 13):
        return "th"
    return {
        1: "st", 2: "nd", 3: "rd",
    }.get(number % 10, "th")


def ordinalize(number):
    return f"{number}{ordinal(number)}"
"""


def test_a_trace_shows_each_line_that_ran_with_the_values_of_its_expressions(
    tmp_path: Path, settings: Settings, python_on_path: None
) -> None:
    """A small model cannot work out -1021 % 10 in its head (it takes it for 1): the trace of
    a call shows the statements of the repository's code that ran, in order, with what their
    operator expressions gave (9) and what each function returned. Control: without `trace`
    there is none."""
    run = traced_runner(tmp_path, settings, {"words.py": ORDINAL})
    result = run("ordinalize(-1021)")
    assert result["value"] == "'-1021th'"
    steps = result["trace"]
    assert steps[0] == "words.py:10 (ordinalize) return f'{number}{ordinal(number)}'", steps
    assert "number % 100 = 79" in steps[1] and "number % 100 in (11, 12, 13) = False" in steps[1]
    assert steps[2].startswith("words.py:4 (ordinal) return {1: 'st'")
    assert steps[2].endswith("# number % 10 = 9"), steps
    # once, though the statement spreads over three lines
    assert steps[3:] == [
        "words.py: ordinal returned 'th'",
        "words.py: ordinalize returned '-1021th'",
    ]
    assert "trace" not in run("ordinalize(-1021)", trace=0)


VERSIONS = """class Version:
    def __init__(self, text):
        core, _, self.build = text.partition("+")
        self.parts = tuple(int(part) for part in core.split("."))

    def __eq__(self, other):
        return self.parts == other.parts
"""


def test_a_comparison_of_two_calls_traces_the_comparison_with_each_sides_value(
    tmp_path: Path, settings: Settings, python_on_path: None
) -> None:
    """Dev sv-build-equal: "is Version.parse('1.0.0+a') == Version.parse('1.0.0+b')?" spent the
    whole trace on parsing both sides, and how `==` decides (it leaves the build out) was cut.
    Each side is said with its value; the trace is the comparison's. Control: a single call
    is traced from its start."""
    run = traced_runner(tmp_path, settings, {"versions.py": VERSIONS})
    result = run("Version('1.0+a') == Version('1.0+b')")
    assert result["value"] == "True"
    assert [o.split(" = ")[0] for o in result["operands"]] == [
        "Version('1.0+a')",
        "Version('1.0+b')",
    ]
    assert result["trace"][0].startswith("versions.py:7 (__eq__) return self.parts == other.parts")
    assert not any("(__init__)" in step for step in result["trace"]), result["trace"]
    single = run("Version('1.0+a').parts")
    assert "operands" not in single and "(__init__)" in single["trace"][0], single


SEMVER = """class Version:
    def __init__(self, text):
        self._core, _, self._build = text.partition("+")

    @property
    def core(self):
        \"\"\"The version without its build.\"\"\"
        return self._core

    def to_tuple(self):
        return (self.core, self._build)

    def compare(self, other):
        v1 = self.to_tuple()[:1]
        v2, count = other.to_tuple()[:1], 0
        count += 1
        return (v1 > v2) - (v1 < v2)
"""


def test_a_trace_says_what_each_assignment_gave_and_leaves_getters_out(
    tmp_path: Path, settings: Settings, python_on_path: None
) -> None:
    """Dev sv-build-equal: `v1 = self.to_tuple()[:3]` is where the build is left out of a
    comparison, but the trace said the line without its value (a call and a slice are not
    evaluated again), and the getters of five properties used up the rest of its steps. An
    assignment is said with what its names were given once it ran (read from the frame, not
    run again), and a function that only returns an attribute is no step of its own."""
    run = traced_runner(tmp_path, settings, {"semver.py": SEMVER})
    steps = run("Version('1.0+a').compare(Version('1.0+b'))")["trace"]
    assert "semver.py:14 (compare) v1 = self.to_tuple()[:1]  # v1 = ('1.0',)" in steps, steps
    assert (
        "semver.py:15 (compare) v2, count = (other.to_tuple()[:1], 0)  # v2 = ('1.0',); count = 0"
        in steps
    )
    assert "semver.py:16 (compare) count += 1  # count = 1" in steps
    # what is assigned is a name's: an attribute or `_` is not said
    assert "semver.py:3 (__init__) self._core, _, self._build = text.partition('+')" in steps
    assert not any("(core)" in step or "core returned" in step for step in steps), steps
    assert "semver.py: to_tuple returned ('1.0', 'a')" in steps  # not a getter: it builds
    # control: a statement that raised gave nothing, and says nothing more
    failing = run("Version('1.0+a').compare(None)")
    assert failing["trace"][0] == "semver.py:14 (compare) v1 = self.to_tuple()[:1]  # v1 = ('1.0',)"
    assert any(s.startswith("semver.py:15 (compare) v2") and "#" not in s for s in failing["trace"])


@pytest.mark.parametrize(
    ("task", "traced"),
    [
        ("The tests fail. Fix the bug.", True),
        ("One of the tests fails: which function has the bug?", True),
        ("Run the tests and tell me which ones fail", False),  # a report needs no trace
    ],
    ids=["fix", "find-bug", "report"],
)
def test_a_failing_assertions_call_is_traced_for_a_fix_or_a_bug_hunt(
    tmp_path: Path,
    settings: Settings,
    python_on_path: None,
    monkeypatch: pytest.MonkeyPatch,
    task: str,
    traced: bool,
) -> None:
    """The test says average([2, 4]) should be 3; where the -3.0 comes from is in add, which
    average calls: the failing assertion's call is run with a trace, so the context shows
    `a - b = -6` on add's line (a small model cannot follow the call in its head)."""
    from tests.test_agent import run

    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    repo = session_repo(tmp_path)
    fix = "# file: calc/ops.py\ndef add(a, b):\n    return a + b\n"
    turns = {
        "The tests fail. Fix the bug.": [fix, "add adds now."],
        "Run the tests and tell me which ones fail": [
            "```python\nprint(run_tests())\n```",
            "Two tests fail: test_add and test_average.",
        ],
    }.get(task, ["add subtracts."])
    _, requests = run(repo, settings, turns, task)
    prompt = "\n".join(request.last_user_text() for request in requests)
    assert "test_average" in prompt  # control: the failures are there in every case
    shown = "calc/ops.py:6 (add) return a - b  # a - b = -6" in prompt
    assert shown == traced, prompt
    if traced:
        assert "average([2, 4]) returns -3.0" in prompt
        assert "calc/ops.py: average returned -3.0" in prompt


def test_a_trace_shows_builtins_that_change_nothing_and_never_uses_up_a_generator(
    tmp_path: Path, settings: Settings, python_on_path: None
) -> None:
    """`len(values) - 1` is shown (the off-by-one of an average); `sum` of a generator is not
    evaluated for the trace, which would use it up and change what the code returns."""
    code = (
        "def average(values):\n    return sum(values) / (len(values) - 1)\n\n\n"
        "def doubled(values):\n    gen = (v * 2 for v in values)\n    return sum(gen) + 0\n"
    )
    run = traced_runner(tmp_path, settings, {"stats.py": code})
    steps = run("average([2, 4, 6])")["trace"]
    assert "len(values) - 1 = 2" in steps[0] and "sum(values) / (len(values) - 1) = 6.0" in steps[0]
    result = run("doubled([1, 2])")
    assert result["value"] == "6"  # the generator was left for the code
    assert not any("sum(gen) =" in step for step in result["trace"]), result["trace"]


def test_a_trace_says_a_function_raised_or_yielded_not_that_it_returned_none(
    tmp_path: Path, settings: Settings, python_on_path: None
) -> None:
    """Python reports a frame left by an exception, and each yield, as a "return" of None or
    of the value: the trace says raised and yielded, and a caught exception is not a raise."""
    code = (
        "def parse(text):\n    return int(text)\n\n\n"
        "def safe(text):\n    try:\n        return parse(text)\n    except ValueError:\n"
        "        return 0\n\n\n"
        "def pairs(n):\n    for i in range(n):\n        yield i\n"
    )
    run = traced_runner(tmp_path, settings, {"conv.py": code})
    steps = run("safe('x')")["trace"]
    assert "conv.py: parse raised ValueError" in steps, steps
    assert "conv.py: safe returned 0" in steps, steps
    steps = run("list(pairs(2))")["trace"]
    assert "conv.py: pairs yielded 0" in steps, steps


PAINT = """HIGHLIGHTS = {"on_red": 41}


def paint(text: object, color: str | None = None, on_color: str | None = None) -> str:
    result = str(text)
    if on_color is not None:
        result = "%d:%s" % (HIGHLIGHTS[on_color], result)
    return result
"""


def test_a_parameter_run_as_a_function_runs_the_call_that_passes_it(
    tmp_path: Path, settings: Settings, python_on_path: None
) -> None:
    """Asked about passing on_color='red' to paint(), a small model ran `on_color('red')`
    and answered from the NameError; the call that passes it runs instead, and says so."""
    repo = tmp_path / "repo"
    make_repo(repo, {"paint.py": PAINT, "tests/test_paint.py": "def test_x(on_color=1): ...\n"})
    result = evaluate(tmp_path, settings, "on_color('red')")
    assert result["code"] == "paint('text', on_color='red')"
    assert result["exception"] == "KeyError: 'red'"
    assert "a parameter of `paint` (paint.py, line 4)" in result["note"]
    # control: a name that is nobody's parameter gets the NameError alone
    assert "note" not in evaluate(tmp_path, settings, "shade('red')")


def converse(repo: Path, settings: Settings, replies: list[Any], tasks: list[str]) -> Any:
    """(outcomes, requests) of one conversation of `tasks` against a model scripted with
    `replies`."""
    from tests.support.scripted_model import ScriptedModel
    from tests.test_agent import session_for

    with ScriptedModel(replies) as model:
        session = session_for(repo, settings, model)
        try:
            outcomes = [session.run(task) for task in tasks]
        finally:
            session.close()
        return outcomes, model.requests


def test_a_follow_up_passes_its_value_to_the_parameter_the_last_answer_named(
    tmp_path: Path, settings: Settings, python_on_path: None
) -> None:
    """Fresh dev tc-chat-background: "which argument of colored sets the background colour?"
    was answered `on_color`; then "what if i pass it 'red' there instead of on_red" ran
    colored('red'), the value as the text, which raises nothing. A value a follow-up gives
    goes to the parameter the answer before it wrote as code: 'red' goes to on_color."""
    repo = make_repo(
        tmp_path / "repo", {"paint.py": PAINT, "tests/test_paint.py": "def test_x(): ...\n"}
    )
    (one, two), requests = converse(
        repo,
        settings,
        ["The `on_color` argument of paint sets the background.", "It raises KeyError."],
        ["which argument of paint sets the background colour?", "what if i pass it 'red' there"],
    )
    assert "paint('text', on_color='red') raises KeyError" in requests[1].last_user_text()
    assert (one.status, two.status) == ("completed", "completed")


def test_a_value_whose_str_raises_is_still_told_by_its_repr(
    tmp_path: Path, settings: Settings, python_on_path: None
) -> None:
    """What a value prints as is kept beside its repr (a symptom's "1.3.0" is checked by it);
    a `__str__` that raises leaves the value as it was, never an exception of the call."""
    odd = "class Odd:\n    def __repr__(self):\n        return 'Odd()'\n\n"
    odd += "    def __str__(self):\n        raise RuntimeError('no str')\n"
    run = traced_runner(tmp_path, settings, {"odd.py": odd})
    result = run("Odd()", trace=0)
    assert result["value"] == "Odd()" and "exception" not in result and "text" not in result
    assert run("'1.3.0'", trace=0)["text"] == "1.3.0"


SHADE = """import os
import sys

HIGHLIGHTS = {"on_red": 41}


def shade(text: object, on_color: str | None = None) -> str:
    if not sys.stdout.isatty():  # as termcolor: plain text for a pipe
        return str(text)
    return "%d:%s" % (HIGHLIGHTS[on_color], text) if on_color else str(text)
"""


def test_the_code_sees_a_terminal_as_where_the_user_calls_it(
    tmp_path: Path, settings: Settings, python_on_path: None
) -> None:
    """ "i passed on_color='red' and it blew up": a library that colours only for a terminal
    gave the plain text to the pipe the runner captured, and the model answered that nothing
    goes wrong. The code sees a terminal, so it does what it does for the user."""
    repo = tmp_path / "repo"
    make_repo(repo, {"shade.py": SHADE, "tests/test_shade.py": "def test_x(): ...\n"})
    result = evaluate(tmp_path, settings, "shade('x', on_color='red')")
    assert result.get("exception") == "KeyError: 'red'", result
    # what it prints is still captured, not written to a terminal
    printed = evaluate(tmp_path, settings, "print(shade('x', on_color='on_red'))\n1")
    assert "41:x" in printed["printed"] and printed["value"] == "1"


def test_a_value_passed_as_a_keyword_runs_the_function_named_with_it(
    tmp_path: Path, settings: Settings, python_on_path: None
) -> None:
    """Dev tc-on-color-red: "i passed on_color='red' to colored and it blew up. why?" ran
    nothing, since two functions take on_color (colored, and cprint that calls it) and the
    value alone cannot say which; the keyword and the function the question names do."""
    from tests.test_agent import run

    show = "from paint import paint\n\n\ndef show(text, on_color=None):\n"
    show += "    print(paint(text, on_color=on_color))\n"
    repo = make_repo(
        tmp_path / "repo",
        {"paint.py": PAINT, "show.py": show, "tests/test_paint.py": "def test_x(): ...\n"},
    )
    task = "i passed on_color='red' to paint and it blew up. why?"
    _, requests = run(repo, settings, ["It raises KeyError: 'red'."], task)
    prompt = requests[0].last_user_text()
    assert "paint('text', on_color='red') raises KeyError: 'red'" in prompt, prompt
    # control: the same value written without its keyword picks no function
    turns = ["No.", "It gives 'red': no."]
    _, requests = run(repo, settings, turns, "does 'red' blow up paint or show?")
    assert "raises KeyError" not in requests[0].last_user_text()


def test_an_answers_example_code_runs_where_the_repositorys_code_is_importable(
    tmp_path: Path, settings: Settings, python_on_path: None
) -> None:
    """Dev infl-camel-lower: the 1.5B model answered right and added an example,
    `print(inflection.camelize("Camel_Case", False))`, which the executor (only the tools)
    failed with NameError three times until the run was stuck. A block that calls no tool and
    needs the repository's code runs through `evaluate`; a block that calls a tool runs as
    it is (control: a tool call is not rewritten)."""
    from tests.test_agent import run

    from smol_instruments.agent.loop import runs_outside

    repo = session_repo(tmp_path)
    example = "Call average with the list:\n```python\n# how\nprint(average([2, 4]))\n```"
    outcome, requests = run(
        repo,
        settings,
        [example, "average([2, 4]) gives -3.0."],
        "how do i get the mean of 2 and 4?",
    )
    assert "-3.0" in requests[1].last_user_text(), requests[1].last_user_text()
    assert outcome.status == "completed" and outcome.answer == "average([2, 4]) gives -3.0."
    # under a written answer, the example runs once and the answer ends with what it gave
    answer = "To get the mean, call average from calc/ops.py with the list of values; it "
    answer += (
        "divides their sum by their count and returns it:\n```python\nprint(average([2, 4]))\n```"
    )
    outcome, requests = run(repo, settings, [answer], "how do i get the mean of 2 and 4?")
    assert len(requests) == 1 and outcome.status == "completed"
    assert outcome.answer.endswith("Run just now with this repository's code: -3.0"), outcome.answer
    tools = {"read_file", "evaluate"}
    assert runs_outside("import calc\nprint(calc.ops.add(1, 2))", tools)
    assert not runs_outside('print(read_file(path="calc/ops.py"))', tools)
    assert not runs_outside("x = [2, 4]\nprint(sum(x) / len(x))", tools)  # the executor runs it


NAMES = '''"""Lookups that raise."""

TABLE = {"on_red": 41, "on_green": 42}


class Box:
    colour = "red"


def lookup(name):
    if TABLE[name] > 40:
        return True
    return False


def first(key):
    raise KeyError(key)


def paint(text, colour=None, *, bold=False):
    return text
'''


def test_a_lookup_that_raises_is_said_with_what_was_there_to_look_up(
    tmp_path: Path, settings: Settings, python_on_path: None
) -> None:
    """Dev tc-on-color-red: shown `KeyError: 'red'` raised at `HIGHLIGHTS[on_color]`, the
    1.5B model answered that colored does not take on_color. What a user looks up next is
    what the mapping holds: its keys and the closest to the missing one, from the objects that
    raised (for a call that does not fit, what its function takes; for an AttributeError the
    closest names, as Python 3.12 says them)."""
    from smol_instruments.tools.evaluate import told

    make_repo(tmp_path / "repo", {"names.py": NAMES, "tests/test_names.py": "def test_x(): ...\n"})
    result = evaluate(tmp_path, settings, "lookup('red')")  # the subscript is in an `if` line
    assert result["exception"] == "KeyError: 'red'"
    assert result["hint"] == (
        "TABLE has no key 'red'; the closest: 'on_red'; its keys: 'on_red', 'on_green'"
    )
    assert "  (TABLE has no key 'red'; the closest: 'on_red'" in "\n".join(told("x", result))
    attribute = evaluate(tmp_path, settings, "Box().color")
    assert attribute["hint"] == "did you mean: colour?"
    keyword = evaluate(tmp_path, settings, "paint('x', color='red')")
    assert keyword["hint"] == (
        "paint takes (text, colour=None, *, bold=False); the closest to 'color': colour"
    )
    assert evaluate(tmp_path, settings, "Box(1)")["hint"] == "Box takes ()"
    # controls: a KeyError raised by name, and a lookup that works, say nothing more
    assert "hint" not in evaluate(tmp_path, settings, "first('red')")
    assert "hint" not in evaluate(tmp_path, settings, "lookup('on_red')")


STATS = '''"""Statistics."""


def median(values):
    """The middle value.

    >>> median([3, 1, 2])
    2
    >>> median([4, 1, 3, 2])
    2.5
    >>> median([])
    Traceback (most recent call last):
    ValueError: no values
    >>> box = calc.Box([1, 2, 3])
    >>> box.median()
    2
    """
    if not values:
        raise ValueError("no values")
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle]
'''


@pytest.mark.parametrize(
    ("task", "told"),
    [
        ("find the bug in median", True),
        ("median([4, 1, 3, 2]) gives 3, it should be 2.5", True),
        ("what does median do?", False),  # control: no bug sought or told
    ],
)
def test_a_bug_sought_or_told_comes_with_what_its_docstring_examples_give(
    tmp_path: Path, settings: Settings, python_on_path: None, task: str, told: bool
) -> None:
    """The examples a shown function's docstring writes are run in order with the code as it
    is, before the first step, for a bug sought or told: the one that does not give what the
    docstring says is where the bug shows (an expected exception counts as given); the model
    need not run them in its head. An example that raises where its docstring shows a value
    (a stale docstring, a step that no longer runs) tells nothing of the code: not counted."""
    from smol_instruments.agent.context import gather
    from smol_instruments.agent.intent import from_rules
    from smol_instruments.tools.repo import list_repo_files

    repo = make_repo(tmp_path / "repo", {**FILES, "calc/stats.py": STATS})
    ctx, _ = make_tools(repo, settings)
    prompt = gather(ctx, from_rules(task), list_repo_files(ctx)).text
    said = "The examples in the docstrings of `median`, run just now with the repository's code"
    assert (said in prompt) is told, prompt
    wrong = "median([4, 1, 3, 2]) gives 3; median's docstring says 2.5"
    assert (wrong in prompt) is told
    if told:
        assert "2 of 3 give what the docstring says" in prompt
        assert "median([3, 1, 2]) gives" not in prompt and "median([]) gives" not in prompt
        assert "box.median() gives" not in prompt


def test_an_assertion_on_the_tests_own_values_is_not_run_out_of_its_test() -> None:
    """Dev tc-no-color-wins: a parametrized test's `_can_do_colour(no_color=test_no_color)` was
    run alone and told as raising NameError: name 'test_no_color' is not defined, as if the
    code raised it. A side that reads the test's parameters or variables is left out; one that
    reads only the module's names is run (control)."""
    from smol_instruments.base.pyast import parse
    from smol_instruments.tools.evaluate import _asserted_calls

    source = (
        "import pytest\nfrom calc import add, Box\n\n\n"
        "@pytest.mark.parametrize('a, want', [(1, 2)])\n"
        "def test_param(a, want):\n    assert add(a, 1) == want\n\n\n"
        "def test_local():\n    box = Box()\n    assert box.size() == add(1, 1)\n\n\n"
        "def test_plain():\n    assert add(1, 1) == 2\n"
    )
    tree = parse(source)
    assert _asserted_calls(tree, 7, None) == []
    assert _asserted_calls(tree, 12, None) == ["add(1, 1)"]
    assert _asserted_calls(tree, 16, None) == ["add(1, 1)"]


VER = """from dataclasses import dataclass


@dataclass(eq=False)
class Ver:
    major: int
    pre: str | None = None
    build: str | None = None

    def __eq__(self, other):
        return (self.major, self.pre) == (other.major, other.pre)


def parse(text):
    head, _, build = text.partition("+")
    head, _, pre = head.partition("-")
    return Ver(int(head), pre or None, build or None)
"""


@pytest.mark.parametrize("again", ["right", "wrong"])
def test_a_field_said_to_have_a_value_it_did_not_have_as_it_ran_is_sent_back(
    tmp_path: Path, settings: Settings, python_on_path: None, again: str
) -> None:
    """Dev sv-build-equal: shown `Version(..., prerelease=None, build='a')`, the 1.5B model
    said the parse sets "the prerelease part set to 'a'", and the run was `completed`. Said
    once, sent back; the same again is not `completed`, the values below it. Control: an
    answer that says the fields as they were goes through at once."""
    from tests.test_agent import run

    repo = make_repo(tmp_path / "repo", {"ver.py": VER, "tests/test_ver.py": "def test_x(): ...\n"})
    task = "is parse('1+a') == parse('1+b')? feels like it shouldnt be"
    wrong = "It is True: parse gives a Ver with the pre part set to `'a'`, then one of 'b'."
    right = "It is True: pre is None for both; build ('a', 'b') is left out of the comparison. "
    right += "If pre is 'rc' for one, parse(text, pre='x') would differ."  # supposed, an argument
    outcome, requests = run(repo, settings, [right], task)
    assert "where parse('1+a') = Ver(major=1, pre=None, build='a')" in requests[0].last_user_text()
    assert len(requests) == 1 and outcome.status == "completed", outcome.answer
    outcome, requests = run(repo, settings, [wrong, right if again == "right" else wrong], task)
    told = requests[1].last_user_text()
    assert "this answer says pre is 'a', but as it ran, pre=None" in told, told
    if again == "right":
        assert outcome.status == "completed" and outcome.answer == right
    else:
        assert outcome.status != "completed"
        assert "Note: as it ran, pre=None; the answer above says pre is 'a'." in outcome.answer


def test_a_follow_up_about_other_values_is_not_held_to_the_fields_an_earlier_turn_ran(
    tmp_path: Path, settings: Settings, python_on_path: None
) -> None:
    """Turn 2 asks about a value of its own ("and if pre were rc?"): the fields turn 1 ran
    with are not what it is about (the test above is the control: a wrong field of a turn's
    own run is sent back)."""
    repo = make_repo(tmp_path / "repo", {"ver.py": VER, "tests/test_ver.py": "def test_x(): ...\n"})
    first = "It is True: pre is None for both; build is left out of the comparison."
    second = "As it ran it gives True. Then pre is 'rc' for one of them, and they are not equal."
    tasks = ["is parse('1+a') == parse('1+b')?", "and if pre were rc on one of them?"]
    (one, two), requests = converse(repo, settings, [first, second], tasks)
    assert len(requests) == 2, requests[-1].last_user_text()
    assert (one.status, two.status) == ("completed", "completed")


@pytest.mark.parametrize(
    ("task", "ran"),
    [
        ("how does title deal with something like iPhone?", "title('iPhone')"),
        ("does title keep the digits of something like 42?", "title(42)"),
        ("what would title do, feels like it shouldnt", None),  # "like" then no example
    ],
)
def test_an_example_a_question_gives_bare_is_run_before_the_first_step(
    tmp_path: Path, settings: Settings, python_on_path: None, task: str, ran: str | None
) -> None:
    """Fresh dev infl-titleize-iphone: "how does titleize deal with something like iPhone?"
    was answered from the code in one step, without the value, `completed`. An input written
    bare after "like" is the question's value: the one function it names is run with it."""
    from tests.test_agent import run

    code = "def title(text):\n    return str(text).capitalize()\n"
    repo = make_repo(
        tmp_path / "repo", {"words.py": code, "tests/test_words.py": "def test_x(): ...\n"}
    )
    _, requests = run(repo, settings, ["It gives Iphone.", "It gives Iphone."], task)
    prompt = requests[0].last_user_text()
    if ran:
        assert f"{ran} returns" in prompt, prompt
        assert "`iPhone` occurs nowhere" not in prompt  # an input, not a name to look for
    else:
        assert "Run just now" not in prompt


def test_a_value_the_question_writes_otherwise_is_still_to_be_told(
    tmp_path: Path, settings: Settings, python_on_path: None
) -> None:
    """Fresh dev infl-titleize-iphone, run with its value: titleize('iPhone') returns 'I Phone',
    which the question's "iPhone" was taken to say (case and spaces aside), so an answer that
    never gave it went through `completed`. A value is the question's own only as it writes
    it; control: an answer that gives it goes through."""
    from tests.test_agent import run

    code = "def title(text):\n    return str(text).capitalize()\n"
    repo = make_repo(
        tmp_path / "repo", {"words.py": code, "tests/test_words.py": "def test_x(): ...\n"}
    )
    task = "how does title deal with something like iPhone?"
    outcome, requests = run(
        repo, settings, ["It capitalizes the text.", "It gives 'Iphone'."], task
    )
    assert "title('iPhone') = 'Iphone'" in requests[1].last_user_text()
    assert outcome.status == "completed" and outcome.answer == "It gives 'Iphone'."


def sent_back_or_not(
    tmp_path: Path, settings: Settings, module: tuple[str, str], replies: list[str], task: str
) -> tuple[Any, list[Any]]:
    """(outcome, requests) of one scripted run on a repository of `module` (name, code) and a
    test, which ends `completed` whether its first answer was sent back or not."""
    from tests.test_agent import run

    name, code = module
    files = {f"{name}.py": code, f"tests/test_{name}.py": "def test_x(): ...\n"}
    outcome, requests = run(make_repo(tmp_path / "repo", files), settings, replies, task)
    assert outcome.status == "completed", outcome.answer
    return outcome, requests


@pytest.mark.parametrize(
    ("first", "nudged"),
    [
        ("It gives 'iPhone' back, the case kept.", True),  # the input's words, not the value's
        ("It gives 'I phone'.", True),  # another case is another string
        ("It gives `i  Phone`: a capital starts a word.", False),  # other spaces, same words
    ],
)
def test_a_string_value_is_told_with_its_case_and_word_breaks(
    tmp_path: Path, settings: Settings, python_on_path: None, first: str, nudged: bool
) -> None:
    """Fresh dev infl-titleize-iphone: titleize('iPhone') returns 'I Phone', and an answer that
    said 'iPhone' was taken to tell it (case and spaces aside): `completed` without the value.
    A string is told with its case and where its words break; the spaces between may differ."""
    code = "import re\n\ndef title(text):\n    return re.sub('([A-Z])', ' \\\\1', text).strip()\n"
    task = "how does title deal with something like iPhone?"
    replies = [first, "It gives 'i Phone'."]
    outcome, requests = sent_back_or_not(tmp_path, settings, ("words", code), replies, task)
    assert "title('iPhone') returns 'i Phone'" in requests[0].last_user_text()
    assert (len(requests) == 2) is nudged
    assert outcome.answer.startswith(first if not nudged else "It gives 'i Phone'.")


STYLED = """from typing import Iterable

STYLES = {"bold": 1, "dim": 2}


def paint(text, colour=None, on_colour=None, attrs: Iterable[str] | None = None, *, width=None):
    out = str(text)
    for attr in attrs or ():
        out = f"<{STYLES[attr]}>{out}"
    return out
"""


@pytest.mark.parametrize(
    ("task", "ran"),
    [
        (
            "what happens if i ask paint for an attribute it doesnt have, like shiny",
            "paint('text', attrs=['shiny']) raises KeyError",
        ),
        ("what does paint do with something like shiny?", "paint('shiny') returns 'shiny'"),
        ("what if paint gets a colour or a width like 3?", "paint(3) returns '3'"),  # two named
        ("what does paint do with a colour like red?", "paint('text', colour='red') returns"),
    ],
)
def test_a_value_told_as_what_a_parameter_holds_is_passed_to_it(
    tmp_path: Path, settings: Settings, python_on_path: None, task: str, ran: str
) -> None:
    """Fresh dev tc-unknown-attr: "what happens if i ask colored for an attribute it doesnt
    have, like shiny" ran colored('shiny'), the text, which gave no error; the question told
    its value as an attribute, the `attrs` parameter, and that raises KeyError. Passed as the
    one parameter a word of the question names; as the text where no word or two do."""
    from tests.test_agent import run

    repo = make_repo(
        tmp_path / "repo", {"paint.py": STYLED, "tests/test_paint.py": "def test_x(): ...\n"}
    )
    _, requests = run(repo, settings, ["It raises KeyError."] * 2, task)
    assert ran in requests[0].last_user_text(), requests[0].last_user_text()[:1500]


def test_a_definition_found_twice_names_its_parameter_once(
    tmp_path: Path, settings: Settings
) -> None:
    """Fresh dev tc-chat-background: `colored` came into the context's definitions twice (named
    by the question and by the answer before it), its `on_color` matched twice, and two
    matches were taken for two parameters: nothing was run."""
    from smol_instruments.tools.imports import told_as

    repo = make_repo(tmp_path / "repo", {"paint.py": STYLED})
    ctx, _ = make_tools(repo, settings)
    task = "what if i pass it 'red' there? on_colour"
    call = "paint('text', on_colour='red')"
    assert told_as(ctx, task, "'red'", [("paint", "paint.py", 6)]) == call
    assert told_as(ctx, task, "'red'", [("paint", "paint.py", 6)] * 2) == call


@pytest.mark.parametrize(
    ("task", "nudged"),
    [
        ("pick({'a': [10, 20]}, 1) -> what do i get", True),  # 20 is in the input only
        ("why does pick({'a': [10, 20]}, 1) give 20?", False),  # the question says it: why
    ],
)
def test_a_value_written_only_inside_the_call_is_still_to_be_told(
    tmp_path: Path, settings: Settings, python_on_path: None, task: str, nudged: bool
) -> None:
    """Dev jp-leading-zero (dev119): resolve_pointer({'a': [10, 20]}, '/a/01') gives 20, and
    the 20 written in the call's own argument was taken for the question saying the value
    itself: an answer about the tests that call it went through `completed`. A value is the
    question's own only where it writes it outside the call."""
    code = "def pick(doc, index):\n    return doc['a'][index]\n"
    first = "pick reads the list under 'a' and returns the item at the index."
    _, requests = sent_back_or_not(tmp_path, settings, ("pick", code), [first, "20."], task)
    assert "returns 20" in requests[0].last_user_text()
    assert (len(requests) == 2) is nudged
