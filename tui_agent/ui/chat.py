"""The chat pane: the view that holds the blocks (``ui.blocks``: user messages, streamed
replies, thinking, tool calls, ``!commands``, notes), keeps the newest of them mounted and
folds away what is far above. It builds on the blocks; a resumed conversation is drawn
into it by ``ui.resumed``.

The block names stay importable from here (``__all__``); the Markdown ones on first use
(see ``__getattr__``)."""

from __future__ import annotations

from bisect import bisect_right
from itertools import pairwise
from typing import TYPE_CHECKING, Any, Protocol

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.events import Resize
from textual.widget import Widget
from textual.widgets import Static

from .blocks.message import Note, UserMessage, user_message

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from ..core.protocol.result import Result
    from .blocks.reply import ReplyStream
    from .blocks.task import TaskBlock
    from .blocks.thinking import Thinking
    from .blocks.tool_call import ToolCallBlock
    from .heap import Heap

__all__ = [
    "ChatView",
    "FoldSpacer",
    "HiddenNote",
    "Note",
    "ReplyStream",
    "TaskBlock",
    "Thinking",
    "ToolCallBlock",
    "UserMessage",
    "user_message",
]


# the blocks an empty chat does not show, imported on first use: the first frame goes
# without them (and without Markdown and Collapsible)
_LATER = {
    "NoteMarkdown": "markdown",
    "ReplyMarkdown": "markdown",
    "ReplyStream": "reply",
    "TaskBlock": "task",
    "Thinking": "thinking",
    "ToolCallBlock": "tool_call",
}


