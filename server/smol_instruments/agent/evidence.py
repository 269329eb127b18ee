"""What a task's words ask to be looked at before the first step, besides its code.

"One of the tests fails: which function has the bug?" and "What did the last commit change?"
name no code, so agent/context.py finds nothing to read, and a small model then guesses: it
searches for "git log", or answers from a test's name. An editor's agent attaches the failing
test's output or the commit it is asked about (Copilot's /fix, Continue's @git); this does the
same from the task's words:

- a task that says tests fail gets the tests' failures: the project's test command, run only
  when it would run without asking anyone (a trusted folder, a command the policy allows, run
  contained; tools/shell.py decides, as for `run_tests`), and the failing tests' names, so
  context.py shows their code and what they call;
- a task about commits gets the recent history (subjects and files) and, for the last commit,
  its changes line by line, in the functions they touch (patches/describe.py: the 1.5B model
  misread the unified diff's context lines as added code).

Each part is bounded and says what it is; nothing here writes to the repository (the test
command runs contained, like `run_tests`).
"""

from __future__ import annotations

import ast
import builtins
import difflib
import doctest
import logging
import re
import sys
import textwrap
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any, NamedTuple

from ..base.errors import ErrorType, ToolError
from ..base.pyast import parsed
from ..base.testruns import failing_lines, failing_tests, is_test_file, is_test_path, test_summary
from ..base.truncate import truncate_output
from ..patches.describe import describe_diff
from ..patches.pysource import DEFINITIONS, doctests
from ..tools.asserts import wanted_by_assertions
from ..tools.base import ToolContext
from ..tools.commands import detect_test_command, runs_unasked
from ..tools.evaluate import (
    as_literal,
    evaluate_code,
    evaluates_unasked,
    functions_giving,
    must_say,
    same_value,
    told,
    traced_failures,
)
from ..tools.files import read_repo_text
from ..tools.git import GitLogTool, run_git
from ..tools.imports import method_owners
from ..tools.reach import reach_hops
from ..tools.search import RgSearchTool
from ..tools.shell import gated_run
from . import wording
from .intent import TaskIntent
from .mentions import unfit

log = logging.getLogger(__name__)

#: How long the tests may run for a task's context (the model waits for it).
TESTS_TIMEOUT_S = 60.0
FAILURE_CHARS = 1400
DIFF_CHARS = 1500
HISTORY_COMMITS = 3
#: How long one call the task writes may run for its context.
CALL_TIMEOUT_S = 10.0
#: How many statements of a symptom call's run are shown (tools/evaluate.py TRACER).
TRACE_STEPS = 24
#: How many statements of each failing assertion's call are shown.
FAILURE_TRACE_STEPS = 12

#: A line that defines one of `names` (a regular expression) in Python or JavaScript-like code:
#: a function or class, or a module-level assignment (`ATTRIBUTES: dict[...] = {`, a table a
#: feature extends). Ripgrep's engine has no lookahead: two groups, `defined_name` reads them.
DEFINITION = (
    r"^\s*(?:export\s+)?(?:async\s+)?(?:def|class|function|func|fn)\s+({names})\b"
    r"|^({names})\s*(?::[^=]*)?=[^=]"
)


def defined_name(line: str, path: str) -> str | None:
    """The name a line of `path` defines (`DEFINITION`; an assignment only in Python), or None."""
    hit = re.match(DEFINITION.format(names=r"\w+"), line)
    return (hit.group(1) or (path.endswith(".py") and hit.group(2)) or None) if hit else None


_FAILURES = re.compile(
    r"^=+ (?:FAILURES|ERRORS) =+$(.*?)^=+ short test summary info =+$", re.M | re.S
)


@dataclass
class Evidence:
    """One part of a task's context: a title, a text, and names whose code is worth showing."""

    title: str
    body: str
    names: list[str] = field(default_factory=list)
    kind: str = "tests"  # or "history", "computed", "absent", "example"
    #: calls that could not run as written (a method named as a function): read, not run
    unrun: list[str] = field(default_factory=list)
    #: the repository's functions the calls ran through, "name (path)"
    ran_in: list[str] = field(default_factory=list)
    #: what the expressions of the statements that ran gave: (function, "expr = value")
    gave: list[tuple[str, str]] = field(default_factory=list)
    #: what ran, as "what = value", that an answer to a question tells (agent/answers.py)
    told: list[str] = field(default_factory=list)


