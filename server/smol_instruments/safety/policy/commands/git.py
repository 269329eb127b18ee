"""git: the options and settings that make it run programs, read elsewhere or write files.

Most git subcommands are decided by their rows in `default_rules.toml` (reads are allowed,
history changes and network need approval). This handler finds what the rows cannot:
`-c`/`--exec-path`/`--git-dir` overrides, settings whose value is a command (`alias.x=!cmd`,
`core.pager`, filter drivers), `git config` writes to other files (`--file`, `--global`),
files written through `--output FILE`, `format-patch -o`, `archive -o`, `bundle create`,
directories created by `clone`/`init`/`worktree add`, and commands run by `grep -O`,
`submodule foreach`, `rebase --exec`, `bisect run` and `difftool --extcmd`.
"""

from __future__ import annotations

import re

from ...shell import Field
from ..analysis.invocation import Invocation
from ..analysis.state import Output
from ..arguments import operands, parse_options
from ..places import Effect
from ..tables import VALUE_OPTIONS, names
from .registry import handles

# Settings whose value git runs as a command (or that point it at other code).
_COMMAND_SETTINGS = re.compile(
    r"core\.(sshcommand|pager|editor|fsmonitor|askpass|gitproxy)|sequence\.editor|"
    r"diff\.external|gpg(\..+)?\.program|credential(\..+)?\.helper|pager\..+|"
    r"diff\..+\.(textconv|command)|filter\..+\.(clean|smudge|process)|merge\..+\.driver|"
    r"uploadpack\.packobjectshook|interactive\.difffilter|sendemail\..*cmd|"
    r"(web|browser\..+|man\..+|mergetool\..+|difftool\..+)\.(browser|cmd|path)"
)
_CODE_PATH_SETTINGS = re.compile(r"core\.hookspath|include\.path|includeif\..+\.path")
_CONFIG_READS = names(
    "--get --get-all --get-regexp --get-urlmatch --get-color --get-colorbool --list -l"
)
_CONFIG_VALUES = names("-f --file --blob --type --default --comment -t")
_OUTPUT_OPTIONS = names("--output --output-directory")
# Options whose value git runs: `rebase --exec`, `difftool --extcmd`, `fetch --upload-pack`,
# `push --receive-pack`, `filter-branch --tree-filter`, ...
_RUN_OPTIONS = names(
    "-x --exec --extcmd --upload-pack --receive-pack --tree-filter --index-filter "
    "--msg-filter --env-filter --commit-filter --parent-filter --tag-name-filter"
)
_READ_OPTIONS = names("--contents")
_PATCH_OUTPUT = names("-o --output --output-directory")


@handles("git")
def git(inv: Invocation) -> Output | None:
    _global_options(inv)
    found = operands("git", inv.texts)
    subcommand = found[:1]
    _outputs(inv, subcommand)
    if subcommand == ["config"]:
        _config(inv)
    elif subcommand in (["clone"], ["init"]) or found[:2] in (
        ["worktree", "add"],
        ["submodule", "add"],
    ):
        _created(inv, found)
    _commands_run(inv, found)
    if subcommand in (["ls-files"], ["diff"], ["grep"]) and (
        subcommand == ["ls-files"] or "--name-only" in inv.texts or "-l" in inv.texts
    ):
        return Output("paths", "./*")  # it prints paths inside the repository
    return None


def _global_options(inv: Invocation) -> None:
    """`git -c k=v`, `-C DIR`, `--git-dir`, `--exec-path=DIR`, before the subcommand."""
    args = inv.args
    i = 0
    while i < len(args) and args[i].text.startswith("-"):
        text = args[i].text
        if text.startswith("-c") and (len(text) > 2 or i + 1 < len(args)):
            inv.emit("approval.git-config-override", what="overrides git configuration")
            key, _, value = (text[2:] or args[i + 1].text).partition("=")
            _setting(inv, key, value)
            i += 1 if len(text) > 2 else 2
            continue
        if text in ("-C", "--git-dir", "--work-tree") and i + 1 < len(args):
            inv.touch(Effect.READ, args[i + 1], verb="works on")
            i += 2
            continue
        if text.startswith(("--git-dir=", "--work-tree=", "--config-env")):
            inv.emit(
                "approval.git-config-override",
                what="points git at another repository or configuration",
            )
        elif text.startswith("--exec-path="):
            inv.emit("approval.git-config-override", what="points git at other programs")
        elif text in ("-p", "--paginate"):
            inv.emit("approval.git-config-override", what="runs the pager git is configured with")
        i += 1
    if any(arg.text in ("--ext-diff", "--textconv", "--filters") for arg in args[i:]):
        what = "runs the diff programs git is configured with"
        inv.emit("approval.git-config-override", what=what)


