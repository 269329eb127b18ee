"""The edit service: every form a change can be written in becomes the same pending patch.

Small models write changes in different forms, each good for something:

- whole new versions of Python definitions under `# file: <path>` (patches/merge.py merges
  them by name: top-level functions and classes, methods, and functions nested in another);
- SEARCH/REPLACE blocks (aider's format, which small models were trained on) for any text
  file: a README, TOML, YAML, JavaScript, or Python where copying a few lines is easier;
- a rename of a function, class or method across the repository (rope's `Rename`: the
  definition, every use, the imports, the tests), decided by the library, not by the model;
- a whole new file, or a small text file written again whole (tools/rewrite.py).

Each is turned into `(path, before, after)` changes and proposed through tools/patch.py
`propose` (validated in the sandbox, stored by patches/service.py, shown to the user, written
only when accepted). Every path goes through the tools' jail before anything is read.

Where the host's editor has a file open with unsaved changes (ToolContext.buffers), SEARCH/
REPLACE blocks and merged definitions apply to the editor's text, the one the model read. A
rename is computed by rope from the files on disk, so one that would touch a file the editor
holds unsaved is refused, naming the file to save (rope cannot be handed the editor's text).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..base.errors import ErrorType, ToolError
from ..patches.merge import merge_definitions
from .base import Changes, ToolContext
from .patch import propose
from .rewrite import PATH_LINE, Replacement, fence_language, no_file
from .search import RgSearchTool

SEARCH = re.compile(r"^\s*<{5,9} ?SEARCH\b.*$", re.M)
DIVIDER = re.compile(r"^\s*={5,9}\s*$", re.M)
REPLACE = re.compile(r"^\s*>{5,9} ?REPLACE\b.*$", re.M)
_FENCE = re.compile(r"^\s*```")
#: An instruction's slot written back as the new lines: `<the new lines>` (words, no markup).
_SLOT = re.compile(r"<[A-Za-z]+(?:,? [A-Za-z]+){1,12}>")
#: The slot of the new lines in the instruction (agent/prompts.py): a held reply cannot write it.
NEW_LINES_SLOT = "<the new lines>"


#: The most lines a SEARCH and a REPLACE part of a held reply may have (`edit_blocks_grammar`).
HELD_SEARCH_LINES, HELD_REPLACE_LINES = 24, 48


def edit_blocks_grammar(files: Mapping[str, str | None], blocks: int = 2) -> str:
    """A GBNF grammar (llama.cpp's) for a reply that is only SEARCH/REPLACE blocks: one of the
    `files` (path: its text, None for one that does not exist yet) on the first line, then
    one to `blocks` blocks. Held to it, a small model cannot answer a change with a call
    copied from the prompt's example (the 1.5B model, asked to add a README section, wrote
    `read_file(path="<a file from the list below>")` four times).

    A SEARCH part is held to a run of its file's lines as they are (`_file_runs`): held to
    any lines, the same model copied the instruction's own `<lines copied exactly from the
    file>` nine times (dev infl-readme-usage), and no SEARCH part that is not in the file can
    match. Where the run starts and ends is the model's choice; none is an empty SEARCH part
    (the new lines go at the end), the only one a new or empty file has. A file of more than
    `HELD_FILE_LINES` lines is held to the form only.

    Each part has a most number of lines: a held reply can end only where the grammar lets
    it, and unbounded, one went on for minutes."""
    heads, rules = [], []
    for index, (path, text) in enumerate(files.items()):
        head = f'{gbnf_literal(path)} "\\n" block{index}'
        heads.append(head + f' ("\\n"? block{index})?' * (blocks - 1))
        # a file that does not exist yet, or is empty, has no lines: its SEARCH part is empty
        runs = _file_runs(f"old{index}", text or "")
        old = f" old{index}?" if runs else ""
        rules.append(
            f'block{index} ::= "<<<<<<< SEARCH\\n"{old} "=======\\n" '
            f'new{{0,{HELD_REPLACE_LINES}}} ">>>>>>> REPLACE\\n"'
        )
        rules += runs
    return (
        "root ::= " + " | ".join(f"({head})" for head in heads) + "\n" + "\n".join(rules) + "\n"
        # a line of either part, except the markers themselves: otherwise a model that
        # writes ">>>>>>> REPLACE" has written one more line, and the block never ends
        'line ::= plain | "<" [^\\n]* "\\n"\n'
        'plain ::= ([^\\n>=<] [^\\n]*)? "\\n" | ">"{1,6} ([^\\n>] [^\\n]*)? "\\n" | '
        '"="{1,6} ([^\\n=] [^\\n]*)? "\\n" | "======="  [^\\n=] [^\\n]* "\\n" | '
        '"========" [^\\n]* "\\n"\n'
        # a new line, except the instruction's slot for them, however it goes on: held to any
        # line, the 1.5B model wrote `<the new lines>` back ten times, and held from that,
        # `<the new lines, with the Usage section added>` (dev infl-readme-usage), and from
        # that, `<the new line>` (dev63): no new line starts with the slot's stem
        f"new ::= plain | {_not_starting(NEW_LINES_SLOT.removesuffix('s>'))}\n"
    )


def _not_starting(text: str) -> str:
    """GBNF alternatives for a line that starts with `text[0]` but not with `text` (a start
    of it alone on its line, or one followed by another character)."""
    alternatives = []
    for cut in range(1, len(text)):
        start = gbnf_literal(text[:cut])
        alternatives.append(f'{start} "\\n"')
        alternatives.append(f'{start} [^\\n{_class(text[cut])}] [^\\n]* "\\n"')
    return " | ".join(alternatives)


def _class(char: str) -> str:
    """`char` as it is written inside a GBNF character class."""
    return "\\" + char if char in "^]-\\[" else char


def held_blocks_grammar(ctx: ToolContext, paths: Sequence[str], whole: str | None = None) -> str:
    """`edit_blocks_grammar` for the files at `paths` as the user sees them, or, for a file
    written `whole`, `whole_file_grammar` ("" where one is refused by the patch guard:
    nothing is held to a file that cannot be read)."""
    try:
        if whole is not None:
            return whole_file_grammar(whole, ctx.file_text(whole) or "")
        return edit_blocks_grammar({path: ctx.file_text(path) for path in paths})
    except ToolError:
        return ""


#: A GBNF line that does not start with a fence (```), which would end its block.
TEXT_LINE = (
    '"\\n" | [^`\\n] [^\\n]* "\\n" | "`" ([^`\\n] [^\\n]*)? "\\n" | "``" ([^`\\n] [^\\n]*)? "\\n"'
)
#: Lines a file written whole may grow by in a held reply (a new section and its examples).
WHOLE_EXTRA_LINES = 60


