"""The agents as ``/agents`` and ``tui-agent agents`` show them: one row each (name,
source, tools, model, description) and what loading said (problems, skipped files,
notes)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .definitions import AgentDefinition
from .loading import AgentSet


def shown_path(path: Path | None, project: Path | None = None) -> str:
    """A file's path: relative to ``project`` when in it, else with the home folder as
    ``~``; ``bundled`` for none."""
    if path is None:
        return "bundled"
    if project is not None and path.is_relative_to(project):
        return str(path.relative_to(project))
    home = str(Path.home())
    text = str(path)
    return "~" + text[len(home) :] if text.startswith(home + "/") else text


def tools_text(agent: AgentDefinition) -> str:
    """``all``, ``all but write, edit`` or the tools' names."""
    if agent.tools is None:
        return "all but " + ", ".join(agent.denied) if agent.denied else "all"
    kept = [tool for tool in agent.tools if agent.allows(tool)] if agent.denied else agent.tools
    return ", ".join(kept) or "none"


def summary(agent: AgentDefinition, limit: int = 120) -> str:
    """The description's first sentence, cut to ``limit`` characters."""
    text = " ".join(agent.description.split())
    end = text.find(". ")
    if 0 < end < limit:
        text = text[: end + 1]
    return text if len(text) <= limit else text[: limit - 1] + "…"


def model_text(agent: AgentDefinition) -> str:
    return agent.model or "session"


def row(agent: AgentDefinition) -> dict[str, Any]:
    """One agent as plain data (``--json``)."""
    return {
        "name": agent.name,
        "source": agent.source,
        "path": str(agent.path) if agent.path is not None else None,
        "dialect": agent.dialect,
        "mode": agent.mode,
        "tools": list(agent.tools) if agent.tools is not None else None,
        "denied": list(agent.denied),
        "model": agent.model,
        "requested_model": agent.requested_model,
        "temperature": agent.temperature,
        "max_steps": agent.max_steps,
        "can_delegate": agent.can_delegate,
        "description": agent.description,
        "notes": list(agent.notes),
    }


def as_data(found: AgentSet) -> dict[str, Any]:
    return {
        "agents": [row(agent) for agent in found.agents.values()],
        "problems": list(found.problems),
        "skipped": list(found.skipped),
    }


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def agents_markdown(found: AgentSet, project: Path | None = None) -> str:
    """A Markdown table of the agents, then their notes, the problems and the files left
    out (paths in ``project`` relative to it)."""
    lines = ["| Agent | Source | Tools | Model | Description |", "|---|---|---|---|---|"]
    for agent in found.agents.values():
        mode = "" if agent.mode == "subagent" else f" ({agent.mode})"
        lines.append(
            f"| `{agent.name}`{mode} | {_cell(shown_path(agent.path, project))}"
            f" | {_cell(tools_text(agent))} | {_cell(model_text(agent))}"
            f" | {_cell(summary(agent))} |"
        )
    said = [f"- `{agent.name}`: {note}" for agent in found.agents.values() for note in agent.notes]
    for title, items in (
        ("Notes", said),
        ("Problems", [f"- {_cell(problem)}" for problem in found.problems]),
        ("Not loaded", [f"- {_cell(skip)}" for skip in found.skipped]),
    ):
        if items:
            lines += ["", f"**{title}**", "", *items]
    return "\n".join(lines)
