"""Fresh dev tasks for exact behaviour asked without a call written out (written 2026-12-07,
before any run): the behaviour kind, where the held-out split has a false success left and
people ask about an input in words ("something like iPhone", "an attribute it doesn't
have"). On the dev repositories. Their first run measures the agent on requests none of its
rules were written from; after that they are dev like the others.
"""

from __future__ import annotations

from .checks import all_of, answer_gives, answer_lacks, answer_raises, answer_says
from .tasks import Task, answers

EIGHTH: tuple[Task, ...] = (
    Task(
        "infl-titleize-iphone",
        "inflection",
        "behaviour",
        ("how does titleize deal with something like iPhone?",),
        all_of(
            answer_gives("inflection", "inflection.titleize('iPhone')", setup="import inflection"),
            answer_lacks(r"(?-i:\bIphone\b)"),
        ),
        "answer gives titleize('iPhone'), computed ('I Phone': the capital splits the word)",
        answers("titleize('iPhone') gives 'I Phone': the capital P starts a new word."),
    ),
    Task(
        "infl-humanize-id",
        "inflection",
        "behaviour",
        ("does humanize keep the _id bit on something like employee_id?",),
        all_of(
            answer_gives(
                "inflection", "inflection.humanize('employee_id')", setup="import inflection"
            ),
            answer_lacks(r"(?-i:'Employee id')", r"(?-i:\bEmployee id\b)"),
        ),
        "answer gives humanize('employee_id'), computed ('Employee': the _id goes)",
        answers("No: humanize('employee_id') gives 'Employee', the _id suffix is dropped."),
    ),
    Task(
        "tc-unknown-attr",
        "termcolor",
        "behaviour",
        ("what happens if i ask colored for an attribute it doesnt have, like shiny",),
        answer_raises(
            "termcolor",
            "colored('x', attrs=['shiny'], force_color=True)",
            setup="from termcolor import colored",
        ),
        "answer names the exception an unknown attribute raises, found by running it",
        answers("colored looks it up in ATTRIBUTES, and ATTRIBUTES['shiny'] raises KeyError."),
    ),
    Task(
        "jp-no-slash",
        "jsonpointer",
        "behaviour",
        ("what if my pointer doesnt start with a slash, like a/b?",),
        answer_says(r"JsonPointerException|must start with /"),
        "answer says a pointer without its leading slash raises JsonPointerException",
        answers("JsonPointer('a/b') raises JsonPointerException: Location must start with /."),
    ),
)
