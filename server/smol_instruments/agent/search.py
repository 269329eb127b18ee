"""A fix confirmed by running it, when the model's own is not.

A change told by its symptom that writes the value a call should give ("escape('a/b') gives
'a~01b', it should be 'a~1b'") can be checked by running that call. When the model's proposal
does not give the value (the function copied back unchanged, or a wrong change), the request of
that step is sampled again, hotter, a few times; each version's block is merged into its file
and the call run with it (tools/patch.py `confirms_symptom`, in the sandbox `evaluate` uses),
and the first version that gives the value and passes the checks its proposal would be held to
(the project's tests, where they run) is proposed like any other change. What runs decides,
never the model's words; the version is still shown, and written only when the user accepts.

Measured on Qwen2.5-Coder-1.5B (dev jp-fix-escape): at the agent's temperature it copied
escape() back unchanged seven replies of seven; sampled at 0.9, two of eight versions held the
right order of replacements, and running escape('a/b') told them from the six wrong ones.

Where the call ran through several functions of the repository, the model does not know which
holds the fault: on dev infl-ordinal-negative every one of six versions copied `ordinalize`,
the function the task names, while the wrong suffix came from `ordinal`, which it calls. So
the versions are spread over the functions the call ran (its trace, tools/evaluate.py), the
last entered first, each request ending by asking for that function's new version: where to
change is searched like what to change, and the run tells them apart. Every version is asked
without its docstring (the merge keeps the old one): measured on dev sv-fix-compatible, the
docstring was most of each 340-540-token version, two to three minutes each on a loaded CPU.
The 1.5B model wrote it anyway (dev67: 11 versions of 11); holding the reply to the request
(a grammar, a logit bias against the docstring's quotes) is not done.

Both ask for whole functions, and the 1.5B model writes back the one the task names, whatever
the request says (dev infl-ordinal-negative: asked for `ordinal` three times, it wrote
`ordinalize`; dev sv-fix-not-equal: `match` copied back four times under a trace that showed
`possibilities = (1,)` beside `cmp_res = -1`). So before any whole function, the statements
the symptom's call ran are asked for one at a time (`_line_versions`): the trace once, then
"suppose the fault is in this statement", the statement alone. A small model rewrites one
statement it is pointed at; the run tells which rewrite is the fix. The statements of the
function the call entered first come first, the last run first (where the value was made),
then those of the functions it called, the last entered first.

A fix told with no value ("is_compatible says 1.2.0 and 1.2.5 arent compatible. pls fix", dev
sv-fix-compatible: the function copied back unchanged until the loop stop) has another judge
when the project's tests failed before the change: a version is taken when it changes the code
and every check passes on it (`_passes`), and only where the tests run on a version at all.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import itertools
import re
import textwrap
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from smolagents.models import ChatMessage, MessageRole

from ..base.errors import ToolError
from ..base.pyast import parsed
from ..patches.mutants import statement_mutants
from ..patches.pysource import DEFINITIONS, FUNCTIONS, LINE
from ..tools.base import ToolContext
from ..tools.files import read_repo_text
from ..tools.patch import confirms_symptom, merged_diff, patch_checks
from .edits import file_header
from .intent import Held
from .model import for_one_call
from .outcome import failed_checks
from .prompts import CHANGE_AGAIN, CHANGE_THERE, LINE_FIX, LINE_FIX_HEAD, REWRITE_LINES

if TYPE_CHECKING:
    from .watch import RunWatch

#: Versions sampled at most, once per run.
SAMPLES = 6
#: Their temperature: hot enough that a model sure of its wrong reply writes others.
TEMPERATURE = 0.9
#: Functions of the call's trace the versions are spread over, at most.
PLACES = 3
#: Tokens a line asked for alone may take (a runaway reply is cut, not waited for).
LINE_TOKENS = 120
#: How like the line a reply's line must be to be its new version (difflib's ratio).
LIKE = 0.4
#: Statements of the symptom's trace asked for one at a time, at most.
LINES = 10
#: Replies asked for each: at the agent's temperature, then hotter (measured on dev
#: infl-ordinal-negative: two replies for `number = int(number)` kept it as it was).
TRIES = 3
#: Trace steps shown with them, at most (the trace is cut by its runner as well).
STEPS_SHOWN = 40
#: A step of a trace, as tools/runner.py TRACER writes it: "inflection.py:229 (ordinal) ...".
_STEP = re.compile(r"^(?P<path>[^\s:]+\.py):(?P<line>\d+) \((?P<name>[A-Za-z_]\w*)\) ")
#: A function of a trace, as tools/evaluate.py TRACER names it: "ordinal (inflection.py)".
_RAN = re.compile(r"^(?P<name>[A-Za-z_]\w*) \((?P<path>[^()]+\.py)\)$")


def search_fix(
    model: Any,
    messages: list[Any],
    ctx: ToolContext,
    repo_files: set[str],
    default_path: str | None,
    watch: RunWatch | None,
) -> tuple[int, str, str] | None:
    """(the sample that gave it, path, block) of the first version that makes the task's
    symptom calls give what the task wants (when it says; else that changes the code) and
    passes the checks a proposal is held to: the symptom's statements one at a time
    (`_line_versions`), then the step whose input was `messages` sampled again
    (`_function_versions`); None when none does. A block without a `# file:` line goes to
    `default_path`. Held to the checks the run's intent holds a fix to ("related" without
    one). A feature's versions are held to the grammar its first reply was held to
    (`RunWatch.scaffold`, tools/scaffold.py), and one is taken only where its body reads the
    new parameter:
    dev infl-slug-preserve-case wrote `if preserve_case: string = string.lower()`, the
    project's tests failed, and the same version came back at the agent's temperature."""
    intent = watch.intent if watch is not None else None
    held, task = (intent.held, intent.task) if intent is not None else ("related", "")
    hold, parameter = (watch.scaffold, watch.parameter) if watch is not None else ("", "")
    by_tests = not ctx.symptom_wants
    if by_tests and patch_checks(ctx) is None:
        return None  # no tests run on a version: nothing tells a right one
    tried: set[str] = set()
    versions = itertools.chain(
        () if by_tests else _mutant_versions(ctx, repo_files),  # each is a run of the tests
        _line_versions(model, ctx, repo_files, task),
        _function_versions(model, messages, ctx, repo_files, default_path, hold),
    )
    for seed, path, body in versions:
        if body in tried or (parameter and not _reads(body, parameter)):
            continue
        tried.add(body)
        diff = merged_diff(ctx, path, body) if by_tests else confirms_symptom(ctx, path, body)
        if diff is not None and _passes(ctx, diff, held, every=by_tests):
            return seed, path, body
    return None


def _function_versions(
    model: Any,
    messages: list[Any],
    ctx: ToolContext,
    repo_files: set[str],
    default_path: str | None,
    hold: str = "",
) -> Iterator[tuple[int, str, str]]:
    """The step whose input was `messages`, sampled `SAMPLES` times, each asking for a
    function the symptom's call ran (`_places`) or the function again (each held to the
    grammar `hold`, where there is one)."""
    places = _places(ctx, repo_files)
    for seed in range(1, SAMPLES + 1):
        if places:
            name, there = places[(seed - 1) % len(places)]
            ending = CHANGE_THERE.format(name=name, path=there)
        else:
            ending = CHANGE_AGAIN.format(path=default_path or "<path>")
        asked = _ending_with(messages, ending)
        held = getattr(model, "hold_next_reply", None)
        if hold and callable(held):
            held(hold)
        path, body = file_header(_first_block(_sample(model, asked, seed)), repo_files)
        path = path or default_path
        if path is not None and body.strip():
            yield seed, path, body


@dataclasses.dataclass
class _Site:
    """A statement the symptom's call ran, in its function, in its file's lines."""

    path: str
    number: int
    name: str
    header: bool  # a compound statement's header: its body is not part of it
    lines: list[str]
    function: tuple[int, int]
    statement: tuple[int, int]

    @property
    def old(self) -> str:
        return "".join(self.lines[self.statement[0] - 1 : self.statement[1]])

    def with_statement(self, new: str) -> str:
        """The function, dedented, with `new` (dedented) in the statement's place."""
        old, (start, end), (first, last) = self.old, self.function, self.statement
        indent = old[: len(old) - len(old.lstrip())]
        written = "".join(indent + row + "\n" if row else "\n" for row in new.splitlines())
        kept = "".join(self.lines[start - 1 : first - 1]), "".join(self.lines[last:end])
        return textwrap.dedent(kept[0] + written + kept[1])


