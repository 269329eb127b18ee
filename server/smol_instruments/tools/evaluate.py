"""`evaluate`: run Python against the repository's own code and report what it really gives.

A small model cannot run a regular expression, a loop or an off-by-one in its head; asked what
`average([2, 4])` returns, it reads the docstring and says 3.0. This tool runs the code: the
model's lines with the repository importable as its tests import it (the root, and `src/`
when there is one), and every name the code uses that a module of the repository defines at
its top level imported for it (`average` from `calc/ops.py`). It returns the value of the last
line when that is an expression (`repr`), what the code printed, or the exception it raised
with where. What it prints is captured, but the code sees a terminal, as where a user calls it.

It runs exactly as `run_tests` runs the project's code: only in a trusted folder, through the
command gate (tools/commands.py `decide`) with a fixed decision of its own, not a shell
command: the interpreter gets the runner (tools/runner.py) as its program and the model's
code on stdin, so nothing of the code reaches a shell or the command policy's parser.
Contained like every command (base/containment.py: no network, an empty home, a copy-on-write
view of the repository), with one difference: what it writes there is discarded with the
view, never proposed (the code is the model's, which a prompt injection in any file it read may have
written; a question's answer changes nothing). In its own process group, killed at
`EVALUATE_TIMEOUT_S`.
"""

from __future__ import annotations

import ast
import builtins
import difflib
import json
import re
from pathlib import Path
from typing import Any

from ..base import pyast
from ..base.containment import availability_for, plan_command
from ..base.errors import ErrorType, ToolError
from ..base.testruns import is_test_path
from ..base.truncate import truncate_output
from ..patches.pysource import enclosing_node
from ..safety.policy.verdicts import PolicyDecision
from .asserts import FAILED_AT, assertion_at
from .base import RepoTool, ToolContext, guarded
from .commands import python_command
from .files import read_repo_text
from .imports import call_with, find_imports, method_owners, parameter_owners
from .runner import RESULT_MARK, RUNNER, TRACER
from .shell import gated_run
from .validation import require_str

EVALUATE_TIMEOUT_S = 20.0
MAX_CODE_CHARS = 4000
RULE = "allow.evaluate"

_BUILTINS = frozenset(dir(builtins))


def used_names(code: str) -> list[str]:
    """Names `code` reads that it does not bind itself and that are not builtins."""
    tree = ast.parse(code)
    bound: set[str] = set()
    read: dict[str, None] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                read.setdefault(node.id, None)
            else:
                bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    return [name for name in read if name not in bound and name not in _BUILTINS]


def import_roots(root: Path) -> list[str]:
    """Where the repository's packages are imported from: its root, and `src/` if it has one."""
    return [str(root / "src"), str(root)] if (root / "src").is_dir() else [str(root)]


def evaluates_unasked(ctx: ToolContext) -> bool:
    """True when `evaluate` would run now without asking anyone (a trusted folder, and
    containment to run it in, unless the user turned containment off)."""
    if not ctx.trusted:
        return False
    mode = ctx.settings.command_containment
    plan = plan_command("allow", RULE, mode, availability_for(ctx.root, mode))
    return not plan.ask and plan.refuse is None


