"""What a plugin host offers: the part of a session the loaders use (``extensions.py``,
``plugins.py``, ``prompt_commands.py``, and the command hooks' ``HookHost``).

The loaders are typed against ``PluginHost``, never against the session itself, so
nothing below ``session`` imports it; ``Session`` satisfies it structurally. A setup
function receives the host itself (the whole session: ``tui_agent.Session``).
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path
from typing import Protocol

from ..conversation.mentions import Expanded
from ..hooks.engine import HookHost
from .commands import Commands


class PluginHost(HookHost, Protocol):
    """``HookHost`` (``id``, ``directory``, ``workspace``, ``toolbox``, ``output``,
    ``extensions.kept``, ``permissions.mode``/``ask``, ``conversation.messages``,
    ``cancel()``) and what plugin, tool-file and Markdown-command loading use."""

    @property
    def worktree(self) -> Path: ...

    @property
    def commands(self) -> Commands: ...

    @property
    def busy(self) -> bool: ...

    def running(self) -> AbstractContextManager[None]: ...

    async def turn(self, prompt: str | Expanded) -> str: ...
