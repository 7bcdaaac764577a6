"""The MCP client the bundled ``mcp`` plugin is built on: ``[mcp.servers.NAME]`` in
config.toml (issue 8). Public, so the plugin (``plugins/mcp.py``) uses only the public API.

Each configured server (``[mcp.servers.NAME]``, or a trusted project's ``.mcp.json`` in
Claude Code's format: ``parse_spec``, ``read_mcp_json``) is started with the ``mcp``
package (``pip install 'tui-agent[mcp]'``), its tools are listed and added to the toolbox
as ``<server>_<tool>`` with their input schemas and the source ``mcp:NAME``, and with
Claude Code's name ``mcp__<server>__<tool>`` as an alias (``claude_name``: permission
rules, hook matchers and hook payloads use it). Calls go through the toolbox like
any other tool (validation, every hook, the permission hook); results become Results,
long text keeps its tail like ``execute``.

How the servers live (setups are synchronous, MCP clients are not):

* One **owner task** per server holds the client's context managers (transport, then
  ``ClientSession``) for the server's whole life: it enters them, initializes, lists the
  tools, registers them, then waits for its stop event and exits them. anyio cancel
  scopes must be entered and exited by the same task, so nothing else ever enters or
  exits them; tool calls from other tasks only send requests on the open session.
* **When they start.** The setup starts the owner tasks at once when it runs inside an
  event loop (the app loads plugins on its loop; so do async tests). When it runs without
  one (``tui-agent run`` builds the session before ``asyncio.run``), the servers wait, and
  the first ``session.turn`` starts them through ``session.on_turn``, as does ``/mcp``.
  Either way every turn first waits (bounded by each server's ``startup_timeout``) for
  the servers still starting, so the model sees their tools from the first request.
* **Generations.** ``/reload`` re-runs setups and the toolbox is rebuilt from scratch.
  The running servers are kept with ``session.kept("mcp", Kept)`` (which survives reloads); the
  next setup retires them (their tools are never re-added, their owner tasks are told to
  stop) and starts the new configuration.
* **Failures stay local.** A server that cannot start (bad command, bad URL, a crash or
  no answer within ``startup_timeout``) is reported with the end of its stderr and adds
  no tools. A server that dies later is reported once; its tools stay listed and return
  a clear error until ``/mcp restart NAME`` or ``/reload``. A call that gets no answer
  within ``timeout`` returns an error and the server keeps running. Nothing here stops
  the rest of the app.
* **Exit.** ``session.on_close`` stops every server (the app calls ``session.close()``
  when it unmounts, ``tui-agent run`` after its turn).

Stdio servers run in the session's folder with the ``mcp`` package's minimal environment
(PATH, HOME, …) plus ``env``; their stderr goes to ``<log dir>/mcp/NAME.log``.

Both majors of the ``mcp`` package work (1.x from 1.20, and 2.x). The client API we use
(``ClientSession``, ``stdio_client``, ``initialize``, ``list_tools``, ``call_tool``) is the
same in both; what changed is the Python names of the protocol's fields (1.x
``nextCursor``/``inputSchema``/``isError``, 2.x ``next_cursor``/``input_schema``/
``is_error``) and the HTTP transport (2.x: an ``httpx2`` client, two streams instead of
three). Results are therefore read as the protocol's JSON (``wire``), which is the same
for both, and the HTTP client is the one the installed ``mcp`` uses.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import importlib.metadata
import importlib.util
import json
import logging
import os
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import tui_agent
from tui_agent.paths import user_log_dir
from tui_agent.truncation import MAX_BYTES, keep_tail, save_output

log = logging.getLogger("tui_agent.mcp")

DEFAULT_STARTUP_TIMEOUT = 30.0
DEFAULT_TIMEOUT = 120.0
STOP_TIMEOUT = 6.0  # the mcp stdio client waits 2 s after closing stdin, then terminates
STDERR_LINES = 5
MAX_LOG_BYTES = 1024 * 1024  # a server's stderr log starts over past this
VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
REF = re.compile(r"#/(?:\$defs|definitions)/(.+)")
INSTALL = "pip install 'tui-agent[mcp]'"
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


class ConfigError(ValueError):
    pass


# -- config -------------------------------------------------------------------------------


def substitute(value: str, where: str, fallback: dict[str, str] | None = None) -> str:
    """``${VAR}`` (and ``${VAR:-default}``) from the environment (then ``fallback``: a
    ``.mcp.json``'s ``CLAUDE_PROJECT_DIR``); unset without a default is an error naming
    the variable."""

    def replace(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        found = os.environ.get(name)
        if found is None and fallback:
            found = fallback.get(name)
        if found is not None and (found or default is None):
            return found
        if default is not None:
            return default
        raise ConfigError(f"{where}: ${{{name}}} is not set in the environment")

    return VAR.sub(replace, value)


TYPES = ("stdio", "http", "sse")


@dataclass
class Spec:
    """One ``[mcp.servers.NAME]`` table (or a ``.mcp.json`` server), checked and with
    ``${VAR}`` substituted. ``kind``: stdio, http (streamable HTTP) or sse."""

    kind: str = "stdio"
    command: str | None = None
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT
    timeout: float = DEFAULT_TIMEOUT
    origin: str = ""  # the .mcp.json it comes from ("" for config.toml)

    @property
    def transport(self) -> str:
        if self.url:
            return f"{self.kind} {self.url}"
        return "stdio " + " ".join([self.command or "", *self.args]).strip()


def _strings(value: Any, where: str, fallback: dict[str, str] | None = None) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str | int | float) for v in value):
        raise ConfigError(f"{where} must be a list of strings")
    return [substitute(str(v), where, fallback) for v in value]


def _table(value: Any, where: str, fallback: dict[str, str] | None = None) -> dict[str, str]:
    if not isinstance(value, dict) or not all(
        isinstance(v, str | int | float | bool) for v in value.values()
    ):
        raise ConfigError(f"{where} must be a table of strings")
    return {str(k): substitute(str(v), f"{where}.{k}", fallback) for k, v in value.items()}


def _seconds(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ConfigError(f"{where} must be a positive number of seconds")
    return float(value)


def parse_spec(name: str, raw: Any, where: str = "", project: Path | None = None) -> Spec:
    """Check one server. ``project``: it comes from that folder's ``.mcp.json`` (Claude
    Code's format): it runs in that folder, and ``${CLAUDE_PROJECT_DIR}`` is that folder
    when the environment does not say otherwise."""
    where = where or f"mcp.servers.{name}"
    fallback = {"CLAUDE_PROJECT_DIR": str(project)} if project is not None else None
    if not isinstance(raw, dict):
        raise ConfigError(f"{where} must be a table")
    command, url, kind = raw.get("command"), raw.get("url"), raw.get("type")
    if kind is not None and kind not in TYPES:
        raise ConfigError(f"{where}.type must be one of stdio, http, sse, not {kind!r}")
    if kind is None:
        if bool(command) == bool(url):
            raise ConfigError(f"{where} needs either command (stdio) or url (streamable HTTP)")
        kind = "stdio" if command else "http"
    if kind == "stdio" and not command:
        raise ConfigError(f"{where} needs command (a stdio server)")
    if kind != "stdio" and not url:
        raise ConfigError(f"{where} needs url (type {kind})")
    spec = Spec(kind=kind, origin=str(project / ".mcp.json") if project is not None else "")
    if kind == "stdio":
        if not isinstance(command, str):
            raise ConfigError(f"{where}.command must be a string")
        spec.command = substitute(command, f"{where}.command", fallback)
        spec.args = _strings(raw.get("args", []), f"{where}.args", fallback)
        spec.env = _table(raw.get("env", {}), f"{where}.env", fallback)
        if project is not None:
            spec.env.setdefault("CLAUDE_PROJECT_DIR", str(project))
            spec.cwd = str(project)
        if raw.get("cwd") is not None:
            if not isinstance(raw["cwd"], str):
                raise ConfigError(f"{where}.cwd must be a string")
            spec.cwd = substitute(raw["cwd"], f"{where}.cwd", fallback)
    else:
        if not isinstance(url, str):
            raise ConfigError(f"{where}.url must be a string")
        spec.url = substitute(url, f"{where}.url", fallback)
        spec.headers = _table(raw.get("headers", {}), f"{where}.headers", fallback)
    if "startup_timeout" in raw:
        spec.startup_timeout = _seconds(raw["startup_timeout"], f"{where}.startup_timeout")
    if "timeout" in raw:
        spec.timeout = _seconds(raw["timeout"], f"{where}.timeout")
    return spec


def read_mcp_json(path: Path) -> tuple[dict[str, Any], str | None]:
    """The ``mcpServers`` of a project's ``.mcp.json`` (Claude Code's project MCP servers),
    or a problem with the file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeError, ValueError) as exc:
        return {}, f"{path}: not valid JSON ({exc})"
    servers = data.get("mcpServers", {}) if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        return {}, f"{path}: mcpServers must be an object of servers"
    return servers, None


