"""Fresh dev tasks for conversations and for what a change reaches (written 2026-12-07, before
any run): the chat kind, where the held-out split has a false success left and the dev split
had four tasks, all about a function's name or value; the callers kind asked as the impact of a
change, where the answer has to follow calls more than one hop; and one behaviour question
about an input that raises. On the dev repositories, phrased as people type them. Their first
run measures the agent on requests none of its rules were written from; after that they are dev
like the others.
"""

from __future__ import annotations

from .checks import all_of, answer_gives, answer_names_callers, answer_raises, answer_says
from .dev_semver import VERSION
from .tasks import Task, answers

NINTH: tuple[Task, ...] = (
    Task(
        "sv-chat-parse-junk",
        "semver",
        "chat",
        ("what does Version.parse do with junk like 'abc'?", "what about 1.2, is that allowed?"),
        all_of(
            answer_raises(
                "semver", "Version.parse('abc')", setup="from semver import Version", turn=0
            ),
            answer_raises("semver", "Version.parse('1.2')", setup="from semver import Version"),
        ),
        "turn 1: parse('abc') raises ValueError; turn 2 (about parse): '1.2' raises it too",
        answers(
            "It raises ValueError: abc is not valid SemVer string.",
            "No: Version.parse('1.2') raises ValueError unless optional_minor_and_patch=True.",
        ),
    ),
    Task(
        "tc-chat-background",
        "termcolor",
        "chat",
        (
            "which argument of colored sets the background colour?",
            "what if i pass it 'red' there instead of on_red",
        ),
        all_of(
            answer_says(r"\bon_colou?r\b", turn=0),
            answer_raises(
                "termcolor",
                "colored('x', None, 'red', force_color=True)",
                setup="from termcolor import colored",
            ),
        ),
        "turn 1: on_color; turn 2 (that argument given 'red'): KeyError, found by running it",
        answers(
            "on_color sets the background, e.g. on_color='on_red'.",
            "HIGHLIGHTS has no 'red' key, so colored('x', on_color='red') raises KeyError.",
        ),
    ),
    Task(
        "jp-chat-missing-key",
        "jsonpointer",
        "chat",
        (
            "how do i look up a pointer in a dict with this lib?",
            "and what happens when the key isnt there",
        ),
        all_of(
            answer_says(r"\bresolve_pointer\b|\.resolve\(", turn=0),
            answer_raises(
                "jsonpointer", "resolve_pointer({'a': 1}, '/b')", setup="from jsonpointer import *"
            ),
        ),
        "turn 1: resolve_pointer; turn 2 (a missing key): JsonPointerException, or a default",
        answers(
            "resolve_pointer(doc, '/a/b') returns the value the pointer names.",
            "It raises JsonPointerException, unless you pass a default as the third argument.",
        ),
    ),
    Task(
        "infl-chat-singular",
        "inflection",
        "chat",
        ("which function turns people into person?", "what does it do with octopi?"),
        all_of(
            answer_says(r"\bsingularize\b", turn=0),
            answer_gives(
                "inflection", "inflection.singularize('octopi')", setup="import inflection"
            ),
        ),
        "turn 1: singularize; turn 2 (it = singularize): its value for 'octopi', computed",
        answers("singularize('people') gives 'person'.", "singularize('octopi') gives 'octopus'."),
    ),
    Task(
        "jp-escape-impact",
        "jsonpointer",
        "callers",
        ("planning to change how escape handles ~ . what else does that hit?",),
        answer_names_callers("jsonpointer", "jsonpointer.py", "escape", transitive=True),
        "answer names every function that reaches escape (from_parts, path, join, __truediv__)",
        answers(
            "escape is called by from_parts and JsonPointer.path; join calls from_parts, and "
            "__truediv__ calls join."
        ),
    ),
    Task(
        "sv-to-dict-impact",
        "semver",
        "callers",
        ("if to_dict returned a list instead, what would go wrong?",),
        answer_names_callers("semver", VERSION, "to_dict", transitive=True),
        "answer names every function that reaches to_dict (__repr__, replace, next_version)",
        answers(
            "__repr__ and replace call to_dict and use it as a mapping; next_version calls "
            "replace, so it would break too."
        ),
    ),
    Task(
        "jp-bad-escape",
        "jsonpointer",
        "behaviour",
        ("what does JsonPointer do with a ~2 in the pointer",),
        answer_raises("jsonpointer", "JsonPointer('/x/~2')", setup="from jsonpointer import *"),
        "answer names the exception an invalid escape raises, found by running it",
        answers("~2 is no valid escape: JsonPointer('/x/~2') raises JsonPointerException."),
    ),
)
