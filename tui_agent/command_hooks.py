"""Public: command hooks (shell commands in Claude Code's hook protocol), what the
session's current load runs (``in_force(session)``), for ``/hooks`` and plugins, and the
engine the bundled ``command_hooks`` plugin wires in (``load``, ``Engine``, ``Loaded``,
``PromptStopped``)."""

from .core.hooks.command_hooks import (
    CLAUDE_TOOL_NAMES,
    DEFAULT_TIMEOUT,
    EVENTS,
    CommandHook,
    Engine,
    HookSet,
    Loaded,
    PromptStopped,
    in_force,
    load,
    parse,
)

__all__ = [
    "CLAUDE_TOOL_NAMES",
    "DEFAULT_TIMEOUT",
    "EVENTS",
    "CommandHook",
    "Engine",
    "HookSet",
    "Loaded",
    "PromptStopped",
    "in_force",
    "load",
    "parse",
]
