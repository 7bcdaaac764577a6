"""`ToolContext`: what a tool learns about the session that called it."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path


def find_worktree(directory: Path) -> Path:
    """The git root above ``directory`` (a ``.git`` folder or file), else ``directory``."""
    directory = directory.resolve()
    for candidate in (directory, *directory.parents):
        if (candidate / ".git").exists():
            return candidate
    return directory


@dataclass(frozen=True)
class ToolContext:
    """Passed to handlers that take a second argument, and to tool files that ask for it.

    ``message_id`` is the id of the assistant message whose tool calls these are (one
    reply's calls share it); ``call_id`` is the call's own. The page's camelCase names
    answer too: ``sessionID``, ``messageID`` (and ``callID``). ``agent`` is the agent
    making the call: ``main``, or a subagent's name (then ``parent_call`` is the id of the
    ``task`` call it runs for)."""

    agent: str = "main"
    session_id: str = ""
    message_id: str = ""
    directory: str = field(default_factory=os.getcwd)
    worktree: str = ""
    call_id: str = ""
    parent_call: str = ""  # the ``task`` call whose subagent makes this call ("" for main)

    def __post_init__(self) -> None:
        if not self.worktree:
            object.__setattr__(self, "worktree", str(find_worktree(Path(self.directory))))

    # the Dropstone/opencode page's spellings (``const { sessionID, messageID } = context``)

    @property
    def sessionID(self) -> str:
        return self.session_id

    @property
    def messageID(self) -> str:
        return self.message_id

    @property
    def callID(self) -> str:
        return self.call_id
