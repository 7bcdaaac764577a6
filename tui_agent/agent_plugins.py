"""Public: Agent Plugins 1.0 (agent-plugins.org): the folders with a ``plugin.json`` in
``.agents/plugins/`` and ``~/.agents/plugins/``, their manifests checked against the
specification's schemas, their ``skills/`` and their ``mcp.json`` servers (``PluginServer``,
placeholders expanded). The skills plugin loads the skills, the mcp plugin starts the
servers; ``tui-agent plugins`` lists them."""

from .core.extensions.agent_plugins import (
    MCP_SCHEMA,
    PLUGIN_SCHEMA,
    VERSION,
    AgentPlugin,
    PluginServer,
    data_dir_for,
    expand,
    find_agent_plugins,
    plugin_folders,
    project_files,
    read_plugin,
    schema_file,
)

__all__ = [
    "MCP_SCHEMA",
    "PLUGIN_SCHEMA",
    "VERSION",
    "AgentPlugin",
    "PluginServer",
    "data_dir_for",
    "expand",
    "find_agent_plugins",
    "plugin_folders",
    "project_files",
    "read_plugin",
    "schema_file",
]
