"""Local stand-ins for where models come from: the Hugging Face hub and a PyPI simple index.

Both are real HTTP servers on 127.0.0.1 that the real clients talk to: huggingface_hub (through
HF_ENDPOINT) and pip (through PIP_INDEX_URL). Each records the requests it saw and can be made
to fail, so a test can interrupt a download and check what the next pull fetches again.

- `FakeHub` serves `/{repo}/resolve/{revision}/{file}` (HEAD and GET, with Range) as the hub
  does: X-Repo-Commit, ETag and Content-Length headers. `cut_after=N` sends N bytes of the next
  GET, drops the connection, and answers 503 until `cut_after` is cleared.
- `FakeIndex` is a PEP 503 index of wheels made by `chunk_wheel`; a package named in `broken`
  answers 404.
"""

from __future__ import annotations

import hashlib
import re
import threading
import zipfile
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

COMMIT = "0123456789abcdef0123456789abcdef01234567"


@dataclass
class Seen:
    method: str
    path: str
    range: str | None


class _Server:
    def __init__(self) -> None:
        self.seen: list[Seen] = []
        self.lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_HEAD(self) -> None:
                owner._record(self)
                owner.answer(self, head=True)

            def do_GET(self) -> None:
                owner._record(self)
                owner.answer(self, head=False)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def _record(self, handler: BaseHTTPRequestHandler) -> None:
        with self.lock:
            self.seen.append(Seen(handler.command, handler.path, handler.headers.get("Range")))

    def answer(self, handler: BaseHTTPRequestHandler, *, head: bool) -> None:
        raise NotImplementedError

    def __enter__(self) -> Any:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _send(
    handler: BaseHTTPRequestHandler, status: int, body: bytes, headers: dict[str, str]
) -> None:
    handler.send_response(status)
    for name, value in headers.items():
        handler.send_header(name, value)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    if handler.command != "HEAD":
        handler.wfile.write(body)


class FakeHub(_Server):
    """The hub's file layout for one repository and its files."""

    def __init__(self, repo: str, files: dict[str, bytes]) -> None:
        super().__init__()
        self.repo = repo
        self.files = files
        self.cut_after: int | None = None
        self._cut_done = False

    def gets(self) -> list[Seen]:
        return [s for s in self.seen if s.method == "GET"]

    def answer(self, handler: BaseHTTPRequestHandler, *, head: bool) -> None:
        match = re.fullmatch(rf"/{re.escape(self.repo)}/resolve/([^/]+)/(.+)", handler.path)
        data = self.files.get(match.group(2)) if match else None
        if data is None:
            _send(handler, 404, b"not found", {"X-Error-Code": "EntryNotFound"})
            return
        etag = hashlib.sha256(data).hexdigest()
        headers = {"X-Repo-Commit": COMMIT, "ETag": f'"{etag}"', "Accept-Ranges": "bytes"}
        if self._cut_done and self.cut_after is not None:
            _send(handler, 503, b"unavailable", {})
            return
        start = 0
        requested = handler.headers.get("Range")
        if requested and not head:
            start = int(re.match(r"bytes=(\d+)-", requested).group(1))  # type: ignore[union-attr]
            headers["Content-Range"] = f"bytes {start}-{len(data) - 1}/{len(data)}"
        body = data[start:]
        if head or self.cut_after is None:
            _send(handler, 206 if start else 200, body, headers)
            return
        # Send part of the body, then drop the connection: a network that went away.
        self._cut_done = True
        handler.send_response(206 if start else 200)
        for name, value in headers.items():
            handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body[: self.cut_after])
        handler.wfile.flush()
        handler.close_connection = True

    def heal(self) -> None:
        self.cut_after = None
        self._cut_done = False


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


class FakeIndex(_Server):
    """A PEP 503 simple index serving the wheels in `folder`."""

    def __init__(self, folder: Path) -> None:
        super().__init__()
        self.folder = folder
        self.broken: set[str] = set()

    def wheel_gets(self) -> list[str]:
        return [s.path.rsplit("/", 1)[-1] for s in self.seen if s.path.startswith("/files/")]

    def answer(self, handler: BaseHTTPRequestHandler, *, head: bool) -> None:
        path = handler.path.split("?")[0]
        if path.startswith("/simple/"):
            project = path.strip("/").split("/")[1]
            if project in self.broken:
                _send(handler, 404, b"not found", {})
                return
            links = [
                f'<a href="/files/{wheel.name}#sha256={hashlib.sha256(wheel.read_bytes()).hexdigest()}">{wheel.name}</a>'
                for wheel in sorted(self.folder.glob("*.whl"))
                if normalize(wheel.name.split("-")[0]) == project
            ]
            body = ("<html><body>" + "".join(links) + "</body></html>").encode()
            _send(handler, 200, body, {"Content-Type": "text/html"})
            return
        wheel = self.folder / path.rsplit("/", 1)[-1]
        if path.startswith("/files/") and wheel.is_file():
            _send(handler, 200, wheel.read_bytes(), {"Content-Type": "application/octet-stream"})
            return
        _send(handler, 404, b"not found", {})


def chunk_wheel(folder: Path, package: str, version: str, member: str, data: bytes) -> Path:
    """A minimal valid wheel holding `data` at `member`, as the model chunk packages are."""
    dist = package.replace("-", "_")
    path = folder / f"{dist}-{version}-py3-none-any.whl"
    info = f"{dist}-{version}.dist-info"
    with zipfile.ZipFile(path, "w") as wheel:
        wheel.writestr(member, data)
        wheel.writestr(
            f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {package}\nVersion: {version}\n"
        )
        wheel.writestr(
            f"{info}/WHEEL",
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        )
        wheel.writestr(f"{info}/RECORD", "")
    return path
