"""The chat's Markdown widgets, in their own module so that the first frame goes without
them: Textual's ``Markdown`` brings ``markdown_it``, ``pygments`` and the tree widget (about
60 ms of imports). ``ui.chat`` and ``blocks.reply`` import this on the first Markdown
they show (``ui.chat`` still exports both names)."""

from __future__ import annotations

from typing import Any

from textual.await_complete import AwaitComplete
from textual.content import Content
from textual.widgets import Markdown
from textual.widgets._markdown import MarkdownBlock, MarkdownFence


class Fence(MarkdownFence):
    """A code block coloured once the app's first frame is on screen: the first block of
    a language makes pygments build its lexer (~80 ms for Python), which a resumed
    conversation's first frame need not wait for. Until then the code shows plain."""

    AFTER = 0.05  # seconds after the first frame: after what the app does then (``_load``)

    def __init__(self, markdown: Markdown, token: Any, code: str) -> None:
        self._plain = not getattr(markdown.app, "first_frame_drawn", True)
        super().__init__(markdown, token, code)

    def highlight(  # type: ignore[override]
        self, code: str, language: str, ansi: bool = False, dark: bool = False
    ) -> Content:
        if self._plain:
            return Content(code)
        return super().highlight(code, language, ansi=ansi, dark=dark)

    def on_mount(self) -> None:
        if self._plain:
            self._colour()

    def _colour(self, rounds: int = 100) -> None:
        """Coloured ``AFTER`` seconds after the first frame (every ``AFTER`` seconds it is
        looked for, ``rounds`` times at most)."""
        if rounds > 0 and not getattr(self.app, "first_frame_drawn", True):
            self.set_timer(self.AFTER, lambda: self._colour(rounds - 1))
        else:
            self.set_timer(self.AFTER, self._coloured)

    def _coloured(self) -> None:
        self._plain = False
        self.notify_style_update()  # Textual's: highlight again and show it


BLOCKS: dict[str, type[MarkdownBlock]] = {**Markdown.BLOCKS, "fence": Fence, "code_block": Fence}


class NoteMarkdown(Markdown):
    BLOCKS = BLOCKS
    DEFAULT_CSS = """
    NoteMarkdown { margin: 0 0 0 1; }
    """


class ReplyMarkdown(Markdown):
    BLOCKS = BLOCKS
    DEFAULT_CSS = """
    ReplyMarkdown { margin: 0 0 0 1; padding: 0; }
    ReplyMarkdown.incomplete { margin: 0; border-left: outer $error 60%; }
    """

    _updating: AwaitComplete | None = None

    def update(self, markdown: str) -> AwaitComplete:
        """Textual's, made safe to ``append`` to (a streamed reply's first segment is made
        with its text, then appended to). Textual's update leaves the next append to
        re-parse from the document's last *line*, not from where its last block starts: a
        list or a paragraph over several lines was cut there, and its earlier lines lost
        (one bullet of two). Here the next append starts at the last block, and an append
        made while the update still parses waits for it."""
        done = super().update(markdown)

        async def settled() -> None:
            await done
            blocks = [child for child in self.children if isinstance(child, MarkdownBlock)]
            self._last_parsed_line = blocks[-1].source_range[0] if blocks else 0

        self._updating = AwaitComplete(settled())
        return self._updating

    def append(self, markdown: str) -> AwaitComplete:
        updating = self._updating
        if updating is None or updating.is_done:
            return super().append(markdown)

        async def after_the_update() -> None:
            await updating
            await super(ReplyMarkdown, self).append(markdown)

        return AwaitComplete(after_the_update())
