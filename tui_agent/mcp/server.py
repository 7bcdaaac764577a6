"""The servers' life (see the package's docstring: owner tasks, generations, failures,
exit): ``Server`` (one server: started, its tools registered, called, stopped, its
stderr logged) and ``Fleet`` (one generation of servers).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import importlib.util
import logging
import os
import re
from datetime import datetime
from typing import Any

import tui_agent
from tui_agent.paths import user_log_dir

from .config import Spec, claude_name, tool_name
from .results import (
    _connection_lost,
    _quote,
    convert,
    describe,
    http_client,
    inline_refs,
    offending_line,
    wire,
)

log = logging.getLogger("tui_agent.mcp")

STOP_TIMEOUT = 6.0  # the mcp stdio client waits 2 s after closing stdin, then terminates
STDERR_LINES = 5
MAX_LOG_BYTES = 1024 * 1024  # a server's stderr log starts over past this
NOT_JSON_RPC = (
    "MCP stdio servers write only JSON-RPC messages on stdout (their logs belong on stderr)"
)


class _QuietParseErrors(logging.Filter):
    """The ``mcp`` stdio client logs a traceback for every stdout line that is not a
    JSON-RPC message (on the terminal, over the app); the server reports it instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Failed to parse JSONRPC message")


_stdio_log = logging.getLogger("mcp.client.stdio")
if not any(isinstance(f, _QuietParseErrors) for f in _stdio_log.filters):
    _stdio_log.addFilter(_QuietParseErrors())

# -- one server ---------------------------------------------------------------------------


