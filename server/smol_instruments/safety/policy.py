"""The command policy: decides in Python, never in a prompt, whether a shell command may run.

`CommandPolicy.verdict(command)` parses the command with `shell.py` (quoting, lists, pipes,
subshells, substitutions, redirections, wrappers such as `sudo` and `xargs`, inline code for
`sh -c` and `eval`) and returns the strictest verdict of its parts:

- `deny`: never runs (recursive deletes outside the repository, downloads piped into a shell,
  writes to system files or devices, secrets, fork bombs, power and disk tools, ...);
- `require_approval`: the user decides (installs, pushes, deletes in the repository, network,
  scripts the policy cannot see into, anything unknown or unparseable);
- `allow`: runs (read-only inspection, the project's tests and checks).

Rules are data: `DEFAULT_RULES` matches commands by name, subcommand and arguments; the path
checks (inside or outside the repository, `.git/`, secrets, devices) apply to every command
that deletes, writes or reads. A repository may add rules in `.smol-instruments/policy.toml`;
they only make things stricter unless the user's own settings allow loosening. docs/policy.md
describes the format and every rule id.
"""

from __future__ import annotations

import fnmatch
import logging
import os
import posixpath
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .shell import (
    UNKNOWN,
    AndOr,
    ArithCommand,
    Case,
    Command,
    CondCommand,
    Field,
    For,
    FunctionDef,
    Group,
    If,
    Loop,
    Pipeline,
    Redirect,
    Script,
    SimpleCommand,
    Word,
    command_words,
    expand_value,
    expand_word,
    parse_repaired,
    static_output,
    word_scripts,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

log = logging.getLogger(__name__)

Verdict = Literal["allow", "require_approval", "deny"]
ALLOW: Verdict = "allow"
ASK: Verdict = "require_approval"
DENY: Verdict = "deny"
_RANK = {ALLOW: 0, ASK: 1, DENY: 2}
_VERDICT_NAMES: dict[str, Verdict] = {ALLOW: ALLOW, ASK: ASK, DENY: DENY}

#: Longer commands are not analysed (the shell tool refuses far shorter ones anyway).
MAX_COMMAND_CHARS = 20_000
#: `sh -c` inside `eval` inside `bash -c` ...: deeper than this is refused as unparseable.
MAX_SHELL_DEPTH = 6
POLICY_FILE = Path(".smol-instruments") / "policy.toml"


@dataclass(frozen=True)
class PolicyDecision:
    """The policy's answer for one command: what to do, which rule decided, and why."""

    command: str
    verdict: Verdict
    rule: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "command": self.command,
            "verdict": self.verdict,
            "rule": self.rule,
            "reason": self.reason,
        }


class PolicyConfigError(ValueError):
    """A `.smol-instruments/policy.toml` that cannot be used; the message is one line."""