def test_failures(ctx: ToolContext, intent: TaskIntent) -> Evidence | None:
    """The project's tests, run for a task that says they fail or a fix with no value its calls
    should give (not where an editor's buffers may differ from the disk): what fails tells a
    fix (agent/search.py). Else, or asking first, None."""
    if not (intent.failing_tests or (intent.mends and not ctx.symptom_wants and not ctx.buffers)):
        return None
    command = detect_test_command(ctx.root)
    if command is None or not runs_unasked(ctx, command):
        return None
    result, _ = gated_run(ctx, command, min(TESTS_TIMEOUT_S, ctx.settings.command_timeout_s))
    summary = test_summary(result.stdout, result.stderr)
    title = f"The tests, run with `{command}`: {summary or f'exit status {result.exit_code}'}"
    if result.exit_code == 0:
        return Evidence(title + " (they pass now)", "")
    output = result.stdout + ("\n" + result.stderr if result.stderr.strip() else "")
    failing = list(dict.fromkeys(test.rsplit("::", 1)[-1] for test in failing_tests(output)))
    found = _FAILURES.search(output)
    detail = found.group(1).strip("\n") if found else output
    detail, _ = truncate_output(detail, FAILURE_CHARS, 60, keep="head" if found else "tail")
    lines = failing_lines(output)[:10]
    body = detail.rstrip() + ("\n" + "\n".join(lines) if lines and found else "")
    if intent.change or intent.style == "bug":  # where the wrong value comes from
        traced = traced_failures(ctx, output, FAILURE_TRACE_STEPS)
        if traced:
            body += (
                "\n\nThe calls in the failing assertions, run just now, statement by statement"
                " with what the expressions gave:\n" + "\n".join(traced)
            )
    if intent.change and intent.failing_tests and not ctx.symptom_wants:  # the symptom
        ctx.symptom_wants = wanted_by_assertions(ctx, output)
        ctx.symptom_calls = tuple(ctx.symptom_wants)
    return Evidence(title, body, failing[:4])  # the failing tests' names: their code is shown


def _on_an_instance(
    ctx: ToolContext, call: str, callee: str, trace: int
) -> tuple[str, dict[str, Any]] | str:
    """`call` run on `Class()` when `callee` is the method of one class that is made with no
    arguments, as (that call, its result); else what to say of the call."""
    owners = method_owners(ctx, callee) if callee.isidentifier() else []
    if not owners:
        return f"{call} could not be run: no module of the repository defines {callee}"
    cls, module = owners[0]
    if len(owners) == 1:
        try:
            if "exception" not in evaluate_code(ctx, f"{cls}()", timeout=CALL_TIMEOUT_S):
                made = f"{cls}().{call}"
                return made, evaluate_code(ctx, made, timeout=CALL_TIMEOUT_S, trace=trace)
        except ToolError:
            pass
    return (
        f"{call} could not be run: {callee} is a method of `{cls}` ({module}): run it on an "
        f'instance, evaluate(code="{cls}(...).{callee}(...)") with the arguments they need'
    )


def by_example(ctx: ToolContext, intent: TaskIntent, files: list[str]) -> Evidence | None:
    """For a question that asks which code turns one value into another ("which function
    turns people into person?"), the repository's functions that do, found by running them
    (tools/evaluate.py `functions_giving`). A small model guessed (fresh dev
    infl-chat-singular: `inflection.inflect`, which does not exist, then the follow-up's "it"
    had nothing to point to). None when none gives it."""
    pair = wording.TURNS_INTO.search(intent.task) if not intent.calls else None
    if pair is None or intent.kind != "question" or not evaluates_unasked(ctx):
        return None
    given, wanted = (as_literal(value) for value in pair.groups())
    found, tried = functions_giving(ctx, files, given, wanted, timeout=CALL_TIMEOUT_S)
    title = (
        f"Run just now, each of the {tried} functions of the repository's code with "
        f"{given} (these are real results, not guesses); those that give {wanted}"
    )
    body = "\n".join(f"{name}({given}) = {wanted}" for name in found)
    # held to naming them (shown the run, the 1.5B model still said `humanize`: fresh dev)
    told = [f"the function giving {wanted} for {given} = {name}" for name in found]
    return Evidence(title, body, found, kind="example", told=told) if found else None


