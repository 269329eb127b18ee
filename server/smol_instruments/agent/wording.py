"""The words the rules read a task by (agent/intent.py): a change's verbs, a question's form, a
symptom, a request to run, to fix, to destroy or to act outside the repository, what a
question asks about (failing tests, history, callers, an explanation), each as a pattern.
"""

from __future__ import annotations

import re

CHANGE_VERBS = (
    r"fix|add|implement|change|update|refactor|rename|write|create|remove|delete|modify|"
    r"make|replace|edit|correct|patch|convert|move|extract|append|insert|improve|rewrite|give|"
    r"document|support|allow|handle|repair|resolve|debug|put|drop|bump|mention|take"
)
# An imperative at the start, or after a polite lead-in: "fix the test", "please add ...",
# "can you update ...". A question about a change ("why does fix() fail?") is not one.
LEAD_IN = (
    r"^\s*(?:(?:please|pls|now|then|ok|okay|so|go ahead and|also|and)[,\s]+)*"
    r"(?:(?:can|could|would|will) you\s+(?:please\s+)?|i (?:want|need|would like) you to\s+"
    r"|let'?s\s+)?"
)
#: Change verbs that ask for an answer here ("give me the failures", "make a list of ...").
TELLING = (
    r"(?!give\s+(?:me|us)\b|make\s+(?:a\s+list|sure|certain)\b|write\s+down\b"
    r"|take\s+a\s+look\b)"
)
ASKS = re.compile(rf"{LEAD_IN}{TELLING}(?:{CHANGE_VERBS})\b", re.IGNORECASE)
#: The same after a comma or "and" ("the test fails, fix it"), not its subject ("and add is")
ASKS_THEN = re.compile(
    rf"{LEAD_IN}{TELLING}(?:{CHANGE_VERBS})\b(?!\s*\(|\s+(?:is|are|was|were|does|did|returns?|gives?"
    r"|should|seems?|ha[sd]|have|works?|fails?)\b)",
    re.IGNORECASE,
)
#: Verbs that say plainly to edit files ("make this repository new" is for the model to read).
EDIT_VERBS = (
    r"fix|add|implement|change|update|refactor|rename|write|create|remove|modify|replace|edit|"
    r"correct|convert|move|extract|insert|rewrite|give|document|repair|put|drop|bump|mention"
)
PLAIN_CHANGE = re.compile(rf"{LEAD_IN}(?:{EDIT_VERBS})\b", re.IGNORECASE)
#: A bug told by its symptom: "slug('A B') gives 'a_b', it should be 'a-b'".
SHOULD = re.compile(
    r"\b(?:it|that|this|but)\s+should\s+(?:be|give|return|print|say|raise)\b|\binstead of\b",
    re.IGNORECASE,
)
#: The same, or a default a feature keeps, told as a statement ("... a step? default stays 1").
#: Also a default a new option is to have ("off by default", "(default False)"): a feature.
DEFAULT_KEPT = re.compile(
    r"\bdefaults?\s+(?:stays?|remains?|should|must)\b|\b(?:on|off|enabled|disabled) by default\b"
    r"|\bdefault(?:s|s? to| is)?\s*[:=]?\s*(?:true|false|none|on|off)\b",
    re.IGNORECASE,
)
#: A new parameter named as one ("an optional separator argument", "a keep_build option").
PARAMETER = re.compile(
    r"\b(?:optional|arg(?:ument)?|param(?:eter)?|kwarg|option|flag|keyword)s?\b", re.I
)
#: A new parameter's name told by what it is ("a count argument", "an optional `reset` flag"),
#: or as what a function is to take ("can bump_patch take a step?").
NAMED_PARAMETER = re.compile(
    r"\b(?:an?|new)\s+(?:(?:optional|new|bool(?:ean)?|keyword)\s+)?`?([A-Za-z_]\w*)`?\s+"
    r"(?:arg(?:ument)?|param(?:eter)?|flag|option|kwarg)s?\b"
    r"|\b(?:take|accept)s?\s+an?\s+(?:optional\s+)?`?([A-Za-z_]\w*)`?",
    re.IGNORECASE,
)
#: Words NAMED_PARAMETER finds that are no name ("an extra argument", "a CLI flag").
NOT_A_NAME = frozenset({"extra", "additional", "another", "second", "cli", "command", "same"})
WANTS = re.compile(SHOULD.pattern + "|" + DEFAULT_KEPT.pattern, re.IGNORECASE)
#: A bug told as a statement of what happens ("with NO_COLOR set I still get colours. NO_COLOR
#: should win"): a request to fix it, as a symptom with a call is. Not in a question, nor in a
#: request to tell ("explain why it still ...").
SYMPTOM = re.compile(
    r"\b(?:should(?:n'?t| not)?|still|instead|wrong|broken|needs|(?:does|do|is|are)n'?t work(?:ing)?)\b",
    re.IGNORECASE,
)
TELLS = re.compile(r"^\s*(?:explain|tell|show|describe|list|summari[sz]e|find|help)\b", re.I)
#: A statement that something is not as it should be ("still gets colours", "X should win").
COMPLAINT = re.compile(
    r"\b(?:should|shouldn'?t|still|instead|wrong|broken|expected|but|not|never|"
    r"(?:does|do|is|are|was|can|won)n'?t)\b",
    re.IGNORECASE,
)
#: Words of someone unsure, who asks ("not sure what walk does, it never returns"): a question.
UNSURE = re.compile(
    r"\b(?:not sure|unsure|(?:do|does|did)n'?t (?:know|understand|get)|no idea|wonder\w*|"
    r"curious|confus\w*)\b",
    re.IGNORECASE,
)
#: A change asked for inside a sentence ("how do I add a user?", "is it possible to make ...",
#: "run the tests and fix what fails"); not a function named like one ("what does add do?").
CHANGE_WORD = re.compile(rf"\b(?:to|i|you|we|please|and|then)\s+(?:{CHANGE_VERBS})\b", re.I)
#: A word that asks, anywhere in a message ("... -> what do i get", "whats going on").
ASKING_WORD = re.compile(r"\?|\b(?:what|whats|which|where|why|how|who|when)\b", re.IGNORECASE)
#: A message phrased as a question.
QUESTION_FORM = re.compile(
    r"^\s*(?:what|which|where|why|how|who|when|is|are|does|do|did)\b|\?\s*$", re.IGNORECASE
)
#: A question about what could be ("can slugify take a separator?", "is there a way to ..."):
#: a feature asked as a question as often as a question about behaviour.
ABLE = re.compile(
    r"^\s*(?:can|could|would|will|is (?:it|there) (?:possible|a way|an option)|any way)\b",
    re.IGNORECASE,
)
ASKS_TO_RUN = re.compile(rf"{LEAD_IN}(?:run|execute|start)\b", re.IGNORECASE)
#: A change that is a fix: what was broken must work afterwards.
ASKS_TO_FIX = re.compile(rf"{LEAD_IN}(?:fix|repair|correct|resolve|debug)\b", re.IGNORECASE)
#: What no agent of a repository does on a message's say-so.
DESTRUCTIVE = re.compile(
    r"\b(?:delete|remove|wipe|erase|destroy|nuke|drop)\s+(?:\w+\s+){0,2}(?:everything|all\b"
    r"|the (?:whole|entire) (?:repo|repository|project)|(?:the\s+)?(?:git\s+)?history)"
    r"|\bstart (?:over|from scratch)\b|\bforce[- ]push\b|\brm\s+-rf\b|\breset\s+--hard\b",
    re.IGNORECASE,
)
#: Within a sentence: a dot before a letter is a file's ("strings.py"), not the sentence's end.
IN = r"(?:[^.?!]|\.(?=\w))"
#: "add tests for escape", "write a unit test for average" (not "... so the tests pass").
ADDS_TESTS = re.compile(
    rf"\b(?:add|write|create)\b{IN}{{0,30}}?\b(?:unit\s+)?tests?\b(?!\s+(?:pass|fail))", re.I
)
#: "... so that the tests pass", "make the test pass".
TESTS_PASS = re.compile(rf"\btests?\b{IN}{{0,20}}\bpass(?:es)?\b", re.IGNORECASE)
#: "One of the tests fails", "test_average is failing", "the failing tests"; not "run the tests
#: and tell me how many fail" (that asks to run them).
FAILING = re.compile(
    r"\b(?:tests?|specs?|test_\w+)\s+(?:\w+\s+){0,2}(?:fails?|failing|failed|errors?|breaks?"
    r"|broke|(?:is|are)\s+(?:broken|red))\b"
    r"|\b(?:failing|failed|broken)\s+(?:\w+\s+)?(?:tests?|specs?|test_\w+)\b",
    re.IGNORECASE,
)
#: "which tests fail", "what tests are failing" (not "how many fail").
WHICH_FAIL = re.compile(rf"\b(?:which|what)\b{IN}*\bfail", re.IGNORECASE)
#: The suite's state asked: "anything red in the test suite?" (dev sv-run-tests), "tests pass?"
SUITE_STATE = re.compile(
    rf"\b(?:tests?|suite|ci)\b{IN}*\b(?:red|green|pass(?:es|ing)?|broken)\b"
    rf"|\b(?:red|green)\b{IN}*\b(?:tests?|suite)\b",
    re.IGNORECASE,
)
HISTORY = re.compile(
    r"\b(?:commits?|committed|history|git log|(?:last|latest|recent)\s+changes?)\b", re.I
)
LAST_COMMIT = re.compile(
    r"\b(?:last|latest|recent|newest|previous|head)\s+commit\b|\bHEAD\b", re.IGNORECASE
)
#: A question about what is wrong: a bug, a failure, an error.
BUG = re.compile(
    r"\bbugs?\b|\bbuggy\b|\bwhat(?:'s| is) wrong\b"
    rf"|\bwhy\b{IN}*\b(?:fail\w*|break\w*|broken|crash\w*|wrong|error\w*|raise\w*)\b",
    re.IGNORECASE,
)
#: A question that asks what code does or how it works ("how do I get ..." asks for a way).
EXPLAIN = re.compile(
    r"\b(explain|describe|walk (?:me )?through)\b|\bhow (?:does|do|is)\b(?!\s+(?:i|we)\b)"
    rf"|\bwhat (?:does|do)\b{IN}*\bdo\b",
    re.IGNORECASE,
)
#: A question that asks for a way to do something with the code: "how do I get camelCase?"
USE = re.compile(r"\bhow (?:do|can|could|should|would) (?:i|we)\b", re.IGNORECASE)
#: A follow-up that points back at what the conversation was about ("it", "that function").
REFERS_BACK = re.compile(r"\b(?:it|its|this|that|these|those|them|they|the same)\b", re.I)
CODE_NOUNS = re.compile(
    r"\b(?:function|method|class|module|file|files|test|tests|bug|code|repo|repository|"
    r"project|commit|line|variable|import|error|argument|parameter|docstring|readme)s?\b",
    re.IGNORECASE,
)
FILES_QUESTION = re.compile(rf"\b(?:which|what|list)\b{IN}{{0,30}}\bfiles\b", re.I)
#: "Which Python files ...": the glob list_files is called with.
LANGUAGE_GLOBS = {
    "python": "*.py",
    "typescript": "*.ts",
    "javascript": "*.js",
    "rust": "*.rs",
    "go": "*.go",
    "java": "*.java",
    "markdown": "*.md",
}
#: Asks why code gives what it gives: "why does f(x) come out as y?", "where does the 0 come
#: from?", "sorted() puts 10 before 9 now. whats going on"
WHY = re.compile(
    r"\bwhy\b|\bhow come\b|\bwhere (?:does|do|did)\b.*\bcome from\b"
    r"|\bwhat(?:'?s| is) going on\b",
    re.IGNORECASE,
)
#: A question by example: which code turns one value into another ("which function turns
#: people into person?", "what converts 'a b' to 'a-b'?"); the two values, quotes and all.
TURNS_INTO = re.compile(
    r"\b(?:turns?|converts?|changes?|transforms?|makes?|maps?)\s+('[^']*'|\"[^\"]*\"|\S+)\s+"
    r"(?:in)?to\s+(?:an?\s+|the\s+)?('[^']*'|\"[^\"]*\"|\S+?)(?=[?.!,]*(?:\s|$))",
    re.IGNORECASE,
)
#: Who uses a name, or what changing it affects: "what calls walk?", "if I change f, what breaks?",
#: "what else does that hit?", "what would go wrong?" (dev jp-escape-impact, sv-to-dict-impact)
CALLERS = re.compile(
    r"\b(?:what|who|which \w+)\s+(?:else\s+)?(?:calls?|uses?|imports?|depends? on|rel(?:y|ies)"
    rf" on)\b|\bcallers?\b|\bwhere\b{IN}*\b(?:used|called)\b"
    rf"|\bwhat\b{IN}*\b(affect|break|impact|touch|hits?\b|go(?:es)? wrong)",
    re.IGNORECASE,
)
#: What a request asks outside the repository: publishing, deploying, sending, paying.
OUTSIDE = re.compile(
    rf"{LEAD_IN}(?:publish|deploy|upload|release|push|send|e-?mail|post|tweet|pay|buy)\b",
    re.IGNORECASE,
)
#: The same after "and", "then" or a comma ("commit it and push"), and what is made on a
#: forge: the verbs that are no words of code ("release the lock", "send the header" are).
OUTSIDE_THEN = re.compile(
    rf"{LEAD_IN}(?:(?:git\s+)?push|publish|deploy|upload|e-?mail|tweet"
    r"|(?:open|create|file|submit|raise|make)\s+(?:a|an|the)?\s*(?:new\s+)?(?:pull request|pr"
    r"|merge request|(?:github|gitlab) (?:issue|release)|issue on (?:github|gitlab)))\b",
    re.IGNORECASE,
)
#: A path in the user's home folder ("~/.aws/credentials", "$HOME/.pypirc"), not one quoted
#: as a value: outside the repository, where the tools cannot reach (safety/jail.py).
HOME_PATH = re.compile(r"(?<![\w/'\"])(?:~|\$HOME)/")
RENAME = re.compile(
    r"\brename\s+(?:the\s+)?(?:function|method|class)?\s*`?([A-Za-z_][\w.]*)`?(?:\(\))?"
    r"(?:\s+\w+){0,3}?\s+(?:to|as|into)\s+`?([A-Za-z_]\w*)",
    re.IGNORECASE,
)
POINTERS = frozenset({"it", "this", "that", "them"})
#: A change to a file that is not Python: a README, docs, configuration, JavaScript.
TEXT_FILE = re.compile(
    r"\b(?:readme|changelog|docs?|toml|ya?ml|json|ini|cfg|markdown|javascript)\b"
    r"|\.(?:md|rst|txt|js|ts|toml|ya?ml|json|cfg|ini)\b",
    re.IGNORECASE,
)
#: A value a question writes: a quoted string, or a number after "for", "pass", "with", "of".
LITERAL = re.compile(r"""'[^'\n]*'|"[^"\n]*"|\b(?:for|pass|with|of|on) (-?\d+(?:\.\d+)?)\b""")
#: An input a question gives as an example, unquoted, ending its clause ("something like
#: iPhone?", "like employee_id?"): a name or a number (fresh dev infl-titleize-iphone: read, not
#: run, and `completed` without the value).
EXAMPLE = re.compile(
    r"\b(?:like|such as|e\.g\.,?)\s+([A-Za-z_]\w*|-?\d+(?:\.\d+)?)(?=\s*(?:[?.!,;]|$))"
)
#: A section a change is to add to a document ("add a Usage section to the README", "a section
#: called Installation"): the title, one word before "section" or the words after "called".
#: The 1.5B model added a code example with no heading for it (dev infl-readme-usage).
SECTION = re.compile(
    r"\b(?:add|write|put|include|create|insert|append|start)\b[^.?!]*?"
    r"(?:\b(?!(?:an?|new|short|small|brief|little|quick|separate|dedicated|whole|another|extra|"
    r"the|this|that|each|every|one)\b)[\"'`]?([A-Za-z][\w-]*)[\"'`]?\s+(?:section|heading)\b"
    r"|\b(?:section|heading)\s+(?:called|named|titled)\s+[\"'`]?([A-Za-z][\w -]*?)[\"'`]?"
    r"(?=\s+(?:to|in|on|at|with)\b|[.,;:!?]|$))",
    re.IGNORECASE,
)
#: Words that put a change in a section that is there: "add an example to the Usage section".
IN_SECTION = re.compile(
    r"\b(?:to|in|into|under|of|from|below|above|after|before)\s+(?:the|its|this|that|our)\s+"
    r"[\"'`]?$",
    re.IGNORECASE,
)

#: Words of a task that are never the name it is about.
STOP = frozenset(
    re.split(
        r"\s+",
        """the and for with that this what which where when does did how why who from into about
    are was were has have had not but can could would should will shall may might must its
    there their them they then than one two all any each every some function functions method
    methods class classes file files test tests code line lines call calls called return
    returns value values bug bugs error errors repository repo project module modules make
    makes number numbers list show tell find fix add change update run runs new old last first
    python please also only just like use used uses using given want need""",
    )
)
#: A word of three letters or more that may name code.
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")


def own_words(text: str) -> list[str]:
    """The words of `text` that may name code, as written, once each, STOP words left out."""
    return list(dict.fromkeys(w for w in WORD.findall(text) if w.lower() not in STOP))


#: A change to docs or docstrings (context shows them to it).
DOCS = re.compile(r"\bdoc", re.IGNORECASE)


def whole_word(name: str) -> re.Pattern[str]:
    """`name` as a whole word of a line (not part of a longer identifier)."""
    return re.compile(rf"(?<![\w]){re.escape(name)}(?![\w])")
