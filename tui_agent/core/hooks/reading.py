"""Command hooks, read: where they come from and what a ``hooks`` table may hold
(``command_hooks.py`` says how it all works). Registers the ``hooks`` setting's check
with the config and the project's hook files with the workspace's project code.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..project import config as config_module
from ..project.config import LoadProblem
from ..project.workspace import register_project_code
from ..util import paths
from .claude_names import CLAUDE_TOOL_NAMES, rule_problem

if TYPE_CHECKING:
    from ..project.workspace import Workspace

EVENTS = (
    "PreToolUse",
    "PostToolUse",
    "UserPromptSubmit",
    "Stop",
    "SessionStart",
    "Notification",
    "SessionEnd",
    "PreCompact",
    "SubagentStop",
)
TOOL_EVENTS = ("PreToolUse", "PostToolUse")
DEFAULT_TIMEOUT = 60.0
# our permission modes under Claude's names (the hooks' permission_mode)
PERMISSION_MODES = {
    "ask": "default",
    "auto-edit": "acceptEdits",
    "plan": "plan",
    "allow-all": "bypassPermissions",
}
SHAPE = (
    "a table of hook events, each an array of tables with a command and optional matcher "
    'and timeout ([[hooks.PreToolUse]] command = "./guard.sh")'
)
KEEP_STDERR = 2000  # characters of a failing hook's stderr shown to the user


@dataclass(frozen=True)
class CommandHook:
    """One command for one event. ``matcher``: a regex the whole tool name must match
    (our name or Claude's for it); empty or ``*`` matches every tool. For the other
    events, as in Claude Code: ``SessionStart`` the source (``startup``, ``resume``,
    ``clear``), ``Notification`` the ``notification_type``, ``SessionEnd`` the reason,
    ``PreCompact`` the trigger (``manual``, ``auto``), ``SubagentStop`` the agent's name;
    ``UserPromptSubmit`` and ``Stop`` have none.
    ``condition``: the hook's ``"if"`` (Claude's permission-rule syntax), tool events only.
    ``plugin_root``: ``CLAUDE_PLUGIN_ROOT`` for it (the plugin's folder, or the folder of
    the file that declared it)."""

    event: str
    command: str
    matcher: str = ""
    timeout: float = DEFAULT_TIMEOUT
    source: str = ""  # the file it came from
    condition: str = ""
    plugin_root: str = ""

    def matches(self, name: str, claude: str = "") -> bool:
        """Whether the matcher takes the tool ``name`` (ours), its ``claude`` name
        (``Bash``, ``MultiEdit``, an MCP tool's ``mcp__server__tool``) or any Claude name
        that means it here."""
        if self.matcher in ("", "*"):
            return True
        pattern = _pattern(self.matcher)
        if pattern.fullmatch(name) or (claude and pattern.fullmatch(claude)):
            return True
        return any(ours == name and pattern.fullmatch(c) for c, ours in CLAUDE_TOOL_NAMES.items())


@functools.lru_cache(maxsize=256)
def _pattern(matcher: str) -> re.Pattern[str]:
    return re.compile(matcher)


@dataclass
class HookSet:
    """What one load found: the hooks in force, project files skipped as untrusted,
    events and hook types read but not run here, and files with a problem (none of
    their hooks run)."""

    hooks: list[CommandHook] = field(default_factory=list)
    skipped: list[Path] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    problems: list[LoadProblem] = field(default_factory=list)

    def for_event(self, event: str) -> list[CommandHook]:
        return [hook for hook in self.hooks if hook.event == event]


# -- reading ----------------------------------------------------------------------------------


def _seconds(value: Any) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value > 0
    )


def parse(
    table: Any, source: str = "", where: str = "hooks", root: str = ""
) -> tuple[list[CommandHook], list[str], list[str]]:
    """The hooks in a ``hooks`` table (TOML or JSON, flat or Claude's nested shape), the
    problems with its shape, and what is read but not run here (other events, hooks of
    another ``type``, an ``"if"`` on an event that has no tool). ``root``: their
    ``CLAUDE_PLUGIN_ROOT`` (by default the folder of ``source``)."""
    if not root and source:
        root = str(Path(source).parent)
    hooks: list[CommandHook] = []
    problems: list[str] = []
    ignored: list[str] = []
    if not isinstance(table, Mapping):
        return [], [f"{where} must be {SHAPE}"], []
    for event, entries in table.items():
        at = f"{where}.{event}"
        if not isinstance(entries, list):
            problems.append(f"{at} must be an array of tables ([[{at}]] in TOML, a list in JSON)")
            continue
        if event not in EVENTS:
            ignored.append(f"{event} (tui-agent runs {', '.join(EVENTS)})")
            continue
        for index, entry in enumerate(entries):
            place = f"{at}[{index}]"
            if not isinstance(entry, Mapping):
                problems.append(f"{place} must be a table with a command")
                continue
            matcher = entry.get("matcher", "")
            if not isinstance(matcher, str):
                problems.append(f"{place}.matcher must be a string (a tool-name regex)")
                continue
            try:
                re.compile(matcher if matcher != "*" else "")
            except re.error as exc:
                problems.append(f"{place}.matcher is not a valid regex: {exc}")
                continue
            if "hooks" in entry:  # Claude's shape: a matcher and its commands
                inner = entry["hooks"]
                if not isinstance(inner, list):
                    problems.append(f"{place}.hooks must be an array of tables")
                    continue
                commands = [(f"{place}.hooks[{i}]", item) for i, item in enumerate(inner)]
            else:
                commands = [(place, entry)]
            for spot, item in commands:
                if not isinstance(item, Mapping):
                    problems.append(f"{spot} must be a table with a command")
                    continue
                kind = item.get("type", "command")
                if kind != "command":
                    ignored.append(f'{event} hook of type "{kind}" (only "command" runs)')
                    continue
                command = item.get("command")
                if not isinstance(command, str) or not command.strip():
                    problems.append(f"{spot} needs command = a shell command (a string)")
                    continue
                timeout = item.get("timeout", DEFAULT_TIMEOUT)
                if not _seconds(timeout):
                    problems.append(f"{spot}.timeout must be a number of seconds above 0")
                    continue
                condition = item.get("if", "")
                if "if" in item:
                    problem = rule_problem(condition)
                    if problem is not None:
                        problems.append(f"{spot}.if {problem}")
                        continue
                    if event not in TOOL_EVENTS:
                        ignored.append(
                            f'{event} hook with "if" (Claude decides "if" on tool events '
                            f"only; such a hook never runs): {command}"
                        )
                        continue
                hooks.append(
                    CommandHook(
                        event, command, matcher, float(timeout), source, condition.strip(), root
                    )
                )
    return hooks, problems, ignored


def valid_table(value: Any) -> bool:
    """The config setting's check (``SETTING_RULES["hooks"]``)."""
    return not parse(value)[1]


def plugin_files(folder: Path) -> list[Path]:
    """The Claude Code plugins in a plugin folder: ``<folder>/<plugin>/hooks/hooks.json``,
    sorted by the plugin's folder name."""
    try:
        plugins = sorted(p for p in folder.iterdir() if p.is_dir() and p.name[0] not in "._")
    except OSError:
        return []
    return [p / "hooks" / "hooks.json" for p in plugins if (p / "hooks" / "hooks.json").is_file()]


def _project_plugins(project: Path) -> Path | None:
    """The project's plugin folder, unless the project is HOME (loaded as the user's)."""
    if project.resolve() == Path.home().resolve():
        return None
    return project / ".agents" / "plugins"


def _user_plugins() -> list[Path]:
    return [paths.home_plugins_dir(), paths.user_config_dir() / "plugins"]


def _root(file: Path) -> str:
    """``CLAUDE_PLUGIN_ROOT`` for the hooks of ``file``: a plugin's folder for its
    ``hooks/hooks.json``, else the folder the file is in."""
    if file.name == "hooks.json" and file.parent.name == "hooks":
        return str(file.parent.parent)
    return str(file.parent)


def project_files(project: Path) -> list[Path]:
    """The project's files that hold command hooks: project code, run only when trusted."""
    found = []
    for path in (
        project / ".tui-agent" / "hooks.json",
        project / ".claude" / "settings.json",
        project / ".claude" / "settings.local.json",
    ):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeError):
            continue
        if path.name == "hooks.json" or '"hooks"' in text:
            found.append(path)
    plugins = _project_plugins(project)
    if plugins is not None:
        found += plugin_files(plugins)
    return found


def _json_hooks(path: Path) -> tuple[Any, str | None]:
    """The hooks table of a JSON file: its ``hooks`` section (settings.json), or the whole
    object (hooks.json may leave the wrapper out)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeError, ValueError) as exc:
        return None, f"not valid JSON: {exc}"
    if not isinstance(data, dict):
        return None, "must hold a JSON object"
    if path.name == "hooks.json" and "hooks" not in data:
        return data, None
    return data.get("hooks", {}), None


def load(workspace: Workspace) -> HookSet:
    """Every hook in force for this workspace (see the module's docstring for where)."""
    found = HookSet()
    files = [config_module.user_config_file()]
    for folder in _user_plugins():
        files += plugin_files(folder)
    project = project_files(workspace.project)
    if workspace.trusted:
        files += [workspace.config_file, *project]
    else:
        found.skipped = project
    for file in files:
        if file.suffix == ".toml":
            if not file.is_file():
                continue
            try:
                data = config_module.read_toml(file)
            except (OSError, ValueError):
                continue  # the load reports the file already
            if "hooks" not in data or not valid_table(data["hooks"]):
                continue  # none, or reported as a setting
            table = data["hooks"]
        else:
            table, problem = _json_hooks(file)
            if problem is not None:
                found.problems.append(LoadProblem(str(file), problem))
                continue
        hooks, problems, ignored = parse(table, str(file), root=_root(file))
        if problems:  # a file with a mistake runs none of its hooks
            found.problems += [LoadProblem(str(file), text) for text in problems]
            continue
        found.hooks += hooks
        found.ignored += [f"{text} in {file}" for text in ignored]
    return found


def _problems(value: Any) -> list[str]:
    return parse(value)[1]


config_module.register_validator("hooks", _problems)
register_project_code(project_files, order=30)
