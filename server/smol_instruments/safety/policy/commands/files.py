"""Programs that delete, copy, create or change files, and those that walk directories.

Each path they touch is judged by where it points (the effect × place table): `rm -rf build`
needs approval, `rm -rf ~` is denied. `find` and `fd` also run commands on what they find
(`-exec`, `-x`), judged with `{}` standing for a path below the search root.
"""

from __future__ import annotations

import re

from ...shell import UNKNOWN, Field
from ..analysis.invocation import Invocation
from ..analysis.state import NONE, PASSTHROUGH, UNKNOWN_OUTPUT, Output
from ..arguments import parse_options
from ..places import INSIDE, REPO_ROOT, Effect, Place
from ..tables import VALUE_OPTIONS, names
from .registry import handles


@handles(names("rm rmdir unlink shred srm wipe trash trash-put rimraf"))
def delete(inv: Invocation) -> Output:
    options, operands = parse_options(
        inv.args, names("-n -s --iterations --size --random-source --interactive")
    )
    flags = {name for name, _ in options}
    recursive = inv.name in ("rm", "srm", "wipe", "trash", "trash-put") and bool(
        flags & {"-r", "-R", "--recursive"}
    )
    recursive = recursive or inv.name == "rimraf"
    recursive = recursive or (inv.name == "rmdir" and bool(flags & {"-p", "--parents"}))
    for arg in operands:
        inv.delete(arg, recursive=recursive)
    return NONE


_COPY_VALUES = {
    "cp": "-t -S --target-directory --suffix",
    "mv": "-t -S --target-directory --suffix",
    "install": "-m -o -g -t -S --mode --owner --group --target-directory --suffix",
    "ln": "-t -S --target-directory --suffix",
    "rsync": "-e -f -T -B -M --rsh --filter --exclude --include --exclude-from --include-from "
    "--temp-dir --partial-dir --log-file --password-file --port --chmod --chown --out-format "
    "--max-size --min-size --rsync-path --backup-dir --files-from",
    "scp": "-P -i -o -F -c -l -S -J",
}
_REMOTE = re.compile(r"^[^/]*:")


@handles(names("cp mv install ln link rsync scp"))
def copy(inv: Invocation) -> Output:
    """Sources are read (or, for `mv`, deleted outside); the destination is written."""
    options, operands = parse_options(inv.args, names(_COPY_VALUES.get(inv.name, "")))
    destination: Field | None = None
    for name, value in options:
        if name in ("-t", "--target-directory") and value is not None:
            destination = value
        if name == "--log-file" and value is not None:
            inv.write(value)
    sources = operands
    if destination is None and len(operands) >= 2:
        destination, sources = operands[-1], operands[:-1]
    elif destination is None and inv.name == "ln" and operands:
        destination = Field(".")
    remote = inv.name in ("rsync", "scp")
    for source in sources:
        if remote and _REMOTE.match(source.text):
            continue
        place = inv.place(source)
        if inv.name == "mv" and not place.in_repo:
            inv.delete(place, recursive=False)
        elif inv.name != "ln":
            inv.read(place)
    if destination is not None and not (remote and _REMOTE.match(destination.text)):
        inv.write(destination)
    return NONE


@handles(names("chmod chown chgrp chattr setfacl chflags"))
def permissions(inv: Invocation) -> Output:
    options, operands = parse_options(
        inv.args, names("--reference -m -M -x -X --modify --remove --set")
    )
    has_reference = any(name == "--reference" for name, _ in options)
    targets = operands if has_reference or inv.name == "setfacl" else operands[1:]
    for arg in targets:
        inv.touch(Effect.PERMISSIONS, arg)
    return NONE


@handles(names("touch mkdir mkfifo truncate"))
def create(inv: Invocation) -> Output:
    _, operands = parse_options(
        inv.args, names("-m -d -t -r -s --mode --date --reference --size --context -Z")
    )
    effect = Effect.WRITE if inv.name == "truncate" else Effect.CREATE
    for arg in operands:
        inv.touch(effect, arg)
    return NONE


@handles("tee")
def tee(inv: Invocation) -> Output:
    _, operands = parse_options(inv.args, names("--output-error"))
    for arg in operands:
        inv.write(arg)
    return PASSTHROUGH


@handles("dd")
def dd(inv: Invocation) -> Output:
    for arg in inv.args:
        key, eq, value = arg.text.partition("=")
        if not eq:
            continue
        target = Field(value) if arg.known else Field(UNKNOWN)
        if key == "of":
            inv.write(target)
        elif key == "if":
            inv.read(target)
    return UNKNOWN_OUTPUT


@handles("find")
def find(inv: Invocation) -> Output:
    """`find ROOTS EXPRESSION`: reads below ROOTS; `-delete`, `-fprint`, `-exec` act there."""
    inv.claim()
    args = inv.args
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
    # find acts on what is below its roots: `find . -delete` deletes files in the repository.
    places = [(root, _below(inv.place(root))) for root in roots]
    expression = args[i:]
    for _root, place in places:
        inv.read(place)
    k = 0
    while k < len(expression):
        text = expression[k].text
        if text == "-delete":
            for _root, place in places:
                inv.delete(place, recursive=True)
        elif text in ("-fprint", "-fprint0", "-fls", "-fprintf") and k + 1 < len(expression):
            inv.write(expression[k + 1])
        elif text in ("-exec", "-execdir", "-ok", "-okdir"):
            end = k + 1
            while end < len(expression) and expression[end].text not in (";", "+"):
                end += 1
            command = expression[k + 1 : end]
            if command:
                for root, _place in places[:4]:
                    inv.launch([substitute(arg, root) for arg in command])
            k = end
        k += 1
    if len(roots) == 1 and roots[0].known:
        return Output("paths", roots[0].text.rstrip("/") + "/*")  # it prints paths below its root
    return UNKNOWN_OUTPUT


def _below(place: Place) -> Place:
    """What lies below a search root: below the repository root is inside the repository."""
    if place.kind == REPO_ROOT:
        return Place(INSIDE, place.shown.rstrip("/") + "/…", place.absolute)
    return place


@handles("fd", "fdfind")
def fd(inv: Invocation) -> None:
    """`fd PATTERN PATH -x CMD`: CMD runs for every path found below PATH."""
    args = inv.args
    at = next(
        (k for k, arg in enumerate(args) if arg.text in ("-x", "--exec", "-X", "--exec-batch")),
        None,
    )
    if at is None:
        return
    _, operands = parse_options(args[:at], VALUE_OPTIONS["fd"])
    root = operands[1] if len(operands) > 1 else Field(".")
    command = [arg for arg in args[at + 1 :] if arg.text != ";"]
    if command:
        if not any("{" in arg.text for arg in command):
            command = [*command, Field("{}")]
        placeholders = [
            Field(arg.text.replace("{/}", "{}").replace("{.}", "{}")) for arg in command
        ]
        inv.launch([substitute(arg, root) for arg in placeholders])


def substitute(arg: Field, root: Field) -> Field:
    """`{}` in a find -exec command stands for a path below the search root."""
    if "{}" not in arg.text:
        return arg
    base = root.text.rstrip("/") if root.known else UNKNOWN
    at = arg.text.index("{}")
    glob_at = at + len(base) + 1 if root.known else -1
    return Field(arg.text.replace("{}", base + "/*"), glob_at, arg.scripts)