# --- rules: the data ------------------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    """One row of the rule table: which commands it matches and what it decides.

    `command` holds program names (globs allowed: `mkfs*`). `subcommand` holds alternatives,
    each one or more words that must lead the operands (`"install"`, `"pip install"`).
    `args_*` compare whole arguments (`--hard` also matches `--hard=x`); `flags_any` matches
    short flags inside clusters (`f` matches `-rf`) or long ones (`force` matches `--force`).
    A `fallback` rule applies only when no other rule matched the command.
    """

    id: str
    verdict: Verdict
    reason: str
    command: tuple[str, ...]
    subcommand: tuple[str, ...] = ()
    args_any: tuple[str, ...] = ()
    args_all: tuple[str, ...] = ()
    args_none: tuple[str, ...] = ()
    flags_any: tuple[str, ...] = ()
    max_operands: int | None = None
    fallback: bool = False

    def matches(self, call: _Call) -> bool:
        if not any(_name_matches(pattern, call.name) for pattern in self.command):
            return False
        texts = call.texts
        operands = _operands(call.name, texts)
        if self.subcommand:
            for alternative in self.subcommand:
                words = alternative.split()
                if len(operands) >= len(words) and all(
                    fnmatch.fnmatchcase(op, w) for op, w in zip(operands, words, strict=False)
                ):
                    operands = operands[len(words) :]
                    break
            else:
                return False
        if self.args_any and not any(_has_arg(texts, a) for a in self.args_any):
            return False
        if self.args_all and not all(_has_arg(texts, a) for a in self.args_all):
            return False
        if self.args_none and any(_has_arg(texts, a) for a in self.args_none):
            return False
        if self.flags_any and not any(_has_flag(texts, f) for f in self.flags_any):
            return False
        return self.max_operands is None or len(operands) <= self.max_operands


def _words(text: str) -> frozenset[str]:
    """A set of names written as one space-separated string (tables stay readable)."""
    return frozenset(text.split())


def _rule(
    rule_id: str,
    verdict: Verdict,
    commands: str,
    reason: str,
    *,
    sub: str = "",
    args: str = "",
    every: str = "",
    none: str = "",
    flags: str = "",
    max_operands: int | None = None,
    fallback: bool = False,
) -> Rule:
    """A table row written compactly: space-separated lists, `|` between subcommands."""
    return Rule(
        rule_id,
        verdict,
        reason,
        tuple(commands.split()),
        tuple(s.strip() for s in sub.split("|") if s.strip()),
        tuple(args.split()),
        tuple(every.split()),
        tuple(none.split()),
        tuple(flags.split()),
        max_operands,
        fallback,
    )


_PY_TOOLS = "pytest py.test tox nox unittest nose2 trial coverage"
_CHECKERS = (
    "mypy dmypy pyright basedpyright pyre pytype flake8 pylint pyflakes pycodestyle pydocstyle "
    "bandit vulture black isort eslint prettier tsc jest vitest mocha ava jasmine karma "
    "phpunit rspec shellcheck hadolint yamllint markdownlint actionlint golangci-lint staticcheck "
    "ctest rubocop stylelint biome"
)
_READ_ONLY = (
    "ls dir vdir cat tac head tail wc nl od hexdump xxd strings file stat du df tree pwd echo "
    "printf which whereis type basename dirname realpath readlink date cal uname whoami id groups "
    "uptime free nproc arch locale tty true false test [ diff cmp comm sort uniq cut tr "
    "paste join column fold fmt rev expand unexpand grep egrep fgrep rg ag ack fd fdfind find "
    "jq yq sed awk gawk mawk nawk md5sum sha1sum sha224sum sha256sum sha384sum sha512sum b2sum "
    "shasum cksum sum base64 base32 basenc seq sleep env printenv ps pgrep lsblk lscpu tokei cloc "
    "scc zcat bzcat xzcat zstdcat gzcat iconv numfmt tsort look xmllint getconf logname users "
    "lsof nm objdump readelf size history tee dd"
)
_BUILTINS = (
    "cd pushd popd dirs export declare typeset local readonly unset set shopt alias unalias read "
    "mapfile readarray wait exit return shift getopts let : hash umask ulimit jobs fg bg disown "
    "trap source . builtin enable help caller compgen complete times break continue"
)
_NETWORK = (
    "curl wget ssh scp sftp rsync nc ncat netcat socat telnet ftp lftp tftp sshfs http https xh "
    "aria2c ping ping6 traceroute tracepath mtr dig nslookup host whois nmap gh glab hub aws "
    "gcloud gsutil az heroku flyctl fly vercel netlify ssh-copy-id ssh-keyscan openssl"
)
_CONTAINERS = (
    "docker podman docker-compose nerdctl buildah kubectl helm minikube kind k3d vagrant lxc "
    "incus terraform tofu pulumi ansible ansible-playbook"
)
_ADMIN = (
    "systemctl service launchctl mount umount modprobe insmod rmmod sysctl iptables ip6tables "
    "nft ufw firewall-cmd setenforce swapon swapoff chroot nsenter unshare crontab at batch "
    "hostnamectl timedatectl update-alternatives ldconfig dpkg rpm ip ifconfig route sysadminctl "
    "defaults dscl pmset csrutil"
)
_INTERACTIVE = (
    "vi vim nvim nano emacs pico ed ex less more most man info top htop btop screen tmux watch"
)
_VERSIONED = (
    "python node deno bun ruby perl php java javac go cargo rustc rustup npm npx yarn pnpm pip uv "
    "poetry pipenv pdm hatch conda gcc g++ cc clang clang++ make cmake git docker gh ruff mypy "
    "pytest tsc eslint prettier black isort tox nox lua Rscript swift dotnet mvn gradle kotlin "
    "scala sbt zig nim elixir erl ghc cabal stack bundle gem composer terraform kubectl helm"
)

# fmt: off
DEFAULT_RULES: tuple[Rule, ...] = (
    # -- deny: machine-wide damage; no repository has a reason to do these
    _rule("deny.system-power", DENY, "shutdown reboot halt poweroff", "shuts down or restarts the machine"),
    _rule("deny.system-power", DENY, "systemctl loginctl", "shuts down, suspends or restarts the machine", sub="poweroff|reboot|halt|suspend|hibernate|hybrid-sleep|kexec|emergency|rescue|soft-reboot"),
    _rule("deny.system-power", DENY, "init telinit", "switches the machine's runlevel (halt or reboot)", sub="0|6|S|s|1"),
    _rule("deny.disk-tool", DENY, "mkfs mkfs.* mke2fs mkswap fdisk sfdisk cfdisk gdisk sgdisk parted wipefs blkdiscard badblocks lvremove vgremove pvremove mdadm", "formats, repartitions or wipes a disk"),
    _rule("deny.disk-tool", DENY, "diskutil", "erases or repartitions a disk", sub="eraseDisk|eraseVolume|partitionDisk|zeroDisk|randomDisk|secureErase|reformat|apfs deleteContainer"),
    _rule("deny.disk-tool", DENY, "zpool zfs", "destroys a storage pool or dataset", sub="destroy|labelclear"),
    _rule("deny.disk-tool", DENY, "cryptsetup", "erases or reformats an encrypted disk", sub="luksFormat|erase|luksErase|reencrypt"),
    _rule("deny.kill-by-name", DENY, "killall killall5 pkill", "kills every process with a matching name, including ones the agent did not start"),
    _rule("deny.crontab-remove", DENY, "crontab", "deletes all of the user's scheduled jobs", flags="r"),
    _rule("deny.history-wipe", DENY, "history", "erases the shell history (hides what was run)", flags="c d"),
    _rule("deny.read-secret", DENY, "gpg gpg2", "exports secret keys", args="--export-secret-keys --export-secret-subkeys --export-ssh-key"),
    _rule("deny.read-secret", DENY, "security", "reads passwords or keys from the keychain", sub="find-generic-password|find-internet-password|dump-keychain|export|find-certificate"),
    _rule("deny.system-accounts", DENY, "useradd userdel usermod passwd chpasswd groupadd groupdel groupmod visudo adduser deluser chsh chfn vipw", "changes system user accounts or passwords"),
    # -- require approval: installs and publishing
    _rule("approval.package-install", ASK, "pip", "installs or removes Python packages", sub="install|uninstall|download|wheel"),
    _rule("approval.package-install", ASK, "uv", "installs, removes or syncs Python packages", sub="pip install|pip uninstall|pip sync|pip compile|add|remove|sync|lock|tool install|tool upgrade|python install|venv|init|self update"),
    _rule("approval.package-install", ASK, "poetry pdm", "installs or changes the project's dependencies", sub="add|remove|install|update|lock|sync|self"),
    _rule("approval.package-install", ASK, "pipenv", "installs or changes the project's dependencies", sub="install|uninstall|update|sync|lock|upgrade"),
    _rule("approval.package-install", ASK, "conda mamba micromamba", "installs or removes packages", sub="install|create|remove|uninstall|update|upgrade|env create|env update|env remove"),
    _rule("approval.package-install", ASK, "npm", "installs or removes JavaScript packages", sub="install|i|in|ins|inst|insta|instal|isnt|isnta|isntal|isntall|add|ci|uninstall|un|unlink|remove|rm|r|update|up|upgrade|udpate|link|ln|rebuild|rb|dedupe|ddp|prune|install-test|it|install-ci-test|cit"),
    _rule("approval.package-install", ASK, "yarn", "installs or removes JavaScript packages", sub="add|install|remove|upgrade|up|upgrade-interactive|link|unlink|global"),
    _rule("approval.package-install", ASK, "yarn", "installs the project's JavaScript packages", max_operands=0, none="--version -v --help -h"),
    _rule("approval.package-install", ASK, "pnpm bun", "installs or removes JavaScript packages", sub="add|install|i|remove|rm|uninstall|un|update|up|upgrade|link|ln|unlink|prune|rebuild"),
    _rule("approval.package-install", ASK, "apt apt-get aptitude", "installs or removes system packages", sub="install|remove|purge|autoremove|upgrade|dist-upgrade|full-upgrade|update|reinstall|build-dep|source|autoclean|clean"),
    _rule("approval.package-install", ASK, "dnf yum zypper microdnf", "installs or removes system packages", sub="install|remove|erase|update|upgrade|reinstall|downgrade|in|rm|up|dup|autoremove|distro-sync"),
    _rule("approval.package-install", ASK, "apk", "installs or removes system packages", sub="add|del|upgrade|update|fix"),
    _rule("approval.package-install", ASK, "pacman yay paru", "installs or removes system packages", flags="S R U sync remove upgrade"),
    _rule("approval.package-install", ASK, "brew port", "installs or removes packages", sub="install|uninstall|remove|rm|reinstall|upgrade|update|tap|untap|link|unlink|cleanup|bundle|selfupdate"),
    _rule("approval.package-install", ASK, "snap flatpak", "installs or removes packages", sub="install|remove|refresh|update|uninstall|revert"),
    _rule("approval.package-install", ASK, "cargo", "installs packages or changes the crate's dependencies", sub="install|uninstall|add|remove|rm|update|upgrade|fetch|vendor"),
    _rule("approval.package-install", ASK, "go", "downloads modules or changes go.mod", sub="install|get|mod download|mod tidy|mod vendor|mod init|mod edit|work sync"),
    _rule("approval.package-install", ASK, "gem", "installs or removes Ruby gems", sub="install|uninstall|update|i"),
    _rule("approval.package-install", ASK, "bundle bundler", "installs or changes Ruby gems", sub="install|update|add|remove|lock|config"),
    _rule("approval.package-install", ASK, "composer", "installs or changes PHP packages", sub="install|require|update|remove|upgrade|create-project"),
    _rule("approval.package-install", ASK, "dotnet", "installs packages or tools", sub="add|tool install|tool update|restore|workload install|new"),
    _rule("approval.package-install", ASK, "nix-env", "installs or removes packages", flags="i e u install uninstall upgrade"),
    _rule("approval.package-install", ASK, "nix", "installs packages", sub="profile install|profile remove|profile upgrade"),
    _rule("approval.package-install", ASK, "choco winget scoop luarocks opam cabal stack", "installs packages", sub="install|uninstall|upgrade|update"),
    _rule("approval.package-install", ASK, "rustup", "installs or updates Rust toolchains", sub="install|update|toolchain install|target add|component add|self|default|uninstall"),
    _rule("approval.package-install", ASK, "venv virtualenv", "creates a virtual environment and installs pip into it"),
    _rule("approval.package-install", ASK, "pipx", "installs or runs a Python application from the network", sub="install|run|inject|upgrade|upgrade-all|reinstall|uninstall"),
    _rule("approval.package-run", ASK, "npx pnpx bunx uvx", "may download a package and runs it"),
    _rule("approval.package-run", ASK, "bun", "may download a package and runs it", sub="x"),
    _rule("approval.package-install", ASK, "deno", "installs, removes or upgrades packages or deno itself", sub="add|install|remove|uninstall|upgrade|cache|outdated"),
    _rule("approval.publish", ASK, "deno", "publishes a package to a registry", sub="publish"),
    _rule("approval.package-run", ASK, "npm pnpm yarn", "may download a package and runs it", sub="exec|x|dlx|create|init"),
    _rule("approval.publish", ASK, "npm yarn pnpm bun", "publishes or changes a package in a registry", sub="publish|unpublish|deprecate|dist-tag|owner|access|token|adduser|login"),
    _rule("approval.publish", ASK, "cargo", "publishes or yanks a crate", sub="publish|yank|owner|login"),
    _rule("approval.publish", ASK, "twine", "uploads a package to a registry", sub="upload|register"),
    _rule("approval.publish", ASK, "poetry uv hatch pdm flit", "publishes a package to a registry", sub="publish"),
    _rule("approval.publish", ASK, "gem", "publishes or yanks a gem", sub="push|yank|owner|signin"),
    # -- require approval: git that changes history, discards work or talks to remotes
    _rule("approval.git-force-push", ASK, "git", "force-pushes, rewriting the remote's history", sub="push", flags="f force force-with-lease force-if-includes mirror delete d prune"),
    _rule("approval.git-push", ASK, "git", "pushes commits to a remote repository", sub="push"),
    _rule("approval.git-discard", ASK, "git", "throws away uncommitted work", sub="reset", args="--hard --merge --keep"),
    _rule("approval.git-discard", ASK, "git", "deletes untracked files", sub="clean"),
    _rule("approval.git-discard", ASK, "git", "overwrites files in the working tree, discarding changes", sub="checkout", args="-- . -f --force -p --patch --ours --theirs"),
    _rule("approval.git-discard", ASK, "git", "restores files, discarding uncommitted changes", sub="restore"),
    _rule("approval.git-discard", ASK, "git", "drops or applies stashed changes", sub="stash drop|stash clear|stash pop|stash apply"),
    _rule("approval.git-discard", ASK, "git", "switches branches, discarding local changes", sub="switch", flags="f force discard-changes C"),
    _rule("approval.git-discard", ASK, "git", "deletes a branch or worktree, even unmerged", sub="branch", flags="D"),
    _rule("approval.git-discard", ASK, "git", "removes a worktree", sub="worktree remove|worktree prune"),
    _rule("approval.git-history", ASK, "git", "changes the repository's history", sub="commit|rebase|merge|cherry-pick|revert|am|reset|filter-branch|filter-repo|replace|update-ref|gc|prune|notes|reflog expire|reflog delete|bisect|stash push|stash save|tag -d"),
    _rule("approval.git-history", ASK, "git", "stashes uncommitted changes away", sub="stash", max_operands=0),
    _rule("approval.git-history", ASK, "git", "deletes, renames or re-points branches", sub="branch", flags="d m M c C f delete move copy force u set-upstream-to unset-upstream edit-description"),
    _rule("approval.git-history", ASK, "git", "creates, deletes or moves tags", sub="tag", flags="d delete a s f annotate sign force m F u"),
    _rule("approval.git-network", ASK, "git", "contacts a remote repository over the network", sub="clone|fetch|pull|ls-remote|remote update|remote show|remote prune|submodule update|submodule add|submodule sync|submodule init|submodule foreach|send-email|request-pull|svn|p4|lfs pull|lfs fetch|lfs push|lfs install"),
    _rule("approval.git-write", ASK, "git", "changes the repository or its configuration", fallback=True),
    _rule("approval.delete-in-repo", ASK, "git", "deletes files from the repository and the index", sub="rm"),
    _rule("approval.delete-in-repo", ASK, "rm rmdir unlink shred srm wipe trash trash-put rimraf", "deletes files in the repository"),
    _rule("approval.delete-in-repo", ASK, "cargo", "deletes the build directory", sub="clean"),
    _rule("approval.delete-in-repo", ASK, "make gmake", "runs a target that usually deletes files", sub="clean|distclean|mrproper|realclean"),
    _rule("approval.write-in-repo", ASK, "cp mv install ln link rsync scp", "copies, moves or links files, which may overwrite them"),
    _rule("approval.write-in-repo", ASK, "patch", "changes files by applying a patch", none="--dry-run"),
    _rule("approval.permissions", ASK, "chmod chown chgrp chattr setfacl chflags", "changes file permissions or ownership"),
    _rule("approval.archive", ASK, "tar zip unzip gzip gunzip bzip2 bunzip2 xz unxz zstd unzstd 7z 7za rar unrar", "creates or extracts archives, writing files", fallback=True),
    # -- require approval: tools whose effect the policy cannot see or bound
    _rule("approval.network", ASK, _NETWORK, "uses the network"),
    _rule("approval.container", ASK, _CONTAINERS, "controls containers, clusters or infrastructure"),
    _rule("approval.system-admin", ASK, _ADMIN, "changes system configuration or services"),
    _rule("approval.sudo", ASK, "sudo doas su pkexec runuser", "runs a command as another user (usually root)"),
    _rule("approval.interactive", ASK, _INTERACTIVE, "starts an interactive program; the agent has no terminal to drive it"),
    _rule("approval.kill", ASK, "kill", "sends a signal to a process"),
    _rule("approval.make-install", ASK, "make gmake", "runs an install, deploy or release target", sub="install|uninstall|deploy|publish|release|upload|push|dist|docker*"),
    _rule("approval.make-target", ASK, "make gmake", "runs a make target the policy cannot see into", fallback=True),
    _rule("approval.rewrites-files", ASK, "black", "reformats files in place", none="--check --diff"),
    _rule("approval.rewrites-files", ASK, "ruff", "reformats files in place", sub="format", none="--check --diff"),
    _rule("approval.rewrites-files", ASK, "ruff", "rewrites files with automatic fixes", args="--fix --unsafe-fixes --add-noqa", none="--no-fix"),
    _rule("approval.rewrites-files", ASK, "isort", "reorders imports in place", none="--check --check-only -c --diff"),
    _rule("approval.rewrites-files", ASK, "prettier biome", "rewrites files in place", args="--write -w --fix --apply"),
    _rule("approval.rewrites-files", ASK, "eslint stylelint rubocop", "rewrites files with automatic fixes", args="--fix -a -A --autocorrect"),
    _rule("approval.rewrites-files", ASK, "cargo", "reformats or fixes files in place", sub="fmt", none="--check"),
    _rule("approval.rewrites-files", ASK, "cargo", "rewrites files with automatic fixes", sub="clippy|fix", args="--fix"),
    _rule("approval.rewrites-files", ASK, "cargo", "rewrites files with automatic fixes", sub="fix"),
    _rule("approval.rewrites-files", ASK, "gofmt goimports", "reformats files in place", flags="w"),
    _rule("approval.rewrites-files", ASK, "go", "rewrites or generates source files", sub="fmt|fix|generate"),
    _rule("approval.rewrites-files", ASK, "rustfmt", "reformats files in place", none="--check"),
    _rule("approval.rewrites-files", ASK, "autopep8 yapf clang-format", "reformats files in place", flags="i in-place"),
    _rule("approval.rewrites-files", ASK, "tsc", "writes compiled JavaScript files", none="--noEmit"),
    _rule("approval.rewrites-files", ASK, "yq", "edits a file in place", flags="i inplace"),
    _rule("approval.rewrites-files", ASK, "pre-commit", "runs hooks that may rewrite files (and installs them first)"),
    _rule("approval.network", ASK, "http.server SimpleHTTPServer smtpd", "starts a network server"),
    _rule("approval.network", ASK, "npm yarn pnpm", "queries the package registry over the network", sub="view|v|info|show|search|outdated|audit|ping|whoami|repo|docs|bugs"),
    # -- allow: read-only inspection
    _rule("allow.read-only", ALLOW, _READ_ONLY, "only reads or prints"),
    _rule("allow.read-only", ALLOW, "git", "only reads the repository", sub="status|log|diff|show|blame|annotate|rev-parse|ls-files|ls-tree|cat-file|describe|shortlog|grep|whatchanged|name-rev|merge-base|count-objects|rev-list|for-each-ref|show-ref|show-branch|version|help|check-ignore|check-attr|check-ref-format|diff-tree|diff-files|diff-index|var|range-diff|cherry|fsck|verify-commit|verify-tag|stash list|stash show|worktree list|submodule status|lfs ls-files|lfs status|bisect log|remote get-url"),
    _rule("allow.read-only", ALLOW, "git", "only lists branches, tags, remotes or the reflog", sub="branch|tag|remote|reflog|stash list|reflog show", max_operands=0),
    _rule("allow.read-only", ALLOW, "git", "only lists branches or tags", sub="branch|tag", flags="l list a r v vv contains merged no-merged show-current points-at"),
    _rule("allow.read-only", ALLOW, "git", "only creates a local branch", sub="branch", max_operands=2),
    _rule("allow.read-only", ALLOW, "git", "only reads configuration", sub="config", args="--get --get-all --get-regexp --list -l --show-origin --show-scope --name-only"),
    _rule("allow.read-only", ALLOW, "git", "only prints its version or help", args="--version --help -h --exec-path --html-path", max_operands=0),
    _rule("allow.read-only", ALLOW, "pip uv", "only lists installed packages", sub="list|show|freeze|check|pip list|pip show|pip freeze|pip check|pip tree|tree|version"),
    _rule("allow.read-only", ALLOW, "npm pnpm yarn", "only lists installed packages", sub="ls|list|ll|la|why|root|bin|prefix|config list|config get|help"),
    _rule("allow.read-only", ALLOW, "poetry conda mamba", "only lists installed packages or environments", sub="show|list|env list|info|check|env info"),
    _rule("allow.read-only", ALLOW, "cargo", "only reads the crate's metadata", sub="tree|metadata|version|search|locate-project|read-manifest|pkgid|verify-project"),
    _rule("allow.read-only", ALLOW, "go", "only reads module or build information", sub="version|env|list|doc|mod graph|mod why|mod verify|help"),
    _rule("allow.read-only", ALLOW, "brew apt apt-cache dpkg rpm pacman", "only queries installed packages", sub="list|search|info|show|policy|depends|rdepends|deps|leaves|config|doctor|madison|showpkg|pkgnames"),
    _rule("allow.read-only", ALLOW, "crontab", "only lists the scheduled jobs", flags="l"),
    _rule("allow.read-only", ALLOW, "dpkg rpm pacman", "only queries installed packages", flags="l L s S q Q"),
    _rule("allow.read-only", ALLOW, "tar", "only lists an archive", flags="t list"),
    _rule("allow.read-only", ALLOW, "unzip", "only lists or tests an archive", flags="l t Z v"),
    _rule("allow.read-only", ALLOW, "gzip gunzip bzip2 bunzip2 xz unxz zstd unzstd", "only writes to standard output", flags="c l t stdout to-stdout list test"),
    _rule("allow.read-only", ALLOW, "json.tool platform sysconfig tokenize dis pydoc this site", "only prints information"),
    _rule("allow.read-only", ALLOW, "docker podman", "only prints its version", args="--version version", max_operands=1),
    _rule("allow.read-only", ALLOW, "make gmake", "only prints what make would run", flags="n just-print dry-run recon q question"),
    _rule("allow.read-only", ALLOW, "patch", "only checks whether a patch applies", args="--dry-run"),
    _rule("allow.version", ALLOW, _VERSIONED, "only prints a version or help text", args="--version -V -v -version version --help -h help -VV", max_operands=0),
    _rule("allow.create", ALLOW, "touch mkdir mktemp", "only creates files or directories"),
    _rule("allow.builtin", ALLOW, _BUILTINS, "only changes the shell's own state"),
    _rule("allow.builtin", ALLOW, "exec command", "only changes the shell's redirections", max_operands=0),
    _rule("allow.read-only", ALLOW, "nice time", "only prints information", max_operands=0, none="-p --pid"),
    _rule("allow.read-only", ALLOW, "hostname", "only prints the host name", max_operands=0),
    _rule("approval.system-admin", ASK, "date", "sets the system clock", flags="s set"),
    _rule("approval.package-install", ASK, "mypy", "installs missing type packages", args="--install-types"),
    _rule("approval.env-override", ASK, "hash", "points a command name at another program", flags="p"),
    _rule("approval.env-override", ASK, "enable", "loads a shell builtin from a shared library", flags="f"),
    _rule("allow.builtin", ALLOW, "command", "only looks up a command", flags="v V"),
    # -- allow: the project's tests, builds and checks
    _rule("allow.test-runner", ALLOW, _PY_TOOLS, "runs the project's tests"),
    _rule("allow.test-runner", ALLOW, _CHECKERS, "runs the project's tests or checks"),
    _rule("allow.test-runner", ALLOW, "ruff", "checks the code", sub="check|format|rule|version|linter|config|analyze"),
    _rule("allow.test-runner", ALLOW, "npm yarn pnpm bun", "runs the project's tests or checks", sub="test|t|tst|run test|run test:*|run-script test|run lint|run lint:*|run typecheck|run type-check|run check|run check:*|run build|run tsc|lint|typecheck|build|check"),
    _rule("allow.test-runner", ALLOW, "cargo", "builds, checks or tests the crate", sub="test|t|build|b|check|c|clippy|doc|d|bench|fmt|nextest"),
    _rule("allow.test-runner", ALLOW, "go", "builds, vets or tests the module", sub="test|vet|build"),
    _rule("allow.test-runner", ALLOW, "make gmake", "runs the project's tests or checks", sub="test|tests|check|lint|typecheck|type-check|build|all|test-*|check-*|lint-*|test_*|unit|integration|coverage"),
    _rule("allow.test-runner", ALLOW, "mvn mvnw", "builds or tests the project", sub="test|verify|compile|package|validate|test-compile"),
    _rule("allow.test-runner", ALLOW, "gradle", "builds or tests the project", sub="test|check|build|assemble|compileJava|compileKotlin"),
    _rule("allow.test-runner", ALLOW, "dotnet swift", "builds or tests the project", sub="test|build"),
    _rule("allow.test-runner", ALLOW, "deno", "tests, checks or lints the project", sub="test|check|lint"),
    _rule("allow.test-runner", ALLOW, "deno", "checks the formatting", sub="fmt", args="--check"),
    _rule("allow.test-runner", ALLOW, "bun", "runs the project's tests", sub="test"),
    _rule("allow.test-runner", ALLOW, "rake", "runs the project's tests", sub="test|spec"),
    _rule("allow.test-runner", ALLOW, "node", "runs the project's tests with node's test runner", args="--test"),
    _rule("allow.test-runner", ALLOW, "doctest py_compile compileall timeit", "runs or compiles the project's code"),
    _rule("allow.test-runner", ALLOW, "hatch", "runs the project's tests", sub="test"),
    _rule("allow.test-runner", ALLOW, "pre-commit", "runs checks that do not change files", sub="validate-config|validate-manifest"),
)
# fmt: on

# --- per-command data the analysis reads ----------------------------------------------------


@dataclass(frozen=True)
class _Wrapper:
    """A command that runs another command: its options, then N leading operands, then it."""

    value_options: frozenset[str] = frozenset()
    operands: int = 0
    assignments: bool = False


def _w(options: str = "", operands: int = 0, assignments: bool = False) -> _Wrapper:
    return _Wrapper(frozenset(options.split()), operands, assignments)


_WRAPPERS: dict[str, _Wrapper] = {
    "sudo": _w(
        "-u -g -C -D -h -p -r -t -U -T --user --group --chdir --host --prompt --role --type --other-user --close-from --command-timeout"
    ),
    "doas": _w("-u -C"),
    "env": _w("-u --unset -C --chdir -P --split-string -S", assignments=True),
    "nice": _w("-n --adjustment"),
    "nohup": _w(),
    "timeout": _w("-s --signal -k --kill-after", operands=1),
    "gtimeout": _w("-s --signal -k --kill-after", operands=1),
    "time": _w("-f --format -o --output"),
    "command": _w(),
    "exec": _w("-a"),
    "builtin": _w(),
    "stdbuf": _w("-i -o -e --input --output --error"),
    "ionice": _w("-c -n -p -P -u --class --classdata"),
    "chrt": _w(operands=1),
    "taskset": _w(operands=1),
    "setsid": _w(),
    "unbuffer": _w(),
    "caffeinate": _w("-t -w"),
    "flock": _w("-w -E --timeout --conflict-exit-code", operands=1),
    "strace": _w("-o -e -p -s -E -u -P -a -b -I -O -S -X"),
    "ltrace": _w("-o -e -p -s -E -u -a -n"),
    "busybox": _w(),
    "catchsegv": _w(),
    "valgrind": _w(),
    "faketime": _w(operands=1),
    "proxychains": _w("-f"),
    "proxychains4": _w("-f"),
    "torsocks": _w(),
    "firejail": _w(),
    "dbus-launch": _w(),
    "xvfb-run": _w("-a -n -s -e -f -p -w --server-args --server-num --error-file --auth-file"),
}

# `uv run X`, `poetry run X`...: the named subcommand runs the rest as a command.
_RUNNERS: dict[str, tuple[str, frozenset[str]]] = {
    "uv": (
        "run",
        _words(
            "--with --with-requirements --with-editable --python -p --package --extra --group --env-file --directory --project --index --index-url --extra-index-url --isolated --script --module -m"
        ),
    ),
    "poetry": ("run", _words("-C --directory -P --project")),
    "pipenv": ("run", frozenset()),
    "pdm": ("run", _words("-p --project")),
    "hatch": ("run", _words("-e --env")),
    "rye": ("run", frozenset()),
    "pixi": ("run", _words("-e --environment --manifest-path")),
    "bundle": ("exec", _words("--gemfile")),
    "bundler": ("exec", _words("--gemfile")),
    "conda": ("run", _words("-n --name -p --prefix --cwd")),
    "mamba": ("run", _words("-n --name -p --prefix --cwd")),
    "micromamba": ("run", _words("-n --name -p --prefix --cwd")),
    "npx": ("", _words("-p --package -c --call")),
    "pnpx": ("", _words("-p --package")),
    "bunx": ("", _words("-p --package")),
    "uvx": ("", _words("--with --from --python -p --index --index-url")),
    "npm": ("exec", _words("-p --package -c --call -w --workspace")),
    "pipx": ("run", _words("--spec --python --pip-args")),
}

# Options taking a value *before* the subcommand (`git -C dir status`, `make -C dir test`).
_GLOBAL_OPTIONS: dict[str, frozenset[str]] = {
    "git": _words(
        "-C -c --git-dir --work-tree --namespace --super-prefix --config-env --exec-path"
    ),
    "make": _words(
        "-C -f --file --makefile --directory -I --include-dir -o -W --old-file --what-if -l"
    ),
    "npm": _words("--prefix -w --workspace -C"),
    "pnpm": _words("-C --dir --filter -F -w --workspace"),
    "yarn": _words("--cwd"),
    "cargo": _words("--manifest-path --config -Z -C --color"),
    "docker": _words("-H --host -c --context --config -l --log-level"),
    "uv": _words("--directory --project --python -p --cache-dir --config-file"),
    "poetry": _words("-C --directory -P --project"),
    "go": _words("-C"),
    "conda": _words("-n --name -p --prefix"),
    "kubectl": _words("-n --namespace --context --kubeconfig"),
}
_GLOBAL_OPTIONS["gmake"] = _GLOBAL_OPTIONS["make"]

# Options that take a value, for commands whose operands the analysis reads as paths.
_VALUE_OPTIONS: dict[str, frozenset[str]] = {
    name: frozenset(options.split())
    for name, options in {
        "cut": "-d -f -c -b --delimiter --fields --characters --bytes",
        "head": "-n -c --lines --bytes",
        "tail": "-n -c --lines --bytes -s --sleep-interval --pid",
        "grep": "-e -f -A -B -C -m -d -D --regexp --file --after-context --before-context --context --max-count --include --exclude --exclude-dir --label --color --colour",
        "egrep": "-e -f -A -B -C -m",
        "fgrep": "-e -f -A -B -C -m",
        "rg": "-e -f -g -t -T -A -B -C -m -j -M -E --regexp --file --glob --iglob --type --type-not --max-count --threads --max-columns --encoding --sort --sortr --max-depth --maxdepth --color --colors --type-add --pre --pre-glob --replace -r --field-match-separator --path-separator",
        "ag": "-A -B -C -G -m --ignore --file-search-regex --depth",
        "sort": "-k -t -S -T -o --key --field-separator --buffer-size --temporary-directory --output --parallel",
        "uniq": "-f -s -w --skip-fields --skip-chars --check-chars",
        "awk": "-F -v -f --field-separator --assign --file",
        "gawk": "-F -v -f --field-separator --assign --file",
        "mawk": "-F -v -f",
        "nawk": "-F -v -f",
        "sed": "-e -f -l --expression --file --line-length",
        "jq": "--arg --argjson --slurpfile --rawfile --indent -L --from-file -f",
        "yq": "--arg -o -p --output-format --input-format -I --indent",
        "ls": "-I -w -T --ignore --hide --width --tabsize --color --format --sort --time --time-style --block-size --quoting-style --indicator-style",
        "du": "-d -B -t --max-depth --block-size --threshold --exclude --time-style",
        "tree": "-L -I -P -H -T -o --filelimit --charset --sort",
        "diff": "-U -C -L -x -X -F -I --label --exclude --exclude-from --ignore-matching-lines --unified --context --width -W --to-file --from-file",
        "wc": "--files0-from",
        "xxd": "-s -l -c -g -o -n --seek --len --cols --groupsize",
        "od": "-j -N -t -w -A --skip-bytes --read-bytes --format --width --address-radix",
        "hexdump": "-s -n -e -f",
        "fd": "-e -E -t -d -x -X -j -S -c --extension --exclude --type --max-depth --min-depth --exec --exec-batch --threads --size --changed-within --changed-before --owner --color --base-directory",
        "stat": "-c -f --format --printf",
        "date": "-d -r -f --date --reference --file",
        "column": "-s -o -c -t -N -R -W -H -O --separator --output-separator",
        "tr": "",
        "paste": "-d --delimiters",
        "join": "-t -j -1 -2 -o -e",
        "split": "-l -b -n -a -C -t",
        "fold": "-w --width",
        "nl": "-b -d -f -h -i -l -n -s -v -w",
        "base64": "-w --wrap",
        "git": "-C -c --git-dir --work-tree -n -m -F -S -G -L -U --author --committer --grep --since --until --after --before --format --pretty --date --output -O",
    }.items()
}
# grep PATTERN [FILE...]: the first operand is a program or pattern, not a path.
_PATTERN_FIRST = {
    "grep": "-e -f --regexp --file",
    "egrep": "-e -f --regexp --file",
    "fgrep": "-e -f --regexp --file",
    "rg": "-e -f --regexp --file --files --type-list",
    "ag": "",
    "ack": "",
    "sed": "-e -f --expression --file",
    "awk": "-f --file",
    "gawk": "-f --file",
    "mawk": "-f",
    "nawk": "-f",
    "jq": "-f --from-file -n --null-input",
    "yq": "",
}
# Their arguments are text, not files to read; they are exempt from the path checks.
_NO_PATH_ARGS = _words(
    "echo printf test [ true false : which whereis type basename dirname realpath readlink "
    "command hash sleep seq date expr let export declare typeset local readonly unset set "
    "shopt alias unalias read mapfile readarray wait exit return shift getopts cd pushd popd "
    "dirs umask ulimit jobs kill pgrep ps uname whoami id groups hostname pwd env printenv "
    "history help trap break continue complete compgen caller times fg bg disown numfmt "
    "getconf logname users tty arch nproc locale uptime free cal"
)
# Their operands are mostly names (revisions, targets, packages); only path-like ones are read.
_NAME_OPERANDS = _words("git npm yarn pnpm cargo go make ruff uv pip poetry")
# Commands whose handler checks their own paths; the generic read check skips them.
_OWN_PATHS = _words(
    "rm rmdir unlink shred srm wipe trash trash-put rimraf cp mv install ln link rsync scp tee touch "
    "mkdir mktemp truncate dd chmod chown chgrp chattr setfacl chflags find xargs tar sed "
    "curl wget git source . ssh sftp"
)
_SHELLS = _words("sh bash zsh dash ksh mksh ash yash tcsh csh fish rbash")
# name -> (language, short flags that take inline code, long options that take inline code)
_INTERPRETERS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "python": ("python", "c", ()),
    "perl": ("perl", "eE", ()),
    "ruby": ("ruby", "e", ()),
    "node": ("JavaScript", "ep", ("--eval", "--print")),
    "deno": ("JavaScript", "", ()),
    "bun": ("JavaScript", "e", ("--eval", "--print")),
    "php": ("PHP", "rR", ()),
    "lua": ("Lua", "e", ()),
    "luajit": ("Lua", "e", ()),
    "Rscript": ("R", "e", ()),
    "R": ("R", "e", ()),
    "osascript": ("AppleScript", "e", ()),
    "tclsh": ("Tcl", "", ()),
    "julia": ("Julia", "e", ("--eval",)),
    "awk-script": ("awk", "", ()),
}
_DECODERS = _words(
    "base64 base32 basenc xxd uudecode openssl gpg gunzip zcat gzcat bzcat xzcat zstdcat unxz "
    "bunzip2 gzip bzip2 xz zstd unzstd rev tr"
)
_RISKY_ENV = _words(
    "PATH LD_PRELOAD LD_LIBRARY_PATH LD_AUDIT DYLD_INSERT_LIBRARIES DYLD_LIBRARY_PATH BASH_ENV "
    "ENV PROMPT_COMMAND SHELLOPTS BASHOPTS PS4 GIT_SSH GIT_SSH_COMMAND GIT_EXTERNAL_DIFF "
    "GIT_PAGER PAGER GIT_EDITOR EDITOR VISUAL GIT_ASKPASS SSH_ASKPASS GIT_CONFIG_GLOBAL "
    "GIT_CONFIG_SYSTEM GIT_CONFIG_PARAMETERS GIT_CONFIG_COUNT GIT_DIR GIT_WORK_TREE "
    "PYTHONSTARTUP PYTHONHOME PERL5OPT PERL5LIB RUBYOPT NODE_OPTIONS MANPAGER BROWSER "
    "PIP_INDEX_URL PIP_EXTRA_INDEX_URL NPM_CONFIG_REGISTRY HISTFILE"
)
_BIN_DIRS = _words(
    "/bin /usr/bin /sbin /usr/sbin /usr/local/bin /usr/local/sbin /opt/homebrew/bin /opt/local/bin "
    "/snap/bin /usr/libexec /run/current-system/sw/bin"
)
# Tool directories inside a repository whose programs are the project's own tools.
_REPO_BIN_DIRS = re.compile(
    r"(^|/)(\.?venv|env|\.tox/[^/]+|node_modules/\.bin|\.nox/[^/]+)(/bin|/Scripts)?$"
)


# Commands whose whole effect is another command or code, which is checked on its own.
_DELEGATES = frozenset(
    _SHELLS | set(_INTERPRETERS) | set(_RUNNERS) | {"eval", "xargs", "find", "watch", "su"}
)


def _name_matches(pattern: str, name: str) -> bool:
    if any(c in pattern for c in "*?["):
        return fnmatch.fnmatchcase(name, pattern)
    return pattern == name


def _operands(name: str, texts: list[str]) -> list[str]:
    """The non-option arguments, after skipping the command's leading global options."""
    global_options = _GLOBAL_OPTIONS.get(name, frozenset())
    i = 0
    while i < len(texts) and (
        texts[i].startswith("-") or (name == "cargo" and texts[i].startswith("+"))
    ):
        if texts[i] == "--":
            break
        i += 2 if texts[i] in global_options else 1
    operands: list[str] = []
    ended = False
    for text in texts[i:]:
        if text == "--" and not ended:
            ended = True
        elif ended or not text.startswith("-") or text == "-":
            operands.append(text)
    return operands