def computed_calls(ctx: ToolContext, intent: TaskIntent) -> Evidence | None:
    """The calls the task writes with literal arguments, run against the repository's code
    (tools/evaluate.py), when that runs without asking anyone: what they return or raise."""
    if not intent.calls or not evaluates_unasked(ctx):
        return None
    lines, ran, unrun, ran_in = [], [], [], []
    gave: list[tuple[str, str]] = []
    for call in intent.calls:
        # a bug told by its symptom, or any question that writes a call: where the value
        # comes from, as it ran, is what the fix or the answer needs ("where does the extra 0
        # come from?" was answered from the call's caller, the callee that made it unseen)
        asks = intent.kind == "question"
        traced = TRACE_STEPS if call in intent.symptom_calls or asks else 0
        try:
            result = evaluate_code(ctx, call, timeout=CALL_TIMEOUT_S, trace=traced)
        except ToolError as exc:
            lines.append(f"{call} could not be run: {exc.message}")
            continue
        failure, callee = str(result.get("exception", "")), call.split("(", 1)[0]
        if failure.startswith(("NameError", "AttributeError")) and f"'{callee}'" in failure:
            # a method named as a function (jp-explain-walk: "walk('-') = NameError" was told
            # as the code's answer): run on an instance of its class, when one is made with no
            # arguments; else a call of ours that could not run, said with how to run it
            found = _on_an_instance(ctx, call, callee, traced)
            if isinstance(found, str):
                lines.append(found)
                unrun.append(call)
                continue
            call, result = found
        if unfit(call, failure, intent.task):
            continue
        if said := must_say(call, result):
            ran.append(said)
        ran_in.extend(result.get("functions", []))
        for where, _, said in (step.partition("  # ") for step in result.get("trace", [])):
            function = where.partition(" (")[2].partition(")")[0]  # "path:229 (ordinal) ..."
            gave.extend((function, one) for one in said.split("; ") if said)
        if call in intent.symptom_calls:  # named when a proposal changes nothing (patch.py)
            ctx.symptom_functions[call] = list(result.get("functions", []))
            ctx.symptom_steps[call] = list(result.get("trace", []))
        lines.extend(told(call, result))
    title = "Run just now with the repository's code as it is (these are real results, not guesses)"
    return Evidence(title, "\n".join(lines), ran, "computed", unrun, ran_in, gave, told=ran)


#: The examples of docstrings run for a bug, found or told: at most this many.
EXAMPLES_RUN = 12


def docstring_examples(ctx: ToolContext, definitions: list[tuple[str, str]]) -> Evidence | None:
    """The examples the docstrings of the shown `definitions` ((name, source)) write, run in
    order with the repository's code as it is: one that does not give what its docstring says
    is where a bug shows (dev infl-ordinal-negative: `ordinal`'s says -1021 gets 'st'; it
    gives 'th'). None when there are none, or nothing runs unasked."""
    examples: list[tuple[str, doctest.Example]] = []
    for name, source in definitions:
        tree = parsed(textwrap.dedent(source))
        node = tree.body[0] if tree is not None and tree.body else None
        if isinstance(node, DEFINITIONS):
            examples += [(name, example) for example in doctests(node)]
    examples = examples[:EXAMPLES_RUN]
    if not examples or not evaluates_unasked(ctx):
        return None
    code, told_by = ["__said = []"], []
    for name, example in examples:
        source = example.source.strip()
        if example.want.strip() and _expression(source):
            told_by.append((name, source, example.want.strip()))
            source = f"__said.append(repr({source}))"
            caught = "__said.append('raises ' + type(__e).__name__)"
        else:
            caught = "pass"  # a step ("v = Version.parse(...)"): what follows needs it
        code += ["try:", textwrap.indent(source, "    "), "except Exception as __e:"]
        code.append(f"    {caught}")
    try:
        result = evaluate_code(ctx, "\n".join([*code, "__said"]), timeout=CALL_TIMEOUT_S)
        gave = ast.literal_eval(str(result.get("value")))
    except (ToolError, ValueError, SyntaxError):
        return None
    if not isinstance(gave, list) or len(gave) != len(told_by):
        return None
    # an exception where the docstring shows a value tells nothing of the code (dev
    # sv-fix-bump-minor: `ver = semver.parse(...)` gives a dict now, so `ver.bump_minor()`
    # raised): only values are compared
    ran = [
        (name, source, want, str(got))
        for (name, source, want), got in zip(told_by, gave, strict=True)
        if want.startswith("Traceback") or not str(got).startswith("raises ")
    ]
    if not ran:
        return None
    wrong = [
        f"{source} gives {got}; {name}'s docstring says {want}"
        for name, source, want, got in ran
        if not _gives_as_said(got, want)
    ]
    names = ", ".join(dict.fromkeys(f"`{name}`" for name, _, _, _ in ran))
    title = (
        f"The examples in the docstrings of {names}, run just now with the repository's code "
        f"as it is: {len(ran) - len(wrong)} of {len(ran)} give what the docstring says"
    )
    return Evidence(title, "\n".join(wrong), kind="computed")


