"""Whether a run did what it was asked, judged by what happened rather than by its words.

Small models say "The bug is fixed and the patch was applied" when nothing was proposed. A
task that asks for a change, or an answer that claims one, is only `completed` when the run
really proposed a patch or changed the working tree; otherwise the run is `incomplete` and the
answer says so first.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from ..base.testruns import test_summary
from ..patches.model import Patch
from .evidence import about_failing_tests

_CHANGE_VERBS = (
    r"fix|add|implement|change|update|refactor|rename|write|create|remove|delete|modify|"
    r"make|replace|edit|correct|patch|convert|move|extract|append|insert|improve|rewrite"
)
# An imperative at the start, or after a polite lead-in: "fix the test", "please add ...",
# "can you update ...". A question about a change ("why does fix() fail?") is not one.
_LEAD_IN = (
    r"^\s*(?:(?:please|pls|now|then|ok|okay|go ahead and|also|and)\s+)*"
    r"(?:(?:can|could|would|will) you\s+(?:please\s+)?|i (?:want|need) you to\s+|let'?s\s+)?"
)
_ASKS = re.compile(rf"{_LEAD_IN}(?:{_CHANGE_VERBS})\b", re.IGNORECASE)
#: A change that is a fix: what was broken must work afterwards.
_ASKS_TO_FIX = re.compile(rf"{_LEAD_IN}(?:fix|repair|correct|resolve|debug)\b", re.IGNORECASE)
_CLAIMS = re.compile(
    r"\b(?:i(?:'ve| have)?|we(?:'ve| have)?)\s+(?:now\s+)?(?:fixed|updated|changed|added|"
    r"modified|applied|created|implemented|corrected|renamed|removed|refactored|rewritten|written)\b"
    r"|\b(?:has|have) been (?:fixed|updated|changed|added|modified|applied|created|implemented|"
    r"corrected|renamed|removed|refactored|rewritten|written)\b"
    r"|\b(?:patch|change|fix)(?:es)? (?:was|were) (?:applied|made|written)\b"
    r"|\bsuccessfully (?:fixed|updated|applied|added|modified|changed)\b",
    re.IGNORECASE,
)

#: "... so that the tests pass", "make the test pass".
_TESTS_PASS = re.compile(r"\btests?\b[^.?!]{0,20}\bpass(?:es)?\b", re.IGNORECASE)

#: Which failures that were there before a change count against it (`held_failures`).
Held = Literal["all", "related", "none"]

NOT_DONE = "Not done: no change was proposed or made in this run."
NOT_VERIFIED = "Not done: the proposed change fails its checks."


def _sentences(task: str) -> list[str]:
    return re.split(r"(?<=[.!?\n])\s+", task.strip())


def asks_for_change(task: str) -> bool:
    """True when one of the task's sentences tells the agent to change something."""
    return any(_ASKS.match(sentence) for sentence in _sentences(task))


def claims_change(answer: str) -> bool:
    """True when the answer says a change was made."""
    return bool(_CLAIMS.search(answer))


def needs_a_change(task: str, answer: str) -> bool:
    return asks_for_change(task) or claims_change(answer)


def held_failures(task: str) -> Held:
    """Which failures that were there before a change still count against it.

    - "all": the task speaks of failing tests or asks for them to pass - the broken thing
      must work, whatever the change touched;
    - "related": the task asks for a fix - a test that still fails and uses a file the
      change touches says the fix did not fix it; a failing test elsewhere says nothing of it
      ("Fix the formulas in sizes.py" in a project whose test_calc.py already fails);
    - "none": other changes (add a test, rename) are not held to failures they did not cause.
    """
    if about_failing_tests(task) or _TESTS_PASS.search(task) is not None:
        return "all"
    if any(_ASKS_TO_FIX.match(sentence) for sentence in _sentences(task)):
        return "related"
    return "none"


def failed_checks(validation: dict[str, Any], *, held: Held = "none") -> list[dict[str, Any]]:
    """The checks of a patch's validation that failed (a patch that does not apply: one). A
    check killed at its timeout proves nothing either way (a large test suite): not counted.
    A check that fails the same way without the patch is not the patch's failure, unless the
    task holds the change to it (`held_failures`)."""
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


def describe_proposal(patch: Patch, *, held: Held = "none") -> str:
    """What a run proposed, in the user's words: the files, the change, what the checks said."""
    added, removed = patch.stats()
    files = ", ".join(change.path for change in patch.files)
    text = (
        f"I proposed a change to {files} (patch {patch.id}, +{added} -{removed}): "
        f"{patch.summary.rstrip('.')}."
    )
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
    return text + " Nothing is written until you accept it."
