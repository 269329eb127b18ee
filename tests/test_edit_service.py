"""The edit service: renames by the refactoring library, SEARCH/REPLACE blocks for any file,
whole-function edits of nested functions, additions said as additions; one patch each."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from tests.conftest import git
from tests.support.scripted_model import RecordedRequest, ScriptedModel
from tests.test_agent import session_for
from tests.test_agent_edits import run_keeping_patches
from tests.test_intent import LLAMA_PROPS

from smol_instruments.agent.events import RunOutcome
from smol_instruments.agent.outcome import lost_lines
from smol_instruments.base.config import Settings
from smol_instruments.base.errors import ToolError
from smol_instruments.patches.merge import merge_definitions
from smol_instruments.patches.model import FileChange, Patch
from smol_instruments.tools.base import ToolContext
from smol_instruments.tools.edit import (
    HELD_FILE_LINES,
    Replacement,
    apply_replacement,
    edit_blocks_grammar,
    edit_changes,
    parse_edit_blocks,
)
from smol_instruments.tools.rewrite import fenced_blocks


def test_a_rename_runs_through_the_library_across_the_module_its_users_and_tests(
    repo: Path, settings: Settings
) -> None:
    before = (repo / "app/calc.py").read_text()
    outcome, requests, patches = run_keeping_patches(
        repo, settings, [], "Rename add to add_numbers everywhere, the module and the tests"
    )
    assert requests == []  # the library did it; no model call
    (patch,) = patches
    proposed = {change.path: change.proposed for change in patch.files}
    assert set(proposed) == {"app/calc.py", "app/main.py", "tests/test_calc.py"}
    assert "def add_numbers(a, b):" in proposed["app/calc.py"]
    assert "from app.calc import add_numbers" in proposed["app/main.py"]
    assert "assert add_numbers(2, 3) == 5" in proposed["tests/test_calc.py"]
    assert (repo / "app/calc.py").read_text() == before  # nothing written before an accept
    assert outcome.status == "completed"
    assert "adds `add_numbers`" in outcome.answer and "removes `add`" in outcome.answer


def test_a_rename_follows_the_name_into_docstrings_and_documents(
    repo: Path, settings: Settings
) -> None:
    """What rope leaves, a qualified name in a docstring's example and the README's mentions
    (whose doctests run), is renamed too; a plain word is renamed only where it reads as code
    ("add numbers" stays, `add(2, 3)` does not); code rope did not resolve is left alone."""
    (repo / "app/calc.py").write_text(
        '"""Helpers.\n\n>>> import app.calc\n>>> app.calc.scale_by(2, 3)\n6\n"""\n\n\n'
        "def scale_by(a, b):\n    return a * b\n\n\n"
        "def add(a, b):\n    # add them: see add() in the README\n    return a - b\n"
    )
    (repo / "README.md").write_text(
        "# Sample\n\nscale_by(2, 3) gives 6; add numbers with `add(2, 3)`.\n"
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "doctests")
    _, _, patches = run_keeping_patches(repo, settings, [], "rename scale_by to times everywhere")
    (patch,) = patches
    proposed = {change.path: change.proposed or "" for change in patch.files}
    assert ">>> app.calc.times(2, 3)" in proposed["app/calc.py"]
    assert "def times(a, b):" in proposed["app/calc.py"]
    assert (
        proposed["README.md"] == "# Sample\n\ntimes(2, 3) gives 6; add numbers with `add(2, 3)`.\n"
    )
    _, _, patches = run_keeping_patches(repo, settings, [], "rename add to plus everywhere")
    proposed = {change.path: change.proposed or "" for change in patches[-1].files}
    assert "see plus() in the README" in proposed["app/calc.py"]  # (rope's docs=True)
    assert proposed["README.md"].endswith("add numbers with `plus(2, 3)`.\n")


def test_a_rename_reaches_a_python_script_without_a_suffix(repo: Path, settings: Settings) -> None:
    """`bin/calc` (a `#!...python` script) uses the name too: the rename changes it."""
    script = repo / "bin" / "calc"
    script.parent.mkdir()
    script.write_text("#!/usr/bin/env python\nfrom app.calc import add\n\nprint(add(1, 2))\n")
    (repo / "bin" / "notes").write_text("add is not renamed in a text file\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a script")
    _, _, patches = run_keeping_patches(repo, settings, [], "rename add to add_numbers everywhere")
    (patch,) = patches
    proposed = {change.path: change.proposed for change in patch.files}
    assert "bin/notes" not in proposed
    assert proposed["bin/calc"] == (
        "#!/usr/bin/env python\nfrom app.calc import add_numbers\n\nprint(add_numbers(1, 2))\n"
    )


def test_a_rename_searches_the_repository_files_only_never_through_a_link(
    repo: Path, settings: Settings, tmp_path: Path
) -> None:
    """A folder or a module that is a link to somewhere else (another project) is not read
    or changed by the rename; the repository's own files are."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "other.py").write_text("from app.calc import add\n\nadd(1, 2)\n")
    (repo / "linked").symlink_to(elsewhere, target_is_directory=True)
    (repo / "alias.py").symlink_to(elsewhere / "other.py")
    # committed, so git lists them among the repository's files
    subprocess.run(["git", "add", "linked", "alias.py"], cwd=repo, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "links"],
        cwd=repo,
        check=True,
    )
    assert (
        "alias.py"
        in subprocess.run(
            ["git", "ls-files"], cwd=repo, capture_output=True, text=True, check=True
        ).stdout
    )
    outcome, requests, patches = run_keeping_patches(
        repo, settings, [], "Rename add to add_numbers everywhere"
    )
    assert requests == []
    (patch,) = patches
    assert {change.path for change in patch.files} == {
        "app/calc.py",
        "app/main.py",
        "tests/test_calc.py",
    }
    assert (elsewhere / "other.py").read_text() == "from app.calc import add\n\nadd(1, 2)\n"
    assert outcome.status == "completed"


