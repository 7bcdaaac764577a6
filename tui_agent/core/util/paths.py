"""Where tui-agent keeps things. Read from the environment each call so tests can move HOME."""

from __future__ import annotations

from pathlib import Path

import platformdirs

APP = "tui-agent"


def user_config_dir() -> Path:
    return Path(platformdirs.user_config_dir(APP))


def user_data_dir() -> Path:
    return Path(platformdirs.user_data_dir(APP))


def user_log_dir() -> Path:
    return Path(platformdirs.user_log_dir(APP))


def home_plugins_dir() -> Path:
    return Path.home() / ".agents" / "plugins"


def bundled_plugins_dir() -> Path:
    """Bundled plugins: inside the installed wheel, or ``plugins/`` of a source checkout."""
    package = Path(__file__).resolve().parents[2]
    installed = package / "bundled_plugins"
    if installed.is_dir():
        return installed
    return package.parent / "plugins"


# Names, in any project folder, of what decides what an agent runs next (config, plugins,
# tool files, commands, hooks, MCP servers, editor tasks): ours and the other agents' and
# editors' that a user may also run there. One list: the sandbox keeps them read-only
# (core/sandbox/sandbox.py) and the permission layer always asks before a write to one
# (core/permissions/permissions.py).
AGENT_CONFIG = (
    ".tui-agent",
    ".agents",
    ".claude",
    ".opencode",
    ".gemini",
    ".codex",
    ".vscode",
    ".mcp.json",
)
AGENT_CONFIG_FILES = (".mcp.json",)  # files, not folders
