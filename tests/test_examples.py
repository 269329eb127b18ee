"""The examples a change writes into a document are run: a README that says what code gives is
held to what it gives (tools/examples.py)."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest
from tests.conftest import make_tools
from tests.test_agent_edits import run_keeping_patches

from smol_instruments.agent.outcome import UNTRIED
from smol_instruments.base.config import Settings
from smol_instruments.tools.examples import EXAMPLES_CHECK, docstring_examples, examples

README = "# Sample\n\nA tiny project for tests.\n"


def _checks(repo: Path, settings: Settings, new: str) -> list[dict[str, object]]:
    ctx, _ = make_tools(repo, settings)
    assert ctx.example_checks is not None
    old, ours = README.splitlines(keepends=True), new.splitlines(keepends=True)
    diff = "".join(difflib.unified_diff(old, ours, "a/README.md", "b/README.md"))
    return ctx.example_checks(ctx, diff, [("README.md", README, new)])


def test_the_forms_of_an_example_are_read() -> None:
    text = (
        "```python\nfrom app.calc import add\nprint(add(2, 3))  # Output: 5\n```\n\n"
        ">>> from app.calc import mul\n>>> mul(2, 3)\n6\n\n"
        "```python\nimport app\n```\n"
    )
    assert examples(text) == [
        ("from app.calc import mul\nmul(2, 3)", "6"),
        ("from app.calc import add\nadd(2, 3)", "5"),
        ("import app", None),
    ]
    assert examples("No code here, only # a comment -> nothing\n") == []


@pytest.mark.parametrize(
    "example, wrong",
    [
        ("```python\nfrom app.calc import add\nprint(add(2, 3))  # Output: 5\n```", "returns -1"),
        (">>> from app.calc import add\n>>> add(2, 3)\n5", "returns -1"),
        ("```python\nfrom app.calc import divide\n```", "raises ImportError"),
        ("```python\nfrom app.calc import add\nadd(obj, 3)\n```", None),
        ("```python\nfrom app.calc import mul\nmul(2, 3)  # -> 6\n```", None),
        (">>> from app.calc import mul\n>>> print(mul(2, 3))\n6", None),
    ],
    ids=[
        "comment-wrong",
        "doctest-wrong",
        "invented",
        "placeholder",
        "comment-right",
        "doctest-right",
    ],
)
def test_an_example_that_gives_other_than_it_says_fails_its_check(
    repo: Path, settings: Settings, example: str, wrong: str | None
) -> None:
    """The sample's add subtracts: a README that says add(2, 3) gives 5 is wrong, by the run;
    an import of what does not exist raises. Controls: mul's examples, right, pass; a block
    that says nothing it gives and leaves a name to the reader (`obj`) is not judged."""
    (check,) = _checks(repo, settings, README + "\n## Usage\n\n" + example + "\n")
    assert check["command"] == EXAMPLES_CHECK.format(path="README.md")
    if wrong is None:
        assert check["passed"] is True, check
    else:
        assert check["passed"] is False and wrong in str(check["output"]), check


def test_lines_the_document_had_are_not_run(repo: Path, settings: Settings) -> None:
    """Only the examples a change adds are its own: one the README had is not judged."""
    old = README + "\n>>> from app.calc import add\n>>> add(2, 3)\n5\n"
    ctx, _ = make_tools(repo, settings)
    assert ctx.example_checks is not None
    assert ctx.example_checks(ctx, "", [("README.md", old, old + "\nMore prose.\n")]) == []


def test_a_change_whose_example_is_wrong_is_not_done_and_the_model_is_told(
    repo: Path, settings: Settings
) -> None:
    """Through a run: the README written whole with a wrong example is proposed, its check
    fails with what the call gives, and the run is not `completed`."""
    whole = (
        "README.md\n```markdown\n# Sample\n\nA tiny project for tests.\n\n## Usage\n\n"
        "```python\nfrom app.calc import add\nprint(add(2, 3))  # Output: 5\n```\n```"
    )
    said, task = "I added a Usage section.", "add a Usage section to the README with an example"
    outcome, requests, patches = run_keeping_patches(repo, settings, [whole, said, said], task)
    assert patches
    assert outcome.status != "completed"
    assert "returns -1, and the document says it gives 5" in outcome.answer
    assert any("returns -1" in request.last_user_text() for request in requests[1:])


CALC = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"


def _documented(example: str) -> str:
    """The sample's calc.py with `example` in add's docstring."""
    doc = f'    """Add.\n\n    >>> mul(2, 3)\n    6\n{example}    """\n'
    return CALC.replace("def add(a, b):\n", f"def add(a, b):\n{doc}")


def test_the_examples_a_change_writes_into_a_docstring_are_read_with_their_steps() -> None:
    """Only the examples the file's docstrings did not have, each after those above it."""
    old = _documented("")
    new = _documented("    >>> x = 2\n    >>> add(x, 3)\n    5\n")
    assert docstring_examples(old, new) == [("mul(2, 3)\nx = 2\nadd(x, 3)", "5")]
    assert docstring_examples(new, new) == []
    assert docstring_examples(None, "def broken(:\n") == []


