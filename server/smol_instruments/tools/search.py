"""`rg_search`: ripgrep over the repository, honouring .gitignore; it reads no ripgrep config
and gets a tool's environment (`repo.run_rg`), so nothing can make it run a program.

A file the agent has read from the user's editor with unsaved changes (ToolContext.unsaved) is
searched as the editor shows it now: ripgrep reads that text on stdin.
Other files are searched on disk (the editor cannot list its unsaved buffers)."""

from __future__ import annotations

from typing import Any

from ..base.errors import ErrorType, ToolError
from .base import RepoTool, guarded
from .files import read_repo_text
from .repo import glob_match, rg_binary, run_rg
from .validation import optional_int, optional_str, require_str

SEARCH_TIMEOUT_S = 60.0
MAX_LINE_CHARS = 300
# Matches read before stopping: enough to sort deterministically and report a total.
COLLECT_LIMIT = 5000
#: How ripgrep writes what it found: `path NUL line:text`, one match a line.
OUTPUT = (
    "--line-number",
    "--no-heading",
    "--with-filename",
    "--null",
    "--color=never",
    "--max-columns",
    "2000",
    "--max-columns-preview",
)


def rg_missing() -> ToolError:
    return ToolError(
        ErrorType.TOOL_UNAVAILABLE,
        "ripgrep (rg) is not installed, so rg_search cannot run",
        recovery_suggestion=(
            "Use list_files() and read_file_snippet() instead. To fix it, install ripgrep "
            "(apt-get install ripgrep, brew install ripgrep)."
        ),
    )


class RgSearchTool(RepoTool):
    name = "rg_search"
    description = (
        "Search file contents with ripgrep (regex; files ignored by .gitignore are skipped). "
        "glob limits the files, e.g. '*.py' or 'src/**'."
    )
    inputs = {
        "pattern": {"type": "string", "description": "regex to search for"},
        "glob": {
            "type": "string",
            "description": "only files matching this glob",
            "nullable": True,
        },
        "max_results": {
            "type": "integer",
            "description": "most matches to return",
            "nullable": True,
        },
    }
    example = "rg_search(pattern='<name>', glob='*.py')"

    @guarded
    def forward(
        self, pattern: str, glob: str | None = None, max_results: int | None = None
    ) -> dict[str, Any]:
        limits = self.limits
        pattern = require_str("pattern", pattern, max_chars=1000, example="'def main'")
        glob = optional_str("glob", glob, max_chars=1000, example="'*.py'")
        limit = optional_int(
            "max_results",
            max_results,
            minimum=1,
            maximum=max(1000, limits.truncate_items),
            default=limits.truncate_items,
        )
        assert limit is not None
        if glob is not None and (glob.startswith(("/", "~")) or ".." in glob.split("/")):
            self.ctx.jail.resolve(glob)  # raises PATH_OUTSIDE_REPO
        rg = rg_binary()
        if rg is None:
            raise rg_missing()
        # Plain output, path NUL-separated: cheaper for rg to write and for us to read than --json.
        argv = [*OUTPUT, "--hidden", "--no-require-git", "--glob", "!.git"]
        # rg's --glob overrides .gitignore; a file *type* does not. Name globs become a type,
        # path globs search their literal directory and are filtered below.
        where = "."
        path_glob = None
        if glob:
            glob = glob.strip().removeprefix("./")
            if "/" not in glob:
                argv += ["--type-add", f"smolglob:{glob}", "--type", "smolglob"]
            else:
                path_glob = glob
                literal = glob.split("/")
                prefix = []
                for part in literal[:-1]:
                    if any(ch in part for ch in "*?[{"):
                        break
                    prefix.append(part)
                if prefix:
                    where = self.ctx.jail.relative(self.ctx.jail.resolve("/".join(prefix)))
                    if not (self.ctx.root / where).is_dir():
                        where = "."
        argv += ["--regexp", pattern, "--", where]
        result = run_rg(self.ctx, rg, argv, SEARCH_TIMEOUT_S)
        self.ctx.check_cancelled()
        if result.timed_out:
            raise ToolError(
                ErrorType.TIMEOUT,
                f"search took longer than {SEARCH_TIMEOUT_S:g} s",
                recovery_suggestion="Narrow it with glob='src/**' or a more specific pattern.",
            )
        if result.exit_code == 2 and "regex parse error" in result.stderr:
            detail = result.stderr.strip().splitlines()
            raise ToolError(
                ErrorType.INVALID_ARGUMENT,
                f"pattern is not a valid regex: {' '.join(d.strip() for d in detail[-3:])}",
                recovery_suggestion=(
                    "Escape special characters with a backslash (\\( \\[ \\. \\*), or search "
                    "for a simpler literal piece of the text."
                ),
                context={"pattern": pattern},
            )
        matches = _matches(result.stdout, path_glob)
        if self.ctx.unsaved:
            shown = self._unsaved_matches(rg, pattern, glob)
            matches = [m for m in matches if m["path"] not in shown]
            matches += [m for found in shown.values() for m in found]
        if not matches:
            where = f" in files matching {glob!r}" if glob else ""
            broader = ["drop glob= to search every file"] if glob else []
            broader += [
                f"ignore case with pattern='(?i){pattern}'",
                "search for a shorter piece of the name",
            ]
            raise ToolError(
                ErrorType.NO_MATCH,
                f"no matches for {pattern!r}{where}",
                recovery_suggestion="Try a broader search: " + "; or ".join(broader) + ".",
                context={"pattern": pattern, "glob": glob},
            )
        matches.sort(key=lambda m: (m["path"], m["line"]))
        return {
            "matches": matches[:limit],
            "total": len(matches),
            "truncated": len(matches) > limit,
        }

    def _unsaved_matches(
        self, rg: str, pattern: str, glob: str | None
    ) -> dict[str, list[dict[str, Any]]]:
        """The matches in the editor's text of each file read unsaved, by path (asked again:
        its text now). A file saved meanwhile is left to the disk's search."""
        found: dict[str, list[dict[str, Any]]] = {}
        for rel in sorted(self.ctx.unsaved):
            if glob and not glob_match(rel, glob):
                continue
            try:
                _, text = read_repo_text(self.ctx, rel)
            except ToolError:
                continue
            if rel not in self.ctx.unsaved:
                continue
            # no --label before ripgrep 14: the lines come without a name, and get this one
            argv = [*OUTPUT, "--no-filename", "--regexp", pattern, "-"]
            argv.remove("--with-filename")
            result = run_rg(self.ctx, rg, argv, SEARCH_TIMEOUT_S, stdin_text=text)
            lines = "".join(f"{rel}\0{line}\n" for line in result.stdout.splitlines())
            found[rel] = _matches(lines, None)
        return found


def _matches(stdout: str, path_glob: str | None) -> list[dict[str, Any]]:
    """ripgrep's `path NUL line:text` lines as matches (COLLECT_LIMIT at most)."""
    matches: list[dict[str, Any]] = []
    for line in stdout.splitlines():
        path, sep, rest = line.partition("\0")
        number, colon, text = rest.partition(":")
        if not sep or not colon or not number.isdigit():
            continue  # "binary file matches" notices and the like
        path = path.removeprefix("./")
        if path_glob is not None and not glob_match(path, path_glob):
            continue
        text = text.rstrip("\r")
        if len(text) > MAX_LINE_CHARS:
            text = text[:MAX_LINE_CHARS] + "…"
        matches.append({"path": path, "line": int(number), "text": text})
        if len(matches) >= COLLECT_LIMIT:
            break
    return matches
