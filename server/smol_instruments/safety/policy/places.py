"""Where a path points, and what doing something there means: the effect × place table.

`Paths` classifies a path argument (after `cd`, `..`, `~` and symlinks) as one place: inside
the repository, its root, `.git`, `.git/hooks`, a temporary directory, the home directory, a
system directory, a device, a secret, a network socket, or unknown. `MATRIX` says which rule a
read, write, create, delete, recursive delete or permission change gets in each place; "" is
no finding (the program's own rule decides).
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
import re
from dataclasses import dataclass
from enum import Enum

from ..shell import UNKNOWN, Field
from .tables import names

INSIDE = "inside"
REPO_ROOT = "repo-root"
GIT_ITSELF = "git-itself"  # the `.git` directory itself
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
IN_REPO = frozenset({INSIDE, REPO_ROOT, GIT_ITSELF, GIT_DIR, GIT_HOOKS})


class Effect(Enum):
    """What a command does to a path; the value is the verb a reason uses."""

    READ = "reads"
    WRITE = "writes"
    CREATE = "creates"
    DELETE = "deletes"
    RECURSIVE_DELETE = "recursively deletes"
    PERMISSIONS = "changes permissions or ownership of"


_ = ""  # no finding: the program's own rule decides
# fmt: off
#: place -> the rule for (read, write, create, delete, recursive delete, permissions).
MATRIX: dict[str, tuple[str, str, str, str, str, str]] = {
    INSIDE:        (_, "approval.write-in-repo", _, "approval.delete-in-repo", "approval.delete-in-repo", _),
    REPO_ROOT:     (_, "approval.write-in-repo", _, "approval.delete-in-repo", "deny.delete-repo", _),
    GIT_ITSELF:    (_, "approval.write-git-dir", "approval.write-git-dir", "approval.delete-in-repo", "deny.delete-repo", _),
    GIT_DIR:       (_, "approval.write-git-dir", "approval.write-git-dir", "approval.delete-in-repo", "approval.delete-in-repo", _),
    GIT_HOOKS:     (_, "deny.write-git-hooks", "deny.write-git-hooks", "approval.delete-in-repo", "approval.delete-in-repo", _),
    NULL:          (_, _, _, "deny.delete-outside", "deny.recursive-delete-outside", _),
    NETWORK:       ("approval.network", "approval.network", "approval.network", "deny.delete-outside", "deny.recursive-delete-outside", "deny.permissions-outside"),
    DEVICE:        ("deny.read-device", "deny.write-device", "deny.write-device", "deny.delete-outside", "deny.recursive-delete-outside", "deny.permissions-outside"),
    SECRET:        ("deny.read-secret", "deny.write-outside", "deny.write-outside", "deny.delete-outside", "deny.recursive-delete-outside", "deny.permissions-outside"),
    ROOT:          ("approval.read-outside", "deny.write-system", "deny.write-system", "deny.delete-outside", "deny.recursive-delete-root", "deny.permissions-outside"),
    HOME:          ("approval.read-outside", "deny.write-outside", "deny.write-outside", "deny.delete-outside", "deny.recursive-delete-home", "deny.permissions-outside"),
    TEMP:          ("approval.read-outside", "approval.write-temp", "approval.write-temp", "deny.delete-outside", "deny.recursive-delete-outside", "deny.permissions-outside"),
    SYSTEM:        ("approval.read-outside", "deny.write-system", "deny.write-system", "deny.delete-outside", "deny.recursive-delete-outside", "deny.permissions-outside"),
    OUTSIDE:       ("approval.read-outside", "deny.write-outside", "deny.write-outside", "deny.delete-outside", "deny.recursive-delete-outside", "deny.permissions-outside"),
    UNKNOWN_PLACE: ("approval.unknown-target", "approval.unknown-target", "approval.unknown-target", "approval.unknown-target", "approval.unknown-target", "approval.unknown-target"),
}
# fmt: on
_COLUMNS = {effect: i for i, effect in enumerate(Effect)}


def rule_for(effect: Effect, kind: str) -> str:
    """The rule id for `effect` on a place of `kind`, or "" for none."""
    return MATRIX[kind][_COLUMNS[effect]]


_NULL_DEVICES = names(
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
_SYSTEM_DIRS = names(
    "/etc /usr /bin /sbin /lib /lib32 /lib64 /libx32 /boot /proc /sys /var /opt /root /srv /snap "
    "/run /System /Library /Applications /private /nix /mnt /media /home /Users /Volumes /cores /efi /dev"
)
_SECRET_DIRS = names(
    ".ssh .gnupg .aws .azure .kube .password-store .docker .gcloud .vault-token .terraform.d"
)
_SECRET_FILES = names(
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
class Place:
    """Where a path argument points: one of the kinds above, and how to show it."""

    kind: str
    shown: str
    absolute: str | None = None

    @property
    def in_repo(self) -> bool:
        return self.kind in IN_REPO


class Paths:
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

    def classify(self, arg: Field, cwd: str | None) -> Place:
        text = arg.text
        if not arg.known:
            prefix = text[: text.index(UNKNOWN)]
            if "/" not in prefix:
                return Place(UNKNOWN_PLACE, arg.shown())
            directory = self.classify_text(prefix[: prefix.rindex("/") + 1] or "/", cwd)
            if directory.in_repo or directory.kind == UNKNOWN_PLACE:
                return Place(UNKNOWN_PLACE, arg.shown())
            return Place(directory.kind, arg.shown(), directory.absolute)
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
                    return Place(SECRET, self.show(pattern), pattern)
            directory = self.classify_text(directory_text, cwd)
            if directory.in_repo:
                kind = GIT_DIR if directory.kind in (GIT_ITSELF, GIT_DIR, GIT_HOOKS) else INSIDE
                return Place(kind, text, directory.absolute)
            return Place(
                directory.kind,
                self.show(directory.absolute or "") + "/" + text.rsplit("/", 1)[-1],
                directory.absolute,
            )
        return self.classify_text(text, cwd)

    def classify_text(self, text: str, cwd: str | None) -> Place:
        path = self.absolute(text, cwd)
        if path is None:
            return Place(UNKNOWN_PLACE, text)
        return Place(self.kind(path), self.show(path), path)

    def kind(self, path: str) -> str:
        root = self.root
        if path == root:
            return REPO_ROOT
        if path.startswith(root + "/"):
            rel = path[len(root) + 1 :]
            if rel == ".git":
                return GIT_ITSELF
            if rel.startswith(".git/"):
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
