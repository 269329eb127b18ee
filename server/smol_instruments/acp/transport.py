"""The agent's stdio for ACP: newline-delimited JSON-RPC on fds of its own, and parse errors.

The SDK's reader logs a line that is not JSON and drops it: the client waits forever for an
answer. JSON-RPC 2.0 says to answer `-32700 Parse error` (id null), and `-32600 Invalid
Request` for JSON that is not a request object; `ReplyingTransport` does, and reads on.

The protocol gets its own duplicate of fd 1; fd 1 then points at stderr, so nothing a library
or a child process prints can corrupt the channel.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from typing import Any

from acp._transport import NdjsonTransport
from acp.task import MessageSender, TaskSupervisor

log = logging.getLogger(__name__)

PARSE_ERROR, INVALID_REQUEST = -32700, -32600
#: The longest line read (50 MB, as the SDK's default).
LINE_LIMIT = 50 * 1024 * 1024


def _error(code: int, message: str, data: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message, "data": data}}


class ReplyingTransport(NdjsonTransport):
    """NDJSON over stdio that answers what it cannot read instead of dropping it silently."""

    async def receive(self) -> dict[str, Any] | None:
        while True:
            line = await self._read_line()
            if not line:
                return None
            line = line.strip()
            if not line:
                continue
            try:
                message = json.loads(line)
            except ValueError as exc:
                log.warning("a line that is not JSON: %s", exc)
                await self.send(_error(PARSE_ERROR, "Parse error", f"not JSON: {exc}"))
                continue
            if not isinstance(message, dict) or not (
                isinstance(message.get("method"), str) or "id" in message
            ):
                await self.send(
                    _error(INVALID_REQUEST, "Invalid Request", "expected a JSON-RPC 2.0 object")
                )
                continue
            return message


async def stdio_transport(supervisor: TaskSupervisor) -> ReplyingTransport:
    """The protocol's transport on stdin and a private copy of stdout (fd 1 goes to stderr)."""
    loop = asyncio.get_running_loop()
    protocol_out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, protocol_out
    )
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    return ReplyingTransport(reader, MessageSender(writer, supervisor))
