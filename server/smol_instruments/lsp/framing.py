"""The daemon's input, read frame by frame: a bad frame is answered and skipped, never fatal.

pygls 2.1 reads stdin in `pygls.io_.run_async`: header lines until a blank one, a
`Content-Length: N` matched by a regular expression, then `read(N)`. It trusts all of it: a
length of 10^14 is read (the process died and exited with status 0), a length that is not a
number leaves it reading the body as headers (the stream never recovers), and
`Content-Length: 0` is never read at all. A body that is not JSON, or a request whose params
do not fit its method, is reported as a pop-up and the request never gets an answer.

`FrameReader` sits between stdin and pygls (pygls's `start_io` takes any object with
`readline` and `read`) and hands pygls only well-formed frames, each re-sent as exactly
`Content-Length: N\\r\\n\\r\\n` and N bytes of body:

- a header block that is not `Name: value` lines, has no `Content-Length`, a length that is
  not a decimal number, zero, or above `MAX_BODY_BYTES`, or a header over `MAX_HEADER_BYTES`
  is answered with a JSON-RPC error (`id: null`, code -32700, the problem in words) and
  skipped: the reader drops bytes until the next `Content-Length:` and carries on from there.
  A real body never holds that text followed by a raw line break (JSON strings cannot hold
  one), so it finds the next frame; a false start is skipped without a second error;
- a body that pygls cannot take (not UTF-8 or not JSON: -32700; not a JSON-RPC message:
  -32600; a request whose params do not fit: -32602, with the request's id) is answered by
  `answer_unreadable`, which the server calls from `report_server_error` — pygls reports it
  there, before it asks for the next frame, so `last_body` is the body in question;
- the stream ending inside a frame (a header with no body, a short body) cannot be recovered:
  `BrokenStream` is raised out of pygls's loop, and `serve` exits with status 1 and one line
  on stderr. The stream ending between frames is a clean end, as before.

Our answers and pygls's share one `FrameWriter`, so a frame is never cut by another.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from typing import Any, BinaryIO

from pygls.exceptions import JsonRpcException

log = logging.getLogger(__name__)

#: The largest body read. A `didOpen` of a larger file is skipped (with an error answer).
MAX_BODY_BYTES = 64 * 1024 * 1024
#: The most a header block may take (a real one is about 60 bytes).
MAX_HEADER_BYTES = 4096
PARSE_ERROR, INVALID_REQUEST = -32700, -32600
_MARKER = b"content-length:"
_CHUNK = 65536
_HEADER_NAME = re.compile(rb"[A-Za-z0-9-]+")


class BrokenStream(Exception):
    """The client's stream ended inside a frame: nothing after it can be read."""


class FrameWriter:
    """stdout for pygls and for our error answers: one frame per `write`, never interleaved."""

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream
        self._lock = threading.Lock()

    def write(self, data: bytes) -> None:
        with self._lock:
            self.stream.write(data)
            self.stream.flush()

    def flush(self) -> None:
        """Each write is flushed already (pygls calls this after every write)."""

    def close(self) -> None:
        with self._lock:
            self.stream.close()

    def answer(self, msg_id: int | str | None, code: int, message: str) -> None:
        body = json.dumps(
            {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}
        ).encode()
        self.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)


