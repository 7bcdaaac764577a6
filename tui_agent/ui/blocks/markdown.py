"""The chat's Markdown widgets, in their own module so that the first frame goes without
them: Textual's ``Markdown`` brings ``markdown_it``, ``pygments`` and the tree widget (about
60 ms of imports). ``ui.chat`` and ``blocks.reply`` import this on the first Markdown
they show (``ui.chat`` still exports both names)."""

from __future__ import annotations

from textual.widgets import Markdown


class NoteMarkdown(Markdown):
    DEFAULT_CSS = """
    NoteMarkdown { margin: 0 0 0 1; }
    """


class ReplyMarkdown(Markdown):
    DEFAULT_CSS = """
    ReplyMarkdown { margin: 0 0 0 1; padding: 0; }
    ReplyMarkdown.incomplete { margin: 0; border-left: outer $error 60%; }
    """
