"""The command policy: decides in Python, never in a prompt, whether a shell command may run.

`CommandPolicy.verdict(command)` reads the command with the shell reader (tree-sitter-bash
and our expansion), finds every program it would run, through wrappers (`sudo`, `env`,
`xargs`), inline shells (`sh -c`, `eval`) and substitutions, and returns the strictest
verdict of its parts:

- `deny`: never runs (recursive deletes outside the repository, downloads piped into a shell,
  writes to system files or devices, secrets, fork bombs, power and disk tools, ...);
- `require_approval`: the user decides (installs, pushes, deletes in the repository, network,
  scripts and hidden code the policy cannot see into, anything unknown or unparseable);
- `allow`: runs (read-only inspection, the project's tests and checks).

The layout: `rules.py` loads `default_rules.toml` and a repository's
`.smol-instruments/policy.toml` (one schema, pydantic); `tables.py` describes how programs take
their arguments; `places.py` is the effect × place table; `analysis/` walks a command;
`commands/` holds the programs with their own semantics, by family, in one registry;
`facade.py` is `CommandPolicy`. docs/policy.md describes the format and every rule id.
"""

from .facade import MAX_COMMAND_CHARS, CommandPolicy
from .rules import POLICY_FILE, PolicyConfigError, PolicyRules, Rule, load_rules
from .verdicts import ALLOW, ASK, DENY, PolicyDecision, Verdict

__all__ = [
    "ALLOW",
    "ASK",
    "DENY",
    "MAX_COMMAND_CHARS",
    "POLICY_FILE",
    "CommandPolicy",
    "PolicyConfigError",
    "PolicyDecision",
    "PolicyRules",
    "Rule",
    "Verdict",
    "load_rules",
]
