"""The ACP tests' harness (issue 32): `tui-agent acp` as a real subprocess.

Every test already runs with HOME and the XDG folders in its tmp_path (tests/conftest.py's
``isolated_home``), so the spawned agent inherits them through ``acp_env()``. The model is
the testing kit's FakeOpenAI (the ``model`` fixture in tests/acp/conftest.py), passed as
``--base-url``/``--model`` flags before the subcommand (``acp_argv``).

Two ways to drive the agent:
- ``acp_session(project, model, client)``: the package's own client side
  (``acp.spawn_agent_process``, ``acp.Client``) with a ``RecordingClient`` that keeps
  every update and answers permission requests as told; initialize and ``session/new``
  done.
- ``RawAgent`` (the ``raw_agent`` fixture): lines on stdin, one JSON-RPC message a line
  read back from stdout, for what a well-behaved client never sends.

``user_config(...)`` rewrites the user config: by default without tests/conftest.py's
allow-all table, so the permission rules are the real ones (write, edit and execute ask;
the sandbox decides for a sandboxed execute). The agent's stderr goes to a file, never to
a pipe nobody reads.

Test modules import these by the module's name (``from acp_harness import ...``):
tests/conftest.py puts every test folder on sys.path.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from tui_agent.testing import FakeOpenAI

MODEL = "fake-model"
WAIT = 30.0  # seconds: generous for 2 shared cores; a healthy agent answers in well under 1


# -- the agent's command line, environment and config ----------------------------------------


def acp_argv(model: FakeOpenAI, *extra: str) -> list[str]:
    """``python -m tui_agent --base-url URL --model fake-model [extra...] acp``."""
    return [
        sys.executable,
        "-m",
        "tui_agent",
        "--base-url",
        model.base_url,
        "--model",
        MODEL,
        *extra,
        "acp",
    ]


def acp_env() -> dict[str, str]:
    """The test's environment (its isolated HOME and XDG folders, no API keys)."""
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def user_config(text: str = "", *, allow_all: bool = False, sandbox: bool = True) -> Path:
    """Replace the user config.toml (tests/conftest.py writes an allow-all one) with
    ``text``; ``allow_all`` puts ``"*" = "allow"`` back; ``sandbox=False`` turns the shell
    sandbox off, so ``execute`` asks (with it on, a sandboxed command is not asked)."""
    from tui_agent.core.util.paths import user_config_dir

    parts = []
    if allow_all:
        parts.append('[permission]\n"*" = "allow"\n')
    if not sandbox:
        parts.append("[sandbox]\nenabled = false\n")
    parts.append(text)
    path = user_config_dir() / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(part for part in parts if part), encoding="utf-8")
    return path


def sessions_dir() -> Path:
    from tui_agent.core.conversation.journal import sessions_dir as where

    return where()


def journal_files() -> list[Path]:
    folder = sessions_dir()
    return sorted(folder.glob("*.jsonl")) if folder.exists() else []


# -- the package's client side ----------------------------------------------------------------


def _dump(value: Any) -> Any:
    return (
        value.model_dump(by_alias=True, exclude_none=True)
        if hasattr(value, "model_dump")
        else value
    )


