"""One program about to run, as its handler sees it: its arguments, and what it may decide.

A handler (policy/commands/) gets an `Invocation` and records what the program does: `emit`
a rule by id, `touch` a path with an effect (the effect × place table picks the rule), run
code it was given (`shell_code`, `inline_code`, `stdin_code`, `run_script`), or `launch`
the command it wraps. Findings gather in `findings`; a handler that decides the program
without a finding of its own (it only launched another command) calls `claim()`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...shell import UNKNOWN, Field
from ..arguments import short
from ..places import Effect, Place, rule_for
from ..verdicts import Finding
from .code import inline_code_findings
from .state import TAINTED, UNKNOWN_OUTPUT, Call, Output, State
from .walker import Walker


@dataclass
class Invocation:
    """A program, its arguments, the shell state it runs in, and what it reads on stdin."""

    analysis: Walker
    call: Call
    state: State
    stdin: Output | None
    findings: list[Finding] = field(default_factory=list)
    claimed: bool = False
    mark: int = 0  # where in the analysis' findings this program's own go

    @property
    def name(self) -> str:
        return self.call.name

    @property
    def args(self) -> list[Field]:
        return self.call.args

    @property
    def texts(self) -> list[str]:
        return self.call.texts

    @property
    def display(self) -> str:
        return self.call.display

    def claim(self) -> None:
        """The handler decided this program (by running what it wraps); no unknown-command."""
        self.claimed = True

    def emit(self, rule_id: str, **fields: str) -> None:
        """Record the built-in rule `rule_id`, its reason filled in with `fields`."""
        self.findings.append(self.analysis.rules.finding(rule_id, self.display, **fields))

    # -- paths

    def place(self, arg: Field) -> Place:
        return self.analysis.paths.classify(arg, self.state.cwd)

    def touch(self, effect: Effect, target: Field | Place, *, verb: str = "") -> Place:
        """Record what doing `effect` to `target` means where it points; returns the place."""
        place = target if isinstance(target, Place) else self.place(target)
        rule = rule_for(effect, place.kind)
        if rule:
            self.emit(rule, verb=verb or effect.value, path=place.shown)
        return place

    def read(self, target: Field | Place) -> Place:
        return self.touch(Effect.READ, target)

    def write(self, target: Field | Place) -> Place:
        return self.touch(Effect.WRITE, target)

    def delete(self, target: Field | Place, *, recursive: bool) -> Place:
        return self.touch(Effect.RECURSIVE_DELETE if recursive else Effect.DELETE, target)

    # -- code the program runs

    def launch(self, fields: list[Field], stdin: Output | None = None) -> Output:
        """Judge the command a program runs (`sudo CMD`, `xargs CMD`, `find -exec CMD`)."""
        return self.analysis.launch(fields, self.display, self.state, stdin, [])

    def invoke(self, call: Call, stdin: Output | None = None) -> Output:
        """Judge a program reached another way (`python -m pytest` is `pytest`)."""
        return self.analysis.invoke(call, self.state, stdin)

    def shell_code(self, code: Field, positional: list[Field] | None = None) -> None:
        """Shell code the program runs (`sh -c CODE`, `ssh -o ProxyCommand=CODE`)."""
        if not code.known:
            self.dynamic(code, "shell code")
            return
        inner = self.state.copy()
        for i, arg in enumerate(positional or []):
            inner.env[str(i)] = arg.text if arg.known else None
        self.analysis.run(code.text, inner)

    def dynamic(self, code: Field, what: str) -> None:
        """Code known only at run time: denied when it is a download, else asked."""
        if self.analysis.nature(code.scripts).kind in TAINTED:
            self.emit("deny.download-exec", what=what)
        else:
            self.emit("approval.dynamic-code", what=f"{what} built at run time")

    def inline_code(self, code: Field, language: str) -> None:
        """`python -c CODE`, `perl -e CODE`: asked, and denied when it clearly is harmful."""
        if not code.known:
            self.dynamic(code, f"{language} code")
            return
        self.inline_code_text(code.text, language)

    def inline_code_text(self, code: str, language: str) -> None:
        self.emit("approval.inline-code", language=language)
        found = inline_code_findings(code, language, self.analysis.paths, self.state.cwd)
        for rule_id, fields in found.emits:
            self.emit(rule_id, **fields)
        for effect, place, verb in found.touches:
            self.touch(effect, place, verb=verb)
        for command in found.commands:
            self.analysis.run(command, self.state.copy())

    def stdin_code(self, language: str) -> Output:
        """A shell or interpreter that reads its program from standard input."""
        self.analysis.marks.add("sink")
        stdin = self.stdin
        pipeline = short(self.analysis.pipe_display) if self.analysis.pipe_display else ""
        if stdin is None:
            self.emit("approval.interactive", what=language)
        elif stdin.kind == "download":
            self.emit_for(pipeline, "deny.pipe-to-shell", what="a download from the network")
        elif stdin.kind == "decoded":
            self.emit_for(pipeline, "deny.pipe-to-shell", what="decoded or obfuscated text")
        elif stdin.kind == "literal":
            if language == "shell":
                self.analysis.run(stdin.text, self.state.copy())
            else:
                self.inline_code_text(stdin.text, language)
        elif stdin.kind == "file":
            shown = self.analysis.paths.show(stdin.text)
            self.emit("approval.run-script", what=f"the script `{shown}`")
        else:
            self.emit_for(pipeline, "approval.pipe-to-shell", language=language)
        return UNKNOWN_OUTPUT

    def emit_for(self, display: str, rule_id: str, **fields: str) -> None:
        """Like emit, but the finding shows `display` (the whole pipeline) when there is one."""
        rules = self.analysis.rules
        self.findings.append(rules.finding(rule_id, display or self.display, **fields))

    def run_script(self, script: Field, language: str) -> Output:
        """A script file the program runs, which the policy cannot see into."""
        nature = self.analysis.nature(script.scripts) if script.scripts else None
        if nature is not None and nature.kind in TAINTED:
            self.emit("deny.download-exec", what="a script")
            return UNKNOWN_OUTPUT
        if nature is not None and nature.kind == "literal" and script.text.startswith("/dev/fd/"):
            # `bash <(echo CODE)`, `source <(cat <<EOF ...)`: the code is known; judge it.
            if language == "shell script":
                self.analysis.run(nature.text, self.state.copy())
            else:
                self.inline_code_text(nature.text, language.removesuffix(" script"))
            return UNKNOWN_OUTPUT
        if script.text in ("/dev/stdin", "-"):
            return UNKNOWN_OUTPUT
        place = self.place(script)
        if place.absolute is not None and place.absolute in self.state.downloaded:
            self.emit("deny.download-exec", what=f"`{place.shown}`")
        else:
            self.emit("approval.run-script", what=f"the {language} `{place.shown}`")
        return UNKNOWN_OUTPUT


def unknown_field(arg: Field) -> Field:
    """A field whose text is unknown but whose substitutions are kept."""
    return Field(UNKNOWN, scripts=arg.scripts)
