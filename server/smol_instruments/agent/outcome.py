"""Whether a run did what it was asked, judged by what happened rather than by its words.

Small models say "The bug is fixed and the patch was applied" when nothing was proposed. A
task that asks for a change, or an answer that claims one, is only `completed` when the run
really proposed a patch or changed the working tree; otherwise the run is `incomplete` and the
answer says so first.
"""

from __future__ import annotations

import re
from typing import Any

from ..patches.model import Patch
from ..tools.shell import test_summary

_CHANGE_VERBS = (
    r"fix|add|implement|change|update|refactor|rename|write|create|remove|delete|modify|"
    r"make|replace|edit|correct|patch|convert|move|extract|append|insert|improve|rewrite"
)
# An imperative at the start, or after a polite lead-in: "fix the test", "please add ...",
# "can you update ...". A question about a change ("why does fix() fail?") is not one.
_ASKS = re.compile(
    rf"^\s*(?:(?:please|pls|now|then|ok|okay|go ahead and|also|and)\s+)*"
    rf"(?:(?:can|could|would|will) you\s+(?:please\s+)?|i (?:want|need) you to\s+|let'?s\s+)?"
    rf"(?:{_CHANGE_VERBS})\b",
    re.IGNORECASE,
)
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


def asks_for_change(task: str) -> bool:
    """True when one of the task's sentences tells the agent to change something."""
    sentences = re.split(r"(?<=[.!?\n])\s+", task.strip())
    return any(_ASKS.match(sentence) for sentence in sentences)


def claims_change(answer: str) -> bool:
    """True when the answer says a change was made."""
    return bool(_CLAIMS.search(answer))


def needs_a_change(task: str, answer: str) -> bool:
    return asks_for_change(task) or claims_change(answer)


def failed_checks(validation: dict[str, Any]) -> list[dict[str, Any]]:
    """The checks of a patch's validation that failed (a patch that does not apply: one). A
    check killed at its timeout proves nothing either way (a large test suite): not counted."""
    if validation.get("applies") is False:
        return [{"command": "apply", "output": validation.get("message") or ""}]
    return [
        check
        for check in validation.get("checks", [])
        if not check.get("passed") and not check.get("timed_out")
    ]


def describe_proposal(patch: Patch) -> str:
    """What a run proposed, in the user's words: the files, the change, what the checks said."""
    added, removed = patch.stats()
    files = ", ".join(change.path for change in patch.files)
    text = (
        f"I proposed a change to {files} (patch {patch.id}, +{added} -{removed}): "
        f"{patch.summary.rstrip('.')}."
    )
    validation = patch.validation
    failed = failed_checks(validation)
    checks = [check.get("command", "") for check in validation.get("checks", [])]
    if failed:
        said = test_summary(failed[0].get("output") or "", "")
        text += f" It fails `{failed[0].get('command')}`" + (f": {said}" if said else "") + "."
    elif checks:
        passed = [c.get("command", "") for c in validation["checks"] if c.get("passed")]
        slow = [c.get("command", "") for c in validation["checks"] if c.get("timed_out")]
        if passed:
            text += " It applies, and " + ", ".join(f"`{c}`" for c in passed) + " passed with it."
        if slow:
            text += " " + ", ".join(f"`{c}`" for c in slow) + " did not finish in time."
    elif validation.get("message"):
        text += f" ({validation['message']})"
    return text + " Nothing is written until you accept it."
