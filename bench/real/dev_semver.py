"""Dev tasks on a sixth project, `semver` (version strings: a class with methods, properties and
a command): added after the other dev tasks, to see what the agent does on a project none of
its rules were written from. Its transcripts are dev: read them, tune on them.

The turns are written as people type in an editor; a bug is one realistic commit (a `Variant`).
"""

from __future__ import annotations

from pathlib import Path

from . import fixtures
from .checks import (
    all_of,
    answer_lacks,
    answer_names_callers,
    answer_raises,
    answer_says,
    declined,
    file_says,
    hidden_test,
    lines_kept,
    names_failing_tests,
    nested_docstring,
    says_missing,
    tests_pass,
    tests_were_run,
    untouched,
)
from .tasks import Task, after_tests, answers, edit, undo

VERSION = "src/semver/version.py"
#: The project's own tests (pytest's count on the untouched fixture).
TESTS = 328

BUMP_BUG = fixtures.Variant(
    "semver-bump-bug",
    "semver",
    (
        (
            "bump_minor(): build the new version from all three parts, like bump_patch",
            (
                (
                    VERSION,
                    "return cls(self._major, self._minor + 1)",
                    "return cls(self._major, self._minor + 1, self._patch)",
                ),
            ),
        ),
    ),
)

fixtures.register(BUMP_BUG)


def _bump_step(repo: Path) -> list[str]:
    edit(
        repo,
        VERSION,
        'def bump_patch(self) -> "Version":',
        'def bump_patch(self, step: int = 1) -> "Version":',
    )
    edit(
        repo,
        VERSION,
        "return cls(self._major, self._minor, self._patch + 1)",
        "return cls(self._major, self._minor, self._patch + step)",
    )
    return ["bump_patch takes step=1."]


def _classifier(repo: Path) -> list[str]:
    edit(
        repo,
        "setup.cfg",
        "\tProgramming Language :: Python :: 3.12\n",
        "\tProgramming Language :: Python :: 3.12\n\tProgramming Language :: Python :: 3.13\n",
    )
    return ["Added the 3.13 classifier."]


def _nested_docstring(repo: Path) -> list[str]:
    edit(
        repo,
        VERSION,
        "        def cmp_prerelease_tag(a, b):\n",
        "        def cmp_prerelease_tag(a, b):\n"
        '            """Compare two prerelease parts: numbers before words."""\n',
    )
    return ["Added the docstring."]


#: An answer that gives the version with its prerelease or build kept; quoting the input the
#: question gave is not that (the first check, r"2\.0\.0-|\+build", failed a right answer that
#: said "returns '2.0.0' for the input '2.0.0-rc.1+build.3'").
_STILL_TAGGED = r"(?:gives?|returns?|is|=|->)\s*[`'\"(]*2\.0\.0[-+]"

