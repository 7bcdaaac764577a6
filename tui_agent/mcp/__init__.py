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
  The running servers are kept with ``session.extensions.kept("mcp", Kept)`` (which
  survives reloads); the next setup retires them (their tools are never re-added, their
  owner tasks are told to stop) and starts the new configuration.
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

The package's modules: ``config`` (``Spec``, ``parse_spec``, ``read_mcp_json``, tool
names), ``results`` (schemas, results, errors, the installed ``mcp``'s major) and
``server`` (``Server``, ``Fleet``); every name is importable from ``tui_agent.mcp``.
"""

from __future__ import annotations

from .config import (
    DEFAULT_STARTUP_TIMEOUT,
    DEFAULT_TIMEOUT,
    TYPES,
    VAR,
    ConfigError,
    Spec,
    claude_name,
    parse_spec,
    read_mcp_json,
    substitute,
    tool_name,
)
from .results import (
    INSTALL,
    REF,
    convert,
    describe,
    http_client,
    inline_refs,
    mcp_major,
    mirrors,
    offending_line,
    wire,
)
from .server import MAX_LOG_BYTES, NOT_JSON_RPC, STDERR_LINES, STOP_TIMEOUT, Fleet, Server, log

__all__ = [
    "DEFAULT_STARTUP_TIMEOUT",
    "DEFAULT_TIMEOUT",
    "INSTALL",
    "MAX_LOG_BYTES",
    "NOT_JSON_RPC",
    "REF",
    "STDERR_LINES",
    "STOP_TIMEOUT",
    "TYPES",
    "VAR",
    "ConfigError",
    "Fleet",
    "Server",
    "Spec",
    "claude_name",
    "convert",
    "describe",
    "http_client",
    "inline_refs",
    "log",
    "mcp_major",
    "mirrors",
    "offending_line",
    "parse_spec",
    "read_mcp_json",
    "substitute",
    "tool_name",
    "wire",
]
