"""Fresh dev tasks for the impact of a change (written 2026-12-07, before any run): the callers
kind, where the held-out split has a false success and a failure left, asked the way people
ask before they edit ("is it safe to tweak ...", "what breaks if ..."). On the dev
repositories. Their first run measures the agent on requests none of its rules were written
from; after that they are dev like the others.
"""

from __future__ import annotations

from .checks import answer_names_callers
from .dev import INFLECTION
from .dev_semver import VERSION
from .tasks import Task, answers

SIXTH: tuple[Task, ...] = (
    Task(
        "infl-humanize-impact",
        "inflection",
        "callers",
        ("is it safe to tweak humanize? what else would that touch",),
        answer_names_callers("inflection", INFLECTION, "humanize", transitive=True),
        "answer names every function that reaches humanize (titleize)",
        answers("titleize calls humanize, so a change to humanize changes titleize too."),
    ),
    Task(
        "jp-to-last-impact",
        "jsonpointer",
        "callers",
        ("thinking of changing what to_last returns. what breaks?",),
        answer_names_callers("jsonpointer", "jsonpointer.py", "to_last", transitive=True),
        "answer names every function that reaches to_last (JsonPointer.set, set_pointer)",
        answers("JsonPointer.set unpacks to_last's pair, and set_pointer calls set."),
    ),
    Task(
        "sv-increment-impact",
        "semver",
        "callers",
        ("who uses _increment_string? i want it to handle 'rc' with no number",),
        answer_names_callers("semver", VERSION, "_increment_string"),
        "answer names every function of version.py that calls _increment_string",
        answers("bump_prerelease and bump_build call _increment_string."),
    ),
)
