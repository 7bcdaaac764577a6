"""The fake OpenAI-compatible server: ``FakeOpenAI`` replays ``Reply`` objects (text,
thinking, ``Call`` tool calls, faults) over real HTTP on 127.0.0.1 and records requests."""

from __future__ import annotations

import json
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .checks import count_tokens, transcript_problem


@dataclass
class Call:
    """A tool call the fake model makes. ``arguments`` may be a dict or raw (even bad) JSON."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None
    pieces: int = 3

    @property
    def raw(self) -> str:
        return self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)


@dataclass
class Reply:
    """One scripted answer to one chat-completions request."""

    text: str = ""
    thinking: str = ""
    calls: list[Call] = field(default_factory=list)
    usage: tuple[int, int] | None = (10, 5)
    cached_tokens: int = 0  # usage.prompt_tokens_details.cached_tokens, when above 0
    status: int = 200
    error: str = "scripted failure"
    headers: dict[str, str] = field(default_factory=dict)
    drop_after: int | None = None
    delay: float = 0.0
    malformed_after: int | None = None
    chunk_words: int = 1
    finish: str | None = None  # None: "tool_calls" or "stop"; "": no finish_reason
    done: bool = True  # end with `data: [DONE]`
    stall_after: int | None = None  # after N chunks, send nothing (until the client leaves)
    truncate_after: int | None = None  # after N chunks, end the stream cleanly: no finish
    # reason, no [DONE] (a proxy's cut, llmock's "truncate")
    pause_after: int | None = None  # after N chunks, wait ``pause`` seconds, then go on
    pause: float = 0.0
    chunks: list[Any] | None = None  # sent instead of the chunks made from the fields above
    serial: int | None = field(default=None, repr=False)  # the request it answers (call ids)


STREAM_FAULTS = ("disconnect", "truncate", "malformed", "stall")
_SUBAGENT = re.compile(r'^# Subagent "([^"]+)"', re.MULTILINE)


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content if isinstance(content, str) else ""


def agent_of(body: Mapping[str, Any]) -> str:
    """The subagent a request is from ("" for the session's own agent): tui-agent's
    system prompt names it (``# Subagent "name"``)."""
    messages = body.get("messages") or []
    system = next((m for m in messages if isinstance(m, dict) and m.get("role") == "system"), {})
    found = _SUBAGENT.search(_text(system.get("content")))
    return found.group(1) if found else ""


def first_prompt(body: Mapping[str, Any]) -> str:
    """The text of a request's first user message."""
    messages = body.get("messages") or []
    first = next((m for m in messages if isinstance(m, dict) and m.get("role") == "user"), {})
    return _text(first.get("content"))


@dataclass
class Faults:
    """Random faults on the chat replies, as an outside chaos server injects them (llmock's
    ``--error-rate`` and ``--stream-fault``): ``errors`` maps an HTTP status to the chance
    that a request gets it instead of its reply (with ``Retry-After: retry_after`` when
    set); ``streams`` maps a stream fault to the chance that the reply breaks after a
    random number of chunks, before its ``finish_reason``: ``"disconnect"`` (the connection
    drops), ``"truncate"`` (the stream ends cleanly, unfinished), ``"malformed"`` (a chunk
    that is not JSON), ``"stall"`` (a pause of ``stall_seconds``, then the rest). A scripted
    reply that was not delivered whole stays first in the script, so a retry gets it.
    ``seed`` makes the run repeatable; ``injected`` lists what was done, in order."""

    errors: dict[int, float] = field(default_factory=dict)
    streams: dict[str, float] = field(default_factory=dict)
    stall_seconds: float = 0.2
    retry_after: float | None = None
    seed: int | None = None
    injected: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        import random

        unknown = set(self.streams) - set(STREAM_FAULTS)
        if unknown:
            raise ValueError(f"unknown stream faults {sorted(unknown)}: use {STREAM_FAULTS}")
        self._random = random.Random(self.seed)

    def error(self) -> Reply | None:
        """An HTTP error for this request, or None."""
        for status, chance in self.errors.items():
            if self._random.random() < chance:
                self.injected.append(str(status))
                headers = {}
                if self.retry_after is not None and status in (429, 503):
                    headers["Retry-After"] = f"{self.retry_after:g}"
                return Reply(status=status, error=f"injected {status}", headers=headers)
        return None

    def stream(self, reply: Reply, chunks: int) -> tuple[Reply, bool]:
        """(the reply as it will be sent, whether it breaks): broken after a chunk before
        its ``finish_reason`` (the last ``chunks - 2``: the finish, then the usage)."""
        for kind, chance in self.streams.items():
            if self._random.random() >= chance:
                continue
            after = self._random.randint(1, max(1, chunks - 2))
            self.injected.append(f"{kind}@{after}")
            if kind == "stall":
                return replace(reply, pause_after=after, pause=self.stall_seconds), False
            field_name = {
                "disconnect": "drop_after",
                "truncate": "truncate_after",
                "malformed": "malformed_after",
            }[kind]
            return replace(reply, **{field_name: after}), True
        return reply, False


def _split(text: str, pieces: int) -> list[str]:
    if pieces <= 1 or len(text) <= 1:
        return [text]
    size = max(1, -(-len(text) // pieces))
    return [text[i : i + size] for i in range(0, len(text), size)]


def _words(text: str, per_chunk: int) -> list[str]:
    tokens = text.split(" ")
    spaced = [t + (" " if i < len(tokens) - 1 else "") for i, t in enumerate(tokens)]
    return ["".join(spaced[i : i + per_chunk]) for i in range(0, len(spaced), max(1, per_chunk))]


class FakeOpenAI:
    """Start with ``with``/``async with`` or ``start()``; ``base_url`` ends in ``/v1``.

    ``context_limit``: requests counted by ``count_tokens`` over it get OpenAI's 400
    ``context_length_exceeded`` (``overflowed`` lists their counts), and replies report the
    count as ``usage.prompt_tokens``. ``advertise_limit``: ``/v1/models`` says it as vLLM
    does (``max_model_len``). ``responder(body) -> Reply`` answers when the script is empty
    (without it, an empty script answers HTTP 500). ``extra_routes``: ``{"GET /props":
    payload}`` or ``{"POST /api/show": function(body) -> payload or (status, payload)}``."""

    def __init__(
        self,
        script: list[Reply] | None = None,
        *,
        models: list[str] | None = None,
        reject_stream_options: bool = False,
        strict: bool = True,
        context_limit: int | None = None,
        advertise_limit: bool = False,
        responder: Callable[[dict[str, Any]], Reply] | None = None,
        extra_routes: Mapping[str, Any] | None = None,
        faults: Faults | None = None,
    ) -> None:
        if advertise_limit and context_limit is None:
            raise ValueError("advertise_limit needs a context_limit to advertise")
        self.script: list[Reply] = list(script or [])
        self.reject_stream_options = reject_stream_options
        self.strict = strict
        self.context_limit = context_limit
        self.advertise_limit = advertise_limit
        self.responder = responder
        self.faults = faults
        self.extra_routes = {
            f"{key.split()[0].upper()} {key.split()[-1]}": value
            for key, value in (extra_routes or {}).items()
        }
        self.routes: list[tuple[Callable[[dict[str, Any]], bool], list[Reply]]] = []
        self.rejected: list[str] = []
        self.overflowed: list[int] = []
        self.routed: list[tuple[str, str, Any]] = []
        self.models = list(models or ["fake-model", "fake-model-large"])
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._lock = threading.RLock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- life cycle -------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        assert self._server is not None, "the server is not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> FakeOpenAI:
        handler = type("Handler", (_Handler,), {"fake": self})
        self._server = _Server(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def __aenter__(self) -> FakeOpenAI:
        return self.start()

    async def __aexit__(self, *exc: object) -> None:
        self.stop()

    # -- scripts for subagents ---------------------------------------------------------------

    def for_agent(self, name: str, replies: list[Reply]) -> FakeOpenAI:
        """The requests of the subagent ``name`` (a ``task`` call's child) get ``replies``,
        in order, whatever the main script holds; its other requests go on as before.
        Returns the server, so routes chain."""
        return self.when(lambda body: agent_of(body) == name, replies)

    def when(
        self, match: str | Callable[[dict[str, Any]], bool], replies: list[Reply]
    ) -> FakeOpenAI:
        """Requests that ``match`` get ``replies``, in order: ``match`` is a text found in
        the request's first user message (a subagent's prompt), or a function of the
        request's body. Checked before the main script, in the order the routes were made,
        while the route has replies left."""
        if isinstance(match, str):
            text = match
            match = lambda body: text in first_prompt(body)  # noqa: E731
        self.routes.append((match, list(replies)))
        return self

    def next_reply(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            for match, replies in self.routes:
                if replies and match(body):
                    return replace(replies.pop(0), serial=len(self.requests))
            faults = self.faults
            if faults is not None:
                error = faults.error()
                if error is not None:  # the scripted reply waits for the retry
                    return error
            if self.script:
                reply = self.script[0]
            elif self.responder is not None:
                reply = self.responder(body)
            else:
                return Reply(status=500, error="fake server: the script has no more replies")
            broken = False
            if faults is not None and reply.status == 200 and reply.chunks is None:
                count = sum(1 for _ in self.chunks(reply, "m"))
                reply, broken = faults.stream(reply, count)
            if self.script and not broken:
                self.script.pop(0)
            return replace(reply, serial=len(self.requests))  # its calls' ids: this request's

    # -- rendering --------------------------------------------------------------------------

    def chunks(self, reply: Reply, model: str) -> Iterator[dict[str, Any]]:
        created = int(time.time())
        base = {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
        }

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

        yield chunk({"role": "assistant", "content": ""})
        for piece in _words(reply.thinking, reply.chunk_words) if reply.thinking else []:
            yield chunk({"reasoning_content": piece})
        for piece in _words(reply.text, reply.chunk_words) if reply.text else []:
            yield chunk({"content": piece})
        for index, call in enumerate(reply.calls):
            serial = len(self.requests) if reply.serial is None else reply.serial
            call_id = call.id or f"call_{serial}_{index}"
            yield chunk(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": call_id,
                            "type": "function",
                            "function": {"name": call.name, "arguments": ""},
                        }
                    ]
                }
            )
            for piece in _split(call.raw, call.pieces):
                yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
        finish = reply.finish if reply.finish is not None else ""
        if reply.finish is None:
            finish = "tool_calls" if reply.calls else "stop"
        yield chunk({}, finish or None)
        if reply.usage is not None:
            prompt, completion = reply.usage
            yield {
                **base,
                "choices": [],
                "usage": {
                    "prompt_tokens": prompt,
                    "completion_tokens": completion,
                    "total_tokens": prompt + completion,
                    **(
                        {"prompt_tokens_details": {"cached_tokens": reply.cached_tokens}}
                        if reply.cached_tokens
                        else {}
                    ),
                },
            }

    def completion(self, reply: Reply, model: str) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if reply.calls:
            message["tool_calls"] = [
                {
                    "id": call.id or f"call_{index}",
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.raw},
                }
                for index, call in enumerate(reply.calls)
            ]
        prompt, completion = reply.usage or (0, 0)
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if reply.calls else "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            },
        }


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up (a cancelled or timed-out stream) is not worth a traceback."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    fake: FakeOpenAI
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def _json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def _extra(self, method: str, body: Any) -> bool:
        """Serves an ``extra_routes`` entry, if one matches; True when it did."""
        path = self.path.split("?", 1)[0]
        route = self.fake.extra_routes.get(f"{method} {path}")
        if route is None:
            return False
        with self.fake._lock:
            self.fake.routed.append((method, path, body))
        try:
            answer = route(body) if callable(route) else route
        except Exception as exc:
            self._json(500, {"error": {"message": f"route {path} failed: {exc}"}})
            return True
        status, payload = answer if isinstance(answer, tuple) else (200, answer)
        self._json(status, payload)
        return True

    def do_GET(self) -> None:
        if self._extra("GET", None):
            return
        if self.path.rstrip("/").endswith("/models"):
            extra = {"max_model_len": self.fake.context_limit} if self.fake.advertise_limit else {}
            data = [
                {"id": m, "object": "model", "created": 0, "owned_by": "fake", **extra}
                for m in self.fake.models
            ]
            self._json(200, {"object": "list", "data": data})
        else:
            self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.fake.extra_routes:
            try:
                sent = json.loads(raw) if raw else None
            except ValueError:
                sent = raw.decode(errors="replace")
            if self._extra("POST", sent):
                return
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._json(400, {"error": {"message": "request body is not JSON"}})
            return
        headers = {k.lower(): v for k, v in self.headers.items()}
        if self.fake.reject_stream_options and "stream_options" in body:
            with self.fake._lock:
                self.fake.requests.append(body)
                self.fake.headers.append(headers)
            message = "Unrecognized request argument supplied: stream_options"
            self._json(400, {"error": {"message": message, "type": "invalid_request_error"}})
            return
        problem = transcript_problem(body.get("messages")) if self.fake.strict else None
        if problem is not None:
            with self.fake._lock:
                self.fake.requests.append(body)
                self.fake.headers.append(headers)
                self.fake.rejected.append(problem)
            self._json(400, {"error": {"message": problem, "type": "invalid_request_error"}})
            return
        limit = self.fake.context_limit
        tokens = count_tokens(body) if limit is not None else None
        if limit is not None and tokens is not None and tokens > limit:
            with self.fake._lock:
                self.fake.requests.append(body)
                self.fake.headers.append(headers)
                self.fake.overflowed.append(tokens)
            message = (
                f"This model's maximum context length is {limit} tokens. However, your "
                f"messages resulted in {tokens} tokens. Please reduce the length of the messages."
            )
            error = {
                "message": message,
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
            self._json(400, {"error": error})
            return
        reply = self.fake.next_reply(body, headers)
        if tokens is not None and reply.usage is not None:  # the request's size, as servers say
            reply = replace(reply, usage=(tokens, reply.usage[1]))
        model = str(body.get("model", "fake-model"))
        if reply.status != 200:
            self._json(
                reply.status,
                {"error": {"message": reply.error, "type": "fake_error", "code": reply.status}},
                reply.headers,
            )
            return
        if not body.get("stream"):
            self._json(200, self.fake.completion(reply, model), reply.headers)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        for key, value in reply.headers.items():
            self.send_header(key, value)
        self.end_headers()
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        chunks = self.fake.chunks(reply, model) if reply.chunks is None else iter(reply.chunks)
        try:
            for count, chunk in enumerate(chunks):
                if reply.chunks is None and "usage" in chunk and not include_usage:
                    continue
                if reply.stall_after is not None and count >= reply.stall_after:
                    self._stall()
                    return
                if reply.drop_after is not None and count >= reply.drop_after:
                    self.wfile.flush()
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                if reply.truncate_after is not None and count >= reply.truncate_after:
                    break
                if reply.pause_after is not None and count == reply.pause_after:
                    time.sleep(reply.pause)
                if reply.delay:
                    time.sleep(reply.delay)
                data = "data: " + (chunk if isinstance(chunk, str) else json.dumps(chunk))
                if reply.malformed_after is not None and count >= reply.malformed_after:
                    data = "data: {this is not json"
                self._send_chunk(f"{data}\n\n")
                if reply.malformed_after is not None and count >= reply.malformed_after:
                    break
            else:
                if reply.done:
                    self._send_chunk("data: [DONE]\n\n")
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, OSError):
            self.close_connection = True

    def _stall(self) -> None:
        """Keeps the connection open and silent until the client closes it (or a minute)."""
        self.wfile.flush()
        self.connection.settimeout(0.05)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and self.fake._server is not None:
            try:
                if self.connection.recv(1) == b"":
                    break
            except TimeoutError:
                continue
            except OSError:
                break
        self.close_connection = True

    def _send_chunk(self, text: str) -> None:
        data = text.encode()
        self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()
