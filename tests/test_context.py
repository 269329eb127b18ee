"""The code a task names, gathered before the first step (agent/context.py), on a real repository."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from tests.conftest import git

from smol_instruments.agent.context import BUDGET_CHARS, gather
from smol_instruments.agent.intent import TaskIntent, from_rules
from smol_instruments.base.config import Settings
from smol_instruments.safety.jail import PathJail
from smol_instruments.tools.base import ToolContext
from smol_instruments.tools.repo import list_repo_files

OPS = '''"""Arithmetic helpers."""


def multiply(a, b):
    return a * b


def average(values):
    return sum(values) / (len(values) - 1)
'''

TESTS = """from calc.ops import average, multiply


def test_multiply():
    assert multiply(4, 3) == 12


def test_average():
    assert average([2, 4, 6]) == 4
"""


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "calc-repo"
    (root / "calc").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "calc" / "ops.py").write_text(OPS)
    (root / "tests" / "test_ops.py").write_text(TESTS)
    (root / ".env").write_text("API_TOKEN=sk-live-do-not-leak\n")
    (root / "notes.txt").write_text("multiply\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def context_for(repo: Path, task: str, budget: int = BUDGET_CHARS) -> str:
    ctx = ToolContext.create(repo, Settings(_env_file=None))
    return gather(ctx, from_rules(task), list_repo_files(ctx), budget=budget).text


def test_a_named_function_comes_with_the_tests_that_use_it(repo: Path) -> None:
    text = context_for(repo, "What does the function multiply in calc/ops.py return?")
    # the function, not the whole file: small models describe its neighbours as part of it
    assert "calc/ops.py, lines 4-5: `multiply`" in text
    assert "(the whole file)" not in text and "def average" not in text
    # the test that uses it, whole: "which test checks it?" needs the test's name
    assert "tests/test_ops.py, lines 4-5: `test_multiply`" in text
    assert "def test_multiply():\n    assert multiply(4, 3) == 12" in text
    # and the other places, with where they are
    assert "tests/test_ops.py:1: from calc.ops import average, multiply" in text


def test_what_a_change_affects_reaches_the_callers_of_its_callers(tmp_path: Path) -> None:
    """Dev tc-colour-impact: asked what changing `_can_do_colour` affects, the model was shown
    `colored` using it and never `cprint`, which prints through `colored`."""
    root = tmp_path / "colour"
    (root / "tests").mkdir(parents=True)
    (root / "colour.py").write_text(
        "def _can_do_colour():\n    return True\n\n\n"
        "def colored(text):\n    return text if _can_do_colour() else ''\n\n\n"
        "def cprint(text):\n    print(colored(text))\n"
    )
    (root / "tests" / "test_colour.py").write_text(
        "from colour import colored\n\n\ndef test_colored():\n    assert colored('x')\n"
    )
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    text = context_for(root, "if I change _can_do_colour, what does that affect?")
    assert "Where `_can_do_colour` is used, inside colored, and through colored: cprint:" in text


def test_a_named_file_comes_whole_when_the_task_names_nothing_in_it(repo: Path) -> None:
    text = context_for(repo, "Explain calc/ops.py to me")
    assert "calc/ops.py (the whole file)" in text
    assert OPS.strip() in text


def test_a_top_level_file_in_capitals_is_named_by_its_stem(repo: Path) -> None:
    """The README is README.rst (seen on the dev task infl-readme-usage: not given, the
    model wrote the section blind); a lower-case word that is only some file's stem is not."""
    (repo / "README.rst").write_text("Calc\n====\n\nA calculator.\n")
    text = context_for(repo, "add a Usage section to the README with a couple of examples")
    assert "README.rst (the whole file)" in text and "A calculator." in text
    assert "notes.txt" not in context_for(repo, "what are my notes about?")


