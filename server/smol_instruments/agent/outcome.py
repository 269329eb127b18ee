"""Whether a run did what it was asked, judged by what happened rather than by its words.

Small models say "The bug is fixed and the patch was applied" when nothing was proposed. A
task that asks for a change, or an answer that claims one, is only `completed` when the run
really proposed a patch or changed the working tree; otherwise the run is `incomplete` and the
answer says so first.
"""

from __future__ import annotations

import ast
import itertools
import re
from difflib import SequenceMatcher
from typing import Any

from ..base.pyast import is_python_source, parsed
from ..base.testruns import failing_tests, is_test_file, ran_tests, test_summary
from ..patches.model import FileChange, Patch
from ..patches.pysource import DEFINITIONS, first_line, last_line
from ..tools.examples import EXAMPLES_CHECK
from ..tools.scaffold import parameters_of
from .events import RunStatus
from .intent import Held, TaskIntent
from .prompts import Note
from .watch import RunWatch
from .wording import whole_word

_CLAIMS = re.compile(
    r"\b(?:i(?:'ve| have)?|we(?:'ve| have)?)\s+(?:now\s+)?(?:fixed|updated|changed|added|"
    r"modified|applied|created|implemented|corrected|renamed|removed|refactored|rewritten|written)\b"
    r"|\b(?:has|have) been (?:fixed|updated|changed|added|modified|applied|created|implemented|"
    r"corrected|renamed|removed|refactored|rewritten|written)\b"
    r"|\b(?:patch|change|fix)(?:es)? (?:was|were) (?:applied|made|written)\b"
    r"|\bsuccessfully (?:fixed|updated|applied|added|modified|changed)\b",
    re.IGNORECASE,
)

NOT_DONE = "Not done: no change was proposed or made in this run."
NOT_VERIFIED = "Not done: the proposed change fails its checks."
MISSED = (
    "Not done: the task is about `{inner}` (nested in `{outer}`), and this change leaves it as "
    "it was."
)
NO_HEADING = (
    "Not done: the task asks for a `{title}` section, and this change adds no such heading."
)
NOT_ADDED = "Not done: the task names {names}, which this change does not add."
NOT_WRITTEN = "Not done: the task gives {values}, and this change does not write it."
#: A web address a task gives ("add the changelog to the links, it's https://..."): the change
#: writes it (the 1.5B model made up a list of releases instead, fresh dev
#: jp-readme-releases-link). Its last character is not a sentence's full stop or comma.
_URL = re.compile(r"https?://[^\s<>\"'`)\]]*[^\s<>\"'`)\].,;:!?]")
NOT_A_PARAMETER = (
    "Not done: the task gives {names} a default, so it is a parameter, and this change adds no "
    "parameter of that name."
)
NO_NEW_TEST = (
    "Not done: the task asks for a new test, and this change adds no test function to a test "
    "file ({changed})."
)
LOST = (
    "Not done: this change removes lines of {path} that nothing it adds replaces and the task "
    "does not mention: {lines}. Keep them; change only what the task asks."
)
NO_TEST_COMMAND = (
    "Not done: the task is about running the tests, and this change does not say the command "
    "that runs them{here}."
)
#: A request about how the tests are run ("add a bit to the readme on how to run the tests").
_RUNNING_TESTS = re.compile(
    r"\b(?:run(?:s|ning)?\s+(?:the\s+|its\s+|our\s+)?(?:unit\s+)?tests?|test\s*suite|testing)\b",
    re.IGNORECASE,
)
#: What runs tests, as a document would say it.
_TEST_RUNNERS = re.compile(
    r"\b(?:pytest|py\.test|tox|nox|unittest|(?:npm|cargo|go|make)\s+test)\b", re.IGNORECASE
)
#: The words of a task that say which lines it is about: a version, a name, a word of prose.
_WORD = re.compile(r"[a-z0-9](?:[\w.\-]*[a-z0-9])?")
#: Words too common in a request to say which lines it means (shorter ones count only with a
#: digit: "3.7").
_COMMON = frozenset(
    {"with", "that", "this", "your", "make", "from", "into", "about", "them", "each", "also"}
    | {"should", "would", "could", "please", "file", "there", "here", "have", "just", "some"}
)
#: A request that asks for lines to go ("drop the 3.7 classifier", "... instead").
_REMOVES = re.compile(
    r"\b(?:remov|delet|drop|take (?:\w+ )?out|get rid|instead|replac|rewrit|rephras|reword|"
    r"shorten|trim|clean)",
    re.IGNORECASE,
)
ELSEWHERE = "Not done: the task is about {files}, and this change does not touch it."
UNTOUCHED = (
    "Not done: the task is about {names}, and this change neither changes nor uses any of them."
)
UNVERIFIED = (
    "Not verified: nothing that ran shows this change mends what the task describes (no test "
    "fails without it and passes with it; the task gives no call and value to try). Check it, "
    "or tell me a call and what it should give."
)
UNTRIED = (
    "Not verified: nothing that ran passes {names} (no test or example the change adds uses "
    "it, and the task gives no call and value to try). Try it, or tell me a call and what it "
    "should give."
)
REPEATED = (
    "Not answered: the model gave its answer to the previous question again, word for word "
    "(shown below); it does not answer this one. Try asking it differently."
)