class RecordingClient:
    """An ``acp.Client`` that keeps what the agent sends.

    ``updates``: (session id, update as a camelCase dict) in arrival order.
    ``permissions``: each ``session/request_permission``'s params as a dict; ``answer``
    picks the option: a kind (``"allow_once"``, ``"allow_always"``, ``"reject_once"``,
    ``"reject_always"``), ``"cancelled"``, or a function of the params dict returning one.
    ``files``: unsaved editor buffers (path → text) that ``fs/read_text_file`` serves
    before the disk; ``writes`` records ``fs/write_text_file`` calls (also written to disk).
    """

    def __init__(
        self,
        answer: str | Callable[[dict[str, Any]], str] = "allow_once",
        *,
        files: dict[str, str] | None = None,
    ) -> None:
        self.answer = answer
        self.files = dict(files or {})
        self.updates: list[tuple[str, dict[str, Any]]] = []
        self.permissions: list[dict[str, Any]] = []
        self.reads: list[str] = []
        self.writes: list[tuple[str, str]] = []
        self.changed = asyncio.Event()

    # the agent's requests and notifications

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, _dump(update)))
        self.changed.set()

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> Any:
        import acp
        from acp import schema

        params = {
            "sessionId": session_id,
            "toolCall": _dump(tool_call),
            "options": [_dump(option) for option in options],
        }
        self.permissions.append(params)
        self.changed.set()
        kind = self.answer(params) if callable(self.answer) else self.answer
        if kind == "cancelled":
            outcome: Any = schema.DeniedOutcome(outcome="cancelled")
        else:
            chosen = next((o for o in params["options"] if o["kind"] == kind), None)
            assert chosen is not None, f"no {kind!r} option among {params['options']}"
            outcome = schema.AllowedOutcome(outcome="selected", option_id=chosen["optionId"])
        return acp.RequestPermissionResponse(outcome=outcome)

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> Any:
        import acp

        self.reads.append(path)
        text = self.files[path] if path in self.files else Path(path).read_text(encoding="utf-8")
        if line is not None or limit is not None:
            lines = text.splitlines(keepends=True)
            start = max((line or 1) - 1, 0)
            text = "".join(lines[start : start + limit if limit is not None else None])
        return acp.ReadTextFileResponse(content=text)

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> Any:
        import acp

        self.writes.append((path, content))
        self.files[path] = content
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(content, encoding="utf-8")
        return acp.WriteTextFileResponse()

    async def create_terminal(self, *args: Any, **kwargs: Any) -> Any:
        import acp

        raise acp.RequestError.method_not_found("terminal/create")

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        import acp

        raise acp.RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    # reading what came

    def of(self, kind: str, session_id: str | None = None) -> list[dict[str, Any]]:
        """The updates whose ``sessionUpdate`` is ``kind``."""
        return [
            u
            for sid, u in self.updates
            if u.get("sessionUpdate") == kind and (session_id is None or sid == session_id)
        ]

    def text(self, session_id: str | None = None) -> str:
        """The agent's message chunks joined."""
        return "".join(
            u["content"].get("text", "") for u in self.of("agent_message_chunk", session_id)
        )

    def tool_calls(self, session_id: str | None = None) -> dict[str, dict[str, Any]]:
        """Each tool call by id, its start and updates merged in order (``content`` of the
        last update that had some)."""
        calls: dict[str, dict[str, Any]] = {}
        for sid, u in self.updates:
            if session_id is not None and sid != session_id:
                continue
            if u.get("sessionUpdate") in ("tool_call", "tool_call_update"):
                merged = calls.setdefault(u["toolCallId"], {})
                merged.update({k: v for k, v in u.items() if k != "sessionUpdate"})
        return calls

    async def wait_for(
        self, condition: Callable[[], bool], what: str, seconds: float = WAIT
    ) -> None:
        deadline = time.monotonic() + seconds
        while not condition():
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"timed out after {seconds}s waiting for {what}")
            self.changed.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.changed.wait(), min(left, 0.2))


class AcpSession:
    """A spawned `tui-agent acp` with a new session: ``conn`` (the package's
    ClientSideConnection), ``process``, ``client``, ``session_id``, ``init`` (the
    initialize response as a dict), ``new`` (session/new's response as a dict)."""

    def __init__(
        self, conn: Any, process: Any, client: RecordingClient, init: Any, new: Any
    ) -> None:
        self.conn = conn
        self.process = process
        self.client = client
        self.init = _dump(init)
        self.new = _dump(new)
        self.session_id: str = new.session_id

    async def prompt(self, *blocks: Any, timeout: float = WAIT) -> dict[str, Any]:
        """``session/prompt`` with text (a str) or content blocks; the response as a dict."""
        import acp

        content = [acp.text_block(b) if isinstance(b, str) else b for b in blocks]
        response = await asyncio.wait_for(
            self.conn.prompt(session_id=self.session_id, prompt=content), timeout
        )
        return _dump(response)


@contextlib.asynccontextmanager
async def acp_session(
    project: Path,
    model: FakeOpenAI,
    client: RecordingClient | None = None,
    *,
    stderr: Path | None = None,
    extra: tuple[str, ...] = (),
    fs: bool = False,
    mcp_servers: list[Any] | None = None,
) -> AsyncIterator[AcpSession]:
    """Spawn `tui-agent acp` in ``project``, initialize (with ``fs``: offering
    fs/read_text_file and fs/write_text_file) and open a session in ``project``."""
    import acp
    from acp import schema

    client = client or RecordingClient()
    log = (stderr or project.parent / "agent-stderr.log").open("ab")
    try:
        async with acp.spawn_agent_process(
            lambda agent: client,  # type: ignore[arg-type,return-value]
            *acp_argv(model, *extra),
            env=acp_env(),
            cwd=project,
            transport_kwargs={"stderr": log},
        ) as (conn, process):
            capabilities = schema.ClientCapabilities(
                fs=schema.FileSystemCapabilities(read_text_file=fs, write_text_file=fs),
                terminal=False,
            )
            init = await asyncio.wait_for(
                conn.initialize(
                    protocol_version=acp.PROTOCOL_VERSION, client_capabilities=capabilities
                ),
                WAIT,
            )
            new = await asyncio.wait_for(
                conn.new_session(cwd=str(project), mcp_servers=mcp_servers or []), WAIT
            )
            yield AcpSession(conn, process, client, init, new)
    finally:
        log.close()


