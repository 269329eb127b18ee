"""Unified diffs: read one (a model's or git's), apply it to a text, and build one.

`parse` repairs what small models get wrong (a ```diff fence, wrong line counts in `@@`
headers, blank context lines without their leading space), reads the result with `unidiff`,
and refuses what a patch may never do here: symbolic links, file mode changes, binary
patches, renames, submodules. Paths go through THE git-path unquoter, `unquote_git_path`.
`apply` places each hunk in a file's text the way `git apply` does: at the stated line or the
nearest offset with all its context, then (as `--ignore-whitespace`) ignoring whitespace.
"""

from __future__ import annotations

import codecs
import difflib
import re
from dataclasses import dataclass, field

from unidiff import PatchSet
from unidiff.errors import UnidiffParseError

from ..base.errors import ErrorType, ToolError
from .model import locate, split_lines

HUNK_HEADER = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@(.*)$")
REGULAR_FILE = "100644"


class DiffError(ValueError):
    """A diff that cannot be read or applied; the message is one line that says where."""


def unquote_git_path(text: str) -> str:
    """A path as git prints it in a diff header: C-quoted when it has special characters."""
    if len(text) >= 2 and text[0] == text[-1] == '"':
        raw = codecs.escape_decode(text[1:-1].encode("utf-8", "surrogateescape"))[0]
        return bytes(raw).decode("utf-8", "surrogateescape")
    return text


def quote_git_path(path: str) -> str:
    """The inverse of `unquote_git_path` for the characters git quotes."""
    if not any(ch in path for ch in '"\\\t\n') and path.isprintable() and " " not in path:
        return path
    escaped = path.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t")
    return '"' + escaped.replace("\n", "\\n") + '"'


def _header_path(name: str | None) -> str | None:
    """The repository path a `---`/`+++` name stands for; None for /dev/null."""
    if name is None:
        return None
    path = unquote_git_path(name.strip())
    if path == "/dev/null":
        return None
    return path[2:] if path.startswith(("a/", "b/")) else path


@dataclass
class DiffHunk:
    """One `@@` hunk: the lines it replaces (`old`), with `before`/`after` as its context."""

    line: int  # the old side's first line, 0-based, as the header says
    before: list[str]
    old: list[str]
    new: list[str]
    after: list[str]
    header: str


@dataclass
class FileDiff:
    old_path: str | None  # None: the diff creates the file
    new_path: str | None  # None: the diff deletes it
    hunks: list[DiffHunk] = field(default_factory=list)

    @property
    def path(self) -> str:
        return self.new_path or self.old_path or ""

    def apply(self, text: str | None) -> str | None:
        """The file after this diff; DiffError naming the hunk that does not apply."""
        if self.old_path and self.new_path and self.old_path != self.new_path:
            raise _refuse(
                f"{self.old_path} is renamed to {self.new_path}; propose a deletion and a creation"
            )
        if self.old_path is None and text is not None:
            raise DiffError(f"{self.path} already exists, but the diff creates it")
        if self.old_path is not None and text is None:
            raise DiffError(f"{self.path} does not exist, but the diff changes it")
        lines = split_lines(text)
        crlf = bool(lines) and lines[0].endswith("\r\n")
        placed: list[tuple[int, DiffHunk]] = []
        for number, hunk in enumerate(self.hunks, 1):
            # No fuzz, as `git apply`: a model's wrong context means a wrong place.
            at = locate(
                lines, hunk.before, hunk.old, hunk.after, hunk.line + len(hunk.before), max_fuzz=0
            )
            if at is None:
                at = locate(
                    lines, hunk.before, hunk.old, hunk.after, hunk.line, loose=True, max_fuzz=0
                )
            if at is None and not (hunk.old or hunk.before or hunk.after):
                at = min(hunk.line + 1, len(lines))  # zero context: trust the header
            span = (at, at + max(1, len(hunk.old))) if at is not None else (0, 0)
            if at is None or any(
                span[0] < end and start < span[1] for start, end in _spans(placed)
            ):
                raise DiffError(
                    f"patch does not apply: hunk {number} of {self.path} ({hunk.header}): "
                    "its lines are not in the file"
                )
            placed.append((at, hunk))
        for at, hunk in sorted(placed, key=lambda p: p[0], reverse=True):
            new = [_crlf(line) for line in hunk.new] if crlf else hunk.new
            lines[at : at + len(hunk.old)] = new
        if self.new_path is None:
            if lines:
                raise DiffError(f"the diff deletes {self.path} but leaves lines in it")
            return None
        return "".join(lines)


def _spans(placed: list[tuple[int, DiffHunk]]) -> list[tuple[int, int]]:
    return [(at, at + max(1, len(hunk.old))) for at, hunk in placed]


def _crlf(line: str) -> str:
    return line[:-1] + "\r\n" if line.endswith("\n") and not line.endswith("\r\n") else line