class FrameReader:
    """stdin for pygls: `readline` and `read` give it well-formed frames only."""

    def __init__(
        self, stream: BinaryIO, out: FrameWriter, *, max_body: int = MAX_BODY_BYTES
    ) -> None:
        self.stream = stream
        self.out = out
        self.max_body = max_body
        #: The body pygls was handed last: the one it is working on when it reports an error.
        self.last_body = b""
        self._buffer = bytearray()
        self._queue: list[bytes] = []  # what pygls reads next: the header lines of a frame
        self._body = b""
        self._eof = False

    # --- what pygls calls -------------------------------------------------------------------

    def readline(self) -> bytes:
        if not self._queue:
            body = self._next_body()
            if body is None:
                return b""
            self._body = body
            self._queue = [b"Content-Length: %d\r\n" % len(body), b"\r\n"]
        return self._queue.pop(0)

    def read(self, size: int) -> bytes:
        body, self._body = self._body, b""
        if len(body) != size:  # pygls asked for what our own header said
            raise BrokenStream(f"internal framing error: {size} bytes asked, {len(body)} held")
        self.last_body = body
        return body

    # --- frames -----------------------------------------------------------------------------

    def _next_body(self) -> bytes | None:
        """The next well-formed body; None at a clean end of the stream."""
        lost = False  # skipping a bad frame: a false start there is skipped quietly
        while True:
            if lost and not self._skip_to_marker():
                raise BrokenStream(
                    "the client's stream ended inside an unreadable message; exiting"
                )
            # Read more only when nothing is buffered: a frame already here must not wait.
            if not lost and not self._buffer and not self._fill_some():
                return None
            length, problem = self._header_block()
            if problem is None:
                assert length is not None
                return self._body_of(length)
            if lost and problem != "ended":
                self._drop(1)  # a false start: look further on
                continue
            if problem == "ended":
                raise BrokenStream("the client's stream ended inside a message header; exiting")
            self.out.answer(None, PARSE_ERROR, f"{problem}; the message was skipped")
            log.warning("a message from the client was skipped: %s", problem)
            lost = True

    def _header_block(self) -> tuple[int | None, str | None]:
        """Parse the header block at the start of the buffer; on success consume it.
        The problem in words, or "ended" when the stream ends first."""
        lines: list[bytes] = []
        start = 0
        while True:
            newline = self._buffer.find(b"\n", start, MAX_HEADER_BYTES + 1)
            if newline < 0:
                if len(self._buffer) > MAX_HEADER_BYTES:
                    return None, f"a message header longer than {MAX_HEADER_BYTES} bytes"
                if not self._fill_some():
                    return None, "ended"
                continue
            line = bytes(self._buffer[start:newline]).removesuffix(b"\r")
            start = newline + 1
            if not line:
                break
            lines.append(line)
        length: int | None = None
        for line in lines:
            name, colon, value = line.partition(b":")
            if not colon or not _HEADER_NAME.fullmatch(name):
                return None, f"a message header line that is not 'Name: value': {_shown(line)}"
            if name.lower() == b"content-length":
                text = value.strip()
                if not text.isdigit():
                    return None, f"Content-Length is not a number: {_shown(text)}"
                length = int(text)
        if length is None:
            return None, "a message header without Content-Length"
        if length == 0:
            return None, "Content-Length 0: an empty message"
        if length > self.max_body:
            return None, (
                f"Content-Length {length} is more than the {self.max_body} bytes a message may have"
            )
        self._drop(start)
        return length, None

    def _body_of(self, length: int) -> bytes:
        while len(self._buffer) < length:
            if not self._fill_some():
                raise BrokenStream(
                    f"the client's stream ended inside a message ({len(self._buffer)} of "
                    f"{length} bytes); exiting"
                )
        body = bytes(self._buffer[:length])
        self._drop(length)
        return body

    # --- bytes ------------------------------------------------------------------------------

    def _skip_to_marker(self) -> bool:
        """Drop bytes up to the next `Content-Length:` (any case); False if the stream ends."""
        while True:
            found = bytes(self._buffer).lower().find(_MARKER)
            if found >= 0:
                self._drop(found)
                return True
            # Keep a tail as long as the marker, in case it is cut between two reads.
            self._drop(max(0, len(self._buffer) - len(_MARKER) + 1))
            if not self._fill_some():
                return False

    def _fill_some(self) -> bool:
        """Add what the stream has (at least a byte) to the buffer; False at its end."""
        if self._eof:
            return False
        read1 = getattr(self.stream, "read1", None)
        chunk = read1(_CHUNK) if read1 is not None else self.stream.read(1)
        if not chunk:
            self._eof = True
            return False
        self._buffer += chunk
        return True

    def _drop(self, count: int) -> None:
        del self._buffer[:count]

    # --- bodies pygls could not take ----------------------------------------------------------

    def answer_unreadable(self, error: Exception) -> None:
        """Answer the body pygls just failed to read or structure (see the module docstring)."""
        try:
            data: Any = json.loads(self.last_body)
        except (ValueError, UnicodeDecodeError) as exc:
            self.out.answer(None, PARSE_ERROR, f"the message is not JSON: {exc}")
            return
        msg_id = data.get("id") if isinstance(data, dict) else None
        if not isinstance(msg_id, (int, str)):
            msg_id = None
        method = data.get("method") if isinstance(data, dict) else None
        if not isinstance(data, dict) or data.get("jsonrpc") != "2.0":
            message = 'not a JSON-RPC 2.0 message (an object with "jsonrpc": "2.0")'
            self.out.answer(msg_id, INVALID_REQUEST, message)
        elif msg_id is not None and isinstance(method, str):
            code = error.code if isinstance(error, JsonRpcException) else INVALID_REQUEST
            self.out.answer(msg_id, code, f"{method}: {_reason(error)}")
        else:  # a notification or a response: JSON-RPC sends no answer to those
            log.warning("a message from the client could not be read: %s", _reason(error))


def _reason(error: Exception) -> str:
    cause = error.__cause__
    text = str(error) or type(error).__name__
    return f"{text} ({_shown(str(cause).encode())})" if cause is not None else text


def _shown(raw: bytes, limit: int = 80) -> str:
    text = raw[:limit].decode("utf-8", errors="replace")
    return repr(text) + ("..." if len(raw) > limit else "")
