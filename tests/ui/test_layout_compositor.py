"""A layout of the main screen arranges its widgets once (issue 29: ``frame.LayoutCompositor``).

Textual marks its map of every widget stale when a widget not on screen asks to be drawn
(a block just mounted) or the view scrolls, and its layout never marked the map it builds
current again, so the next question about a widget's size (which a layout asks of every
widget that changed size) arranged the whole screen a second time. A streamed reply mounts
blocks on most updates. Counted here, not timed: full arrangements against layouts while a
reply streams into the app's main screen.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from test_stream_cost import counted_feeds
from textual._compositor import Compositor
from textual.app import App, ComposeResult
from textual.screen import Screen

from tui_agent.ui.chat import ChatView
from tui_agent.ui.frame import MainScreen

BATCHES = 60


class ChatApp(App[None]):
    AUTO_FOCUS = None

    def __init__(self, screen: type[Screen[Any]]) -> None:
        super().__init__()
        self.screen_class = screen

    def get_default_screen(self) -> Screen[Any]:
        return self.screen_class(id="_default")

    def compose(self) -> ComposeResult:
        yield ChatView()


async def arrangements(
    screen: type[Screen[Any]], monkeypatch: pytest.MonkeyPatch
) -> dict[str, int]:
    """Stream ``BATCHES`` paragraphs (one update each) into a chat on ``screen``: the
    layouts, and the arrangements of every widget done in all."""
    counts = {"layouts": 0, "full": 0}
    reflow, arrange_root = Compositor.reflow, Compositor._arrange_root

    def counted_reflow(self: Compositor, *args: Any) -> Any:
        counts["layouts"] += 1
        return reflow(self, *args)

    def counted_arrange_root(
        self: Compositor, root: Any, size: Any, visible_only: bool = True
    ) -> Any:
        counts["full"] += not visible_only
        return arrange_root(self, root, size, visible_only)

    feeds = counted_feeds(monkeypatch)
    app = ChatApp(screen)
    async with app.run_test(size=(80, 20)) as pilot:
        chat = app.query_one(ChatView)
        await pilot.pause()
        monkeypatch.setattr(Compositor, "reflow", counted_reflow)
        monkeypatch.setattr(Compositor, "_arrange_root", counted_arrange_root)
        for number in range(BATCHES):
            await chat.add_text(f"Paragraph {number}: the agent reads a file and edits it.\n\n")
            while feeds[0] <= number:
                await asyncio.sleep(0.001)
            await asyncio.sleep(0.005)  # a refresh after it, as while a reply streams
        await chat.end_reply()
        await pilot.pause()
        assert chat.scroll_y == chat.max_scroll_y > 40  # it followed the reply down
    return counts


async def test_a_layout_arranges_the_main_screen_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    counts = await arrangements(MainScreen, monkeypatch)
    assert counts["layouts"] >= BATCHES // 3
    # one arrangement of every widget a layout, none more (29-38 layouts made 46-56)
    assert counts["full"] == counts["layouts"]


async def test_textuals_own_screen_arranges_it_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """What ``LayoutCompositor`` mends: on Textual's screen the same stream arranges every
    widget again after many of its layouts (17-22 more in 60 updates). If this fails,
    Textual has mended it and the compositor can go."""
    counts = await arrangements(Screen, monkeypatch)
    assert counts["full"] >= counts["layouts"] + BATCHES // 10
