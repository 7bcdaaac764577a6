"""The baseline for start-up and memory: a bare Textual app of Header + Input + Footer.

Same Python, same Textual as tui-agent. Its footer shows "^p palette" like ours, which is
the first-frame marker ``startup.py`` polls for.
"""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Footer, Header, Input


class BareApp(App[None]):
    TITLE = "bare"

    def compose(self) -> ComposeResult:
        yield Header()
        yield Input(placeholder="Ask anything")
        yield Footer()


if __name__ == "__main__":
    BareApp().run()