def whole_file_grammar(path: str, text: str) -> str:
    """A GBNF grammar for a reply that is `path` on its line, then the whole file in one
    fenced block (tools/rewrite.py `writes_whole`). Held to it, the 1.5B model, which had
    answered with the prompt's example call three times (dev tc-changes-unreleased), can only
    write the file. No line starts with a fence, except one that opens an example (its
    language given) and the bare fence that closes it; the block has at most the file's
    lines and `WHOLE_EXTRA_LINES` more, then its closing fence."""
    most = len(text.splitlines()) + WHOLE_EXTRA_LINES
    opening = gbnf_literal(f"{path}\n```{fence_language(path)}\n")
    return (
        f'root ::= {opening} body "```"\n'
        f"body ::= (text | example){{0,{most}}}\n"
        'example ::= "```" [A-Za-z0-9_+-]+ "\\n" text{0,40} "```\\n"\n'
        f"text ::= {TEXT_LINE}\n"
    )


#: The most lines a file may have for a held SEARCH part to be a run of them.
HELD_FILE_LINES = 2000


def _file_runs(name: str, text: str) -> list[str]:
    """Rules by which `name` is a run of `text`'s lines in the file's order, from any line to
    any later one (trailing spaces dropped: the match forgives them; never across a line that
    reads as a block's marker); any lines at all where the file has too many; none where it
    has no lines. A run, not any of its lines: held to the file's lines in any order, the 1.5B
    model, kept from writing a new line in the SEARCH part, wrote the one indented line of the
    README twelve times."""
    lines = [line.rstrip() for line in text.splitlines()]
    if len(lines) > HELD_FILE_LINES:
        return [f"{name} ::= line{{1,{HELD_SEARCH_LINES}}}"]
    rules, starts = [], []
    markers = [is_marker_line(line) for line in lines] + [True]  # nothing follows the last
    for number, line in enumerate(lines):
        if markers[number]:
            continue
        this = f"{name}-{number}"
        starts.append(this)
        follows = not markers[number + 1]
        literal = f'{gbnf_literal(line)} "\\n"' if line else '"\\n"'
        rules.append(f"{this} ::= {literal}" + (f" {name}-{number + 1}?" if follows else ""))
    return [f"{name} ::= {' | '.join(starts)}", *rules] if starts else []


