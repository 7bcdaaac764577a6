"""The model's thinking in the chat: streamed (a redraw at most every ``INTERVAL``, held
back while the user types), then folded away when the reply starts."""

from __future__ import annotations

from textual.containers import Vertical
from textual.widgets import Collapsible, Static

from .live import user_typing


class ThinkingText(Vertical):
    """The thinking's text, as one ``Static`` after another (see ``Thinking``)."""

    DEFAULT_CSS = "ThinkingText { height: auto; }"


class Thinking(Collapsible):
    """Streamed thinking. Its text is a chain of ``Static`` segments (``body`` holds them):
    a redraw updates the last one only, and once that one holds ``SEGMENT`` characters
    the next line break starts another (the break is where one segment ends and the next
    begins, so it looks the same as one text). Redrawing the whole text each time cost a
    batch of 250 tokens 32 ms at the start of a 20,000-token thinking and 148 ms at its
    end. A thinking with no line break stays one text."""

    DEFAULT_CSS = """
    Thinking { margin: 0; padding: 0; border: none; background: transparent; }
    Thinking Static { color: $text-muted; text-style: italic; }
    """

    INTERVAL = 0.05  # at most this often a redraw, as for replies (ReplyStream)
    SEGMENT = 2000

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.live = Static("", markup=False)  # the last segment, the one redrawn
        self.body = ThinkingText(self.live)
        self._live_text = ""
        self._drawn = 0  # parts drawn so far
        self._scheduled = False
        super().__init__(self.body, title="Thinking", collapsed=False)

    @property
    def text(self) -> str:
        return "".join(self.parts)

    def add(self, chunk: str) -> None:
        self.parts.append(chunk)
        if not self._scheduled:
            self._scheduled = True
            self.set_timer(self.INTERVAL, self._show)

    def _show(self) -> None:
        if user_typing(self):  # keys first (user_typing): again a little later
            self.set_timer(self.INTERVAL, self._show)
            return
        self._draw()

    def _draw(self) -> None:
        self._scheduled = False
        new = "".join(self.parts[self._drawn :])
        self._drawn = len(self.parts)
        if not new:
            return
        text = self._live_text + new
        cut = text.rfind("\n") if len(text) > self.SEGMENT else -1
        if cut <= 0:
            self._live_text = text
            self.live.update(text)
            return
        self.live.update(text[:cut])  # finished: the break is the next segment's start
        self._live_text = text[cut + 1 :]
        self.live = Static(self._live_text, markup=False)
        self.body.mount(self.live)

    def finish(self) -> None:
        """Thinking is over: show all of it (typing or not), folded away."""
        self._draw()
        self.collapsed = True
