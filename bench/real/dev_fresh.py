"""Dev tasks written after the agent had been tuned on every other dev task: bugs told the way
people report them (no "it gives A, it should be B" template), features with defaults and a
bug to find, on `semver` (no held-out task is on it). Their first run measures the agent on
requests none of its rules were written from; after that they are dev like the others: read
their transcripts, tune on them.

A bug is one realistic commit with an ordinary message (a `Variant`), never a marker.

`LATER` (written 2026-12-06, before any run) are fresh tasks of the kinds where the held-out
split has false successes while every dev task of the kind passed: names that do not exist
(a parameter of a function that does, a function beside one that does), a nested function
that shares its name with another, tests to add, prose and `setup.py` edits. On the dev
repositories, phrased as people type them.

`THIRD` (written 2026-12-06, before any run) are fresh tasks of the kinds the held-out split
still fails most: bugs told by their symptom, features with a default, and prose edits
(a changelog, `setup.py`), on termcolor, jsonpointer and inflection. Two first drafts shared
a key or a function with a held-out task (a `reset` flag on `colored`, a flag on `humanize`);
they were replaced, before any run, by tasks on other functions.
"""

from __future__ import annotations

import re
from pathlib import Path

from . import fixtures
from .checks import (
    Check,
    all_of,
    answer_says,
    file_says,
    hidden_test,
    nested_docstring,
    new_test_for,
    parsed_file,
    says_missing,
    tests_pass,
    untouched,
)
from .dev_semver import TESTS, VERSION
from .tasks import Task, answers, edit, undo

CLI = "src/semver/cli.py"


def _bug(name: str, message: str, path: str, right: str, wrong: str) -> fixtures.Variant:
    return fixtures.Variant(name, "semver", ((message, ((path, right, wrong),)),))


NOT_EQUAL_BUG = _bug(
    "semver-match-bug",
    "match(): one tuple per operator, shorter table",
    VERSION,
    '"!=": (-1, 1),',
    '"!=": (1,),',
)
COMPATIBLE_BUG = _bug(
    "semver-compatible-bug",
    "is_compatible(): a newer minor is what compatible means",
    VERSION,
    "and (other.minor >= self.minor)",
    "and (other.minor > self.minor)",
)
NEXT_VERSION_BUG = _bug(
    "semver-nextver-bug",
    "next_version(): build and prerelease are not parts you bump here",
    VERSION,
    "validparts = cls.NAMES[:-1]",
    "validparts = cls.NAMES[:-2]",
)
ORDER_BUG = _bug(
    "semver-order-bug",
    "compare(): check the other side's prerelease first",
    VERSION,
    "        if not rc1:\n            return 1\n        elif not rc2:\n            return -1\n",
    "        if not rc1:\n            return -1\n        elif not rc2:\n            return 1\n",
)
CLI_COMPARE_BUG = _bug(
    "semver-cli-compare-bug",
    "cli compare: parse both versions up front",
    CLI,
    "    ver1 = Version.parse(args.version1)\n    return str(ver1.compare(args.version2))\n",
    "    ver2 = Version.parse(args.version2)\n    return str(ver2.compare(args.version1))\n",
)

TC = "src/termcolor/termcolor.py"
RESET_BUG = fixtures.Variant(
    "termcolor-reset-bug",
    "termcolor",
    (
        (
            "colored(): only reset what was set",
            (
                (
                    TC,
                    "    result += RESET\n",
                    "    if color is not None:\n        result += RESET\n",
                ),
            ),
        ),
    ),
)
FROM_PARTS_BUG = fixtures.Variant(
    "jsonpointer-from-parts-bug",
    "jsonpointer",
    (
        (
            "from_parts(): parts are strings already",
            (
                (
                    "jsonpointer.py",
                    "parts = [escape(str(part)) for part in parts]",
                    "parts = [str(part) for part in parts]",
                ),
            ),
        ),
    ),
)

fixtures.register(
    NOT_EQUAL_BUG,
    COMPATIBLE_BUG,
    NEXT_VERSION_BUG,
    ORDER_BUG,
    CLI_COMPARE_BUG,
    RESET_BUG,
    FROM_PARTS_BUG,
)


