"""What the analysis tracks while it walks a command: the shell's state and what flows in pipes.

`State` is what the shell would know at each point: variables (None when their value is
decided at run time), the working directory, functions defined, files just downloaded.
`Output` is what a command prints, as far as running it as code goes: a download, decoded
text, a literal the policy can read, paths, or something unknown. `Call` is one program about
to run with its expanded arguments.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ...shell import Field, Script, SimpleCommand, expand_word, static_output

if TYPE_CHECKING:
    from ..places import Paths


@dataclass(frozen=True)
class Output:
    """What a command writes to its standard output, as far as piping into a shell goes."""

    kind: str  # none | unknown | literal | download | decoded | passthrough | paths | environment
    text: str = ""


NONE = Output("none")
ENVIRONMENT = Output("environment")  # variables, which often hold tokens
UNKNOWN_OUTPUT = Output("unknown")
PASSTHROUGH = Output("passthrough")  # what came in goes out (`cat`, `tee`)
DOWNLOAD = Output("download")
DECODED = Output("decoded")
TAINTED = frozenset({"download", "decoded"})
# Outputs that stay what they are through filters (`curl x | grep y | sh` still runs a download).
STICKY = TAINTED | {"environment"}


def merge(a: Output, b: Output) -> Output:
    """The output of two commands one after the other."""
    if a.kind == "none":
        return b
    if b.kind == "none":
        return a
    for kind in ("download", "decoded"):
        if kind in (a.kind, b.kind):
            return Output(kind)
    if a.kind == b.kind == "literal":
        return Output("literal", a.text + b.text)
    return UNKNOWN_OUTPUT


@dataclass
class Call:
    """One program about to run: its canonical name, its expanded arguments, how it reads."""

    name: str
    args: list[Field]
    display: str

    @property
    def texts(self) -> list[str]:
        return [a.text for a in self.args]


_MISSING = object()


@dataclass
class State:
    """What the shell knows while the command runs: variables, directory, functions."""

    env: dict[str, str | None]
    cwd: str | None
    functions: set[str] = field(default_factory=set)
    downloaded: set[str] = field(default_factory=set)
    integers: set[str] = field(
        default_factory=set
    )  # `declare -i` names: assignments are arithmetic

    def copy(self) -> State:
        return State(
            dict(self.env), self.cwd, set(self.functions), set(self.downloaded), set(self.integers)
        )

    def assign(self, name: str, value: str | None) -> None:
        self.env[name] = value

    def join(self, branch: State) -> None:
        """Take in a branch that may or may not have run: whatever differs becomes unknown."""
        for name in set(self.env) | set(branch.env):
            if self.env.get(name, _MISSING) != branch.env.get(name, _MISSING):
                self.env[name] = None
        if branch.cwd != self.cwd:
            self.cwd = None
        self.functions |= branch.functions
        self.downloaded |= branch.downloaded
        self.integers |= branch.integers


class Env:
    """The shell's Environment for one state: variables, and outputs the policy can know."""

    def __init__(self, paths: Paths, state: State) -> None:
        self.paths = paths
        self.state = state

    def var(self, name: str) -> str | None:
        if name in self.state.env:
            return self.state.env[name]
        if name == "HOME":
            return self.paths.home
        if name == "PWD":
            return self.state.cwd
        if name == "IFS":
            return " \t\n"
        return None

    def output(self, script: Script) -> str | None:
        command = single_command(script)
        if command is not None:
            echoed = self.echo_output(command)
            if echoed is not None:
                return echoed
            heredoc = self.cat_heredoc(command)
            if heredoc is not None:
                return heredoc
        text = static_output(script)
        if text is not None:
            return text
        words = [w.literal() for w in command.words] if command is not None else []
        if words == ["pwd"]:
            return self.state.cwd
        if words == ["git", "rev-parse", "--show-toplevel"]:
            return self.paths.root
        return _listed_paths(words, self.paths.home)

    def echo_output(self, command: SimpleCommand) -> str | None:
        """What `$(echo ~/x)` prints, expanding its words like the shell would."""
        if command.redirects or not command.words or command.words[0].literal() != "echo":
            return None
        fields = [f for w in command.words[1:] for f in expand_word(w, self)]
        while fields and fields[0].text in ("-n", "-E"):
            fields = fields[1:]
        if not all(f.known and not f.glob for f in fields) or any(
            f.text.startswith("-e") for f in fields[:1]
        ):
            return None
        return " ".join(f.text for f in fields)

    def cat_heredoc(self, command: SimpleCommand) -> str | None:
        """What `$(cat <<'EOF' ... EOF)` prints: the here-document, when it expands to text."""
        if [w.literal() for w in command.words] != ["cat"] or len(command.redirects) != 1:
            return None
        doc = command.redirects[0].heredoc
        if doc is None:
            return None
        if doc.word is None:
            return doc.body
        fields = expand_word(doc.word, self)
        return fields[0].text if len(fields) == 1 and fields[0].known else None


def single_command(script: Script) -> SimpleCommand | None:
    """The one simple command a script consists of, if that is all it is."""
    if len(script.items) != 1 or len(script.items[0].command.pipelines) != 1:
        return None
    commands = script.items[0].command.pipelines[0].commands
    return commands[0] if len(commands) == 1 and isinstance(commands[0], SimpleCommand) else None


def _listed_paths(words: list[str | None], home: str) -> str | None:
    """`$(git ls-files)`, `$(find src -name x)`: some paths below a directory, as a glob."""
    if None in words or any(w in ("-C", "--git-dir", "--work-tree") for w in words):
        return None
    if words[:2] == ["git", "ls-files"] or (
        words[:2] == ["git", "diff"] and "--name-only" in words
    ):
        return "./*"
    root = str(words[1]) if len(words) > 1 else ""
    if words[:1] == ["find"] and root and not root.startswith(("-", "(", "!")):
        root = home + root[1:] if root == "~" or root.startswith("~/") else root
        return root.rstrip("/") + "/*"
    return None
