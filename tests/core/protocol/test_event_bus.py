"""Issue 14: one typed event bus. ``session.events`` carries the toolbox's and the commands'
changes too (``ToolsChanged``, ``CommandsChanged``), so the app follows the registries from
its one handler table (the tools panel listens to nobody itself), a plugin hears them, and
headless runs leave them out of their output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import write
from textual.pilot import Pilot
from textual.widgets import DataTable

from tui_agent import create_session
from tui_agent.core.protocol import events as ev
from tui_agent.core.util.paths import user_config_dir
from tui_agent.testing import chat_text, run_app, send, wait_for, wait_for_prompt, wait_for_text
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.chat import ToolCallBlock
from tui_agent.ui.prompt import CompletionMenu

SIZE = (120, 40)


def tools_table(app: TuiAgentApp) -> DataTable[Any]:
    return app.query_one("#tools-table", DataTable)


def rows(app: TuiAgentApp) -> list[str]:
    return [str(key.value) for key in tools_table(app).rows]


def cell(app: TuiAgentApp, name: str, column: str) -> str:
    return str(tools_table(app).get_cell(name, column))


async def open_panel(pilot: Pilot[Any]) -> TuiAgentApp:
    app: TuiAgentApp = pilot.app  # type: ignore[assignment]
    await pilot.press("ctrl+t")
    await wait_for(pilot, lambda: app.tools_panel is not None and app.tools_panel.built)
    return app


# -- the session's bus -----------------------------------------------------------------------


async def test_the_bus_carries_tool_hook_and_command_changes(project: Path) -> None:
    session = create_session(project)
    heard: list[Any] = []
    session.events.listen(heard.append)
    session.toolbox.add("shout", description="Say it", handler=lambda args: 1)
    session.toolbox.add("shout", description="Say it again", aliases=["yell"], handler=dict)
    session.toolbox.before("shout", lambda args: None)
    session.toolbox.after(lambda args, result: None)  # a global hook
    session.toolbox.remove("shout")
    session.commands.register("zap", description="Zap", handler=lambda: None)
    session.commands.unregister("zap")
    assert heard == [
        ev.ToolsChanged("tools", "shout"),
        ev.ToolsChanged("tools", "shout"),
        ev.ToolsChanged("hooks", "shout"),
        ev.ToolsChanged("hooks", "*"),
        ev.ToolsChanged("tools", "shout"),
        ev.CommandsChanged(),
        ev.CommandsChanged(),
    ]
    session.conversation.journal.close()


def test_a_plugin_listening_on_session_events_hears_tools_added_after_load(project: Path) -> None:
    write(
        user_config_dir() / "plugins" / "listener.py",
        "import tui_agent\n"
        "from tui_agent.events import CommandsChanged, ToolsChanged\n\n"
        "@tui_agent.setup('listener')\n"
        "def _setup(session):\n"
        "    def heard(event):\n"
        "        if isinstance(event, ToolsChanged):\n"
        "            session.output.say(f'heard {event.kind} {event.name}')\n"
        "        elif isinstance(event, CommandsChanged):\n"
        "            session.output.say('heard commands')\n"
        "    session.on('close', session.events.listen(heard))\n",
    )
    session = create_session(project)
    assert not session.extensions.problems
    said = len(session.output.history)
    session.toolbox.add("late", description="After the load", handler=lambda args: 1)
    session.toolbox.before("late", lambda args: None)
    session.commands.register("later", description="After the load", handler=lambda: None)
    texts = [note.text for note in list(session.output.history)[said:]]
    assert texts == ["heard tools late", "heard hooks late", "heard commands"]
    session.conversation.journal.close()


# -- the app: the tools panel and the chat follow the bus ------------------------------------


async def test_the_tools_panel_follows_adds_replacements_hooks_removals_and_reload(
    project: Path,
) -> None:
    session = create_session(project)
    async with run_app(session, size=SIZE) as pilot:
        app = await open_panel(pilot)
        assert {"read", "list"} <= set(rows(app))

        session.toolbox.add("shout", description="Say it", handler=lambda args: 1)
        await wait_for(pilot, lambda: "shout" in rows(app))
        assert cell(app, "shout", "aliases") == ""

        session.toolbox.add("shout", description="Louder", aliases=["yell"], handler=dict)
        await wait_for(pilot, lambda: cell(app, "shout", "aliases") == "yell")

        hooks = cell(app, "shout", "hooks")
        session.toolbox.before("shout", lambda args: None)
        await wait_for(pilot, lambda: cell(app, "shout", "hooks") != hooks)

        session.toolbox.remove("shout")
        await wait_for(pilot, lambda: "shout" not in rows(app))

        session.toolbox.add("shout", description="Back", handler=lambda args: 1)
        write(
            user_config_dir() / "plugins" / "weather.py",
            "import tui_agent\n\n"
            "@tui_agent.setup('weather')\n"
            "def _setup(session):\n"
            "    session.toolbox.add('weather', description='Today',\n"
            "                        handler=lambda args: {'sky': 'blue'})\n",
        )
        await wait_for(pilot, lambda: "shout" in rows(app))
        await send(pilot, "/reload")  # a new load: the plugin's tool, not the one added here
        await wait_for(pilot, lambda: "weather" in rows(app) and "shout" not in rows(app))
        assert {"read", "list"} <= set(rows(app))
    session.conversation.journal.close()


async def test_a_tool_called_by_a_slash_command_shows_in_the_chat_and_the_tools_panel(
    project: Path,
) -> None:
    """Called by its alias: the chat names both, the panel counts the call for the tool."""
    session = create_session(project)
    session.toolbox.add(
        "shout", description="Say it loud", aliases=["yell"], handler=lambda args: {"said": "HI"}
    )

    async def loud(args: str | None) -> None:
        result = await session.toolbox.run("yell", {})
        session.output.say(f"shouted: {result.ok}")

    session.commands.register("loud", description="Shout", handler=loud)
    async with run_app(session, size=SIZE) as pilot:
        app = await open_panel(pilot)
        assert cell(app, "shout", "calls") == "0"
        await send(pilot, "/loud")
        await wait_for_text(pilot, "shouted: True")
        (block,) = app.chat.query(ToolCallBlock)
        assert block.result is not None and block.result.ok
        assert "shout (as yell)" in chat_text(app)
        await wait_for(pilot, lambda: cell(app, "shout", "calls") == "1")
        assert "ok" in cell(app, "shout", "last")
    session.conversation.journal.close()


async def test_an_open_completion_menu_follows_the_commands(project: Path) -> None:
    session = create_session(project)
    for name in ("zebra", "zeta"):
        session.commands.register(name, description=name, handler=lambda: None)
    async with run_app(session, size=SIZE) as pilot:
        app: TuiAgentApp = pilot.app  # type: ignore[assignment]
        prompt = await wait_for_prompt(pilot)
        await pilot.press(*"/ze", "tab")
        menu = app.query_one(CompletionMenu)

        def options() -> list[str]:
            return [str(menu.get_option_at_index(i).prompt) for i in range(menu.option_count)]

        assert menu.has_class("visible") and options() == ["/zebra", "/zeta"]
        session.commands.register("zero", description="new", handler=lambda: None)
        await wait_for(pilot, lambda: options() == ["/zebra", "/zero", "/zeta"])
        session.commands.unregister("zebra")
        session.commands.unregister("zeta")
        await wait_for(pilot, lambda: options() == ["/zero"])
        assert menu.has_class("visible")
        session.commands.unregister("zero")
        await wait_for(pilot, lambda: not menu.has_class("visible"))
        assert prompt.text == "/ze"
    session.conversation.journal.close()


# -- headless ---------------------------------------------------------------------------------


@pytest.mark.parametrize("as_json", [False, True])
def test_headless_runs_print_no_registry_changes(
    project: Path, capsys: pytest.CaptureFixture[str], as_json: bool
) -> None:
    from tui_agent.headless import run_headless

    session = create_session(project, provider="stub")
    session.on("turn", lambda: session.toolbox.add("late", description="x", handler=dict))
    assert run_headless(session, "hello", as_json=as_json) == 0
    assert "late" in session.toolbox.tools  # it changed during the run
    out, err = capsys.readouterr()
    assert "late" not in out and "late" not in err
    if as_json:
        types = {json.loads(line)["type"] for line in out.splitlines()}
        assert "done" in types
        assert not types & {"ToolsChanged", "CommandsChanged"}
