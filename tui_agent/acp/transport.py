"""JSON-RPC lines over a pair of pipes, answering what is not JSON-RPC.

The package's own line transport logs a line that is not JSON and reads on: the client
never hears of it. Here such a line gets JSON-RPC's parse error (-32700) and a message
that is no request, notification or response the invalid-request error (-32600), with
the id when it has one, ``null`` when not: a client that sent garbage learns it at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import stat
import threading
from collections.abc import Callable
from typing import Any

from acp.task import MessageSender, TaskSupervisor

LIMIT = 50 * 1024 * 1024  # a line (a prompt with an embedded file) may be this long
ANSWER_TIMEOUT = 5.0  # seconds the requests read before the input ended get to be answered


def error(code: int, message: str, details: str, id: Any = None) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": message, "data": {"details": details}},
    }


def problem(message: Any) -> dict[str, Any] | None:
    """The error answer to a decoded line that is no JSON-RPC message, else None."""
    if not isinstance(message, dict):
        kind = "a batch (an array)" if isinstance(message, list) else type(message).__name__
        return error(-32600, "Invalid request", f"expected a JSON-RPC object, got {kind}")
    id = message.get("id")
    if id is not None and (isinstance(id, bool) or not isinstance(id, str | int)):
        return error(-32600, "Invalid request", "id must be a string, a number or null")
    if "method" in message:
        if not isinstance(message["method"], str):
            return error(-32600, "Invalid request", "method must be a string", id)
        params = message.get("params")
        if params is not None and not isinstance(params, dict | list):
            return error(-32600, "Invalid request", "params must be an object", id)
        return None
    if "id" in message and ("result" in message or "error" in message):
        return None  # a response to one of ours
    return error(-32600, "Invalid request", "neither a request, a notification nor a response", id)


class LineTransport:
    """Newline-delimited JSON-RPC on ``reader``/``writer`` (the package's ``Transport``)."""

    def __init__(self, reader: asyncio.StreamReader, writer: Any) -> None:
        self._reader = reader
        self._tasks = TaskSupervisor(source="tui-agent acp transport")
        self._sender = MessageSender(writer, self._tasks)
        self._unanswered: set[Any] = set()  # ids of the client's requests
        self._answered = asyncio.Event()
        self.on_end: Callable[[], None] | None = None  # the input ended: cancel what runs

    async def send(self, message: dict[str, Any]) -> None:
        if "method" not in message and "id" in message:  # our answer to a request
            self._unanswered.discard(message["id"])
            if not self._unanswered:
                self._answered.set()
        await self._sender.send(message)

    async def _ended(self) -> None:
        """The input ended: what runs is cancelled (``on_end``), and the requests read
        before the end are answered (within ``ANSWER_TIMEOUT``) before the connection
        is told: ``tui-agent acp < requests.jsonl`` answers every line."""
        if self.on_end is not None:
            self.on_end()
        if self._unanswered:
            self._answered.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._answered.wait(), ANSWER_TIMEOUT)

    async def receive(self) -> dict[str, Any] | None:
        while True:
            line = await self._line()
            if line is None:
                await self._ended()
                return None
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except (ValueError, UnicodeDecodeError) as exc:
                await self.send(error(-32700, "Parse error", f"not JSON: {exc}"))
                continue
            answer = problem(message)
            if answer is not None:
                await self.send(answer)
                continue
            if "method" in message and message.get("id") is not None:
                self._unanswered.add(message["id"])
            return message  # type: ignore[no-any-return]

    async def _line(self) -> bytes | None:
        chunks: list[bytes] = []
        try:
            while True:
                try:
                    chunks.append(await self._reader.readuntil(b"\n"))
                    return b"".join(chunks)
                except asyncio.LimitOverrunError as exc:
                    chunks.append(await self._reader.readexactly(exc.consumed))
        except asyncio.IncompleteReadError as exc:
            chunks.append(exc.partial)
            data = b"".join(chunks)
            return data or None
        except (ConnectionError, OSError):
            return None

    async def close(self) -> None:
        try:
            await self._sender.close()
        except (ConnectionError, OSError):
            pass  # the client closed its end first
        await self._tasks.shutdown()


class _FileWriter:
    """What ``MessageSender`` needs of a writer, for a stdout that is no pipe
    (``tui-agent acp > log.jsonl``, a terminal): asyncio's pipe transport refuses files."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]

    async def drain(self) -> None:
        return None


def _feed(fd: int, reader: asyncio.StreamReader, loop: asyncio.AbstractEventLoop) -> None:
    """A stdin that is no pipe (``tui-agent acp < requests.jsonl``, /dev/null, a
    terminal), read in a thread."""
    try:
        while data := os.read(fd, 65536):
            loop.call_soon_threadsafe(reader.feed_data, data)
    except OSError:
        pass
    loop.call_soon_threadsafe(reader.feed_eof)


def _pollable(fd: int) -> bool:
    """A pipe or a socket (what editors give), which the event loop can watch; a file,
    /dev/null or a terminal is read in a thread and written as it comes instead."""
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


async def stdio(input_fd: int, output_fd: int) -> LineTransport:
    """A transport on the two file descriptors (the protocol's own copies of stdin and
    stdout: fd 0 and 1 are pointed elsewhere so nothing else reads or writes them)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LIMIT)
    if not _pollable(input_fd):
        threading.Thread(target=_feed, args=(input_fd, reader, loop), daemon=True).start()
    else:
        protocol = asyncio.StreamReaderProtocol(reader)
        await loop.connect_read_pipe(lambda: protocol, os.fdopen(input_fd, "rb", buffering=0))
    writer: Any
    if not _pollable(output_fd):
        writer = _FileWriter(output_fd)
    else:
        transport, writing = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(output_fd, "wb", buffering=0)
        )
        writer = asyncio.StreamWriter(transport, writing, None, loop)
    return LineTransport(reader, writer)