def _has_arg(texts: list[str], wanted: str) -> bool:
    return any(
        t == wanted or (wanted.startswith("-") and t.startswith(wanted + "=")) for t in texts
    )


def _has_flag(texts: list[str], flag: str) -> bool:
    if len(flag) == 1:
        return any(
            t.startswith("-")
            and not t.startswith("--")
            and len(t) > 1
            and t[1:].isalnum()
            and flag in t[1:]
            for t in texts
        )
    return any(t == "--" + flag or t.startswith("--" + flag + "=") for t in texts)


def _canonical(name: str) -> str:
    """One name per program: python3.12 -> python, pip3 -> pip, nodejs -> node."""
    if re.fullmatch(r"python[0-9.]*|pypy[0-9.]*|py", name):
        return "python"
    if re.fullmatch(r"pip[0-9.]*", name):
        return "pip"
    if name == "nodejs":
        return "node"
    if name == "gmake":
        return "make"
    if name in ("mvnw", "gradlew"):
        return name
    return name


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- paths ----------------------------------------------------------------------------------

INSIDE = "inside"
REPO_ROOT = "repo-root"
GIT_DIR = "git-dir"
GIT_HOOKS = "git-hooks"
NULL = "null-device"
NETWORK = "network-device"
DEVICE = "device"
SECRET = "secret"
ROOT = "root"
HOME = "home"
TEMP = "temp"
SYSTEM = "system"
OUTSIDE = "outside"
UNKNOWN_PLACE = "unknown"
_IN_REPO = frozenset({INSIDE, REPO_ROOT, GIT_DIR, GIT_HOOKS})

_NULL_DEVICES = _words(
    "/dev/null /dev/zero /dev/stdout /dev/stderr /dev/stdin /dev/tty /dev/random /dev/urandom /dev/full"
)
_TEMP_DIRS = (
    "/tmp",
    "/var/tmp",
    "/private/tmp",
    "/private/var/tmp",
    "/dev/shm",
    "/var/folders",
    "/private/var/folders",
)
_SYSTEM_DIRS = _words(
    "/etc /usr /bin /sbin /lib /lib32 /lib64 /libx32 /boot /proc /sys /var /opt /root /srv /snap "
    "/run /System /Library /Applications /private /nix /mnt /media /home /Users /Volumes /cores /efi /dev"
)
_SECRET_DIRS = _words(
    ".ssh .gnupg .aws .azure .kube .password-store .docker .gcloud .vault-token .terraform.d"
)
_SECRET_FILES = _words(
    ".netrc .git-credentials .pgpass .pypirc .npmrc .yarnrc .gem_credentials .boto .s3cfg "
    ".dockercfg .bash_history .zsh_history .sh_history .python_history .mysql_history "
    ".psql_history .node_repl_history .lesshst .viminfo .my.cnf .envrc credentials.toml"
)
_SECRET_SUBPATHS = (
    "/.config/gcloud",
    "/.config/gh/",
    "/.config/hub",
    "/.config/git/credentials",
    "/.local/share/keyrings",
    "/Library/Keychains",
    "/.mozilla/",
    "/.config/google-chrome",
    "/.config/chromium",
    "/.cargo/credentials",
    "/.gem/credentials",
    "/.m2/settings.xml",
)
_SECRET_SYSTEM = (
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/shadow-",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/master.passwd",
    "/etc/ssl/private",
    "/etc/security/opasswd",
    "/var/run/secrets",
    "/run/secrets",
    "/proc/kcore",
    "/var/db/sudo",
)
_KEY_NAME = re.compile(
    r"id_(rsa|dsa|ecdsa|ed25519)(_sk)?|ssh_host_\w+_key|.+\.(p12|pfx|keystore|jks|kdbx)"
)


@dataclass(frozen=True)
class _Place:
    """Where a path argument points: one of the kinds above, and how to show it."""

    kind: str
    shown: str
    absolute: str | None = None

    @property
    def in_repo(self) -> bool:
        return self.kind in _IN_REPO


class _Paths:
    """Classifies path arguments against one repository root and one home directory."""

    def __init__(self, root: str, home: str) -> None:
        self.root = root
        self.home = home
        self.secret_examples = [
            f"{home}/.ssh/id_rsa",
            f"{home}/.ssh/id_ed25519",
            f"{home}/.ssh",
            f"{home}/.aws/credentials",
            f"{home}/.gnupg",
            f"{home}/.netrc",
            f"{home}/.git-credentials",
            f"{home}/.kube/config",
            f"{home}/.docker/config.json",
            "/etc/shadow",
            "/etc/gshadow",
            "/etc/sudoers",
        ]

    def show(self, path: str) -> str:
        if path == self.root:
            return "."
        if path.startswith(self.root + "/"):
            return path[len(self.root) + 1 :]
        if path == self.home:
            return "~"
        if path.startswith(self.home + "/") and self.home != "/":
            return "~" + path[len(self.home) :]
        return path

    def absolute(self, text: str, cwd: str | None) -> str | None:
        if not text.startswith("/"):
            if cwd is None:
                return None
            text = cwd + "/" + text
        path = posixpath.normpath("/" + text.lstrip("/"))
        if path.startswith(("/dev/", "/proc/")):
            return path  # device names are what they say (/dev/fd is a link into /proc)
        head, tail = posixpath.split(path)
        try:
            # Resolve symlinks in the directories (a link to /etc is outside); keep the name.
            real_head = os.path.realpath(head)
        except (OSError, ValueError):
            return path
        return posixpath.join(real_head, tail) if tail else real_head

    def classify(self, arg: Field, cwd: str | None) -> _Place:
        text = arg.text
        if not arg.known:
            prefix = text[: text.index(UNKNOWN)]
            if "/" not in prefix:
                return _Place(UNKNOWN_PLACE, arg.shown())
            directory = self.classify_text(prefix[: prefix.rindex("/") + 1] or "/", cwd)
            if directory.in_repo or directory.kind == UNKNOWN_PLACE:
                return _Place(UNKNOWN_PLACE, arg.shown())
            return _Place(directory.kind, arg.shown(), directory.absolute)
        if arg.glob:
            head = text[: arg.glob_at]
            directory_text = head[: head.rindex("/") + 1] if "/" in head else "."
            pattern_root = self.absolute(directory_text, cwd)
            if pattern_root is not None:
                pattern = posixpath.join(
                    pattern_root, text[len(directory_text) :] if "/" in head else text
                )
                if self.secret(pattern) or any(
                    fnmatch.fnmatchcase(e, pattern) for e in self.secret_examples
                ):
                    return _Place(SECRET, self.show(pattern), pattern)
            directory = self.classify_text(directory_text, cwd)
            if directory.in_repo:
                kind = GIT_DIR if directory.kind in (GIT_DIR, GIT_HOOKS) else INSIDE
                return _Place(kind, text, directory.absolute)
            return _Place(
                directory.kind,
                self.show(directory.absolute or "") + "/" + text.rsplit("/", 1)[-1],
                directory.absolute,
            )
        return self.classify_text(text, cwd)

    def classify_text(self, text: str, cwd: str | None) -> _Place:
        path = self.absolute(text, cwd)
        if path is None:
            return _Place(UNKNOWN_PLACE, text)
        return _Place(self.kind(path), self.show(path), path)

    def kind(self, path: str) -> str:
        root = self.root
        if path == root:
            return REPO_ROOT
        if path.startswith(root + "/"):
            rel = path[len(root) + 1 :]
            if rel == ".git" or rel.startswith(".git/"):
                return GIT_HOOKS if rel.startswith(".git/hooks") else GIT_DIR
            return INSIDE
        if path in _NULL_DEVICES or path.startswith(("/dev/fd/", "/proc/self/fd/")):
            return NULL
        if path.startswith(("/dev/tcp/", "/dev/udp/")):
            return NETWORK
        if self.secret(path):
            return SECRET
        if path == "/":
            return ROOT
        if path == self.home:
            return HOME
        if self.home != "/" and path.startswith(self.home + "/"):
            return OUTSIDE  # before the temp and system checks: a home may live under /tmp
        if path.startswith("/dev/"):
            return DEVICE
        if any(path == t or path.startswith(t + "/") for t in _TEMP_DIRS):
            return TEMP
        if any(path == s or path.startswith(s + "/") for s in _SYSTEM_DIRS):
            return SYSTEM
        return OUTSIDE

    def secret(self, path: str) -> bool:
        parts = path.split("/")
        if any(p in _SECRET_DIRS for p in parts) or parts[-1] in _SECRET_FILES:
            return True
        if _KEY_NAME.fullmatch(parts[-1]) and not parts[-1].endswith(".pub"):
            return True
        if any(path == s or path.startswith(s + "/") for s in _SECRET_SYSTEM):
            return True
        if any(s in path + "/" for s in _SECRET_SUBPATHS):
            return True
        return re.fullmatch(r"/proc/[^/]+/(environ|mem|cmdline)", path) is not None


# --- the analysis ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Finding:
    verdict: Verdict
    rule: str
    reason: str


@dataclass(frozen=True)
class _Output:
    """What a command writes to its standard output, as far as piping into a shell goes."""

    kind: str  # none | unknown | literal | download | decoded | passthrough | file
    text: str = ""


_NONE = _Output("none")
_ENVIRONMENT = _Output("environment")  # variables, which often hold tokens
_UNKNOWN_OUT = _Output("unknown")
_TAINTED = frozenset({"download", "decoded"})
# Outputs that stay what they are through filters (`curl x | grep y | sh` still runs a download).
_STICKY = _TAINTED | {"environment"}


def _merge(a: _Output, b: _Output) -> _Output:
    if a.kind == "none":
        return b
    if b.kind == "none":
        return a
    for kind in ("download", "decoded"):
        if kind in (a.kind, b.kind):
            return _Output(kind)
    if a.kind == b.kind == "literal":
        return _Output("literal", a.text + b.text)
    return _UNKNOWN_OUT


@dataclass
class _Call:
    """One program about to run: its canonical name, its expanded arguments, how it reads."""

    name: str
    args: list[Field]
    display: str

    @property
    def texts(self) -> list[str]:
        return [a.text for a in self.args]


_MISSING = object()


@dataclass
class _State:
    """What the shell knows while the command runs: variables, directory, functions."""

    env: dict[str, str | None]
    cwd: str | None
    functions: set[str] = field(default_factory=set)
    downloaded: set[str] = field(default_factory=set)

    def copy(self) -> _State:
        return _State(dict(self.env), self.cwd, set(self.functions), set(self.downloaded))

    def assign(self, name: str, value: str | None) -> None:
        self.env[name] = value

    def change_dir(self, cwd: str | None) -> None:
        self.cwd = cwd

    def join(self, branch: _State) -> None:
        """Take in a branch that may or may not have run: whatever differs becomes unknown."""
        for name in set(self.env) | set(branch.env):
            if self.env.get(name, _MISSING) != branch.env.get(name, _MISSING):
                self.env[name] = None
        if branch.cwd != self.cwd:
            self.cwd = None
        self.functions |= branch.functions
        self.downloaded |= branch.downloaded


class _Env:
    """The shell.Environment for one state: variables, and outputs the policy can know."""

    def __init__(self, analysis: _Analysis, state: _State) -> None:
        self.analysis = analysis
        self.state = state

    def var(self, name: str) -> str | None:
        if name in self.state.env:
            return self.state.env[name]
        if name == "HOME":
            return self.analysis.paths.home
        if name == "PWD":
            return self.state.cwd
        if name == "IFS":
            return " \t\n"
        return None

    def output(self, script: Script) -> str | None:
        echoed = self.echo_output(script)
        if echoed is not None:
            return echoed
        text = static_output(script)
        if text is not None:
            return text
        words = _only_command_words(script)
        if words == ["pwd"]:
            return self.state.cwd
        if words == ["git", "rev-parse", "--show-toplevel"]:
            return self.analysis.paths.root
        return None

    def echo_output(self, script: Script) -> str | None:
        """What `$(echo ~/x)` prints, expanding its words like the shell would."""
        command = _single_command(script)
        if (
            command is None
            or command.redirects
            or not command.words
            or command.words[0].literal() != "echo"
        ):
            return None
        fields = [f for w in command.words[1:] for f in expand_word(w, self)]
        while fields and fields[0].text in ("-n", "-E"):
            fields = fields[1:]
        if not all(f.known and not f.glob for f in fields) or any(
            f.text.startswith("-e") for f in fields[:1]
        ):
            return None
        return " ".join(f.text for f in fields)


