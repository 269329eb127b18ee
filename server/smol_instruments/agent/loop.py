"""The agent's loop: smolagents' CodeAgent, extended only through its seams, for small models.

What a small model does wrong, and what the loop does about it (the loop itself is upstream's):

- It answers in prose, as it is told to (a code block calling final_answer works too). Every
  ending passes the same final-answer checks (agent/answers.py): an answer about the
  repository's code that nothing read or run grounds is sent back once (for what code gives,
  only running it grounds the answer). Prose that only announces a plan ("I will read the
  file.") is never an answer: do it now.
- It copies an instruction's placeholder (`final_answer("...")`) as its answer, repeats
  the previous turn's answer, or garbles the test counts it read ("10 failed" for "1 failed"):
  sent back (agent/answers.py has every final-answer check).
- It quotes the line it talks about in a ```python block inside a written answer: in a
  question, a block that can do nothing when run (agent/model.py `quotes_code`) is part of the
  answer, not code to run.
- It cannot copy old_text, but writes a whole corrected function well: a block of definitions
  under `# file: <path>` is proposed as that change (agent/edits.py); the same change written
  again ends the run with what was proposed. In a task that asks for no change, it is refused.
  Prose long enough to be an answer, above a block that changes nothing, is the answer.
- It writes its answer as a block of nothing but comments ("# The function lower-cases the
  title ..."): comments of a sentence or more are taken as the answer (the final-answer checks
  still judge it), a shorter one is sent back asking for the call; such a block runs nothing.
- It says "fixed" when nothing was proposed: a task that asks for a change gets one reminder
  to propose it; the session then judges the outcome by what really happened.
- It gets stuck: a refused repeat is told to answer now (or, for a change, to propose it now);
  it, and the same failing reply twice, make the next reply sampled hotter (once); the same
  failing reply three times in a row, or three calls refused as loops, ends the run early and
  honestly (`RunStuck`) instead of burning the remaining steps.
- At the step limit, smolagents' summary call replaces the system prompt, so a model server
  re-reads the whole history (minutes on a CPU). Here the summary keeps every message and asks
  as the last user message, so the server's cached prefix is reused.
- The history outgrows the model's context: outputs of older steps are shortened, visibly, to
  fit the window the server reports.

smolagents' console (rich's live Markdown of every reply, for a terminal nobody sees here) is
turned off here too: hosts render our events. The last two points and the console are done
below smolagents' public seams, in agent/adapter.py (pinned to the version it was written for);
this module decides, through that adapter's hooks.
"""

from __future__ import annotations

import ast
import builtins
import re
import textwrap
from collections.abc import Callable
from typing import Any

from smolagents import ActionStep
from smolagents.local_python_executor import CodeOutput, InterpreterError
from smolagents.utils import AgentMaxStepsError, AgentParsingError

from ..base.pyast import parsed
from ..patches.model import Patch
from ..tools.edit import has_edit_blocks
from .adapter import FENCE, PinnedCodeAgent
from .answers import (
    the_absent_are_not_described,
    the_answer_is_grounded,
    the_answer_is_new,
    the_answer_is_real,
    the_change_does_what_was_asked,
    the_change_was_proposed,
    the_computed_value_is_told,
    the_counts_are_the_outputs,
    the_failures_are_named,
    the_fields_are_as_they_ran,
    the_reach_is_named,
    the_steps_are_told,
    the_why_is_what_ran,
)
from .edits import (
    called_names,
    choose_file,
    complete_prefix,
    defined_names,
    edit_call,
    file_header,
    file_sections,
)
from .executor import Result
from .model import TEXT_BLOCK_CODE, calls_a_tool, quotes_code
from .outcome import changes_code, confirmed, describe_proposal, failed_checks
from .prompts import Nudge, is_placeholder, is_plan
from .watch import RunWatch

#: Identical failing replies, or calls refused as loops, before a run is stopped.
STUCK_AFTER = 3
#: Prose at least this long before a block that changes nothing is a written answer.
ILLUSTRATED_ANSWER_CHARS = 120
#: Prose at least this long around a block that calls no tool is an answer quoting code.
QUOTING_ANSWER_CHARS = 60
#: Comments at least this long, with no code under them, are the model's answer.
ANSWER_IN_COMMENTS_CHARS = 60


