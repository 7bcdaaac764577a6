"""Issue 35: the status under the prompt shows the session's cost where it is known (the
real app on a real session against the testing kit's server), and nothing, not $0, for
a model without a price."""

from __future__ import annotations

from pathlib import Path

from conftest import ALLOW_ALL, write

from tui_agent import create_session
from tui_agent.core.util.paths import user_config_dir
from tui_agent.testing import FakeOpenAI, Reply, send, wait_for
from tui_agent.ui.app import TuiAgentApp


async def status_after_a_turn(project: Path, model: str) -> str:
    async with FakeOpenAI([Reply("ok", usage=(1000, 100))]) as server:
        session = create_session(project, base_url=server.base_url, model=model)
        app = TuiAgentApp(session)
        async with app.run_test(size=(140, 30)) as pilot:
            await send(pilot, "hello")
            await wait_for(pilot, lambda: len(server.requests) == 1 and not session.busy)
            await pilot.pause(0.1)
            return str(app.prompt.border_subtitle)


async def test_the_status_shows_the_cost_of_a_priced_model(project: Path) -> None:
    write(
        user_config_dir() / "config.toml",
        ALLOW_ALL + '[models."m"]\nprice = { input = 3.0, output = 15.0 }\n',
    )
    status = await status_after_a_turn(project, "m")
    assert "1100 tokens · $0.0045 · " in status  # 1000 × $3 + 100 × $15, per million


async def test_an_unpriced_model_shows_no_cost(project: Path) -> None:
    status = await status_after_a_turn(project, "llama3")
    assert "1100 tokens" in status and "$" not in status