def _expression(source: str) -> bool:
    try:
        ast.parse(source, mode="eval")
    except SyntaxError:
        return False
    return True


def _gives_as_said(got: str, want: str) -> bool:
    """Whether a run example's value (its repr, or "raises E") is what its docstring shows."""
    if want.startswith("Traceback"):
        return got.startswith("raises ") and got.split()[-1] in want.splitlines()[-1]
    return got == want or same_value(got, want) or " ".join(got.split()) == " ".join(want.split())


def missing_names(
    ctx: ToolContext,
    names: list[str],
    defined: set[str],
    files: list[str],
    *,
    change: bool = False,
    keywords: Sequence[str] = (),
) -> Evidence | None:
    """Names the task writes as code in no file of the repository, `keywords` in no Python file
    (`strict=True`: dev sv-missing-strict; `# strict = true` in a TOML comment): said, so what
    does not exist is not described; for a `change`, the names it adds, written as the task
    writes them. Not a file's name or stem (`files`), nor Python's own (`sorted`)."""
    absent = []
    basenames = {path.rsplit("/", 1)[-1] for path in files} | set(files)
    stems = {name.rsplit(".", 1)[0] for name in basenames}  # "tests/test_units.py" names one
    for name in names:
        word = name.rsplit(".", 1)[-1]
        python = hasattr(builtins, name) or name.partition(".")[0] in sys.stdlib_module_names
        if python or word in defined or name in basenames or word in stems:
            continue
        glob = "*.py" if name in keywords else None
        found = RgSearchTool(ctx).forward(rf"\b{re.escape(word)}\b", glob, max_results=1)
        if found.get("error") == ErrorType.NO_MATCH:
            absent.append(name)
    if not absent:
        return None
    said = ", ".join(f"`{name}`" for name in absent)
    title = (  # for a change, not a question's words: they made a new argument one to decline
        f"Searched every file: {said} is in no file of this repository yet. What the change "
        f"adds by that name is written {said}, as the task writes it"
        if change
        else f"Searched every file: {said} occurs nowhere in this repository's code (no "
        "function, class, variable or parameter has that name). Say so; do not describe it"
    )
    return Evidence(title, "", absent, kind="absent")


def every_definition(ctx: ToolContext, listed: set[str]) -> list[tuple[str, str, int]]:
    """(name, path, line) of every definition in the repository's `listed` files (up to
    1,000 lines that define something)."""
    pattern = DEFINITION.format(names=r"\w+")
    result = RgSearchTool(ctx).forward(pattern=pattern, max_results=1000)
    return [
        (name, match["path"], match["line"])
        for match in result.get("matches", [])
        if match["path"] in listed and (name := defined_name(match["text"], match["path"]))
    ]


def closest_names(ctx: ToolContext, absent: list[str], listed: set[str]) -> list[str]:
    """The names the repository's `listed` files define that are spelled most like the
    `absent` ones ("resolve_all": `resolve`, `resolve_pointer`), for the answer that says
    they do not exist."""
    defined = {name for name, _, _ in every_definition(ctx, listed)}
    words = [name.rsplit(".", 1)[-1] for name in absent]
    close = (difflib.get_close_matches(word, defined, n=3, cutoff=0.6) for word in words)
    return list(dict.fromkeys(name for names in close for name in names))[:3]


