"""The prompt's stand-in in the first frame: it looks as the empty focused prompt does
(border, padding, the cursor, the footer's keys) and keeps the keys typed and the text
pasted into it, so the first frame goes without Textual's ``TextArea`` (about 80 M of the
1.12 G instructions to it).

Right after the first frame the app puts the real prompt (``prompt.PromptArea``) in its
place and hands it what it kept (``SessionApp._bring_prompt``). Imports only what the
first frame has anyway."""

from __future__ import annotations

import time
from typing import ClassVar

from rich.segment import Segment
from textual import events
from textual.binding import Binding, BindingType
from textual.strip import Strip
from textual.widget import Widget

# the prompt's keys shown in the footer: PromptArea shows the same ones (it takes them from here)
SHOWN_BINDINGS: list[BindingType] = [
    Binding("ctrl+j", "newline", "Newline", id="prompt.newline"),
]

Typed = events.Key | events.Paste  # what the stand-in keeps for the prompt

TYPING = 0.5  # seconds after a key during which the user counts as typing (streamed text waits)

# keys the prompt's own bindings and handlers take (TextArea's among them): kept for it.
# Any other key (the app's Ctrl+T, Esc, Ctrl+Q) goes on to the app's bindings at once.
EDITING_KEYS = frozenset(
    {
        "enter", "ctrl+j", "tab", "backspace", "delete", "ctrl+w", "ctrl+u", "ctrl+k",
        "ctrl+f", "ctrl+d", "ctrl+x", "ctrl+v", "ctrl+z", "ctrl+y", "ctrl+a", "ctrl+e", "ctrl+g",
        "up", "down", "left", "right", "home", "end", "pageup", "pagedown",
        "ctrl+left", "ctrl+right", "shift+up", "shift+down", "shift+left", "shift+right",
        "shift+home", "shift+end", "ctrl+shift+left", "ctrl+shift+right",
    }
)  # fmt: skip


class PromptStandIn(Widget, can_focus=True):
    """The empty prompt, drawn as ``PromptArea`` draws it (its CSS, cursor and cursor
    line), until the real one comes."""

    BINDINGS: ClassVar[list[BindingType]] = SHOWN_BINDINGS
    COMPONENT_CLASSES: ClassVar[set[str]] = {"stand-in--cursor", "stand-in--cursor-line"}

    DEFAULT_CSS = """
    PromptStandIn {
        height: 3;
        border: round $primary;
        border-subtitle-color: $text-muted;
        padding: 0 1;
        color: $foreground;
        background: $surface;
        pointer: text;
        & .stand-in--cursor {
            color: $input-cursor-foreground;
            background: $input-cursor-background;
            text-style: $input-cursor-text-style;
        }
        & .stand-in--cursor-line { background: $boost; }
    }
    PromptStandIn:focus { border: round $accent; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.kept: list[Typed] = []  # the keys and pastes for the prompt, in order
        self.typed_at = -1e9  # time.monotonic() of the last one kept

    def typing(self) -> bool:
        """A key came in the last ``TYPING`` seconds (as ``PromptArea.typing``)."""
        return time.monotonic() - self.typed_at < TYPING

    async def _on_key(self, event: events.Key) -> None:
        if event.is_printable or event.key in EDITING_KEYS:
            event.stop()
            event.prevent_default()
            self._keep(events.Key(event.key, event.character))

    async def _on_paste(self, event: events.Paste) -> None:
        event.stop()
        event.prevent_default()
        self._keep(events.Paste(event.text))

    def action_newline(self) -> None:  # the footer's "^j Newline", clicked
        self._keep(events.Key("ctrl+j", None))

    def _keep(self, event: Typed) -> None:
        self.kept.append(event)  # a new event: the app handles it as if typed now
        self.typed_at = time.monotonic()

    def render_line(self, y: int) -> Strip:
        """The cursor line (the cursor at its start while focused), then blank lines."""
        width = self.size.width
        if y or width <= 0:
            return Strip.blank(width, self.rich_style)
        line = self.get_component_rich_style("stand-in--cursor-line")
        if not self.has_focus:
            return Strip([Segment(" " * width, line)], width)
        cursor = self.get_component_rich_style("stand-in--cursor")
        return Strip([Segment(" ", cursor), Segment(" " * (width - 1), line)], width)