# -- raw lines --------------------------------------------------------------------------------


class RawAgent:
    """`tui-agent acp` driven line by line: ``send`` writes a line (a dict is dumped as
    JSON), ``read`` returns the next stdout line parsed (or raises on a line that is not
    JSON: the agent must print nothing but protocol), ``request`` sends a request and
    waits for its response, keeping what came before it in ``seen``."""

    def __init__(self, argv: list[str], cwd: Path, stderr: Path) -> None:
        self.stderr_path = stderr
        self._stderr = stderr.open("ab")
        self.process = subprocess.Popen(
            argv,
            cwd=cwd,
            env=acp_env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
        )
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.raw: list[bytes] = []  # every stdout line, as it came
        self.seen: list[dict[str, Any]] = []  # every message read so far
        self._ids = iter(range(1, 1_000_000))
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.raw.append(line)
            self.lines.put(line)
        self.lines.put(None)

    def send(self, message: dict[str, Any] | str | bytes) -> None:
        assert self.process.stdin is not None
        if isinstance(message, dict):
            data = json.dumps(message).encode() + b"\n"
        elif isinstance(message, str):
            data = message.encode() + b"\n"
        else:
            data = message
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def read(self, timeout: float = WAIT) -> dict[str, Any] | None:
        """The next message, or None when stdout closed."""
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(
                f"nothing on stdout for {timeout}s; stderr:\n{self.stderr_text()[-3000:]}"
            ) from None
        if line is None:
            self.lines.put(None)  # stays closed for the next read
            return None
        try:
            message = json.loads(line)
        except ValueError:
            raise AssertionError(f"not JSON on stdout: {line[:500]!r}") from None
        assert isinstance(message, dict), f"not a JSON-RPC object on stdout: {line[:500]!r}"
        self.seen.append(message)
        return message

    def next_id(self) -> int:
        return next(self._ids)

    def request(
        self, method: str, params: dict[str, Any] | None = None, *, timeout: float = WAIT
    ) -> dict[str, Any]:
        """Send a request and return its response (notifications and the agent's own
        requests before it stay in ``seen``; permission requests are not answered)."""
        ident = self.next_id()
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": ident, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.response(ident, timeout=timeout)

    def response(self, ident: Any, *, timeout: float = WAIT) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no response to id {ident!r} in {timeout}s: {self.seen[-5:]}")
            try:
                message = self.read(left)
            except AssertionError as silent:
                if "nothing on stdout" not in str(silent):
                    raise
                last = [json.dumps(m)[:300] for m in self.seen[-3:]]
                raise AssertionError(
                    f"no response to id {ident!r} in {timeout}s; the last messages: {last}"
                ) from None
            assert message is not None, (
                f"stdout closed before the response to id {ident!r}; stderr:\n"
                f"{self.stderr_text()[-3000:]}"
            )
            if message.get("id") == ident and "method" not in message:
                return message

    def initialize(self, **capabilities: Any) -> dict[str, Any]:
        return self.request(
            "initialize",
            {"protocolVersion": 1, "clientCapabilities": capabilities or {"fs": {}}},
        )

    def new_session(self, cwd: Path) -> str:
        answer = self.request("session/new", {"cwd": str(cwd), "mcpServers": []})
        assert "result" in answer, answer
        return str(answer["result"]["sessionId"])

    def stderr_text(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    def stdout_text(self) -> str:
        return b"".join(self.raw).decode("utf-8", errors="replace")

    def close(self, timeout: float = 10) -> int | None:
        """Close stdin and wait; kill only if it does not go (returns the exit code)."""
        with contextlib.suppress(OSError):
            assert self.process.stdin is not None
            self.process.stdin.close()
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=5)
            return None
        finally:
            self._stderr.close()