def _single_command(script: Script) -> SimpleCommand | None:
    if len(script.items) != 1 or len(script.items[0].command.pipelines) != 1:
        return None
    commands = script.items[0].command.pipelines[0].commands
    return commands[0] if len(commands) == 1 and isinstance(commands[0], SimpleCommand) else None


def _only_command_words(script: Script) -> list[str] | None:
    if len(script.items) != 1 or len(script.items[0].command.pipelines) != 1:
        return None
    commands = script.items[0].command.pipelines[0].commands
    if len(commands) != 1 or not isinstance(commands[0], SimpleCommand):
        return None
    texts = [w.literal() for w in commands[0].words]
    return None if any(t is None for t in texts) else [t for t in texts if t is not None]


def _parse_options(
    args: list[Field], value_options: frozenset[str]
) -> tuple[list[tuple[str, Field | None]], list[Field]]:
    """Split arguments into (option, value) pairs and operands; `--` ends the options."""
    options: list[tuple[str, Field | None]] = []
    operands: list[Field] = []
    i = 0
    ended = False
    while i < len(args):
        arg = args[i]
        text = arg.text
        if ended or text == "-" or not text.startswith("-"):
            operands.append(arg)
        elif text == "--":
            ended = True
        elif text.startswith("--"):
            name, eq, value = text.partition("=")
            if eq:
                options.append((name, Field(value)))
            elif name in value_options and i + 1 < len(args):
                options.append((name, args[i + 1]))
                i += 1
            else:
                options.append((name, None))
        else:
            for k in range(1, len(text)):
                option = "-" + text[k]
                if option in value_options:
                    rest = text[k + 1 :]
                    if rest:
                        options.append((option, Field(rest)))
                    elif i + 1 < len(args):
                        options.append((option, args[i + 1]))
                        i += 1
                    else:
                        options.append((option, None))
                    break
                options.append((option, None))
        i += 1
    return options, operands


def _strictest(findings: Iterable[_Finding]) -> _Finding | None:
    best: _Finding | None = None
    for finding in findings:
        if best is None or _RANK[finding.verdict] > _RANK[best.verdict]:
            best = finding
    return best


