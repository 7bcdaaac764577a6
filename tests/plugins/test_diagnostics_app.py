"""Issue 34 in the frontends: the app's edit block shows what the language server said
(✔ no new problems / ⚠ 1 new error), the tools panel and /lsp show the servers started;
``tui-agent run`` prints the same on the tool line. The real pylsp, as in
test_diagnostics.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from test_diagnostics import FIX_LINE, MODULE, alive, pids, real_project  # noqa: F401

from tui_agent import create_session
from tui_agent.testing import Call, FakeOpenAI, Reply

CLI = [sys.executable, "-m", "tui_agent", "run"]
BROKEN = FIX_LINE.replace("parts)", "partz)")


def headers(app: Any) -> list[str]:
    from tui_agent.ui.blocks.tool_call import ToolCallBlock

    return [str(block.header.render()) for block in app.query(ToolCallBlock)]


async def test_the_edit_block_and_the_tools_panel(real_project: Path) -> None:  # noqa: F811
    from textual.widgets import Static

    from tui_agent.testing import run_app, send, turn_over, wait_for, wait_for_text

    replies = [
        Reply(calls=[Call("edit", {"path": MODULE, "old": FIX_LINE, "new": BROKEN})]),
        Reply(calls=[Call("edit", {"path": MODULE, "old": BROKEN, "new": FIX_LINE})]),
        Reply("done"),
    ]
    async with FakeOpenAI(replies) as server:
        session = create_session(real_project, base_url=server.base_url, model="m")
        async with run_app(session, size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: session.extensions.loaded)
            await send(pilot, "break it and fix it")
            await wait_for_text(pilot, "done", timeout=30)
            await turn_over(pilot)
            first, second = headers(pilot.app)
            assert first.endswith("⚠ 1 new error") and "edit" in first
            assert second.endswith("✔ no new problems")
            [pid] = pids(session)
            await pilot.press("ctrl+t")
            await wait_for(pilot, lambda: pilot.app.query("#lsp-servers"))
            line = pilot.app.query_one("#lsp-servers", Static)
            await wait_for(pilot, lambda: line.display)
            text = str(line.render())
            assert text == f"Language servers: pylsp · {real_project} · running · 1 file open"
            await send(pilot, "/lsp")
            await wait_for_text(pilot, "Language servers")
        assert not alive(pid)  # the app closed the session: its server with it


def test_tui_agent_run_prints_it_on_the_tool_line(real_project: Path) -> None:  # noqa: F811
    replies = [
        Reply(calls=[Call("edit", {"path": MODULE, "old": FIX_LINE, "new": BROKEN})]),
        Reply("broken"),
    ]
    with FakeOpenAI(replies) as server:
        ran = subprocess.run(
            [*CLI, "--base-url", server.base_url, "--model", "m", "--yes", "break it"],
            cwd=real_project,
            env=dict(os.environ),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert ran.returncode == 0, ran.stderr
    [line] = [line for line in ran.stderr.splitlines() if line.startswith("✔ edit")]
    assert line.endswith("s) ⚠ 1 new error")
    assert "partz" in (real_project / MODULE).read_text()
