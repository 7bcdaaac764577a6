"""A streamed reply: ``ReplyStream`` deals the text out to a chain of Markdown segments
(``split_markdown`` cuts it where top-level blocks start)."""

from __future__ import annotations

import asyncio
import contextlib
import re
from itertools import pairwise
from typing import TYPE_CHECKING, Any, Protocol

from .live import user_typing

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from textual.app import App
    from textual.widget import AwaitMount, Widget

    from ..heap import Heap
    from .markdown import ReplyMarkdown


class ReplyHost(Protocol):
    """What a ``ReplyStream`` needs of the chat it streams into (``ui.chat.ChatView``):
    the blocks never import the chat (it imports them)."""

    @property
    def app(self) -> App[Any]: ...

    def mount(self, *widgets: Widget, before: Any = None, after: Any = None) -> AwaitMount: ...

    def heap(self) -> Heap | None: ...

    def fold_later(self) -> None: ...

    def call_after_refresh(self, callback: Any, *args: Any) -> bool: ...


_NEWLINE = re.compile(r"\r\n?|\n")  # what markdown-it counts as a line break
_blocks_parser: MarkdownIt | None = None


def _block_parser() -> MarkdownIt:
    """A ``gfm-like`` parser that finds blocks only, made once: where blocks start does not
    depend on what is inside them, and the inline rules (emphasis, links, linkify) were
    five sixths of the cutting's parse."""
    global _blocks_parser
    if _blocks_parser is None:
        from markdown_it import MarkdownIt

        _blocks_parser = MarkdownIt("gfm-like").disable(
            ["inline", "linkify", "text_join"], ignoreInvalid=True
        )
    return _blocks_parser


def split_markdown(text: str, blocks: int, keep: int = 0) -> list[str]:
    """``text`` cut where top-level Markdown blocks start, ``blocks`` blocks to a piece (a
    long list or code fence stays whole). The first cut is not before character ``keep``:
    that much of ``text`` is already on screen in the first piece."""
    line_starts = [0] + [match.end() for match in _NEWLINE.finditer(text)]
    if len(line_starts) <= blocks:  # a block starts on a line of its own: nothing to cut
        return [text]
    cuts: list[int] = []
    count = 0
    for token in _block_parser().parse(text):
        if token.map is None or token.level != 0:
            continue
        start = line_starts[min(token.map[0], len(line_starts) - 1)]
        if count >= blocks and start > (cuts[-1] if cuts else 0) and (cuts or start >= keep):
            cuts.append(start)
            count = 0
        count += 1
    return [text[a:b] for a, b in pairwise([0, *cuts, len(text)])]