def evaluate_code(
    ctx: ToolContext,
    code: str,
    timeout: float | None = None,
    *,
    patch: str | None = None,
    trace: int = 0,
) -> dict[str, Any]:
    """Run `code` against the repository as the tool does (ToolError when it cannot run);
    with a `patch` (a unified diff), against the repository as accepting it would make it;
    with `trace`, up to that many steps of the repository's code that ran (`TRACER`)."""
    try:
        names = used_names(code)
    except SyntaxError as exc:
        raise ToolError(
            ErrorType.INVALID_ARGUMENT,
            f"evaluate: line {exc.lineno} of the code is not valid Python: {exc.msg}",
            recovery_suggestion='Pass Python lines, the last one an expression: code="f(2, 3)".',
        ) from None
    imports = find_imports(ctx, names, modules=True)
    timeout = timeout or min(EVALUATE_TIMEOUT_S, ctx.settings.command_timeout_s)
    shown = code if len(code) <= 200 else code[:197] + "..."
    decision = PolicyDecision(
        command=f"python: {shown}",
        verdict="allow",
        rule=RULE,
        reason="runs the repository's code contained, as its tests do",
    )
    sent: dict[str, Any] = {"code": code, "imports": imports, "paths": import_roots(ctx.root)}
    if trace:
        sent.update(root=str(ctx.root), trace=trace, tracer=TRACER)
    payload = json.dumps(sent)
    result, gate = gated_run(
        ctx,
        decision.command,
        timeout,
        decision=decision,
        argv=[python_command(), "-c", RUNNER],
        stdin_text=payload,
        propose_changes=False,  # the model's own code: what it writes goes with its view
        patch=patch,
    )
    stdout = result.stdout
    if RESULT_MARK not in stdout:
        tail, _ = truncate_output(result.stderr or stdout, 1500, 30, keep="tail")
        raise ToolError(
            ErrorType.COMMAND_FAILED,
            f"evaluate: the code did not finish (exit status {result.exit_code}): {tail.strip()}",
            recovery_suggestion="Evaluate something smaller, or read the code with read_file.",
            context={"rule": gate.get("rule"), "contained": gate.get("contained")},
        )
    reported = json.loads(stdout.rsplit(RESULT_MARK, 1)[1].strip().splitlines()[0])
    printed = str(reported.pop("printed", "")) + stdout.rsplit(RESULT_MARK, 1)[0].rstrip("\n")
    if not reported.pop("touched", True):  # ran none of the repository (RUNNER)
        reported["untouched"] = True
    out: dict[str, Any] = {"code": code, **reported}
    if "raised_at" in out:  # where in the repository, not where its view is mounted
        out["raised_at"] = [at.removeprefix(f"{ctx.root}/") for at in out["raised_at"]]
    if printed.strip():
        out["printed"], out["truncated"] = truncate_output(printed, 2000, 60)
    return out


class EvaluateTool(RepoTool):
    name = "evaluate"
    description = (
        "Run Python against this repository's own code and return what it really gives: the "
        "value of the last line, what it printed, or the exception it raised. Functions the "
        'repository defines are imported for you: evaluate(code="average([2, 4])"). Use it to '
        "find out what code returns or raises instead of working it out in your head."
    )
    inputs = {
        "code": {
            "type": "string",
            "description": "Python lines; the last one an expression whose value is returned",
        },
    }
    example = "evaluate(code=\"slugify('Hello World')\")"

    @guarded
    def forward(self, code: str) -> dict[str, Any]:
        code = require_str("code", code, max_chars=MAX_CODE_CHARS, example='"f(2, 3)"')
        result = evaluate_code(self.ctx, code)
        missing = _NOT_DEFINED.match(str(result.get("exception", "")))
        meant = parameter_call(self.ctx, code, missing.group(1)) if missing else None
        if meant is not None:
            call, note = meant
            return {**evaluate_code(self.ctx, call), "note": note}
        if missing and not result.get("raised_at"):
            raise self.unfinished(code, missing.group(1))
        if result.pop("untouched", False):
            raise self.outside(code)
        return result

    def outside(self, code: str) -> ToolError:
        """The error for code that ran none of the repository's code and opened none of its
        files: what it gives says nothing about the repository. Dev sv-why-release-first:
        asked why sorted() puts a release before its prerelease, the model sorted strings
        with `packaging`, and the run said its answer rested on what ran "with this
        repository's code"."""
        return ToolError(
            ErrorType.INVALID_ARGUMENT,
            "evaluate: this code ran none of the repository's code and read none of its "
            "files, so what it gives says nothing about this repository",
            recovery_suggestion=f"C{_CALL_THE_REPOSITORY[1:]}",
            context={"code": code[:200]},
        )

    def unfinished(self, code: str, name: str) -> ToolError:
        """The error for code whose own lines use `name` and nothing defines it: it ran none
        of the repository, so what it raised says nothing about it. Dev sv-why-release-first:
        the 1.5B model ran `sorted(versions, key=float)` of its own, got the NameError and
        answered "The `versions` list is not defined in the given code", told `completed` as
        an answer grounded in what ran. A NameError the repository's code raises is its
        result (control in the tests)."""
        owners = method_owners(self.ctx, name)
        where = (
            f"it is a method of `{owners[0][0]}` ({owners[0][1]}): call it on an instance"
            if owners
            else "no module of the repository defines it at its top level"
        )
        return ToolError(
            ErrorType.INVALID_ARGUMENT,
            f"evaluate: `{name}` is not defined in this code, and {where}; the code ran "
            "nothing of the repository, so its NameError says nothing about it",
            recovery_suggestion=(
                f"Define `{name}` in the code before using it (import it, or `{name} = ...`), "
                f"or {_CALL_THE_REPOSITORY}"
            ),
            context={"code": code[:200]},
        )


