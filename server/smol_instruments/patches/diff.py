"""Unified diffs: which files a diff touches (git's quoted paths unquoted)."""

from __future__ import annotations

import codecs


def _unquote_git_path(path: str) -> str:
    if len(path) >= 2 and path[0] == path[-1] == '"':
        raw = codecs.escape_decode(path[1:-1].encode("latin-1"))[0]
        return bytes(raw).decode("utf-8", errors="replace")
    return path


def changed_files(diff: str) -> list[str]:
    """Paths a unified diff creates or modifies (new side, `b/` removed; deletions excluded)."""
    paths: list[str] = []
    for line in diff.splitlines():
        if not line.startswith("+++ "):
            continue
        path = line[4:]
        if not path.startswith('"'):
            path = path.split("\t", 1)[0].rstrip()
        path = _unquote_git_path(path)
        if path == "/dev/null":
            continue
        if path.startswith("b/"):
            path = path[2:]
        if path not in paths:
            paths.append(path)
    return paths


def changed_python_files(diff: str) -> list[str]:
    return [path for path in changed_files(diff) if path.endswith(".py")]
