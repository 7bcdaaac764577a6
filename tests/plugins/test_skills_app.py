"""Skills in the app (Pilot): ``/name ARGS`` typed at the prompt sends the skill as the
turn's prompt (the chat shows what was typed, then the reply); ``/skills`` shows the
table; Tab completes a skill's ``/name``."""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import FIXTURES

from tui_agent import create_session
from tui_agent.core.extensions.commands import complete
from tui_agent.testing import FakeOpenAI, Reply, run_app, send, turn_over, wait_for, wait_for_text

VALID = FIXTURES / "skills" / "made" / "valid"


async def test_slash_name_in_the_app(isolated_home: Path, project: Path) -> None:
    folder = isolated_home / ".agents" / "skills"
    shutil.copytree(VALID / "git-summary", folder / "git-summary")
    async with FakeOpenAI([Reply("Two changes since v1.0.")]) as server:
        session = create_session(project, base_url=server.base_url, model="m")
        async with run_app(session) as pilot:
            await wait_for(pilot, lambda: session.extensions.loaded)
            assert complete("/git-s", session.commands).candidates == ["/git-summary"]
            await send(pilot, "/git-summary v1.0")
            await wait_for_text(pilot, "Two changes since v1.0.")
            await turn_over(pilot)
            sent = server.requests[0]["messages"][-1]["content"]
            assert sent.startswith('<skill_content name="git-summary">')
            assert "git log --oneline v1.0..HEAD" in sent
            await send(pilot, "/skills")
            text = await wait_for_text(pilot, "git-summary")
            assert "~/.agents/skills/git-summary" in text
            assert "/git-summary v1.0" in text  # what was typed
        session.conversation.journal.close()