def tests_for(sources: list[str], files: list[str], text: Callable[[str], str | None]) -> list[str]:
    """The test file importing the module of the first of `sources` or its package (`semver`
    of src/semver/version.py, not `packaging.version`: dev sv-add-test-to-dict): new tests'."""
    for source in (path for path in sources if not is_test_path(path)):
        parts = [p for p in PurePosixPath(source).with_suffix("").parts if p != "__init__"]
        runs = [".".join(parts[i:j]) for j in range(len(parts), 0, -1) for i in range(j)]
        names = "|".join(map(re.escape, sorted(runs, key=len, reverse=True)))
        word = re.compile(rf"^\s*(?:from|import)\s+(?:{names})\b(?!\.\w)", re.M)
        found = [path for path in files if is_test_file(path) and word.search(text(path) or "")]
        if found:
            return found[:1]
    return []


def recent_history(ctx: ToolContext, intent: TaskIntent) -> Evidence | None:
    """The last commits (subject and files) and, for a question about the last one, its diff."""
    if not intent.history:
        return None
    log = GitLogTool(ctx).forward(max_count=HISTORY_COMMITS)
    commits = log.get("commits") or []
    if not commits:
        return None
    lines = [
        f"{c['sha'][:8]} {c['subject']} (changed: {', '.join(c['files']) or 'no files'})"
        for c in commits
    ]
    body = "\n".join(lines)
    title = f"The last {len(commits)} commits, newest first"
    if intent.last_commit:
        body += _last_commit_changes(ctx, commits[0]["sha"][:8])
    return Evidence(title, body, kind="history")


def _last_commit_changes(ctx: ToolContext, sha: str) -> str:
    """The last commit's changes line by line (patches/describe.py), or its diff when they
    cannot be told that way."""
    shown = run_git(ctx, "show", "--no-color", "--format=", "--patch", "HEAD")
    if shown.exit_code != 0 or not shown.stdout.strip():
        return ""

    def at_head(path: str) -> str | None:
        text = run_git(ctx, "show", f"HEAD:{path}")
        return text.stdout if text.exit_code == 0 else None

    told = describe_diff(shown.stdout, at_head, DIFF_CHARS)
    if told:
        return f"\n\nWhat the last commit ({sha}) changed, line by line:\n{told}"
    diff, _ = truncate_output(shown.stdout, DIFF_CHARS, 80)
    return f"\n\nThe diff of the last commit ({sha}):\n{diff.rstrip()}"


def reach(ctx: ToolContext, name: str, files: list[str], *, further: bool) -> list[str]:
    """The functions of the repository's code that use `name`, and when `further` those that
    reach them (`reach_hops`), in one list."""
    direct, more = reach_hops(ctx, name, files, further=further)
    return direct + more


def reaches(
    ctx: ToolContext, intent: TaskIntent, names: list[str], files: list[str]
) -> dict[str, list[str]]:
    """For a question about what uses the names it asks about: each name's `reach`."""
    if not intent.asks_callers:
        return {}
    further = intent.asks_callers == "impact"
    found = {name: reach(ctx, name, files, further=further) for name in names}
    return {name: users for name, users in found.items() if users}


#: How many steps a function may have for an explanation of it to be held to telling each.
STEPS = 10
_NESTED = (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith)
_SIMPLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr)
#: Names an explanation need not repeat: builtins that are not exceptions, the modules every
#: program uses.
_PLAIN = {n for n in dir(builtins) if not n[:1].isupper()} | {"self", "cls", "os", "sys"}


class Step(NamedTuple):
    """A step of a function, as shown ("if x: returns y", "`n` defaults to 5"), and the words
    of its code an explanation names it by (identifiers, strings, numbers)."""

    said: str
    words: frozenset[str]


class Steps(NamedTuple):
    """A function's name, its code, and its steps."""

    name: str
    code: str
    steps: list[Step]