class _Analysis:
    """One verdict() call: walks the syntax tree and collects a finding for every risk."""

    def __init__(self, policy: CommandPolicy) -> None:
        self.policy = policy
        self.paths = policy.paths
        self.findings: list[_Finding] = []
        self.natures: dict[int, _Output] = {}
        self.shell_depth = 0
        # How many loop bodies may still be checked once per value (`for d in / ~`).
        self.loop_budget = 32
        self.marks: set[str] = set()
        self.pipe_display = ""
        self.handlers = _HANDLERS

    def add(
        self, verdict: Verdict, rule: str, reason: str, into: list[_Finding] | None = None
    ) -> None:
        (self.findings if into is None else into).append(_Finding(verdict, rule, reason))

    def env(self, state: _State) -> _Env:
        return _Env(self, state)

    # -- the tree

    def run(self, text: str, state: _State, feed: _Output | None = None) -> _Output:
        """Parse and evaluate shell text (a command, or the code given to sh -c / eval)."""
        if self.shell_depth > MAX_SHELL_DEPTH:
            self.add(
                ASK,
                "approval.unparseable",
                f"`{_short(text)}` nests shells too deeply for the policy to follow",
            )
            return _UNKNOWN_OUT
        script, error = parse_repaired(text, depth=self.shell_depth * 4)
        if error is not None:
            # First, so that it is the reason given unless the repaired text is denied.
            self.add(
                ASK,
                "approval.unparseable",
                f"`{_short(text)}` could not be parsed ({error}), so the policy cannot see what it runs",
            )
        self.shell_depth += 1
        try:
            return self.script(script, state, feed)
        finally:
            self.shell_depth -= 1

    def script(self, script: Script, state: _State, feed: _Output | None = None) -> _Output:
        out = _NONE
        for item in script.items:
            out = _merge(out, self.and_or(item.command, state, feed))
        return out

    def and_or(self, and_or: AndOr, state: _State, feed: _Output | None) -> _Output:
        # `A && B && C`: B and C see A's effects, but may not run; `||` starts a new branch.
        out = self.pipeline(and_or.pipelines[0], state, feed)
        branch: _State | None = None
        for operator, pipeline in zip(and_or.operators, and_or.pipelines[1:], strict=False):
            if branch is None or operator == "||":
                if branch is not None:
                    state.join(branch)
                branch = state.copy()
            out = _merge(out, self.pipeline(pipeline, branch, feed))
        if branch is not None:
            state.join(branch)
        return out

    def pipeline(self, pipeline: Pipeline, state: _State, feed: _Output | None) -> _Output:
        if len(pipeline.commands) == 1:
            return self.command(pipeline.commands[0], state, feed)
        outer_display, outer_marks = self.pipe_display, self.marks
        self.pipe_display = pipeline.raw
        current = feed
        stage_marks: list[set[str]] = []
        try:
            for command in pipeline.commands:
                self.marks = set()
                out = self.command(command, state.copy(), current)
                stage_marks.append(self.marks)
                if (
                    "network" in self.marks
                    and current is not None
                    and current.kind == "environment"
                ):
                    self.add(
                        DENY,
                        "deny.exfiltration",
                        f"`{_short(pipeline.raw)}` sends environment variables, which often hold tokens, over the network",
                    )
                if out.kind == "passthrough":
                    out = current or _UNKNOWN_OUT
                elif (
                    current is not None
                    and current.kind in _STICKY
                    and out.kind not in _STICKY | {"literal"}
                ):
                    out = current  # downloaded or decoded text stays so through filters
                current = out
        finally:
            self.pipe_display, self.marks = outer_display, outer_marks
        sinks = [i for i, m in enumerate(stage_marks) if "sink" in m]
        networks = [i for i, m in enumerate(stage_marks) if "network" in m]
        if sinks and networks and min(sinks) < max(networks):
            self.add(
                DENY,
                "deny.reverse-shell",
                f"`{_short(pipeline.raw)}` connects a shell's input or output to the network (a reverse shell)",
            )
        return current or _UNKNOWN_OUT

    def command(self, command: Command, state: _State, feed: _Output | None) -> _Output:
        if isinstance(command, SimpleCommand):
            return self.simple(command, state, feed)
        feed = self.compound_redirects(getattr(command, "redirects", ()), state, feed)
        if isinstance(command, Group):
            return self.script(command.body, state.copy() if command.subshell else state, feed)
        if isinstance(command, If):
            out = _NONE
            for i, (condition, body) in enumerate(command.branches):
                scope = state if i == 0 else state.copy()  # an `elif` test may not run
                out = _merge(out, self.script(condition, scope, feed))
                out = _merge(out, self.branch(body, scope, feed))
                if scope is not state:
                    state.join(scope)
            if command.else_body is not None:
                out = _merge(out, self.branch(command.else_body, state, feed))
            return out
        if isinstance(command, Loop):
            out = self.script(command.condition, state, feed)
            return _merge(out, self.branch(command.body, state, feed))
        if isinstance(command, For):
            return self.for_loop(command, state, feed)
        if isinstance(command, Case):
            self.nested_in_words([command.word], state)
            out = _NONE
            for arm in command.arms:
                self.nested_in_words(list(arm.patterns), state)
                out = _merge(out, self.branch(arm.body, state, feed))
            return out
        if isinstance(command, FunctionDef):
            self.function_def(command, state)
            return _NONE
        if isinstance(command, ArithCommand):
            for sub in command.expr.subs:
                self.script(sub, state.copy())
            self.add(ALLOW, "allow.builtin", "arithmetic only changes the shell's own state")
            return _NONE
        if isinstance(command, CondCommand):
            self.nested_in_words(list(command.words), state)
            self.add(ALLOW, "allow.builtin", "a `[[ ]]` test only reads")
            return _NONE
        return _UNKNOWN_OUT  # pragma: no cover - every node type is handled above

    def branch(
        self,
        script: Script,
        state: _State,
        feed: _Output | None,
        variable: str = "",
        value: str | None = None,
    ) -> _Output:
        """A body that may or may not run: checked in order on a copy, then joined back."""
        inner = state.copy()
        if variable:
            inner.assign(variable, value)
        out = self.script(script, inner, feed)
        state.join(inner)
        return out

    def for_loop(self, loop: For, state: _State, feed: _Output | None) -> _Output:
        if loop.arith is not None:
            for sub in loop.arith.subs:
                self.script(sub, state.copy())
        values: list[str | None] = [None]
        if loop.words is not None:
            self.nested_in_words(list(loop.words), state)
            env = self.env(state)
            fields = [f for w in loop.words for f in expand_word(w, env)]
            if 0 < len(fields) <= min(8, self.loop_budget) and all(f.known for f in fields):
                # Small static lists: check every value (a glob stands for the paths it matches).
                self.loop_budget -= len(fields)
                values = [f.text for f in fields]
        out = _NONE
        for value in values:
            out = _merge(out, self.branch(loop.body, state, feed, loop.variable, value))
        return out

    def function_def(self, function: FunctionDef, state: _State) -> None:
        if _calls_itself_concurrently(function):
            self.add(
                DENY,
                "deny.fork-bomb",
                f"`{function.name}` calls itself in a pipe or in the background: a fork bomb that exhausts the machine",
            )
        state.functions.add(function.name)
        # The body is checked once, where it is defined; calls to it add nothing new.
        self.command(function.body, state.copy(), None)

    def nested_in_words(self, words: Iterable[Word], state: _State) -> None:
        """Evaluate the substitutions inside words, remembering what each one prints."""
        for word in words:
            for sub in word_scripts(word):
                self.natures[id(sub)] = self.script(sub, state.copy())

    def nature(self, scripts: Iterable[Script]) -> _Output:
        out = _NONE
        for script in scripts:
            out = _merge(out, self.natures.get(id(script), _UNKNOWN_OUT))
        return out

    def compound_redirects(
        self, redirects: tuple[Redirect, ...], state: _State, feed: _Output | None
    ) -> _Output | None:
        for redirect in redirects:
            if redirect.target is not None:
                self.nested_in_words([redirect.target], state)
            if redirect.heredoc is not None and redirect.heredoc.word is not None:
                self.nested_in_words([redirect.heredoc.word], state)
            display = (
                f"{redirect.op} {redirect.target.raw}"
                if redirect.target is not None
                else redirect.op
            )
            feed, _ = self.redirect(redirect, state, feed, display, self.findings)
        return feed

    # -- simple commands

    def simple(self, command: SimpleCommand, state: _State, feed: _Output | None) -> _Output:
        self.nested_in_words(list(command_words(command)), state)
        display = _short(command.raw)
        local: list[_Finding] = []
        stdout_targets: list[str] = []
        stdin = feed
        for redirect in command.redirects:
            stdin, target = self.redirect(redirect, state, stdin, display, local)
            if target is not None:
                stdout_targets.append(target)
        env = self.env(state)
        fields = [f for w in command.words for f in expand_word(w, env)]
        for assignment in command.assignments:
            if assignment.name in _RISKY_ENV:
                self.add(
                    ASK,
                    "approval.env-override",
                    f"`{display}` sets `{assignment.name}`, which changes what programs or libraries run",
                    local,
                )
            if not fields:
                value = expand_value(assignment.value, env) if assignment.array is None else None
                state.assign(assignment.name, value)
        if not fields:
            if not local:
                self.add(
                    ALLOW,
                    "allow.builtin",
                    f"`{display}` only sets shell variables or redirections",
                    local,
                )
            self.findings.extend(local)
            return _NONE
        call_out = self.launch(fields, display, state, stdin, local, command.redirects)
        if call_out.kind == "download":
            state.downloaded.update(stdout_targets)
        return call_out

    def launch(
        self,
        fields: list[Field],
        display: str,
        state: _State,
        stdin: _Output | None,
        local: list[_Finding],
        redirects: tuple[Redirect, ...] = (),
    ) -> _Output:
        """Resolve the program a simple command names, then invoke it."""
        head = fields[0]
        if not head.known:
            nature = self.nature(head.scripts)
            if nature.kind in _TAINTED:
                self.add(
                    DENY,
                    "deny.download-exec",
                    f"`{display}` runs a command name that is downloaded or decoded at run time",
                    local,
                )
            self.add(
                ASK,
                "approval.dynamic-command",
                f"`{display}` runs a command whose name comes from a variable or substitution",
                local,
            )
            call = _Call("", fields[1:], display)
            self.secret_scan(call, state, local)
            self.findings.extend(local)
            return _UNKNOWN_OUT
        name = head.text
        if "/" in name:
            directory, _, base = name.rpartition("/")
            if directory not in _BIN_DIRS and not self.is_repo_tool_dir(directory or "/", state):
                self.run_script(head, state, _Call(base, fields[1:], display), local, "program")
                if not self.is_known(_canonical(base)):
                    self.findings.extend(local)
                    return _UNKNOWN_OUT
            name = base
        if name in state.functions:
            self.add(
                ALLOW,
                "allow.function-call",
                f"`{display}` calls a function defined in the same command (its body was checked)",
                local,
            )
            self.findings.extend(local)
            return _UNKNOWN_OUT
        call = _Call(_canonical(name), fields[1:], display)
        if any(
            r.target is not None and self.redirect_kind(r, state) == NETWORK for r in redirects
        ) and (call.name in _SHELLS or call.name in _INTERPRETERS):
            self.add(
                DENY,
                "deny.reverse-shell",
                f"`{display}` connects a shell to a network socket (a reverse shell)",
                local,
            )
        return self.invoke(call, state, stdin, local)

    def is_repo_tool_dir(self, directory: str, state: _State) -> bool:
        place = self.paths.classify_text(directory, state.cwd)
        if place.kind != INSIDE or place.absolute is None:
            return False
        return _REPO_BIN_DIRS.search(self.paths.show(place.absolute)) is not None

    def is_known(self, name: str) -> bool:
        if name in self.handlers or name in _WRAPPERS:
            return True
        rules = self.policy.rules.defaults
        return any(_name_matches(p, name) for rule in rules for p in rule.command)

    def invoke(
        self, call: _Call, state: _State, stdin: _Output | None, local: list[_Finding] | None = None
    ) -> _Output:
        """Decide one program invocation: table rules, its handler, path checks, repo rules."""
        local = [] if local is None else local
        wrapper = _WRAPPERS.get(call.name)
        if wrapper is not None:
            inner = self.unwrap(call, wrapper, state, local)
            self.add_table_finding(call, local)
            # Alone (`strace -p PID`, `nice`), a wrapper needs its own rule to be allowed.
            self.finish(call, local, state, claimed=inner is not None)
            if inner is None:
                prints_env = call.name == "env" and "-S" not in call.texts
                return _ENVIRONMENT if prints_env else _UNKNOWN_OUT
            return self.launch(inner, call.display, state, stdin, [])
        before = len(local)
        out: _Output | None = None
        handler = self.handlers.get(call.name)
        if handler is not None:
            out = handler(self, call, state, stdin, local)
        # A handler's output only describes stdout; it claims the call by deciding something.
        claimed = len(local) > before or (call.name in _DELEGATES and out is not None)
        # The table row comes last so that, between equal verdicts, a specific reason wins.
        claimed = self.add_table_finding(call, local) or claimed
        self.finish(call, local, state, claimed=claimed)
        return out or _UNKNOWN_OUT

    def add_table_finding(self, call: _Call, local: list[_Finding]) -> bool:
        finding = self.table_finding(call)
        if finding is not None:
            local.append(finding)
        return finding is not None

    def table_finding(self, call: _Call) -> _Finding | None:
        specific = [r for r in self.policy.rules.defaults if not r.fallback and r.matches(call)]
        if not specific:
            specific = [r for r in self.policy.rules.defaults if r.fallback and r.matches(call)][:1]
        best: Rule | None = None
        for rule in specific:
            if best is None or _RANK[rule.verdict] > _RANK[best.verdict]:
                best = rule
        if best is None:
            return None
        return _Finding(best.verdict, best.id, f"`{call.display}` {best.reason}")

    def finish(self, call: _Call, local: list[_Finding], state: _State, *, claimed: bool) -> None:
        if not local and not claimed:
            self.add(
                ASK,
                "approval.unknown-command",
                f"`{call.display}` runs `{call.name}`, which no policy rule covers",
                local,
            )
        self.embedded_commands(call, state, local)
        self.file_options(call, state, local)
        if call.name not in _NO_PATH_ARGS:
            self.secret_scan(call, state, local)
        current = _strictest(local)
        if (
            current is not None
            and current.verdict == ALLOW
            and call.name not in _NO_PATH_ARGS | _OWN_PATHS
        ):
            self.read_scan(call, state, local)
        self.apply_repo_rules(call, local)
        self.findings.extend(local)

    def apply_repo_rules(self, call: _Call, local: list[_Finding]) -> None:
        rules = self.policy.rules
        matched = [r for r in rules.repo if r.matches(call)]
        if not matched:
            return
        repo_rule = max(matched, key=lambda r: _RANK[r.verdict])
        finding = _Finding(repo_rule.verdict, repo_rule.id, f"`{call.display}` {repo_rule.reason}")
        current = _strictest(local)
        if current is None or _RANK[finding.verdict] >= _RANK[current.verdict]:
            local.append(finding)
            return
        if current.verdict == DENY:
            self.policy.warn(
                f"policy.toml rule {repo_rule.id!r} would loosen the deny rule {current.rule!r} "
                f"for `{call.display}`; deny rules are never loosened"
            )
        elif rules.allow_repo_loosening:
            local[:] = [finding]
        else:
            self.policy.warn(
                f"policy.toml rule {repo_rule.id!r} would loosen {current.rule!r} for `{call.display}`; "
                "ignored (set POLICY_ALLOW_REPO_LOOSENING=true to honour it)"
            )

    # -- checks every invocation gets

    def file_options(self, call: _Call, state: _State, local: list[_Finding]) -> None:
        """Files a tool writes or empties through options or a fixed operand."""
        writes = _WRITE_OPTIONS.get(call.name, frozenset())
        deletes = _DELETE_OPTIONS.get(call.name, frozenset())
        output_at = _OUTPUT_OPERAND.get(call.name)
        if not writes and not deletes and output_at is None:
            return
        value_options = _VALUE_OPTIONS.get(call.name, frozenset()) | writes | deletes
        options, operands = _parse_options(call.args, value_options)
        targets = [(v, n in deletes) for n, v in options if v is not None and n in writes | deletes]
        if output_at is not None and len(operands) > output_at:
            targets.append((operands[output_at], False))
        for target, empties in targets:
            place = self.paths.classify(target, state.cwd)
            if empties:
                local.append(self.delete_finding(place, call.display, recursive=True))
                continue
            finding = self.write_finding(place, call.display)
            if finding is not None:
                local.append(finding)

    def embedded_commands(self, call: _Call, state: _State, local: list[_Finding]) -> None:
        """Shell commands hidden in option values: `ssh -o ProxyCommand=...`, `tar -I prog`."""
        options = _COMMAND_OPTIONS.get(call.name)
        if options is None:
            return
        parsed, _ = _parse_options(call.args, options)
        for name, value in parsed:
            if value is None or name not in options:
                continue
            text = value.text
            if name == "-o":
                match = re.match(
                    r"(?i)(ProxyCommand|LocalCommand|KnownHostsCommand)\s*[= ]\s*(.+)", text, re.S
                )
                if match is None:
                    continue
                text = match.group(2)
            elif name == "--checkpoint-action":
                if not text.startswith("exec="):
                    continue
                text = text[len("exec=") :]
            self.shell_code(
                Field(text, scripts=value.scripts)
                if value.known
                else Field(UNKNOWN, scripts=value.scripts),
                state,
                call,
                local,
            )

    def secret_scan(self, call: _Call, state: _State, local: list[_Finding]) -> None:
        skip = {self.pattern_operand(call)}
        if call.name in _PATTERN_FIRST:
            # A search pattern is text, not a file: `rg -e /etc/shadow src` reads only src.
            skip |= {
                i + 1
                for i, a in enumerate(call.args)
                if a.text in ("-e", "--regexp", "--expression")
            }
        for i, arg in enumerate(call.args):
            if i in skip or (
                i > 0
                and call.name in ("ssh", "scp", "sftp")
                and call.args[i - 1].text in ("-i", "-F")
            ):
                continue
            if (
                call.name in _PATTERN_FIRST
                and arg.text.startswith(("--regexp=", "--expression=", "-e"))
                and len(arg.text) > 2
            ):
                continue
            for candidate in self.path_candidates(arg):
                place = self.paths.classify(candidate, state.cwd)
                if place.kind == SECRET:
                    self.add(
                        DENY,
                        "deny.read-secret",
                        f"`{call.display}` uses `{place.shown}`, which holds credentials or secrets",
                        local,
                    )
                    return

    def path_candidates(self, arg: Field) -> Iterator[Field]:
        yield arg
        text = arg.text
        if text.startswith("/") and ":" in text:
            yield Field(text.split(":", 1)[0])  # `docker run -v ~/.ssh:/keys`
        for match in re.finditer(r"[=@:,]([/~][^,;:=@]*)", text):
            value = match.group(1)
            if value.startswith("~"):
                value = self.paths.home + value[1:]
            yield Field(value)

    def pattern_operand(self, call: _Call) -> int:
        """The index of the pattern or program operand of grep/sed/awk/jq, else -1."""
        exempt = _PATTERN_FIRST.get(call.name)
        if exempt is None:
            return -1
        options, operands = _parse_options(call.args, _VALUE_OPTIONS.get(call.name, frozenset()))
        if any(name in exempt.split() for name, _ in options) or not operands:
            return -1
        first = operands[0]
        return next((i for i, a in enumerate(call.args) if a is first), -1)

    def read_scan(self, call: _Call, state: _State, local: list[_Finding]) -> None:
        skip = self.pattern_operand(call)
        options, operands = _parse_options(call.args, _VALUE_OPTIONS.get(call.name, frozenset()))
        candidates = [a for a in operands if skip < 0 or a is not call.args[skip]]
        patterns = ("-e", "--regexp", "--expression") if call.name in _PATTERN_FIRST else ()
        # Option values are data (`cut -d /`) except files: `-f FILE` and `--long=/path`.
        candidates += [
            v
            for n, v in options
            if v is not None
            and n not in patterns
            and (n == "-f" or n.startswith("--"))
            and v.text.startswith(("/", "~"))
        ]
        if call.name in _NAME_OPERANDS:
            candidates = [
                a for a in candidates if a.text.startswith(("/", "~", "..")) or not a.known
            ]
        for arg in candidates:
            finding = self.read_finding(self.paths.classify(arg, state.cwd), call.display)
            if finding is not None:
                local.append(finding)
                return
        if not operands:
            # No operand: it reads the working directory, which `cd` may have moved.
            here = self.paths.classify(Field(".") if state.cwd else Field(UNKNOWN), state.cwd)
            finding = self.read_finding(here, call.display)
            if finding is not None:
                local.append(finding)

    # -- what paths mean

    def read_finding(self, place: _Place, display: str) -> _Finding | None:
        if place.kind in _IN_REPO or place.kind == NULL:
            return None
        if place.kind == SECRET:
            return _Finding(
                DENY,
                "deny.read-secret",
                f"`{display}` reads `{place.shown}`, which holds credentials or secrets",
            )
        if place.kind == DEVICE:
            return _Finding(
                DENY, "deny.read-device", f"`{display}` reads the raw device `{place.shown}`"
            )
        if place.kind == NETWORK:
            return _Finding(
                ASK,
                "approval.network",
                f"`{display}` opens a network connection through `{place.shown}`",
            )
        if place.kind == UNKNOWN_PLACE:
            return _Finding(
                ASK,
                "approval.unknown-target",
                f"`{display}` reads `{place.shown}`, a path the policy cannot resolve",
            )
        return _Finding(
            ASK,
            "approval.read-outside",
            f"`{display}` reads `{place.shown}`, outside the repository",
        )

    def write_finding(
        self, place: _Place, display: str, *, creates: bool = False
    ) -> _Finding | None:
        kind, shown = place.kind, place.shown
        if kind == NULL:
            return None
        if kind == NETWORK:
            return _Finding(
                ASK,
                "approval.network",
                f"`{display}` sends data over the network through `{shown}`",
            )
        if kind == DEVICE:
            return _Finding(
                DENY,
                "deny.write-device",
                f"`{display}` writes to the device `{shown}`, which can destroy a disk",
            )
        if kind in (ROOT, SYSTEM):
            return _Finding(
                DENY,
                "deny.write-system",
                f"`{display}` writes `{shown}`, a system location outside the repository",
            )
        if kind == SECRET:
            return _Finding(
                DENY,
                "deny.write-outside",
                f"`{display}` writes `{shown}`, a credentials file outside the repository",
            )
        if kind in (HOME, OUTSIDE):
            return _Finding(
                DENY, "deny.write-outside", f"`{display}` writes `{shown}`, outside the repository"
            )
        if kind == TEMP:
            return _Finding(
                ASK,
                "approval.write-temp",
                f"`{display}` writes `{shown}` in a temporary directory outside the repository",
            )
        if kind == GIT_HOOKS:
            return _Finding(
                DENY,
                "deny.write-git-hooks",
                f"`{display}` writes a git hook (`{shown}`), code that git would run later",
            )
        if kind == GIT_DIR:
            return _Finding(
                ASK,
                "approval.write-git-dir",
                f"`{display}` writes inside `.git/` (`{shown}`), the repository's own data",
            )
        if kind == UNKNOWN_PLACE:
            return _Finding(
                ASK,
                "approval.unknown-target",
                f"`{display}` writes `{shown}`, a path the policy cannot resolve",
            )
        if creates:
            return None
        return _Finding(
            ASK,
            "approval.write-in-repo",
            f"`{display}` writes `{shown}` in the repository (edits are reviewed as patches)",
        )

    def delete_finding(self, place: _Place, display: str, *, recursive: bool) -> _Finding:
        kind, shown = place.kind, place.shown
        how = "recursively deletes" if recursive else "deletes"
        if kind == ROOT and recursive:
            return _Finding(
                DENY,
                "deny.recursive-delete-root",
                f"`{display}` recursively deletes `{shown}`: everything on the machine",
            )
        if kind == HOME and recursive:
            return _Finding(
                DENY,
                "deny.recursive-delete-home",
                f"`{display}` recursively deletes the home directory (`{shown}`)",
            )
        if kind not in _IN_REPO and kind != UNKNOWN_PLACE:
            rule = "deny.recursive-delete-outside" if recursive else "deny.delete-outside"
            return _Finding(DENY, rule, f"`{display}` {how} `{shown}`, outside the repository")
        if kind == REPO_ROOT and recursive:
            return _Finding(DENY, "deny.delete-repo", f"`{display}` deletes the whole repository")
        if kind == GIT_DIR and recursive and place.absolute == self.paths.root + "/.git":
            return _Finding(
                DENY, "deny.delete-repo", f"`{display}` deletes `.git`, the repository's history"
            )
        if kind == UNKNOWN_PLACE:
            return _Finding(
                ASK,
                "approval.unknown-target",
                f"`{display}` {how} `{shown}`, a path the policy cannot resolve",
            )
        return _Finding(
            ASK, "approval.delete-in-repo", f"`{display}` {how} `{shown}` in the repository"
        )

    # -- redirections

    def redirect_kind(self, redirect: Redirect, state: _State) -> str:
        if redirect.target is None:
            return ""
        fields = expand_word(redirect.target, self.env(state))
        return self.paths.classify(fields[0], state.cwd).kind if len(fields) == 1 else UNKNOWN_PLACE

    def redirect(
        self,
        redirect: Redirect,
        state: _State,
        stdin: _Output | None,
        display: str,
        local: list[_Finding],
    ) -> tuple[_Output | None, str | None]:
        """Check one redirection; returns the new standard input and any stdout file written."""
        op = redirect.op
        if redirect.heredoc is not None:
            return _Output("literal", redirect.heredoc.body), None
        if redirect.target is None:
            return stdin, None
        env = self.env(state)
        if op == "<<<":
            fields = expand_word(redirect.target, env)
            if fields and all(f.known for f in fields):
                return _Output("literal", " ".join(f.text for f in fields) + "\n"), None
            nature = self.nature(word_scripts(redirect.target))
            return (nature if nature.kind in _TAINTED else _UNKNOWN_OUT), None
        fields = expand_word(redirect.target, env)
        target = fields[0] if len(fields) == 1 else Field(UNKNOWN)
        if op in (">&", "<&") and (target.text.isdigit() or target.text == "-"):
            return stdin, None
        place = self.paths.classify(target, state.cwd)
        if op in ("<", "<>"):
            finding = self.read_finding(place, display)
            if finding is not None:
                local.append(finding)
            if op == "<":
                if place.absolute is not None and place.absolute in state.downloaded:
                    return _Output("download"), None
                return _Output("file", place.absolute or ""), None
        finding = self.write_finding(place, display)
        if finding is not None:
            local.append(finding)
        writes_stdout = redirect.fd in (None, 1) and op != "<"
        return stdin, (place.absolute if writes_stdout and place.absolute else None)

    # -- code the policy must look into

    def shell_code(
        self,
        code: Field,
        state: _State,
        call: _Call,
        local: list[_Finding],
        positional: list[Field] | None = None,
    ) -> None:
        if not code.known:
            nature = self.nature(code.scripts)
            if nature.kind in _TAINTED:
                self.add(
                    DENY,
                    "deny.download-exec",
                    f"`{call.display}` runs shell code that is downloaded or decoded at run time",
                    local,
                )
            else:
                self.add(
                    ASK,
                    "approval.dynamic-code",
                    f"`{call.display}` runs shell code built at run time, which the policy cannot see",
                    local,
                )
            return
        inner = state.copy()
        for i, arg in enumerate(positional or []):
            inner.env[str(i)] = arg.text if arg.known else None
        self.run(code.text, inner)

    def stdin_code(
        self,
        stdin: _Output | None,
        state: _State,
        call: _Call,
        local: list[_Finding],
        language: str,
    ) -> _Output:
        """A shell or interpreter that reads its program from standard input."""
        self.marks.add("sink")
        shown = _short(self.pipe_display) if self.pipe_display else call.display
        if stdin is None:
            self.add(
                ASK,
                "approval.interactive",
                f"`{call.display}` starts an interactive {language}; the agent has no terminal for it",
                local,
            )
        elif stdin.kind == "download":
            self.add(
                DENY,
                "deny.pipe-to-shell",
                f"`{shown}` runs code downloaded from the network",
                local,
            )
        elif stdin.kind == "decoded":
            self.add(
                DENY,
                "deny.pipe-to-shell",
                f"`{shown}` runs decoded or obfuscated text as code",
                local,
            )
        elif stdin.kind == "literal":
            if language == "shell":
                self.run(stdin.text, state.copy())
            else:
                self.inline_code_text(stdin.text, language, state, call, local)
        elif stdin.kind == "file":
            self.add(
                ASK,
                "approval.run-script",
                f"`{call.display}` runs the script `{self.paths.show(stdin.text)}`, which the policy cannot see into",
                local,
            )
        else:
            self.add(
                ASK,
                "approval.pipe-to-shell",
                f"`{shown}` runs another command's output as {language} code, which the policy cannot see",
                local,
            )
        return _UNKNOWN_OUT

    def run_script(
        self, script: Field, state: _State, call: _Call, local: list[_Finding], language: str
    ) -> _Output:
        if script.scripts:
            nature = self.nature(script.scripts)
            if nature.kind in _TAINTED:
                self.add(
                    DENY,
                    "deny.download-exec",
                    f"`{call.display}` runs a script that is downloaded or decoded at run time",
                    local,
                )
                return _UNKNOWN_OUT
        if script.text in ("/dev/stdin", "-"):
            return _UNKNOWN_OUT
        place = self.paths.classify(script, state.cwd)
        if place.absolute is not None and place.absolute in state.downloaded:
            self.add(
                DENY,
                "deny.download-exec",
                f"`{call.display}` runs `{place.shown}`, which was just downloaded",
                local,
            )
        else:
            self.add(
                ASK,
                "approval.run-script",
                f"`{call.display}` runs the {language} `{place.shown}`, which the policy cannot see into",
                local,
            )
        return _UNKNOWN_OUT

    def inline_code(
        self, code: Field, language: str, state: _State, call: _Call, local: list[_Finding]
    ) -> None:
        if not code.known:
            nature = self.nature(code.scripts)
            if nature.kind in _TAINTED:
                self.add(
                    DENY,
                    "deny.download-exec",
                    f"`{call.display}` runs {language} code that is downloaded or decoded at run time",
                    local,
                )
            else:
                self.add(
                    ASK,
                    "approval.dynamic-code",
                    f"`{call.display}` runs {language} code built at run time, which the policy cannot see",
                    local,
                )
            return
        self.inline_code_text(code.text, language, state, call, local)

    def inline_code_text(
        self, code: str, language: str, state: _State, call: _Call, local: list[_Finding]
    ) -> None:
        self.add(
            ASK,
            "approval.inline-code",
            f"`{call.display}` runs inline {language} code, which the policy cannot fully check",
            local,
        )
        for pattern, rule, phrase in _CODE_DENY:
            match = pattern.search(code)
            if match is not None:
                self.add(DENY, rule, f"`{call.display}` runs {language} code that {phrase}", local)
        strings = [_unescape(m.group(2)) for m in _STRING_LITERAL.finditer(code)][:40]
        for match in _TREE_DELETE.finditer(code):
            argument = match.group("arg")
            if _HOME_CODE.search(argument):
                self.add(
                    DENY,
                    "deny.recursive-delete-home",
                    f"`{call.display}` runs {language} code that deletes the home directory",
                    local,
                )
            literal = _STRING_LITERAL.search(argument)
            if literal is not None:
                place = self.paths.classify_text(
                    _expand_home(_unescape(literal.group(2)), self.paths.home), state.cwd
                )
                local.append(self.delete_finding(place, call.display, recursive=True))
        for match in _FILE_DELETE.finditer(code):
            literal = _STRING_LITERAL.search(match.group("arg"))
            if literal is not None:
                place = self.paths.classify_text(
                    _expand_home(_unescape(literal.group(2)), self.paths.home), state.cwd
                )
                local.append(self.delete_finding(place, call.display, recursive=False))
        for text in strings:
            if text.startswith(("/", "~")):
                place = self.paths.classify_text(_expand_home(text, self.paths.home), state.cwd)
                if place.kind == SECRET:
                    self.add(
                        DENY,
                        "deny.read-secret",
                        f"`{call.display}` runs {language} code that uses `{place.shown}`, which holds secrets",
                        local,
                    )
                elif place.kind in (DEVICE, SYSTEM, ROOT) and _WRITE_CODE.search(code):
                    finding = self.write_finding(place, call.display)
                    if finding is not None:
                        local.append(finding)
        if _EXEC_CODE.search(code):
            commands = strings + [
                " ".join(_unescape(s[1:-1]) for s in re.findall(r"'[^']*'|\"[^\"]*\"", m.group(0)))
                for m in _LIST_LITERAL.finditer(code)
            ]
            for text in commands[:20]:
                if text.strip():
                    self.run(text, state.copy())

    # -- handlers: commands with their own semantics

    def unwrap(
        self, call: _Call, wrapper: _Wrapper, state: _State, local: list[_Finding]
    ) -> list[Field] | None:
        """The command a wrapper runs (`sudo -u x CMD...` -> CMD...), or None when it runs none."""
        args = call.args
        i = 0
        while i < len(args):
            text = args[i].text
            if wrapper.assignments and re.match(r"[A-Za-z_][A-Za-z0-9_]*=", text):
                if text.split("=", 1)[0] in _RISKY_ENV:
                    self.add(
                        ASK,
                        "approval.env-override",
                        f"`{call.display}` sets `{text.split('=', 1)[0]}`, which changes what programs or libraries run",
                        local,
                    )
                i += 1
                continue
            if text == "--":
                i += 1
                break
            if not text.startswith("-") or text == "-":
                break
            if call.name == "env" and text in ("-S", "--split-string") and i + 1 < len(args):
                self.shell_code(args[i + 1], state, call, local)
                return None
            if call.name == "command" and text in ("-v", "-V"):
                return None
            if text in wrapper.value_options:
                i += 1
            i += 1
        i += wrapper.operands
        return args[i:] or None


# --- handlers: commands with their own semantics ---------------------------------------------


def _runner(
    a: _Analysis, call: _Call, state: _State, stdin: _Output | None, local: list[_Finding]
) -> _Output | None:
    subcommand, options = _RUNNERS[call.name]
    args = call.args
    i = 0
    if subcommand:
        operands = _operands(call.name, call.texts)
        if not operands or operands[0] != subcommand:
            return None
        i = next(k for k, arg in enumerate(args) if arg.text == subcommand) + 1
    else:
        a.add(
            ASK,
            "approval.package-run",
            f"`{call.display}` may download a package and runs it",
            local,
        )
    while i < len(args) and args[i].text.startswith("-"):
        if args[i].text == "--":
            i += 1
            break
        if args[i].text in (
            "--with",
            "--with-requirements",
            "--from",
            "-p",
            "--package",
            "--spec",
        ):
            a.add(
                ASK,
                "approval.package-install",
                f"`{call.display}` installs extra packages to run the command",
                local,
            )
        i += 2 if args[i].text in options else 1
    if i >= len(args):
        return _UNKNOWN_OUT
    a.launch(args[i:], call.display, state, stdin, [])
    return _UNKNOWN_OUT


