"""Subagents (issue 30): the ``task`` tool hands a self-contained job to an agent with a
fresh context (``session.agents.run``), and ``/agents`` lists the agents.

``task`` is also known by the names other agents give it (Claude Code's ``Task`` and
``Agent``, ``agent``). Several ``task`` calls in one reply run at the same time
(``max_subagents``, 4 by default). The call itself is never asked about: delegating
changes nothing, and each of the subagent's own calls is asked about as the session's
are. Its description lists the subagents of the current load.
"""

from __future__ import annotations

from typing import Any

import tui_agent

DESCRIPTION = (
    "Run a subagent on a self-contained job in a fresh context: only its final message "
    "comes back. For searches and investigations whose details you need not keep. The "
    "prompt must say everything: the subagent does not see this conversation. Several "
    "task calls in one reply run at the same time."
)

PARAMS: dict[str, Any] = {
    "description": {"type": "string", "description": "A 3-5 word title"},
    "prompt": {"type": "string", "description": "The whole job and what to return"},
    "agent": {"type": "string", "description": "The subagent (default: general)"},
}  # Claude's ``subagent_type`` is taken for ``agent`` too (extra arguments pass)


def description(session: tui_agent.Session) -> str:
    listed = session.agents.describe()
    return f"{DESCRIPTION}\n\nSubagents:\n{listed}" if listed else DESCRIPTION


@tui_agent.setup("task")
def task_plugin(session: tui_agent.Session) -> None:
    async def task(args: dict[str, Any], context: tui_agent.ToolContext) -> dict[str, Any]:
        name = args.get("agent") or args.get("subagent_type") or "general"
        return await session.agents.run(
            str(name),
            str(args["prompt"]),
            description=str(args.get("description") or ""),
            context=context,
        )

    tool = session.toolbox.add(
        "task",
        description=description(session),
        params=PARAMS,
        required=["prompt"],
        aliases=["Task", "Agent", "agent"],
        handler=task,
        read_only=True,  # it changes nothing itself: the subagent's calls are checked
    )

    @session.on("turn")
    def describe_agents() -> None:
        """The subagents in the description again: agent files may have changed, and an
        agent of ours may name a tool a later plugin registered."""
        tool.description = description(session)