def _keep_build(repo: Path) -> list[str]:
    edit(
        repo,
        VERSION,
        'def finalize_version(self) -> "Version":',
        'def finalize_version(self, keep_build: bool = False) -> "Version":',
    )
    edit(
        repo,
        VERSION,
        "        return cls(self.major, self.minor, self.patch)\n",
        "        build = self.build if keep_build else None\n"
        "        return cls(self.major, self.minor, self.patch, build=build)\n",
    )
    return ["finalize_version(keep_build=False) keeps the build when asked."]


def _allow_v(repo: Path) -> list[str]:
    edit(
        repo,
        VERSION,
        "        cls: Type[T], version: String, optional_minor_and_patch: bool = False\n",
        "        cls: Type[T],\n        version: String,\n"
        "        optional_minor_and_patch: bool = False,\n        allow_v: bool = False,\n",
    )
    edit(
        repo,
        VERSION,
        "        if optional_minor_and_patch:\n            match = cls._REGEX_OPTIONAL",
        "        if allow_v and version[:1] in ('v', 'V'):\n            version = version[1:]\n"
        "        if optional_minor_and_patch:\n            match = cls._REGEX_OPTIONAL",
    )
    return ["parse(allow_v=False) strips a leading v when asked."]


def _fixed(test: str) -> Check:
    return all_of(untouched("tests"), hidden_test(test), tests_pass(TESTS))


_IMPORT = "from semver import Version\n\n\n"

TASKS: tuple[Task, ...] = (
    Task(
        "sv-fix-not-equal",
        "semver-match-bug",
        "fix",
        ("Version.parse('2.0.0').match('!=3.0.0') is False?? 2.0.0 is clearly not 3.0.0",),
        _fixed(
            _IMPORT + "def test_not_equal():\n"
            "    assert Version.parse('2.0.0').match('!=3.0.0')\n"
            "    assert Version.parse('2.0.0').match('!=1.0.0')\n"
            "    assert not Version.parse('2.0.0').match('!=2.0.0')\n"
        ),
        "hidden test: '!=' matches an older and a newer version, not the same; tests pass",
        undo(NOT_EQUAL_BUG, "'!=' matches both sides again."),
    ),
    Task(
        "sv-fix-compatible",
        "semver-compatible-bug",
        "fix",
        ("is_compatible says 1.2.0 and 1.2.5 arent compatible, same minor. pls fix",),
        _fixed(
            _IMPORT + "def test_same_minor():\n"
            "    assert Version(1, 2, 0).is_compatible(Version(1, 2, 5))\n"
            "    assert Version(1, 0, 0).is_compatible(Version(1, 1, 0))\n"
            "    assert not Version(1, 1, 0).is_compatible(Version(1, 0, 0))\n"
        ),
        "hidden test: the same minor is compatible, an older one is not; tests pass",
        undo(COMPATIBLE_BUG, "A same minor is compatible again."),
    ),
    Task(
        "sv-fix-nextver-prerelease",
        "semver-nextver-bug",
        "fix",
        (
            "next_version('prerelease') raises Invalid part now, even though the docstring uses "
            "it. can you fix that",
        ),
        _fixed(
            _IMPORT + "import pytest\n\n\ndef test_prerelease_part():\n"
            "    assert str(Version.parse('0.1.4').next_version('prerelease')) == '0.1.5-rc.1'\n"
            "    with pytest.raises(ValueError):\n"
            "        Version.parse('0.1.4').next_version('build')\n"
        ),
        "hidden test: next_version('prerelease') works, 'build' still raises; tests pass",
        undo(NEXT_VERSION_BUG, "prerelease is a valid part again."),
    ),
    Task(
        "sv-fix-cli-compare",
        "semver-cli-compare-bug",
        "fix",
        ("`pysemver compare 1.0.0 2.0.0` prints 1 but 1.0.0 is the older one",),
        _fixed(
            "from semver.cli import main\n\n\ndef test_compare(capsys):\n"
            "    assert main(['compare', '1.0.0', '2.0.0']) == 0\n"
            "    assert capsys.readouterr().out.strip() == '-1'\n"
            "    main(['compare', '3.0.0', '2.0.0'])\n"
            "    assert capsys.readouterr().out.strip() == '1'\n"
        ),
        "hidden test: the command prints -1 for an older first version, 1 for a newer; tests pass",
        undo(CLI_COMPARE_BUG, "compare compares the first version with the second again."),
    ),
    Task(
        "sv-finalize-keep-build",
        "semver",
        "feature",
        (
            "finalize_version throws away the build metadata too. add a keep_build option so i "
            "can keep it, off by default",
        ),
        all_of(
            hidden_test(
                _IMPORT + "def test_keep_build():\n"
                "    v = Version.parse('1.2.3-rc.1+b.5')\n"
                "    assert str(v.finalize_version()) == '1.2.3'\n"
                "    assert str(v.finalize_version(keep_build=True)) == '1.2.3+b.5'\n"
                "    assert str(Version.parse('1.2.3').finalize_version(keep_build=True)) == '1.2.3'\n"
            ),
            tests_pass(TESTS),
        ),
        "hidden test: finalize_version() unchanged, keep_build=True keeps +b.5; tests pass",
        _keep_build,
    ),
    Task(
        "sv-parse-allow-v",
        "semver",
        "feature",
        (
            "people keep passing 'v1.2.3' to Version.parse. give it an allow_v flag (default "
            "False) that lets a leading v through",
        ),
        all_of(
            hidden_test(
                _IMPORT + "import pytest\n\n\ndef test_allow_v():\n"
                "    assert Version.parse('v1.2.3', allow_v=True) == Version(1, 2, 3)\n"
                "    assert Version.parse('1.2.3', allow_v=True) == Version(1, 2, 3)\n"
                "    with pytest.raises(ValueError):\n"
                "        Version.parse('v1.2.3')\n"
            ),
            tests_pass(TESTS),
        ),
        "hidden test: parse('v1.2.3', allow_v=True) works, without it raises; tests pass",
        _allow_v,
    ),
    Task(
        "sv-why-release-first",
        "semver-order-bug",
        "find-bug",
        ("sorted() puts 1.0.0 before 1.0.0-rc.1 now. whats going on",),
        answer_says(
            r"\bcompare\b",
            r"prerelease|\brc1\b|\brc2\b",
            r"return -1|return 1|revers|swap|opposite|wrong way|backwards|flipped|-1",
        ),
        "answer names compare() and its prerelease branches returning the wrong sign",
        answers(
            "compare() returns -1 when only the other version has a prerelease: the two "
            "branches for a missing prerelease (not rc1, not rc2) are swapped."
        ),
    ),
)