class RunStuck(Exception):
    """The model repeats itself without progress; the message says how, for the user.

    `step` is the step that showed it: raised from the step's callback, it never reaches the
    run's stream, so the session reports it (its output, its tokens) from here.
    """

    def __init__(self, message: str, step: ActionStep | None = None) -> None:
        super().__init__(message)
        self.step = step


class SmolCodeAgent(PinnedCodeAgent):
    """CodeAgent with small-model recovery in its step generator (the loop itself is upstream's)."""

    def __init__(
        self,
        *args: Any,
        context_tokens: Callable[[], int | None],
        locate: Callable[[list[str]], dict[str, list[str]]],
        edit_blocks: Callable[[str, str | None, bool], dict[str, Any]],
        search_fix: Callable[[list[Any], str | None], tuple[int, str, str] | None] = (
            lambda messages, path: None
        ),
        rewrite_line: Callable[[str], tuple[str, str, str, str] | None] = lambda task: None,
        **kwargs: Any,
    ) -> None:
        kwargs.setdefault(
            "final_answer_checks",
            [
                the_answer_is_real,
                the_answer_is_new,
                the_answer_is_grounded,
                the_computed_value_is_told,
                the_fields_are_as_they_ran,
                the_absent_are_not_described,
                the_change_was_proposed,
                the_change_does_what_was_asked,
                the_counts_are_the_outputs,
                the_failures_are_named,
                the_reach_is_named,
                the_steps_are_told,
                the_why_is_what_ran,
            ],
        )
        super().__init__(*args, context_tokens=context_tokens, **kwargs)
        self.watch: RunWatch | None = None
        #: Where the repository defines names (for a change written without its file).
        self.locate = locate
        #: Proposes the SEARCH/REPLACE blocks of a reply as one patch (tools/edit.py).
        self.edit_blocks = edit_blocks
        #: Versions of a step's change sampled again, the first the run confirms (search.py).
        self.search_fix = search_fix
        #: A line a copied function holds the task's words on, asked for alone (search.py).
        self.rewrite_line = rewrite_line
        #: What each step's observation ends with (by the run it belongs to), id(step) -> text.
        self._after: dict[int, str] = {}
        self._same_failures = 0
        self._loops_seen = 0
        self.step_callbacks.register(ActionStep, self._check_progress)

    # --- a block that is a change, or an illustration -----------------------------------------

    def route_block(self, code: str) -> str | CodeOutput:
        """What a reply's block is, decided here only: a change or part of an answer (`_route`),
        an answer written as comments (`comments_only`), or code to run."""
        routed = self._route(code)
        if isinstance(routed, CodeOutput):
            return routed
        answer = comments_only(routed)
        if answer is None:
            return routed
        if len(answer) < ANSWER_IN_COMMENTS_CHARS or is_plan(answer):
            raise InterpreterError(Nudge.ONLY_A_COMMENT.says())
        return CodeOutput(output=answer, logs="", is_final_answer=True)

    def _route(self, code: str) -> str | CodeOutput:
        """The code to run for a reply's block (agent/edits.py): a block of definitions headed
        by `# file: <path>` (or, in a run that asks for a change, one whose file is clear) is
        proposed as a change; in a question, one under a written answer is part of it."""
        watch = self.watch
        tools = set(self.tools)
        files = set(watch.repo_files) if watch is not None else set()
        reply = self._reply if has_edit_blocks(self._reply) else code
        if has_edit_blocks(reply):
            return self._search_replace(reply)
        if code.strip() == TEXT_BLOCK_CODE:  # lines of a data or prose file
            if self._rewrites_text(code):
                return self._search_replace(self._reply)
            return CodeOutput(output=_closed(self._reply), logs="", is_final_answer=True)
        sections = file_sections(code) if watch is not None and watch.intent.change else []
        bodies = [complete_prefix(body) for _, body in sections]  # the last may be cut
        if sections and all(defined_names(body, tools, assignments=True) for body in bodies):
            # several files in one block, each under its `# file:` line: one patch of them all
            # (the 1.5B model's fix of termcolor.py under a header of _types.py was merged,
            # whole, into _types.py)
            paths = [path for path, _ in sections]
            written = (f"# file: {p}\n{b}" for p, b in zip(paths, bodies, strict=True))
            return self._search_replace("\n".join(written))
        path, body = file_header(code, files)
        if path is not None:
            body = complete_prefix(body)  # a reply cut at its token limit mid-line
        names = defined_names(body, tools, assignments=path is not None)
        change = watch is not None and watch.intent.change
        if names is None and path is not None and change and _broken_definitions(path, body):
            # `def ...` that does not parse (`cls(..., self.build=None)`, dev
            # sv-finalize-keep-build): the merge says which line, where the lines it aligns
            # with would only say the block is not the file's (three times, then stopped)
            return self._edit(path, body)
        if names is None and path is not None and change and not calls_a_tool(body, tools):
            # the file's lines written again, module-level code and all: the part of the file
            # they align with is what they replace (dev jp-drop-py37: setup.py without its
            # 3.7 line was run as code, `import io` refused three times)
            return self._search_replace(f"{path}\n```\n{body.rstrip()}\n```")
        if names is None and path is None and self._rewrites_text(code):
            return self._search_replace(self._reply)
        if names is None:
            if path is None and watch is not None and not watch.intent.change:
                if self._quotes(code):
                    return CodeOutput(output=_closed(self._reply), logs="", is_final_answer=True)
                if "evaluate" in tools and runs_outside(code, tools):
                    return self._run_example(code)
            return code
        if path is not None and watch is not None and not watch.intent.change:
            # a task that asks nothing to change gets no patch (the model writes one anyway)
            raise InterpreterError(Nudge.NOT_ASKED.says(call=watch.first_read()))
        if path is None and watch is not None and change:
            path = choose_file(names, self.locate, watch.named_files)
            if path is None:
                raise InterpreterError(Nudge.NO_FILE.says(text=watch.form, names=", ".join(names)))
        if path is not None:
            return self._edit(path, body)
        if self._answered_before_block():
            return CodeOutput(output=self._reply.strip(), logs="", is_final_answer=True)
        return code

    def _rewrites_text(self, code: str) -> bool:
        """In a run that changes a file that is not Python, a block that calls no tool is
        that file's lines written again (tools/edit.py `rewrite_block`), never code to run."""
        watch = self.watch
        if watch is None or not watch.intent.change or not watch.writes_text:
            return False
        tools = set(self.tools) | {"final_answer"}
        return code.strip() == TEXT_BLOCK_CODE or not calls_a_tool(code, tools)

    def _search_replace(self, reply: str) -> CodeOutput:
        """A reply of SEARCH/REPLACE blocks, or of definitions for several files: proposed as
        one patch (agent/direct.py); the run's end when the same was proposed already."""
        watch = self.watch
        if watch is not None and not watch.intent.change:
            raise InterpreterError(Nudge.NOT_ASKED.says(call=watch.first_read()))
        key = ("<search/replace>", reply.strip())
        last = watch.last_patch() if watch is not None else None
        if watch is not None and key in watch.blocks and last is not None:
            said = describe_proposal(last, held=watch.intent.held)
            return CodeOutput(output=said, logs="", is_final_answer=True)
        named = watch.named_files if watch is not None else []
        whole = watch is not None and watch.whole_text
        result = self.edit_blocks(reply, named[0] if len(named) == 1 else None, whole)
        if watch is not None and "error" not in result:
            watch.blocks.add(key)
        shown = "\n".join(f"{key}: {value}" for key, value in result.items())
        return CodeOutput(output=None, logs=shown + "\n", is_final_answer=False)

    def _quotes(self, code: str) -> bool:
        """In a question, a block that calls no tool quotes code for the answer around it
        ("The line that is wrong is: ```return total / (n - 1)``` because ..."): run, it
        could only fail (`return` outside a function) or do nothing the answer needs. So does
        one that is not Python at all (dev jp-chat-indent: `python bin/jsonpointer --indent 4
        f.json` under "use the `--indent` argument", failed as a syntax error until stuck)."""
        if not quotes_code(code, set(self.tools)) and parsed(code) is not None:
            return False
        prose = _outside_blocks(self._reply)
        return len(prose) >= QUOTING_ANSWER_CHARS and not is_plan(
            _before_first_block(self._reply).rstrip(": \n")
        )

    def _answered_before_block(self) -> bool:
        """The reply's prose before its first block is a written answer: long enough, and no
        plan ("..., like this:" ends an answer that shows code; "I will read it:" is a plan)."""
        prose = _before_first_block(self._reply)
        return len(prose) >= ILLUSTRATED_ANSWER_CHARS and not is_plan(prose.rstrip(": \n"))

    def _run_example(self, code: str) -> str | CodeOutput:
        """A block that needs the repository's code (`print(inflection.camelize("a_b",
        False))`) runs through `evaluate`, not the executor that has only the tools (dev
        infl-camel-lower: NameError three times, then stuck). Under a written answer it is
        the answer's example: run once, the answer ends with what it gave; one that raises
        goes back to the model, as does a block under a plan (it is a call)."""
        if not self._answered_before_block():
            return f"print(evaluate(code={code!r}))"
        result = self.tools["evaluate"](code=code)
        if not isinstance(result, dict) or "exception" in result or "error" in result:
            said = Result(result) if isinstance(result, dict) else result
            return CodeOutput(output=None, logs=f"{said}\n", is_final_answer=False)
        gave = str(result.get("printed") or "").strip() or str(result.get("value", ""))
        answer = f"{_closed(self._reply)}\n\nRun just now with this repository's code: {gave}"
        return CodeOutput(output=answer, logs="", is_final_answer=True)

    def _edit(self, path: str, body: str) -> str | CodeOutput:
        """The call that proposes a change block; the run's end when it was proposed already
        (small models propose the same change again instead of saying they are done)."""
        watch = self.watch
        if watch is None:
            return edit_call(path, body)
        key = (path, body.strip())
        last = watch.last_patch()
        if key in watch.blocks and last is not None:
            said = describe_proposal(last, held=watch.intent.held)
            return CodeOutput(output=said, logs="", is_final_answer=True)
        watch.blocks.add(key)
        return edit_call(path, body)

    # --- replies without code --------------------------------------------------------------

    def answer_without_code(self, prose: str) -> str:
        """A reply with no block: a plain answer, or sent back (a plan, a placeholder)."""
        watch = self.watch
        if prose and is_plan(prose) and watch is not None:
            # "I will read the file." is not an answer: the model stopped before its code.
            raise AgentParsingError(Nudge.PLAN.says(call=watch.first_read()), self.logger)
        if prose and not is_placeholder(prose):
            # A plain answer: it passes the same final-answer checks as any other ending
            # (agent/answers.py), which send it back when nothing grounds it.
            return prose
        raise AgentParsingError(Nudge.NO_BLOCK.says(), self.logger)

    # --- stuck -------------------------------------------------------------------------------

    def _check_progress(self, step: ActionStep, **_: Any) -> None:
        """After each step: stop the run when the model only repeats itself."""
        watch = self.watch
        if step.is_final_answer:
            # "Last output from code snippet: <the answer>" under the answer: a later turn's
            # model copies it as its next answer
            step.observations = None
        if watch is not None and watch.intent.change:
            self._after[id(step)] = _observed(watch).says(text=watch.form)
            watch.patches_seen = len(watch.patches)
            hold = getattr(self.model, "hold_next_reply", None)
            if watch.edit_grammar and not watch.changed() and callable(hold):
                # a text change's file was shown and the reply was no change (the 1.5B model
                # answered a README change with the prompt's example call, four times): the
                # next reply is held to the blocks' grammar. Not the first: held from the
                # start, a model that writes the form unaided wrote hundreds of lines more.
                hold(watch.edit_grammar)
        if watch is not None and not watch.searched and _judged(watch):
            self._confirm_fix(step, watch)
        if watch is not None and watch.intent.change and not watch.rewritten and _judged(watch):
            self._rewrite_copied(step, watch)
        if isinstance(step.error, AgentMaxStepsError):
            return
        if watch is not None and watch.loops() >= STUCK_AFTER:
            repeated = watch.state.last_loop_call() or "the same tool call"
            raise RunStuck(f"the model kept repeating {repeated}, which had already run", step)
        if watch is not None and watch.loops() > self._loops_seen:
            self.shake()  # a refused repeat: at a low temperature the next reply is the same
            # it has what it needs and asks for it again: say what to do with it instead
            wanted = Nudge.REPEATED_CALL
            if watch.intent.change and not watch.changed():
                wanted = Nudge.REPEATED_CALL_CHANGE
            said = wanted.says(text=watch.form, task=watch.intent.task)
            step.observations = (step.observations or "").rstrip() + "\n" + said
        self._loops_seen = watch.loops() if watch is not None else 0
        previous = next(
            (s for s in reversed(self.memory.steps) if isinstance(s, ActionStep) and s is not step),
            None,
        )
        failing = (step.error is not None or _told_an_error(step)) and not step.is_final_answer
        if (
            failing
            and previous is not None
            and (previous.error is not None or _told_an_error(previous))
            and ((previous.model_output or "").strip() == (step.model_output or "").strip())
        ):
            self._same_failures += 1
        else:
            self._same_failures = 1 if failing else 0
        if self._same_failures == STUCK_AFTER - 1:
            self.shake()
        if self._same_failures >= STUCK_AFTER:
            told = re.search(r"^message: (.+)$", str(step.observations or ""), re.MULTILINE)
            first = str(step.error) if step.error is not None else told[1] if told else ""
            first = first.strip().splitlines()
            raise RunStuck(
                f"the model wrote the same failing reply {STUCK_AFTER} times"
                + (f" ({first[0][:160]})" if first else ""),
                step,
            )

    def _rewrite_copied(self, step: ActionStep, watch: RunWatch) -> None:
        """After a step whose change copied its function back unchanged: the line of it that
        holds most of the task's words, asked for alone (agent/search.py), proposed in place,
        once per run; the observation says so. Only where a run can judge it (`_judged`): a
        line rewritten with no judge was proposed as a fix no test could tell wrong."""
        found = None if watch.changed() else self.rewrite_line(watch.intent.task)
        if found is None:
            return
        watch.rewritten = True
        path, where, old, new = found
        result = self.tools["propose_patch"](path=path, old_text=old, new_text=new)
        if isinstance(result, dict) and result.get("patch_id"):
            said = Nudge.REWRITTEN.says(
                where=where, path=path, patch=str(result["patch_id"]), diff=result["diff"]
            )
            step.observations = (step.observations or "").rstrip() + "\n" + said

    def _confirm_fix(self, step: ActionStep, watch: RunWatch) -> None:
        """After the model's first change for a symptom with a wanted value that does not give
        it (or for a fix that leaves the tests that failed failing): versions of that step
        sampled again, the first the run confirms proposed (agent/search.py)."""
        if not (watch.blocks or watch.patches) or any(
            _fixes(patch, watch) for patch in watch.patches.values()
        ):
            return
        watch.searched = True
        found = self.search_fix(step.model_input_messages or [], watch.change_file)
        if found is None:
            return
        seed, path, body = found
        result = self.tools["propose_patch"](path=path, old_text="", new_text=body)
        if isinstance(result, dict) and result.get("patch_id"):
            wanted = "; ".join(f"{call} give {value}" for call, value in watch.wants.items())
            made = (
                f"makes {wanted}, as the task says it should"
                if wanted
                else "changes the code, and the "
                + ("tests that failed" if watch.failing else "project's tests")
                + " pass with it"
            )
            step.observations = (
                (step.observations or "").rstrip()
                + "\n"
                + Nudge.CONFIRMED.says(
                    tries=str(seed),
                    made=made,
                    patch=str(result["patch_id"]),
                    diff=str(result.get("diff", "")),
                )
            )

    def shake(self) -> None:
        """Sample the next reply hotter, once: the same prompt at 0.1 gives the same reply."""
        shake = getattr(self.model, "shake_next_reply", None)
        if callable(shake):
            shake()

    # --- what the adapter asks of the history ------------------------------------------------

    def words_after(self, step: Any) -> str:
        return self._after.get(id(step), Nudge.OBSERVED.says())

    def summary_task(self, task: str) -> str:
        # the user's words, without the context given with them
        return self.watch.intent.task if self.watch is not None else task