def _shell(
    a: _Analysis, call: _Call, state: _State, stdin: _Output | None, local: list[_Finding]
) -> _Output:
    args = call.args
    i = 0
    command_mode = read_stdin = False
    while i < len(args):
        text = args[i].text
        if text in ("-", "--"):
            i += 1
            break
        if len(text) > 1 and text[0] in "-+" and args[i].known:
            if text in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
                i += 2
                continue
            if not text.startswith("--"):
                command_mode = command_mode or "c" in text[1:]
                read_stdin = read_stdin or "s" in text[1:]
            i += 1
            continue
        break
    operands = args[i:]
    if command_mode:
        if not operands:
            a.add(ASK, "approval.unparseable", f"`{call.display}` gives `-c` no command", local)
            return _UNKNOWN_OUT
        a.shell_code(operands[0], state, call, local, operands[1:])
        return _UNKNOWN_OUT
    if operands and not read_stdin:
        if operands[0].text in ("/dev/stdin", "/proc/self/fd/0", "/dev/fd/0"):
            return a.stdin_code(stdin, state, call, local, "shell")
        return a.run_script(operands[0], state, call, local, "shell script")
    return a.stdin_code(stdin, state, call, local, "shell")


def _interpreter(
    a: _Analysis, call: _Call, state: _State, stdin: _Output | None, local: list[_Finding]
) -> _Output | None:
    language, code_flags, long_code = _INTERPRETERS[call.name]
    args = call.args
    if (
        call.name in ("deno", "bun")
        and args
        and args[0].text in ("eval", "-e", "--eval", "-p", "--print")
    ):
        if len(args) > 1:
            a.inline_code(args[1], language, state, call, local)
        return _UNKNOWN_OUT
    if call.name in ("deno", "bun"):
        return _deno_bun(a, call, state, local)
    in_place = call.name in ("perl", "ruby") and any(
        re.fullmatch(r"-\w*i\S*", arg.text) for arg in args
    )
    if in_place:
        _in_place_targets(a, args, state, call, local)
    i = 0
    while i < len(args):
        text = args[i].text
        if text in long_code:
            if i + 1 < len(args):
                a.inline_code(args[i + 1], language, state, call, local)
            return _UNKNOWN_OUT
        if text.startswith("--"):
            if call.name == "node" and text == "--test":
                return None
            i += 1
            continue
        if text == "-":
            return a.stdin_code(stdin, state, call, local, language)
        if text.startswith("-") and len(text) > 1:
            letters = text[1:]
            for k, letter in enumerate(letters):
                if letter in code_flags:
                    rest = letters[k + 1 :]
                    if rest:
                        a.inline_code(Field(rest), language, state, call, local)
                    elif i + 1 < len(args):
                        a.inline_code(args[i + 1], language, state, call, local)
                    return _UNKNOWN_OUT
            i += 1
            continue
        return a.run_script(args[i], state, call, local, f"{language} script")
    if any(arg.text in ("-v", "--version", "-V", "-h", "--help", "-version") for arg in args):
        a.add(
            ALLOW,
            "allow.version",
            f"`{call.display}` only prints a version or help text",
            local,
        )
        return _UNKNOWN_OUT
    return a.stdin_code(stdin, state, call, local, language)


def _in_place_targets(
    a: _Analysis, args: list[Field], state: _State, call: _Call, local: list[_Finding]
) -> None:
    """`perl -pi -e CODE FILES`: the files after the code are rewritten."""
    code_at = next((k for k, arg in enumerate(args) if re.fullmatch(r"-\w*[eE]", arg.text)), None)
    files = (
        [arg for arg in args[code_at + 2 :] if not arg.text.startswith("-")]
        if code_at is not None
        else []
    )
    for arg in files or [Field(UNKNOWN)]:
        finding = a.write_finding(a.paths.classify(arg, state.cwd), call.display)
        if finding is not None:
            local.append(finding)


def _deno_bun(a: _Analysis, call: _Call, state: _State, local: list[_Finding]) -> _Output | None:
    operands = _operands(call.name, call.texts)
    if not operands or operands[0] in (
        "test",
        "check",
        "lint",
        "fmt",
        "add",
        "install",
        "i",
        "remove",
        "x",
        "publish",
        "upgrade",
        "info",
        "doc",
        "types",
        "help",
        "completions",
        "pm",
        "outdated",
    ):
        return None
    if operands[0] == "run" and len(operands) > 1 and call.name == "bun":
        script = operands[1]
        if script in ("test", "lint", "typecheck", "check", "build") or script.startswith(
            ("test:", "lint:")
        ):
            a.add(
                ALLOW,
                "allow.test-runner",
                f"`{call.display}` runs the project's tests or checks",
                local,
            )
            return _UNKNOWN_OUT
    target = operands[1] if operands[0] == "run" and len(operands) > 1 else operands[0]
    a.add(
        ASK,
        "approval.run-script",
        f"`{call.display}` runs `{target}`, which the policy cannot see into",
        local,
    )
    return _UNKNOWN_OUT


def _python(
    a: _Analysis, call: _Call, state: _State, stdin: _Output | None, local: list[_Finding]
) -> _Output | None:
    args = call.args
    i = 0
    while i < len(args):
        text = args[i].text
        if text == "-":
            return a.stdin_code(stdin, state, call, local, "python")
        if text.startswith("--"):
            i += 2 if text == "--check-hash-based-pycs" else 1
            continue
        if text.startswith("-") and len(text) > 1:
            letters = text[1:]
            for k, letter in enumerate(letters):
                rest = letters[k + 1 :]
                if letter == "c":
                    code = (
                        Field(rest) if rest else (args[i + 1] if i + 1 < len(args) else Field(""))
                    )
                    a.inline_code(code, "python", state, call, local)
                    return _UNKNOWN_OUT
                if letter == "m":
                    j = i + 1 if not rest else i
                    module = rest or (args[j].text if j < len(args) else "")
                    if not module:
                        return None
                    module_args = args[j + 1 :]
                    inner = _Call(_canonical(module), module_args, call.display)
                    a.invoke(inner, state, stdin)
                    return _UNKNOWN_OUT
                if letter in "WX":
                    if not rest:
                        i += 1
                    break
            i += 1
            continue
        return a.run_script(args[i], state, call, local, "python script")
    if any(arg.text in ("-V", "--version", "-VV", "-h", "--help") for arg in args):
        a.add(
            ALLOW,
            "allow.version",
            f"`{call.display}` only prints a version or help text",
            local,
        )
        return _UNKNOWN_OUT
    return a.stdin_code(stdin, state, call, local, "python")


def _eval(
    a: _Analysis, call: _Call, state: _State, stdin: _Output | None, local: list[_Finding]
) -> _Output:
    if not call.args:
        return _NONE
    if all(arg.known for arg in call.args):
        # eval runs in the current shell: its assignments and `cd` carry on.
        a.run(" ".join(arg.text for arg in call.args), state)
        return _UNKNOWN_OUT
    scripts = [s for arg in call.args for s in arg.scripts]
    nature = a.nature(scripts)
    if nature.kind in _TAINTED:
        a.add(
            DENY,
            "deny.download-exec",
            f"`{call.display}` evaluates code that is downloaded or decoded at run time",
            local,
        )
    else:
        a.add(
            ASK,
            "approval.dynamic-code",
            f"`{call.display}` evaluates code built at run time, which the policy cannot see",
            local,
        )
    return _UNKNOWN_OUT


def _alias(
    a: _Analysis, call: _Call, state: _State, stdin: _Output | None, local: list[_Finding]
) -> _Output | None:
    for arg in call.args:
        _, eq, value = arg.text.partition("=")
        if eq:
            a.shell_code(
                Field(value) if arg.known else Field(UNKNOWN, scripts=arg.scripts),
                state,
                call,
                local,
            )
    return None


def _trap(
    a: _Analysis, call: _Call, state: _State, stdin: _Output | None, local: list[_Finding]
) -> _Output | None:
    _, operands = _parse_options(call.args, frozenset())
    if len(operands) >= 2 and operands[0].text != "-":
        a.shell_code(operands[0], state, call, local)
    return None


def _watch(
    a: _Analysis, call: _Call, state: _State, stdin: _Output | None, local: list[_Finding]
) -> _Output | None:
    args = call.args
    i = 0
    while i < len(args) and args[i].text.startswith("-"):
        i += 2 if args[i].text in ("-n", "--interval", "-q", "--equexit") else 1
    if i < len(args):
        joined = " ".join(arg.text for arg in args[i:])
        scripts = tuple(s for arg in args[i:] for s in arg.scripts)
        a.shell_code(Field(joined, scripts=scripts), state, call, local)
    return None


def _su(
    a: _Analysis, call: _Call, state: _State, stdin: _Output | None, local: list[_Finding]
) -> _Output | None:
    for i, arg in enumerate(call.args[:-1]):
        if arg.text in ("-c", "--command") or arg.text.startswith("--command="):
            a.shell_code(call.args[i + 1], state, call, local)
    return None


def _parallel(
    a: _Analysis, call: _Call, state: _State, stdin: _Output | None, local: list[_Finding]
) -> _Output:
    a.add(
        ASK,
        "approval.dynamic-code",
        f"`{call.display}` builds commands from its input, which the policy cannot see",
        local,
    )
    return _UNKNOWN_OUT


def _source(
    a: _Analysis, call: _Call, state: _State, stdin: _Output | None, local: list[_Finding]
) -> _Output:
    if not call.args:
        return _NONE
    script = call.args[0]
    if script.known and script.text in ("/dev/stdin", "/proc/self/fd/0"):
        return a.stdin_code(stdin, state, call, local, "shell")
    place = a.paths.classify(script, state.cwd)
    if place.kind == INSIDE and re.search(r"(^|/)bin/activate(\.\w+)?$", place.shown):
        a.add(
            ALLOW,
            "allow.venv-activate",
            f"`{call.display}` activates the project's virtual environment",
            local,
        )
        return _NONE
    return a.run_script(script, state, call, local, "shell script")


def _cd(
    a: _Analysis, call: _Call, state: _State, stdin: _Output | None, local: list[_Finding]
) -> _Output:
    operands = [
        arg for arg in call.args if not (arg.text.startswith("-") and arg.text not in ("-",))
    ]
    if call.name == "popd" or (operands and operands[0].text == "-"):
        state.change_dir(None)
    elif not operands:
        state.change_dir(a.paths.home if call.name == "cd" else None)
    else:
        place = a.paths.classify(operands[0], state.cwd)
        state.change_dir(place.absolute if place.kind != UNKNOWN_PLACE else None)
    return _NONE


def _declare(
    a: _Analysis, call: _Call, state: _State, stdin: _Output | None, local: list[_Finding]
) -> _Output:
    for arg in call.args:
        match = re.match(r"([A-Za-z_][A-Za-z0-9_]*)(\+?)=", arg.text)
        if match is None:
            continue
        name = match.group(1)
        if name in _RISKY_ENV:
            a.add(
                ASK,
                "approval.env-override",
                f"`{call.display}` sets `{name}`, which changes what programs or libraries run",
                local,
            )
        value = arg.text[match.end() :]
        state.assign(name, value if arg.known and not match.group(2) else None)
    return _NONE


def _forget(
    a: _Analysis, call: _Call, state: _State, stdin: _Output | None, local: list[_Finding]
) -> _Output:
    for arg in call.args:
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", arg.text):
            state.assign(arg.text, None)
    return _NONE


def _xargs(
    a: _Analysis, call: _Call, state: _State, stdin: _Output | None, local: list[_Finding]
) -> _Output:
    value_options = _words(
        "-I -n -L -l -P -s -d -E -a --arg-file --max-args --max-lines --max-procs --delimiter --replace --eof --max-chars --process-slot-var"
    )
    args = call.args
    i = 0
    replace: str | None = None
    while i < len(args) and args[i].text.startswith("-") and args[i].text != "-":
        text = args[i].text
        if text == "--":
            i += 1
            break
        if text in ("-I", "--replace") and i + 1 < len(args):
            replace = args[i + 1].text
        elif text.startswith("-I") and len(text) > 2:
            replace = text[2:]
        elif text.startswith("-i") or text.startswith("--replace="):
            replace = text.split("=", 1)[1] if "=" in text else (text[2:] or "{}")
        if text in ("-a", "--arg-file") and i + 1 < len(args):
            finding = a.read_finding(a.paths.classify(args[i + 1], state.cwd), call.display)
            if finding is not None:
                local.append(finding)
        i += 2 if text in value_options else 1
    command = args[i:] or [Field("echo")]
    if stdin is not None and stdin.kind == "literal" and stdin.text.split():
        items = [Field(t) for t in stdin.text.split()[:8]]
    elif stdin is not None and stdin.kind == "paths":
        items = [Field(stdin.text, len(stdin.text) - 1)]  # some path below a known directory
    else:
        items = [Field(UNKNOWN)]
    runs: list[list[Field]] = []
    if replace:
        for item in items:
            runs.append(
                [
                    Field(arg.text.replace(replace, item.text), scripts=arg.scripts)
                    for arg in command
                ]
            )
    else:
        runs.append(command + items)
    for fields in runs:
        a.launch(fields, call.display, state, None, [])
    return _UNKNOWN_OUT


def _find(
    a: _Analysis, call: _Call, state: _State, stdin: _Output | None, local: list[_Finding]
) -> _Output:
    args = call.args
    i = 0
    while i < len(args) and (
        args[i].text in ("-H", "-L", "-P") or args[i].text.startswith(("-O", "-D"))
    ):
        i += 2 if args[i].text == "-D" else 1
    roots: list[Field] = []
    while i < len(args) and not args[i].text.startswith(("-", "(", ")", "!", ",")):
        roots.append(args[i])
        i += 1
    roots = roots or [Field(".")]
    places = [(root, a.paths.classify(root, state.cwd)) for root in roots]
    # find acts on what is below its roots: `find . -delete` deletes files in the repository.
    places = [
        (
            root,
            _Place(INSIDE, p.shown.rstrip("/") + "/…", p.absolute) if p.kind == REPO_ROOT else p,
        )
        for root, p in places
    ]
    expression = args[i:]
    for _root, place in places:
        finding = a.read_finding(place, call.display)
        if finding is not None:
            local.append(finding)
    k = 0
    while k < len(expression):
        text = expression[k].text
        if text == "-delete":
            for _root, place in places:
                local.append(a.delete_finding(place, call.display, recursive=True))
        elif text in ("-fprint", "-fprint0", "-fls", "-fprintf") and k + 1 < len(expression):
            finding = a.write_finding(a.paths.classify(expression[k + 1], state.cwd), call.display)
            if finding is not None:
                local.append(finding)
        elif text in ("-exec", "-execdir", "-ok", "-okdir"):
            end = k + 1
            while end < len(expression) and expression[end].text not in (";", "+"):
                end += 1
            inner = expression[k + 1 : end]
            if inner:
                for root, _place in places[:4]:
                    a.launch(
                        [_substitute(arg, root) for arg in inner], call.display, state, None, []
                    )
            k = end
        k += 1
    if len(roots) == 1 and roots[0].known:
        return _Output("paths", roots[0].text.rstrip("/") + "/*")  # it prints paths below its root
    return _UNKNOWN_OUT


def _git(
    a: _Analysis, call: _Call, state: _State, stdin: _Output | None, local: list[_Finding]
) -> _Output | None:
    args = call.args
    i = 0
    while i < len(args) and args[i].text.startswith("-"):
        text = args[i].text
        if text == "-c" and i + 1 < len(args):
            a.add(
                ASK,
                "approval.git-config-override",
                f"`{call.display}` overrides git configuration, which can make git run programs",
                local,
            )
            _git_config_value(
                a,
                args[i + 1].text.partition("=")[2],
                args[i + 1].text.partition("=")[0],
                state,
                call,
                local,
            )
            i += 2
            continue
        if text in ("-C", "--git-dir", "--work-tree") and i + 1 < len(args):
            place = a.paths.classify(args[i + 1], state.cwd)
            if not place.in_repo:
                a.add(
                    ASK,
                    "approval.read-outside",
                    f"`{call.display}` works on `{place.shown}`, outside the repository",
                    local,
                )
            i += 2
            continue
        if text.startswith(("--git-dir=", "--work-tree=", "--config-env")):
            a.add(
                ASK,
                "approval.git-config-override",
                f"`{call.display}` points git at another repository or configuration",
                local,
            )
        i += 1
    operands = _operands("git", call.texts)
    for k, arg in enumerate(args):
        if arg.text.startswith("--output=") or (
            arg.text in ("--output", "-o")
            and operands[:1] == ["format-patch"]
            and k + 1 < len(args)
        ):
            target = Field(arg.text.split("=", 1)[1]) if "=" in arg.text else args[k + 1]
            finding = a.write_finding(a.paths.classify(target, state.cwd), call.display)
            if finding is not None:
                local.append(finding)
    if operands[:1] == ["config"] and len(operands) >= 3:
        _git_config_value(a, operands[2], operands[1], state, call, local)
    if operands[:1] == ["grep"]:
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
                a.shell_code(Field(pager), state, call, local)  # git runs it as the pager
    if operands[:2] == ["submodule", "foreach"] and len(operands) > 2:
        a.shell_code(Field(" ".join(operands[2:])), state, call, local)
    if operands[:1] in (["ls-files"], ["diff"], ["grep"]) and (
        operands[:1] == ["ls-files"] or "--name-only" in call.texts or "-l" in call.texts
    ):
        return _Output("paths", "./*")  # it prints paths inside the repository
    return None


def _git_config_value(
    a: _Analysis, value: str, key: str, state: _State, call: _Call, local: list[_Finding]
) -> None:
    if key.lower().startswith("alias.") and value.startswith("!"):
        a.shell_code(Field(value[1:]), state, call, local)
    elif key.lower() in (
        "core.sshcommand",
        "core.pager",
        "core.editor",
        "core.fsmonitor",
        "sequence.editor",
        "diff.external",
        "credential.helper",
        "gpg.program",
    ):
        a.shell_code(Field(value), state, call, local)