def judge(answer: str, watch: RunWatch) -> tuple[RunStatus, str]:
    """The status and answer of a run its loop ended with an answer, told from what happened:
    the previous turn's answer again, an answer nothing read or run grounds or that still
    misses what ran after being told once (agent/answers.py), a request that
    may ask for a change or asks for one with nothing changed are not `completed`; a change is
    told from its diff and its checks, the model's words only following, as its words."""
    status: RunStatus = "completed"
    intent = watch.intent
    if watch.told and answer:  # its sentences for the steps it left out, asked one at a time
        answer = " ".join([answer.rstrip(), *watch.told])
    if watch.repeated:
        status, answer = "incomplete", f"{REPEATED} {answer}".strip()
    # an answer still missing, after being told once, what ran showed (a value, the failing
    # tests, the counts) or never grounded: the facts go below it and it is not `completed`
    # (dev sv-build-equal: told the comparison gives True, it answered False again)
    if status == "completed" and watch.corrections:
        status = "incomplete"
    if status == "completed" and intent.might_change and not watch.changed():
        status = "incomplete"
        watch.corrections.append(Note.MIGHT_CHANGE.says())
    if watch.corrections and answer:
        answer = "\n\n".join([answer.rstrip(), *watch.corrections])
    if status == "completed" and needs_a_change(intent, answer) and not watch.changed():
        status, answer = "incomplete", f"{NOT_DONE}\n\n{answer}".strip()
    last = watch.last_patch()
    if status == "completed" and last is not None and intent.change:
        said = describe_proposal(last, held=intent.held)
        rest = answer.strip()
        if rest and rest != said and rest not in said:
            # its words against the diff ("I changed truncate in textutils/strings.py" for a
            # patch of the tests alone): said to be what they are, not shown as fact
            untouched = _untouched_files(rest, watch.repo_files, last)
            against = f", which names {untouched} that this patch does not change" * bool(untouched)
            said += f"\n\nThe model's summary{against}: {rest}"
        if failed_checks(last.validation, held=intent.held):
            status, said = "incomplete", f"{NOT_VERIFIED} {said}"
        elif short := shortfall(watch, last):
            status, said = "incomplete", f"{short} {said}"
        elif intent.mends and changes_code(last) and not verified(last, watch.failing):
            # a fix is known by what ran: a call the task tells, or tests that failed before
            status, said = "incomplete", f"{UNVERIFIED} {said}"
        elif (new := _new_parameters(watch, last)) and not tried(last, new):
            # a feature too: fresh dev sv-to-dict-skip-none passed the project's tests, none
            # of which passes `skip_none`, and dropped a prerelease that is not None
            names = ", ".join(f"`{name}`" for name in new)
            status, said = "incomplete", f"{UNTRIED.format(names=names)} {said}"
        answer = said
    return status, answer