def _judged(watch: RunWatch) -> bool:
    """What runs can tell a right fix from a wrong one: the value the task says a call should
    give, or, for a fix, the project's tests that failed before it, or, for a new parameter
    started for the model (tools/scaffold.py), the project's tests (agent/search.py)."""
    return bool(watch.wants or (watch.intent.mends and watch.failing) or watch.scaffold)


def _fixes(patch: Patch, watch: RunWatch) -> bool:
    """The patch is the fix by that judge: its calls give the value; or it changes the code and
    passes the checks the fix is held to."""
    if watch.wants:
        return confirmed(patch)
    return changes_code(patch) and not failed_checks(patch.validation, held=watch.intent.held)


#: A tool's error as the model is shown it (base/errors.py's schema): "error: INVALID_ARGUMENT".
_TOLD_ERROR = re.compile(r"^error: [A-Z_]+$", re.MULTILINE)


def _told_an_error(step: ActionStep) -> bool:
    """The step ran, and what it showed is a tool's error: a change refused as it was written
    (the same no-op README block, held to the grammar, came back eight times: dev
    infl-readme-usage) fails like a step that raised."""
    return _TOLD_ERROR.search(str(step.observations or "")) is not None


def _observed(watch: RunWatch) -> Nudge:
    """Where a step leaves a run that asks for a change: a change proposed in it, failing its
    checks (or with the task's failing tests failing still), or no change yet."""
    last = watch.last_patch()
    if len(watch.patches) <= watch.patches_seen or last is None:
        return Nudge.OBSERVED_CHANGE
    failed = failed_checks(last.validation, held=watch.intent.held)
    if not failed:
        return Nudge.PROPOSED
    if all(check.get("fails_without_patch") for check in failed):
        return Nudge.STILL_FAILING
    return Nudge.CHECK_FAILED


