"""MCP servers as tools: ``[mcp.servers.NAME]`` in config.toml (issue 8), and a trusted
project's ``.mcp.json`` (Claude Code's project servers, issue 26).

The setup: it reads the configuration, starts a ``Fleet`` of servers, stops them in
``on_close`` (which a reload runs before the next setup) and registers ``/mcp``. How the servers
live (owner tasks, generations, failures, exit) is in ``tui_agent.mcp``, the client this
plugin is built on.
"""

from __future__ import annotations

import asyncio
import importlib.util

import tui_agent
from tui_agent.mcp import (
    INSTALL,
    ConfigError,
    Fleet,
    Server,
    parse_spec,
    read_mcp_json,
)

# -- the plugin ---------------------------------------------------------------------------


@tui_agent.setup("mcp")
def mcp_setup(session: tui_agent.Session) -> None:
    section = session.config.get("mcp", {})
    servers = section.get("servers", {}) if isinstance(section, dict) else {}
    if not isinstance(servers, dict):
        session.output.say("config: mcp.servers must be a table of servers", kind="error")
        servers = {}
    servers = dict(servers)
    # a trusted project's .mcp.json (untrusted, it is project code: skipped and counted)
    project = session.workspace.project
    from_project: set[str] = set()
    mcp_json = project / ".mcp.json"
    if session.workspace.trusted and mcp_json.is_file():
        declared, problem = read_mcp_json(mcp_json)
        if problem is not None:
            session.output.say(f"config: {problem}", kind="error")
        for name, raw in declared.items():
            if str(name) in servers:  # config.toml wins (there it can be turned off)
                session.output.say(
                    f'MCP server "{name}" of {mcp_json} is not used: [mcp.servers.{name}] in '
                    "the config has that name"
                )
                continue
            servers[str(name)] = raw
            from_project.add(str(name))
    if not servers:
        return

    if importlib.util.find_spec("mcp") is None:
        note = (
            f"MCP servers are configured ({', '.join(servers)}) but the mcp package is not "
            f"installed: {INSTALL}"
        )
        session.output.say(note, kind="error")
        session.commands.register(
            "mcp",
            description="MCP servers (needs the mcp package)",
            handler=lambda args: session.output.say(note, kind="error"),
        )
        return

    fleet = Fleet()
    for name, raw in servers.items():
        server = Server(session, fleet, str(name), None)
        fleet.servers[server.name] = server
        disabled = isinstance(raw, dict) and raw.get("enabled", True) is False
        try:
            if server.name in from_project:
                where = f"{mcp_json}: mcpServers.{server.name}"
                server.spec = parse_spec(server.name, raw, where, project)
            else:
                server.spec = parse_spec(server.name, raw)
        except ConfigError as exc:
            if not disabled:
                server.state, server.error = "failed", str(exc)
                session.output.say(f'MCP server "{server.name}" not started: {exc}', kind="error")
        if disabled:
            server.state = "disabled"
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass  # no loop yet (tui-agent run): the first turn, or /mcp, starts them
    else:
        fleet.start()

    session.on("turn", fleet.ready)
    session.on("close", fleet.close)  # a reload stops these servers before it starts the next

    def table() -> str:
        lines = [
            "**MCP servers**",
            "",
            "| Server | State | Tools | Transport | Details |",
            "|---|---|---|---|---|",
        ]
        for server in fleet.servers.values():
            spec = server.spec
            transport = spec.transport if spec is not None else ""
            details = server.error or server.info or ""
            if spec is not None and spec.origin:
                details = f"{details} (from {spec.origin})".strip()
            cells = [server.name, server.state, str(len(server.tools)), transport, details]
            lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
        return "\n".join(lines)

    def completions() -> list[str]:
        return ["restart", *[f"restart {name}" for name in fleet.servers]]

    @session.commands.register(
        "mcp",
        description="MCP servers: state and tool counts; /mcp restart [NAME]",
        completions=completions,
    )
    async def mcp_command(args: str | None) -> None:
        verb, _, rest = (args or "").strip().partition(" ")
        if verb and verb != "restart":
            raise ValueError("usage: /mcp [restart [NAME]]")
        if verb == "restart":
            names = [rest.strip()] if rest.strip() else list(fleet.servers)
            unknown = [n for n in names if n not in fleet.servers]
            if unknown:
                known = ", ".join(fleet.servers)
                raise ValueError(f"unknown MCP server {unknown[0]!r}. Servers: {known}")
            chosen = [fleet.servers[n] for n in names]
            await asyncio.gather(*(server.stop() for server in chosen))
            fleet.start()
            loop = asyncio.get_running_loop()
            for server in chosen:
                server.start(loop)
        fleet.start()
        waiting = [s.name for s in fleet.servers.values() if s.state == "starting"]
        if waiting:
            session.output.say(f"Waiting for MCP servers to start: {', '.join(waiting)}…")
        await fleet.ready()
        session.output.say(table(), kind="markdown")