#: How a recovery suggestion tells the model to run the repository instead.
_CALL_THE_REPOSITORY = (
    'call what the repository defines: evaluate(code="<function>(<literal arguments>)"). To '
    'find a function, rg_search(pattern="def <word>").'
)
#: The exception of code that uses a name nothing defines.
_NOT_DEFINED = re.compile(r"NameError: name '(\w+)' is not defined")


def parameter_call(ctx: ToolContext, code: str, name: str) -> tuple[str, str] | None:
    """When `code` uses `name` as a function or a variable and it is a parameter of the
    repository's function, the call that passes it, and what to say of the swap. Dev
    tc-on-color-red: asked about passing on_color='red' to colored, the 1.5B model ran
    `on_color('red')` and answered from the NameError that colored has no on_color; told the
    call to run instead, it retold that as its answer, three replies of three."""
    owners = parameter_owners(ctx, name)
    if not owners:
        return None
    function, path, line, _ = owners[0]
    calls = [node for node in ast.walk(ast.parse(code)) if isinstance(node, ast.Call)]
    given = [c.args[0] for c in calls if ast.unparse(c.func) == name and len(c.args) == 1]
    call = call_with(owners[0], name, ast.unparse(given[0]) if given else "...")
    note = (
        f"`{name}` is not a function or a variable here (`{code[:80]}` raised NameError): it "
        f"is a parameter of `{function}` ({path}, line {line}), so this ran {call} instead"
    )
    return call, note


#: How many statements of a symptom call's run with a patch are shown when it is still wrong.
PATCHED_TRACE_STEPS = 12
#: How many failing assertions are run, and for how long each.
ASSERTIONS_RUN = 3
ASSERTION_TIMEOUT_S = 10.0


def assertion_values(
    ctx: ToolContext, files: dict[str, tuple[str | None, str]], output: str
) -> list[str]:
    """What the calls in a proposed test's failing assertions really give, run against the
    repository's code with the test file's imports: "truncate('A man', 3) returns 'A...'".

    A small model writes a test's expected value from its head (asked to test `truncate`, the
    1.5B model expected the whole string back, and proposed the same test three times although
    pytest's output showed the real value); the value, run, is what a test should pin. Only
    for `files` (path -> its text before and as proposed) that are all tests (with the code
    under test changed too, the repository's code is not what the test runs), and only the
    assertions on lines the proposal wrote. [] when nothing can be run."""
    if not files or not all(is_test_path(path) for path in files) or not evaluates_unasked(ctx):
        return []
    told: list[str] = []
    for side, result in failing_assertion_runs(ctx, files, output, written_only=True):
        if "value" in result:
            told.append(f"{side} returns {result['value']}")
        elif "exception" in result and not result["exception"].startswith("NameError"):
            told.append(f"{side} raises {result['exception']}")
    return told


def traced_failures(ctx: ToolContext, output: str, trace: int) -> list[str]:
    """The calls in the failing assertions pytest's `output` points at, each run with the
    repository's code and traced (`TRACER`): what it gives, and how, statement by statement.
    [] when nothing can be run unasked."""
    if not evaluates_unasked(ctx):
        return []
    files: dict[str, tuple[str | None, str]] = {}
    for path, _ in FAILED_AT.findall(output):
        if path not in files:
            try:
                files[path] = (None, read_repo_text(ctx, path)[1])
            except ToolError:
                continue
    runs = failing_assertion_runs(ctx, files, output, trace=trace)
    return [line for side, result in runs for line in told(side, result)]


def failing_assertion_runs(
    ctx: ToolContext,
    files: dict[str, tuple[str | None, str]],
    output: str,
    *,
    written_only: bool = False,
    trace: int = 0,
) -> list[tuple[str, dict[str, Any]]]:
    """The sides of the failing assertions pytest's `output` points at (in `files`: path ->
    its text before and now) that call something, each run with its test file's imports
    (`evaluate_code`, traced with `trace`): up to ASSERTIONS_RUN. With `written_only`, only
    assertions on lines that are not the text before's."""
    runs: list[tuple[str, dict[str, Any]]] = []
    seen: set[str] = set()
    for path, line in dict.fromkeys(FAILED_AT.findall(output)):
        old, new = files.get(path, (None, ""))
        tree = pyast.parsed(new)
        if tree is None or len(seen) >= ASSERTIONS_RUN:
            continue
        imports = module_imports(tree)
        written = written_lines(old, new) if written_only else None
        for side in _asserted_calls(tree, int(line), written):
            if side in seen or len(seen) >= ASSERTIONS_RUN:
                continue
            seen.add(side)
            try:
                code = f"{imports}\n{side}"
                runs.append((side, evaluate_code(ctx, code, ASSERTION_TIMEOUT_S, trace=trace)))
            except ToolError:
                continue
    return runs