def comments_only(code: str) -> str | None:
    """The comments' text when `code` has comments and no statement, else None."""
    tree = parsed(code)
    if tree is None or tree.body:
        return None
    lines = [line.strip().lstrip("#").strip() for line in code.splitlines()]
    lines = [line for line in lines if line and not line.startswith("Call id:")]
    # a comment line is a sentence (jp-explain-walk, dev: nine of them ran together with no
    # full stop between them)
    ends = [
        line + "."
        if line[-1] not in ".!?:;," and (i + 1 == len(lines) or lines[i + 1][0].isupper())
        else line
        for i, line in enumerate(lines)
    ]
    return " ".join(ends) or None


def runs_outside(code: str, tools: set[str]) -> bool:
    """Code that calls no tool and needs what only Python itself has: an import, or a name it
    neither assigns nor gets from the builtins (the repository's module or function)."""
    tree = parsed(code)
    if tree is None or called_names(tree) & (tools | {"final_answer"}):
        return False
    names = [node for node in ast.walk(tree) if isinstance(node, ast.Name)]
    assigned = {node.id for node in names if isinstance(node.ctx, ast.Store)}
    free = {node.id for node in names if isinstance(node.ctx, ast.Load)} - assigned - tools
    imports = any(isinstance(node, (ast.Import, ast.ImportFrom)) for node in ast.walk(tree))
    return imports or bool(free - set(dir(builtins)))


def _closed(reply: str) -> str:
    """The reply as the model wrote it: smolagents appends a fence to a reply that does not
    end with one (for a block cut by a stop sequence), which a written answer does not need."""
    text = reply.strip()
    if text.endswith(FENCE) and text.count(FENCE) % 2:
        text = text[: -len(FENCE)].rstrip()
    return text


def _outside_blocks(reply: str) -> str:
    """The prose of a reply, its fenced blocks left out."""
    parts = reply.split(FENCE)
    return " ".join(part.strip() for part in parts[::2]).strip()


def _before_first_block(reply: str) -> str:
    """The prose a reply starts with, up to its first fence."""
    return reply.split(FENCE, 1)[0].strip()


def _broken_definitions(path: str, body: str) -> bool:
    """A Python file's block that begins as a definition (`def`, `class`, a decorator) and
    does not parse."""
    first = next((ln.strip() for ln in body.splitlines() if ln.strip()), "")
    starts = first.startswith(("def ", "async def ", "class ", "@"))
    return path.endswith(".py") and starts and parsed(textwrap.dedent(body)) is None