def test_a_long_named_file_comes_by_the_lines_that_hold_the_tasks_words(repo: Path) -> None:
    """A tool's configuration named by its tool's word, too long to show whole (seen on the
    dev task tc-py314-classifier: not given, the model wrote a pyproject.toml from memory):
    the lines holding the task's words, the list they open to its closing bracket."""
    head = "".join(f'key{i} = "v{i}"\n' for i in range(60))
    listing = "".join(f'  "Programming Language :: Python :: 3.{v}",\n' for v in range(8, 14))
    tail = "".join(f'other{i} = "w{i}"\n' for i in range(40)) + "[tool.pyproject-fmt]\n"
    (repo / "pyproject.toml").write_text(f"{head}classifiers = [\n{listing}]\n{tail}")
    text = context_for(repo, "add python 3.14 to the classifiers in pyproject")
    assert "pyproject.toml, lines 55-68 of 109:" in text
    assert '"Programming Language :: Python :: 3.13",\n]' in text  # the whole list, closed
    assert "key0 " not in text and "other39" not in text  # not the whole file
    assert "pyproject-fmt" not in text  # the word that named the file is not the task's
    # a long README the task's words are not in: its start, where its title and sections are
    (repo / "README.md").write_text("# Calc\n\nA calculator.\n" + "more text\n" * 120)
    text = context_for(repo, "put a Usage section in the README")
    assert "README.md, lines 1-7 of 123:" in text and "# Calc" in text


def test_a_named_test_brings_the_function_it_calls(repo: Path) -> None:
    text = context_for(repo, "The test test_average fails. Fix the bug in the code.")
    assert "tests/test_ops.py, lines 8-9: `test_average`" in text
    assert "calc/ops.py, lines 8-9: `average`" in text
    assert "return sum(values) / (len(values) - 1)" in text


def test_a_task_that_names_nothing_gets_nothing(repo: Path) -> None:
    assert context_for(repo, "Which Python files does this repository have?") == ""
    assert context_for(repo, "What did the last commit change?") == ""


def test_a_question_that_names_no_code_gets_the_definitions_its_words_name(repo: Path) -> None:
    """Seen on the dev task tc-explain-colour ("how does it decide whether to print colours
    or not?"): nothing was shown and the 1.5B model answered from a guess at another library,
    in one step. The definitions whose names hold the question's words are shown, most words
    first, said to be found that way; a word that names no definition brings nothing."""
    (repo / "calc" / "ops.py").write_text(
        OPS + "\n\ndef rounded_averages(rows):\n    return [round(average(r)) for r in rows]\n"
    )
    text = context_for(repo, "how are averages rounded here?")
    assert "calc/ops.py, lines 12-13: `rounded_averages` (found by the task's words" in text
    assert text.index("`rounded_averages`") < text.index("`average`")  # two words before one
    assert context_for(repo, "how is the weather decided?") == ""