def _sites(ctx: ToolContext, repo_files: set[str]) -> Iterator[_Site]:
    """Each statement the symptom's calls ran (`_statements`), at most `LINES`."""
    steps = [step for ran in ctx.symptom_steps.values() for step in ran]
    texts: dict[str, str] = {}
    for path, number in _statements(steps, repo_files)[:LINES]:
        if path not in texts:
            try:
                texts[path] = read_repo_text(ctx, path)[1]
            except ToolError:
                texts[path] = ""
        found = _statement(texts[path], number)
        if found is not None:
            name, function, statement, header = found
            lines = texts[path].splitlines(keepends=True)
            yield _Site(path, number, name, header, lines, function, statement)


def _mutant_versions(ctx: ToolContext, repo_files: set[str]) -> Iterator[tuple[int, str, str]]:
    """(count, path, the function with one statement edited mechanically) for each statement
    the symptom's calls ran and each small edit of it (patches/mutants.py): no model call,
    each judged by running the symptom's call."""
    count = 0
    for site in _sites(ctx, repo_files):
        for new in statement_mutants(textwrap.dedent(site.old).rstrip()):
            count += 1
            yield count, site.path, site.with_statement(new)


def _line_versions(
    model: Any, ctx: ToolContext, repo_files: set[str], task: str
) -> Iterator[tuple[int, str, str]]:
    """(sample, path, the function with one statement written again) for each statement the
    symptom's calls ran (`_sites`): the trace shown once, then the statement alone, asked
    `TRIES` times, at the agent's temperature, then hotter (a wrong version tells nothing of
    the statement: the next may be the fix)."""
    steps = [step for ran in ctx.symptom_steps.values() for step in ran]
    if not steps:
        return
    wanted = "".join(f"{call} must give {value}.\n" for call, value in ctx.symptom_wants.items())
    head = LINE_FIX_HEAD.format(
        task=task,
        calls=", ".join(ctx.symptom_steps),
        ran="\n".join(steps[:STEPS_SHOWN]),
        wanted=wanted,
    )
    sample = 0
    for site in _sites(ctx, repo_files):
        old = site.old
        asked = head + LINE_FIX.format(
            number=site.number,
            path=site.path,
            name=site.name,
            statement=textwrap.dedent(old).rstrip(),
        )
        for attempt in range(TRIES):
            sample += 1
            hotter = {"temperature": TEMPERATURE, "seed": sample} if attempt else {}
            with for_one_call(model, max_tokens=LINE_TOKENS + len(old) // 2, **hotter):
                message = ChatMessage(role=MessageRole.USER, content=asked)
                reply = model.generate([message], stop_sequences=["Observation:", "Calling tools:"])
            content = reply.content if isinstance(reply.content, str) else ""
            new = _new_statement(content, site.header)
            if new is None or _same(new, old):
                continue
            yield sample, site.path, site.with_statement(new)


def _statements(steps: list[str], repo_files: set[str]) -> list[tuple[str, int]]:
    """(path, line) of each statement the steps ran in the repository's files, once: those of
    the function entered first (the one the call names), the last run first; then those of the
    functions entered after it, the last entered first."""
    order: list[tuple[str, str]] = []
    ran: dict[tuple[str, str], list[int]] = {}
    for step in steps:
        found = _STEP.match(step)
        if found is None or found["path"] not in repo_files:
            continue
        where = (found["path"], found["name"])
        if where not in ran:
            order.append(where)
            ran[where] = []
        line = int(found["line"])
        if line in ran[where]:
            ran[where].remove(line)
        ran[where].append(line)
    statements: list[tuple[str, int]] = []
    for where in order[:1] + order[:0:-1]:
        statements.extend((where[0], line) for line in reversed(ran[where]))
    return statements


def _statement(text: str, number: int) -> tuple[str, tuple[int, int], tuple[int, int], bool] | None:
    """(function, its lines, the statement's lines, whether it is a compound statement's
    header) of the statement starting on line `number` in a top-level function or a method
    of a top-level class (one of a function nested in them is written in theirs: a nested
    function merges by no name); None for a docstring, a definition, or a line in no function."""
    tree = parsed(text)
    if tree is None:
        return None
    owners = [node for node in tree.body if isinstance(node, FUNCTIONS)]
    for top in tree.body:
        if isinstance(top, ast.ClassDef):
            owners.extend(item for item in top.body if isinstance(item, FUNCTIONS))
    for owner in owners:
        if not owner.lineno <= number <= (owner.end_lineno or owner.lineno):
            continue
        for node in ast.walk(owner):
            if not isinstance(node, ast.stmt) or node.lineno != number or node is owner:
                continue
            if isinstance(node, DEFINITIONS):
                return None
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
                return None
            body = getattr(node, "body", None)
            header = isinstance(body, list) and bool(body)
            last = body[0].lineno - 1 if body and header else node.end_lineno or node.lineno
            start = min([owner.lineno, *(d.lineno for d in owner.decorator_list)])
            return owner.name, (start, owner.end_lineno or owner.lineno), (number, last), header
    return None


def _new_statement(reply: str, header: bool) -> str | None:
    """The statement of a reply's block, dedented; None when the block does not hold one (a
    compound statement's header is checked with a body under it)."""
    if "```" not in reply:
        return None
    new = textwrap.dedent(_first_block(reply)).strip("\n")
    if not new.strip() or (header and not new.rstrip().endswith(":")):
        return None
    try:
        tree = ast.parse(new + ("\n    pass" if header else ""))
    except SyntaxError:
        return None
    return new if len(tree.body) == 1 else None


def _same(new: str, old: str) -> bool:
    """The same statement, its spacing and comments aside."""

    def code(text: str) -> str:
        return "\n".join(row.split("#")[0].strip() for row in text.strip().splitlines())

    return code(new) == code(textwrap.dedent(old))


def rewrite_line(model: Any, ctx: ToolContext, task: str) -> tuple[str, str, str, str] | None:
    """(path, where, old lines, new lines) of the lines a proposal that copied its function
    back unchanged holds most of the task's words on (tools/patch.py sets `ctx.copied`), asked
    for alone, at the agent's temperature, then hotter: each line of the reply's block that
    the file does not have replaces the shown line it is likest (difflib, `LIKE` at least);
    None when no reply gives one. Asked once per copy; the run proposes the result like any
    change, checked like any change.

    Seen on the 1.5B model (dev jp-walk-message): `walk` copied back five times, told which
    line holds "member ... not found" and how to replace it alone, and copied again."""
    if ctx.copied is None:
        return None
    (path, held), ctx.copied = ctx.copied, None
    try:  # a line the file has already is no new version of one shown
        lines = LINE.findall(read_repo_text(ctx, path)[1])  # numbered as lines_holding does
    except ToolError:
        return None
    present = {row.strip() for row in lines}
    numbers = [number for number, _ in held]
    where = f"Line {numbers[0]}" if len(numbers) == 1 else f"Lines {', '.join(map(str, numbers))}"
    shown = "\n".join(line.strip() for _, line in held)
    asked = REWRITE_LINES.format(where=where, path=path, lines=shown, task=task)
    for hot in (False, True):
        hotter = {"temperature": TEMPERATURE, "seed": 1} if hot else {}
        with for_one_call(model, max_tokens=LINE_TOKENS, **hotter):
            message = ChatMessage(role=MessageRole.USER, content=asked)
            reply = model.generate([message], stop_sequences=["Observation:", "Calling tools:"])
        content = reply.content if isinstance(reply.content, str) else ""
        rows = (
            [row.strip() for row in _first_block(content).splitlines()] if "```" in content else []
        )
        fresh = [r for r in rows if r and r not in present and not r.startswith("#")]
        # a shown line the reply keeps is not the one it rewrites (a line added beside it is
        # no new version of it); more new lines than shown is no line-for-line rewrite (a
        # statement split over lines); a new version keeps its brackets' balance
        open_ = [(n, line) for n, line in held if line.strip() not in rows]
        if len(fresh) > len(open_):
            continue
        new: dict[int, tuple[float, str]] = {}
        for row in fresh:
            likes = [
                (difflib.SequenceMatcher(None, row, line.strip()).ratio(), number, line)
                for number, line in open_
                if _balance(line) == _balance(row)
            ]
            like, number, line = max(likes, default=(0.0, 0, ""))
            if like >= LIKE and like > new.get(number, (0.0, ""))[0]:
                indent, had = line[: len(line) - len(line.lstrip())], lines[number - 1]
                new[number] = (like, indent + row + had[len(had.rstrip("\r\n")) :])
        if new:
            first, last = min(new), max(new)
            old = "".join(lines[first - 1 : last])
            changed = [new[n][1] if n in new else lines[n - 1] for n in range(first, last + 1)]
            return path, where, old, "".join(changed)
    return None


def _balance(line: str) -> int:
    """Brackets a line opens and does not close."""
    return sum(line.count(c) for c in "([{") - sum(line.count(c) for c in ")]}")


def _places(ctx: ToolContext, repo_files: set[str]) -> list[tuple[str, str]]:
    """(function, file) of the repository's code the symptom's calls ran through, the last
    entered first (the callee that made the value before the caller that passed it on), at
    most `PLACES`; code generated on the fly (`<lambda>`, `<genexpr>`) is no place to change."""
    ran = [item for functions in ctx.symptom_functions.values() for item in functions]
    places: list[tuple[str, str]] = []
    for item in reversed(ran):
        found = _RAN.match(item)
        if found and found["path"] in repo_files and (found["name"], found["path"]) not in places:
            places.append((found["name"], found["path"]))
    return places[:PLACES]


def _ending_with(messages: list[ChatMessage], words: str) -> list[ChatMessage]:
    """`messages` with `words` added to the end of the last message the model reads as the
    user's (a task, or an observation: smolagents sends tool responses as the user's); a copy,
    the run's own messages are not touched."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.role not in (MessageRole.USER, MessageRole.TOOL_RESPONSE):
            continue
        content = message.content
        if isinstance(content, list):
            content = [*content, {"type": "text", "text": words}]
        else:
            content = f"{content or ''}{words}"
        changed = dataclasses.replace(message, content=content)
        return [*messages[:index], changed, *messages[index + 1 :]]
    return messages


def _first_block(reply: str) -> str:
    """The reply's first block: from its start (a fence line dropped) to the next fence. The
    model writes a change fenced or not, and often closes a block it never opened."""
    text = reply.strip()
    if text.startswith("```"):
        text = text.partition("\n")[2]
    return text.partition("```")[0]


def _passes(ctx: ToolContext, diff: str, held: Held, *, every: bool = False) -> bool:
    """The version passes the checks its proposal would be held to (the project's tests where
    they run): measured on dev infl-ordinal-negative, a version that gave '-1021st' by
    returning it for -1021 alone left the negative-number tests failing. With `every` (the
    tests are the only judge), every check ran and passed: a failure the fix is not held to
    still says nothing of the version."""
    try:
        validation = ctx.sandbox.validate(diff, patch_checks(ctx)).to_dict()
    except Exception:  # a sandbox that cannot run confirms nothing
        return False
    if validation.get("applies") is False:
        return False
    if every:
        checks = validation.get("checks", [])
        return bool(checks) and all(check.get("passed") for check in checks)
    return not failed_checks(validation, held=held)


def _sample(model: Any, messages: list[Any], seed: int) -> str:
    """One reply to `messages` at `TEMPERATURE` with `seed` (the model's settings restored)."""
    with for_one_call(model, temperature=TEMPERATURE, seed=seed):
        message = model.generate(messages, stop_sequences=["Observation:", "Calling tools:"])
    return message.content if isinstance(message.content, str) else ""


def _reads(body: str, parameter: str) -> bool:
    """A function of `body` takes `parameter` and reads it."""
    tree = parsed(textwrap.dedent(body))
    functions = [n for n in ast.walk(tree) if isinstance(n, FUNCTIONS)] if tree else []
    return any(
        parameter in {a.arg for a in (*f.args.args, *f.args.kwonlyargs)}
        and any(isinstance(n, ast.Name) and n.id == parameter for n in ast.walk(f))
        for f in functions
    )
