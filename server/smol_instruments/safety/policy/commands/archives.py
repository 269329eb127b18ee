"""Archives and encodings: `tar`, `unzip`, and the decoders whose output may hide code.

An archive written is judged where it is written, its sources where they are read; an
archive extracted writes where it is extracted (`tar -C /`). Decoders (`base64 -d`, `xxd -r`,
`gunzip`, `rev`) print text the policy cannot read, so piping them into a shell is denied.
"""

from __future__ import annotations

import re

from ...shell import Field
from ..analysis.invocation import Invocation
from ..analysis.state import DECODED, UNKNOWN_OUTPUT, Output
from ..arguments import parse_options
from ..places import Effect, rule_for
from ..tables import DECODERS, names
from .registry import handles

_TAR_VALUES = names(
    "-f -C --file --directory -T -X --files-from --exclude-from -b -H --format -I "
    "--use-compress-program"
)


@handles("tar")
def tar(inv: Invocation) -> Output:
    args = inv.args
    if args and args[0].known and re.fullmatch(r"[A-Za-z]+", args[0].text):
        args[0] = Field("-" + args[0].text)  # `tar czf x.tgz dir` means `tar -czf x.tgz dir`
    options, operands = parse_options(args, _TAR_VALUES)
    flags = {name for name, _ in options}
    archive = next((v for name, v in options if name in ("-f", "--file") and v is not None), None)
    directory = next(
        (v for name, v in options if name in ("-C", "--directory") and v is not None), None
    )
    if flags & {"-c", "--create", "-r", "--append", "-u", "--update", "-A"} and archive is not None:
        inv.write(archive)
        for arg in operands:
            inv.read(arg)
    if flags & {"-x", "--extract", "--get"}:
        _extract_to(inv, directory or Field("."))
        if archive is not None:
            inv.read(archive)
    return UNKNOWN_OUTPUT


@handles("unzip")
def unzip(inv: Invocation) -> None:
    options, _ = parse_options(inv.args, names("-d -x -P -Z"))
    for name, value in options:
        if name == "-d" and value is not None:
            _extract_to(inv, value)


def _extract_to(inv: Invocation, directory: Field) -> None:
    place = inv.place(directory)
    if rule_for(Effect.WRITE, place.kind):
        inv.write(place)
    else:
        inv.emit("approval.archive")


_DECODING = {
    "base64": ("-d", "--decode", "-D"),
    "base32": ("-d", "--decode"),
    "basenc": ("-d", "--decode"),
    "xxd": ("-r", "-revert"),
    "openssl": ("-d", "-base64", "base64", "-a"),
    "gzip": ("-d", "--decompress", "-dc", "-cd"),
    "bzip2": ("-d", "--decompress", "-dc", "-cd"),
    "xz": ("-d", "--decompress", "-dc", "-cd"),
    "zstd": ("-d", "--decompress", "-dc", "-cd"),
}


@handles(DECODERS)
def decoder(inv: Invocation) -> Output | None:
    decoding = _DECODING.get(inv.name)
    if decoding is None or any(t in decoding for t in inv.texts):
        return DECODED
    return None