def is_marker_line(line: str) -> bool:
    """A line that reads as one of a SEARCH/REPLACE block's three markers."""
    return bool(SEARCH.match(line) or DIVIDER.match(line) or REPLACE.match(line))


def gbnf_literal(text: str) -> str:
    """`text` as a GBNF string literal: quotes and backslashes escaped, control characters as
    \\xNN, everything else as itself (llama.cpp reads the grammar as UTF-8; JSON's \\u
    escapes would split a character outside the BMP in two)."""
    out = []
    for char in text:
        if char in '"\\':
            out.append("\\" + char)
        elif ord(char) < 0x20 or char == "\x7f":
            out.append(f"\\x{ord(char):02x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def has_edit_blocks(text: str) -> bool:
    return bool(SEARCH.search(text) and DIVIDER.search(text) and REPLACE.search(text))


def parse_edit_blocks(text: str, default_path: str | None = None) -> list[Replacement]:
    """The SEARCH/REPLACE blocks of a reply, each with the file named on the nearest line
    above it (outside or inside its fence), else `default_path`."""
    blocks: list[Replacement] = []
    lines = text.splitlines()
    path = default_path
    index = 0
    while index < len(lines):
        line = lines[index]
        named = PATH_LINE.match(line) if not _FENCE.match(line) else None
        if named:
            path = named.group(1)
        if SEARCH.match(line):
            search, at = _until(lines, index + 1, DIVIDER)
            replace, end = _until(lines, at + 1, REPLACE)
            if path is None:
                raise no_file("a SEARCH/REPLACE block")
            if _SLOT.fullmatch(replace.strip()):
                raise ToolError(
                    ErrorType.INVALID_ARGUMENT,
                    f"the part after ======= is {replace.strip()}, the instruction's words, "
                    "not new lines",
                    recovery_suggestion="Write the new lines themselves after =======, and "
                    "before it the lines of the file they replace (none, to add at the end).",
                )
            blocks.append(Replacement(path.removeprefix("./"), search, _trailing(replace, search)))
            index = end
        index += 1
    return blocks


def _trailing(replace: str, search: str) -> str:
    """`replace` with no more blank lines at its end than `search` has, or one: a held reply
    may run on in blank lines until its grammar lets it end (the 1.5B model's README example
    was followed by twenty), and nobody means those."""

    def blanks(text: str) -> int:
        return len(text.splitlines()) - len(text.rstrip().splitlines())

    lines = replace.splitlines(keepends=True)
    fences = [i for i, line in enumerate(lines) if line.strip().startswith("```")]
    # a fence closed that the block never opened, then nothing: the reply's own markup (the
    # 1.5B model opened its reply with ```python and closed it inside the REPLACE part: fresh
    # dev sv-readme-testing wrote a lone ``` into README.rst)
    unopened = len(fences) == 1 and lines[fences[0]].strip() == "```" and "```" not in search
    if unopened and not any(line.strip() for line in lines[fences[0] + 1 :]):
        replace = "".join(lines[: fences[0]])
    extra = blanks(replace) - max(blanks(search), 1)
    return "".join(replace.splitlines(keepends=True)[:-extra]) if extra > 0 else replace


def _until(lines: list[str], start: int, marker: re.Pattern[str]) -> tuple[str, int]:
    for index in range(start, len(lines)):
        if marker.match(lines[index]):
            body = lines[start:index]
            return ("\n".join(body) + "\n") if body else "", index
    raise ToolError(
        ErrorType.INVALID_ARGUMENT,
        "a SEARCH/REPLACE block is not closed: it needs a line of ======= between its parts "
        "and a line >>>>>>> REPLACE at its end",
        recovery_suggestion="Write the whole block: <<<<<<< SEARCH, the old lines, =======, "
        "the new lines, >>>>>>> REPLACE.",
    )


def apply_replacement(text: str, block: Replacement) -> str:
    """`text` with the block applied: its SEARCH lines found exactly once (trailing spaces
    and indentation forgiven when the exact text is not there), or appended when empty."""
    if not block.search.strip():
        return text + ("" if not text or text.endswith("\n") else "\n") + block.replace
    if text.count(block.search) == 1:
        return text.replace(block.search, block.replace, 1)
    lines = text.splitlines(keepends=True)
    wanted = [line.strip() for line in block.search.splitlines()]
    while wanted and not wanted[-1]:
        wanted.pop()
    starts = [
        i
        for i in range(len(lines) - len(wanted) + 1)
        if [line.strip() for line in lines[i : i + len(wanted)]] == wanted
    ]
    if len(starts) != 1:
        how = "does not occur" if not starts else f"occurs {len(starts)} times"
        raise ToolError(
            ErrorType.NO_MATCH if not starts else ErrorType.AMBIGUOUS_MATCH,
            f"the SEARCH part for {block.path} {how} in the file",
            recovery_suggestion=(
                f"Read {block.path} and copy the lines to replace exactly, with enough of them "
                "to occur once."
            ),
            context={"path": block.path},
        )
    start = starts[0]
    return "".join(lines[:start]) + block.replace + "".join(lines[start + len(wanted) :])


def edit_changes(
    ctx: ToolContext, blocks: list[Replacement]
) -> list[tuple[str, str | None, str | None]]:
    """(path, before, after) for each file the blocks change; a file that does not exist yet
    is created by a block with an empty SEARCH part."""
    before: dict[str, str | None] = {}
    after: dict[str, str] = {}
    done: list[Replacement] = []
    for block in blocks:
        if block.path not in before:
            # the guard refuses escapes and links before anything is read; the text is the
            # editor's where it has the file open unsaved, the one the model read
            before[block.path] = ctx.file_text(block.path)
            after[block.path] = before[block.path] or ""
        if block in done:
            continue  # the same block twice (a held reply may give two): made once
        done.append(block)
        try:
            if before[block.path] is None and block.search.strip():
                raise ToolError(
                    ErrorType.FILE_NOT_FOUND,
                    f"{block.path} does not exist, so nothing in it can be replaced",
                    recovery_suggestion="To create it, leave the SEARCH part empty.",
                )
            after[block.path] = apply_replacement(after[block.path], block)
        except ToolError as exc:
            if exc.error not in (ErrorType.NO_MATCH, ErrorType.FILE_NOT_FOUND):
                raise
            path, text = _holding_file(ctx, block, exc)
            before.setdefault(path, text)
            after[path] = apply_replacement(after.get(path, text), replace(block, path=path))
    changes = [
        (path, old, _kept_as_they_were(path, old, after[path])) for path, old in before.items()
    ]
    for path, old, new in changes:
        _refuse_a_repeat(path, old or "", new)
    return [change for change in changes if change[1] != change[2]]


def _kept_as_they_were(path: str, before: str | None, after: str) -> str:
    """`after`, with the lines of a document that a change adding to it only copied kept as
    the file has them: a line it writes again with other indentation or trailing spaces is
    its own line again (the 1.5B model copied a README's lines as a new section's anchor and
    indented a reST directive's option one space more: the image lost it, dev62). A change
    that adds nothing (re-indenting on purpose), and any file that is not prose, as written."""
    if before is None or not _DOCUMENT.search(path):
        return after
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    flat = difflib.SequenceMatcher(
        None, [line.strip() for line in old], [line.strip() for line in new], autojunk=False
    )
    if not any(tag in ("insert", "replace") for tag, *_ in flat.get_opcodes()):
        return after
    for i, j, size in flat.get_matching_blocks():
        for k in range(size):
            line = new[j + k]
            if old[i + k].strip():  # its own text, with the line end the change gave it
                new[j + k] = old[i + k].rstrip("\r\n") + line[len(line.rstrip("\r\n")) :]
    return "".join(new)


def _holding_file(ctx: ToolContext, block: Replacement, missed: ToolError) -> tuple[str, str]:
    """(path, text) of the one other file where `block`'s SEARCH part occurs once, else
    `missed` raised: the SEARCH lines say where a change goes, the line above them may name
    the wrong file (dev sv-classifier: the classifiers of setup.cfg, under the line
    `# src/semver/__init__.py`)."""
    first = next((line.strip() for line in block.search.splitlines() if line.strip()), "")
    literal = re.sub(r"([\\.^$|?*+()\[\]{}])", r"\\\1", first)  # ripgrep's escapes, not re's
    found = RgSearchTool(ctx).forward(pattern=literal, max_results=50) if first else {}
    holding = []
    for path in dict.fromkeys(match["path"] for match in found.get("matches", [])):
        try:
            text = ctx.file_text(path)
            if path != block.path and text is not None:
                apply_replacement(text, replace(block, path=path))
                holding.append((path, text))
        except ToolError:
            continue
    if len(holding) != 1:
        raise missed
    return holding[0]


#: A line that is only a fence or a run of a block's marker characters: no content of its own.
_NO_CONTENT = re.compile(r"^\s*(?:`{3,}\w*|[=<>]{5,}.*)?\s*$")
#: Added lines, all of them the file's own, from which a change is only a repeat.
REPEAT_LINES = 3
#: Lines of a document's own, in their order, that a change adding to it may not copy.
COPIED_PASSAGE = 6
#: Documents: prose, where a passage of the file written again is never new text.
_DOCUMENT = re.compile(r"(?:\.(?:md|markdown|rst|txt|adoc)|/?README[^/]*)$", re.IGNORECASE)


def _refuse_a_repeat(path: str, before: str, after: str) -> None:
    """Refuse a change that removes nothing and whose added lines are all lines the file
    already has (markers, fences and blank lines aside), at least `REPEAT_LINES` of them: it
    copies the file into itself (a move removes the lines it moves, and is not refused).
    Held to the blocks' grammar, the 1.5B model answered "add a Usage section to the README"
    with the whole README again at its end, and the run was told as done (dev
    infl-readme-usage). In a document, a passage of `COPIED_PASSAGE` of its lines written
    again in their order is refused too, whatever is new around it: the same model gave a
    new section a heading and the README's paragraphs under it (dev61)."""
    old, new = before.splitlines(), after.splitlines()
    had = {line.strip() for line in old}
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    opcodes = matcher.get_opcodes()
    if any(tag in ("delete", "replace") for tag, *_ in opcodes):
        return
    added = [
        line
        for tag, _, _, j1, j2 in opcodes
        if tag == "insert"
        for line in new[j1:j2]
        if not _NO_CONTENT.match(line)
    ]
    said = ""
    if len(added) >= REPEAT_LINES and all(line.strip() in had for line in added):
        said = f"the change only repeats lines {path} already has ({len(added)} of them): it adds "
        said += "nothing new"
    elif _DOCUMENT.search(path):
        own = [line.strip() for line in old if not _NO_CONTENT.match(line)]
        runs = difflib.SequenceMatcher(None, own, [line.strip() for line in added], False)
        passage = runs.find_longest_match()
        if passage.size >= COPIED_PASSAGE:
            said = f"the change writes {passage.size} lines {path} already has again, in their "
            said += f"order (from `{own[passage.a][:60]}`): they are not new text"
    if said:
        raise ToolError(
            ErrorType.INVALID_ARGUMENT,
            said,
            recovery_suggestion="Write the new lines themselves in the part after =======, "
            "with the lines to keep around them; an empty SEARCH part adds them at the end.",
            context={"path": path},
        )


def definition_changes(ctx: ToolContext, sections: list[tuple[str, str]]) -> tuple[Changes, str]:
    """(path, before, after) for each file that (path, definitions) sections change, each
    merged by name (patches/merge.py; a file that does not exist yet is the definitions), and
    what each merge did, in one line."""
    before: dict[str, str | None] = {}
    after: dict[str, str] = {}
    said: list[str] = []
    for path, body in sections:
        if path not in before:
            before[path] = ctx.file_text(path)  # after the patch guard, as edit_changes
        current = after.get(path, before[path])
        merged = merge_definitions(current, body, path) if current is not None else None
        after[path] = merged.text if merged is not None else body
        said.append(f"{path}: {merged.summary() if merged is not None else 'new file'}")
    changes = [(path, before[path], after[path]) for path in before]
    return [change for change in changes if change[1] != change[2]], "; ".join(said)


def propose_changes(
    ctx: ToolContext, changes: list[tuple[str, str | None, str | None]], description: str
) -> dict[str, Any]:
    """Propose the changes as one patch (ToolError when they change nothing)."""
    if not changes:
        raise ToolError(
            ErrorType.INVALID_ARGUMENT,
            "the edit changes nothing",
            recovery_suggestion="Make the new lines differ from the lines they replace.",
        )
    return propose(ctx, changes, description)