def test_a_rename_of_a_name_that_is_not_defined_goes_to_the_model(
    repo: Path, settings: Settings
) -> None:
    outcome, requests, patches = run_keeping_patches(
        repo,
        settings,
        ["There is no function called nothing_here here.", "It does not exist, so no change."],
        "Rename nothing_here to something",
    )
    assert len(requests) >= 1 and patches == []
    assert outcome.status == "incomplete"  # a change task that proposed nothing


README_EDIT = """README.md
```markdown
<<<<<<< SEARCH
A tiny project for tests.
=======
A tiny project for tests.

## Usage

    python -m app.main
>>>>>>> REPLACE
```"""


def test_a_readme_is_changed_with_a_search_replace_block(repo: Path, settings: Settings) -> None:
    outcome, requests, patches = run_keeping_patches(
        repo,
        settings,
        [README_EDIT, "I added a Usage section to README.md."],
        "Add a Usage section to the README",
    )
    # a small file that is not Python is asked for whole; SEARCH/REPLACE blocks still count
    assert "the whole file again" in requests[0].last_user_text()
    (patch,) = patches
    (change,) = patch.files
    assert change.path == "README.md"
    assert change.proposed == (
        "# Sample\n\nA tiny project for tests.\n\n## Usage\n\n    python -m app.main\n"
    )
    assert outcome.status == "completed"
    assert outcome.answer.startswith(f"I proposed patch {patch.id}")
    assert "edits README.md" in outcome.answer


CHANGELOG = "# Changes\n\n## 1.1\n\n- Updated copyright.\n- Added colours.\n\n## 1.0\n\n" + (
    "- First release.\n- Updated copyright.\n"
)
#: The whole file again, a section at its top and a fenced example in a new section: the
#: 1.5B model's form when asked for the whole file (dev tc-changes-unreleased).
CHANGELOG_WHOLE = (
    "CHANGES.md\n```markdown\n# Changes\n\n## Unreleased\n\n- NO_COLOR wins.\n\n"
    + CHANGELOG.split("\n\n", 1)[1]
    + "\n## Example\n\n```python\nprint(colored('hi'))\n```\n```"
)


def _changelog(repo: Path, text: str) -> None:
    (repo / "CHANGES.md").write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "changelog")


def test_a_small_text_file_is_asked_for_whole_and_written_whole(
    repo: Path, settings: Settings
) -> None:
    """Asked for a SEARCH/REPLACE block, the 1.5B model wrote CHANGES.md whole as SEARCH and
    the new line alone as REPLACE: 38 lines lost. A small file that is not Python is asked for
    whole, and the block is the new file: a new first section, a fenced example of its own
    (the inner fence does not end the block), and the line the file says twice kept twice
    (a repeated line is not the model repeating itself here)."""
    _changelog(repo, CHANGELOG)
    outcome, requests, patches = run_keeping_patches(
        repo,
        settings,
        [CHANGELOG_WHOLE, "I added an Unreleased section."],
        "add an Unreleased section at the top of CHANGES.md: NO_COLOR wins",
    )
    assert "the whole file again" in requests[0].last_user_text()
    assert "CHANGES.md on its own line, then the whole file again in one ```markdown block" in (
        requests[0].last_user_text()
    )
    assert "SEARCH" not in requests[0].last_user_text()
    # the server does not stop the reply where a fenced example of the file closes
    assert isinstance(requests[0].body, dict)
    assert not any("```" in stop for stop in requests[0].body.get("stop", []))
    (patch,) = patches
    (change,) = patch.files
    assert change.path == "CHANGES.md"
    assert change.proposed == (
        "# Changes\n\n## Unreleased\n\n- NO_COLOR wins.\n\n"
        + CHANGELOG.split("\n\n", 1)[1]
        + "\n## Example\n\n```python\nprint(colored('hi'))\n```\n"
    )
    assert outcome.status == "completed"


def test_a_whole_file_cut_before_its_end_is_not_the_file(repo: Path, settings: Settings) -> None:
    """A reply cut at its token limit lacks the file's tail: taken as the whole file it would
    delete it. It is not: it replaces only the lines it holds, and the tail is kept.
    Control: the test above, whole."""
    _changelog(repo, CHANGELOG)
    cut = CHANGELOG_WHOLE.split("## 1.0")[0]
    _, _, patches = run_keeping_patches(
        repo,
        settings,
        [cut, "I added it.", "I added it."],
        "add an Unreleased section at the top of CHANGES.md: NO_COLOR wins",
    )
    assert patches
    for change in (c for p in patches for c in p.files):
        assert change.proposed.endswith("## 1.0\n\n- First release.\n- Updated copyright.\n")
        assert "## Unreleased" in change.proposed
    assert (repo / "CHANGES.md").read_text() == CHANGELOG


