"""The picker behind ``session.frontend.choose`` (``/rewind`` asks with it): a title and a list,
Enter or a click picks, Esc dismisses. Imported at the first pick, after the first frame;
it needs nothing of the core."""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option


async def ask_choice(app: App[Any], title: str, options: list[str]) -> str | None:
    """Show the picker and wait: the option picked, or None when it was dismissed (or
    the wait was cancelled; the picker goes)."""
    future: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()

    def done(picked: str | None) -> None:
        if not future.done():
            future.set_result(picked)

    app.push_screen(ChoiceScreen(title, options), done)
    try:
        return await future
    except asyncio.CancelledError:
        if isinstance(app.screen, ChoiceScreen):
            app.screen.dismiss(None)
        raise


class ChoiceScreen(ModalScreen[str | None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss_none", "Cancel")]

    DEFAULT_CSS = """
    ChoiceScreen { align: center middle; }
    ChoiceScreen > Vertical {
        width: 90%; max-width: 100; height: auto; max-height: 80%;
        border: thick $accent; background: $surface; padding: 1 2;
    }
    ChoiceScreen #choice-title { text-style: bold; margin: 0 0 1 0; }
    ChoiceScreen OptionList { height: auto; max-height: 20; }
    ChoiceScreen .hint { color: $text-muted; margin: 1 0 0 0; }
    """

    def __init__(self, title: str, options: list[str]) -> None:
        super().__init__()
        self.title_text = title
        self.options = options

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.title_text, id="choice-title", markup=False)
            yield OptionList(*(Option(Text(text)) for text in self.options), id="choices")
            yield Label("↑↓ move · Enter picks · Esc cancels", classes="hint", markup=False)

    def on_mount(self) -> None:
        choices = self.query_one(OptionList)
        choices.highlighted = 0
        choices.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(self.options[event.option_index])

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