class ReplyStream:
    """A streamed reply as a chain of ``ReplyMarkdown`` segments of ``SEGMENT_BLOCKS``
    top-level blocks each; the last one is live.

    Text written while the UI is busy is joined and then dealt out: what completes the live
    segment is appended to it, the rest goes to new segments. So an append re-lays-out one
    segment of bounded size, however long the reply or however much text arrived at once,
    and finished segments can be folded away by the chat (``ChatView.fold``): the cost of a
    token does not grow with the length of the reply.

    The first segment is mounted with its text, never empty (issue 13). An empty Markdown
    has no height, so Textual's compositor never counts it visible, and a refresh of it
    marks the screen's map stale; the next look-up of any widget's region rebuilds that map
    from the DOM as it is then, marking nothing that moved for repaint. An empty first
    segment held back by keys first got that refresh; its first paragraph's mount made the
    look-up after the paragraph had grown the reply, so the next layout found nothing moved
    and repainted only the paragraph: the prompt's block moved up on the map, not on the
    terminal. A segment made with its text joins the layout with its blocks (Textual lays
    out a widget once its mount handler is done), and mounting it repaints the chat. Later
    segments are mounted empty and appended to, as nothing below them can move: Markdown's
    first update (``update``: a parse in a thread, a table of contents) cost a 20,000-token
    reply 1.7 s more CPU than ``append`` when every segment was made with its text."""

    SEGMENT_BLOCKS = 12
    INTERVAL = 0.1  # at most this often a Markdown update: a token-by-token stream would
    # otherwise re-parse and re-lay-out on every token and starve the keyboard and the frames
    TYPING_POLL = 0.05  # while the user types (user_typing), look again this often
    STEP = 2000  # characters at most an update while catching up (after typing, say), so
    # a key pressed meanwhile waits for a small update, not for the whole backlog
    FINAL_STEP = 10_000  # characters at most an update once the reply has ended (the
    # rest is drawn at once; a frame between steps: a key waits for one step, and what
    # scrolled far up is folded before the next step is laid out)

    def __init__(self, chat: ReplyHost) -> None:
        self.chat = chat
        self.segment: ReplyMarkdown | None = None  # the live one, from the first text drawn
        self.segments: list[ReplyMarkdown] = []  # all of them, the live one last
        self.text = ""  # what the live segment holds
        self._pending: list[str] = []
        self._wake = asyncio.Event()
        self._stopping = False
        self._last = 0.0
        self._task = asyncio.create_task(self._run())

    @property
    def backlog(self) -> int:
        """Characters written and not drawn yet (while the user types, or between steps)."""
        return sum(map(len, self._pending))

    async def write(self, text: str) -> None:
        if text:
            self._pending.append(text)
            self._wake.set()
            await asyncio.sleep(0)

    async def stop(self) -> None:
        """Show what was written, then finish."""
        self._stopping = True
        self._wake.set()
        await asyncio.shield(self._task)

    async def discard(self) -> list[ReplyMarkdown]:
        """Finish without drawing what is still pending; the segments drawn so far."""
        self._pending.clear()
        await self.stop()
        return self.segments

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._pending:
                wait = self._last + self.INTERVAL - loop.time()
                if wait > 0 and not self._stopping:
                    await asyncio.sleep(wait)  # what arrives meanwhile joins this update
                while not self._stopping and user_typing(self.chat):
                    await asyncio.sleep(self.TYPING_POLL)  # keys first; the text waits
                text = "".join(self._pending)
                self._pending.clear()
                step = self.FINAL_STEP if self._stopping else self.STEP
                if len(text) > step:
                    self._pending.append(text[step:])  # the next update's
                    text = text[:step]
                self._last = loop.time()
                await self._feed(text)
                if self._stopping and self._pending:
                    await self._frame()  # laid out and folded, and keys shown, first
            if self._stopping:
                return

    async def _frame(self) -> None:
        """Until the next refresh of the screen is done (and what waited for it)."""
        drawn = asyncio.Event()
        if self.chat.call_after_refresh(drawn.set):
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(drawn.wait(), 1.0)

    async def _feed(self, text: str) -> None:
        from .markdown import ReplyMarkdown

        if self.segment is None and not (self.text + text).strip():
            self.text += text  # blank so far: no segment yet (never an empty one)
            return
        pieces = split_markdown(self.text + text, self.SEGMENT_BLOCKS, keep=len(self.text))
        first = pieces[0]
        if self.segment is None:  # the reply's first text: its first segment, with the text
            self.segment = ReplyMarkdown(first)
            self.segments.append(self.segment)
            await self.chat.mount(self.segment)
        elif len(first) > len(self.text):
            await self.segment.append(first[len(self.text) :])
        self.text = first
        if len(pieces) == 1:
            return
        heap = self.chat.heap()
        with self.chat.app.batch_update():  # one layout for all the new segments
            for piece in pieces[1:]:
                if heap is not None:
                    heap.freeze()  # finished segments are long-lived (see heap.py)
                segment = ReplyMarkdown()
                self.segments.append(segment)
                await self.chat.mount(segment, after=self.segment)
                self.segment, self.text = segment, piece
                await segment.append(piece)
        self.chat.fold_later()