def __getattr__(name: str) -> Any:
    """The blocks of ``_LATER``, from ``ui/blocks/``, imported on first use."""
    if name in _LATER:
        from importlib import import_module

        return getattr(import_module(f".blocks.{_LATER[name]}", __package__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _safe_id(value: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in value)


class HiddenNote(Static):
    DEFAULT_CSS = """
    HiddenNote { color: $text-muted; text-style: italic; margin: 0 0 1 1; }
    """


class Older(Protocol):
    """What lies above the chat's oldest block, mounted when the chat is scrolled up to it
    (a resumed conversation's older messages: ``resumed.Earlier``)."""

    def note(self) -> str:
        """The note at the top of the chat while something is left above."""
        ...

    def remaining(self) -> int:
        """How many messages are left above (may read what a resume put off)."""
        ...

    async def load(self, before: Widget | None) -> bool:
        """Mount the next batch above ``before`` (the oldest block; at the end without
        one); False when nothing is left above."""
        ...


class FoldSpacer(Widget):
    """Stands in for the folded blocks at the top of the chat: as tall as they were."""

    DEFAULT_CSS = """
    FoldSpacer { height: 0; margin: 0; padding: 0; display: none; }
    """

    def render(self) -> str:
        return ""


def _forget_drawing(widget: Widget) -> None:
    """Drop what Textual keeps of the last drawing of a block folded away, and of all in
    it: its lines (``Strip``: a list of segments and seven caches each), as drawn and as
    styled, and its arrangements. Drawn again if it is unfolded (it is marked dirty, as
    Textual marks a widget whose content changed). A long reply's folded blocks kept a
    fifth to a third of its objects in the heap that way, and every full garbage
    collection walks them (heap.py; tests/ui/test_stream_cost.py)."""
    from textual.geometry import NULL_SIZE
    from textual.widget import _RenderCache

    for node in widget.walk_children(Widget, with_self=True):
        node._render_cache = _RenderCache(NULL_SIZE, [])
        node._set_dirty()  # its styled lines too; drawn anew when shown
        node._arrangement_cache.clear()


class ChatView(VerticalScroll):
    """Anchored to the bottom while new content arrives, unless the user scrolled up.

    Only the newest ``MAX_ITEMS`` blocks stay mounted (the conversation keeps everything),
    so a long session or a resumed 5,000-message journal stays quick. A resumed
    conversation mounts about a screen of its newest messages; ``older`` mounts the rest a
    batch at a time when the view is scrolled up to the top (``load_older``), keeping what
    was on screen in place.

    Folding keeps the cost of an update independent of how much is above: while the view
    follows the bottom, blocks more than ``FOLD_SCREENS`` screens above it are hidden
    (``display: none``, so Textual does not lay them out) and one ``FoldSpacer`` as tall as
    they were takes their place; scrolling up unfolds them before they come into view, and
    a change of width unfolds everything (heights change)."""

    MAX_ITEMS = 300
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
        ``first_frame_drawn``: whether the app's first frame is on screen (more of a
        resumed conversation than the newest messages waits for it: ``fill_view``)."""
        super().__init__(**kwargs)
        self._heap = heap
        self.first_frame_drawn = first_frame_drawn
        self._stream: ReplyStream | None = None
        self._thinking: Thinking | None = None
        self._streamed: list[Thinking | ReplyStream] = []  # the streaming reply's parts
        self._shell: Any = None  # the running !command's ShellBlock
        self.calls: dict[str, ToolCallBlock] = {}
        # task calls' blocks, by the call's id and by the ids of the task calls their
        # subagents made (a grandchild's steps show in its ancestor's block)
        self.tasks: dict[str, TaskBlock] = {}
        self.hidden = 0
        self.older: Older | None = None  # mounted when scrolled to (see load_older)
        self._loading_older = False
        self.spacer = FoldSpacer()
        self.folded: list[tuple[Widget, int]] = []  # (widget, its y when folded), top first
        self._folded_end = 0  # where the first block shown starts (the spacer's end)
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
                _forget_drawing(widget)
            self._size_spacer(first_shown.virtual_region.y, first_shown)

    def _size_spacer(self, y: int, first_shown: Widget) -> None:
        """Make the first shown block start at ``y`` again. The spacer sits right after the
        hidden-items note (or at the top); margins between siblings collapse to the larger
        one, and the spacer has none."""
        self._folded_end = y
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
            # a folded block reaches down to where the next one starts, the last one to the
            # end of the spacer: those that reach below ``down_to`` come back (by their tops,
            # a block taller than two screens stayed folded with the view inside it)
            ends = [y for _, y in self.folded[1:]]
            ends.append(self._folded_end)
            keep = bisect_right(ends, down_to)
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

    def watch_has_focus(self, has_focus: bool) -> None:
        """The chat restyled alone when it gains or loses the focus: Textual restyles every
        descendant (after a 20,000-token reply, 3,300 widgets: ~2 s for a click in the
        chat), and no rule styles a block by the chat's focus."""
        self.app.stylesheet.update_nodes([self], animate=True)

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        if self.folded and new < old:
            self.unfold(down_to=new - self.FOLD_SCREENS * max(self.size.height, 1))
        if self.older is not None and new < old and new <= self.size.height:
            self.load_older()

    # -- what lies above (a resumed conversation's older messages) -------------------------

    def screenful(self) -> int:
        """About how many messages fill the view (a resume mounts this many, and as many
        again each time the view is scrolled up to the top)."""
        return max(8, self.app.size.height // 3)

    def load_older(self) -> None:
        """Mount the next batch of ``older`` above the oldest block (one load at a time);
        the blocks on screen stay where they are. Past ``MAX_ITEMS`` blocks the rest is
        counted in the hidden-items note instead."""
        if self.older is not None and not self._loading_older:
            self._loading_older = True
            self.call_later(self._load_older)

    async def _load_older(self) -> None:
        older = self.older
        if older is None or not self.is_mounted:
            self._loading_older = False
            return
        if len(self._blocks()) >= self.MAX_ITEMS:
            self.hidden += older.remaining()
            self.older = None
            await self._set_note(self.hidden_text())
            self._loading_older = False
            return
        self.unfold()  # the spacer's height is measured from the top
        blocks = self._blocks()
        first = blocks[0] if blocks else None
        y = first.virtual_region.y if first is not None else 0
        more = await older.load(first)
        if not more:
            self.older = None
        await self._set_note(older.note() if more else None)
        self.call_after_refresh(self._keep_in_place, first, y)

    def _keep_in_place(self, first: Widget | None, y: int) -> None:
        """After a batch went in above ``first``: scroll down by what it added, so the
        view shows what it showed; then more if the blocks do not fill the view."""
        if first is not None and first.parent is self:
            moved = first.virtual_region.y - y
            if moved > 0:
                self.scroll_to(y=self.scroll_y + moved, animate=False, immediate=True)
        self._loading_older = False
        self.fill_view()

    def fill_view(self, rounds: int = 100) -> None:
        """Load more of ``older`` while the blocks are less than two screens tall (a view
        that cannot scroll up could not ask for them); once the app's first frame is drawn
        (or after ``rounds`` refreshes)."""
        if rounds > 0 and not self.first_frame_drawn():
            self.call_after_refresh(self.fill_view, rounds - 1)
        elif self.older is not None and self.virtual_size.height < 2 * max(self.size.height, 1):
            self.load_older()

    async def _set_note(self, text: str | None) -> None:
        """The note at the top of the chat (before the fold spacer): ``text``, or none."""
        notes = list(self.query(HiddenNote))
        if text is None:
            if notes:
                await self.remove_children(notes)
        elif notes:
            notes[0].update(text)
        else:
            await self.mount(HiddenNote(text), before=0)

    def on_resize(self, event: Resize) -> None:
        if event.size.width != self._width:
            self._width = event.size.width
            self.unfold()
            self.fold_later()

    async def add_user(self, text: str, chips: Sequence[str] = ()) -> None:
        """``chips``: the labels of the ``@path`` attachments sent with it; a
        ``blocks.image.Chips`` brings its images too, previewed under the message where
        the terminal shows images."""
        await self.end_reply()
        await self.mount(user_message(text, chips))
        images = getattr(chips, "images", ())
        if images:
            from .blocks.image import preview  # with the first image sent

            shown = preview(images)
            if shown is not None:
                await self.mount(shown)
        await self.prune()

    async def start_shell(self, command: str, outside: bool = False) -> None:
        """A ``!command`` started: its block (``blocks/shell.py``), live until it ends;
        ``outside``: a ``!!command``, marked as run outside the sandbox."""
        from .blocks.shell import ShellBlock  # after the first frame, with the first one

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
            from .blocks.markdown import NoteMarkdown

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
            from .blocks.thinking import Thinking

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
            from .blocks.reply import ReplyStream

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
        for part in parts:  # a Thinking is a widget, a ReplyStream holds segments
            widgets.extend([part] if isinstance(part, Widget) else await part.discard())
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
        from .blocks.tool_call import ToolCallBlock

        block = ToolCallBlock(call_id, name, arguments, args)
        self.calls[call_id] = block
        await self.mount(block)
        await self.prune()

    def finish_call(self, call_id: str, result: Result, elapsed: float) -> None:
        block = self.calls.pop(call_id, None)
        if block is not None and block.result is None:
            block.finish(result, elapsed)
        task = self.tasks.get(call_id)
        if task is not None and task.call_id == call_id and task.result is None:
            task.finish(result, elapsed)

    async def start_task(self, call_id: str, agent: str, description: str) -> None:
        """A ``task`` call started: its block (``blocks/task.py``) shows its subagent."""
        await self.end_reply()
        from .blocks.task import TaskBlock

        block = TaskBlock(call_id, agent, description)
        self.tasks[call_id] = block
        await self.mount(block)
        await self.prune()

    def task_block(self, call_id: str) -> TaskBlock | None:
        """The block showing the ``task`` call ``call_id`` (or the one of its ancestor)."""
        return self.tasks.get(call_id)

    async def clear(self) -> None:
        await self.end_reply()
        self._streamed.clear()
        self.calls.clear()
        self.tasks.clear()
        self.hidden = 0
        self.older = None
        self.folded.clear()
        await self.remove_children()
        self._removed()
        self.spacer = FoldSpacer()
        await self.mount(self.spacer)

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
            call_id = getattr(widget, "call_id", None)  # a tool call's block
            if call_id is not None and self.calls.get(call_id) is widget:
                del self.calls[call_id]
            for key in [k for k, task in self.tasks.items() if task is widget]:
                del self.tasks[key]
        self.hidden += len(drop)
        if self.older is not None:  # what was left above is no longer next to the top
            self.hidden += self.older.remaining()
            self.older = None
        await self.remove_children(drop)
        self._removed()
        await self._set_note(self.hidden_text())
        self.fold_later()
