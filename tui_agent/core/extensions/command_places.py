"""Where Markdown commands are kept: the user's, the project's and tui-agent's own folders
(``prompt_commands.py`` reads and runs the files found there)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..util import paths


@dataclass(frozen=True)
class Place:
    """A folder of command files: ``label`` as shown beside a command's description
    ("user", ".claude"…), whether it is the project's (trusted folders only), and the
    agent whose rules its files follow (``dialect``: "claude" for Claude Code's folders
    and ours, "opencode" for opencode's)."""

    label: str
    path: Path
    project: bool
    dialect: str = "claude"


def opencode_config_dir() -> Path:
    """opencode's global folder: ``$XDG_CONFIG_HOME/opencode``, else ``~/.config/opencode``
    (on every system, as opencode has it)."""
    xdg = os.environ.get("XDG_CONFIG_HOME")
    base = Path(xdg) if xdg else Path.home() / ".config"
    return base / "opencode"


def user_places() -> list[Place]:
    """The user's folders, ours first, then Claude Code's and opencode's."""
    opencode = opencode_config_dir()
    return [
        Place("user", paths.user_config_dir() / "commands", False),
        Place("~/.claude", Path.home() / ".claude" / "commands", False),
        Place("~/.config/opencode", opencode / "command", False, "opencode"),
        Place("~/.config/opencode", opencode / "commands", False, "opencode"),
    ]


def bundled_places() -> list[Place]:
    """tui-agent's own Markdown commands (``/init``), shipped beside the bundled plugins
    (``plugins/markdown_commands/``): any user's or project's file of the same name, and
    any plugin's command, takes the name instead."""
    return [Place("bundled", paths.bundled_plugins_dir() / "markdown_commands", False)]


def project_places(project: Path) -> list[Place]:
    """The project's folders, the one that wins a name clash first."""
    return [
        Place(".tui-agent", project / ".tui-agent" / "commands", True),
        Place(".claude", project / ".claude" / "commands", True),
        Place(".opencode", project / ".opencode" / "command", True, "opencode"),
        Place(".opencode", project / ".opencode" / "commands", True, "opencode"),
    ]


def command_files(folder: Path) -> list[Path]:
    """``*.md`` under ``folder`` (sub-folders too), sorted; dot files and folders skipped."""
    try:
        found = [
            path
            for path in folder.rglob("*.md")
            if path.is_file()
            and not any(part.startswith(".") for part in path.relative_to(folder).parts)
        ]
    except OSError:
        return []
    return sorted(found)