def function_steps(
    ctx: ToolContext, intent: TaskIntent, shown: list[tuple[str, str]]
) -> Steps | None:
    """For a request to explain code: the first function of the repository's code shown for
    it, with its steps when it has from two to `STEPS` of them: each default it gives a
    parameter, each statement that calls something, each way it ends (a `return` or `raise`
    and the condition it is under). An explanation tells each (dev tc-explain-colour said
    `_can_do_colour` returns True where it returns `os.isatty(...)`; explain-slugify left out
    the lower-casing and the default of 5 words)."""
    if intent.style != "explain":
        return None
    code = [(path, name) for path, name in shown if path.endswith(".py") and not is_test_path(path)]
    if not code:
        return None
    path, name = code[0]
    try:
        text = read_repo_text(ctx, path)[1]
    except ToolError:
        return None
    tree = parsed(text)
    nodes = ast.walk(tree) if tree is not None else ()
    funcs = [n for n in nodes if isinstance(n, ast.FunctionDef) and n.name == name]
    if not funcs:
        return None  # a class, a constant: no steps of its own
    func = funcs[0]
    own = ast.walk(func)
    local = {n.id for n in own if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    args = func.args
    found = [
        Step(f"`{arg.arg}` defaults to {ast.unparse(default)}", frozenset({arg.arg, str(value)}))
        for arg, default in zip(args.args[::-1], args.defaults[::-1], strict=False)
        if isinstance(default, ast.Constant) and (value := default.value) is not None
    ][::-1]
    _steps(func.body, ("", None), found, _PLAIN | local)
    if not 2 <= len(found) <= STEPS:
        return None
    source = ast.get_source_segment(text, func, padded=True)  # a method: as indented
    return Steps(name, textwrap.dedent(source) if source else ast.unparse(func), _own(found))


def _own(steps: list[Step]) -> list[Step]:
    """Each step named by the words that tell it apart: those no other step has, else those
    beyond another step's that it holds all of (dev tc-explain-colour: "checks
    sys.stdout.fileno" told the `hasattr(sys.stdout, 'fileno')` check and, by the same words,
    the `return os.isatty(sys.stdout.fileno())` that the answer had as "returns True")."""
    counts = Counter(word for step in steps for word in step.words)
    own = []
    for step in steps:
        alone = frozenset(word for word in step.words if counts[word] == 1)
        within = [other.words for other in steps if other.words < step.words]
        beyond = step.words.difference(*within)
        own.append(step._replace(words=alone or beyond or step.words))
    return own


def _steps(
    body: list[ast.stmt], guard: tuple[str, ast.AST | None], found: list[Step], plain: set[str]
) -> None:
    """The steps of `body` (not of functions defined in it), under `guard` (as said, and its
    code), named by words not `plain` (builtins, the function's own variables: "returns
    result" tells nothing an explanation would repeat)."""
    for stmt in body:
        if isinstance(stmt, (ast.Return, ast.Raise)):
            value = stmt.value if isinstance(stmt, ast.Return) else stmt.exc
            verb = "returns" if isinstance(stmt, ast.Return) else "raises"
            said = f"{verb} {ast.unparse(value) if value else 'None' if verb == 'returns' else ''}"
            said = said.strip()  # a bare `raise`: "raises"
            words = {w for part in (guard[1], value) if part for w in _words(part, plain)}
            found.append(
                Step(f"{guard[0]}: `{said}`" if guard[0] else f"`{said}`", frozenset(words))
            )
        elif isinstance(stmt, _SIMPLE) and not guard[0]:
            calls = [n for n in ast.walk(stmt) if isinstance(n, ast.Call)]
            words = {w for call in calls for w in _words(call, plain | {"None"}, names=False)}
            if words:
                found.append(Step(f"`{_cut(ast.unparse(stmt))}`", frozenset(words)))
        elif isinstance(stmt, ast.If):
            _steps(stmt.body, (f"if {ast.unparse(stmt.test)}", stmt.test), found, plain)
            _steps(stmt.orelse, ("otherwise", None), found, plain)
        elif isinstance(stmt, ast.Try):
            _steps(stmt.body + stmt.orelse, guard, found, plain)
            for handler in stmt.handlers:
                caught = ast.unparse(handler.type) if handler.type else "any exception"
                _steps(handler.body, (f"on {caught}", handler.type), found, plain)
            _steps(stmt.finalbody, guard, found, plain)
        elif isinstance(stmt, _NESTED):
            _steps(stmt.body + getattr(stmt, "orelse", []), guard, found, plain)


def _cut(text: str, width: int = 100) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _words(node: ast.AST, plain: set[str], *, names: bool = True) -> set[str]:
    """The identifiers (three letters or more, not `plain`; variables only when `names`) and
    short strings of `node`."""
    words: set[str] = set()
    for part in ast.walk(node):
        name = part.id if isinstance(part, ast.Name) and names else getattr(part, "attr", None)
        if isinstance(part, ast.Call) and isinstance(part.func, ast.Name):
            name = part.func.id
        if isinstance(name, str) and len(name.strip("_")) >= 3 and name not in plain:
            words.add(name)
        elif isinstance(part, ast.Constant) and isinstance(part.value, str) and part.value.strip():
            words.update([part.value.strip()] if len(part.value) <= 30 else [])
    return words
