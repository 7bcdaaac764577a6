"""Issue 6, start-up: what the app does before its first frame, and what it leaves for later.

The first frame (header, chat, prompt, status line, footer keys) comes before plugins, tool
files and config are loaded, and before the heavy libraries are imported: the OpenAI client,
jsonschema, Markdown, syntax highlighting, TOML, the tools panel's tables.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from textual.widgets import Footer

from tui_agent import create_session
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.prompt import PromptArea
from tui_agent.ui.tools_panel import ToolsPanel

SIZE = (100, 30)

# imported only when something needs them: never on the way to the first frame
HEAVY = [
    "openai",
    "httpx",
    "jsonschema",
    "markdown_it",
    "pygments",
    "rich.syntax",
    "tomllib",
    "textual.widgets._markdown",
    "textual.widgets._data_table",
    "tui_agent.ui.markdown_widgets",
]

FIRST_FRAME = textwrap.dedent(
    """
    import asyncio, json, sys

    from tui_agent.core.session import Session, create_session
    from tui_agent.ui.app import TuiAgentApp

    seen = {}
    reload = Session.reload

    def recording_reload(self):
        footer = app.query_one("Footer")
        seen["keys_drawn"] = bool(footer.children) and all(k.region for k in footer.children)
        seen["prompt_focused"] = app.focused is app.query_one("#prompt")
        seen["modules"] = sorted(sys.modules)
        return reload(self)

    Session.reload = recording_reload

    async def main():
        async with app.run_test(size=(100, 30)) as pilot:
            for _ in range(200):
                if app.session.loaded:
                    break
                await pilot.pause(0.02)
            seen["loaded"] = app.session.loaded

    app = TuiAgentApp(create_session(sys.argv[1], load=False))
    asyncio.run(main())
    print(json.dumps(seen))
    """
)


def test_the_first_frame_is_drawn_before_plugins_load_and_heavy_imports(project: Path) -> None:
    """A fresh process, as ``tui-agent`` starts: when loading begins the footer keys are on
    screen, the prompt has the focus, and none of the heavy libraries is imported yet."""
    done = subprocess.run(
        [sys.executable, "-c", FIRST_FRAME, str(project)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    seen: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["loaded"]
    assert seen["keys_drawn"]
    assert seen["prompt_focused"]
    modules = set(seen["modules"])
    assert [name for name in HEAVY if name in modules] == []


async def test_the_footer_is_rebuilt_only_when_its_keys_change(project: Path) -> None:
    app = TuiAgentApp(create_session(project))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        footer = app.query_one(Footer)
        keys = list(footer.children)
        assert keys and isinstance(app.focused, PromptArea)

        app.screen.refresh_bindings()  # the same bindings: the same key widgets stay
        await pilot.pause()
        await pilot.pause()
        assert list(footer.children) == keys

        app.bind("f9", "bell", description="Panel")  # a new key: rebuilt
        app.screen.refresh_bindings()
        await pilot.pause()
        await pilot.pause()
        assert list(footer.children) != keys
        assert any("Panel" in str(key.render()) for key in footer.children)
    app.session.journal.close()


async def test_the_tools_panel_is_built_when_first_shown_and_lists_every_tool(
    project: Path,
) -> None:
    session = create_session(project)
    app = TuiAgentApp(session)
    async with app.run_test(size=SIZE) as pilot:
        panel = app.query_one(ToolsPanel)
        assert not panel.built and not app.query("#tools-table")
        session.toolbox.add("early", description="Before the panel exists", handler=lambda a: 1)
        await pilot.pause()  # the panel hears of it and does nothing yet

        await pilot.press("ctrl+t")
        await pilot.pause()
        assert panel.built and panel.display
        table = app.query_one("#tools-table")
        names = {str(key.value) for key in table.rows}  # type: ignore[attr-defined]
        assert "early" in names and "read" in names

        session.toolbox.add("late", description="While it is shown", handler=lambda a: 2)
        await pilot.pause()
        assert "late" in {str(key.value) for key in table.rows}  # type: ignore[attr-defined]
    session.journal.close()
