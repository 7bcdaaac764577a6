"""Primary agents (issue 30): ``/agent NAME`` makes an agent with ``mode: primary`` the
session's own (its instructions join the system prompt, only its tools are offered and
allowed); ``/agent default`` goes back; without a name a picker asks. Through the real
loop and client against the testing kit's server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tui_agent import Session, create_session
from tui_agent.events import AgentChanged
from tui_agent.testing import Call, FakeOpenAI, Person, Reply

PLANNER = """\
---
name: planner
description: Plans changes without making them
mode: primary
tools: read, glob, grep, list, todo
---

You plan. Read the code, then write the plan as a todo list.
"""


def session_for(project: Path, server: FakeOpenAI) -> Session:
    (project / ".tui-agent" / "agents").mkdir(parents=True)
    (project / ".tui-agent" / "agents" / "planner.md").write_text(PLANNER)
    return create_session(project, base_url=server.base_url, model="m", trust=True)


def offered(body: dict[str, Any]) -> list[str]:
    return sorted(tool["function"]["name"] for tool in body.get("tools") or [])


def notes(session: Session) -> list[str]:
    return [note.text for note in session.output.history]


async def test_agent_makes_the_session_a_primary_agent_and_default_goes_back(
    project: Path,
) -> None:
    with FakeOpenAI() as server:
        session = session_for(project, server)
        changed: list[str] = []
        session.events.listen(
            lambda e: changed.append(e.agent) if isinstance(e, AgentChanged) else None
        )
        assert await session.commands.run_line("/agent planner")
        assert changed == ["planner"]
        assert "Agent: planner — tools: read, glob, grep, list, todo." in notes(session)
        server.script += [
            Reply(calls=[Call("write", {"path": "x.txt", "content": "no"})]),
            Reply("planned"),
        ]
        await session.turn("plan the change")
        first = server.requests[0]
        assert offered(first) == ["glob", "grep", "list", "read", "todo"]
        assert "You plan. Read the code" in first["messages"][0]["content"]
        result = json.loads(server.requests[1]["messages"][-1]["content"])
        assert 'tool "write" is not available to the agent planner' in result["error"]
        assert not (project / "x.txt").exists()

        assert await session.commands.run_line("/agent default")
        assert changed == ["planner", ""]
        server.script.append(Reply("ok"))
        await session.turn("now do it")
        last = server.requests[-1]
        assert {"write", "execute", "task"} <= set(offered(last))
        assert "You plan." not in last["messages"][0]["content"]


async def test_a_subagent_or_unknown_agent_cannot_be_the_session(project: Path) -> None:
    with FakeOpenAI() as server:
        session = session_for(project, server)
        await session.commands.run_line("/agent explore")
        await session.commands.run_line("/agent nobody")
    said = notes(session)
    assert "agent 'explore' is a subagent only; the primary agents: planner" in said
    assert "agent 'nobody' is unknown; the primary agents: planner" in said
    assert session.agents.primary is None


async def test_agent_without_a_name_asks_with_a_picker(project: Path) -> None:
    with FakeOpenAI() as server:
        session = session_for(project, server)
        person = Person(picks=["planner"])
        session.frontend = person
        await session.commands.run_line("/agent")
    assert person.asked == ["choose Agent"]
    primary = session.agents.primary
    assert primary is not None and primary.name == "planner"
