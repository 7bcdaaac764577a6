"""The system prompt: who the agent is, where it works, and the memory files
(``memory.py``: the user's and the repository's ``AGENTS.md`` / ``CLAUDE.md``)."""

from __future__ import annotations

import platform
from datetime import date
from pathlib import Path

from .memory import Memory

BASE = (
    "You are tui-agent, a coding agent working in the user's terminal. Use the tools to "
    "read, search and change files and to run commands; prefer small, verifiable steps; "
    "say briefly what you did. Paths are relative to the working folder."
)


def system_prompt(directory: Path, worktree: Path, memory: Memory | None = None) -> str:
    """The base prompt, the folders, and the memory files that apply now (``memory``;
    a fresh ``Memory`` of the folder when not given)."""
    parts = [
        BASE,
        f"Working folder: {directory}\nGit root: {worktree}\n"
        f"Platform: {platform.system()}\nToday: {date.today().isoformat()}",
    ]
    if memory is None:
        memory = Memory(directory, worktree)
    instructions = memory.prompt()
    if instructions:
        parts.append(instructions)
    return "\n\n".join(parts)
