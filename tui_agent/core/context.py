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
    """Passed to handlers that take a second argument, and to tool files that ask for it."""

    agent: str = "main"
    session_id: str = ""
    message_id: str = ""
    directory: str = field(default_factory=os.getcwd)
    worktree: str = ""
    call_id: str = ""

    def __post_init__(self) -> None:
        if not self.worktree:
            object.__setattr__(self, "worktree", str(find_worktree(Path(self.directory))))