def _delete(
    a: _Analysis, call: _Call, state: _State, stdin: _Output | None, local: list[_Finding]
) -> _Output:
    options, operands = _parse_options(
        call.args, _words("-n -s --iterations --size --random-source --interactive")
    )
    names = {name for name, _ in options}
    recursive = call.name in ("rm", "srm", "wipe", "trash", "trash-put") and bool(
        names & {"-r", "-R", "--recursive"}
    )
    recursive = recursive or call.name == "rimraf"
    recursive = recursive or (call.name == "rmdir" and bool(names & {"-p", "--parents"}))
    for arg in operands:
        local.append(
            a.delete_finding(a.paths.classify(arg, state.cwd), call.display, recursive=recursive)
        )
    return _NONE


def _copy(
    a: _Analysis, call: _Call, state: _State, stdin: _Output | None, local: list[_Finding]
) -> _Output:
    value_options = {
        "cp": "-t -S --target-directory --suffix",
        "mv": "-t -S --target-directory --suffix",
        "install": "-m -o -g -t -S --mode --owner --group --target-directory --suffix",
        "ln": "-t -S --target-directory --suffix",
        "rsync": "-e -f -T -B -M --rsh --filter --exclude --include --exclude-from --include-from --temp-dir --partial-dir --log-file --password-file --port --chmod --chown --out-format --max-size --min-size --rsync-path --backup-dir --files-from",
        "scp": "-P -i -o -F -c -l -S -J",
    }.get(call.name, "")
    options, operands = _parse_options(call.args, frozenset(value_options.split()))
    destination: Field | None = None
    for name, value in options:
        if name in ("-t", "--target-directory") and value is not None:
            destination = value
        if name in ("--log-file",) and value is not None:
            finding = a.write_finding(a.paths.classify(value, state.cwd), call.display)
            if finding is not None:
                local.append(finding)
    sources = operands
    if destination is None and len(operands) >= 2:
        destination, sources = operands[-1], operands[:-1]
    elif destination is None and call.name == "ln" and operands:
        destination = Field(".")
    remote = re.compile(r"^[^/]*:")
    for source in sources:
        if call.name in ("rsync", "scp") and remote.match(source.text):
            continue
        place = a.paths.classify(source, state.cwd)
        if call.name == "mv" and not place.in_repo:
            local.append(a.delete_finding(place, call.display, recursive=False))
        elif call.name != "ln":
            finding = a.read_finding(place, call.display)
            if finding is not None:
                local.append(finding)
    if destination is not None and not (
        call.name in ("rsync", "scp") and remote.match(destination.text)
    ):
        finding = a.write_finding(a.paths.classify(destination, state.cwd), call.display)
        if finding is not None:
            local.append(finding)
    return _NONE


def _permissions(
    a: _Analysis, call: _Call, state: _State, stdin: _Output | None, local: list[_Finding]
) -> _Output:
    options, operands = _parse_options(
        call.args, _words("--reference -m -M -x -X --modify --remove --set")
    )
    has_reference = any(name == "--reference" for name, _ in options)
    targets = operands if has_reference or call.name in ("setfacl",) else operands[1:]
    for arg in targets:
        place = a.paths.classify(arg, state.cwd)
        if place.in_repo:
            continue
        if place.kind == UNKNOWN_PLACE:
            a.add(
                ASK,
                "approval.unknown-target",
                f"`{call.display}` changes permissions of `{place.shown}`, a path the policy cannot resolve",
                local,
            )
        elif place.kind != NULL:
            a.add(
                DENY,
                "deny.permissions-outside",
                f"`{call.display}` changes permissions or ownership of `{place.shown}`, outside the repository",
                local,
            )
    return _NONE


def _create(
    a: _Analysis, call: _Call, state: _State, stdin: _Output | None, local: list[_Finding]
) -> _Output:
    _, operands = _parse_options(
        call.args,
        _words("-m -d -t -r -s --mode --date --reference --size --context -Z"),
    )
    for arg in operands:
        finding = a.write_finding(
            a.paths.classify(arg, state.cwd), call.display, creates=call.name != "truncate"
        )
        if finding is not None:
            local.append(finding)
    if call.name == "truncate" and not local:
        a.add(ASK, "approval.write-in-repo", f"`{call.display}` truncates files", local)
    return _NONE


def _tee(
    a: _Analysis, call: _Call, state: _State, stdin: _Output | None, local: list[_Finding]
) -> _Output:
    _, operands = _parse_options(call.args, _words("--output-error"))
    for arg in operands:
        finding = a.write_finding(a.paths.classify(arg, state.cwd), call.display)
        if finding is not None:
            local.append(finding)
    return _Output("passthrough")


def _dd(
    a: _Analysis, call: _Call, state: _State, stdin: _Output | None, local: list[_Finding]
) -> _Output:
    for arg in call.args:
        key, eq, value = arg.text.partition("=")
        if not eq:
            continue
        target = Field(value) if arg.known else Field(UNKNOWN)
        if key == "of":
            finding = a.write_finding(a.paths.classify(target, state.cwd), call.display)
            if finding is not None:
                local.append(finding)
        elif key == "if":
            finding = a.read_finding(a.paths.classify(target, state.cwd), call.display)
            if finding is not None:
                local.append(finding)
    return _UNKNOWN_OUT


def _make(
    a: _Analysis, call: _Call, state: _State, stdin: _Output | None, local: list[_Finding]
) -> _Output | None:
    overrides = [t for t in _operands(call.name, call.texts) if re.match(r"[A-Za-z_][\w.]*\??=", t)]
    if overrides:
        a.add(
            ASK,
            "approval.env-override",
            f"`{call.display}` overrides make variables (`{overrides[0]}`), which can change the commands it runs",
            local,
        )
    return None


def _coverage(
    a: _Analysis, call: _Call, state: _State, stdin: _Output | None, local: list[_Finding]
) -> _Output | None:
    """`coverage run -m pytest` runs pytest; `coverage run script.py` runs a script."""
    args = call.args
    if _operands(call.name, call.texts)[:1] != ["run"]:
        return None
    i = next(k for k, arg in enumerate(args) if arg.text == "run") + 1
    value_options = _words("--rcfile --source --include --omit --concurrency --context --data-file")
    while i < len(args) and args[i].text.startswith("-") and args[i].text != "-m":
        i += 2 if args[i].text in value_options else 1
    if i < len(args) and args[i].text == "-m" and i + 1 < len(args):
        a.invoke(_Call(_canonical(args[i + 1].text), args[i + 2 :], call.display), state, stdin)
        return _UNKNOWN_OUT
    if i < len(args):
        return a.run_script(args[i], state, call, local, "python script")
    return None


def _fd(
    a: _Analysis, call: _Call, state: _State, stdin: _Output | None, local: list[_Finding]
) -> _Output | None:
    """`fd PATTERN PATH -x CMD`: CMD runs for every path found below PATH."""
    args = call.args
    at = next(
        (k for k, arg in enumerate(args) if arg.text in ("-x", "--exec", "-X", "--exec-batch")),
        None,
    )
    if at is None:
        return None
    _, operands = _parse_options(args[:at], _VALUE_OPTIONS["fd"])
    root = operands[1] if len(operands) > 1 else Field(".")
    command = [arg for arg in args[at + 1 :] if arg.text != ";"]
    if command:
        if not any("{" in arg.text for arg in command):
            command = [*command, Field("{}")]
        fields = [
            _substitute(Field(arg.text.replace("{/}", "{}").replace("{.}", "{}")), root)
            for arg in command
        ]
        a.launch(fields, call.display, state, None, [])
    return None


def _sed(
    a: _Analysis, call: _Call, state: _State, stdin: _Output | None, local: list[_Finding]
) -> _Output | None:
    args = call.args
    in_place = any(
        arg.text.startswith("-i")
        or arg.text.startswith("--in-place")
        or (
            re.fullmatch(r"-[a-zA-Z]+", arg.text) is not None
            and "i" in arg.text[1:]
            and not arg.text.startswith("--")
        )
        for arg in args
    )
    options, operands = _parse_options(
        [arg for arg in args if not arg.text.startswith(("-i", "--in-place"))],
        _VALUE_OPTIONS["sed"],
    )
    scripts = [v.text for name, v in options if name in ("-e", "--expression") and v is not None]
    files = operands
    if not scripts and not any(name in ("-f", "--file") for name, _ in options) and operands:
        scripts, files = [operands[0].text], operands[1:]
    for script in scripts:
        for command in re.findall(r"(?:^|[;\n])\s*[0-9,$]*\s*e\s+([^;\n]+)", script):
            a.shell_code(Field(command), state, call, local)
        if _SED_EFFECTS.search(script):
            a.add(
                ASK,
                "approval.program-effects",
                f"`{call.display}` has a sed script that writes files or runs commands",
                local,
            )
    for arg in files:
        place = a.paths.classify(arg, state.cwd)
        finding = (
            a.write_finding(place, call.display)
            if in_place
            else a.read_finding(place, call.display)
        )
        if finding is not None:
            local.append(finding)
    return None


def _awk(
    a: _Analysis, call: _Call, state: _State, stdin: _Output | None, local: list[_Finding]
) -> _Output | None:
    options, operands = _parse_options(call.args, _VALUE_OPTIONS.get(call.name, frozenset()))
    if any(name in ("-f", "--file") for name, _ in options):
        a.add(
            ASK,
            "approval.run-script",
            f"`{call.display}` runs an awk program from a file, which the policy cannot see into",
            local,
        )
        return None
    if operands:
        for command in re.findall(r"\bsystem\s*\(\s*\"((?:[^\"\\]|\\.)*)\"", operands[0].text):
            a.shell_code(Field(_unescape(command)), state, call, local)
    if operands and _AWK_EFFECTS.search(operands[0].text):
        a.add(
            ASK,
            "approval.program-effects",
            f"`{call.display}` has an awk program that runs commands or writes files",
            local,
        )
    return None


def _tar(
    a: _Analysis, call: _Call, state: _State, stdin: _Output | None, local: list[_Finding]
) -> _Output:
    args = call.args
    if args and args[0].known and re.fullmatch(r"[A-Za-z]+", args[0].text):
        args[0] = Field("-" + args[0].text)  # `tar czf x.tgz dir` means `tar -czf x.tgz dir`
    options, operands = _parse_options(
        args,
        _words(
            "-f -C --file --directory -T -X --files-from --exclude-from -b -H --format -I --use-compress-program"
        ),
    )
    names = {name for name, _ in options}
    archive = next((v for name, v in options if name in ("-f", "--file") and v is not None), None)
    directory = next(
        (v for name, v in options if name in ("-C", "--directory") and v is not None), None
    )
    if names & {"-c", "--create", "-r", "--append", "-u", "--update", "-A"} and archive is not None:
        finding = a.write_finding(a.paths.classify(archive, state.cwd), call.display)
        if finding is not None:
            local.append(finding)
        for arg in operands:
            finding = a.read_finding(a.paths.classify(arg, state.cwd), call.display)
            if finding is not None:
                local.append(finding)
    if names & {"-x", "--extract", "--get"}:
        where = (
            a.paths.classify(directory, state.cwd)
            if directory is not None
            else a.paths.classify(Field("."), state.cwd)
        )
        finding = a.write_finding(where, call.display) or _Finding(
            ASK, "approval.archive", f"`{call.display}` extracts an archive, writing files"
        )
        local.append(finding)
        if archive is not None:
            finding = a.read_finding(a.paths.classify(archive, state.cwd), call.display)
            if finding is not None:
                local.append(finding)
    return _UNKNOWN_OUT


def _kill(
    a: _Analysis, call: _Call, state: _State, stdin: _Output | None, local: list[_Finding]
) -> _Output | None:
    texts = call.texts
    i = 0
    if texts and texts[0] in ("-s", "-n", "--signal"):
        i = 2
    elif texts and texts[0].startswith("-") and texts[0] != "--" and texts[0] not in ("-l", "-L"):
        i = 1
    rest = texts[i:]
    if rest[:1] == ["--"]:
        rest = rest[1:]
    if any(t in ("-1", "1") for t in rest):
        a.add(
            DENY,
            "deny.kill-all",
            f"`{call.display}` signals every process the user owns (or init), which can take the machine down",
            local,
        )
    return None


def _download(
    a: _Analysis, call: _Call, state: _State, stdin: _Output | None, local: list[_Finding]
) -> _Output:
    a.marks.add("network")
    options, operands = _parse_options(call.args, _DOWNLOAD_OPTIONS.get(call.name, frozenset()))
    writes: list[Field] = []
    if call.name == "curl":
        writes = [
            v
            for n, v in options
            if n
            in (
                "-o",
                "--output",
                "-D",
                "--dump-header",
                "-c",
                "--cookie-jar",
                "--trace",
                "--trace-ascii",
                "--stderr",
                "--libcurl",
            )
            and v is not None
            and v.text != "-"
        ]
        if any(n in ("-O", "--remote-name", "--remote-name-all") for n, _ in options):
            writes += [Field(_url_basename(u.text) or UNKNOWN) for u in operands]
    elif call.name == "wget":
        document = [v for n, v in options if n in ("-O", "--output-document") and v is not None]
        writes = [v for v in document if v.text != "-"]
        writes += [
            v
            for n, v in options
            if n in ("-o", "--output-file", "-a", "--append-output") and v is not None
        ]
        if not document:
            prefix = next(
                (v.text for n, v in options if n in ("-P", "--directory-prefix") and v is not None),
                "",
            )
            writes += [
                Field(posixpath.join(prefix, _url_basename(u.text) or "index.html"))
                for u in operands
                if u.known
            ]
    for target in writes:
        place = a.paths.classify(target, state.cwd)
        finding = a.write_finding(place, call.display)
        if finding is not None:
            local.append(finding)
        if place.absolute is not None:
            state.downloaded.add(place.absolute)
    return _Output("download")


def _netcat(
    a: _Analysis, call: _Call, state: _State, stdin: _Output | None, local: list[_Finding]
) -> _Output:
    a.marks.add("network")
    texts = call.texts
    if call.name in ("nc", "ncat", "netcat") and any(
        t in ("-e", "-c", "--exec", "--sh-exec", "--lua-exec")
        or t.startswith(("--exec=", "--sh-exec="))
        for t in texts
    ):
        a.add(
            DENY,
            "deny.reverse-shell",
            f"`{call.display}` connects a program's input and output to the network (a reverse shell)",
            local,
        )
    if call.name == "socat" and any(
        re.search(r"(^|[,:])(exec|system):", t, re.IGNORECASE) for t in texts
    ):
        a.add(
            DENY,
            "deny.reverse-shell",
            f"`{call.display}` connects a program to a network socket (a reverse shell)",
            local,
        )
    return _Output("download")


def _ssh(
    a: _Analysis, call: _Call, state: _State, stdin: _Output | None, local: list[_Finding]
) -> _Output:
    a.marks.add("network")
    _, operands = _parse_options(
        call.args,
        _words("-p -i -l -o -F -J -L -R -D -b -c -E -e -I -m -O -Q -S -W -w -B"),
    )
    if len(operands) > 1:
        remote = " ".join(arg.text for arg in operands[1:])
        inner = state.copy()
        inner.cwd = None  # paths on the remote machine are not this repository's
        if all(arg.known for arg in operands[1:]):
            a.run(remote, inner)
    return _Output("download")


def _printenv(
    a: _Analysis, call: _Call, state: _State, stdin: _Output | None, local: list[_Finding]
) -> _Output:
    return _ENVIRONMENT


def _decoder(
    a: _Analysis, call: _Call, state: _State, stdin: _Output | None, local: list[_Finding]
) -> _Output | None:
    texts = call.texts
    decoding = {
        "base64": ("-d", "--decode", "-D"),
        "base32": ("-d", "--decode"),
        "basenc": ("-d", "--decode"),
        "xxd": ("-r", "-revert"),
        "openssl": ("-d", "-base64", "base64", "-a"),
        "gzip": ("-d", "--decompress", "-dc", "-cd"),
        "bzip2": ("-d", "--decompress", "-dc", "-cd"),
        "xz": ("-d", "--decompress", "-dc", "-cd"),
        "zstd": ("-d", "--decompress", "-dc", "-cd"),
    }.get(call.name)
    if decoding is None or any(t in decoding for t in texts):
        return _Output("decoded")
    return None


def _echo(
    a: _Analysis, call: _Call, state: _State, stdin: _Output | None, local: list[_Finding]
) -> _Output | None:
    args = list(call.args)
    escapes = False
    while args and re.fullmatch(r"-[neE]+", args[0].text):
        escapes = escapes or "e" in args[0].text
        args = args[1:]
    if not all(arg.known for arg in args):
        nature = a.nature(s for arg in args for s in arg.scripts)
        return nature if nature.kind in _TAINTED else None
    text = " ".join(arg.text for arg in args)
    if escapes and re.search(r"\\(x[0-9a-fA-F]|[0-7]|0[0-7]|u[0-9a-fA-F])", text):
        return _Output("decoded")
    return _Output("literal", text + "\n")


def _printf(
    a: _Analysis, call: _Call, state: _State, stdin: _Output | None, local: list[_Finding]
) -> _Output | None:
    args = [arg for arg in call.args if arg.text != "--"]
    if args and args[0].text == "-v":
        if len(args) > 1:
            state.assign(args[1].text, None)
        return _NONE
    if not args or not all(arg.known for arg in args):
        return None
    fmt, values = args[0].text, [arg.text for arg in args[1:]]
    if "%b" in fmt or re.search(r"\\(x[0-9a-fA-F]|[0-7]|u[0-9a-fA-F])", fmt):
        return _Output("decoded")
    if "%" not in fmt and not values:
        return _Output("literal", fmt.replace("\\n", "\n").replace("\\t", "\t"))
    if fmt in ("%s", "%s\\n", "%s\\n\\n") and values:
        return _Output("literal", "\n".join(values) + "\n")
    return None


def _cat(
    a: _Analysis, call: _Call, state: _State, stdin: _Output | None, local: list[_Finding]
) -> _Output | None:
    operands = [arg for arg in call.args if not arg.text.startswith("-") or arg.text == "-"]
    if not operands or [arg.text for arg in operands] == ["-"]:
        return _Output("passthrough")
    for arg in operands:
        place = a.paths.classify(arg, state.cwd)
        if place.absolute is not None and place.absolute in state.downloaded:
            return _Output("download")
    return None


Handler = Callable[[_Analysis, _Call, _State, _Output | None, list[_Finding]], _Output | None]


