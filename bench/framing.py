"""Figures for the daemon's input: frames read through `lsp/framing.py`'s reader against the
same frames read the way pygls reads stdin itself (readline for headers, read for the body).

The stream holds typical editor traffic: small requests and full-text document changes of a
20 KB file, read from memory so that only the reading is timed.
"""

from __future__ import annotations

import io
import json
import time

from .figures import Figure, _median_alternating


def _stream(count: int) -> bytes:
    text = "x = 1\n" * 3400  # about 20 KB, a document sent whole on each change
    frames = []
    for n in range(count):
        message = (
            {"jsonrpc": "2.0", "id": n, "method": "textDocument/codeAction", "params": {}}
            if n % 2
            else {
                "jsonrpc": "2.0",
                "method": "textDocument/didChange",
                "params": {"contentChanges": [{"text": text}]},
            }
        )
        body = json.dumps(message).encode()
        frames.append(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    return b"".join(frames)


def _pygls_style(data: bytes, count: int) -> float:
    """What pygls's loop does with a plain stdin: header lines, then read(n)."""
    stream = io.BufferedReader(io.BytesIO(data))  # type: ignore[arg-type]
    start = time.perf_counter()
    for _ in range(count):
        length = 0
        while True:
            header = stream.readline()
            if header.startswith(b"Content-Length: "):
                length = int(header[16:])
            elif header == b"\r\n":
                break
        assert len(stream.read(length)) == length
    return time.perf_counter() - start


def _framed(data: bytes, count: int) -> float:
    from smol_instruments.lsp.framing import FrameReader, FrameWriter

    reader = FrameReader(io.BufferedReader(io.BytesIO(data)), FrameWriter(io.BytesIO()))  # type: ignore[arg-type]
    start = time.perf_counter()
    for _ in range(count):
        header = reader.readline()
        reader.readline()
        length = int(header[16:])
        assert len(reader.read(length)) == length
    return time.perf_counter() - start


def framing_overhead(quick: bool = False) -> list[Figure]:
    count = 200 if quick else 2000
    data = _stream(count)
    ours, theirs = _median_alternating(
        lambda: _framed(data, count), lambda: _pygls_style(data, count), 3 if quick else 15
    )
    return [
        Figure(
            "lsp_framing",
            f"reading {count} frames (half 20 KB didChange) through our reader vs pygls-style",
            ours / count * 1e6,
            "µs/frame",
            theirs / count * 1e6,
            target_on="report",
            note=f"{len(data) / 1e6:.0f} MB in {ours * 1000:.0f} ms; the reader checks each "
            "header and re-frames the body for pygls",
        )
    ]