def test_secrets_and_paths_outside_are_never_read(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.py"
    outside.write_text("def leaked():\n    return 'outside-secret'\n")
    text = context_for(repo, f"Explain .env and {outside} and the function leaked")
    assert "sk-live-do-not-leak" not in text
    assert "outside-secret" not in text


def test_what_is_shown_stays_within_the_budget(repo: Path) -> None:
    body = "".join(f"    total += {i}\n" for i in range(400))
    (repo / "calc" / "big.py").write_text(f"def big():\n    total = 0\n{body}    return total\n")
    text = context_for(repo, "What does big() return?", budget=1500)
    assert "`big` (cut: it ends at line 403)" in text
    assert len(text) < 1500 + 400  # titles and fences on top of the code's budget


def test_a_definition_a_change_names_is_shown_whole_to_be_written_whole(repo: Path) -> None:
    """A change's definitions are written back whole: one of 60 lines is shown whole for a
    change (the 1.5B model rewrote a function cut at 40 lines to the cut) and by its first 40
    lines for a question; one longer than 120 is cut for a change too."""
    body = "".join(f"    total += {i}\n" for i in range(57))
    (repo / "calc" / "mid.py").write_text(f"def mid():\n    total = 0\n{body}    return total\n")
    assert "`mid`:" in context_for(repo, "Add a docstring to mid")
    assert "total += 56" in context_for(repo, "Add a docstring to mid")
    asked = context_for(repo, "What does mid return?")
    assert "`mid` (cut: it ends at line 60)" in asked and "total += 56" not in asked
    longer = "".join(f"    t += {i}\n" for i in range(130))
    (repo / "calc" / "mid.py").write_text(f"def mid():\n    t = 0\n{longer}    return t\n")
    assert "`mid` (cut: it ends at line 133)" in context_for(repo, "Add a docstring to mid")


@pytest.mark.parametrize(
    ("task", "bare"),
    [
        ("give scale an optional `offset` argument, default 0", True),
        ("scale(2, 3) gives 5, it should be 6", False),
        ("add a doctest to the docstring of scale", False),
        ("add a test for scale", False),
    ],
    ids=["a-feature", "control-a-fix", "control-a-docs-change", "control-new-tests"],
)
def test_a_function_a_feature_rewrites_is_shown_without_its_docstring(
    repo: Path, task: str, bare: bool
) -> None:
    """The model writes back what it was shown (the 1.5B model copied semver's 25-line
    docstrings into every version, slowly); a version written without it keeps it. A fix
    reads what the docstring promises, a change to the docs changes it, and new tests test what
    it says: they see it."""
    doc = '    """Scale a by b.\n\n    >>> scale(2, 3)\n    6\n    """\n'
    (repo / "calc" / "scale.py").write_text(f"def scale(a, b):\n{doc}    return a + b\n")
    text = context_for(repo, task)
    assert (doc not in text and "):\n    return a + b" in text) if bare else doc in text
    left_out = "`scale` (its docstring left out: written without one, it keeps it)"
    assert (left_out in text) is bare


def test_a_method_a_change_rewrites_is_said_to_be_written_alone(repo: Path) -> None:
    """Shown an indented method, the 1.5B model wrote a class around it with an `__init__` of
    its own invention (dev sv-finalize-keep-build), which the merge put in place of the real
    one; a method written alone is merged into its class. A question is not told (control)."""
    (repo / "calc" / "box.py").write_text("class Box:\n    def area(self):\n        return 4\n")
    said = "(a method of `Box`: write the method alone, not the class)"
    assert said in context_for(repo, "give area an optional `scale` argument, default 1")
    assert "a method of" not in context_for(repo, "what does area return?")


# --- what the task's words ask to be looked at (agent/evidence.py) --------------------------


@pytest.fixture()
def project(repo: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The repository as a runnable project with two commits; `python` is this environment's."""
    (repo / ".env").unlink()
    (repo / "pyproject.toml").write_text('[tool.pytest.ini_options]\npythonpath = ["."]\n')
    (repo / ".gitignore").write_text(".pytest_cache/\n__pycache__/\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "First version")
    (repo / "calc" / "ops.py").write_text(OPS.replace("return a * b", "return a * b  # product"))
    git(repo, "commit", "-qam", "Say what multiply returns")
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    return repo


def test_a_task_that_says_tests_fail_gets_the_failures_and_their_code(project: Path) -> None:
    text = context_for(project, "One of the tests fails. Which function has the bug?")
    assert "The tests, run with `python -m pytest -q`: 1 test failed, 1 test passed" in text
    assert "assert 6.0 == 4" in text
    # the failing test's code, and one hop to the function it calls
    assert "tests/test_ops.py, lines 8-9: `test_average`" in text
    assert "return sum(values) / (len(values) - 1)" in text


def test_the_tests_never_run_unasked_in_a_folder_the_user_does_not_trust(project: Path) -> None:
    ctx = ToolContext.create(project, Settings(_env_file=None), trusted=False)
    text = gather(ctx, from_rules("One of the tests fails. Which one?"), list_repo_files(ctx)).text
    assert "The tests, run with" not in text
    assert not (project / ".pytest_cache").exists()


def test_a_task_that_does_not_speak_of_failing_tests_runs_nothing(project: Path) -> None:
    context_for(project, "What does the function multiply in calc/ops.py return?")
    assert not (project / ".pytest_cache").exists()


def test_a_question_about_the_last_commit_gets_the_history_and_its_changes(
    project: Path,
) -> None:
    text = context_for(project, "What did the last commit change?")
    assert "The last 2 commits, newest first" in text
    assert "Say what multiply returns (changed: calc/ops.py)" in text
    # line by line, in the function it touches (the 1.5B model misread a unified diff)
    assert "What the last commit (" in text and "changed, line by line:\ncalc/ops.py:" in text
    assert "- in `multiply()`, the line `return a * b` became `return a * b  # product`" in text


def test_a_folder_swapped_for_a_link_after_the_check_is_not_read(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The jail checks `calc/ops.py` by name; a contained command then swaps `calc` for a link
    to a folder outside (a hook here, at exactly that moment): nothing of it is read."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "ops.py").write_text("def multiply(a, b):\n    return 'OUTSIDE-SECRET-91c2'\n")
    real_resolve = PathJail.resolve

    def resolve_then_swap(self: PathJail, path: str, *, for_write: bool = False) -> Path:
        resolved = real_resolve(self, path, for_write=for_write)
        if path == "calc/ops.py" and not (repo / "calc").is_symlink():
            os.rename(repo / "calc", repo / "calc.moved")
            (repo / "calc").symlink_to(outside)
        return resolved

    monkeypatch.setattr(PathJail, "resolve", resolve_then_swap)
    text = context_for(repo, "Explain calc/ops.py to me")
    assert (repo / "calc").is_symlink()  # the swap happened
    assert "OUTSIDE-SECRET" in (repo / "calc" / "ops.py").read_text()  # the control
    assert "OUTSIDE-SECRET" not in text


def test_a_file_the_task_names_is_not_said_to_be_missing(repo: Path) -> None:
    """A model's reading of the task may name a file ("copy ... into setup.cfg"): the file is
    there, so it is never said to occur nowhere (seen on the 1.5B model: "`setup.cfg` occurs
    nowhere", searched for as the word after its dot). Control: a name that is nowhere is."""
    ctx = ToolContext.create(repo, Settings(_env_file=None))
    task = "put the version in calc/ops.py and notes.txt"
    for names, absent in ((("ops.py", "notes.txt"), []), (("frobnicate",), ["frobnicate"])):
        intent = replace(from_rules(task), names=names)
        assert gather(ctx, intent, list_repo_files(ctx)).absent == absent


def test_pythons_own_names_are_not_said_to_be_missing(repo: Path) -> None:
    """Seen on the 1.5B model (dev sv-why-release-first, "sorted() puts 1.0.0 before
    1.0.0-rc.1 now. whats going on"): told "`sorted` occurs nowhere in this repository", it
    said there was nothing to describe, `completed`. A builtin or a name of the standard
    library is Python's, not one the repository lacks. Control: a name that is nowhere is."""
    ctx = ToolContext.create(repo, Settings(_env_file=None))
    task = "sorted() puts the big numbers first now. whats going on"
    for names, absent in (
        (("sorted", "json.dumps", "os.path.join"), []),
        (("frobnicate", "sorted_by_size"), ["frobnicate", "sorted_by_size"]),
    ):
        intent = replace(from_rules(task), names=names)
        assert gather(ctx, intent, list_repo_files(ctx)).absent == absent


def test_a_name_the_code_uses_but_never_defines_comes_with_the_function_that_uses_it(
    tmp_path: Path,
) -> None:
    """An environment variable, a dict key, a setting ("NO_COLOR isn't respected anymore")
    has no definition: the function that reads it is its code (seen on the 1.5B model: given
    nothing, it answered from a guess at the library in one step). Control: a name that is
    nowhere gets nothing and is said to be missing."""
    files = {
        "pkg/colours.py": (
            "import os\n\n\ndef can_colour():\n"
            '    if "FORCE_COLOR" in os.environ:\n        return True\n'
            '    if "NO_COLOR" in os.environ:\n        return False\n    return True\n'
        ),
        "tests/test_colours.py": 'def test_no_colour():\n    assert "NO_COLOR"\n',
    }
    root = tmp_path / "colours"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    ctx = ToolContext.create(root, Settings(_env_file=None))
    found = gather(
        ctx, from_rules("NO_COLOR is ignored when FORCE_COLOR is set, why?"), list_repo_files(ctx)
    )
    assert "pkg/colours.py, lines 4-9: `can_colour` (it uses `NO_COLOR`)" in found.text
    assert "test_no_colour" not in found.text and found.absent == []
    nowhere = gather(ctx, from_rules("why is NO_COLOUR_AT_ALL ignored?"), list_repo_files(ctx))
    assert "can_colour" not in nowhere.text and nowhere.absent == ["NO_COLOUR_AT_ALL"]


def test_a_change_that_names_no_file_goes_to_the_one_text_file_holding_its_word(
    tmp_path: Path,
) -> None:
    """Dev sv-classifier: "we support 3.13 now, add it to the classifiers" named no file, and
    the model put an invented class in the package's __init__.py. `classifiers` is in
    setup.cfg alone: that is the file the change is about. Controls: a word two text files
    hold singles out neither; a question is not sent to a file.
    Fresh dev infl-flake8-line-length: "flake8 should allow lines up to 100 chars" was read
    with `flake8` as a name; no code has it, so no file was given, and the model added a
    function `flake8_max_line_length`. A name that is no code is the word: setup.cfg holds
    it alone. Control: a helper the change adds, named nowhere, sends it to no text file,
    though a word of the task ("helper") is in the README alone."""
    root = tmp_path / "pkg"
    (root / "src").mkdir(parents=True)
    (root / "src/__init__.py").write_text("def support():\n    return 3\n")
    (root / "setup.cfg").write_text(
        "[metadata]\nclassifiers =\n\tPython :: 3.12\n\n[flake8]\nexclude = docs/*\n"
    )
    (root / "README.md").write_text("# pkg\n\nWe support every Python with a helper.\n")
    (root / "CHANGES.md").write_text("# Changes\n\n- the changelog\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    ctx = ToolContext.create(root, Settings(_env_file=None))
    files = list_repo_files(ctx)
    change = gather(ctx, from_rules("we support 3.13 now, add it to the classifiers"), files)
    assert change.named_files == ["setup.cfg"] and "Python :: 3.12" in change.text
    task = "flake8 should allow lines up to 100 chars"
    lines = gather(ctx, TaskIntent(task=task, kind="change", names=("flake8",)), files)
    assert lines.named_files == ["setup.cfg"] and "exclude = docs/*" in lines.text
    helper = gather(ctx, from_rules("add a helper called slug_of to src/__init__"), files)
    assert "README.md" not in helper.named_files
    (root / "README.md").write_text("# pkg\n\nSee the changelog.\n")
    both = gather(ctx, from_rules("add a line about the changelog to both"), files)
    assert both.named_files == []
    asked = gather(ctx, from_rules("which classifiers do we list?"), files)
    assert asked.named_files == []


def test_a_name_found_nowhere_gets_no_code_that_only_shares_a_word_with_it(
    tmp_path: Path,
) -> None:
    """Dev sv-missing-epoch: asked "how do i bump the epoch with bump_epoch?", the context
    said bump_epoch occurs nowhere, then showed cmd_bump (by the word "bump"), and the model
    told how bump_epoch works in it. A name found nowhere is said so, alone. Control: the same
    words without the missing name get the code they name."""
    root = tmp_path / "versions"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg/bumps.py").write_text(
        "def cmd_bump(part):\n    return part\n\n\ndef bump_patch(v):\n    return v + 1\n"
    )
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    ctx = ToolContext.create(root, Settings(_env_file=None))
    intent = from_rules("how do i bump the epoch with bump_epoch?")
    missing = gather(ctx, intent, list_repo_files(ctx))
    assert missing.absent == ["bump_epoch"] and "cmd_bump" not in missing.text
    assert missing.nowhere(intent)
    control = gather(ctx, from_rules("how do i bump the epoch?"), list_repo_files(ctx))
    assert "cmd_bump" in control.text


def test_a_task_that_names_no_code_gets_the_module_level_table_its_words_name(
    tmp_path: Path,
) -> None:
    """ "can you add an italic attribute?" names no code: the definitions its words are in the
    names of include a module-level assignment (`ATTRIBUTES = {...}`, the table a feature
    extends), shown whole (seen on the 1.5B model: given nothing, it invented a class)."""
    root = tmp_path / "styles"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "style.py").write_text(
        'ATTRIBUTES: dict[str, int] = {\n    "bold": 1,\n    "dark": 2,\n}\n\n\n'
        "def styled(text, attrs):\n"
        '    return "".join(f"\\033[{ATTRIBUTES[a]}m" for a in attrs) + text\n'
    )
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    ctx = ToolContext.create(root, Settings(_env_file=None))
    text = gather(ctx, from_rules("can you add an italic attribute?"), list_repo_files(ctx)).text
    assert "pkg/style.py, lines 1-4: `ATTRIBUTES`" in text
    assert '"dark": 2,\n}' in text


def test_new_tests_for_code_come_with_the_test_file_that_imports_its_module(
    tmp_path: Path,
) -> None:
    """ "add tests for escape" names no test file: the one that imports the code's module is
    where they go (its start shows the imports and the style), and it is the change's file
    (seen on the 1.5B model: told `# file: <path>`, it rewrote escape in the module)."""
    root = tmp_path / "pointer"
    root.mkdir()
    (root / "pointer.py").write_text("def escape(s):\n    return s.replace('~', '~0')\n")
    body = "".join(
        f"\n\ndef test_{i}():\n    assert pointer.escape('a') == 'a'\n" for i in range(40)
    )
    (root / "tests.py").write_text("import unittest\n\nimport pointer\n" + body)
    (root / "notes.py").write_text("import pointer\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    ctx = ToolContext.create(root, Settings(_env_file=None))
    found = gather(ctx, from_rules("add tests for escape"), list_repo_files(ctx))
    assert found.named_files == ["tests.py"]
    assert "tests.py, lines 1-" in found.text and "import pointer" in found.text
    asked = gather(ctx, from_rules("what does escape do?"), list_repo_files(ctx))
    assert asked.named_files == []  # a question is not given the test file


def test_new_tests_go_to_a_file_the_runner_collects_not_to_conftest(tmp_path: Path) -> None:
    """pytest collects no test from conftest.py, first of the tests folder that imports the
    module (dev sv-add-test-to-dict: told `# file: tests/conftest.py`, the model wrote its
    tests there, where none ran): the new tests go to a test file."""
    root = tmp_path / "pointer"
    (root / "tests").mkdir(parents=True)
    (root / "pointer.py").write_text("def escape(s):\n    return s.replace('~', '~0')\n")
    (root / "tests" / "conftest.py").write_text("import pointer\n")
    (root / "tests" / "helpers.py").write_text("import pointer\n")
    (root / "tests" / "test_pointer.py").write_text(
        "import pointer\n\n\ndef test_escape():\n    assert pointer.escape('a') == 'a'\n"
    )
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    ctx = ToolContext.create(root, Settings(_env_file=None))
    found = gather(ctx, from_rules("add tests for escape"), list_repo_files(ctx))
    assert found.named_files == ["tests/test_pointer.py"]


def test_new_tests_go_with_the_tests_that_import_the_module_s_package(tmp_path: Path) -> None:
    """src/semver/version.py: its tests import `semver`, and a word of another import
    (`packaging.version`) is not the module (dev sv-add-test-to-dict)."""
    root = tmp_path / "lib"
    (root / "src" / "semver").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "src" / "semver" / "version.py").write_text("def to_dict(v):\n    return {}\n")
    (root / "tests" / "test_a_other.py").write_text("import packaging.version\n")
    (root / "tests" / "test_parts.py").write_text("from semver import to_dict\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    ctx = ToolContext.create(root, Settings(_env_file=None))
    found = gather(ctx, from_rules("add a test for to_dict"), list_repo_files(ctx))
    assert found.named_files == ["tests/test_parts.py"]


def test_of_a_name_defined_twice_the_definition_shown_is_not_the_wrapper(repo: Path) -> None:
    """Dev sv-bump-step: "can bump_patch take a step?" ran no call, and the first file found
    held the deprecated module function that only calls the method of the same name; the model
    was shown the wrapper. Of several definitions, the one doing the work is shown."""
    old = "from calc.version import Version\n\n\ndef bump(text):\n    return Version(text).bump()\n"
    version = (
        "class Version:\n    def __init__(self, n):\n        self.n = int(n)\n\n"
        "    def bump(self):\n        return self.n + 1\n"
    )
    (repo / "calc" / "_old.py").write_text(old)
    (repo / "calc" / "version.py").write_text(version)
    text = context_for(repo, "can bump take a step so it goes up by more than one? default 1")
    assert "calc/version.py, lines 5-6: `bump`" in text, text
    assert "calc/_old.py, lines" not in text  # a use of the method, not the code shown
    # control: with the wrapper alone, the wrapper is what is shown
    (repo / "calc" / "version.py").write_text(version.replace("def bump", "def step"))
    assert "calc/_old.py, lines 4-5: `bump`" in context_for(repo, "can bump take a step? default 1")


VERSIONS = '''class Version:
    @property
    def build(self):
        """The build part of a version."""
        return self._build

    @property
    def prerelease(self):
        """The prerelease part of a version."""
        return self._prerelease

    def finalize(self):
        """Remove any prerelease and build metadata from the version."""
        return Version(self.core)
'''


def test_a_question_which_code_does_something_gets_the_code_whose_docstring_says_it(
    repo: Path,
) -> None:
    """Dev sv-chat-finalize: "which method strips the prerelease and build off a version?"
    was shown the `prerelease` and `build` properties (the names it writes) and answered
    "prerelease". The definition whose name and docstring hold most of its words comes first.
    Control: asked what the properties give, they alone are shown."""
    (repo / "calc" / "version.py").write_text(VERSIONS)
    text = context_for(repo, "which method strips the prerelease and build off a version?")
    first = text.split("```")[0]
    assert "`finalize` (found by the task's words" in first, text
    assert "`prerelease`" in text  # the names it writes are still shown, after it
    control = context_for(repo, "what do prerelease and build give for a new version?")
    assert "`finalize`" not in control and "`prerelease`" in control, control


def test_a_change_sees_the_code_it_rewrites_before_the_failing_tests_source(
    project: Path,
) -> None:
    """Dev tc-no-color-wins: shown after the failing test, the function to fix was cut to fit
    and the 1.5B model rewrote it cut. For a change the code comes first, whole (the test's
    source is in pytest's output too); a question gets the test first (control)."""
    fix = context_for(project, "The tests fail: average is wrong. Fix it.", budget=900)
    assert "`average`" in fix and "(cut to fit)" not in fix.split("`average`")[1].split("\n")[0]
    assert "return sum(values) / (len(values) - 1)" in fix
    assert "`test_average`" not in fix or fix.index("`average`") < fix.index("`test_average`")
    asked = context_for(project, "The tests fail: average is wrong. Why?")
    assert asked.index("`test_average`") < asked.index("`average`")


def test_what_ran_leaves_room_for_the_code_a_change_rewrites(project: Path) -> None:
    """Dev sv-fix-not-equal: the failing test's output and the call's trace filled the room,
    no definition was shown, and the 1.5B model wrote a class of its own. For a change what
    ran counts half the room at most against its code; a question's room is as it was."""
    task = "average([2, 4, 6]) gives 6.0, it should be 4. The tests fail."
    fix = context_for(project, task, budget=700)
    assert "The tests, run with" in fix and "calc/ops.py, lines 8-9: `average`" in fix
    asked = context_for(project, "average([2, 4, 6]) gives 6.0. Why do the tests fail?", 700)
    assert "The tests, run with" in asked and "calc/ops.py, lines" not in asked  # control


def test_the_function_that_gives_a_chained_call_s_value_is_shown_first(project: Path) -> None:
    """Dev sv-fix-not-equal: for `Version.parse('2.0.0').match('!=3.0.0')` the context showed
    `parse` first and `match`, whose value was wrong, cut to its docstring."""
    (project / "calc" / "box.py").write_text(
        "class Box:\n    def __init__(self, n):\n        self.n = n\n\n"
        "    @classmethod\n    def make(cls, n):\n        return cls(n)\n\n"
        "    def area(self):\n        return Box.make(self.n).n + self.n\n"
    )  # `make` runs inside `area` too, as `parse` inside `match`
    text = context_for(project, "Box.make(3).area() gives 6, it should be 9")
    assert 0 < text.index("`area`") < text.index("`make`")
