"""The model's thinking in the chat: streamed (a redraw at most every ``INTERVAL``, held
back while the user types), then folded away when the reply starts."""

from __future__ import annotations

from textual.widgets import Collapsible, Static

from .live import user_typing


class Thinking(Collapsible):
    DEFAULT_CSS = """
    Thinking { margin: 0; padding: 0; border: none; background: transparent; }
    Thinking Static { color: $text-muted; text-style: italic; }
    """

    INTERVAL = 0.05  # at most this often a redraw, as for replies (ReplyStream)

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.body = Static("", markup=False)
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
        self.body.update(self.text)

    def finish(self) -> None:
        """Thinking is over: show all of it (typing or not), folded away."""
        self._draw()
        self.collapsed = True