def _wrapper_docstring(repo: Path) -> list[str]:
    edit(
        repo,
        VERSION,
        '    def wrapper(self: "Version", other: Comparable) -> bool:\n',
        '    def wrapper(self: "Version", other: Comparable) -> bool:\n'
        '        """Compare with `other` when it is a comparable type, else NotImplemented."""\n',
    )
    return ["Added the docstring to the wrapper inside _comparator."]


def _to_dict_test(repo: Path) -> list[str]:
    (repo / "tests" / "test_to_dict_parts.py").write_text(
        _IMPORT + "def test_to_dict_keeps_prerelease_and_build():\n"
        "    d = Version.parse('1.2.3-rc.1+b.5').to_dict()\n"
        "    assert d['prerelease'] == 'rc.1' and d['build'] == 'b.5'\n"
    )
    return ["Added tests/test_to_dict_parts.py."]


def _no_color_test(repo: Path) -> list[str]:
    (repo / "tests" / "test_no_color_arg.py").write_text(
        "from termcolor import colored\n\n\ndef test_no_color_argument():\n"
        "    assert colored('x', 'red', no_color=True) == 'x'\n"
    )
    return ["Added tests/test_no_color_arg.py."]


def _readme_example(repo: Path) -> list[str]:
    edit(
        repo,
        "README.md",
        "See source code for examples\n",
        "```python\n>>> from jsonpointer import resolve_pointer\n"
        ">>> resolve_pointer({'foo': [1, 2]}, '/foo/1')\n2\n```\n",
    )
    return ["The README shows resolve_pointer."]


def _drop_py37(repo: Path) -> list[str]:
    edit(repo, "setup.py", "    'Programming Language :: Python :: 3.7',\n", "")
    return ["setup.py no longer lists 3.7."]