def _handlers() -> dict[str, Handler]:
    """Which commands have their own semantics; a handler returns what the command prints."""
    table: dict[str, Handler] = {
        "eval": _eval,
        "alias": _alias,
        "trap": _trap,
        "watch": _watch,
        "su": _su,
        "xargs": _xargs,
        "find": _find,
        "git": _git,
        "tee": _tee,
        "dd": _dd,
        "sed": _sed,
        "tar": _tar,
        "kill": _kill,
        "ssh": _ssh,
        "echo": _echo,
        "printf": _printf,
        "cat": _cat,
        "python": _python,
        "parallel": _parallel,
        "make": _make,
        "coverage": _coverage,
        "fd": _fd,
        "fdfind": _fd,
        "printenv": _printenv,
    }
    families: tuple[tuple[Iterable[str], Handler], ...] = (
        (_SHELLS, _shell),
        (_INTERPRETERS, _interpreter),
        (_RUNNERS, _runner),
        (_words("rm rmdir unlink shred srm wipe trash trash-put rimraf"), _delete),
        (_words("cp mv install ln link rsync scp"), _copy),
        (_words("chmod chown chgrp chattr setfacl chflags"), _permissions),
        (_words("touch mkdir mkfifo truncate"), _create),
        (_words("cd pushd popd"), _cd),
        (_words("export declare typeset local readonly"), _declare),
        (_words("read mapfile readarray getopts unset"), _forget),
        (("source", "."), _source),
        (_words("curl wget fetch aria2c http https xh"), _download),
        (_words("nc ncat netcat socat telnet"), _netcat),
        (_words("awk gawk mawk nawk"), _awk),
        (_DECODERS, _decoder),
    )
    for names, handler in families:
        for name in names:
            table.setdefault(name, handler)
    return table


# Options whose value is a file the tool writes (`sort -o FILE`, `tree -o FILE`).
_WRITE_OPTIONS: dict[str, frozenset[str]] = {
    "sort": _words("-o --output"),
    "tree": _words("-o"),
    "iconv": _words("-o --output"),
    "base64": _words("-o --output"),
    "xmllint": _words("--output -o"),
    "cloc": _words("--out --report-file"),
    "ruff": _words("-o --output-file"),
    "eslint": _words("-o --output-file"),
    "jest": _words("--outputFile"),
    "vitest": _words("--outputFile"),
    "mypy": _words("--junit-xml --cache-dir"),
    "pytest": _words("--junitxml --junit-xml --resultlog --report-log"),
    "strace": _words("-o"),
    "ltrace": _words("-o"),
    "time": _words("-o --output"),
}
# Options whose value is a directory the tool empties first (pytest deletes its --basetemp).
_DELETE_OPTIONS: dict[str, frozenset[str]] = {"pytest": _words("--basetemp")}
# The operand a tool writes its output to (`uniq IN OUT`, `xxd -r IN OUT`).
_OUTPUT_OPERAND: dict[str, int] = {"uniq": 1, "xxd": 1}

# Options whose value is a command the tool runs (checked like `sh -c`).
_COMMAND_OPTIONS: dict[str, frozenset[str]] = {
    "ssh": _words("-o"),
    "scp": _words("-o"),
    "sftp": _words("-o"),
    "rsync": _words("-e --rsh"),
    "tar": _words(
        "--to-command --use-compress-program -I --info-script --new-volume-script -F --checkpoint-action"
    ),
    "rg": _words("--pre"),
    "flock": _words("-c --command"),
    "compgen": _words("-C"),
    "complete": _words("-C"),
}

_DOWNLOAD_OPTIONS = {
    "curl": _words(
        "-o --output -D --dump-header -c --cookie-jar --trace --trace-ascii --stderr --libcurl -K --config "
        "-T --upload-file -d --data --data-binary --data-urlencode --data-raw -F --form -H --header -X "
        "--request -u --user -A --user-agent -e --referer -x --proxy -w --write-out --output-dir -m "
        "--max-time --connect-timeout --retry -r --range --cacert --cert --key -b --cookie -E -Y -y -z --url"
    ),
    "wget": _words(
        "-O --output-document -P --directory-prefix -o --output-file -a --append-output --post-file "
        "--body-file --post-data -i --input-file -T --timeout -t --tries -U --user-agent --header --user "
        "--password -e --execute -w --wait -Q --quota -l --level -A -R --accept --reject -D --domains"
    ),
}


def _substitute(arg: Field, root: Field) -> Field:
    """`{}` in a find -exec command stands for a path below the search root."""
    if "{}" not in arg.text:
        return arg
    base = root.text.rstrip("/") if root.known else UNKNOWN
    placeholder = base + "/*"
    at = arg.text.index("{}")
    glob_at = at + len(base) + 1 if root.known else -1
    return Field(arg.text.replace("{}", placeholder), glob_at, arg.scripts)


def _url_basename(url: str) -> str:
    path = url.split("?", 1)[0].split("#", 1)[0].rstrip("/")
    if "://" in path:
        path = path.split("://", 1)[1]
        if "/" not in path:
            return ""
    return path.rsplit("/", 1)[-1]


def _expand_home(text: str, home: str) -> str:
    return home + text[1:] if text == "~" or text.startswith("~/") else text


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def _calls_itself_concurrently(function: FunctionDef) -> bool:
    """True when a function calls itself in a pipe or in the background: a fork bomb."""
    name = function.name

    def calls(command: Command) -> bool:
        if isinstance(command, SimpleCommand):
            return bool(command.words) and command.words[0].literal() == name
        return False

    def walk(command: Command) -> bool:
        if isinstance(command, Group):
            return walk_script(command.body)
        if isinstance(command, If):
            return any(walk_script(c) or walk_script(b) for c, b in command.branches) or (
                command.else_body is not None and walk_script(command.else_body)
            )
        if isinstance(command, (Loop,)):
            return walk_script(command.condition) or walk_script(command.body)
        if isinstance(command, For):
            return walk_script(command.body)
        if isinstance(command, Case):
            return any(walk_script(arm.body) for arm in command.arms)
        return False

    def walk_script(script: Script) -> bool:
        for item in script.items:
            for pipeline in item.command.pipelines:
                if len(pipeline.commands) > 1 and any(calls(c) for c in pipeline.commands):
                    return True
                if item.background and any(calls(c) for c in pipeline.commands):
                    return True
                if any(walk(c) for c in pipeline.commands):
                    return True
        return False

    return walk(function.body)


_STRING_LITERAL = re.compile(r"""(['"`])((?:\\.|(?!\1).)*)\1""", re.S)
_LIST_LITERAL = re.compile(r"""\[\s*(?:(?:'[^']*'|"[^"]*")\s*,\s*)+(?:'[^']*'|"[^"]*")\s*,?\s*\]""")
_EXEC_CODE = re.compile(
    r"os\.system|os\.popen|os\.exec|subprocess|Popen|check_output|check_call|\bsystem\s*\(|\bexec\s*\(|"
    r"\bspawn|child_process|execSync|execFile|\bqx|%x|IO\.popen|Kernel\.|`|shell_exec|passthru|proc_open|"
    r"Runtime\.getRuntime|\bpty\.|\bsh\(|do shell script"
)
_TREE_DELETE = re.compile(
    r"\b(?:rmtree|rm_rf|rm_r|remove_tree|rmSync|rmdirSync|rimraf(?:\.sync)?|removedirs|delete_tree|remove_dir_all|FileUtils\.rm_rf|rm\s*-rf)\s*\(?\s*(?P<arg>[^)\n;]*)"
)
_FILE_DELETE = re.compile(
    r"\b(?:os\.remove|os\.unlink|unlinkSync|unlink|File\.delete|FileUtils\.rm|os\.rmdir)\s*\(\s*(?P<arg>[^)\n;]*)"
)
_HOME_CODE = re.compile(
    r"expanduser|Path\.home|environ\[.HOME|getenv\(.HOME|ENV\[.HOME|homedir\(|\$HOME|\bHOME\b"
)
_WRITE_CODE = re.compile(
    r"""open\([^)]*,\s*['"][wax+]|write_text|write_bytes|writeFile|File\.write|>>?\s*['"]/|truncate"""
)
_CODE_DENY: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (
        re.compile(
            r"\.ssh\b|\.gnupg\b|\.aws[/\\]credentials|\.netrc\b|\.git-credentials|/etc/g?shadow\b|/etc/sudoers|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|\.kube/config|\.docker/config\.json|\.password-store"
        ),
        "deny.read-secret",
        "touches credentials or secrets (SSH keys, cloud credentials, password files)",
    ),
    (
        re.compile(
            r"\bfork\b[^;\n]{0,20}\b(?:while|until|for)\b|\b(?:while|loop|for)\b[^\n]{0,40}(?:\n[^\n]{0,80}){0,2}?\bfork\b|os\.fork\(\)[^\n]{0,40}os\.fork\(\)"
        ),
        "deny.fork-bomb",
        "forks processes in a loop (a fork bomb)",
    ),
    (
        re.compile(
            r"(?=.*\b(?:exec|eval|system|popen|Function|spawn|execSync|child_process)\b)(?=.*(?:b64decode|base64|decodebytes|fromhex|unhexlify|\batob\b|Buffer\.from\([^)]*['\"](?:base64|hex)|unpack\(['\"][mu]|zlib\.decompress|marshal\.loads|codecs\.decode|rot13|\\x[0-9a-fA-F]{2}(?:\\x[0-9a-fA-F]{2}){7}))",
            re.S,
        ),
        "deny.obfuscated-code",
        "decodes hidden code and runs it",
    ),
    (
        re.compile(
            r"(?=.*\b(?:exec|eval|system|popen|spawn|execSync|Function)\s*\()(?=.*(?:urlopen|urllib|requests\.(?:get|post)|http\.client|httpx|\bfetch\(|Net::HTTP|open-uri|LWP::|HTTP::Tiny|\bcurl\b|\bwget\b))",
            re.S,
        ),
        "deny.download-exec",
        "downloads code and runs it",
    ),
    (
        re.compile(
            r"(?=.*\bsocket\b)(?=.*(?:subprocess|pty\.spawn|os\.dup2|/bin/(?:ba)?sh|\bexec\b|cmd\.exe))",
            re.S,
        ),
        "deny.reverse-shell",
        "connects a shell to a network socket (a reverse shell)",
    ),
)
# sed commands that write files (w, W) or run them (e), including the s///w and s///e flags.
_SED_EFFECTS = re.compile(
    r"(?:^|[;{}\n]|\d|\$|/)\s*[wWe](?:\s|$)|s(.)(?:(?!\1).)*\1(?:(?!\1).)*\1[gpIiMm0-9]*[we]"
)
# awk programs that run commands (system, pipes) or write files (print > "file").
_AWK_EFFECTS = re.compile(
    r"\bsystem\s*\(|(?<!\|)\|(?!\|)|\b(?:print|printf)\b[^;}]*?>{1,2}\s*[\"$a-zA-Z(]"
)


_HANDLERS = _handlers()


# --- policy.toml ----------------------------------------------------------------------------

_TOML_RULE_KEYS: dict[str, str] = {
    "id": 'a string such as "deny.terraform-destroy"',
    "verdict": '"allow", "require_approval" or "deny"',
    "command": "a program name or a list of names (globs allowed)",
    "reason": "a string",
    "subcommand": "a string or a list of strings",
    "args_any": "a list of strings",
    "args_all": "a list of strings",
    "args_none": "a list of strings",
    "flags_any": "a list of strings",
    "max_operands": "a whole number of 0 or more",
}
_TOML_TOP_KEYS = {"rule": "[[rule]] tables", "version": "the number 1"}


@dataclass
class PolicyRules:
    """The rules one policy decides with: the built-in table plus a repository's additions."""

    defaults: tuple[Rule, ...] = DEFAULT_RULES
    repo: tuple[Rule, ...] = ()
    allow_repo_loosening: bool = False
    source: Path | None = None

    @classmethod
    def load(cls, repo_root: Path, *, allow_repo_loosening: bool = False) -> PolicyRules:
        path = Path(repo_root) / POLICY_FILE
        if not path.is_file():
            return cls(allow_repo_loosening=allow_repo_loosening)
        return cls(
            repo=load_policy_file(path), allow_repo_loosening=allow_repo_loosening, source=path
        )


def load_policy_file(path: Path) -> tuple[Rule, ...]:
    """The rules of one policy.toml; PolicyConfigError (one line) when it is malformed."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise PolicyConfigError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise PolicyConfigError(f"{path}: is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise PolicyConfigError(f"{path}: is not valid TOML ({_one_line(str(exc))})") from None
    for key in data:
        if key not in _TOML_TOP_KEYS:
            allowed = ", ".join(f"'{k}' ({v})" for k, v in _TOML_TOP_KEYS.items())
            raise PolicyConfigError(f"{path}: unknown top-level key '{key}'; allowed: {allowed}")
    if "version" in data and data["version"] != 1:
        raise PolicyConfigError(
            f"{path}: key 'version' is {data['version']!r}; allowed: the number 1"
        )
    raw_rules = data.get("rule", [])
    if not isinstance(raw_rules, list) or not all(isinstance(r, dict) for r in raw_rules):
        raise PolicyConfigError(
            f"{path}: key 'rule' is not an array of tables; allowed: [[rule]] tables"
        )
    rules: list[Rule] = []
    seen: set[str] = set()
    for number, raw in enumerate(raw_rules, start=1):
        rule = _rule_from_toml(path, number, raw)
        if rule.id in seen:
            raise PolicyConfigError(
                f"{path}: [[rule]] #{number} key 'id': {rule.id!r} is used by an earlier rule; allowed: a unique id"
            )
        seen.add(rule.id)
        rules.append(rule)
    return tuple(rules)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _rule_from_toml(path: Path, number: int, raw: dict[str, Any]) -> Rule:
    where = f"{path}: [[rule]] #{number}"

    def fail(key: str, problem: str) -> PolicyConfigError:
        return PolicyConfigError(f"{where} key '{key}' {problem}; allowed: {_TOML_RULE_KEYS[key]}")

    for key in raw:
        if key not in _TOML_RULE_KEYS:
            allowed = ", ".join(_TOML_RULE_KEYS)
            return_error = PolicyConfigError(
                f"{where} has unknown key '{key}'; allowed keys: {allowed}"
            )
            raise return_error
    for key in ("id", "verdict", "command"):
        if key not in raw:
            raise fail(key, "is missing")

    def text(key: str) -> str:
        value = raw[key]
        if not isinstance(value, str) or not value.strip():
            raise fail(key, f"is {value!r}")
        return value.strip()

    def texts(key: str, *, single: bool = False) -> tuple[str, ...]:
        value = raw.get(key, [])
        if single and isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            raise fail(key, f"is {value!r}")
        return tuple(v.strip() for v in value)

    verdict_name = text("verdict")
    verdict = _VERDICT_NAMES.get(verdict_name)
    if verdict is None:
        raise fail("verdict", f"is {verdict_name!r}")
    max_operands = raw.get("max_operands")
    if max_operands is not None and (
        isinstance(max_operands, bool) or not isinstance(max_operands, int) or max_operands < 0
    ):
        raise fail("max_operands", f"is {max_operands!r}")
    commands = texts("command", single=True)
    if not commands:
        raise fail("command", "is empty")
    rule_id = text("id")
    reason = (
        text("reason")
        if "reason" in raw
        else f"is covered by the repository's policy rule {rule_id}"
    )
    flags = tuple(f.lstrip("-") for f in texts("flags_any"))
    return Rule(
        id=rule_id,
        verdict=verdict,
        reason=reason,
        command=tuple(_canonical(c.rsplit("/", 1)[-1]) for c in commands),
        subcommand=texts("subcommand", single=True),
        args_any=texts("args_any"),
        args_all=texts("args_all"),
        args_none=texts("args_none"),
        flags_any=flags,
        max_operands=max_operands,
    )


# --- the public class -----------------------------------------------------------------------


class CommandPolicy:
    """Decides, in Python, whether a shell command may run in one repository."""

    def __init__(self, repo_root: Path, rules: PolicyRules | None = None) -> None:
        self.repo_root = Path(repo_root).resolve()
        self.rules = rules if rules is not None else PolicyRules()
        home = os.path.realpath(os.path.expanduser("~")) or "/"
        self.paths = _Paths(str(self.repo_root), home.rstrip("/") or "/")
        #: Repository rules that were ignored, and why (one line each).
        self.warnings: list[str] = []
        if not self.rules.allow_repo_loosening:
            for rule in self.rules.repo:
                if rule.verdict == ALLOW:
                    self.warn(
                        f"policy.toml rule {rule.id!r} allows commands, which can only loosen the "
                        "defaults; ignored (set POLICY_ALLOW_REPO_LOOSENING=true to honour it)"
                    )

    @classmethod
    def load(cls, repo_root: Path, *, allow_repo_loosening: bool = False) -> CommandPolicy:
        """The default rules plus `<repo_root>/.smol-instruments/policy.toml`, if present."""
        return cls(
            repo_root, PolicyRules.load(Path(repo_root), allow_repo_loosening=allow_repo_loosening)
        )

    def warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)
            log.warning("%s", message)

    def verdict(self, command: str) -> PolicyDecision:
        """The decision for one shell command; never raises."""
        try:
            return self._decide(command if isinstance(command, str) else str(command))
        except Exception:  # the policy must answer; a bug in it refuses, so --yes cannot pass it
            log.exception("command policy failed on %r", command)
            return PolicyDecision(
                str(command),
                DENY,
                "deny.policy-error",
                "the policy failed while analysing this command, so it is refused; "
                "run something simpler",
            )

    def _decide(self, command: str) -> PolicyDecision:
        if "\x00" in command:
            return PolicyDecision(
                command,
                ASK,
                "approval.unparseable",
                "the command contains a NUL byte, which a shell cannot run as written",
            )
        if len(command) > MAX_COMMAND_CHARS:
            return PolicyDecision(
                command,
                ASK,
                "approval.unparseable",
                f"the command is {len(command)} characters long, too long for the policy to check",
            )
        analysis = _Analysis(self)
        state = _State(env={}, cwd=str(self.repo_root))
        try:
            analysis.run(command, state)
        except RecursionError:
            analysis.add(
                ASK,
                "approval.unparseable",
                f"`{_short(command)}` nests too deeply for the policy to follow",
            )
        decisive = _strictest(analysis.findings)
        if decisive is None and not any(
            line.split("#", 1)[0].strip() for line in command.splitlines()
        ):
            return PolicyDecision(
                command, ALLOW, "allow.empty", "the command is empty: there is nothing to run"
            )
        if decisive is None:
            return PolicyDecision(
                command,
                ALLOW,
                "allow.no-effect",
                f"`{_short(command)}` runs nothing the policy needs to check",
            )
        return PolicyDecision(command, decisive.verdict, decisive.rule, decisive.reason)