def shortfall(watch: RunWatch, patch: Patch) -> str | None:
    """What the diff shows a change leaves out of what its task asks, as "Not done: ...", or
    None: the helper it means, a section's heading, a web address or a name it adds, the
    function it is about.
    The model is told it once before the run ends (agent/answers.py)."""
    intent = watch.intent
    if (meant := watch.meant) and not changes(patch, f"{meant[1]}.<locals>.{meant[0]}"):
        # the helper's docstring given to the function around it (dev sv-nested-docstring)
        return MISSED.format(inner=meant[0], outer=meant[1])
    if (title := intent.section) and not adds_heading(patch, title):
        # a "Usage section" of examples with no heading (dev infl-readme-usage)
        return NO_HEADING.format(title=title)
    lines = _added_lines(patch)
    if urls := [url for url in _URL.findall(intent.task) if not any(url in n for n in lines)]:
        return NOT_WRITTEN.format(values=", ".join(f"<{url}>" for url in urls))
    if lost := lost_lines(patch, intent.task):
        # asked to add a row to a table, the 1.5B model replaced five rows of another table
        # with it (dev tc-readme-terminal-row), and the run was `completed`
        path, gone = next(iter(lost.items()))
        return LOST.format(path=path, lines="; ".join(f"`{line}`" for line in gone[:3]))
    documents = not any(map(_python, patch.files))
    if (
        documents
        and _RUNNING_TESTS.search(intent.task)
        and not _TEST_RUNNERS.search("\n".join(lines))
    ):
        # "add a bit to the readme on how to run the tests": a toctree of the repository's
        # files, `completed` (fresh dev sv-readme-testing)
        ran = [c for c in patch.validation.get("checks", []) if ran_tests(str(c.get("output")))]
        here = f" (here: `{ran[0].get('command')}`)" if ran else ""
        return NO_TEST_COMMAND.format(here=here)
    if new := [name for name in watch.absent if name in intent.task and not adds(patch, name)]:
        # "add a `max_length` argument to parameterize": a change that never writes it
        return NOT_ADDED.format(names=", ".join(f"`{name}`" for name in new))
    given = watch.parameters_given
    if given and not any(adds_parameter(patch, name) for name in given):
        # "rails has preserve_case for this, can we get that too? off by default": a new
        # function `preserve_case` beside `parameterize` (fresh dev infl-slug-preserve-case)
        return NOT_A_PARAMETER.format(names=", ".join(f"`{name}`" for name in given))
    if intent.adds_tests and not adds_a_test(patch):
        # a test changed, or tests written in conftest.py (dev sv-add-test-to-dict,
        # tc-add-test-no-color): nothing new runs
        return NO_NEW_TEST.format(changed=what_changed(patch))
    named, aimed = watch.named_files, watch.writes_text or not (intent.fix or intent.adds_tests)
    if named and aimed and not {change.path for change in patch.files} & set(named):
        # "put an example in the readme ... instead" (a complaint, so a fix, which may go
        # elsewhere; but the change was asked as lines of the README) proposed as a change to
        # the code (dev jp-readme-example): the file the task is about is left as it was
        return ELSEWHERE.format(files=" or ".join(f"`{path}`" for path in named))
    if watch.asked and not intent.fix and not touches(patch, watch.asked):
        # "give parse an allow_v flag" answered by a change to another function: what the
        # task is about is left as it was (a fix may be made in a helper: not judged)
        return UNTOUCHED.format(names=", ".join(f"`{name}`" for name in watch.asked))
    return None


def _untouched_files(text: str, repo_files: list[str], patch: Patch) -> str:
    """The repository's files `text` names that `patch` does not change, as "`a`, `b`"."""
    changed = {change.path for change in patch.files}
    named = [path for path in repo_files if path not in changed and path in text]
    return ", ".join(f"`{path}`" for path in named)


def claims_change(answer: str) -> bool:
    """True when the answer says a change was made."""
    return bool(_CLAIMS.search(answer))


def needs_a_change(intent: TaskIntent, answer: str) -> bool:
    """The task asks for a change, or the answer says one was made."""
    return intent.change or claims_change(answer)


def confirmed(patch: Patch) -> bool:
    """The patch makes every call of the task's symptom give what the task wants (its
    validation's symptom checks, tools/evaluate.py `symptom_checks`)."""
    told = [check for check in patch.validation.get("checks", []) if check.get("symptom")]
    return bool(told) and all(check.get("passed") for check in told)


def changes_code(patch: Patch) -> bool:
    """The patch changes what some Python code does: more than its docstrings and comments
    (a docstring is no behaviour to show mended)."""
    return any(
        change.path.endswith(".py") and _code(change.original) != _code(change.proposed)
        for change in patch.files
    )


def _code(text: str | None) -> str | None:
    """A Python text's syntax tree without its docstrings, dumped (the text if it does not
    parse)."""
    tree = parsed(text)
    if tree is None:
        return text
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (*DEFINITIONS, ast.Module)) and body and ast.get_docstring(node):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree)


