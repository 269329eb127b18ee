"""A scripted stand-in for a language model: a real OpenAI-compatible HTTP server on 127.0.0.1.

No model can run on the test machines, so tests point the real client (LiteLLM, directly or
through smolagents' LiteLLMModel) at this server. It answers chat completions from a script of
turns, streaming (server-sent events) or not, with usage counts, and records every request so
a test can check what was sent.

    with ScriptedModel(['Done.\\n```python\\nfinal_answer("hi")\\n```']) as model:
        llm = LiteLLMModel(model_id=model.model_id, api_base=model.base_url, api_key="x")
        ...
        assert "hello" in model.last_user_text()

Like a real server it cuts a reply at the first of the request's `stop` strings, sends the
usage chunk only when `stream_options.include_usage` asks for it, and stops a stream when the
client hangs up. Token counts are estimates: ceil(characters / 4), at least 1, of all message
texts (prompt) and of the reply actually sent (completion).

When the script runs out the server answers 500 "script exhausted" and records a failure,
unless a `fallback` turn is given. Failures (exhausted script, unmet expectations, bodies that
are not JSON) are raised as one AssertionError when the `with` block ends without an error.

Error turns carry `x-should-retry: false`, which the OpenAI SDK under LiteLLM obeys, so one
scripted error is one failed call; `retryable=True` lets the client retry into the next turn.
A client timeout is different: the SDK retries it (twice by default) and each retry takes the
next turn, so a test of a slow model passes `max_retries=0` or scripts the retries.

Also a process, for Node and editor tests:

    python -m tests.support.scripted_model --script turns.json --port 0   (from the repo root;
                                                   the module needs only the standard library)

prints {"port": N, "base_url": "http://127.0.0.1:N/v1", "model_id": "openai/scripted", ...}
on one line when ready and serves until SIGTERM. The file is a JSON list of turns: strings
(the reply) or objects with the fields of `Turn` (all but `expect`). `GET /_scripted/requests`
and `GET /_scripted/failures` return what was recorded; `POST /_scripted/turns` with a JSON
list appends turns.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import math
import select
import signal
import socket
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

MODEL_NAME = "scripted"
CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")


@dataclass
class Turn:
    """One scripted answer, and optionally what the request that gets it must contain."""

    reply: str = ""
    delay_s: float = 0.0  # before the first byte of the response
    delta_delay_s: float = 0.0  # between streamed deltas
    chunk_chars: int = 8  # size of each streamed delta
    status: int | None = None  # answer with this HTTP error status instead of a reply
    error: str | None = None  # the error message for `status`
    retryable: bool = False  # an error the client may retry (the retry takes the next turn)
    body: str | None = None  # send this raw body (e.g. garbage) with status 200 or `status`
    content_type: str = "application/json"  # of `body`
    forever: bool = False  # stream `reply` over and over until the client hangs up
    finish_reason: str = "stop"
    expect_user_contains: str | None = None  # the last user message must contain this
    expect: Callable[[RecordedRequest], object] | None = None  # False or AssertionError fails

    @classmethod
    def of(cls, value: Turn | str | dict[str, Any]) -> Turn:
        """A turn from a reply string, a JSON object with Turn's fields, or a Turn."""
        if isinstance(value, Turn):
            return value
        if isinstance(value, str):
            return cls(reply=value)
        if isinstance(value, dict):
            known = {f.name for f in dataclasses.fields(cls)} - {"expect"}
            unknown = sorted(set(value) - known)
            if unknown:
                raise ValueError(f"unknown turn field(s) {unknown}; known: {sorted(known)}")
            return cls(**value)
        raise TypeError(f"a turn is a str, dict or Turn, not {type(value).__name__}")


