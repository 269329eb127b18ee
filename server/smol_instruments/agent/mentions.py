"""What a message writes as code: the names it mentions and the calls it writes with literal
arguments (`average([2, 4])`, `JsonPointer('/foo/0').get_parts()`), which can be computed
rather than imagined. Read by the intent (intent.py) from the task and the conversation.
"""

from __future__ import annotations

import ast
import re

#: Code names: `backticks`, call(), snake_case, CONSTANT_CASE (an environment variable's
#: too), camelCase, a dotted Class.method.
_CODE_NAME = re.compile(
    r"`([A-Za-z_][\w.]*)(?:\(\))?`|\b([A-Za-z_]\w*)\(|\b(_*[a-z]+_[a-z0-9_]+|_+[a-z]\w*)\b"
    r"|\b([A-Z]+_[A-Z0-9_]+)\b|\b([a-z]+[A-Z]\w*)\b|\b([A-Z]\w*\.[a-z_]\w*)\b"
)
#: A keyword argument written in prose ("when i pass strict=True"); not a comparison.
_KEYWORD = re.compile(r"\b([a-z_]\w*)=(?![=\s])")
#: A call written in a task: a name, then an argument list the calls below parse.
_CALL_START = re.compile(r"(?<![\w.])([A-Za-z_][\w.]*)\(")
#: Words that look like calls in prose and are not the repository's ("e.g.(", "print(").
_NOT_CALLS = frozenset({"print", "e.g", "i.e", "len", "str", "int", "list", "dict"})
#: Words for naming styles ("camelCase instead of CamelCase", "snake_case"): prose, not the
#: repository's names (dev infl-camel-lower: `camelCase` was said to be defined nowhere, and the
#: model was told to say so). Compared without case, `_` or `-`.
_STYLE_WORDS = frozenset(
    f"{kind}case"
    for kind in (
        "camel",
        "lowercamel",
        "uppercamel",
        "pascal",
        "snake",
        "kebab",
        "screamingsnake",
        "title",
        "upper",
        "lower",
        "sentence",
    )
)
#: A question that asks which code does something ("which method strips the build off?"):
#: the code it names is what the answer's code acts on, not the answer.
_WHICH_CODE = re.compile(
    r"\b(?:which|what)\s+(?:\w+\s+)?(?:function|method|class|helper|command)s?\b", re.IGNORECASE
)


def asks_which_code(text: str) -> bool:
    return _WHICH_CODE.search(text) is not None


#: A fenced block: code the message quotes (an editor's selection), not a call it asks about.
FENCED = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
#: A name that is a file's (`config.toml`), not code's.
_FILE_NAME = re.compile(r"\.(?:py|md|txt|toml|ya?ml|json|js|ts|cfg|ini|rst|lock)$|\.$")


def code_names(text: str) -> list[str]:
    """Identifiers `text` writes as code: in backticks, called, snake_case (a private
    `_nat_cmp`, `_irregular` too), CONSTANT_CASE, camelCase, Class.method, `keyword=`."""
    found: dict[str, None] = {}
    for groups in [*_CODE_NAME.findall(text), *((k,) for k in keyword_names(text))]:
        name = next((g for g in groups if g), "")
        if (
            name
            and name.lower() not in _NOT_CALLS
            and not _FILE_NAME.search(name)
            and not naming_style(name)
        ):
            found.setdefault(name, None)
    return list(found)


def keyword_names(text: str) -> list[str]:
    """The keyword arguments `text` writes outside a call written out (whose keywords are
    the call's, run as it is)."""
    found = []
    for match in _KEYWORD.finditer(text):
        before = text[: match.start()]
        if before.count("(") <= before.count(")"):
            found.append(match[1])
    return found


def naming_style(word: str) -> bool:
    """`word` names a naming style (camelCase, snake_case, kebab-case), not code."""
    return re.sub(r"[_-]", "", word.lower()) in _STYLE_WORDS


#: A comparison written between two calls: `f('a') == f('b')`.
_COMPARED = re.compile(r"\)\s*(==|!=|<=|>=|<|>)\s*")


def literal_calls(text: str) -> list[str]:
    """Calls `text` writes whose arguments are all literals (`average([2, 4])`,
    `slugify("A b", max_words=2)`): what can be computed rather than imagined. Calls inside
    a fenced block are the quoted code's own (`raise ValueError("...")` in a selection), not
    the question's."""
    text = FENCED.sub(lambda block: " " * len(block.group()), text)
    calls: list[str] = []
    taken = 0  # a call inside one already taken is part of it
    for match in _CALL_START.finditer(text):
        if match.start() < taken or match.group(1).lower() in _NOT_CALLS:
            continue
        end = _closing_paren(text, match.end() - 1)
        if end is None:
            continue
        end = _chained(text, end)
        call = text[match.start() : end + 1]
        try:
            literal = _literal_call(ast.parse(call, mode="eval").body)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue
        joined = _COMPARED.match(text, taken) if calls and taken else None
        if literal and joined is not None and joined.end() == match.start():
            # "is f('a') == f('b')?": what is asked is the comparison (dev sv-build-equal:
            # both calls were run and told, never whether they are equal)
            calls[-1] = f"{calls[-1]} {joined.group(1)} {call}"
            taken = end
        elif literal and call not in calls:
            calls.append(call)
            taken = end
    return calls[:4]


def outer_callee(call: str) -> str | None:
    """What the outermost call of `call` calls, whose value the call gives: `match` of
    "Version.parse('2.0.0').match('!=3.0.0')", `f` of "f(g(1))"; None for no call."""
    try:
        node = ast.parse(call, mode="eval").body
    except (SyntaxError, ValueError):
        return None
    func = node.func if isinstance(node, ast.Call) else None
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)


