"""Build tools whose arguments change what they run: `make VAR=value` overrides.

A make variable set on the command line replaces the Makefile's own (`make test CC=/tmp/cc`
runs `/tmp/cc`), so it needs approval like an environment override. Plug-in options of test
runners and build tools (`go test -exec`, `make --eval`, `jest --config`) are the
`tool_hooks` check every program gets (analysis/checks.py, table TOOL_HOOKS).
"""

from __future__ import annotations

import re

from ..analysis.invocation import Invocation
from ..arguments import operands
from .registry import handles


@handles("make")
def make(inv: Invocation) -> None:
    for text in operands(inv.name, inv.texts):
        match = re.match(r"([A-Za-z_][\w.]*)\??=", text)
        if match is not None:
            inv.emit("approval.env-override", name=match.group(1))
            return