def _compiled(text: str) -> str:
    """setup.py's text, once it compiles (a SyntaxError is the run's fault)."""
    compile(text, "setup.py", "exec")
    return text


def _classifiers_without_37(text: str) -> bool:
    return "Python :: 3.7'" not in text and all(
        f"Python :: 3.{minor}'" in text for minor in range(8, 13)
    )


LATER: tuple[Task, ...] = (
    Task(
        "sv-nested-wrapper-doc",
        "semver",
        "nested",
        ("document the wrapper function inside _comparator, it has no docstring",),
        all_of(nested_docstring("semver", VERSION, "_comparator", "wrapper"), tests_pass(TESTS)),
        "wrapper (nested in _comparator) has a docstring; no new top-level def; tests pass",
        _wrapper_docstring,
    ),
    Task(
        "sv-missing-strict",
        "semver",
        "missing",
        ("does Version.parse reject leading zeros when i pass strict=True?",),
        says_missing("strict"),
        "answer says parse has no strict argument; nothing written",
        answers(
            "Version.parse has no strict argument; it rejects leading zeros such as 01.2.3 "
            "without one."
        ),
    ),
    Task(
        "tc-missing-cprint-bold",
        "termcolor",
        "missing",
        ("whats the difference between cprint and cprint_bold",),
        says_missing("cprint_bold"),
        "answer says cprint_bold does not exist; nothing written",
        answers("termcolor has no cprint_bold: for bold, call cprint(text, attrs=['bold'])."),
    ),
    Task(
        "sv-add-test-to-dict",
        "semver",
        "add-test",
        ("can you write a test for Version.to_dict, make sure prerelease and build come through",),
        all_of(untouched("src"), new_test_for("semver", "to_dict"), tests_pass(TESTS + 1)),
        "a new test calls to_dict(); the tests pass, one more than before; src/ unchanged",
        _to_dict_test,
    ),
    Task(
        "tc-add-test-no-color",
        "termcolor",
        "add-test",
        ("add a test that colored(..., no_color=True) gives back the plain text",),
        all_of(untouched("src"), new_test_for("termcolor", "colored"), tests_pass(67)),
        "a new test calls colored(); the tests pass, one more than before; src/ unchanged",
        _no_color_test,
    ),
    Task(
        "jp-readme-example",
        "jsonpointer",
        "docs",
        (
            "the readme just says see source code for examples. put a small resolve_pointer "
            "example in it instead",
        ),
        file_says("README.md", r"resolve_pointer\(", r"RFC 6901", r"^\* PyPI:"),
        "README.md calls resolve_pointer in an example and keeps its other lines",
        _readme_example,
    ),
    Task(
        "jp-drop-py37",
        "jsonpointer",
        "docs",
        ("we dropped 3.7, take it out of setup.py",),
        parsed_file(
            "setup.py",
            _compiled,
            _classifiers_without_37,
            "3.7 gone, 3.8 to 3.12 kept",
        ),
        "setup.py still compiles; its 3.7 classifier gone, 3.8 to 3.12 kept",
        _drop_py37,
    ),
)


def _preserve_case(repo: Path) -> list[str]:
    path = "inflection/__init__.py"
    edit(
        repo,
        path,
        "def parameterize(string: str, separator: str = '-') -> str:",
        "def parameterize(string: str, separator: str = '-', preserve_case: bool = False) -> str:",
    )
    edit(
        repo,
        path,
        "    return string.lower()\n",
        "    return string if preserve_case else string.lower()\n",
    )
    return ["parameterize(preserve_case=True) keeps the case."]


def _changes_entry(repo: Path) -> list[str]:
    edit(
        repo,
        "CHANGES.md",
        "## 2.0.0 and newer\n",
        "## Unreleased\n\n- colored() and cprint() honour NO_COLOR before FORCE_COLOR.\n\n"
        "## 2.0.0 and newer\n",
    )
    return ["CHANGES.md has an Unreleased section."]


def _needs_38(repo: Path) -> list[str]:
    edit(repo, "setup.py", "python_requires='>=3.5',", "python_requires='>=3.8',")
    for minor in (5, 6, 7):
        edit(repo, "setup.py", f"        'Programming Language :: Python :: 3.{minor}',\n", "")
    return ["setup.py requires 3.8 and lists 3.8 only."]


