"""Issue 13: the first prompt of a fresh app, answered at once, is drawn above the reply.

The bug was on the terminal, not in the DOM: the chat held the prompt's block and then
the reply, in that order and at the right places, but the frames the app sent left the
block's new row blank and its old row showing only its left border. So these tests watch
what reaches the terminal: every screen update the app would write (Pilot runs headless
and writes nothing) is applied to a grid of cells, as a terminal applies it.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rich.cells import cell_len
from textual import events
from textual.widgets import Static

from tui_agent import create_session
from tui_agent.testing import FakeOpenAI, Reply, wait_for
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.blocks.markdown import ReplyMarkdown
from tui_agent.ui.blocks.message import UserMessage

SIZE = (100, 30)
PROMPT = "hello there"
REPLY = "Hello! This is the **reply** to your prompt."
RUNS = 32  # on the old chat.py one run in seven failed (1 to 8 of 24 or 32)

_CSI = re.compile(r"\x1b\[([0-9;?]*)([A-Za-z])")


class Terminal:
    """A grid of cells that takes what the app writes: cursor moves and text (styles are
    dropped). Textual's screen updates move the cursor before each piece of a line."""

    def __init__(self, width: int, height: int) -> None:
        self.width = width
        self.rows = [[" "] * width for _ in range(height)]
        self.x = self.y = 0

    def write(self, data: str) -> None:
        position = 0
        for match in _CSI.finditer(data):
            self._text(data[position : match.start()])
            position = match.end()
            if match.group(2) == "H":  # cursor position, 1-based
                row, _, column = match.group(1).partition(";")
                self.y, self.x = int(row or 1) - 1, int(column or 1) - 1
        self._text(data[position:])

    def _text(self, text: str) -> None:
        for char in text:
            if char in "\r\n":
                continue
            width = cell_len(char)
            if 0 <= self.y < len(self.rows) and 0 <= self.x < self.width and width:
                self.rows[self.y][self.x] = char
            self.x += width

    def line(self, y: int) -> str:
        return "".join(self.rows[y]).rstrip()

    def lines(self) -> list[str]:
        return [self.line(y) for y in range(len(self.rows))]


def watch(app: TuiAgentApp) -> Terminal:
    """A terminal that gets every screen update of ``app``. ``App._display`` is where
    Textual writes an update to the terminal (and drops it when headless): the one private
    name here, for want of a public way to see what was sent."""
    terminal = Terminal(*SIZE)
    display = app._display

    def recording(screen: Any, update: Any) -> None:
        if hasattr(update, "render_segments"):
            terminal.write(update.render_segments(app.console))
        display(screen, update)

    app._display = recording  # type: ignore[method-assign]
    return terminal


async def running(condition: Callable[[], Any], seconds: float = 10) -> None:
    """Wait for ``condition()`` with the app left to run as it does in a terminal."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {condition}")
        await asyncio.sleep(0.01)


def send_keys(app: TuiAgentApp, text: str) -> None:
    """Keys all at once, as ``tmux send-keys`` gives them (``pilot.press`` waits for the
    app between keys), then Enter: posted to the app, as the driver posts them (it
    forwards each to the focused prompt)."""
    for char in text:
        app.post_message(events.Key("space" if char == " " else char, char))
    app.post_message(events.Key("enter", "\r"))


def chat_rows(app: TuiAgentApp, terminal: Terminal) -> list[str]:
    region = app.chat.region
    return [terminal.line(y) for y in range(region.y, region.bottom)]


@pytest.mark.parametrize("run", range(RUNS))
async def test_the_first_prompt_shows_above_an_instant_reply(project: Path, run: int) -> None:
    """As a new user does it: a fresh ``tui-agent`` (session made after the first frame),
    type a prompt, Enter; the reply is complete within milliseconds, while the prompt still
    counts as typing (keys first holds the reply back). The terminal must show the prompt's
    block, with its text, above the reply, and a full repaint must change nothing in the
    chat: no cell is stale."""
    async with FakeOpenAI([Reply(REPLY, chunk_words=2)]) as server:
        app = TuiAgentApp(
            make_session=lambda: create_session(
                project, base_url=server.base_url, model="fake-model", load=False
            ),
            directory=project,
        )
        terminal = watch(app)
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: app.first_frame_drawn and app.session_ready, 10)
            send_keys(app, PROMPT)
            # the app left to itself until the reply is drawn: a Pilot pause forces frames
            await running(lambda: any("reply to your" in row for row in terminal.lines()))
            await app.workers.wait_for_complete()
            await pilot.pause(0.1)

            # the DOM: the block, with the prompt, then the reply, laid out in that order
            blocks = [w for w in app.chat.children if isinstance(w, (UserMessage, ReplyMarkdown))]
            assert [type(w) for w in blocks] == [UserMessage, ReplyMarkdown]
            user, reply = blocks
            assert isinstance(user, Static) and str(user.render()) == PROMPT
            assert user.region.height and reply.region.height
            assert user.region.bottom <= reply.region.y

            # the terminal: the block's row shows the prompt, above the reply's row
            assert PROMPT in terminal.line(user.region.y)
            assert "reply to your prompt" in terminal.line(reply.region.y)
            rows = chat_rows(app, terminal)
            shown = [i for i, row in enumerate(rows) if PROMPT in row]
            answered = [i for i, row in enumerate(rows) if "reply to your prompt" in row]
            assert len(shown) == len(answered) == 1 and shown[0] < answered[0], rows

            # nothing stale: repainting everything draws the same chat
            before = chat_rows(app, terminal)
            app.screen.refresh()
            await pilot.pause(0.1)
            assert chat_rows(app, terminal) == before
