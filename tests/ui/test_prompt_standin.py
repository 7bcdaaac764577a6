"""Issue 29, start-up: the first frame shows a stand-in for the prompt (``prompt_standin``),
so it goes without Textual's TextArea; the prompt takes its place right after.

What must hold: the first frame has the stand-in and no TextArea imported; then the prompt
is there, focused, with the id and the place the stand-in had; keys typed into the stand-in
(and pastes) reach the prompt in order (Enter sends them) while the app's own keys work at once; the
footer shows the same keys before and after; the stand-in looks as the empty prompt does.
The swap is held (``hold_the_swap``) so the stand-in's time lasts as long as a test needs.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.style import Style
from textual import events
from textual.geometry import Region
from textual.widget import Widget
from textual.widgets import Footer

from tui_agent import create_session
from tui_agent.testing import wait_for, wait_for_prompt
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.prompt_standin import PromptStandIn

SIZE = (100, 30)

FIRST_FRAME = textwrap.dedent(
    """
    import asyncio, json, os, sys
    from pathlib import Path

    from tui_agent import cli
    from tui_agent.ui.app import TuiAgentApp

    app = TuiAgentApp(
        make_session=lambda: cli.new_session(cli.no_arguments(), load=False),
        directory=Path.cwd(),
    )

    async def first_frame_drawn():  # what the app calls right after its first frame
        box = app.query_one("#prompt")
        heavy = ("textual.widgets._text_area", "textual.document", "tui_agent.ui.prompt")
        seen = {
            "box": type(box).__name__,
            "focused": app.focused is box,
            "modules": sorted(m for m in sys.modules if m.startswith(heavy)),
        }
        print(json.dumps(seen), flush=True)
        os._exit(0)

    async def main():
        app._load = first_frame_drawn
        async with app.run_test(size=(100, 30)) as pilot:
            for _ in range(1000):
                await pilot.pause(0.01)

    asyncio.run(main())
    """
)


def test_the_first_frame_has_the_stand_in_and_no_text_area(project: Path) -> None:
    """A fresh process, as ``tui-agent`` starts (bench/first_frame.py stops there too)."""
    done = subprocess.run(
        [sys.executable, "-c", FIRST_FRAME],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    seen: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["box"] == "PromptStandIn" and seen["focused"]
    assert seen["modules"] == ["tui_agent.ui.prompt_standin"]


def hold_the_swap(app: TuiAgentApp) -> Callable[[], object]:
    """The prompt comes (with the load, ``_load``) only once the returned function is
    called: until then the stand-in is in its place, after the first frame."""
    load = app._load

    async def held() -> None:
        pass

    app._load = held  # type: ignore[method-assign]
    return lambda: app.call_after_refresh(load)


def footer_keys(app: TuiAgentApp) -> list[str]:
    return [str(key.render()) for key in app.query_one(Footer).children]


def cells(widget: Widget) -> list[list[tuple[str, Style]]]:
    """What ``widget`` draws, border included, cell by cell: (character, style)."""
    width, height = widget.outer_size
    strips = widget.render_lines(Region(0, 0, width, height))
    return [
        [(char, seg.style or Style()) for seg in strip for char in seg.text] for strip in strips
    ]


async def test_the_prompt_takes_the_stand_ins_place_focus_and_id(project: Path) -> None:
    app = TuiAgentApp(create_session(project))
    release = hold_the_swap(app)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.first_frame_drawn)
        standin = app.query_one("#prompt")
        assert isinstance(standin, PromptStandIn) and app.focused is standin
        assert not app.prompt_ready
        place = [type(w) for w in app.screen.children]

        release()
        prompt = await wait_for_prompt(pilot)
        assert app.query_one("#prompt") is prompt is app.prompt
        assert app.focused is prompt
        assert not app.query(PromptStandIn)
        assert [type(w) for w in app.screen.children] == [
            type(prompt) if kind is PromptStandIn else kind for kind in place
        ]
    app.session.conversation.journal.close()


async def test_keys_typed_before_the_prompt_reach_it_in_order_and_enter_sends_them(
    project: Path,
) -> None:
    session = create_session(project)
    app = TuiAgentApp(session)
    release = hold_the_swap(app)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.first_frame_drawn)
        assert not app.typing()
        await pilot.press("h", "i", "space", "x", "backspace", "ctrl+j", "y", "o")
        assert app.typing()  # streamed text waits for the stand-in's keys too
        await pilot.press("shift+tab")  # the app's own keys work at once
        assert session.permissions.mode == "auto-edit"
        app.post_message(events.Paste("!"))
        await pilot.pause()
        await pilot.press("enter", "n", "e", "x", "t")

        release()
        prompt = await wait_for_prompt(pilot)
        await wait_for(pilot, lambda: prompt.text == "next")
        assert prompt.prompt_history[-1] == "hi \nyo!"  # sent by Enter, before "next"
    session.conversation.journal.close()


async def test_the_footer_shows_the_same_keys_and_the_stand_in_looks_as_the_prompt(
    project: Path,
) -> None:
    app = TuiAgentApp(create_session(project))
    release = hold_the_swap(app)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.first_frame_drawn)
        standin = app.query_one(PromptStandIn)
        app.update_status()  # as the load does: "sandbox" joins it after the first frame
        await pilot.pause()
        keys, drawn = footer_keys(app), cells(standin)
        assert any("Newline" in key for key in keys)

        release()
        prompt = await wait_for_prompt(pilot)
        prompt.cursor_blink = False  # drawn, not blinking
        await pilot.pause()
        await wait_for(pilot, lambda: footer_keys(app) == keys)
        assert prompt.outer_size == standin.outer_size
        assert cells(prompt) == drawn
    app.session.conversation.journal.close()
