"""Where agents come from and which one wins a name: ``load_agents`` gives the bundled
agents, then the user's, then the project's (a trusted project's only), a later one
taking the name of an earlier one (said in its notes).

Folders, the one that wins a name clash last (within the user's and within the
project's, tui-agent's own folder wins, then Claude Code's, then opencode's, then
Gemini CLI's)::

    user      ~/.gemini/agents  ~/.config/opencode/agent(s)  ~/.claude/agents
              ~/.config/tui-agent/agents
    project   .gemini/agents  .opencode/agents  .opencode/agent  .claude/agents
              .tui-agent/agents

Every ``*.md`` under a folder is an agent file (sub-folders too; dot files skipped, and a
``README.md``). A project's agent files are project code: they wait for the folder to be
trusted, as its Markdown commands do (``register_project_code``), and an untrusted
project's are listed in ``AgentSet.skipped`` with the reason.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..project.workspace import register_project_code
from ..util import paths
from .bundled import BUNDLED
from .definitions import AgentDefinition
from .reading import KNOWN, read_agent

UNTRUSTED = "the project is not trusted (tui-agent trust): its agents are not loaded"


@dataclass(frozen=True)
class Place:
    """A folder of agent files: whose (``source``: user, project), the format its files
    are in (``dialect``), and how ``/agents`` names it (``label``)."""

    path: Path
    source: str
    dialect: str
    label: str


@dataclass
class AgentSet:
    """The agents by name (bundled first, then the user's, then the project's: a later one
    replaced an earlier one of the same name), the problems found (``file:line:
    message``), and the files not loaded and why (``skipped``)."""

    agents: dict[str, AgentDefinition] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def get(self, name: str) -> AgentDefinition | None:
        return self.agents.get(name)

    def subagents(self) -> list[AgentDefinition]:
        """The agents a ``task`` call may run (mode subagent or all)."""
        return [agent for agent in self.agents.values() if agent.is_subagent]

    def primaries(self) -> list[AgentDefinition]:
        """The agents that may be the session's own (mode primary or all)."""
        return [agent for agent in self.agents.values() if agent.is_primary]


def _config_home(home: Path | None) -> Path:
    if home is not None:
        return home / ".config"
    xdg = os.environ.get("XDG_CONFIG_HOME")
    return Path(xdg) if xdg else Path.home() / ".config"


def user_places(home: Path | None = None) -> list[Place]:
    """The user's folders, the one that wins a name clash last. ``home`` stands for the
    home folder (tests); without it, tui-agent's own config folder and ``~``."""
    base = home if home is not None else Path.home()
    ours = (
        home / ".config" / "tui-agent" / "agents"
        if home is not None
        else paths.user_config_dir() / "agents"
    )
    opencode = _config_home(home) / "opencode"
    return [
        Place(base / ".gemini" / "agents", "user", "gemini", "~/.gemini/agents"),
        Place(opencode / "agents", "user", "opencode", "~/.config/opencode/agents"),
        Place(opencode / "agent", "user", "opencode", "~/.config/opencode/agent"),
        Place(base / ".claude" / "agents", "user", "claude", "~/.claude/agents"),
        Place(ours, "user", "tui-agent", "user"),
    ]


def project_places(project: Path) -> list[Place]:
    """The project's folders, the one that wins a name clash last."""
    return [
        Place(project / ".gemini" / "agents", "project", "gemini", ".gemini/agents"),
        Place(project / ".opencode" / "agents", "project", "opencode", ".opencode/agents"),
        Place(project / ".opencode" / "agent", "project", "opencode", ".opencode/agent"),
        Place(project / ".claude" / "agents", "project", "claude", ".claude/agents"),
        Place(project / ".tui-agent" / "agents", "project", "tui-agent", ".tui-agent/agents"),
    ]


def agent_files(folder: Path) -> list[Path]:
    """``*.md`` under ``folder``, sorted; dot files and folders and READMEs skipped."""
    try:
        found = [
            path
            for path in folder.rglob("*.md")
            if path.is_file()
            and path.name.lower() != "readme.md"
            and not any(part.startswith(".") for part in path.relative_to(folder).parts)
        ]
    except OSError:
        return []
    return sorted(found)


def project_files(project: Path) -> list[Path]:
    """The project's agent files: project code that waits for trust (``project_code``)."""
    return [file for place in project_places(project) for file in agent_files(place.path)]


register_project_code(project_files, order=25)


def _known(tools: Mapping[str, Iterable[str]] | Iterable[str] | None) -> dict[str, str]:
    """Every name a tool goes by here (built-in, the session's and their aliases), each to
    the tool's own name."""
    known = dict(KNOWN)
    if isinstance(tools, Mapping):
        for name, aliases in tools.items():
            known[name] = name
            known.update((alias, name) for alias in aliases)
    elif tools is not None:
        known.update((name, name) for name in tools)
    return known


def load_agents(
    project: Path | None,
    *,
    trusted: bool,
    home: Path | None = None,
    tools: Mapping[str, Iterable[str]] | Iterable[str] | None = None,
    providers: Iterable[str] = ("openai",),
) -> AgentSet:
    """Every agent: the bundled ones, the user's folders', and ``project``'s folders' when
    ``trusted`` (else they are listed as skipped). ``home`` stands for the home folder
    (tests). ``tools``: the session's tool names (or names to aliases), so tui-agent's own
    agent files may name a plugin's tools; ``providers``: the providers configured here
    (another's ``provider/model`` falls back to the session's model, with a note)."""
    found = AgentSet(agents=dict(BUNDLED))
    known = _known(tools)
    configured = frozenset(providers)
    places = user_places(home)
    if project is not None:
        if trusted:
            places += project_places(project)
        else:
            found.skipped += [f"{file}: {UNTRUSTED}" for file in project_files(project)]
    seen: set[Path] = set()  # a project in the home folder: ~/.claude is both
    for place in places:
        for file in agent_files(place.path):
            real = file.resolve()
            if real in seen:
                continue
            seen.add(real)
            agent, reading = read_agent(
                file, dialect=place.dialect, source=place.source, known=known, providers=configured
            )
            found.problems += reading.problems
            if agent is None:
                found.skipped += reading.notes
                continue
            earlier = found.agents.get(agent.name)
            if earlier is not None:
                note = f"replaces the {agent.name} agent of {earlier.where}"
                agent = replace(agent, notes=(*agent.notes, note))
            found.agents[agent.name] = agent
    return found