class Server:
    """One configured server and the owner task that keeps its client session open."""

    def __init__(
        self, session: tui_agent.Session, fleet: Fleet, name: str, spec: Spec | None
    ) -> None:
        self.session = session
        self.fleet = fleet
        self.name = name
        self.spec = spec
        self.state = "pending"  # disabled failed pending starting running crashed stopped
        self.error: str | None = None
        self.tools: dict[str, str] = {}  # toolbox name → MCP tool name
        self.info = ""
        self.junk: list[str] = []  # stdout lines that were not JSON-RPC (this start)
        self._junk_said = False
        self._task: asyncio.Task[None] | None = None
        self._client: Any = None
        self._stop = asyncio.Event()
        self._settled = asyncio.Event()
        self._gone = asyncio.Event()

    @property
    def source(self) -> str:
        return f"mcp:{self.name}"

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        if self.spec is None or self.state == "disabled" or self.running:
            return
        self.state, self.error = "starting", None
        self.junk, self._junk_said = [], False
        self._stop, self._settled, self._gone = asyncio.Event(), asyncio.Event(), asyncio.Event()
        self._task = loop.create_task(self._own(), name=f"mcp server {self.name}")

    async def settled(self) -> None:
        """Wait until the server is running or has failed (bounded by startup_timeout)."""
        if self.state != "starting" or self.spec is None:
            return
        try:
            await asyncio.wait_for(self._settled.wait(), self.spec.startup_timeout + 5)
        except TimeoutError:
            self._fail(self._junk_reason() or f"no answer within {self.spec.startup_timeout:g}s")
            if self._task is not None:
                self._task.cancel()

    async def stop(self) -> None:
        """Ask the owner task to close the session and the transport; cancel it if slow."""
        task = self._task
        if self.state in ("starting", "running"):
            self.state = "stopped"
        if task is None or task.done():
            return
        if task.get_loop() is not asyncio.get_running_loop():
            if not task.get_loop().is_closed():  # a loop closing cancels its tasks anyway
                task.get_loop().call_soon_threadsafe(task.cancel)
            return
        self._stop.set()
        if not self._settled.is_set():
            task.cancel()  # still starting: nothing to close politely
        done, _ = await asyncio.wait({task}, timeout=STOP_TIMEOUT)
        if not done:
            task.cancel()
            await asyncio.wait({task}, timeout=STOP_TIMEOUT)

    # -- the owner task -------------------------------------------------------------------

    async def _own(self) -> None:
        assert self.spec is not None
        errlog = self._open_errlog()
        offset = errlog.tell() if errlog is not None else 0
        try:
            async with contextlib.AsyncExitStack() as stack:
                try:
                    client, tools = await self._connect(stack, errlog)
                except Exception as exc:
                    reason = self._junk_reason() or describe(exc)
                    self._fail(reason, self._stderr_tail(errlog, offset))
                    return
                self._client = client
                self._register(tools)
                self.state = "running"
                self._settled.set()
                self._say_junk()
                await self._stop.wait()
        except asyncio.CancelledError:
            if self.state == "starting":
                self._fail("cancelled while starting")
            raise
        except Exception as exc:  # the transport failed: at start, or the server died
            if self.state == "starting":
                self._fail(describe(exc), self._stderr_tail(errlog, offset))
            else:
                self._crash(describe(exc))
        finally:
            self._client = None
            if self.state == "starting":
                self._fail("stopped while starting")
            elif self.state == "running":  # cancelled from outside: the loop is closing
                self.state = "stopped"
            self._settled.set()
            self._gone.set()
            if errlog is not None:
                errlog.close()

    async def _connect(
        self, stack: contextlib.AsyncExitStack, errlog: Any
    ) -> tuple[Any, list[dict[str, Any]]]:
        spec = self.spec
        assert spec is not None
        mcp = await asyncio.to_thread(importlib.import_module, "mcp")
        if spec.url and spec.kind == "sse":  # the older HTTP transport (Claude's "sse")
            sse = await asyncio.to_thread(importlib.import_module, "mcp.client.sse")
            streams = await stack.enter_async_context(
                sse.sse_client(spec.url, headers=spec.headers or None)
            )
            read, write = streams[0], streams[1]
        elif spec.url:
            http = await asyncio.to_thread(importlib.import_module, "mcp.client.streamable_http")
            if hasattr(http, "streamable_http_client"):  # 2.x and newer 1.x; the old name warns
                client = await stack.enter_async_context(http_client(spec.headers))
                transport = http.streamable_http_client(spec.url, http_client=client)
            else:
                transport = http.streamablehttp_client(spec.url, headers=spec.headers or None)
            streams = await stack.enter_async_context(transport)  # 1.x adds a third item
            read, write = streams[0], streams[1]
        else:
            stdio = await asyncio.to_thread(importlib.import_module, "mcp.client.stdio")
            params = mcp.StdioServerParameters(
                command=spec.command,
                args=spec.args,
                env=spec.env or None,
                cwd=spec.cwd or str(self.session.directory),
            )
            read, write = await stack.enter_async_context(stdio.stdio_client(params, errlog=errlog))
        session = await stack.enter_async_context(
            mcp.ClientSession(read, write, message_handler=self._message)
        )
        async with asyncio.timeout(spec.startup_timeout):
            init = wire(await session.initialize())
            info = init.get("serverInfo") or {}
            self.info = f"{info.get('name', '')} {info.get('version', '')}".strip()
            listed = wire(await session.list_tools())
            tools = list(listed.get("tools") or [])
            cursor, pages = listed.get("nextCursor"), 1
            while cursor and pages < 100:
                params = mcp.types.PaginatedRequestParams(cursor=cursor)
                listed = wire(await session.list_tools(params=params))
                tools += listed.get("tools") or []
                cursor, pages = listed.get("nextCursor"), pages + 1
        return session, tools

    def _open_errlog(self) -> Any:
        """The server's stderr: ``<log dir>/mcp/NAME.log`` (never the terminal: it would
        draw over the app)."""
        if self.spec is None or self.spec.url:
            return None
        try:
            folder = user_log_dir() / "mcp"
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / (re.sub(r"[^A-Za-z0-9_.-]", "_", self.name) + ".log")
            big = path.is_file() and path.stat().st_size > MAX_LOG_BYTES
            errlog = open(path, "w+" if big else "a+", encoding="utf-8")
            errlog.write(f"--- {datetime.now():%Y-%m-%d %H:%M:%S} {self.spec.transport}\n")
            errlog.flush()
            return errlog
        except OSError:
            return open(os.devnull, "w")

    @staticmethod
    def _stderr_tail(errlog: Any, offset: int) -> str:
        if errlog is None:
            return ""
        try:
            errlog.flush()
            errlog.seek(offset)
            lines = [line.rstrip() for line in errlog.read().splitlines() if line.strip()]
            errlog.seek(0, os.SEEK_END)
        except (OSError, ValueError):
            return ""
        return "\n".join(lines[-STDERR_LINES:])

    # -- what the server says besides answers ----------------------------------------------

    async def _message(self, message: Any) -> None:
        """The client session's handler for what is not an answer: notifications, requests
        from the server, and the transport's errors, among them each stdout line that is
        not JSON-RPC (kept, and said once: see ``_say_junk``)."""
        if isinstance(message, Exception) and (self.spec is not None and not self.spec.url):
            self.junk.append(offending_line(message))
            del self.junk[:-STDERR_LINES]
            if self.state == "running":
                self._say_junk()

    def _junk_reason(self) -> str:
        """Why a start failed when the server wrote lines that are not JSON-RPC: that,
        with the last such line (rather than "timed out")."""
        if not self.junk:
            return ""
        return f"it wrote a line that is not JSON-RPC on stdout: {_quote(self.junk[-1])}; " + (
            NOT_JSON_RPC
        )

    def _say_junk(self) -> None:
        """A running server that wrote lines that are not JSON-RPC (a banner, a print):
        said once per start, with the first line; the lines are skipped."""
        if not self.junk or self._junk_said or self.fleet.retired:
            return
        self._junk_said = True
        message = (
            f'MCP server "{self.name}" wrote a line that is not JSON-RPC on stdout '
            f"(skipped): {_quote(self.junk[0])}; {NOT_JSON_RPC}"
        )
        self.session.output.say(message)
        log.warning("%s", message)

    # -- state changes --------------------------------------------------------------------

    def _fail(self, error: str, stderr: str = "") -> None:
        if self.state != "starting":
            return
        self.state, self.error = "failed", error
        self._settled.set()
        if self.fleet.retired:
            return
        message = f'MCP server "{self.name}" failed to start: {error}'
        if stderr:
            message += f"\nstderr:\n{stderr}"
        self.session.output.say(message, kind="error")
        log.warning("%s", message)

    def _crash(self, error: str) -> None:
        if self.state != "running":
            return
        self.state, self.error = "crashed", error
        self._stop.set()  # the owner task closes what is left and reaps the process
        if self.fleet.retired:
            return
        message = (
            f'MCP server "{self.name}" stopped unexpectedly ({error}); its {len(self.tools)} '
            f"tool{'' if len(self.tools) == 1 else 's'} return errors until "
            f"/mcp restart {self.name} or /reload"
        )
        self.session.output.say(message, kind="error")
        log.warning("%s", message)

    def _register(self, tools: list[dict[str, Any]]) -> None:
        """Add the listed tools to the toolbox (not for a retired generation)."""
        toolbox = self.session.toolbox
        for name in list(self.tools):
            if toolbox.tools.get(name) is not None and toolbox.tools[name].source == self.source:
                toolbox.remove(name)
        self.tools = {}
        if self.fleet.retired:
            return
        previous = toolbox.source
        toolbox.source = self.source
        try:
            for tool in tools:
                if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
                    continue
                mcp_name: str = tool["name"]
                name = tool_name(self.name, mcp_name)
                existing = toolbox.tools.get(name)
                if existing is not None and existing.source != self.source:
                    self.session.output.say(
                        f'MCP server "{self.name}": tool {name} is already defined '
                        f"({existing.source}); the MCP one is not added",
                        kind="error",
                    )
                    continue
                schema = tool.get("inputSchema")
                schema = inline_refs(schema if isinstance(schema, dict) else {})
                params = schema.get("properties")
                required = schema.get("required")
                description = tool.get("description") or tool.get("title")
                hints = tool.get("annotations")
                read_only = isinstance(hints, dict) and hints.get("readOnlyHint") is True
                alias = claude_name(self.name, mcp_name)
                taken = alias in toolbox.tools or toolbox.aliases.get(alias) not in (None, name)
                try:
                    toolbox.add(
                        name,
                        aliases=[] if taken else [alias],
                        description=str(description or f"{mcp_name} ({self.name})"),
                        params=params if isinstance(params, dict) else {},
                        required=[r for r in required or [] if isinstance(r, str)],
                        handler=self._handler(mcp_name, name),
                        read_only=read_only,  # the server says it changes nothing
                    )
                except (ValueError, TypeError) as exc:
                    self.session.output.say(
                        f'MCP server "{self.name}": tool {mcp_name} skipped: {exc}', kind="error"
                    )
                    continue
                self.tools[name] = mcp_name
        finally:
            toolbox.source = previous

    # -- calls ----------------------------------------------------------------------------

    def unavailable(self) -> str:
        where = f'MCP server "{self.name}"'
        if self.state == "crashed":
            return (
                f"{where} is not running: it stopped unexpectedly ({self.error}). "
                f"Restart it with /mcp restart {self.name} or /reload."
            )
        if self.state == "failed":
            return f"{where} is not running: it failed to start ({self.error})."
        if self.state == "stopped":
            return f"{where} was stopped."
        return f"{where} is not running ({self.state})."

    def _handler(self, mcp_name: str, name: str) -> Any:
        async def call(args: dict[str, Any], context: tui_agent.ToolContext) -> dict[str, Any]:
            return await self.call(mcp_name, name, args)

        call.__doc__ = f"MCP tool {mcp_name} on server {self.name}"
        return call

    async def call(self, mcp_name: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
        if self.fleet.retired:  # its load is over (the session closed, or /reload)
            return {"error": f'MCP server "{self.name}" was stopped.'}
        await self.settled()
        client, gone = self._client, self._gone
        if self.state != "running" or client is None:
            return {"error": self.unavailable()}
        assert self.spec is not None
        request = asyncio.ensure_future(client.call_tool(mcp_name, dict(args)))
        watcher = asyncio.ensure_future(gone.wait())
        try:
            done, _ = await asyncio.wait(
                {request, watcher},
                timeout=self.spec.timeout,
                return_when=asyncio.FIRST_COMPLETED,
            )
        finally:
            for task in (request, watcher):
                if not task.done():
                    task.cancel()
        if request in done:
            try:
                result = request.result()
            except Exception as exc:
                if _connection_lost(exc) or gone.is_set():
                    self._crash(describe(exc))
                    return {"error": self.unavailable()}
                return {"error": f'MCP server "{self.name}", tool {mcp_name}: {describe(exc)}'}
            return convert(result, name)
        if watcher in done:
            self._crash("the connection closed")
            return {"error": self.unavailable()}
        error = (
            f'MCP tool {mcp_name} on server "{self.name}" gave no answer within '
            f"{self.spec.timeout:g}s (timeout); the call was abandoned"
        )
        if self.junk:
            last = _quote(self.junk[-1])
            error += f". The server wrote lines that are not JSON-RPC on stdout, the last: {last}"
        return {"error": error}


# -- one generation of servers ------------------------------------------------------------


class Fleet:
    """The servers of one load (one setup run)."""

    def __init__(self) -> None:
        self.servers: dict[str, Server] = {}
        self.retired = False
        self.loop: asyncio.AbstractEventLoop | None = None

    def start(self) -> None:
        """Start every server on the running loop (call from inside it). Once per loop: a
        session driven by a new loop after the old one closed (which ended the owner
        tasks) starts the servers again."""
        loop = asyncio.get_running_loop()
        if self.retired or self.loop is loop:
            return
        if self.loop is not None and not self.loop.is_closed():
            return
        first, self.loop = self.loop is None, loop
        for server in self.servers.values():
            if first or server.state == "stopped":
                server.start(loop)

    async def ready(self) -> None:
        """Start the servers if nobody has yet; wait until none is still starting."""
        self.start()
        await asyncio.gather(*(server.settled() for server in self.servers.values()))

    async def stop(self) -> None:
        await asyncio.gather(*(server.stop() for server in self.servers.values()))

    async def close(self) -> None:
        """This load is over (``on_close``): its tools are never added again, its servers
        stop. A reload runs this before the next load's setup starts the new fleet."""
        self.retired = True
        await self.stop()