def _requires_38(text: str) -> bool:
    return (
        re.search(r"python_requires\s*=\s*['\"]>=\s*3\.8['\"]", text) is not None
        and not any(f"Python :: 3.{minor}'" in text for minor in (5, 6, 7))
        and "Python :: 3.8'" in text
        and "Implementation :: PyPy'" in text
    )


THIRD: tuple[Task, ...] = (
    Task(
        "tc-fix-stuck-highlight",
        "termcolor-reset-bug",
        "fix",
        (
            "after i print colored('WARN', on_color='on_red') everything after it in my terminal stays red",
        ),
        all_of(
            untouched("tests"),
            hidden_test(
                "from termcolor import colored\n\n\ndef test_reset_after_highlight():\n"
                "    assert colored('x', on_color='on_red', force_color=True) == '\\x1b[41mx\\x1b[0m'\n"
                "    assert colored('x', attrs=['bold'], force_color=True) == '\\x1b[1mx\\x1b[0m'\n"
                "    assert colored('x', 'red', force_color=True) == '\\x1b[31mx\\x1b[0m'\n"
            ),
            tests_pass(66),
        ),
        "hidden test: a highlight or attribute alone ends with the reset code; 66 pass; tests/ unchanged",
        undo(RESET_BUG, "colored() always ends with the reset code again."),
    ),
    Task(
        "jp-fix-from-parts-slash",
        "jsonpointer-from-parts-bug",
        "fix",
        (
            "JsonPointer.from_parts(['a/b']) makes a pointer two levels deep (/a/b). 'a/b' is one "
            "key, i want the pointer to that key",
        ),
        all_of(
            untouched("tests.py"),
            hidden_test(
                "from jsonpointer import JsonPointer\n\n\ndef test_from_parts_escapes():\n"
                "    assert JsonPointer.from_parts(['a/b']).path == '/a~1b'\n"
                "    assert JsonPointer.from_parts(['~', 0]).path == '/~0/0'\n"
                "    assert JsonPointer.from_parts(['a/b']).resolve({'a/b': 1}) == 1\n"
            ),
            tests_pass(22),
        ),
        "hidden test: from_parts escapes '/' and '~'; 22 pass; tests.py unchanged",
        undo(FROM_PARTS_BUG, "from_parts escapes each part again."),
    ),
    Task(
        "infl-slug-preserve-case",
        "inflection",
        "feature",
        (
            "parameterize lowercases everything. rails has preserve_case for this, can we get "
            "that too? off by default",
        ),
        all_of(
            hidden_test(
                "from inflection import parameterize\n\n\ndef test_preserve_case():\n"
                "    assert parameterize('Donald E. Knuth', preserve_case=True) == 'Donald-E-Knuth'\n"
                "    assert parameterize('Donald E. Knuth') == 'donald-e-knuth'\n"
                "    assert parameterize('A b', '_', preserve_case=True) == 'A_b'\n"
            ),
            tests_pass(455),
        ),
        "hidden test: preserve_case=True keeps the case, the default lowercases; 455 pass",
        _preserve_case,
    ),
    Task(
        "tc-changes-unreleased",
        "termcolor",
        "docs",
        (
            "add an Unreleased section at the top of CHANGES.md with one bullet: NO_COLOR now "
            "wins over FORCE_COLOR",
        ),
        file_says(
            "CHANGES.md",
            r"\A\s*#+ Unreleased\s*\n+\s*[-*] .*NO_COLOR",
            r"^## 2\.0\.0 and newer",
            r"^- Added cprint function\.",
        ),
        "CHANGES.md starts with an Unreleased heading and a NO_COLOR bullet; older entries kept",
        _changes_entry,
    ),
    Task(
        "infl-requires-38",
        "inflection",
        "docs",
        (
            "we need 3.8+ now. update python_requires in setup.py and drop the 3.5, 3.6, 3.7 "
            "classifiers",
        ),
        parsed_file(
            "setup.py",
            _compiled,
            _requires_38,
            "python_requires >=3.8; 3.5 to 3.7 gone; 3.8 and PyPy kept",
        ),
        "setup.py still compiles, requires >=3.8, lists no 3.5-3.7 and keeps 3.8 and PyPy",
        _needs_38,
    ),
)