def verified(patch: Patch, failing: list[str]) -> bool:
    """A fix shown to mend something: the calls of its symptom give what the task wants with
    it (`confirmed`), or a test that failed before the run (`failing`, by function name)
    passes with it."""
    if confirmed(patch):
        return True
    for check in patch.validation.get("checks", []) if failing else []:
        output = str(check.get("output") or "")
        if check.get("symptom") or check.get("timed_out") or not ran_tests(output):
            continue  # a test run's check, not the syntax's or another command's
        failed = failing_tests(output)
        still = {test.rsplit("::", 1)[-1] for test in failed}
        if check.get("passed") or (failed and any(name not in still for name in failing)):
            return True
    return False


def failed_checks(validation: dict[str, Any], *, held: Held = "none") -> list[dict[str, Any]]:
    """The checks of a patch's validation that failed (a patch that does not apply: one). A
    check killed at its timeout proves nothing either way (a large test suite): not counted.
    A check that fails the same way without the patch is not the patch's failure, unless the
    task holds the change to it (`TaskIntent.held`)."""
    if validation.get("applies") is False:
        return [{"command": "apply", "output": validation.get("message") or ""}]
    return [
        check
        for check in validation.get("checks", [])
        if not check.get("passed") and not check.get("timed_out") and _counts(check, held)
    ]


def _counts(check: dict[str, Any], held: Held) -> bool:
    if not check.get("fails_without_patch") or held == "all":
        return True
    return held == "related" and bool(check.get("related_tests"))


def definitions_of(text: str | None) -> dict[str, str]:
    """Each function and class of a Python text by qualified name (`C.m`, `f.<locals>.g`),
    with its own lines: those of the definitions inside it left out, and blank lines, so a
    method changed is told as itself, not as its class too; {} when it does not parse."""
    tree = parsed(text)
    if text is None or tree is None:
        return {}
    lines = text.splitlines()
    found: dict[str, str] = {}

    def span(node: ast.stmt) -> range:
        return range(first_line(node) - 1, last_line(node))

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, DEFINITIONS):
                name = prefix + node.name
                inner = [
                    span(n) for n in ast.walk(node) if n is not node and isinstance(n, DEFINITIONS)
                ]
                found[name] = "\n".join(
                    lines[i]
                    for i in span(node)
                    if lines[i].strip() and not any(i in r for r in inner)
                )
                visit(node.body, name + ("." if isinstance(node, ast.ClassDef) else ".<locals>."))

    visit(tree.body, "")
    return found


def definition_changes(change: FileChange) -> dict[str, list[str]]:
    """The qualified names of the definitions one file's change adds, changes and removes;
    none where the change leaves a file that parsed not parsing (dev sv-fix-nextver-prerelease:
    a +1 -1 edit with a syntax error was told as removing all 39 definitions of the file)."""
    if parsed(change.proposed) is None and parsed(change.original) is not None:
        return {"adds": [], "changes": [], "removes": []}
    before, after = definitions_of(change.original), definitions_of(change.proposed)
    return {
        "adds": [name for name in after if name not in before],
        "changes": [name for name in after if name in before and after[name] != before[name]],
        "removes": [name for name in before if name not in after],
    }


def changes(patch: Patch, name: str) -> bool:
    """Whether the patch adds or changes a function called `name` (nested or not), or the one
    `name` qualifies (`f.<locals>.g`: not another function's `g`)."""
    return any(
        (qualified == name or qualified.endswith("." + name))
        for change in patch.files
        if change.path.endswith(".py")
        for verb, names in definition_changes(change).items()
        if verb != "removes"
        for qualified in names
    )


def adds_a_test(patch: Patch) -> bool:
    """Whether the patch adds a test function (`test_*`) to a file the test runner collects
    (not conftest.py, where pytest collects none: dev sv-add-test-to-dict)."""
    return any(
        qualified.rsplit(".", 1)[-1].startswith("test")
        for change in patch.files
        if is_test_file(change.path)
        for qualified in definition_changes(change)["adds"]
    )


def touches(patch: Patch, names: list[str]) -> bool:
    """Whether the patch adds, changes or removes a definition called one of `names`, one
    inside it (`Version` for `Version.parse`) or one its code calls in that file (the helper
    of the name), or adds or deletes a line that names one. Each file is read once."""
    lasts = {name.rsplit(".", 1)[-1] for name in names}
    for change in (change for change in patch.files if change.path.endswith(".py")):
        tree = parsed(change.original)
        nodes = ast.walk(tree) if tree is not None else ()
        defs = [node for node in nodes if isinstance(node, DEFINITIONS) and node.name in lasts]
        calls = {_called(n) for d in defs for n in ast.walk(d) if isinstance(n, ast.Call)}
        for qualified in (q for found in definition_changes(change).values() for q in found):
            parts = qualified.split(".")
            if lasts & set(parts) or parts[-1] in calls:
                return True
    lines = [line for hunk in patch.hunks for line in [*hunk.old, *hunk.new]]
    return any(whole_word(last).search(line) for last in lasts for line in lines)


