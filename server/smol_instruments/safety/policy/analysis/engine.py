"""The analysis of one command: walks its syntax tree and records a finding for every risk.

`Analysis.run` parses shell text (a command, or the code given to `sh -c` and `eval`) and
walks it as bash would run it: lists and pipelines, branches that may or may not run (their
effects on variables and the directory are joined), loops, functions, substitutions,
redirections. Every simple command becomes a program call: wrappers are looked through, the
program's handler (policy/commands/) and its table rows decide, then the checks every call
gets (files in options, secrets, reads outside the repository) and the repository's rules.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ...shell import (
    UNKNOWN,
    AndOr,
    ArithCommand,
    Case,
    Command,
    CondCommand,
    Field,
    For,
    FunctionDef,
    Group,
    If,
    Loop,
    Pipeline,
    Redirect,
    Script,
    SimpleCommand,
    Word,
    command_words,
    expand_value,
    expand_word,
    parse_repaired,
    word_scripts,
)
from ..arguments import canonical, short
from ..commands import HANDLERS
from ..commands.wrappers import unwrap
from ..places import INSIDE, NETWORK, UNKNOWN_PLACE, Paths
from ..rules import PolicyRules
from ..tables import (
    BIN_DIRS,
    INTERPRETERS,
    NO_PATH_ARGS,
    OWN_PATHS,
    REPO_BIN_DIRS,
    SHELLS,
    WRAPPERS,
)
from ..verdicts import ALLOW, DENY, RANK, Finding, strictest
from . import checks
from .evaluated import evaluated_text
from .invocation import Invocation
from .state import (
    ENVIRONMENT,
    NONE,
    STICKY,
    TAINTED,
    UNKNOWN_OUTPUT,
    Call,
    Env,
    Output,
    State,
    merge,
)

#: `sh -c` inside `eval` inside `bash -c` ...: deeper than this is refused as unparseable.
MAX_SHELL_DEPTH = 6


class Analysis:
    """One verdict() call: its findings, and what it learnt about substitutions' output."""

    def __init__(self, rules: PolicyRules, paths: Paths, warn: Callable[[str], None]) -> None:
        self.rules = rules
        self.paths = paths
        self.warn = warn
        self.findings: list[Finding] = []
        self.natures: dict[int, Output] = {}
        self.shell_depth = 0
        # How many loop bodies may still be checked once per value (`for d in / ~`).
        self.loop_budget = 32
        self.marks: set[str] = set()
        self.pipe_display = ""

    def emit(
        self, rule_id: str, display: str | None, into: list[Finding] | None = None, **fields: str
    ) -> None:
        """Record the built-in rule `rule_id` for `display`, its reason filled in."""
        finding = self.rules.finding(rule_id, display, **fields)
        (self.findings if into is None else into).append(finding)

    def env(self, state: State) -> Env:
        return Env(self.paths, state)

    # -- the tree

    def run(self, text: str, state: State, feed: Output | None = None) -> Output:
        """Parse and evaluate shell text (a command, or the code given to sh -c / eval)."""
        if self.shell_depth > MAX_SHELL_DEPTH:
            self.emit("approval.unparseable", short(text), problem="nests shells too deeply")
            return UNKNOWN_OUTPUT
        script, error = parse_repaired(text, depth=self.shell_depth * 4)
        if error is not None:
            # First, so that it is the reason given unless the repaired text is denied.
            self.emit("approval.unparseable", short(text), problem=f"could not be parsed ({error})")
        self.shell_depth += 1
        try:
            return self.script(script, state, feed)
        finally:
            self.shell_depth -= 1

    def script(self, script: Script, state: State, feed: Output | None = None) -> Output:
        out = NONE
        for item in script.items:
            out = merge(out, self.and_or(item.command, state, feed))
        return out

    def and_or(self, and_or: AndOr, state: State, feed: Output | None) -> Output:
        # `A && B && C`: B and C see A's effects, but may not run; `||` starts a new branch.
        out = self.pipeline(and_or.pipelines[0], state, feed)
        branch: State | None = None
        for operator, pipeline in zip(and_or.operators, and_or.pipelines[1:], strict=False):
            if branch is None or operator == "||":
                if branch is not None:
                    state.join(branch)
                branch = state.copy()
            out = merge(out, self.pipeline(pipeline, branch, feed))
        if branch is not None:
            state.join(branch)
        return out

    def pipeline(self, pipeline: Pipeline, state: State, feed: Output | None) -> Output:
        if len(pipeline.commands) == 1:
            return self.command(pipeline.commands[0], state, feed)
        outer_display, outer_marks = self.pipe_display, self.marks
        self.pipe_display = pipeline.raw
        current = feed
        stage_marks: list[set[str]] = []
        try:
            for command in pipeline.commands:
                self.marks = set()
                out = self.command(command, state.copy(), current)
                stage_marks.append(self.marks)
                if (
                    "network" in self.marks
                    and current is not None
                    and current.kind == "environment"
                ):
                    self.emit("deny.exfiltration", short(pipeline.raw))
                if out.kind == "passthrough":
                    out = current or UNKNOWN_OUTPUT
                elif (
                    current is not None
                    and current.kind in STICKY
                    and out.kind not in STICKY | {"literal"}
                ):
                    out = current  # downloaded or decoded text stays so through filters
                current = out
        finally:
            self.pipe_display, self.marks = outer_display, outer_marks
        sinks = [i for i, m in enumerate(stage_marks) if "sink" in m]
        networks = [i for i, m in enumerate(stage_marks) if "network" in m]
        if sinks and networks and min(sinks) < max(networks):
            self.emit("deny.reverse-shell", short(pipeline.raw), what="a shell's input or output")
        return current or UNKNOWN_OUTPUT

    def command(self, command: Command, state: State, feed: Output | None) -> Output:
        if isinstance(command, SimpleCommand):
            return self.simple(command, state, feed)
        if isinstance(command, FunctionDef):
            self.function_def(command, state)
            return NONE
        feed = self.compound_redirects(command.redirects, state, feed)
        if isinstance(command, Group):
            return self.script(command.body, state.copy() if command.subshell else state, feed)
        if isinstance(command, If):
            out = NONE
            for i, (condition, body) in enumerate(command.branches):
                scope = state if i == 0 else state.copy()  # an `elif` test may not run
                out = merge(out, self.script(condition, scope, feed))
                out = merge(out, self.branch(body, scope, feed))
                if scope is not state:
                    state.join(scope)
            if command.else_body is not None:
                out = merge(out, self.branch(command.else_body, state, feed))
            return out
        if isinstance(command, Loop):
            out = self.script(command.condition, state, feed)
            return merge(out, self.branch(command.body, state, feed))
        if isinstance(command, For):
            return self.for_loop(command, state, feed)
        if isinstance(command, Case):
            self.nested_in_words([command.word], state)
            out = NONE
            for arm in command.arms:
                self.nested_in_words(list(arm.patterns), state)
                out = merge(out, self.branch(arm.body, state, feed))
            return out
        if isinstance(command, ArithCommand):
            display = f"(({short(command.expr.text)}))"
            evaluated_text(self, command.expr.text, state, display, "arithmetic", raw=True)
            for sub in command.expr.subs:
                self.script(sub, state.copy())
            self.emit("allow.builtin", display, what="computes arithmetic")
            return NONE
        assert isinstance(command, CondCommand)
        return self.condition(command, state)

    def condition(self, command: CondCommand, state: State) -> Output:
        display = short("[[ " + " ".join(w.raw for w in command.words) + " ]]")
        self.nested_in_words(list(command.words), state)
        for word in command.evaluated:
            self.evaluated_word(word, state, display, "arithmetic or a variable name")
        self.emit("allow.builtin", display, what="tests a condition")
        return NONE

    def evaluated_word(self, word: Word, state: State, display: str, how: str) -> None:
        """A word bash evaluates again (an arithmetic operand, a variable name), unsplit."""
        text = " ".join(value.text for value in expand_word(word, self.env(state)))
        evaluated_text(self, text, state, display, how, word)

    def branch(
        self,
        script: Script,
        state: State,
        feed: Output | None,
        variable: str = "",
        value: str | None = None,
    ) -> Output:
        """A body that may or may not run: checked in order on a copy, then joined back."""
        inner = state.copy()
        if variable:
            inner.assign(variable, value)
        out = self.script(script, inner, feed)
        state.join(inner)
        return out

    def for_loop(self, loop: For, state: State, feed: Output | None) -> Output:
        if loop.arith is not None:
            display = f"for (({short(loop.arith.text)}))"
            evaluated_text(self, loop.arith.text, state, display, "arithmetic", raw=True)
            for sub in loop.arith.subs:
                self.script(sub, state.copy())
        values: list[str | None] = [None]
        if loop.words is not None:
            self.nested_in_words(list(loop.words), state)
            fields = [f for w in loop.words for f in expand_word(w, self.env(state))]
            if 0 < len(fields) <= min(8, self.loop_budget) and all(f.known for f in fields):
                # Small static lists: check every value (a glob stands for the paths it matches).
                self.loop_budget -= len(fields)
                values = [f.text for f in fields]
        out = NONE
        for value in values:
            out = merge(out, self.branch(loop.body, state, feed, loop.variable, value))
        return out

    def function_def(self, function: FunctionDef, state: State) -> None:
        if checks.fork_bomb(function):
            what = "calls itself in a pipe or in the background"
            self.emit("deny.fork-bomb", short(function.name), what=what)
        state.functions.add(function.name)
        # The body is checked once, where it is defined; calls to it add nothing new.
        self.command(function.body, state.copy(), None)

    def nested_in_words(self, words: Iterable[Word], state: State) -> None:
        """Evaluate the substitutions inside words, remembering what each one prints."""
        for word in words:
            for sub in word_scripts(word):
                self.natures[id(sub)] = self.script(sub, state.copy())
            checks.evaluations(self, word, state)

    def nature(self, scripts: Iterable[Script]) -> Output:
        """What the substitutions print, merged: a download stays a download."""
        out = NONE
        for script in scripts:
            out = merge(out, self.natures.get(id(script), UNKNOWN_OUTPUT))
        return out

    def compound_redirects(
        self, redirects: tuple[Redirect, ...], state: State, feed: Output | None
    ) -> Output | None:
        for redirect in redirects:
            if redirect.target is not None:
                self.nested_in_words([redirect.target], state)
            if redirect.heredoc is not None and redirect.heredoc.word is not None:
                self.nested_in_words([redirect.heredoc.word], state)
            display = f"{redirect.op} {redirect.target.raw}" if redirect.target else redirect.op
            feed, _ = self.redirect(redirect, state, feed, display, self.findings)
        return feed

    # -- simple commands

    def simple(self, command: SimpleCommand, state: State, feed: Output | None) -> Output:
        self.nested_in_words(list(command_words(command)), state)
        display = short(command.raw)
        local: list[Finding] = []
        stdout_targets: list[str] = []
        stdin = feed
        for redirect in command.redirects:
            stdin, target = self.redirect(redirect, state, stdin, display, local)
            if target is not None:
                stdout_targets.append(target)
        env = self.env(state)
        fields = [f for w in command.words for f in expand_word(w, env)]
        for assignment in command.assignments:
            checks.assignment(self, assignment, state, display, local)
            if not fields:
                value = expand_value(assignment.value, env) if assignment.array is None else None
                state.assign(assignment.name, value)
        if not fields:
            if not local:
                self.emit(
                    "allow.builtin", display, local, what="sets shell variables or redirections"
                )
            self.findings.extend(local)
            return NONE
        out = self.launch(fields, display, state, stdin, local, command.redirects)
        if out.kind == "passthrough" and stdin is not None:
            out = stdin  # `cat <<EOF`: what came in goes out
        if out.kind == "download":
            state.downloaded.update(stdout_targets)
        return out

    def launch(
        self,
        fields: list[Field],
        display: str,
        state: State,
        stdin: Output | None,
        local: list[Finding],
        redirects: tuple[Redirect, ...] = (),
    ) -> Output:
        """Resolve the program a simple command names, then invoke it."""
        head = fields[0]
        if not head.known:
            if self.nature(head.scripts).kind in TAINTED:
                self.emit("deny.download-exec", display, local, what="a command name")
            self.emit("approval.dynamic-command", display, local)
            inv = Invocation(self, Call("", fields[1:], display), state, stdin, local)
            checks.secret_scan(inv)
            self.findings.extend(local)
            return UNKNOWN_OUTPUT
        name = head.text
        if "/" in name:
            directory, _, base = name.rpartition("/")
            if directory not in BIN_DIRS and not self.is_repo_tool_dir(directory or "/", state):
                inv = Invocation(self, Call(base, fields[1:], display), state, stdin, local)
                inv.run_script(head, "program")
                if not self.is_known(canonical(base)):
                    self.findings.extend(local)
                    return UNKNOWN_OUTPUT
            name = base
        if name in state.functions:
            self.emit("allow.function-call", display, local)
            self.findings.extend(local)
            return UNKNOWN_OUTPUT
        call = Call(canonical(name), fields[1:], display)
        shell = call.name in SHELLS or call.name in INTERPRETERS
        if shell and any(self.redirect_kind(r, state) == NETWORK for r in redirects if r.target):
            self.emit("deny.reverse-shell", display, local, what="a shell")
        return self.invoke(call, state, stdin, local)

    def is_repo_tool_dir(self, directory: str, state: State) -> bool:
        place = self.paths.classify_text(directory, state.cwd)
        if place.kind != INSIDE or place.absolute is None:
            return False
        return REPO_BIN_DIRS.search(self.paths.show(place.absolute)) is not None

    def is_known(self, name: str) -> bool:
        return name in HANDLERS or name in WRAPPERS or self.rules.knows(name)

    def invoke(
        self, call: Call, state: State, stdin: Output | None, local: list[Finding] | None = None
    ) -> Output:
        """Decide one program: its handler and table rows, the checks, the repository's rules."""
        inv = Invocation(self, call, state, stdin, [] if local is None else local)
        inv.mark = len(self.findings)
        wrapper = WRAPPERS.get(call.name)
        if wrapper is not None:
            inner, inner_state = unwrap(inv, wrapper)
            self.add_table_finding(inv)
            # Alone (`strace -p PID`, `nice`), a wrapper needs its own rule to be allowed.
            inv.claimed = inner is not None
            self.finish(inv)
            if inner is None:
                prints_env = call.name == "env" and "-S" not in call.texts
                return ENVIRONMENT if prints_env else UNKNOWN_OUTPUT
            return self.launch(inner, call.display, inner_state, stdin, [])
        before = len(inv.findings)
        handler = HANDLERS.get(call.name)
        out = handler(inv) if handler is not None else None
        inv.claimed = inv.claimed or len(inv.findings) > before
        # The table row comes last so that, between equal verdicts, a specific reason wins.
        self.add_table_finding(inv)
        self.finish(inv)
        return out or UNKNOWN_OUTPUT

    def add_table_finding(self, inv: Invocation) -> None:
        finding = self.rules.table_finding(inv.name, inv.texts, inv.display)
        if finding is not None:
            inv.findings.append(finding)
            inv.claim()

    def finish(self, inv: Invocation) -> None:
        """The checks every program gets, then the repository's rules."""
        if not inv.findings and not inv.claimed:
            inv.emit("approval.unknown-command", program=inv.name)
        checks.embedded_commands(inv)
        checks.tool_hooks(inv)
        checks.work_dirs(inv)
        checks.file_options(inv)
        if inv.name not in NO_PATH_ARGS:
            checks.secret_scan(inv)
        current = strictest(inv.findings)
        if (
            current is not None
            and current.verdict == ALLOW
            and inv.name not in NO_PATH_ARGS | OWN_PATHS
        ):
            checks.read_scan(inv)
        self.apply_repo_rules(inv)
        # The program's own findings before those of the code it runs: its reason wins a tie.
        self.findings[inv.mark : inv.mark] = inv.findings

    def apply_repo_rules(self, inv: Invocation) -> None:
        matched = self.rules.repo_finding(inv.name, inv.texts, inv.display)
        if matched is None:
            return
        rule, finding = matched
        current = strictest(inv.findings)
        if current is None or RANK[finding.verdict] >= RANK[current.verdict]:
            inv.findings.append(finding)
        elif current.verdict == DENY:
            self.warn(
                f"policy.toml rule {rule.id!r} would loosen the deny rule {current.rule!r} "
                f"for `{inv.display}`; deny rules are never loosened"
            )
        elif self.rules.allow_repo_loosening:
            inv.findings[:] = [finding]
        else:
            self.warn(
                f"policy.toml rule {rule.id!r} would loosen {current.rule!r} for `{inv.display}`; "
                "ignored (set POLICY_ALLOW_REPO_LOOSENING=true to honour it)"
            )

    # -- redirections

    def redirect_kind(self, redirect: Redirect, state: State) -> str:
        if redirect.target is None:
            return ""
        fields = expand_word(redirect.target, self.env(state))
        return self.paths.classify(fields[0], state.cwd).kind if len(fields) == 1 else UNKNOWN_PLACE

    def redirect(
        self,
        redirect: Redirect,
        state: State,
        stdin: Output | None,
        display: str,
        local: list[Finding],
    ) -> tuple[Output | None, str | None]:
        """Check one redirection; returns the new standard input and any stdout file written."""
        op = redirect.op
        if redirect.heredoc is not None:
            return checks.heredoc_input(self, redirect.heredoc, state), None
        if redirect.target is None:
            return stdin, None
        fields = expand_word(redirect.target, self.env(state))
        if op == "<<<":
            if fields and all(f.known for f in fields):
                return Output("literal", " ".join(f.text for f in fields) + "\n"), None
            nature = self.nature(word_scripts(redirect.target))
            return (nature if nature.kind in TAINTED else UNKNOWN_OUTPUT), None
        target = fields[0] if len(fields) == 1 else Field(UNKNOWN)
        if op in (">&", "<&") and (target.text.isdigit() or target.text == "-"):
            return stdin, None
        inv = Invocation(self, Call("", [], display), state, stdin, local)
        if op == "<" and target.scripts and target.text.startswith("/dev/fd/"):
            return self.nature(target.scripts), None  # `< <(cmd)` reads what cmd prints
        if op in ("<", "<>"):
            place = inv.read(target)
            if op == "<":
                if place.absolute is not None and place.absolute in state.downloaded:
                    return Output("download"), None
                return Output("file", place.absolute or ""), None
        place = inv.write(target)
        writes_stdout = redirect.fd in (None, 1) and op != "<"
        return stdin, (place.absolute if writes_stdout and place.absolute else None)
