"""``/memory N`` in the app opens the memory file in ``$VISUAL`` / ``$EDITOR`` (the app
steps aside as for Ctrl+G): Claude Code's "/memory slash command during a session to open
any memory file in your system editor". What is saved is in the next request."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from conftest import write

from tui_agent import create_session
from tui_agent.testing import FakeOpenAI, Reply, chat_text, run_app, send, wait_for_text

EDITOR = """\
import sys
from pathlib import Path

Path(sys.argv[-1]).write_text("Answer in French.\\n")
"""


async def test_memory_n_opens_the_file_in_the_editor_and_the_next_request_has_it(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(project / "AGENTS.md", "Answer in English.\n")
    script = tmp_path / "editor.py"
    script.write_text(EDITOR)
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", f"{sys.executable} {script}")
    async with FakeOpenAI([Reply("d'accord")]) as server:
        session = create_session(project, base_url=server.base_url, model="fake-model")
        async with run_app(session) as pilot:
            await send(pilot, "/memory 1")
            await wait_for_text(pilot, "Edited AGENTS.md")
            assert (project / "AGENTS.md").read_text() == "Answer in French.\n"
            await send(pilot, "bonjour")
            await wait_for_text(pilot, "d'accord")
        assert "Answer in French." in server.requests[0]["messages"][0]["content"]
        assert "Answer in English." not in chat_text(pilot.app)
