"""Programs that talk to the network: downloads, sockets, remote shells.

What they print is a download (running it as code is denied). The files `curl` and `wget`
write are judged where they are written, and remembered, so that running one later in the
same command is denied. A socket given a program (`nc -e`, `socat exec:`) is a reverse
shell. `ssh host CMD` runs CMD on another machine: it is judged as if it ran here.
"""

from __future__ import annotations

import posixpath
import re

from ...shell import UNKNOWN, Field
from ..analysis.invocation import Invocation
from ..analysis.state import DOWNLOAD, Output
from ..arguments import parse_options
from ..tables import DOWNLOAD_OPTIONS, names
from .registry import handles

_CURL_WRITES = names(
    "-o --output -D --dump-header -c --cookie-jar --trace --trace-ascii --stderr --libcurl"
)
_WGET_LOGS = names("-o --output-file -a --append-output")


@handles(names("curl wget fetch aria2c http https xh"))
def download(inv: Invocation) -> Output:
    inv.analysis.marks.add("network")
    options, operands = parse_options(inv.args, DOWNLOAD_OPTIONS.get(inv.name, frozenset()))
    writes: list[Field] = []
    if inv.name == "curl":
        writes = [v for n, v in options if n in _CURL_WRITES and v is not None and v.text != "-"]
        if any(n in ("-O", "--remote-name", "--remote-name-all") for n, _ in options):
            writes += [Field(url_basename(u.text) or UNKNOWN) for u in operands]
    elif inv.name == "wget":
        document = [v for n, v in options if n in ("-O", "--output-document") and v is not None]
        writes = [v for v in document if v.text != "-"]
        writes += [v for n, v in options if n in _WGET_LOGS and v is not None]
        if not document:
            prefix = next(
                (v.text for n, v in options if n in ("-P", "--directory-prefix") and v is not None),
                "",
            )
            writes += [
                Field(posixpath.join(prefix, url_basename(u.text) or "index.html"))
                for u in operands
                if u.known
            ]
    for target in writes:
        place = inv.write(target)
        if place.absolute is not None:
            inv.state.downloaded.add(place.absolute)
    return DOWNLOAD


@handles(names("nc ncat netcat socat telnet"))
def netcat(inv: Invocation) -> Output:
    inv.analysis.marks.add("network")
    texts = inv.texts
    if inv.name in ("nc", "ncat", "netcat") and any(
        t in ("-e", "-c", "--exec", "--sh-exec", "--lua-exec")
        or t.startswith(("--exec=", "--sh-exec="))
        for t in texts
    ):
        inv.emit("deny.reverse-shell", what="a program's input and output")
    if inv.name == "socat" and any(
        re.search(r"(^|[,:])(exec|system):", t, re.IGNORECASE) for t in texts
    ):
        inv.emit("deny.reverse-shell", what="a program")
    return DOWNLOAD


@handles("ssh")
def ssh(inv: Invocation) -> Output:
    inv.analysis.marks.add("network")
    _, operands = parse_options(
        inv.args, names("-p -i -l -o -F -J -L -R -D -b -c -E -e -I -m -O -Q -S -W -w -B")
    )
    if len(operands) > 1 and all(arg.known for arg in operands[1:]):
        inner = inv.state.copy()
        inner.cwd = None  # paths on the remote machine are not this repository's
        inv.analysis.run(" ".join(arg.text for arg in operands[1:]), inner)
    return DOWNLOAD


def url_basename(url: str) -> str:
    """The file name `curl -O` or `wget` saves a URL as."""
    path = url.split("?", 1)[0].split("#", 1)[0].rstrip("/")
    if "://" in path:
        path = path.split("://", 1)[1]
        if "/" not in path:
            return ""
    return path.rsplit("/", 1)[-1]