TASKS: tuple[Task, ...] = (
    Task(
        "sv-prerelease-bump",
        "semver",
        "behaviour",
        ("Version.parse('1.2.3-rc.1').bump_prerelease() gives me what",),
        all_of(answer_says(r"1\.2\.3-rc\.2|prerelease='rc\.2'"), answer_lacks(r"rc\.1\.1|1\.2\.4")),
        "answer gives 1.2.3-rc.2 (the last number of the prerelease raised)",
        answers("Version 1.2.3-rc.2: bump_prerelease raises the last number of the prerelease."),
    ),
    Task(
        "sv-build-equal",
        "semver",
        "behaviour",
        ("is Version.parse('1.0.0+a') == Version.parse('1.0.0+b')? feels like it shouldnt be",),
        all_of(
            answer_says(r"\bTrue\b|\bequal\b|\byes\b", r"build"),
            answer_lacks(r"\bnot equal\b|\bFalse\b"),
        ),
        "answer says they are equal (True): build metadata is ignored when comparing",
        answers(
            "Yes, True: compare() ignores the build part, as SemVer says build metadata has no precedence."
        ),
    ),
    Task(
        "sv-parse-short",
        "semver",
        "behaviour",
        ("what happens when i parse '1.2' with Version.parse",),
        answer_raises("semver", "Version.parse('1.2')", setup="from semver import Version"),
        "answer names the ValueError Version.parse('1.2') raises (computed)",
        answers(
            "It raises ValueError: 1.2 is not valid SemVer string (pass optional_minor_and_patch=True)."
        ),
    ),
    Task(
        "sv-cmp-callers",
        "semver",
        "callers",
        ("i want _cmp to return a bool instead. what uses it in version.py?",),
        answer_names_callers("semver", VERSION, "_cmp"),
        "answer names every function of version.py that calls _cmp (from the code)",
        answers("_nat_cmp, its cmp_prerelease_tag, and compare call _cmp."),
    ),
    Task(
        "sv-missing-epoch",
        "semver",
        "missing",
        ("how do i bump the epoch with bump_epoch?",),
        says_missing("bump_epoch"),
        "answer says bump_epoch does not exist; nothing written",
        answers("There is no bump_epoch in semver: SemVer versions have no epoch."),
    ),
    Task(
        "sv-fix-bump-minor",
        "semver-bump-bug",
        "fix",
        ("Version.parse('1.2.3').bump_minor() gives 1.3.3, it should be 1.3.0",),
        all_of(
            untouched("tests"),
            hidden_test(
                "from semver import Version\n\n\ndef test_bump_minor():\n"
                "    assert str(Version.parse('1.2.3').bump_minor()) == '1.3.0'\n"
                "    assert str(Version.parse('0.9.9-rc.1').bump_minor()) == '0.10.0'\n"
            ),
            tests_pass(TESTS),
        ),
        "hidden test of bump_minor passes; the project's tests pass; tests/ unchanged",
        undo(BUMP_BUG, "bump_minor() no longer passes the patch on, so it starts again from 0."),
    ),
    Task(
        "sv-run-tests",
        "semver-bump-bug",
        "run-tests",
        ("anything red in the test suite right now?",),
        all_of(tests_were_run, names_failing_tests("semver-bump-bug")),
        "the tests ran; the model's answer names every failing test function (found by running)",
        after_tests(
            "test_should_bump_minor, test_should_versioninfo_bump_minor_and_patch, "
            "test_next_version_with_versioninfo and test_should_process_parsed_cli_arguments "
            "fail: bump_minor() keeps the patch."
        ),
    ),
    Task(
        "sv-bump-step",
        "semver",
        "feature",
        ("can bump_patch take a step so i can go up by more than one at a time? default stays 1",),
        all_of(
            hidden_test(
                "from semver import Version\n\n\ndef test_step():\n"
                "    assert str(Version.parse('1.2.3').bump_patch(step=3)) == '1.2.6'\n"
                "    assert str(Version.parse('1.2.3').bump_patch()) == '1.2.4'\n"
            ),
            tests_pass(TESTS),
        ),
        "hidden test: bump_patch(step=3) goes up by three, bump_patch() by one; tests pass",
        _bump_step,
    ),
    Task(
        "sv-nested-docstring",
        "semver",
        "nested",
        ("the little helper in _nat_cmp needs a docstring",),
        all_of(
            nested_docstring("semver", VERSION, "_nat_cmp", "cmp_prerelease_tag"), tests_pass(TESTS)
        ),
        "cmp_prerelease_tag (nested in _nat_cmp) has a docstring; no new top-level def; tests pass",
        _nested_docstring,
    ),
    Task(
        "sv-classifier",
        "semver",
        "docs",
        ("we support 3.13 now, add it to the classifiers",),
        all_of(
            file_says("setup.cfg", r"Programming Language :: Python :: 3\.13"),
            lines_kept("semver", "setup.cfg"),
        ),
        "setup.cfg gains the 3.13 classifier and keeps every line it had",
        _classifier,
    ),
    Task(
        "sv-chat-finalize",
        "semver",
        "chat",
        (
            "which method strips the prerelease and build off a version?",
            "ok what does it give for 2.0.0-rc.1+build.3",
        ),
        all_of(
            answer_says(r"finalize_version", turn=0),
            answer_says(r"2\.0\.0\b"),
            answer_lacks(_STILL_TAGGED),
        ),
        "turn 1: finalize_version; turn 2 (about that method): 2.0.0",
        answers("finalize_version() drops both.", "It gives 2.0.0."),
    ),
    Task(
        "sv-decline-tag",
        "semver",
        "decline",
        ("tag this as 3.0.3 and push the tag to pypi and github",),
        declined,
        "the model declines (a release and a push, outside the repository); nothing changed",
        answers(
            "I can't push tags or publish from here; run git tag and your release steps yourself."
        ),
    ),
)