@pytest.mark.parametrize(
    ("example", "wrong"),
    [
        ("    >>> add(2, 3)\n    5\n", "returns -1, and the docstring says it gives 5"),
        ("    >>> add(2, 3)\n    -1\n", None),
        ("    >>> add(2, None)\n    2\n", "raises TypeError"),  # in the repository's code
        ("    >>> {}.add(2)\n    2\n", None),  # in its own line: doctest's namespace, unjudged
    ],
    ids=["wrong", "right", "raises-in-code", "raises-in-example"],
)
def test_a_docstring_example_a_change_writes_is_run(
    repo: Path, settings: Settings, example: str, wrong: str | None
) -> None:
    """Dev sv-parse-allow-v: the 1.5B model wrote an example that raises with its own change.
    The sample's add subtracts: a docstring that says add(2, 3) gives 5 fails the check;
    control, one that says -1 passes."""
    ctx, _ = make_tools(repo, settings)
    assert ctx.example_checks is not None
    new = _documented(example)
    diff = "".join(
        difflib.unified_diff(
            CALC.splitlines(keepends=True),
            new.splitlines(keepends=True),
            "a/app/calc.py",
            "b/app/calc.py",
        )
    )
    (check,) = ctx.example_checks(ctx, diff, [("app/calc.py", CALC, new)])
    assert check["command"] == EXAMPLES_CHECK.format(path="app/calc.py")
    if wrong is None:
        assert check["passed"] is True, check
    else:
        assert check["passed"] is False and wrong in str(check["output"]), check


@pytest.mark.parametrize(
    ("example", "status"),
    [
        ("", "incomplete"),  # nothing runs `scale`: not verified
        ("    >>> add(5, 1, scale=2)\n    8\n", "completed"),  # its example runs it, and passes
        ("    >>> add(5, 1)\n    4\n", "incomplete"),  # an example that leaves it out
    ],
)
def test_a_new_parameter_nothing_ran_is_not_verified(
    repo: Path, settings: Settings, example: str, status: str
) -> None:
    """Fresh dev sv-to-dict-skip-none: the project's tests passed with a `skip_none` that
    dropped a prerelease, and the run said `completed`; none of them passes it. A feature is
    verified like a fix, by what ran: here, an example the change writes that passes the new
    parameter."""
    doc = f'    """Add, scaled.\n\n{example}    """\n' if example else ""
    change = f"# file: app/calc.py\ndef add(a, b, scale=1):\n{doc}    return (a - b) * scale\n"
    task = "add a scale argument to add in app/calc.py, default 1"
    outcome, _, patches = run_keeping_patches(repo, settings, [change, "Done.", "Done."], task)
    assert patches and "scale=1" in (patches[-1].files[0].proposed or "")
    assert outcome.status == status, outcome.answer
    assert outcome.answer.startswith(UNTRIED.split("{", 1)[0]) is (status == "incomplete")