def _setting(inv: Invocation, key: str, value: str) -> None:
    """A configuration value git may run: an alias (`!cmd`), a pager, a filter driver."""
    key = key.lower()
    if key.startswith("alias.") and value.startswith("!"):
        inv.shell_code(Field(value[1:]))
    elif _COMMAND_SETTINGS.fullmatch(key):
        inv.shell_code(Field(value))
    elif _CODE_PATH_SETTINGS.fullmatch(key):
        inv.emit("approval.git-config-override", what=f"sets `{key}`, code git loads from a path")


def _outputs(inv: Invocation, subcommand: list[str]) -> None:
    """Files written through `--output FILE`, `format-patch -o DIR`, `archive -o FILE`."""
    wanted = _PATCH_OUTPUT if subcommand in (["format-patch"], ["archive"]) else _OUTPUT_OPTIONS
    options, _ = parse_options(inv.args, VALUE_OPTIONS["git"] | wanted)
    for name, value in options:
        if name in wanted and value is not None:
            inv.write(value)


def _config(inv: Invocation) -> None:
    """`git config`: a read unless it sets something; a write to `--file`/`--global` is judged."""
    options, rest = parse_options(inv.args, VALUE_OPTIONS["git"] | _CONFIG_VALUES)
    rest = rest[1:]  # past `config`
    flags = {name for name, _ in options}
    action = rest[0].text if rest and rest[0].text in ("get", "list", "set", "unset") else ""
    if action:
        rest = rest[1:]
    reads = bool(flags & _CONFIG_READS) or action in ("get", "list")
    target = next((v for n, v in options if n in ("-f", "--file") and v is not None), None)
    if target is None and "--global" in flags:
        target = Field(inv.analysis.paths.home + "/.gitconfig")
    elif target is None and "--system" in flags:
        target = Field("/etc/gitconfig")
    if reads or (len(rest) == 1 and not action):
        if target is not None:
            inv.read(target)
        return
    if target is not None:
        inv.write(target)
    if len(rest) >= 2:
        _setting(inv, rest[0].text, rest[1].text)


_CREATE_VALUES = names(
    "-b -B --branch --reason --depth --origin -o -u --upload-pack --template --reference "
    "--separate-git-dir --config --filter --name --jobs -j"
)


def _created(inv: Invocation, found: list[str]) -> None:
    """`git clone URL DIR`, `git init DIR`, `git worktree add DIR`: DIR is created."""
    options, rest = parse_options(inv.args, VALUE_OPTIONS["git"] | _CREATE_VALUES)

    lead = 1 if found[:1] in (["clone"], ["init"]) else 2
    positional = rest[lead:]
    at = 0 if found[:1] == ["init"] or found[:2] == ["worktree", "add"] else 1
    if len(positional) > at:
        inv.touch(Effect.CREATE, positional[at])
    for name, value in options:
        if value is None:
            continue
        if name in ("-u", "--upload-pack"):
            inv.shell_code(value)
        elif name == "--separate-git-dir":
            inv.touch(Effect.CREATE, value)
        elif name in ("-c", "--config"):
            key, _, setting = value.text.partition("=")
            _setting(inv, key, setting)


def _commands_run(inv: Invocation, found: list[str]) -> None:
    """Commands git runs for `grep -O`, `submodule foreach`, `rebase -x`, `bisect run`, ..."""
    args = inv.args
    if found[:1] == ["grep"]:
        for k, arg in enumerate(args):
            pager = (
                arg.text.partition("=")[2]
                if arg.text.startswith("--open-files-in-pager=")
                else None
            )
            if arg.text in ("-O", "--open-files-in-pager") and k + 1 < len(args):
                pager = args[k + 1].text
            elif arg.text.startswith("-O") and len(arg.text) > 2:
                pager = arg.text[2:]
            if pager:
                inv.shell_code(Field(pager))  # git runs it as the pager
    if found[:2] in (["submodule", "foreach"], ["bisect", "run"]) and len(found) > 2:
        inv.shell_code(Field(" ".join(found[2:])))
    options, _ = parse_options(args, VALUE_OPTIONS["git"] | _RUN_OPTIONS | _READ_OPTIONS)
    for name, value in options:
        if value is None:
            continue
        if name in _RUN_OPTIONS and (name != "-x" or found[:1] == ["rebase"]):
            inv.shell_code(value)
        elif name in _READ_OPTIONS:
            inv.read(value)