def test_a_large_text_file_is_still_asked_for_search_replace_blocks(
    repo: Path, settings: Settings
) -> None:
    """Past `WHOLE_TEXT_CHARS`, a reply could not hold the file and the change."""
    _changelog(repo, CHANGELOG * 60)
    _, requests, _ = run_keeping_patches(
        repo, settings, ["I could not."] * 3, "add an Unreleased section at the top of CHANGES.md"
    )
    assert "SEARCH" in requests[0].last_user_text()
    assert "the whole file again" not in requests[0].last_user_text()
    assert isinstance(requests[0].body, dict)  # the control: a reply stops after its block
    assert any("```" in stop for stop in requests[0].body.get("stop", []))


def test_a_block_under_the_wrong_files_name_goes_where_its_search_lines_are_and_once(
    repo: Path, settings: Settings
) -> None:
    """Dev sv-classifier: the right block for setup.cfg's classifiers came under the line
    `# src/semver/__init__.py` (NO_MATCH), then, held to the grammar, twice in one reply (the
    second no longer matched once the first was made): nine minutes, no change. The SEARCH
    lines say where a block goes when they occur once in one file; the same block twice is
    made once. Control: lines no file holds are still refused."""
    block = README_EDIT.split("\n", 1)[1].replace("```markdown\n", "").replace("```", "")
    reply = "```\n# app/main.py\n" + block + "\n" + block + "```"
    outcome, _, patches = run_keeping_patches(
        repo, settings, [reply, "I added a Usage section."], "Add a Usage section to the README"
    )
    (patch,) = patches
    (change,) = patch.files
    assert change.path == "README.md"
    assert change.proposed.count("## Usage") == 1, change.proposed
    assert outcome.status == "completed"


def test_a_block_whose_search_lines_no_file_holds_is_still_refused(
    repo: Path, settings: Settings
) -> None:
    """The control of the test above: SEARCH lines found nowhere go nowhere."""
    block = README_EDIT.split("\n", 1)[1].replace("```markdown\n", "").replace("```", "")
    block = block.replace("A tiny project for tests.\n=", "Not in any file.\n=")
    replies = ["# app/main.py\n" + block, "I could not.", "I could not."]
    outcome, requests, patches = run_keeping_patches(repo, settings, replies, "Add a Usage section")
    assert (
        outcome.status == "incomplete"
        and patches == []
        and "does not occur" in requests[1].last_user_text()
    )


def _long_readme(repo: Path) -> None:
    """The README made too long to be written whole (tools/rewrite.py `WHOLE_TEXT_CHARS`):
    its change is asked for as SEARCH/REPLACE blocks, held to their grammar."""
    notes = "".join(f"\nNote {n}: one more line of a long README.\n" for n in range(80))
    (repo / "README.md").write_text((repo / "README.md").read_text() + notes)
    git(repo, "commit", "-q", "-am", "a long README")


def _after_the_example(
    repo: Path, settings: Settings, change: str, llama: bool
) -> tuple[RunOutcome, list[RecordedRequest]]:
    """A README change whose first reply is the prompt's example call, then `change`: the
    run's outcome and the model's requests."""
    example = '```python\nprint(read_file(path="<a file from the list below>"))\n```'
    with ScriptedModel(
        [example, change, "I added a Usage section to README.md."],
        props=LLAMA_PROPS if llama else None,
    ) as model:
        session = session_for(repo, settings, model)
        try:
            outcome = session.run("Add a Usage section to the README")
        finally:
            session.close()
        return outcome, list(model.requests)


@pytest.mark.parametrize("llama", [True, False], ids=["llama.cpp", "other-server"])
def test_a_text_change_is_held_to_the_blocks_grammar_where_the_server_takes_one(
    repo: Path, settings: Settings, llama: bool
) -> None:
    """A text change whose first reply is no change (the prompt's example call, on the 1.5B
    model) gets its next reply held to the SEARCH/REPLACE grammar, naming the file shown,
    where the server is llama.cpp's (it answers /props); the first reply is free, and so is
    every reply once a change is proposed. A server that is not llama.cpp's gets no grammar
    (it would reject or ignore it). The README is too long to be written whole."""
    _long_readme(repo)
    outcome, (first, second, *rest) = _after_the_example(repo, settings, README_EDIT, llama)
    assert isinstance(first.body, dict) and isinstance(second.body, dict)
    assert "grammar" not in first.body
    if llama:
        assert second.body["grammar"].startswith('root ::= ("README.md" "\\n" block0')
    else:
        assert "grammar" not in second.body
    assert all("grammar" not in (r.body or {}) for r in rest)
    assert "edits README.md" in outcome.answer


