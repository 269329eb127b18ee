"""Places in a repository: protected ones (never changed by a command) and byproducts.

A *protected place* is one where a file makes something run without anyone running a
command of the project: git's directory and the files that tell git what to run, commit
hooks, an editor's tasks and settings (run when the folder opens), a shell's per-folder
environment (run when you enter it), and our own policy. A command's change there is never
proposed and never written back, whether the place existed before or not (changes.py); a
name is protected at any depth (a nested repository's `.git`, a subfolder's `.envrc`).

*Byproducts* are what running tests and linters leaves behind: bytecode and caches. They are
dropped, and never written back.
"""

from __future__ import annotations

#: Names that, anywhere in a path, make it a protected place.
PROTECTED_NAMES = frozenset(
    {
        # git: its directory, and what tells git how to check out and what to run
        ".git",
        ".gitmodules",
        ".gitattributes",
        # hooks run on commit by pre-commit, husky, lefthook
        ".pre-commit-config.yaml",
        ".husky",
        "lefthook.yml",
        "lefthook.yaml",
        ".lefthook.yml",
        ".lefthook.yaml",
        ".lefthook",
        # editors: tasks, settings and language servers that run when the folder opens
        ".vscode",
        ".idea",
        ".devcontainer",
        ".devcontainer.json",
        ".zed",
        ".helix",
        ".nvim.lua",
        ".nvimrc",
        ".exrc",
        ".dir-locals.el",
        ".dir-locals-2.el",
        # shells: what runs on entering the folder (direnv, mise)
        ".envrc",
        ".direnv",
        "mise.toml",
        ".mise.toml",
        "mise.local.toml",
        ".mise.local.toml",
        ".mise",
        # ours: the repository's policy
        ".smol-instruments",
    }
)
PROTECTED_SUFFIXES = (".code-workspace",)

BYPRODUCT_DIRS = frozenset(
    {
        "__pycache__",
        ".pytest_cache",
        ".mypy_cache",
        ".ruff_cache",
        ".hypothesis",
        ".benchmarks",
        ".tox",
        ".nox",
        ".pytype",
        ".pyre",
    }
)
BYPRODUCT_FILES = frozenset({".coverage"})
BYPRODUCT_SUFFIXES = (".pyc", ".pyo")
BYPRODUCT_PREFIXES = (".coverage.",)


def protected(rel: str) -> bool:
    """Whether the repository path `rel` ("a/b/c") is, or lies in, a protected place."""
    return any(p in PROTECTED_NAMES or p.endswith(PROTECTED_SUFFIXES) for p in rel.split("/"))


def byproduct(rel: str) -> bool:
    """Whether `rel` is bytecode or lies in a cache a test runner or linter keeps."""
    parts = rel.split("/")
    name = parts[-1]
    return (
        any(p in BYPRODUCT_DIRS for p in parts)
        or name in BYPRODUCT_FILES
        or name.endswith(BYPRODUCT_SUFFIXES)
        or name.startswith(BYPRODUCT_PREFIXES)
    )