def module_imports(tree: ast.Module) -> str:
    """A test file's top-level imports, as source: what its assertions' calls are run with."""
    imports = (node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom)))
    return "\n".join(map(ast.unparse, imports))


def written_lines(old: str | None, new: str) -> set[int]:
    """The 1-based lines of `new` that are not `old`'s."""
    lines = new.splitlines()
    matcher = difflib.SequenceMatcher(None, (old or "").splitlines(), lines, autojunk=False)
    return {
        j + 1
        for tag, _, _, j1, j2 in matcher.get_opcodes()
        if tag in ("replace", "insert")
        for j in range(j1, j2)
    }


def _asserted_calls(tree: ast.Module, line: int, written: set[int] | None) -> list[str]:
    """The sides of the assertion at `line` that call something, as source, when the
    assertion is on a line in `written` (any line: None)."""
    node = assertion_at(tree, line)
    span = range(node.lineno, (node.end_lineno or node.lineno) + 1) if node is not None else ()
    if node is None or (written is not None and not written.intersection(span)):
        return []
    test = node.test
    sides = [test.left, *test.comparators] if isinstance(test, ast.Compare) else [test]
    local = _test_locals(tree, node)
    return [
        ast.unparse(side)
        for side in sides
        if any(isinstance(p, ast.Call) for p in ast.walk(side))
        # run alone, a side that reads the test's parameters or variables raises NameError,
        # told as what the code gives (dev tc-no-color-wins: a parametrized test's arguments)
        and not any(isinstance(p, ast.Name) and p.id in local for p in ast.walk(side))
    ]


def _test_locals(tree: ast.Module, node: ast.stmt) -> set[str]:
    """The names the function holding `node` binds itself: its parameters (pytest's
    parametrized values and fixtures) and the variables it assigns."""
    function = enclosing_node(tree, node.lineno)
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return set()
    return {n.arg for n in ast.walk(function.args) if isinstance(n, ast.arg)} | {
        n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }


def gives(result: dict[str, Any], *, where: bool = False) -> str:
    """What a run of `evaluate_code` gave, in words: "returns 3", "raises ValueError" (with
    `where`, its whole message and the line that raised it)."""
    if "exception" not in result:
        return f"returns {result.get('value', 'nothing')}"
    if not where:
        return f"raises {str(result['exception']).split(':', 1)[0]}"
    at = (result.get("raised_at") or [""])[-1]
    return f"raises {result['exception']}" + (f" (at {at})" if at else "")


def printed_as(result: dict[str, Any]) -> str | None:
    """How a returned object prints, when that is not its repr ("1.2.3-rc.2" for
    `Version(major=1, ..., prerelease='rc.2')`): what a person asking means by its value (dev
    sv-prerelease-bump: shown the repr alone, the 1.5B model never said the version)."""
    text = result.get("text")
    if "value" not in result or result.get("type") == "str" or not isinstance(text, str):
        return None
    return text if text != result["value"] else None


def must_say(call: str, result: dict[str, Any]) -> str | None:
    """What an answer about a run of `call` must say, as "call = what": the value as it
    prints, or the exception's name; None when it gave neither."""
    if "exception" not in result and "value" not in result:
        return None
    said = printed_as(result) or str(result.get("value", result.get("exception", "")))
    return f"{call} = {said.split(':', 1)[0] if 'exception' in result else said}"


def told(call: str, result: dict[str, Any]) -> list[str]:
    """A run of `call` as the model is told it, one formatter for every place that shows one
    (the task's calls, the failing assertions, a symptom's call with a patch): what it gave,
    printed or could not import, then what ran, statement by statement."""
    lines = [f"{call} {gives(result, where=True)}"]
    if printed_as(result):
        lines.append(f"  (str() of it, as print shows it: {result['text']})")
    if result.get("hint"):
        lines.append(f"  ({result['hint']})")
    if result.get("printed"):
        lines.append(f"  and prints: {str(result['printed']).strip()[:300]}")
    lines.extend(f"  (could not import: {problem})" for problem in result.get("import_errors", []))
    lines.extend(f"  where {operand}" for operand in result.get("operands", []))
    if result.get("trace"):
        lines.append("  what ran, statement by statement, with what its expressions gave:")
        lines.extend(f"    {step}" for step in result["trace"])
    return lines


