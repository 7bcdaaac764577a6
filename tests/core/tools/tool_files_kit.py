"""What the tool-file tests share: tool files written into real folders and loaded by
``create_session`` (``tests/core/tools/test_tool_files.py`` and
``tests/core/tools/test_tool_files_loading.py``)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

from conftest import write

from tui_agent import Session, create_session

ECHO = """
from tui_agent import tool

@tool(description="Say where I come from")
def default() -> str:
    return "{label}"
"""  # a tool file: .format(label=...) says which folder it came from

CONTEXT_FIELDS = ("agent", "session_id", "message_id", "directory", "worktree", "call_id")


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def tools_folder(where: str, project: Path, user_config_dir: Path) -> Path:
    return {
        "global": user_config_dir / "tools",
        "project": project / ".tui-agent" / "tools",
        "project-tool": project / ".tui-agent" / "tool",
    }[where]


def load(folder: Path, files: dict[str, str], directory: Path, *, trust: bool = True) -> Session:
    for name, text in files.items():
        write(folder / name, src(text))
    return create_session(directory, trust=trust)


def baseline_names(directory: Path) -> set[str]:
    """Tools a session has without any tool file (bundled plugins only)."""
    return set(create_session(directory, trust=True).toolbox.tools)


def definition(session: Session, name: str) -> dict[str, Any]:
    found = [d for d in session.toolbox.definitions() if d["function"]["name"] == name]
    assert len(found) == 1, [d["function"]["name"] for d in session.toolbox.definitions()]
    return found[0]