def tool_name(server: str, tool: str) -> str:
    """``<server>_<tool>`` as OpenAI accepts function names: [A-Za-z0-9_-], at most 64."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", f"{server}_{tool}")[:64]


def claude_name(server: str, tool: str) -> str:
    """Claude Code's name for the tool, ``mcp__<server>__<tool>`` (characters outside
    [A-Za-z0-9_-] become ``_``): registered as the tool's alias, so permission rules, hook
    matchers and hook payloads written for Claude Code find it."""

    def clean(text: str) -> str:
        return re.sub(r"[^A-Za-z0-9_-]", "_", text)

    return f"mcp__{clean(server)}__{clean(tool)}"


# -- schemas and results ------------------------------------------------------------------


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """Replace local ``$ref``s (``#/$defs/X``) by their definitions: the toolbox and the
    model get ``properties`` alone, without the schema's ``$defs``. Recursive models are
    cut (to ``{}``) after a few levels."""
    defs: dict[str, Any] = {}
    for key in ("definitions", "$defs"):
        if isinstance(schema.get(key), dict):
            defs.update(schema[key])

    def walk(node: Any, depth: int) -> Any:
        if isinstance(node, list):
            return [walk(item, depth) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str):
            match = REF.fullmatch(ref)
            if match and match.group(1) in defs:
                rest = {k: v for k, v in node.items() if k != "$ref"}
                if depth >= 8:
                    return walk(rest, depth)
                target = defs[match.group(1)]
                merged = {**target, **rest} if isinstance(target, dict) else rest
                return walk(merged, depth + 1)
        return {key: walk(value, depth) for key, value in node.items()}

    result = walk(schema, 0)
    return result if isinstance(result, dict) else {}


def wire(model: Any) -> dict[str, Any]:
    """A protocol object from the ``mcp`` package (a pydantic model) as the protocol's JSON:
    camelCase names whichever major made it (see the module docstring)."""
    if isinstance(model, dict):
        return model
    dumped = model.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dumped if isinstance(dumped, dict) else {}


def _block_text(block: dict[str, Any]) -> str:
    kind = block.get("type", "")
    if kind == "text":
        return str(block.get("text", ""))
    if kind in ("image", "audio"):
        size = len(block.get("data") or "") * 3 // 4
        return f"[{kind}: {block.get('mimeType', '?')}, about {size} bytes, not shown]"
    if kind == "resource":
        resource = block.get("resource") or {}
        text = resource.get("text")
        if text is not None:
            return str(text)
        mime = resource.get("mimeType") or "?"
        return f"[binary resource {resource.get('uri', '?')} ({mime})]"
    if kind == "resource_link":
        return f"[resource {block.get('uri', '?')}: {block.get('name', '')}]"
    return f"[{kind or 'unknown'} content, not shown]"


def mirrors(texts: list[str], structured: Any) -> bool:
    """Is the text content the structured content again? The MCP spec (2025-06-18, tool
    results) asks a tool that returns ``structuredContent`` to return it serialized as JSON
    in a text block too, for older clients. Accepted as the same: the text parsed as JSON
    (one block, or one value per block), or the raw text; and, since FastMCP wraps a value
    that is not an object as ``{"result": value}``, that value."""
    if not texts:
        return False
    joined = "\n".join(texts)

    def parsed(text: str) -> Any:
        try:
            return json.loads(text)
        except ValueError:
            return text

    candidates = [parsed(joined), joined, [parsed(t) for t in texts]]
    wrapped = isinstance(structured, dict) and list(structured) == ["result"]
    return any(
        value == structured or (wrapped and value == structured["result"]) for value in candidates
    )


def convert(result: Any, label: str) -> dict[str, Any]:
    """A ``CallToolResult`` (a model, or its protocol JSON) as a tool result: text blocks
    joined (long text truncated) as ``output``; ``isError`` → ``{"error": …}``.

    ``structuredContent`` reaches the model once: when the text mirrors it (what the spec
    asks of servers, see ``mirrors``) the text alone is sent; without text, the structure is
    the ``output`` (as JSON, truncated like text); a structure that says something the text
    does not is kept as ``structured_content`` (saved to a file instead when it is big or
    the text had to be cut)."""
    data = wire(result)
    blocks = [block for block in data.get("content") or [] if isinstance(block, dict)]
    structured = data.get("structuredContent")
    texts = [str(b.get("text", "")) for b in blocks if b.get("type") == "text"]
    if structured is not None and not blocks:
        text = json.dumps(structured, ensure_ascii=False, default=str)
        structured = None
    else:
        text = "\n".join(_block_text(block) for block in blocks)
        if structured is not None and mirrors(texts, structured):
            structured = None
    payload = keep_tail(text, f"mcp-{label}")
    if structured is not None:
        dumped = json.dumps(structured, ensure_ascii=False, default=str)
        small = len(dumped.encode("utf-8", errors="replace")) <= MAX_BYTES
        if small and not payload.get("truncated"):
            payload["structured_content"] = structured
        else:
            payload["structured_content_file"] = str(save_output(dumped, f"mcp-{label}", "json"))
    if data.get("isError"):
        payload["error"] = payload.pop("output") or "the tool reported an error"
    return payload


def offending_line(exc: BaseException) -> str:
    """The stdout line the ``mcp`` client could not read as JSON-RPC, from its parse error
    (a pydantic ``ValidationError`` carries the input)."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            items = errors()
        except Exception:
            items = []
        for item in items if isinstance(items, list) else []:
            value = item.get("input") if isinstance(item, dict) else None
            if isinstance(value, str):
                return value
            if isinstance(value, dict | list):
                return json.dumps(value, ensure_ascii=False, default=str)
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def _quote(line: str, limit: int = 200) -> str:
    line = line.strip()
    return json.dumps(line if len(line) <= limit else line[:limit] + "…", ensure_ascii=False)


def describe(exc: BaseException) -> str:
    """One line for an exception, digging the real cause out of exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        leaves = [e for e in exc.exceptions if not isinstance(e, asyncio.CancelledError)]
        exc = (leaves or list(exc.exceptions))[0]
    if _connection_lost(exc):  # one wording for the error code and the stream errors
        return "the connection closed"
    error = getattr(exc, "error", None)
    if error is not None and hasattr(error, "message"):  # McpError (1.x), MCPError (2.x)
        return str(error.message)
    if isinstance(exc, FileNotFoundError) and exc.filename:
        return f"command not found: {exc.filename}"
    if isinstance(exc, TimeoutError):
        return "timed out"
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _connection_lost(exc: BaseException) -> bool:
    error = getattr(exc, "error", None)
    if error is not None and getattr(error, "code", None) == -32000:  # CONNECTION_CLOSED
        return True
    names = {"ClosedResourceError", "BrokenResourceError", "EndOfStream", "BrokenPipeError"}
    return type(exc).__name__ in names


def mcp_major() -> int:
    """The installed ``mcp`` package's major version (1 when it cannot be told)."""
    try:
        return int(importlib.metadata.version("mcp").split(".")[0])
    except (importlib.metadata.PackageNotFoundError, ValueError):
        return 1


def http_client(headers: dict[str, str]) -> Any:
    """The HTTP client for a streamable HTTP server: from the library the installed ``mcp``
    speaks (2.x: ``httpx2``, 1.x: ``httpx``), with the timeouts the ``mcp`` package uses."""
    httpx = importlib.import_module("httpx2" if mcp_major() >= 2 else "httpx")
    return httpx.AsyncClient(headers=headers or None, timeout=httpx.Timeout(30, read=300))


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
