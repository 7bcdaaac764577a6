"""/agents: the agents a ``task`` call may run and the session may become: the bundled
ones, the user's and the project's agent files (a trusted project's), each with where it
comes from, its tools and model, and what loading the files found wrong. /agent NAME: the
session becomes a primary agent (opencode's build and plan idea): its instructions join
the system prompt, its tools are the ones offered, its model is used; the permission mode
stays as it is."""

from __future__ import annotations

import tui_agent
from tui_agent.agents import agents_markdown


@tui_agent.setup("agents")
def agents(session: tui_agent.Session) -> None:
    @session.commands.register(
        "agents",
        description="List the agents (bundled, yours, the project's): source, tools, model",
    )
    def agents_command(args: str | None) -> None:
        found = session.agents.definitions
        session.output.say(agents_markdown(found, session.workspace.project), kind="markdown")

    def primaries() -> list[str]:
        return ["default", *(a.name for a in session.agents.definitions.primaries())]

    @session.commands.register(
        "agent",
        description="Be a primary agent (its prompt, tools and model): /agent NAME; "
        "/agent default goes back; without a name, pick one",
        completions=primaries,
    )
    async def agent_command(args: str | None) -> None:
        name = (args or "").strip()
        if not name:
            names = primaries()
            if len(names) == 1:
                session.output.say(
                    "No primary agents: an agent file with `mode: primary` (or `all`) is one. "
                    "See /agents."
                )
                return
            picked = await session.frontend.choose("Agent", names)
            if picked is None:
                current = session.agents.primary
                session.output.say(
                    "Agents: "
                    + ", ".join(names)
                    + ". Now: "
                    + (current.name if current else "default")
                    + ". Use /agent NAME."
                )
                return
            name = picked
        try:
            agent = session.agents.use(None if name in ("default", "none") else name)
        except ValueError as exc:
            session.output.say(str(exc), kind="error")
            return
        if agent is None:
            session.output.say("Agent: default (the configured prompt, tools and model).")
        else:
            tools = ", ".join(session.agents.tool_names(agent, as_primary=True)) or "none"
            session.output.say(f"Agent: {agent.name} — tools: {tools}.")