def _called(call: ast.Call) -> str:
    """The name a call calls: `f` of `f(x)` and of `self.f(x)`."""
    func = call.func
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")


#: How the checks of a change's examples are named (tools/examples.py).
EXAMPLES = EXAMPLES_CHECK.split("{", 1)[0]
#: A line under a heading that makes it one (reStructuredText, Markdown's setext style).
_UNDERLINE = re.compile(r"""([=\-~^"'`#*+:.])\1{2,}\s*""")


def _added(patch: Patch) -> list[list[str]]:
    """The lines each hunk of the patch adds (its own diff's, patches/model.py)."""
    return [[line.rstrip("\r\n") for line in hunk.new] for hunk in patch.hunks]


def _added_lines(patch: Patch) -> list[str]:
    """Every line the patch adds, its hunks' in order."""
    return [line for added in _added(patch) for line in added]


def lost_lines(patch: Patch, task: str) -> dict[str, list[str]]:
    """Per file that is not Python (a Python file's change is told by its definitions): the
    lines the change removes that no line its hunk adds replaces (none alike, by difflib's
    ratio), in hunks none of whose removed lines shares a word with the task. None when the
    task asks for lines to go."""
    if _REMOVES.search(task):
        return {}
    words = {
        w
        for w in _WORD.findall(task.lower())
        if (len(w) > 3 or any(c.isdigit() for c in w)) and w not in _COMMON
    }
    found: dict[str, list[str]] = {}
    for change in patch.files:
        if _python(change) or change.original is None or change.proposed is None:
            continue
        for hunk in change.hunks:
            new = [line.strip() for line in hunk.new if line.strip()]
            gone = [
                line.strip()
                for line in hunk.old
                if _WORD.search(line.lower())
                and not any(SequenceMatcher(None, line.strip(), n).ratio() >= 0.6 for n in new)
            ]
            if gone and not words & {w for line in gone for w in _WORD.findall(line.lower())}:
                found.setdefault(change.path, []).extend(gone)
    return found


def _python(change: FileChange) -> bool:
    """A Python file, told by its name or its first line (bin/jsonpointer)."""
    return is_python_source(change.path, change.original)


def adds(patch: Patch, name: str) -> bool:
    """Whether the patch writes `name` (its last dotted part) on a line it adds, or makes a
    file of that name (`test_words` of tests/test_words.py)."""
    last = name.rsplit(".", 1)[-1]
    files = {change.path.rsplit("/", 1)[-1].rsplit(".", 1)[0] for change in patch.files}
    return last in files or any(whole_word(last).search(line) for line in _added_lines(patch))


def adds_parameter(patch: Patch, name: str) -> bool:
    """Whether a Python file of the patch has a function with a parameter called `name` that
    no function of it had before."""

    return any(
        name in parameters_of(change.proposed) - parameters_of(change.original)
        for change in patch.files
        if change.path.endswith(".py")
    )


def _new_parameters(watch: RunWatch, patch: Patch) -> list[str]:
    """The parameters the task gives that the patch adds."""
    return [name for name in watch.parameters_given if adds_parameter(patch, name)]


def tried(patch: Patch, names: list[str]) -> bool:
    """A check that passed ran one of the new parameters `names`: the task's symptom calls
    give what it wants, or a test or an example the patch adds passes one by keyword
    (`skip_none=True`: a test file's lines, a docstring's `>>>` lines, a document's) and the
    check that runs it passed."""
    if confirmed(patch):
        return True
    passed = [check for check in patch.validation.get("checks", []) if check.get("passed")]
    tests = any(ran_tests(str(check.get("output") or "")) for check in passed)
    examples = any(str(check.get("command", "")).startswith(EXAMPLES) for check in passed)
    uses = re.compile(rf"\b(?:{'|'.join(map(re.escape, names))})\s*=(?!=)")
    for change in patch.files:
        lines = [line for hunk in change.hunks for line in hunk.new if uses.search(line)]
        if is_test_file(change.path):
            ran = tests
        elif change.path.endswith(".py"):
            ran, lines = examples, [line for line in lines if ">>>" in line]
        else:
            ran = examples
        if ran and lines:
            return True
    return False