def written_in(call: str, text: str, *, values: str | None = None) -> bool:
    """The call's function and each of its arguments occur in `text` (its arguments in `values`
    when given): a call a model writes for a task is run only when it is the task's, not one
    with arguments it made up (dev sv-bump-step: "can bump_patch take a step?" became
    bump_patch(1, 2), whose TypeError the answer was then held to tell). A string argument may
    be written unquoted."""
    where = text if values is None else values
    try:
        tree = ast.parse(call, mode="eval")
    except SyntaxError:
        return False
    callee = call.split("(", 1)[0].rsplit(".", 1)[-1]
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
    args = [arg for node in calls for arg in [*node.args, *(k.value for k in node.keywords)]]
    told = value_tokens(where)
    for arg in args:
        written = ast.get_source_segment(call, arg) or ""
        value = arg.value if isinstance(arg, ast.Constant) else None
        if _occurs(written, where) or (
            # a string holding a value the task writes bare: "a ~2 in the pointer" as '/x/~2'
            isinstance(value, str) and (value in where or any(t in value for t in told))
        ):
            continue
        return False
    return _occurs(callee, text)


def value_tokens(text: str) -> list[str]:
    """The values `text` writes bare, outside quotes: words with a digit or a symbol of code
    that are not names, keywords or files ("~2", "0x1F", "/a/-1", "1.0.0-rc.1", "{a:d}"; not
    "sha256", "strict=True", "calc/ops.py")."""
    bare = FENCED.sub(" ", re.sub(r"'[^'\n]*'|\"[^\"\n]*\"|`[^`\n]*`", " ", text))
    words = (word.lstrip("(").rstrip(".,;:!?)") for word in bare.split())
    return [
        word
        for word in words
        if (len(word) > 1 or word.isdigit())
        and re.search(r"[\d{}\[\]<>~/\\|@#$%^&*=+]", word)
        and not re.fullmatch(r"[A-Za-z_]\w*(?:\(\))?", word)
        and not re.match(r"[A-Za-z_]\w*=", word)  # a keyword told: keyword_names
        and not _FILE_NAME.search(word)
    ]


def _occurs(piece: str, text: str) -> bool:
    return bool(piece) and re.search(rf"(?<!\w){re.escape(piece)}(?!\w)", text) is not None


def _chained(text: str, end: int) -> int:
    """Where the chain a call ending at `end` starts ends: `Pointer('/a').parts()`, `.attr`."""
    while (link := re.match(r"\.([A-Za-z_]\w*)", text[end + 1 :])) is not None:
        after = end + 1 + link.end()
        closing = _closing_paren(text, after) if text[after : after + 1] == "(" else after - 1
        if closing is None:
            break
        end = closing
    return end


def _literal_call(node: ast.expr) -> bool:
    """A call chain on a name, every argument a literal (else ValueError), some given."""
    given = seen_call = False
    while not isinstance(node, ast.Name):
        if isinstance(node, ast.Call):
            for arg in [*node.args, *(k.value for k in node.keywords)]:
                ast.literal_eval(arg)
            given = given or bool(node.args or node.keywords)
            seen_call, node = True, node.func
        elif isinstance(node, ast.Attribute):
            node = node.value
        else:
            return False
    return given and seen_call


def _closing_paren(text: str, start: int) -> int | None:
    """The index of the parenthesis closing the one at `start` (quotes respected)."""
    depth, quote, index = 0, "", start
    while index < len(text):
        char = text[index]
        if quote:
            if char == "\\":
                index += 1
            elif char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return index if char == ")" else None
        index += 1
    return None


#: What may follow a literal for it to be the whole value: the end, a space, or punctuation
#: then a space ("'-1021st'.", "3, not 4"); not more of a word or number ("1st", "3.5").
_LITERAL_ENDS = re.compile(r"[.,;:!?)]*(?:\s|$)")
_PRINTED = re.compile(r"([^\s'\"`,;()]*\d[^\s'\"`,;()]*?)[.,;:!?)]*(?:\s|$)")


def literal_at(text: str) -> str | None:
    """The Python literal `text` starts with, as written (`'-1021st'`, `[1, 2]`, `-3`, `None`):
    the shortest prefix that parses as one and ends where a value can end. None when the text
    does not start with a literal or a printed value ("plural" is a word, not a value)."""
    text = text.lstrip()[:200]
    for end in range(1, len(text) + 1):
        if not _LITERAL_ENDS.match(text, end):
            continue
        try:
            ast.literal_eval(text[:end])
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue
        return text[:end]
    # a value as it prints, unquoted, with a digit in it ("it should be 1.3.0", a version, a
    # date): written as the string it prints as (tools/evaluate.py compares str of the value)
    printed = _PRINTED.match(text)
    return repr(printed.group(1)) if printed else None


def unfit(call: str, failure: str, task: str) -> bool:
    """The call does not fit its own function's signature and the task does not write it: a
    call the model made up for the task, whose TypeError tells nothing the task asks (dev
    jp-escape-impact: "how escape handles ~ . what else does that hit?" ran escape('~', '.'),
    and the answer was held to telling its TypeError)."""
    name = re.escape(call.split("(", 1)[0].rsplit(".", 1)[-1])
    own = rf"TypeError: (?:\w+\.)*{name}(?:\.__init__)?\(\) (?:takes|missing|got )"
    return re.match(own, failure) is not None and _squeezed(call) not in _squeezed(task)


def _squeezed(text: str) -> str:
    return re.sub(r"\s+", "", text).replace('"', "'")