def test_a_whole_function_edit_that_matches_nothing_is_told_as_an_addition(
    repo: Path, settings: Settings
) -> None:
    block = "# file: app/calc.py\ndef add_numbers(a, b):\n    return a + b\n"
    outcome, _, patches = run_keeping_patches(
        repo, settings, [block, "Renamed add to add_numbers."], "Fix add in app/calc.py"
    )
    assert len(patches) == 1
    assert "in app/calc.py it adds `add_numbers`" in outcome.answer
    assert "changes `add`" not in outcome.answer


def test_a_nested_function_is_edited_where_it_is() -> None:
    original = "def outer(x):\n    def helper(y):\n        return y + 1\n\n    return helper(x)\n"
    block = 'def helper(y):\n    """Add one to y."""\n    return y + 1\n'
    merged = merge_definitions(original, block, "m.py")
    assert merged.replaced == ("outer.<locals>.helper",) and merged.added == ()
    assert merged.text == (
        'def outer(x):\n    def helper(y):\n        """Add one to y."""\n'
        "        return y + 1\n\n    return helper(x)\n"
    )


def test_search_replace_blocks_are_parsed_and_applied_forgivingly() -> None:
    reply = (
        '# file: pyproject.toml\n<<<<<<< SEARCH\n  version = "1.0"\n=======\n'
        'version = "1.1"\n>>>>>>> REPLACE\n'
    )
    (block,) = parse_edit_blocks(reply)
    assert block.path == "pyproject.toml"
    text = '[project]\nname = "x"\nversion = "1.0"\n'
    assert apply_replacement(text, block) == '[project]\nname = "x"\nversion = "1.1"\n'
    with pytest.raises(ToolError, match="does not occur"):
        apply_replacement("nothing like it\n", block)
    with pytest.raises(ToolError, match="not closed"):
        parse_edit_blocks("a.md\n<<<<<<< SEARCH\nx\n")


def test_a_fragment_of_a_data_file_is_never_run_as_python(repo: Path, settings: Settings) -> None:
    """Seen on the dev task tc-py314-classifier: asked for a change to pyproject.toml, the
    model wrote a ```toml fence holding a fragment; `[tool.x]` and `key = "3.14"` parse as
    Python, so it ran, and "the variable `tool` is not defined" came back three times. A
    fence in another file's language is not code to run: the model is asked for the change
    in the form that edits any file, and its next reply is proposed."""
    toml = '[project]\nname = "app"\nclassifiers = [\n  "Python :: 3.13",\n]\n'
    (repo / "pyproject.toml").write_text(toml)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "config")
    fragment = '```toml\n[tool.project]\nclassifiers = [\n  "Python :: 3.14",\n]\n```'
    edit = (
        'pyproject.toml\n<<<<<<< SEARCH\n  "Python :: 3.13",\n=======\n  "Python :: 3.13",\n'
        '  "Python :: 3.14",\n>>>>>>> REPLACE\n'
    )
    outcome, requests, patches = run_keeping_patches(
        repo,
        settings,
        [fragment, edit, "Added 3.14."],
        "add python 3.14 to the classifiers in pyproject",
    )
    second = requests[1].last_user_text()
    assert "is not defined" not in second and "SEARCH" in second, second
    (patch,) = patches
    (change,) = patch.files
    assert change.path == "pyproject.toml" and '"Python :: 3.14"' in change.proposed
    assert (repo / "pyproject.toml").read_text() == toml
    assert outcome.status == "completed", outcome


PYPROJECT = (
    '[project]\nname = "app"\nkeywords = [\n  "calc",\n]\nclassifiers = [\n'
    '  "Python :: 3.12",\n  "Python :: 3.13",\n]\ndynamic = [ "version" ]\n'
)


def test_lines_of_a_file_written_again_with_the_change_are_proposed(
    repo: Path, settings: Settings
) -> None:
    """Seen on the dev task tc-py314-classifier once the lines came with the task: the model
    copies the lines it was shown, with the change in them, in a ```toml fence. The lines of
    the file from the block's first line to its last (each end found where it occurs once)
    are what it replaces; a block whose ends are not lines of the file is refused with the
    form that always works."""
    (repo / "pyproject.toml").write_text(PYPROJECT)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "config")
    rewrite = (
        '```toml\n]\nclassifiers = [\n  "Python :: 3.12",\n  "Python :: 3.13",\n'
        '  "Python :: 3.14",\n]\n```'
    )
    outcome, _, patches = run_keeping_patches(
        repo,
        settings,
        [rewrite, "Added 3.14 to the classifiers."],
        "add python 3.14 to the classifiers in pyproject",
    )
    (patch,) = patches
    (change,) = patch.files
    assert change.proposed == PYPROJECT.replace(
        '"Python :: 3.13",\n', '"Python :: 3.13",\n  "Python :: 3.14",\n'
    )
    assert (repo / "pyproject.toml").read_text() == PYPROJECT
    assert outcome.status == "completed", outcome


