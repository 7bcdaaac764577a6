"""/agents: the agents a ``task`` call may run and the session may become: the bundled
ones, the user's and the project's agent files (a trusted project's), each with where it
comes from, its tools and model, and what loading the files found wrong."""

from __future__ import annotations

import tui_agent
from tui_agent.agents import AgentSet, agents_markdown, load_agents


def session_agents(session: tui_agent.Session) -> AgentSet:
    """The agents as this session sees them: its project and trust, its tools (so an agent
    file may name a plugin's), its provider (another's model falls back, with a note)."""
    workspace = session.workspace
    return load_agents(
        workspace.project,
        trusted=workspace.trusted,
        tools={name: tool.aliases for name, tool in session.toolbox.tools.items()},
        providers=[session.provider.name],
    )


@tui_agent.setup("agents")
def agents(session: tui_agent.Session) -> None:
    @session.commands.register(
        "agents",
        description="List the agents (bundled, yours, the project's): source, tools, model",
    )
    def agents_command(args: str | None) -> None:
        found = session_agents(session)
        session.output.say(agents_markdown(found, session.workspace.project), kind="markdown")
