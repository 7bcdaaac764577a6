"""Public: command hooks (shell commands in Claude Code's hook protocol) and what the
session's current load runs (``in_force(session)``), for ``/hooks`` and plugins."""

from .core.hooks.command_hooks import (
    CLAUDE_TOOL_NAMES,
    DEFAULT_TIMEOUT,
    EVENTS,
    CommandHook,
    HookSet,
    in_force,
    parse,
)

__all__ = [
    "CLAUDE_TOOL_NAMES",
    "DEFAULT_TIMEOUT",
    "EVENTS",
    "CommandHook",
    "HookSet",
    "in_force",
    "parse",
]
