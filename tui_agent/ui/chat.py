"""The chat pane: user messages, streamed replies, thinking, tool calls and notes."""

from __future__ import annotations

import asyncio
import re
import time
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.events import Resize
from textual.widget import Widget
from textual.widgets import Collapsible, Static

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from ..core.conversation.conversation import Conversation
    from ..core.protocol.result import Result
    from .heap import Heap
    from .markdown_widgets import ReplyMarkdown


def __getattr__(name: str) -> Any:
    """``NoteMarkdown`` and ``ReplyMarkdown`` live in markdown_widgets.py, imported on first
    use so that the first frame goes without Markdown (see there)."""
    if name in ("NoteMarkdown", "ReplyMarkdown"):
        from . import markdown_widgets

        return getattr(markdown_widgets, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


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


def user_typing(widget: Widget) -> bool:
    """Whether the user is typing in the app's prompt right now (``TuiAgentApp.typing``;
    never in another app). Streamed text waits then, and catches up when typing pauses:
    keys first, so they show at once whatever the stream costs to draw."""
    typing = getattr(widget.app, "typing", None)
    return bool(typing is not None and typing())


class Thinking(Collapsible):
    DEFAULT_CSS = """
    Thinking { margin: 0; padding: 0; border: none; background: transparent; }
    Thinking Static { color: $text-muted; text-style: italic; }
    """

    INTERVAL = 0.05  # at most this often a redraw, as for replies (ReplyStream)

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.body = Static("", markup=False)
        self._scheduled = False
        super().__init__(self.body, title="Thinking", collapsed=False)

    @property
    def text(self) -> str:
        return "".join(self.parts)

    def add(self, chunk: str) -> None:
        self.parts.append(chunk)
        if not self._scheduled:
            self._scheduled = True
            self.set_timer(self.INTERVAL, self._show)

    def _show(self) -> None:
        if user_typing(self):  # keys first (user_typing): again a little later
            self.set_timer(self.INTERVAL, self._show)
            return
        self._draw()

    def _draw(self) -> None:
        self._scheduled = False
        self.body.update(self.text)

    def finish(self) -> None:
        """Thinking is over: show all of it (typing or not), folded away."""
        self._draw()
        self.collapsed = True


_NEWLINE = re.compile(r"\r\n?|\n")  # what markdown-it counts as a line break


def split_markdown(text: str, blocks: int, keep: int = 0) -> list[str]:
    """``text`` cut where top-level Markdown blocks start, ``blocks`` blocks to a piece (a
    long list or code fence stays whole). The first cut is not before character ``keep``:
    that much of ``text`` is already on screen in the first piece."""
    line_starts = [0] + [match.end() for match in _NEWLINE.finditer(text)]
    if len(line_starts) <= blocks:  # a block starts on a line of its own: nothing to cut
        return [text]
    from markdown_it import MarkdownIt

    cuts: list[int] = []
    count = 0
    for token in MarkdownIt("gfm-like").parse(text):
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

    def __init__(self, chat: ChatView) -> None:
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
                if len(text) > self.STEP and not self._stopping:
                    self._pending.append(text[self.STEP :])  # the next update's
                    text = text[: self.STEP]
                self._last = loop.time()
                await self._feed(text)
            if self._stopping:
                return

    async def _feed(self, text: str) -> None:
        from .markdown_widgets import ReplyMarkdown

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
        heap = self.chat.heap()
        for piece in pieces[1:]:
            if heap is not None:
                heap.freeze()  # finished segments are long-lived (see heap.py)
            segment = ReplyMarkdown()
            self.segments.append(segment)
            await self.chat.mount(segment, after=self.segment)
            self.segment, self.text = segment, piece
            await segment.append(piece)
            self.chat.fold_later()


def _pretty(value: Any) -> str:
    import json  # json and the core come after the first frame

    try:
        return json.dumps(value, indent=2, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


class ToolCallBlock(Vertical):
    """One tool call: name, arguments, a spinner with elapsed time, then ✔/✖ and the result."""

    DEFAULT_CSS = """
    ToolCallBlock { height: auto; margin: 0 0 0 1; padding: 0 1; border-left: solid $secondary; }
    ToolCallBlock.failed { border-left: solid $error; }
    ToolCallBlock .header { height: auto; }
    ToolCallBlock Collapsible { margin: 0; padding: 0; border: none; background: transparent; }
    ToolCallBlock .error-text { color: $error; }
    """

    def __init__(
        self,
        call_id: str,
        name: str,
        arguments: str,
        args: dict[str, Any] | None,
        result: Result | None = None,
        elapsed: float = 0.0,
    ) -> None:
        super().__init__()
        self.call_id = call_id
        self.tool_name = name
        self.arguments = arguments
        self.args = args
        self.started = time.monotonic()
        self.finished: float | None = None if result is None else self.started + elapsed
        self.result: Result | None = result
        self.header = Static("", classes="header")
        self._timer: Any = None

    def compose(self) -> ComposeResult:
        yield self.header
        if self.result is not None:
            yield from self._result_widgets(self.result)

    def on_mount(self) -> None:
        self._render_header()
        if self.result is None:
            self._timer = self.set_interval(0.1, self._render_header)
        elif not self.result.ok:
            self.add_class("failed")

    def _result_widgets(self, result: Result) -> list[Any]:
        from rich.syntax import Syntax

        widgets: list[Any] = []
        if not result.ok:
            widgets.append(Static(result.error or "", classes="error-text", markup=False))
        body = Syntax(_pretty(result.to_dict()), "json", word_wrap=True, theme="ansi_dark")
        widgets.append(Collapsible(Static(body), title="result", collapsed=True))
        return widgets

    def _args_text(self) -> str:
        import json

        text = self.arguments if self.args is None else json.dumps(self.args, ensure_ascii=False)
        return text if len(text) <= 200 else text[:200] + "…"

    def _render_header(self) -> None:
        elapsed = (self.finished or time.monotonic()) - self.started
        if self.result is None:
            mark: tuple[str, str] = (SPINNER[int(elapsed * 10) % len(SPINNER)], "")
        else:
            mark = ("✔", "green") if self.result.ok else ("✖", "red")
        self.header.update(  # no markup: a name or arguments with [brackets] show as they are
            Content.assemble(
                mark,
                " ",
                (self.tool_name, "bold"),
                " ",
                (self._args_text(), "dim"),
                " ",
                (f"{elapsed:.1f}s", "dim"),
            )
        )

    def finish(self, result: Result, elapsed: float) -> None:
        self.result = result
        self.finished = self.started + elapsed
        if self._timer is not None:
            self._timer.stop()
        self._render_header()
        if not result.ok:
            self.add_class("failed")
        self.mount_all(self._result_widgets(result))


def _safe_id(value: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in value)


class HiddenNote(Static):
    DEFAULT_CSS = """
    HiddenNote { color: $text-muted; text-style: italic; margin: 0 0 1 1; }
    """


class FoldSpacer(Widget):
    """Stands in for the folded blocks at the top of the chat: as tall as they were."""

    DEFAULT_CSS = """
    FoldSpacer { height: 0; margin: 0; padding: 0; display: none; }
    """

    def render(self) -> str:
        return ""


class ChatView(VerticalScroll):
    """Anchored to the bottom while new content arrives, unless the user scrolled up.

    Only the newest ``MAX_ITEMS`` blocks stay mounted (the conversation keeps everything),
    so a long session or a resumed 5,000-message journal stays quick.

    Folding keeps the cost of an update independent of how much is above: while the view
    follows the bottom, blocks more than ``FOLD_SCREENS`` screens above it are hidden
    (``display: none``, so Textual does not lay them out) and one ``FoldSpacer`` as tall as
    they were takes their place; scrolling up unfolds them before they come into view, and
    a change of width unfolds everything (heights change)."""

    MAX_ITEMS = 300
    TRANSCRIPT_TAIL = 80
    TRANSCRIPT_BATCH = 10  # older messages of a resumed tail mounted per refresh
    FOLD_SCREENS = 1

    DEFAULT_CSS = """
    ChatView { height: 1fr; padding: 0 1; scrollbar-size-vertical: 1; }
    """

    def __init__(
        self,
        *,
        heap: Heap | None = None,
        first_frame_drawn: Callable[[], bool] = lambda: True,
        **kwargs: Any,
    ) -> None:
        """``heap``: the app's garbage-collection keeper (see heap.py), if it has one;
        ``first_frame_drawn``: whether the app's first frame is on screen (the older part
        of a resumed conversation waits for it)."""
        super().__init__(**kwargs)
        self._heap = heap
        self.first_frame_drawn = first_frame_drawn
        self._stream: ReplyStream | None = None
        self._thinking: Thinking | None = None
        self._streamed: list[Thinking | ReplyStream] = []  # the streaming reply's parts
        self._shell: Any = None  # the running !command's ShellBlock
        self.calls: dict[str, ToolCallBlock] = {}
        self.hidden = 0
        self.spacer = FoldSpacer()
        self.folded: list[tuple[Widget, int]] = []  # (widget, its y when folded), top first
        self._fold_pending = False
        self._width = 0

    def compose(self) -> ComposeResult:
        yield self.spacer  # first, so the chat's first mount is one batch

    def on_mount(self) -> None:
        self.anchor()

    # -- folding ---------------------------------------------------------------------------

    def _blocks(self) -> list[Widget]:
        return [w for w in self.children if not isinstance(w, (HiddenNote, FoldSpacer))]

    def heap(self) -> Heap | None:
        """The app's garbage-collection keeper (see heap.py); None in a bare app."""
        return self._heap

    def _removed(self) -> None:
        heap = self.heap()
        if heap is not None:
            heap.removed = True  # collect them after the turn (see heap.py)

    def fold_later(self) -> None:
        """Fold after the next refresh, when the regions of new blocks are known."""
        if not self._fold_pending:
            self._fold_pending = True
            self.call_after_refresh(self.fold)

    def fold(self) -> None:
        """Hide the blocks far above the view, when the view follows the bottom."""
        self._fold_pending = False
        if not self.is_mounted or self.scroll_y < self.max_scroll_y - 1:
            return
        limit = self.scroll_y - self.FOLD_SCREENS * max(self.size.height, 1)
        shown = [w for w in self._blocks() if w.display]
        newly: list[tuple[Widget, int]] = []
        for widget, following in pairwise(shown):
            region = widget.virtual_region
            if region.height == 0 and region.y == 0:
                return  # not laid out yet
            if following.virtual_region.y >= limit:
                break
            newly.append((widget, region.y))
        if not newly:
            return
        first_shown = shown[len(newly)]
        self.folded.extend(newly)
        with self.app.batch_update():
            for widget, _ in newly:
                widget.display = False
            self._size_spacer(first_shown.virtual_region.y, first_shown)

    def _size_spacer(self, y: int, first_shown: Widget) -> None:
        """Make the first shown block start at ``y`` again. The spacer sits right after the
        hidden-items note (or at the top); margins between siblings collapse to the larger
        one, and the spacer has none."""
        top = 0
        notes = [w for w in self.children if isinstance(w, HiddenNote) and w.display]
        if notes:
            note = notes[0]
            top = note.virtual_region.bottom + note.styles.margin.bottom
        self.spacer.styles.height = max(y - top - first_shown.styles.margin.top, 0)
        self.spacer.display = True

    def unfold(self, down_to: float | None = None) -> None:
        """Show folded blocks again: all of them, or those from ``down_to`` (a y in the
        chat) down."""
        if not self.folded:
            return
        keep = 0
        if down_to is not None:
            keep = len(self.folded)
            while keep > 0 and self.folded[keep - 1][1] >= down_to:
                keep -= 1
            if keep == len(self.folded):
                return
        back = self.folded[keep:]
        del self.folded[keep:]
        with self.app.batch_update():
            for widget, _ in back:
                widget.display = True
            if self.folded:
                widget, y = back[0]
                self._size_spacer(y, widget)
            else:
                self.spacer.display = False

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        if self.folded and new < old:
            self.unfold(down_to=new - self.FOLD_SCREENS * max(self.size.height, 1))

    def on_resize(self, event: Resize) -> None:
        if event.size.width != self._width:
            self._width = event.size.width
            self.unfold()
            self.fold_later()

    async def add_user(self, text: str, chips: Sequence[str] = ()) -> None:
        """``chips``: the labels of the ``@path`` attachments sent with it."""
        await self.end_reply()
        await self.mount(user_message(text, chips))
        await self.prune()

    async def start_shell(self, command: str, outside: bool = False) -> None:
        """A ``!command`` started: its block (``shell_block.py``), live until it ends;
        ``outside``: a ``!!command``, marked as run outside the sandbox."""
        from .shell_block import ShellBlock  # after the first frame, with the first one

        await self.end_reply()
        self._shell = ShellBlock(command, outside=outside)
        await self.mount(self._shell)
        await self.prune()

    def shell_output(self, text: str) -> None:
        if self._shell is not None:
            self._shell.add(text)

    def finish_shell(self, run: Any) -> None:
        """The ``!command`` ended: its block shows the output the conversation got."""
        if self._shell is not None:
            self._shell.finish(run)
            self._shell = None

    async def add_note(self, text: str, kind: str | None = None) -> None:
        await self.end_reply()
        if kind == "markdown":
            from .markdown_widgets import NoteMarkdown

            await self.mount(NoteMarkdown(text))
        else:
            classes = kind if kind in ("error", "warning") else ""
            await self.mount(Note(text, classes=classes, markup=False))
        self.fold_later()

    async def add_thinking(self, text: str) -> None:
        if self._stream is not None:
            await self.end_reply()
        thinking = self._thinking
        if thinking is None:
            thinking = self._thinking = Thinking()
            self._streamed.append(thinking)
            await self.mount(thinking)
        thinking.add(text)

    async def add_text(self, text: str) -> None:
        if self._thinking is not None:
            self._thinking.finish()
            self._thinking = None
        stream = self._stream
        if stream is None:  # its first segment is mounted when text is drawn (ReplyStream)
            stream = self._stream = ReplyStream(self)
            self._streamed.append(stream)
        await stream.write(text)

    def backlog(self) -> int:
        """Characters of the streaming reply not drawn yet (see ReplyStream)."""
        return self._stream.backlog if self._stream is not None else 0

    async def end_reply(self, *, incomplete: bool = False) -> None:
        """``incomplete``: the stream stopped before the model finished; the reply's end
        is marked (the error that says why follows as a note)."""
        if self._thinking is not None:
            self._thinking.finish()
            self._thinking = None
        if self._stream is not None:
            await self._stream.stop()
            if incomplete and self._stream.segment is not None:
                self._stream.segment.add_class("incomplete")
        self._stream = None

    def reply_done(self) -> None:
        """The streaming reply finished (or the turn ended): it stays."""
        self._streamed.clear()

    async def withdraw_reply(self) -> None:
        """Take back the reply streaming now, its thinking and its text (``ReplyWithdrawn``:
        it stopped before the model finished, and its retry streams in its place)."""
        parts, self._streamed = self._streamed, []
        self._thinking = None
        self._stream = None
        widgets: list[Widget] = []
        for part in parts:
            widgets.extend(await part.discard() if isinstance(part, ReplyStream) else [part])
        if not widgets:
            return
        if any(widget is folded for folded, _ in self.folded for widget in widgets):
            self.unfold()  # a long reply's first segments may be folded away
        await self.remove_children(widgets)
        self._removed()

    async def start_call(
        self, call_id: str, name: str, arguments: str, args: dict[str, Any] | None
    ) -> None:
        await self.end_reply()
        block = ToolCallBlock(call_id, name, arguments, args)
        self.calls[call_id] = block
        await self.mount(block)
        await self.prune()

    def finish_call(self, call_id: str, result: Result, elapsed: float) -> None:
        block = self.calls.pop(call_id, None)
        if block is not None and block.result is None:
            block.finish(result, elapsed)

    async def clear(self) -> None:
        await self.end_reply()
        self._streamed.clear()
        self.calls.clear()
        self.hidden = 0
        self.folded.clear()
        await self.remove_children()
        self._removed()
        self.spacer = FoldSpacer()
        await self.mount(self.spacer)

    async def show_transcript(self, messages: Sequence[Mapping[str, Any]] | Conversation) -> None:
        """Re-draw a resumed conversation (typed messages, or OpenAI dicts): its newest
        ``TRANSCRIPT_TAIL`` messages (see ``resumed.py``)."""
        from .resumed import show_transcript  # after the session is connected

        await show_transcript(self, messages)

    def hidden_text(self) -> str:
        return (
            f"… {self.hidden} earlier items are not shown here "
            "(the conversation keeps them; /context counts them)"
        )

    async def prune(self) -> None:
        """Unmount the oldest blocks beyond ``MAX_ITEMS``, and fold what is far above."""
        items = self._blocks()
        extra = len(items) - self.MAX_ITEMS
        if extra <= 0:
            self.fold_later()
            return
        self.unfold()
        drop = items[: extra + self.MAX_ITEMS // 10]
        for widget in drop:
            if isinstance(widget, ToolCallBlock):
                self.calls.pop(widget.call_id, None)
        self.hidden += len(drop)
        await self.remove_children(drop)
        self._removed()
        notes = list(self.query(HiddenNote))
        if notes:
            notes[0].update(self.hidden_text())
        else:
            await self.mount(HiddenNote(self.hidden_text()), before=0)
        self.fold_later()