def adds_heading(patch: Patch, title: str) -> bool:
    """Whether the patch adds a heading that names `title`: a Markdown `#` line, a line with
    an underline, or the title alone on its line (`**Usage**`, `Usage:`)."""
    wanted = title.casefold()
    for lines in _added(patch):
        for line, under in itertools.pairwise([*lines, ""]):
            text = line.strip()
            if wanted not in text.casefold():
                continue
            if text.startswith("#") or _UNDERLINE.fullmatch(under.strip()):
                return True
            if text.strip("*_:= ").casefold() == wanted:
                return True
    return False


def what_changed(patch: Patch) -> str:
    """The patch's effect on definitions, told from its diff: the functions and classes it
    adds, changes and removes, file by file (other files: the lines). A definition is changed
    when its own lines are: a method's class is not told for the method."""
    parts = []
    for change in patch.files:
        if not change.path.endswith(".py"):
            verb = "creates" if change.original is None else "edits"
            parts.append(f"it {verb} {change.path}")
            continue
        if parsed(change.proposed) is None and (tree := parsed(change.original)) is not None:
            parts.append(f"in {change.path} it {_breaks(change, tree)}")
            continue
        said = [
            f"{verb} {', '.join(f'`{n}`' for n in names)}"
            for verb, names in definition_changes(change).items()
            if names
        ]
        said_all = "; ".join(said) if said else "changes lines outside any function"
        parts.append(f"in {change.path} it {said_all}")
    return "; ".join(parts)


def _breaks(change: FileChange, tree: ast.Module) -> str:
    """What a change after which the file no longer parses edits: the original's lines it
    replaces and the definitions holding them (the innermost named)."""
    before, after = (change.original or "").splitlines(), (change.proposed or "").splitlines()
    edited = [
        (i1 + 1, max(i1 + 1, i2))
        for tag, i1, i2, _, _ in SequenceMatcher(None, before, after, autojunk=False).get_opcodes()
        if tag != "equal"
    ]
    if not edited:
        return "leaves a file that no longer parses"
    start, end = edited[0][0], edited[-1][1]
    holders = [
        node.name
        for node in ast.walk(tree)
        if isinstance(node, DEFINITIONS) and first_line(node) <= start and end <= last_line(node)
    ]
    where = f"line {start}" if start == end else f"lines {start}-{end}"
    inside = f" (in `{holders[-1]}`)" if holders else ""
    return f"edits {where}{inside}, after which the file no longer parses"


def describe_proposal(patch: Patch, *, held: Held = "none") -> str:
    """What a run proposed, told from the patch itself: the files, the definitions it adds,
    changes and removes, what the checks said (never the model's claims)."""
    added, removed = patch.stats()
    text = f"I proposed patch {patch.id} (+{added} -{removed}): {what_changed(patch)}."
    validation = patch.validation
    checks = validation.get("checks", [])
    failed = failed_checks(validation, held=held)
    if failed:
        said = test_summary(failed[0].get("output") or "", "")
        text += f" It fails `{failed[0].get('command')}`" + (f": {said}" if said else "") + "."
    elif checks:
        passed = [c.get("command", "") for c in checks if c.get("passed")]
        before = [c for c in checks if not c.get("passed") and c.get("fails_without_patch")]
        slow = [c.get("command", "") for c in checks if c.get("timed_out")]
        if passed:
            text += " It applies, and " + ", ".join(f"`{c}`" for c in passed) + " passed with it."
        for check in before:
            said = test_summary(check.get("output") or "", "")
            text += (
                f" `{check.get('command')}` fails without it too"
                + (f" ({said})" if said else "")
                + ": it adds no failure."
            )
        if slow:
            text += " " + ", ".join(f"`{c}`" for c in slow) + " did not finish in time."
    elif validation.get("message"):
        text += f" ({validation['message']})"
    if validation.get("imported"):
        said = "; ".join(validation["imported"])
        text += f" {said[:1].upper()}{said[1:]}."
    if validation.get("pinned"):
        text += (
            " Its expected values are what the code gives now, run rather than guessed ("
            + "; ".join(validation["pinned"])
            + "): check they are what you want."
        )
    return text + " Nothing is written until you accept it."