def test_a_block_that_is_not_lines_of_the_file_is_refused_with_the_form_that_works(
    repo: Path, settings: Settings
) -> None:
    """Seen on the dev task infl-readme-usage: the README's path, then a fence holding a
    Python example to add. In a change to a text file it is not run as code (that said only
    "inflection cannot be imported"): it matches no lines of the file, so the model is told
    to write it as SEARCH/REPLACE."""
    example = "README.md\n```\nfrom app.calc import add\n\nprint(add(1, 2))\n```"
    _, requests, patches = run_keeping_patches(
        repo, settings, [example, "I cannot.", "I cannot."], "Add a Usage section to the README"
    )
    told = requests[1].last_user_text()
    assert "not lines of README.md" in told and "<<<<<<< SEARCH" in told, told
    assert "cannot be imported" not in told
    assert patches == []


def test_a_data_file_quoted_in_an_answer_is_the_answer(repo: Path, settings: Settings) -> None:
    (repo / "pyproject.toml").write_text(PYPROJECT)
    reply = 'The classifiers are:\n```toml\nclassifiers = [\n  "Python :: 3.12",\n]\n```'
    outcome, _, patches = run_keeping_patches(
        repo, settings, [reply], "which classifiers does pyproject.toml list?"
    )
    assert patches == []
    assert outcome.answer.startswith("The classifiers are:") and "3.12" in outcome.answer


def test_a_held_search_part_may_hold_only_a_run_of_its_files_lines() -> None:
    """The SEARCH part of a held reply is a run of its file's lines in their order, from any
    line (as written, quotes and backslashes escaped for GBNF, characters outside ASCII as
    themselves); a line that would read as a block's marker is in no run; a file that does
    not exist yet, or is empty, has an empty SEARCH part; a file of too many lines is held to
    the form only."""
    readme = 'Title\n\nSay "hi" \\ now   \nnaïve 🙂\n=======\nEnd\n'
    grammar = edit_blocks_grammar({"README.md": readme, "NEW.md": None, "EMPTY.md": ""})
    rules = dict(line.split(" ::= ", 1) for line in grammar.splitlines())
    assert rules["root"].startswith('("README.md" "\\n" block0 ("\\n"? block0)?) | ("NEW.md"')
    assert rules["old0"] == "old0-0 | old0-1 | old0-2 | old0-3 | old0-5"
    assert rules["old0-0"] == '"Title" "\\n" old0-1?'
    assert rules["old0-1"] == '"\\n" old0-2?'
    assert rules["old0-2"] == '"Say \\"hi\\" \\\\ now" "\\n" old0-3?'
    assert rules["old0-3"] == '"naïve 🙂" "\\n"'  # the marker line ends the run
    assert rules["old0-5"] == '"End" "\\n"'
    assert " old0? " in rules["block0"]
    assert rules["block1"] == rules["block2"] and "old" not in rules["block1"]
    many = "".join(f"line {n}\n" for n in range(HELD_FILE_LINES + 1))
    big = dict(line.split(" ::= ", 1) for line in edit_blocks_grammar({"b.md": many}).splitlines())
    assert big["old0"].startswith("line{1,")


def test_a_held_reply_is_not_cut_short_at_a_fence_in_its_new_lines(
    repo: Path, settings: Settings
) -> None:
    """A held reply ends where its grammar says: a README's new lines may hold a fenced
    example, and neither the server's stops after a closed block nor the client's cut at the
    first block end it there (the 1.5B model's held README change was stopped at its first
    fence, its REPLACE part lost: dev infl-readme-usage)."""
    _long_readme(repo)
    readme = (repo / "README.md").read_text()
    unchanged = f"README.md\n```\n{readme}```"
    held = (
        "README.md\n<<<<<<< SEARCH\n=======\n\n## Usage\n\n```python\nfrom app.main import main\n"
        "main()\n```\n\nIt prints the total.\n>>>>>>> REPLACE\n"
    )
    with ScriptedModel(
        [unchanged, held, "I added a Usage section to README.md."], props=LLAMA_PROPS
    ) as model:
        session = session_for(repo, settings, model)
        try:
            outcome = session.run("Add a Usage section to the README")
            patches = session.ctx.patches.all()
        finally:
            session.close()
        second = model.requests[1].body
    assert isinstance(second, dict) and "grammar" in second
    assert not any("```" in stop for stop in second.get("stop", []))
    assert len(patches) == 1, outcome.answer
    (change,) = patches[0].files
    assert "It prints the total." in change.proposed and "main()" in change.proposed


def test_a_change_that_only_repeats_the_files_own_lines_is_refused(repo: Path) -> None:
    """Held to the grammar, the 1.5B model answered "add a Usage section" with the whole
    README again at its end, told as done: a change that removes nothing and adds only lines
    the file has (fences and markers aside) is refused, saying so. A move (the lines it moves
    are removed) and an addition with new lines are not."""
    ctx = ToolContext.create(repo, Settings(_env_file=None))
    readme = "# Sample\n\nA tiny project.\n\n## Notes\n\nOne.\nTwo.\n"
    (repo / "README.md").write_text(readme)
    again = Replacement("README.md", "", "```\n" + readme + "=======\n```\n")
    with pytest.raises(ToolError) as refused:
        edit_changes(ctx, [again])
    assert "only repeats lines README.md already has" in refused.value.message
    moved = Replacement(
        "README.md",
        "A tiny project.\n\n## Notes\n\nOne.\nTwo.\n",
        "## Notes\n\nOne.\nTwo.\n\nA tiny project.\n",
    )
    assert edit_changes(ctx, [moved])
    added = Replacement("README.md", "", "\n## Usage\n\n```\nrun it\n```\n")
    assert edit_changes(ctx, [added])


