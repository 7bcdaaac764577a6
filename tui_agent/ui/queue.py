"""The prompts sent while a turn runs, dimmed between the chat and the prompt.

Steered ones first (``session.steer``: they go in at the turn's next step), then the
queued ones (sent one at a time when the turn ends, in order). The app owns the queue;
this widget only shows it (``TuiAgentApp.show_queue``). Drawn in the first frame, hidden
while empty: it imports nothing of the core."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.text import Text
from textual.widgets import Static

STEERING = "↳ steering"  # the labels tests and users read
QUEUED = "◦ queued"  # a glyph every monospace font has (⏸ is missing from many)
HINT = "Up: edit the last · Esc: take them back · Ctrl+S: steer into the turn"


def first_line(text: str) -> str:
    """``text``'s first line, with how many more follow."""
    head, *rest = text.strip().splitlines() or [""]
    return f"{head} (+{len(rest)} lines)" if rest else head


class QueuedPrompts(Static):
    DEFAULT_CSS = """
    QueuedPrompts {
        display: none;
        height: auto;
        max-height: 8;
        padding: 0 2;
        color: $text-muted;
    }
    QueuedPrompts.shown { display: block; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("", **kwargs)
        self.shown: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())

    def show(self, steering: Sequence[str], queued: Sequence[str]) -> None:
        """``steering``: sent into the turn, not delivered yet; ``queued``: waiting for
        the turn to end. Hidden when both are empty."""
        shown = (tuple(steering), tuple(queued))
        if shown == self.shown:
            return
        self.shown = shown
        self.set_class(bool(steering or queued), "shown")
        text = Text(no_wrap=True, overflow="ellipsis", style="dim")
        for label, items in ((STEERING, steering), (QUEUED, queued)):
            for item in items:
                text.append(f"{label}: ", style="dim bold").append(first_line(item) + "\n")
        text.append(HINT, style="dim italic")
        self.update(text)
