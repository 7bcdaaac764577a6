"""The model's todo list, pinned above the prompt: one line ("▸ Todo 2/5 · ▶ Fixing it")
that a click or Ctrl+O unfolds into the list, hidden while the list is empty.

The app mounts it when a list is first shown (``TuiAgentApp.show_todo``, from the
``TodoChanged`` handler); it is given texts, not the core's items, and imports nothing of
the core."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from rich.text import Text
from textual.events import Click
from textual.widgets import Static

MOST = 10  # item lines shown unfolded; beyond, the closed ones at the top give way first
# a line's style by its status (in progress: the accent colour); every one differs from
# the indent's, so an SVG screenshot keeps the indent (rsvg drops a span's leading spaces)
STYLES = {"completed": "dim", "cancelled": "dim strike", "pending": "not dim"}


class TodoView(Static):
    DEFAULT_CSS = """
    TodoView {
        display: none;
        height: auto;
        padding: 0 2;
        background: $boost;
    }
    TodoView.shown { display: block; }
    TodoView > .todo--current { color: $accent; }
    """
    COMPONENT_CLASSES: ClassVar[set[str]] = {"todo--current"}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("", **kwargs)
        self.summary = ""
        self.items: tuple[tuple[str, str], ...] = ()  # (status, line)
        self.unfolded = False

    def show(self, summary: str, items: Sequence[tuple[str, str]]) -> None:
        """The list now: its ``summary`` line and ``(status, line)`` an item; hidden when
        there is none."""
        self.summary, self.items = summary, tuple(items)
        self.set_class(bool(self.items), "shown")
        self._draw()

    def toggle(self) -> None:
        """Fold or unfold the list."""
        self.unfolded = not self.unfolded
        self._draw()

    def on_click(self, event: Click) -> None:
        event.stop()
        self.toggle()

    def visible_lines(self) -> list[tuple[str, str]]:
        """The item lines shown unfolded: all when they fit in ``MOST``; else the closed
        items at the top, then the pending ones at the end, are counted in one line."""
        items = list(self.items)
        if len(items) <= MOST:
            return items
        closed = 0
        while closed < len(items) and items[closed][0] in ("completed", "cancelled"):
            closed += 1
        shown_closed = max(0, closed - (len(items) - MOST) - 1)
        head: list[tuple[str, str]] = []
        if closed - shown_closed:
            head = [("completed", f"☑ … {closed - shown_closed} done")]
        rest = items[closed - shown_closed :]
        room = MOST - len(head)
        if len(rest) > room:
            hidden = len(rest) - room + 1
            rest = [*rest[: room - 1], ("pending", f"☐ … {hidden} more")]
        return head + rest

    def _draw(self) -> None:
        current = self.get_component_rich_style("todo--current", partial=True)
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append("▾ " if self.unfolded else "▸ ", style="dim")
        text.append(self.summary, style="bold")
        text.append(f"  ctrl+o {'folds' if self.unfolded else 'unfolds'}", style="dim italic")
        if self.unfolded:
            for status, line in self.visible_lines():
                style = current if status == "in_progress" else STYLES.get(status, "not dim")
                text.append("\n  ").append(line, style=style)
        self.update(text)