def test_a_documents_lines_a_change_only_copies_keep_their_own_whitespace(
    repo: Path, settings: Settings
) -> None:
    """Dev62 infl-readme-usage: the 1.5B model anchored a new Usage section on the README's
    last lines and wrote the first of them, a reST directive's option, one space further in
    (the image lost it). Lines of a document that a change adding to it only copies are kept
    as the file has them, the last one's missing line end given by the change; controls: a
    change that only re-indents is what it says, and so is one to a file that is not prose."""
    ctx = ToolContext.create(repo, settings)
    readme = ".. image:: badge.svg\n   :alt: Build\n\nIntro.\nLast"
    (repo / "README.rst").write_text(readme)
    copied = ".. image:: badge.svg\n    :alt: Build  \n\nIntro.\nLast\n\nUsage\n-----\n\nrun it\n"
    ((_, _, after),) = edit_changes(ctx, [Replacement("README.rst", readme, copied)])
    assert after == readme + "\n\nUsage\n-----\n\nrun it\n"
    indented = readme.replace("Intro.", "  Intro.")
    ((_, _, after),) = edit_changes(ctx, [Replacement("README.rst", readme, indented)])
    assert after == indented  # only whitespace changed: meant
    (repo / "notes.py").write_text("x = 1\n")
    code = Replacement("notes.py", "x = 1\n", "if True:\n    x = 1\n")
    ((_, _, after),) = edit_changes(ctx, [code])
    assert after == "if True:\n    x = 1\n"


def test_a_new_section_that_writes_a_passage_of_its_document_again_is_refused(
    repo: Path, settings: Settings
) -> None:
    """Dev61 infl-readme-usage: the 1.5B model gave a new Usage section its heading and the
    README's paragraphs under it, and the run was told as done. A change to a document that
    writes six of its lines again in their order is refused, saying so, whatever is new
    around them; five are let through (a list item or two repeated is new text), and so is
    the same in a file that is not prose (a workflow's job written again with a change)."""
    ctx = ToolContext.create(repo, settings)
    body = "".join(f"Line {n} of the intro.\n" for n in range(8))
    (repo / "README.md").write_text("# Sample\n\n" + body)
    for copied, refused in ((6, True), (5, False)):
        lines = "".join(f"Line {n} of the intro.\n" for n in range(copied))
        section = Replacement("README.md", "", "\n## Usage\n\n" + lines + "Run it.\n")
        if refused:
            with pytest.raises(ToolError) as told:
                edit_changes(ctx, [section])
            assert "writes 6 lines README.md already has again" in told.value.message
            assert "(from `Line 0 of the intro.`)" in told.value.message
        else:
            assert edit_changes(ctx, [section])
    (repo / "ci.yml").write_text(body)
    job = Replacement("ci.yml", "", "\n" + body.replace("Line 7", "Line 8"))
    assert edit_changes(ctx, [job])


def test_an_instructions_slot_written_back_as_the_new_lines_is_refused() -> None:
    """The 1.5B model, shown the block with its slots, wrote `<the new lines>` back as the
    change: refused, saying so. A tag alone (`<div>`) is new lines like any other."""
    slot = "README.md\n<<<<<<< SEARCH\n=======\n<the new lines>\n>>>>>>> REPLACE\n"
    with pytest.raises(ToolError) as refused:
        parse_edit_blocks(slot)
    assert "the instruction's words" in refused.value.message
    said = slot.replace("<the new lines>", "<the new lines, with the Usage section added>")
    with pytest.raises(ToolError):
        parse_edit_blocks(said)  # the slot with words of the task in it (dev)
    tag = "README.md\n<<<<<<< SEARCH\n=======\n<div>\n>>>>>>> REPLACE\n"
    assert parse_edit_blocks(tag)[0].replace == "<div>\n"


def test_blank_lines_a_reply_runs_on_in_are_not_new_lines() -> None:
    """Held, the 1.5B model followed its README example with twenty blank lines before the
    block's end: a REPLACE part keeps no more blank lines at its end than its SEARCH part
    has, or one. Blank lines inside it are its own."""
    reply = "README.md\n<<<<<<< SEARCH\n=======\n\n## Usage\n\nrun it\n" + "\n" * 20
    (block,) = parse_edit_blocks(reply + ">>>>>>> REPLACE\n")
    assert block.replace == "\n## Usage\n\nrun it\n\n"
    kept = "README.md\n<<<<<<< SEARCH\nA\n\n\n=======\nB\n\n\n>>>>>>> REPLACE\n"
    assert parse_edit_blocks(kept)[0].replace == "B\n\n\n"


