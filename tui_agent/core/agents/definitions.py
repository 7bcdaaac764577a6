"""What an agent is once its file is read: ``AgentDefinition``, in tui-agent's own terms
(its tool names, its model or None for the session's), whichever agent's format it was
written in."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

MODES = ("subagent", "primary", "all")


@dataclass(frozen=True)
class AgentDefinition:
    """One agent. ``tools`` and ``denied`` hold tui-agent's tool names, or patterns
    (``mcp__github__*``) matched against a tool's name and its aliases: ``tools`` None
    means every tool of the session, ``denied`` is taken away from that (opencode's
    ``write: false``, Claude's ``disallowedTools``). Use ``tool_names`` (or ``allows``)
    to apply both to the session's tools rather than reading ``tools`` alone."""

    name: str  # the file's stem unless the front matter has a ``name``
    description: str
    instructions: str  # the Markdown body: the agent's part of the system prompt
    tools: tuple[str, ...] | None = None
    model: str | None = None  # None: the session's model (``notes`` say why, if asked)
    temperature: float | None = None
    mode: str = "subagent"  # "subagent" | "primary" | "all"
    max_steps: int | None = None
    can_delegate: bool = False  # may this agent, run as a child, start children itself
    source: str = "bundled"  # "bundled" | "user" | "project"
    path: Path | None = None
    dialect: str = "bundled"  # "tui-agent" | "claude" | "opencode" | "gemini" | "bundled"
    notes: tuple[str, ...] = ()  # what loading changed or could not honour, for /agents
    denied: tuple[str, ...] = ()
    requested_model: str | None = None  # the file's ``model`` as written

    @property
    def where(self) -> str:
        """The file it came from, or ``bundled``."""
        return str(self.path) if self.path is not None else "bundled"

    def allows(self, tool: str, aliases: Iterable[str] = ()) -> bool:
        """Whether the agent may use ``tool`` (known also by ``aliases``)."""
        names = (tool, *aliases)
        if any(_matches(pattern, names) for pattern in self.denied):
            return False
        return self.tools is None or any(_matches(pattern, names) for pattern in self.tools)

    def tool_names(self, available: Mapping[str, Iterable[str]] | Iterable[str]) -> list[str]:
        """The session's tools this agent gets, in the session's order. ``available``:
        the tool names, or a mapping of each name to its aliases (so ``mcp__server__*``
        finds an MCP tool by its Claude alias)."""
        if isinstance(available, Mapping):
            pairs = [(name, tuple(aliases)) for name, aliases in available.items()]
        else:
            pairs = [(name, ()) for name in available]
        return [name for name, aliases in pairs if self.allows(name, aliases)]

    @property
    def is_subagent(self) -> bool:
        return self.mode in ("subagent", "all")

    @property
    def is_primary(self) -> bool:
        return self.mode in ("primary", "all")


def _matches(pattern: str, names: Iterable[str]) -> bool:
    if any(ch in pattern for ch in "*?["):
        return any(fnmatch.fnmatchcase(name, pattern) for name in names)
    return pattern in names
