"""The user's message as the chat shows it (with a chip per ``@path`` attached), and a
note (a plain line, an error, a warning)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.content import Content
from textual.widgets import Static

if TYPE_CHECKING:
    from collections.abc import Sequence


class UserMessage(Static):
    DEFAULT_CSS = """
    UserMessage {
        margin: 1 0 0 0;
        padding: 0 1;
        border-left: thick $accent;
        background: $boost;
    }
    """


def user_message(text: str, chips: Sequence[str] = ()) -> UserMessage:
    """The user's message as sent; under it a chip per ``@path`` attached (``chips``: each
    attachment's label, "src/app.py (120 lines)"), never the attached text itself."""
    if not chips:
        return UserMessage(text, markup=False)
    parts: list[str | tuple[str, str]] = [text, "\n"]
    for index, chip in enumerate(chips):
        parts.extend([" " * bool(index), (f"📎 {chip}", "$text-accent")])
    return UserMessage(Content.assemble(*parts), classes="attached")


class Note(Static):
    DEFAULT_CSS = """
    Note { margin: 0 0 0 1; color: $text-muted; }
    Note.error { color: $error; }
    Note.warning { color: $warning; }
    """