def test_a_block_of_prose_holds_fenced_blocks_of_its_own() -> None:
    """A README written whole holds its examples: in a block of prose a fence with a language
    opens one inside it. A block of code ends at the next fence, as before."""
    readme = "README.md\n```markdown\n# T\n\n```python\nx = 1\n```\n\nEnd.\n```\nAfter."
    ((start, end, lines),) = list(fenced_blocks(readme))
    assert lines == "# T\n\n```python\nx = 1\n```\n\nEnd.\n"
    assert readme[start:end].startswith("```markdown") and readme[end:] == "\nAfter."
    code = "Here: ```python\nprint(1)\n```\nOutput: 1\n```python\nx = 2\n```"
    assert [lines for _, _, lines in fenced_blocks(code)] == ["print(1)\n", "x = 2\n"]
    assert list(fenced_blocks("no fence at all")) == []


def test_a_whole_file_cut_after_its_last_line_keeps_only_its_lines(
    repo: Path, settings: Settings
) -> None:
    """A block cut where it began to repeat (never closed) is closed before the reply's
    code is said for it: the marker of a text block was written into the README as a
    ```python block (fresh dev jp-readme-releases-link)."""
    _changelog(repo, CHANGELOG)
    cut = "CHANGES.md\n```markdown\n" + CHANGELOG + "\n## Notes\n\n- One more line.\n"
    _, _, patches = run_keeping_patches(
        repo, settings, [cut, "I added notes."], "add a Notes section at the end of CHANGES.md"
    )
    (patch,) = patches
    (change,) = patch.files
    assert change.proposed == CHANGELOG + "\n## Notes\n\n- One more line.\n"


LINK = "https://example.org/project/releases"


@pytest.mark.parametrize("written", [False, True], ids=["made-up", "the-link"])
def test_a_web_address_the_task_gives_is_written_or_the_change_is_not_done(
    repo: Path, settings: Settings, written: bool
) -> None:
    """Asked to add a link it was given, the 1.5B model made up a list of releases, and the
    run was `completed` (fresh dev jp-readme-releases-link). A change that does not write a
    web address its task gives is not done, told once; the control writes it."""
    line = f"* Changelog: {LINK}" if written else "* v1.0.1 - Added support for Python 3.8"
    whole = f"README.md\n```markdown\n# Sample\n\nA tiny project for tests.\n\n{line}\n```"
    outcome, requests, patches = run_keeping_patches(
        repo,
        settings,
        [whole, "I added the link.", whole, "I added the link."],
        f"add the changelog link to the readme: {LINK}.",
    )
    assert patches
    if written:
        assert outcome.status == "completed"
    else:
        assert outcome.status != "completed"
        assert f"the task gives <{LINK}>, and this change does not write it" in outcome.answer
        assert any(f"<{LINK}>" in r.last_user_text() for r in requests[1:])  # told once


def test_a_file_written_whole_is_held_to_its_grammar_after_a_reply_that_is_no_change(
    repo: Path, settings: Settings
) -> None:
    """The 1.5B model answered "add an Unreleased section" with the prompt's example call
    three times (dev tc-changes-unreleased). Where the server is llama.cpp's, the next reply
    is held to the whole file's grammar: the path, then the file in one fenced block."""
    whole = (
        "README.md\n```markdown\n# Sample\n\nA tiny project for tests.\n\n## Usage\n\nRun it.\n```"
    )
    outcome, (first, second, *rest) = _after_the_example(repo, settings, whole, True)
    assert isinstance(first.body, dict) and isinstance(second.body, dict)
    assert "grammar" not in first.body
    assert second.body["grammar"].startswith('root ::= "README.md\\x0a```markdown\\x0a" body')
    assert all("grammar" not in (r.body or {}) for r in rest)
    assert "edits README.md" in outcome.answer and outcome.status == "completed"


def test_a_file_written_whole_without_the_change_is_refused(repo: Path, settings: Settings) -> None:
    """Fresh dev infl-flake8-line-length: setup.cfg written whole, unchanged but for its last
    blank line, was proposed (+0 -1) and the run `completed`. The file as it is, blank lines
    aside, is no change: refused, saying so. Control: the same with the change is proposed."""
    _changelog(repo, CHANGELOG + "\n")
    same = f"CHANGES.md\n```markdown\n{CHANGELOG}```"
    outcome, requests, patches = run_keeping_patches(
        repo,
        settings,
        [same, "I changed it.", same, "I changed it."],
        "in CHANGES.md, add a bullet to 1.1: - Fast.",
    )
    assert patches == [] and outcome.status != "completed"
    assert any("the change the task asks for is not in it" in r.last_user_text() for r in requests)
    changed = same.replace("- Added colours.\n", "- Added colours.\n- Fast.\n")
    _, _, patches = run_keeping_patches(
        repo, settings, [changed, "I changed it."], "in CHANGES.md, add a bullet to 1.1: - Fast."
    )
    assert len(patches) == 1


TABLES = (
    "# Sample\n\n## Colours\n\n| Text | Background |\n| --- | --- |\n| `red` | `on_red` |\n"
    "| `light_green` | `on_light_green` |\n| `light_blue` | `on_light_blue` |\n\n"
    "## Terminals\n\n| Terminal | bold | dark |\n| --- | --- | --- |\n| xterm | yes | yes |\n"
)


