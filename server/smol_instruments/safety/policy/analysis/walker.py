"""What handlers and checks may ask of the analysis: the port the engine implements.

Invocations, checks and the evaluation of hidden text call back into the walk (judge shell
code, launch the command a wrapper runs, look up what a substitution printed) through this
protocol, so that nothing below the engine imports it and the imports point one way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Protocol

from ...shell import Field, Redirect, Script, Word
from ..places import Paths
from ..rules import PolicyRules
from ..verdicts import Finding
from .state import Call, Env, Output, State


class Walker(Protocol):
    """The analysis of one command, as its parts see it."""

    rules: PolicyRules
    paths: Paths
    warn: Callable[[str], None]
    findings: list[Finding]
    marks: set[str]
    pipe_display: str

    def emit(
        self, rule_id: str, display: str | None, into: list[Finding] | None = None, **fields: str
    ) -> None: ...

    def env(self, state: State) -> Env: ...

    def run(self, text: str, state: State, feed: Output | None = None) -> Output: ...

    def launch(
        self,
        fields: list[Field],
        display: str,
        state: State,
        stdin: Output | None,
        local: list[Finding],
        redirects: tuple[Redirect, ...] = (),
    ) -> Output: ...

    def invoke(
        self, call: Call, state: State, stdin: Output | None, local: list[Finding] | None = None
    ) -> Output: ...

    def nature(self, scripts: Iterable[Script]) -> Output: ...

    def evaluated_word(self, word: Word, state: State, display: str, how: str) -> None: ...
