"""What the chat's live blocks share: the spinner of a block still running, and keys
first (streamed text waits while the user types)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from textual.app import App

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


class InApp(Protocol):
    """A widget, or what stands for one (``reply.ReplyHost``): it has its app."""

    @property
    def app(self) -> App[Any]: ...


def user_typing(widget: InApp) -> bool:
    """Whether the user is typing in the app's prompt right now (``TuiAgentApp.typing``;
    never in another app). Streamed text waits then, and catches up when typing pauses:
    keys first, so they show at once whatever the stream costs to draw."""
    typing = getattr(widget.app, "typing", None)
    return bool(typing is not None and typing())