@pytest.mark.parametrize("kept", [False, True], ids=["rows-lost", "row-added"])
def test_a_prose_change_that_loses_lines_the_task_never_mentions_is_not_done(
    repo: Path, settings: Settings, kept: bool
) -> None:
    """Asked to put a row in one table, the 1.5B model replaced two rows of another table with
    it, and the run was `completed` (dev tc-readme-terminal-row). Lines a change to a text
    file removes, that nothing it adds replaces and the task never mentions, make it not done,
    told once; the control adds the row and keeps every line."""
    (repo / "README.md").write_text(TABLES)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "tables")
    row = "| Windows Terminal | yes | yes |\n"
    if kept:
        block = f"README.md\n<<<<<<< SEARCH\n| xterm | yes | yes |\n=======\n| xterm | yes | yes |\n{row}"
    else:
        old = "| `light_green` | `on_light_green` |\n| `light_blue` | `on_light_blue` |\n"
        block = f"README.md\n<<<<<<< SEARCH\n{old}=======\n{row}"
    block += ">>>>>>> REPLACE\n"
    task = "put Windows Terminal in the terminals table in the readme, yes everywhere"
    outcome, requests, patches = run_keeping_patches(
        repo, settings, [block, "I added the row.", block, "I added the row."], task
    )
    assert patches
    if kept:
        assert outcome.status == "completed", outcome.answer
    else:
        assert outcome.status != "completed"
        said = "removes lines of README.md that nothing it adds replaces"
        assert said in outcome.answer and "`| `light_green` | `on_light_green` |`" in outcome.answer
        assert sum(said in r.last_user_text() for r in requests) == 1  # told once
    assert (repo / "README.md").read_text() == TABLES  # nothing written


@pytest.mark.parametrize(
    ("path", "task", "lost"),
    [
        ("README.md", "add a Windows Terminal row", True),
        ("README.md", "remove the light rows from the colours table", False),  # asked to go
        ("README.md", "light_green and light_blue are wrong, say windows", False),  # named
        ("setup.cfg", "we dropped light support", False),
        ("bin/tool.py", "add a Windows Terminal row", False),  # told by its definitions
    ],
)
def test_lines_lost_are_those_the_task_neither_names_nor_asks_to_go(
    path: str, task: str, lost: bool
) -> None:
    """A removed line alike an added one (a value changed) is replaced, not lost."""
    old = "| `light_green` | `on_light_green` |\n| `light_blue` | `on_light_blue` |\n| a | b |\n"
    new = "| windows | yes |\n| a | c |\n"
    patch = Patch("p1", "", [FileChange.between(path, "# T\n" + old, "# T\n" + new)])
    found = lost_lines(patch, task)
    assert found == (
        {path: ["| `light_green` | `on_light_green` |", "| `light_blue` | `on_light_blue` |"]}
        if lost
        else {}
    )
    script = FileChange.between(
        "bin/tool", "#!/usr/bin/env python\n" + old, "#!/usr/bin/env python\n" + new
    )
    assert lost_lines(Patch("p2", "", [script]), task) == {}


def test_a_fence_the_block_never_opened_is_the_replys_own_markup() -> None:
    """Fresh dev sv-readme-testing: the 1.5B model opened its reply with ```python and closed
    it inside the REPLACE part, and a lone ``` went into README.rst. A closing fence with
    nothing after it, opened neither in the part nor in what it replaces, is left out;
    controls: an example's own fences, and the end of a code block the SEARCH part holds."""
    stray = (
        "README.rst\n<<<<<<< SEARCH\n=======\nTests\n=====\n\nRun it.\n```\n\n\n>>>>>>> REPLACE\n"
    )
    assert parse_edit_blocks(stray)[0].replace == "Tests\n=====\n\nRun it.\n"
    example = "README.md\n<<<<<<< SEARCH\n=======\n```python\nx = 1\n```\n>>>>>>> REPLACE\n"
    assert parse_edit_blocks(example)[0].replace == "```python\nx = 1\n```\n"
    end = "README.md\n<<<<<<< SEARCH\nx = 1\n```\n=======\nx = 2\n```\n>>>>>>> REPLACE\n"
    assert parse_edit_blocks(end)[0].replace == "x = 2\n```\n"


@pytest.mark.parametrize("says", [False, True], ids=["no-command", "pytest"])
def test_a_document_about_running_the_tests_says_the_command(
    repo: Path, settings: Settings, says: bool
) -> None:
    """Fresh dev sv-readme-testing: asked how to run the tests, the 1.5B model added a toctree
    of the repository's files, `completed`. A change to documents for a task about running
    the tests says what runs them, told once with the command the checks ran; the control
    says pytest."""
    line = "Run `python -m pytest`." if says else "See the files listed below."
    block = f"README.md\n<<<<<<< SEARCH\n=======\n\n## Testing\n\n{line}\n>>>>>>> REPLACE\n"
    outcome, requests, patches = run_keeping_patches(
        repo,
        settings,
        [block, "Done.", block, "Done."],
        "add a bit to the readme on how to run the tests",
    )
    assert patches
    said = "the task is about running the tests, and this change does not say the command"
    if says:
        assert outcome.status == "completed", outcome.answer
    else:
        assert outcome.status != "completed" and said in outcome.answer
        assert sum(said in r.last_user_text() for r in requests) == 1
