"""/agent in the app (issue 30): the prompt's border shows the primary agent the session
is, and stops showing it after /agent default."""

from __future__ import annotations

from pathlib import Path

from tui_agent import create_session
from tui_agent.testing import FakeOpenAI, run_app, send, wait_for, wait_for_prompt

PLANNER = """\
---
name: planner
description: Plans changes without making them
mode: primary
tools: read, glob, grep, list
---

You plan.
"""


async def test_the_border_shows_the_primary_agent(project: Path) -> None:
    (project / ".tui-agent" / "agents").mkdir(parents=True)
    (project / ".tui-agent" / "agents" / "planner.md").write_text(PLANNER)
    with FakeOpenAI() as server:
        session = create_session(project, base_url=server.base_url, model="m", trust=True)
        async with run_app(session, size=(120, 30)) as pilot:
            prompt = await wait_for_prompt(pilot)

            def border() -> str:
                return str(prompt.border_subtitle)

            await wait_for(pilot, lambda: "mode: " in border())
            assert "agent:" not in border()
            await send(pilot, "/agent planner")
            await wait_for(pilot, lambda: "agent: planner" in border())
            await send(pilot, "/agent default")
            await wait_for(pilot, lambda: "agent:" not in border())
