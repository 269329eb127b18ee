"""What every validation backend shares: the syntax check and how a check's result is reported."""

from __future__ import annotations

import ast
import shlex
from collections.abc import Callable, Collection
from dataclasses import replace
from pathlib import PurePosixPath

from ..base import pyast
from ..base.testruns import failing_tests, test_summary, without_warnings
from ..base.truncate import keep_tail
from ..patches.validation import CheckResult

#: A file's text in the patched tree (None: not there).
Reader = Callable[[str], "str | None"]

#: The syntax check run on every Python file a patch creates or changes.
SYNTAX_CHECK = "python3 -m py_compile"


def syntax_command(files: list[str]) -> str:
    return f"{SYNTAX_CHECK} {shlex.join(files)}"


def check_result(
    command: str,
    exit_code: int | None,
    output: str,
    duration_ms: int,
    *,
    timed_out: bool,
    timeout_s: float,
    max_chars: int,
) -> CheckResult:
    """One CheckResult, its output cut to the tail and a timeout said in words."""
    if timed_out:
        output = f"{output.rstrip()}\n[killed: still running after {timeout_s:g} s]".lstrip()
    # pytest's 5 is "no tests were collected": nothing failed (a project without tests yet)
    nothing_to_run = exit_code == 5 and "no tests ran" in output
    return CheckResult(
        command=command,
        passed=(exit_code == 0 or nothing_to_run) and not timed_out,
        output=keep_tail(without_warnings(output), max_chars),
        exit_code=exit_code,
        duration_ms=duration_ms,
        timed_out=timed_out,
    )


def compared_with_unpatched(
    result: CheckResult,
    unpatched: Callable[[str], CheckResult],
    *,
    read: Reader | None = None,
    changed: Collection[str] = (),
) -> CheckResult:
    """`result`, a failed check, said against the same command run without the patch.

    A project whose tests already fail would otherwise fail every proposal's checks, and the
    model would be sent to fix what it never touched. The failure is the patch's when the
    check passes without it, or when a test fails with it that did not fail without it (by
    pytest's test ids; without ids, when the exit status differs). A failure that was there
    before names the failing tests that use a file the patch changes (`related_tests`, read
    in the patched `tree`): a fix that leaves them failing did not fix them."""
    if result.passed or result.timed_out:
        return result
    before = unpatched(result.command)
    said = test_summary(before.output, "") or f"exit status {before.exit_code}"
    if before.timed_out:
        said = "did not finish in time"
    if before.passed or before.timed_out:
        return replace(result, without_patch=said)
    after_ids, before_ids = failing_tests(result.output), failing_tests(before.output)
    if after_ids and before_ids:
        same = all(test in before_ids for test in after_ids)
    else:
        same = result.exit_code == before.exit_code
    related = find_related_tests(after_ids, read, changed) if same and read is not None else []
    return replace(result, without_patch=said, fails_without_patch=same, related_tests=related)


def find_related_tests(test_ids: list[str], read: Reader, changed: Collection[str]) -> list[str]:
    """The tests among `test_ids` (pytest's `path::name`) whose file is one of the `changed`
    files or imports one of them (`read(path)`: a file's text in the patched tree): by its
    module, or by the package whose `__init__.py` imports it (`from semver import Version`
    uses src/semver/version.py when src/semver/__init__.py imports `.version`; dev
    sv-fix-bump-minor: a fix that left such a test failing was taken as one)."""
    modules = [_dotted(path) for path in changed if path.endswith(".py")]
    modules += [package for path in changed for package in _packages_importing(path, read)]
    files = {test_id.split("::", 1)[0] for test_id in test_ids}  # each read once
    using = {
        path
        for path in files
        if path in changed
        or any(_imports_it(name, module) for name in _imported(read(path)) for module in modules)
    }
    return [test_id for test_id in test_ids if test_id.split("::", 1)[0] in using]


def _packages_importing(path: str, read: Reader) -> list[str]:
    """The package `path` is in (dotted), when its `__init__.py` imports that module."""
    parts = PurePosixPath(path).with_suffix("").parts
    if not path.endswith(".py") or len(parts) < 2 or parts[-1] == "__init__":
        return []
    imported = _imported(read("/".join(parts[:-1]) + "/__init__.py"))
    module = ".".join(parts)
    uses = any(name == parts[-1] or f".{module}".endswith(f".{name}") for name in imported)
    return [".".join(parts[:-1])] if uses else []


def _dotted(path: str) -> str:
    parts = PurePosixPath(path).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports_it(name: str, module: str) -> bool:
    """`import name` is `module`: by its full name (`app.calc`), or by its tail on a path the
    tests set up (`calc`; `calc.ops` for `src/calc/ops.py`)."""
    return f".{module}".endswith(f".{name}")


def _imported(text: str | None) -> set[str]:
    """Every module name a test file imports, `from a import b` as both `a` and `a.b`."""
    if text is None:
        return set()
    try:
        tree = pyast.parse(text)
    except (SyntaxError, ValueError):
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if base:
                names.add(base)
            names.update(f"{base}.{alias.name}".lstrip(".") for alias in node.names)
    return names