def symptom_checks(ctx: ToolContext, diff: str, calls: tuple[str, ...]) -> list[dict[str, Any]]:
    """Each call a task names with its symptom, run with a proposed `diff`: a check (as
    validation reports them). Where the task writes the value the call should give
    (`ctx.symptom_wants`), the check passes when the call gives that value with the patch.
    Otherwise it passes when the patch changes what the call gives: necessary, not
    sufficient (on the 1.5B model, a "fix" that copied the function unchanged was otherwise a
    proposal like any other). [] when nothing can be run unasked."""
    if not calls or not evaluates_unasked(ctx):
        return []
    checks: list[dict[str, Any]] = []
    for call in calls[:ASSERTIONS_RUN]:
        wanted, before = ctx.symptom_wants.get(call), ""
        try:
            if wanted is None:
                before = gives(evaluate_code(ctx, call, timeout=ASSERTION_TIMEOUT_S))
            result = evaluate_code(
                ctx, call, timeout=ASSERTION_TIMEOUT_S, patch=diff, trace=PATCHED_TRACE_STEPS
            )
        except ToolError:
            continue
        after = gives(result)
        if wanted is not None:
            passed = "value" in result and (
                same_value(result["value"], wanted)
                or ("text" in result and same_value(repr(result["text"]), wanted))
            )
            said = f"{call} {after} with this patch; the task says it should give {wanted}"
            said += "" if passed else ": not yet, so the fix is not right"
            if not passed and result.get("trace"):
                said += "\nWhat ran with the patch:\n" + "\n".join(told(call, result)[1:])
        else:
            passed = after != before
            said = f"{call} {before} without this patch and {after} with it"
            said += "" if passed else ": the same, so the patch does not change what it gives"
        checks.append(
            {
                "command": f"{call} (the call that gives the wrong value)",
                "symptom": True,
                "passed": passed,
                "output": said,
                "exit_code": 0 if passed else 1,
            }
        )
    return checks


def same_value(shown: str, wanted: str) -> bool:
    """Whether a value as `evaluate` shows it (its repr) is the literal `wanted` (3 == 3.0)."""
    try:
        return bool(ast.literal_eval(shown) == ast.literal_eval(wanted))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return shown == wanted


#: The functions `functions_giving` runs, at most.
EXAMPLE_FUNCTIONS = 80


def functions_giving(
    ctx: ToolContext, files: list[str], given: str, wanted: str, *, timeout: float
) -> tuple[list[str], int]:
    """The top-level functions of the repository's code (of `files`, tests aside) that give
    `wanted` for `given` (Python literals), each run once in one contained run as `evaluate`
    runs code, public ones first, `EXAMPLE_FUNCTIONS` at most; and how many were run. One
    that raises gives nothing; what they write is discarded with the view."""
    functions: dict[str, None] = {}
    for path in (p for p in files if p.endswith(".py") and not is_test_path(p)):
        try:
            tree = pyast.parse(read_repo_text(ctx, path)[1])
        except Exception:  # unreadable or not Python: none of its functions
            continue
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.args.args and node.name[:4] != "test":
                functions.setdefault(node.name, None)
    tried = sorted(functions, key=lambda name: name.startswith("_"))[:EXAMPLE_FUNCTIONS]
    code = ["__gave = {}"] + [
        f"try:\n    __gave[{name!r}] = repr({name}({given}))\nexcept Exception:\n    pass"
        for name in tried
    ]
    try:
        result = evaluate_code(ctx, "\n".join([*code, "__gave"]), timeout=timeout)
        gave = ast.literal_eval(str(result.get("value")))
    except (ToolError, ValueError, SyntaxError):
        return [], len(tried)
    return [name for name, value in gave.items() if same_value(value, wanted)], len(tried)


def as_literal(value: str) -> str:
    """A value a question writes, as Python: a literal as it is, else a string."""
    try:
        ast.literal_eval(value)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return repr(value.strip("'\""))
    return value