def message_text(message: dict[str, Any]) -> str:
    """The text of a chat message whether its content is a string or a list of parts."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def estimate_tokens(text: str) -> int:
    """About four characters a token, at least one."""
    return max(1, math.ceil(len(text) / 4))


def cut_at_stop(text: str, stop: Iterable[str]) -> str:
    """The text before the first stop string, as OpenAI-compatible servers cut it."""
    cuts = [i for s in stop if s and (i := text.find(s)) != -1]
    return text[: min(cuts)] if cuts else text


@dataclass
class RecordedRequest:
    """A request the server received and what it answered."""

    method: str
    path: str
    headers: dict[str, str]  # names lower-cased
    raw: bytes
    body: Any  # the parsed JSON body, or None
    time: float  # time.time() on arrival
    turn: int | None = None  # index of the script turn that answered (None: fallback, not chat)
    status: int = 200
    reply: str | None = None  # the text sent, after the stop cut
    chars_sent: int = 0  # of reply text, counted as it is written (forever streams)
    disconnected: bool = False  # the client hung up before the response was complete
    done: threading.Event = field(default_factory=threading.Event, repr=False)

    @property
    def messages(self) -> list[dict[str, Any]]:
        body = self.body if isinstance(self.body, dict) else {}
        return list(body.get("messages") or [])

    @property
    def stop(self) -> list[str]:
        stop = self.body.get("stop") if isinstance(self.body, dict) else None
        if isinstance(stop, str):
            return [stop]
        return [s for s in stop or [] if isinstance(s, str)]

    @property
    def stream(self) -> bool:
        return bool(isinstance(self.body, dict) and self.body.get("stream"))

    @property
    def include_usage(self) -> bool:
        options = self.body.get("stream_options") if isinstance(self.body, dict) else None
        return bool(isinstance(options, dict) and options.get("include_usage"))

    @property
    def retry_count(self) -> int:
        """The OpenAI SDK's own retry counter (0 for a first attempt)."""
        try:
            return int(self.headers.get("x-stainless-retry-count", "0"))
        except ValueError:
            return 0

    def texts(self, role: str | None = None) -> list[str]:
        return [message_text(m) for m in self.messages if role is None or m.get("role") == role]

    def last_user_text(self) -> str:
        users = self.texts("user")
        return users[-1] if users else ""

    def prompt_text(self) -> str:
        return "\n".join(self.texts())

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "path": self.path,
            "headers": self.headers,
            "body": self.body,
            "time": self.time,
            "turn": self.turn,
            "status": self.status,
            "reply": self.reply,
            "chars_sent": self.chars_sent,
            "disconnected": self.disconnected,
        }