def repair(diff: str) -> str:
    """A model's diff made readable: fences gone, `@@` counts recounted, blank context fixed."""
    text = re.sub(r"^(diff|patch|udiff)\n", "", diff.strip().strip("`")).strip("\n")
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        match = HUNK_HEADER.match(lines[i])
        if not match:
            out.append(_git_line(lines, i) if lines[i].startswith("diff --git ") else lines[i])
            i += 1
            continue
        body: list[str] = []
        i += 1
        while i < len(lines):
            line = lines[i]
            if line == "":
                line = " "
            if line[0] not in " +-\\" or _starts_file(lines, i) or HUNK_HEADER.match(line):
                break
            body.append(line)
            i += 1
        while body and body[-1] == " " and i < len(lines) and lines[i - 1] == "":
            body.pop()  # a blank separator line before the next file, not context
        old = sum(1 for b in body if b[0] in " -")
        new = sum(1 for b in body if b[0] in " +")
        out.append(f"@@ -{match.group(1)},{old} +{match.group(2)},{new} @@{match.group(3)}")
        out.extend(body)
    return "\n".join(out).rstrip("\n") + "\n"


def _git_line(lines: list[str], i: int) -> str:
    """A `diff --git` line restated from the `---`/`+++` lines under it (models mix them up)."""
    for j in range(i + 1, min(i + 8, len(lines) - 1)):
        if lines[j].startswith(("diff --git ", "@@")):
            break
        if lines[j].startswith("--- ") and lines[j + 1].startswith("+++ "):
            old, new = lines[j][4:].split("\t")[0], lines[j + 1][4:].split("\t")[0]
            old = new.replace("b/", "a/", 1) if old == "/dev/null" else old
            new = old.replace("a/", "b/", 1) if new == "/dev/null" else new
            return f"diff --git {old} {new}"
    return lines[i]


def _starts_file(lines: list[str], i: int) -> bool:
    line = lines[i]
    if line.startswith("diff --git "):
        return True
    return line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ ")


def _refuse(message: str) -> ToolError:
    return ToolError(
        ErrorType.INVALID_ARGUMENT,
        f"refused: {message}",
        recovery_suggestion=(
            "Propose text changes to regular files only: no symbolic links, file modes, "
            "binary files or renames."
        ),
    )


def parse(diff: str) -> list[FileDiff]:
    """The files and hunks of a unified diff; DiffError if unreadable, ToolError if refused."""
    try:
        patchset = PatchSet(repair(diff))
    except UnidiffParseError as exc:
        raise DiffError(f"the diff cannot be read: {exc}") from None
    files: list[FileDiff] = []
    for patched in patchset:
        old_path, new_path = _header_path(patched.source_file), _header_path(patched.target_file)
        name = new_path or old_path or "?"
        if patched.is_binary_file:
            raise _refuse(f"{name} is a binary patch")
        if patched.is_symlink:
            raise _refuse(f"{name} is a symbolic link (mode 120000)")
        if patched.is_submodule:
            raise _refuse(f"{name} is a submodule")
        if (
            patched.source_mode
            and patched.target_mode
            and patched.source_mode != patched.target_mode
        ):
            raise _refuse(f"{name} changes mode {patched.source_mode} to {patched.target_mode}")
        if old_path is None and patched.target_mode not in (None, REGULAR_FILE):
            raise _refuse(f"{name} would be created with mode {patched.target_mode}")
        if any(line.startswith(("old mode", "new mode")) for line in patched.patch_info or []):
            raise _refuse(f"{name} changes its file mode")
        if old_path is None and new_path is None:
            raise DiffError("a file in the diff has /dev/null on both sides")
        hunks = [_hunk(h) for h in patched]
        files.append(FileDiff(old_path, new_path, [h for h in hunks if h is not None]))
    return files


def _hunk(source: object) -> DiffHunk | None:
    body: list[list[str]] = []
    for line in source:  # type: ignore[attr-defined]
        if line.line_type == "\\":
            if body:
                body[-1][1] = body[-1][1].removesuffix("\n")
            continue
        body.append([line.line_type or " ", line.value])
    changed = [i for i, (kind, _) in enumerate(body) if kind != " "]
    if not changed:
        return None
    first, last = changed[0], changed[-1]
    middle = body[first : last + 1]
    return DiffHunk(
        line=max(0, int(source.source_start) - 1),  # type: ignore[attr-defined]
        before=[value for _, value in body[:first]],
        old=[value for kind, value in middle if kind != "+"],
        new=[value for kind, value in middle if kind != "-"],
        after=[value for _, value in body[last + 1 :]],
        header=str(source).split("\n", 1)[0],
    )


def unified_diff(path: str, old: str | None, new: str | None, context: int = 3) -> str:
    """A git-style diff (a/ b/ paths, creation and deletion headers) that `git apply` takes."""
    a, b = quote_git_path("a/" + path), quote_git_path("b/" + path)
    header = [f"diff --git {a} {b}\n"]
    if old is None:
        header.append("new file mode 100644\n")
    elif new is None:
        header.append("deleted file mode 100644\n")
    body = difflib.unified_diff(
        split_lines(old),
        split_lines(new),
        fromfile="/dev/null" if old is None else a,
        tofile="/dev/null" if new is None else b,
        n=context,
    )
    out: list[str] = []
    for line in body:
        if not line.endswith("\n"):
            line += "\n\\ No newline at end of file\n"
        out.append(line)
    return "".join(header + out) if out else ""


def changed_files(diff: str) -> list[str]:
    """Paths a diff creates or modifies (deletions excluded), in order; [] if unreadable."""
    try:
        files = parse(diff)
    except (DiffError, ToolError):
        return []
    return list(dict.fromkeys(f.new_path for f in files if f.new_path is not None))


def changed_python_files(diff: str) -> list[str]:
    return [path for path in changed_files(diff) if path.endswith(".py")]
