"""MCP servers as tools: ``[mcp.servers.NAME]`` in config.toml (issue 8), a trusted
project's ``.mcp.json`` (Claude Code's project servers, issue 26), and the ``mcp.json``
servers of the Agent Plugins (issue 31: ``~/.agents/plugins/*/``, and a trusted project's
``.agents/plugins/*/``).

An Agent Plugin's server is named ``plugin:<plugin>:<server>``, as Claude Code names its
plugins' servers: its tools are ``plugin_<plugin>_<server>_<tool>`` with Claude Code's
``mcp__plugin_<plugin>_<server>__<tool>`` as the alias, so permission rules, hook
matchers and skills' ``allowed-tools`` written for Claude Code find them, and two plugins
(or a plugin and config.toml) never share a server name. ``[mcp.servers."plugin:P:S"]``
with only ``enabled = false`` turns one off; any other table of that name replaces it.

The setup: it reads the configuration, starts a ``Fleet`` of servers, stops them in
``on_close`` (which a reload runs before the next setup) and registers ``/mcp``. How the servers
live (owner tasks, generations, failures, exit) is in ``tui_agent.mcp``, the client this
plugin is built on.
"""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path

import tui_agent
from tui_agent.agent_plugins import AgentPlugin, PluginServer, find_agent_plugins
from tui_agent.mcp import (
    INSTALL,
    ConfigError,
    Fleet,
    Server,
    Spec,
    parse_spec,
    read_mcp_json,
)

TRANSPORTS = {"stdio": "stdio", "streamable-http": "http", "sse": "sse"}


def plugin_server_name(plugin: str, server: str) -> str:
    return f"plugin:{plugin}:{server}"


def plugin_spec(plugin: AgentPlugin, server: PluginServer, start: bool = True) -> Spec:
    """The plugin's server as the client runs it (checked and expanded by
    ``tui_agent.agent_plugins``). ``PLUGIN_DATA`` is made before a stdio server starts
    (§9.1), and a ``cwd`` inside it that does not exist yet."""
    if server.kind == "stdio" and start:
        plugin.ensure_data_dir()
        cwd = Path(server.cwd or plugin.root)
        if cwd.is_relative_to(plugin.data_dir):
            cwd.mkdir(parents=True, exist_ok=True)
    return Spec(
        kind=TRANSPORTS[server.kind],
        command=server.command,
        args=list(server.args),
        env=dict(server.env),
        cwd=server.cwd,
        url=server.url,
        headers=dict(server.headers),
        origin=server.origin,
    )


def plugin_servers(
    session: tui_agent.Session, configured: dict[str, object]
) -> tuple[dict[str, tuple[AgentPlugin, PluginServer]], set[str]]:
    """The Agent Plugins' servers by name (a trusted project's plugins, and the user's),
    and the names config.toml turns off; their problems are said here."""
    trusted = session.workspace.trusted
    found: dict[str, tuple[AgentPlugin, PluginServer]] = {}
    disabled: set[str] = set()
    for plugin in find_agent_plugins(session.workspace.project if trusted else None):
        mcp_json = plugin.root / "mcp.json"
        for problem in plugin.problems:
            ours = problem.path == str(mcp_json) or problem.path.startswith(f"{mcp_json}:")
            if ours or (not plugin.valid and mcp_json.exists()):
                session.output.say(f"Agent Plugin {plugin.name}: {problem}", kind="error")
        if not plugin.valid:
            continue
        for server in plugin.servers:
            name = plugin_server_name(plugin.name, server.name)
            table = configured.get(name)
            if table == {"enabled": False}:
                disabled.add(name)
            elif table is not None:
                session.output.say(
                    f'MCP server "{name}" of {mcp_json} is not used: [mcp.servers."{name}"] '
                    "in the config has that name"
                )
                continue
            found[name] = (plugin, server)
    return found, disabled


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
    from_plugins, plugins_off = plugin_servers(session, servers)
    for name in from_plugins:
        servers[name] = {"enabled": False} if name in plugins_off else {}
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
            if server.name in from_plugins:
                server.spec = plugin_spec(*from_plugins[server.name], start=not disabled)
            elif server.name in from_project:
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