class _Disconnected(Exception):
    """The client closed the connection."""


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    owner: ScriptedModel

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that drops a kept-alive connection while it is read is not an error (the
        traceback socketserver prints looked like one in the benchmark's output)."""
        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, chunked streams, as real servers
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass  # a test's output is not the place for an access log

    def setup(self) -> None:
        super().setup()
        self.server.owner._connection_opened(self.connection)

    def finish(self) -> None:
        with contextlib.suppress(OSError):
            super().finish()
        self.server.owner._connection_closed(self.connection)

    def do_GET(self) -> None:
        owner = self.server.owner
        owner._record_other(self._recorded(b""))
        path = self.path.split("?", 1)[0].rstrip("/")
        if path == "":
            self._send_text(200, "scripted model is running", "text/plain")
        elif path in ("/v1/models", "/models"):
            model = {"id": MODEL_NAME, "object": "model", "created": 0, "owned_by": "tests"}
            self._send_json(200, {"object": "list", "data": [model]})
        elif path == "/api/tags":
            self._send_json(200, {"models": [{"name": MODEL_NAME, "model": MODEL_NAME}]})
        elif path == "/api/version":
            self._send_json(200, {"version": "0.0.0-scripted"})
        elif path == "/props" and owner.props is not None:
            self._send_json(200, owner.props)
        elif path == "/_scripted/requests":
            self._send_json(200, [r.to_dict() for r in owner.requests])
        elif path == "/_scripted/failures":
            self._send_json(200, owner.failures)
        else:
            self._send_error(404, f"no such path: {self.path}")

    def do_POST(self) -> None:
        owner = self.server.owner
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        path = self.path.split("?", 1)[0].rstrip("/")
        if path == "/_scripted/turns":
            owner._record_other(self._recorded(raw))
            try:
                owner.extend(json.loads(raw))
            except (ValueError, TypeError) as exc:
                self._send_error(400, f"bad turns: {exc}")
                return
            self._send_json(200, {"remaining": owner.remaining})
            return
        if path not in CHAT_PATHS:
            owner._record_other(self._recorded(raw))
            self._send_error(404, f"no such path: {self.path}")
            return
        request = self._recorded(raw)
        try:
            turn, refusal = owner._accept(request)
            if turn is None:
                self._answer_error(request, *refusal)
            else:
                self._answer(request, turn)
        except _Disconnected:
            request.disconnected = True
            self.close_connection = True  # a half-sent response leaves the socket unusable
        finally:
            request.done.set()
            owner._answered(request)

    # --- answers -----------------------------------------------------------------------------

    def _answer(self, request: RecordedRequest, turn: Turn) -> None:
        self._wait(turn.delay_s)
        if self._peer_closed():  # the client gave up waiting (its timeout)
            raise _Disconnected
        if turn.body is not None:
            request.status = turn.status or 200
            self._send_text(request.status, turn.body, turn.content_type)
            return
        if turn.status is not None:
            message = turn.error or f"scripted error {turn.status}"
            self._answer_error(request, turn.status, message, retryable=turn.retryable)
            return
        honour = self.server.owner.honour_stop  # type: ignore[attr-defined]
        text = turn.reply if turn.forever or not honour else cut_at_stop(turn.reply, request.stop)
        request.reply = text
        if not request.stream:
            request.chars_sent = len(text)
            self._send_json(200, self._completion(request, text, turn.finish_reason))
        elif turn.forever:
            self._stream_forever(request, turn)
        else:
            self._stream(request, text, turn)

    def _answer_error(
        self, request: RecordedRequest, status: int, message: str, retryable: bool = False
    ) -> None:
        request.status = status
        headers = {} if retryable else {"x-should-retry": "false"}
        if retryable:
            headers["retry-after-ms"] = "10"  # keeps the client's retry quick
        self._send_error(status, message, headers)

    def _completion(self, request: RecordedRequest, text: str, finish: str) -> dict[str, Any]:
        return {
            "id": f"chatcmpl-scripted-{uuid.uuid4().hex[:12]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self._model_name(request),
            "system_fingerprint": None,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "logprobs": None,
                    "finish_reason": finish,
                }
            ],
            "usage": self._usage(request, text),
        }

    def _stream(self, request: RecordedRequest, text: str, turn: Turn) -> None:
        self._start_stream()
        chunk = self._chunker(request)
        self._event(chunk({"role": "assistant", "content": ""}))
        size = max(1, turn.chunk_chars)
        for start in range(0, len(text), size):
            if start:
                self._wait(turn.delta_delay_s)
            piece = text[start : start + size]
            self._event(chunk({"content": piece}))
            request.chars_sent += len(piece)
        self._event(chunk({}, finish=turn.finish_reason))
        if request.include_usage:
            usage = chunk(None)
            usage["usage"] = self._usage(request, text)
            self._event(usage)
        self._send_chunk(b"data: [DONE]\n\n")
        self._send_chunk(b"")

    def _stream_forever(self, request: RecordedRequest, turn: Turn) -> None:
        self._start_stream()
        chunk = self._chunker(request)
        self._event(chunk({"role": "assistant", "content": ""}))
        text = turn.reply or "and so on, "
        size = max(1, turn.chunk_chars)
        pieces = [text[i : i + size] for i in range(0, len(text), size)]
        delay = max(turn.delta_delay_s, 0.005)
        while True:
            for piece in pieces:
                if self.server.owner._closing.is_set() or self._peer_closed():
                    raise _Disconnected
                self._event(chunk({"content": piece}))
                request.chars_sent += len(piece)
                self._wait(delay)

    # --- HTTP plumbing -----------------------------------------------------------------------

    def _recorded(self, raw: bytes) -> RecordedRequest:
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        return RecordedRequest(
            method=self.command,
            path=self.path,
            headers={k.lower(): v for k, v in self.headers.items()},
            raw=raw,
            body=body,
            time=time.time(),
        )

    def _model_name(self, request: RecordedRequest) -> str:
        body = request.body if isinstance(request.body, dict) else {}
        return str(body.get("model") or MODEL_NAME)

    def _usage(self, request: RecordedRequest, text: str) -> dict[str, int]:
        prompt = estimate_tokens(request.prompt_text())
        completion = estimate_tokens(text)
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }

    def _chunker(self, request: RecordedRequest) -> Callable[..., dict[str, Any]]:
        ident = f"chatcmpl-scripted-{uuid.uuid4().hex[:12]}"
        created = int(time.time())
        model = self._model_name(request)
        with_usage = request.include_usage

        def chunk(delta: dict[str, Any] | None, finish: str | None = None) -> dict[str, Any]:
            event: dict[str, Any] = {
                "id": ident,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "system_fingerprint": None,
                "choices": []
                if delta is None
                else [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
            }
            if with_usage:
                event["usage"] = None  # as OpenAI: null on every chunk but the last
            return event

        return chunk

    def _wait(self, seconds: float) -> None:
        if seconds > 0 and self.server.owner._closing.wait(seconds):
            raise _Disconnected

    def _peer_closed(self) -> bool:
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except (OSError, ValueError):
            return True

    def _start_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _event(self, payload: dict[str, Any]) -> None:
        self._send_chunk(b"data: " + json.dumps(payload).encode() + b"\n\n")

    def _send_chunk(self, data: bytes) -> None:
        try:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
        except OSError as exc:
            raise _Disconnected from exc

    def _send_text(
        self, status: int, text: str, content_type: str, headers: dict[str, str] | None = None
    ) -> None:
        data = text.encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except OSError as exc:
            raise _Disconnected from exc

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        self._send_text(status, json.dumps(payload), "application/json", headers)

    def _send_error(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        error = {"message": message, "type": "scripted_error", "param": None, "code": str(status)}
        self._send_json(status, {"error": error}, headers)


class ScriptedModel:
    """An OpenAI-compatible server on 127.0.0.1 that answers from a script; starts at once.

    `turns` are reply strings, `Turn`s or dicts of Turn fields, used one per chat request in
    order. `fallback` answers every request after the script runs out (default: a 500 and a
    recorded failure). `strict` raises recorded failures when a `with` block ends cleanly.
    """

    model_id = f"openai/{MODEL_NAME}"

    def __init__(
        self,
        turns: Iterable[Turn | str | dict[str, Any]] = (),
        *,
        fallback: Turn | str | dict[str, Any] | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        strict: bool = True,
        record_file: Path | None = None,
        props: dict[str, Any] | None = None,
    ) -> None:
        self._lock = threading.Lock()
        #: What `GET /props` answers, as llama.cpp's server does (None: 404, like most servers).
        self.props = props
        self._changed = threading.Condition(self._lock)
        self._turns: list[Turn] = [Turn.of(t) for t in turns]
        self._next = 0
        self._fallback = None if fallback is None else Turn.of(fallback)
        self._requests: list[RecordedRequest] = []
        self._other: list[RecordedRequest] = []
        self._failures: list[str] = []
        self._connections: set[socket.socket] = set()
        self._closing = threading.Event()
        self._closed = False
        self.strict = strict
        #: False: send replies whole, as a server that ignores `stop` would.
        self.honour_stop = True
        self.record_file = record_file
        self._httpd = _Server((host, port), _Handler)
        self._httpd.owner = self
        self.host: str = host
        self.port: int = int(self._httpd.server_address[1])
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"scripted-model:{self.port}",
            daemon=True,
        )
        self._thread.start()

    # --- what tests use ------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The server root (Ollama-style clients and health checks)."""
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL: LiteLLM's api_base, MODEL_API_BASE."""
        return f"{self.url}/v1"

    def env(self) -> dict[str, str]:
        """The settings that point the project at this server."""
        return {
            "MODEL_BACKEND": "server",  # this server, never the embedded one
            "MODEL_ID": self.model_id,
            "MODEL_API_BASE": self.base_url,
            "MODEL_API_KEY": "scripted",
        }

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every chat completion request, in arrival order (a snapshot)."""
        with self._lock:
            return list(self._requests)

    @property
    def other_requests(self) -> list[RecordedRequest]:
        """Everything else that arrived: health checks, model lists, 404s."""
        with self._lock:
            return list(self._other)

    @property
    def failures(self) -> list[str]:
        with self._lock:
            return list(self._failures)

    def clear_failures(self) -> None:
        """Forget failures a test provoked on purpose."""
        with self._lock:
            self._failures.clear()

    @property
    def remaining(self) -> int:
        """Script turns not used yet."""
        with self._lock:
            return len(self._turns) - self._next

    def extend(self, turns: Iterable[Turn | str | dict[str, Any]]) -> None:
        """Append turns to the script (also allowed while a client is talking to it)."""
        new = [Turn.of(t) for t in turns]
        with self._lock:
            self._turns.extend(new)

    def last_user_text(self) -> str:
        """The last user message of the last chat request ("" before any)."""
        requests = self.requests
        return requests[-1].last_user_text() if requests else ""

    def wait_for_requests(self, count: int, timeout: float = 10.0) -> list[RecordedRequest]:
        """Block until `count` chat requests have arrived; AssertionError after `timeout`."""
        with self._changed:
            if not self._changed.wait_for(lambda: len(self._requests) >= count, timeout):
                raise AssertionError(
                    f"scripted model: {len(self._requests)} request(s) in {timeout} s, "
                    f"expected {count}"
                )
            return list(self._requests)

    def assert_ok(self) -> None:
        """Raise AssertionError listing the failures recorded so far."""
        failures = self.failures
        if failures:
            raise AssertionError("scripted model:\n  " + "\n  ".join(failures))

    def close(self) -> None:
        """Stop serving, end live streams and close their connections. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._closing.set()
        self._httpd.shutdown()
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedModel:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        self.close()
        if exc_type is None and self.strict:
            self.assert_ok()

    # --- called by the handler -----------------------------------------------------------------

    def _accept(self, request: RecordedRequest) -> tuple[Turn | None, tuple[int, str]]:
        """Record a chat request and pick its turn, or the (status, message) to refuse it."""
        with self._changed:
            self._requests.append(request)
            number = len(self._requests)
            self._changed.notify_all()
            if not isinstance(request.body, dict):
                self._failures.append(f"request {number}: body is not a JSON object")
                return None, (400, "the request body is not a JSON object")
            if self._next < len(self._turns):
                request.turn = self._next
                turn = self._turns[self._next]
                self._next += 1
            elif self._fallback is not None:
                turn = self._fallback
            else:
                message = (
                    f"script exhausted: all {len(self._turns)} scripted turn(s) used, request "
                    f"{number} has no answer (last user message ends "
                    f"{request.last_user_text()[-200:]!r})"
                )
                self._failures.append(message)
                return None, (500, message)
        failures = [
            f"request {number} (turn {request.turn}): {f}" for f in self._check(turn, request)
        ]
        with self._lock:
            self._failures.extend(failures)
        return turn, (0, "")

    def _check(self, turn: Turn, request: RecordedRequest) -> Iterator[str]:
        wanted = turn.expect_user_contains
        if wanted is not None and wanted not in request.last_user_text():
            last = request.last_user_text()
            yield f"last user message lacks {wanted!r}; it ends {last[-300:]!r}"
        if turn.expect is not None:
            try:
                ok = turn.expect(request)
            except AssertionError as exc:
                yield f"expectation failed: {exc}"
            except Exception as exc:
                yield f"expectation raised {type(exc).__name__}: {exc}"
            else:
                if ok is False:
                    yield f"expectation {getattr(turn.expect, '__name__', turn.expect)} is False"

    def _answered(self, request: RecordedRequest) -> None:
        if self.record_file is not None:
            with self._lock, self.record_file.open("a") as out:
                out.write(json.dumps(request.to_dict()) + "\n")

    def _record_other(self, request: RecordedRequest) -> None:
        with self._lock:
            self._other.append(request)

    def _connection_opened(self, conn: socket.socket) -> None:
        with self._lock:
            self._connections.add(conn)
        if self._closing.is_set():
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)

    def _connection_closed(self, conn: socket.socket) -> None:
        with self._lock:
            self._connections.discard(conn)


def load_script(path: Path) -> list[Turn]:
    """Turns from a JSON file: a list of strings or objects with Turn's fields."""
    data = json.loads(path.read_text())
    if not isinstance(data, list):
        raise ValueError(f"{path}: a script is a JSON list of turns")
    return [Turn.of(t) for t in data]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.support.scripted_model",
        description="Serve a scripted OpenAI-compatible model until SIGTERM.",
    )
    parser.add_argument("--script", type=Path, help="JSON list of turns (default: none)")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--fallback", help="reply to use once the script runs out")
    parser.add_argument("--record", type=Path, help="append each request as a JSON line")
    args = parser.parse_args(argv)
    turns = load_script(args.script) if args.script else []
    model = ScriptedModel(
        turns, fallback=args.fallback, host=args.host, port=args.port, record_file=args.record
    )
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    ready = {
        "port": model.port,
        "base_url": model.base_url,
        "url": model.url,
        "model_id": model.model_id,
    }
    print(json.dumps(ready), flush=True)
    while not stop.wait(0.5):
        pass
    model.close()
    for failure in model.failures:
        print(f"scripted model: {failure}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
