"""A recording HTTP proxy on 127.0.0.1 in front of an OpenAI-compatible model server.

Every request is passed through unchanged (streamed responses are streamed on as they arrive)
and recorded: the messages sent, the text the model answered, and what the server reported
about the call. llama.cpp's server adds `timings` to each completion: `prompt_n` (prompt tokens
evaluated for this call) and `cache_n` (prompt tokens reused from its prefix cache). Neither
the command line nor smolagents exposes these, so the evaluation reads them here.

`RecordingProxy(upstream)` is a context manager; `records` grows by one `Call` per model call,
and `since(mark)` returns the calls after a mark taken with `len(proxy.records)`.
"""

from __future__ import annotations

import http.client
import json
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

_HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "transfer-encoding",
    "te",
    "trailer",
    "upgrade",
    "proxy-authorization",
    "proxy-authenticate",
    "content-length",
    "host",
}


@dataclass
class Call:
    """One model call as it went over the wire."""

    path: str
    started: float
    seconds: float = 0.0
    status: int = 0
    stream: bool = False
    messages: list[dict[str, Any]] = field(default_factory=list)
    stop: list[str] = field(default_factory=list)
    reply: str = ""
    finish_reason: str | None = None
    prompt_n: int | None = None  # prompt tokens evaluated by the server
    cache_n: int | None = None  # prompt tokens reused from its prefix cache
    prompt_ms: float | None = None
    predicted_n: int | None = None
    predicted_ms: float | None = None
    prompt_tokens: int | None = None  # usage, as the client sees it
    completion_tokens: int | None = None
    client_gone: bool = False  # the client hung up before the answer was complete
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def absorb(self, payload: dict[str, Any]) -> None:
        """Take the text, finish reason, timings and usage out of one response (or SSE chunk)."""
        for choice in payload.get("choices") or []:
            part = choice.get("delta") or choice.get("message") or {}
            content = part.get("content")
            if isinstance(content, str):
                self.reply += content
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
        timings = payload.get("timings")
        if isinstance(timings, dict):
            self.prompt_n = timings.get("prompt_n", self.prompt_n)
            self.cache_n = timings.get("cache_n", self.cache_n)
            self.prompt_ms = timings.get("prompt_ms", self.prompt_ms)
            self.predicted_n = timings.get("predicted_n", self.predicted_n)
            self.predicted_ms = timings.get("predicted_ms", self.predicted_ms)
        usage = payload.get("usage")
        if isinstance(usage, dict):
            self.prompt_tokens = usage.get("prompt_tokens", self.prompt_tokens)
            self.completion_tokens = usage.get("completion_tokens", self.completion_tokens)


def _text_of(content: Any) -> str:
    """Message content as text (the content-list form smolagents sends is joined)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return "" if content is None else str(content)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _ProxyServer

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def do_GET(self) -> None:
        self._forward(None)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self._forward(self.rfile.read(length) if length else b"")

    def _forward(self, body: bytes | None) -> None:
        proxy = self.server.owner
        call: Call | None = None
        if body is not None and self.path.rstrip("/").endswith("/chat/completions"):
            call = Call(path=self.path, started=time.time())
            try:
                request = json.loads(body or b"{}")
            except ValueError:
                request = {}
            call.stream = bool(request.get("stream"))
            call.stop = list(request.get("stop") or [])
            call.messages = [
                {"role": m.get("role"), "content": _text_of(m.get("content"))}
                for m in request.get("messages") or []
                if isinstance(m, dict)
            ]
        began = time.monotonic()
        upstream = http.client.HTTPConnection(proxy.host, proxy.port, timeout=3600)
        try:
            headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
            upstream.request(self.command, self.path, body=body, headers=headers)
            response = upstream.getresponse()
            self._relay(response, call)
        except (BrokenPipeError, ConnectionResetError):
            if call is not None:
                call.client_gone = True
        except OSError as exc:
            if call is not None:
                call.error = f"{type(exc).__name__}: {exc}"
            try:
                self.send_error(502, f"model server: {exc}")
            except OSError:
                pass
        finally:
            upstream.close()
            if call is not None:
                call.seconds = round(time.monotonic() - began, 3)
                proxy.record(call)

    def _relay(self, response: http.client.HTTPResponse, call: Call | None) -> None:
        if call is not None:
            call.status = response.status
        streaming = "text/event-stream" in (response.getheader("Content-Type") or "")
        self.send_response(response.status)
        for key, value in response.getheaders():
            if key.lower() not in _HOP_BY_HOP:
                self.send_header(key, value)
        if not streaming:
            data = response.read()
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            if call is not None:
                try:
                    call.absorb(json.loads(data))
                except ValueError:
                    call.error = f"unreadable response: {data[:200]!r}"
            return
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        pending = b""
        while True:
            chunk = response.read1(65536)
            if not chunk:
                break
            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.flush()
            if call is not None:
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    _absorb_sse_line(call, line)
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()
        if call is not None and pending:
            _absorb_sse_line(call, pending)


def _absorb_sse_line(call: Call, line: bytes) -> None:
    text = line.strip()
    if not text.startswith(b"data:"):
        return
    data = text[5:].strip()
    if not data or data == b"[DONE]":
        return
    try:
        call.absorb(json.loads(data))
    except ValueError:
        pass


class _ProxyServer(ThreadingHTTPServer):
    daemon_threads = True
    owner: RecordingProxy

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up between requests is normal, not a traceback on stderr."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class RecordingProxy:
    """Listens on 127.0.0.1 (a free port) and forwards to `upstream` (http://host:port[/v1])."""

    def __init__(self, upstream: str) -> None:
        parts = urlsplit(upstream)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 80
        self.records: list[Call] = []
        self._lock = threading.Lock()
        self._server = _ProxyServer(("127.0.0.1", 0), _Handler)
        self._server.owner = self
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def record(self, call: Call) -> None:
        with self._lock:
            self.records.append(call)

    def since(self, mark: int) -> list[Call]:
        with self._lock:
            return list(self.records[mark:])

    def __enter__(self) -> RecordingProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
