"""The system prompt: who the agent is, where it works, and the nearest AGENTS.md."""

from __future__ import annotations

import platform
from datetime import date
from pathlib import Path

BASE = (
    "You are tui-agent, a coding agent working in the user's terminal. Use the tools to "
    "read, search and change files and to run commands; prefer small, verifiable steps; "
    "say briefly what you did. Paths are relative to the working folder."
)
MAX_AGENTS_MD = 64_000


def find_agents_md(directory: Path) -> Path | None:
    for folder in (directory, *directory.parents):
        candidate = folder / "AGENTS.md"
        if candidate.is_file():
            return candidate
    return None


def system_prompt(directory: Path, worktree: Path) -> str:
    parts = [
        BASE,
        f"Working folder: {directory}\nGit root: {worktree}\n"
        f"Platform: {platform.system()}\nToday: {date.today().isoformat()}",
    ]
    agents = find_agents_md(directory)
    if agents is not None:
        try:
            text = agents.read_text(encoding="utf-8", errors="replace")[:MAX_AGENTS_MD]
        except OSError:
            text = ""
        if text.strip():
            parts.append(f"Instructions from {agents}:\n\n{text}")
    return "\n\n".join(parts)
