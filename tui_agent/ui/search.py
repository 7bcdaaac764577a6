"""Ctrl+F: search the conversation in the chat. A bar above the prompt takes the words;
every block that holds them (a prompt, a reply, thinking, a tool call's arguments or its
result, folded or not, a subagent's run, a ``!command``) is marked, the current match is
selected in its text and scrolled to, and what folds it away opens (the chat's fold, a
tool call's ``▶ result``, thinking, a task block). A search starts at the newest match;
Enter or n goes to the one above it (older), Shift+Enter or N back down; Esc closes the
bar and takes the marks away.

A resumed conversation shows its newest messages first: the bar counts the matches in
the messages not drawn yet, and going back past the first match drawn draws the earlier
messages (a screenful at a time, as scrolling up does) until one holds a match.

The chat holds only its newest blocks (``ChatView.MAX_ITEMS``): the messages above them are
searched in the conversation, counted as earlier matches too, and going past the first
match drawn draws the stretch of the conversation that holds the next one above the
blocks (with a ``Gap`` line saying how many messages lie between).

Imported when Ctrl+F is first pressed (after the first frame); it needs nothing of the
core, only the chat and its blocks."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.content import Content
from textual.geometry import Offset
from textual.selection import Selection
from textual.widget import Widget
from textual.widgets import Input, Label, Static

from .blocks.message import Note, UserMessage
from .chat import FoldSpacer, HiddenNote

if TYPE_CHECKING:
    from .chat import ChatView

Reveal = Callable[[], Awaitable[None]]


@dataclass
class Part:
    """Searchable text of a block: ``text``; ``reveal`` opens what hides it (a folded
    result); ``leaf`` the widget whose text shows it (found after ``reveal`` when None)."""

    block: Widget
    text: str
    reveal: Reveal | None = None
    leaf: Callable[[], Widget | None] | None = None


@dataclass
class Match:
    part: Part
    start: int  # in part.text
    end: int


def _plain(widget: Widget) -> str:
    """The text a Static shows (its content as a string, Content or Rich Text)."""
    content = getattr(widget, "content", None)
    if isinstance(content, str):
        return content
    if isinstance(content, (Content, Text)):
        return content.plain
    return ""


def _pretty(value: Any) -> str:
    import json

    try:
        return json.dumps(value, indent=2, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def message_text(message: Any) -> str:
    """What a search finds in a conversation's message, as its block shows it: a prompt as
    typed (not the attached files), a reply's text, its calls, a tool result's JSON."""
    prompt = getattr(message, "prompt", None)
    if isinstance(prompt, str) and getattr(message, "origin", "") != "shell":
        text = prompt
    else:
        text = str(getattr(message, "text", "") or "")
    for call in getattr(message, "calls", ()) or ():
        text += f"\n{call.name} {call.arguments}"
    result = getattr(message, "result", None)
    if result is not None and hasattr(result, "to_dict"):
        text += "\n" + _pretty(result.to_dict())
    return text


def oldest_drawn(blocks: list[Widget], every: list[Any], lookback: int = 60) -> int:
    """Where the messages the chat's ``blocks`` show start in ``every`` (the conversation):
    the blocks are paired with messages from the newest back, a tool call's block by its
    call's id, a prompt, a reply or a ``!command`` by its text (within ``lookback``
    messages); blocks that show no message (notes, thinking) are passed over."""
    from .blocks.markdown import ReplyMarkdown
    from .blocks.shell import ShellBlock

    calls = {call.id: i for i, m in enumerate(every) for call in getattr(m, "calls", ()) or ()}
    pointer = len(every)
    for block in reversed(blocks):
        call_id = getattr(block, "call_id", None)
        if isinstance(call_id, str) and call_id in calls:
            pointer = min(pointer, calls[call_id])
            continue
        if isinstance(block, UserMessage):
            shown = _plain(block)

            def same(m: Any, shown: str = shown) -> bool:
                prompt = getattr(m, "prompt", None)
                return bool(prompt) and (shown == prompt or shown.startswith(f"{prompt}\n"))
        elif isinstance(block, ReplyMarkdown) and block.source.strip():
            source = block.source.strip()

            def same(m: Any, source: str = source) -> bool:
                return getattr(m, "role", "") == "assistant" and source in (m.text or "")
        elif isinstance(block, ShellBlock):
            command = block.command

            def same(m: Any, command: str = command) -> bool:
                return getattr(m, "origin", "") == "shell" and command in (m.text or "")
        else:
            continue
        top = min(pointer, len(every) - 1)
        pointer = next(
            (i for i in range(top, max(top - lookback, -1), -1) if same(every[i])), pointer
        )
    return pointer


class Gap(Static):
    """Under a stretch of the conversation a search drew above the chat's blocks: how
    many messages between are not drawn."""

    DEFAULT_CSS = "Gap { color: $text-muted; margin: 0 0 1 1; }"


def parts_of(block: Widget) -> list[Part]:
    """What a chat block holds that a search looks in (see the module's docstring)."""
    from .blocks.markdown import NoteMarkdown, ReplyMarkdown
    from .blocks.shell import ShellBlock
    from .blocks.task import TaskBlock
    from .blocks.thinking import Thinking
    from .blocks.tool_call import ResultFold, ToolCallBlock

    if isinstance(block, (UserMessage, Note)):
        return [Part(block, _plain(block), leaf=lambda: block)]
    if isinstance(block, (ReplyMarkdown, NoteMarkdown)):
        return [Part(block, block.source)]
    if isinstance(block, Thinking):

        async def open_thinking() -> None:
            block.collapsed = False

        return [Part(block, block.text, open_thinking, lambda: block.body)]
    if isinstance(block, ToolCallBlock):
        found = [Part(block, f"{block.tool_name} {block._args_text()}", leaf=lambda: block.header)]
        result = block.result
        if result is not None:
            folds = list(block.query(ResultFold).results(ResultFold))
            fold = folds[0] if folds else None

            async def open_result() -> None:
                if fold is not None and fold.collapsed:
                    await fold.toggle()

            found.append(
                Part(block, _pretty(result.to_dict()), open_result, lambda: fold and fold.body)
            )
        return found
    if isinstance(block, TaskBlock):

        async def open_task() -> None:
            if block.collapsed:
                block.toggle()

        # as the open block shows it: the header, then every step (folded: the last few)
        lines = [f"{block.agent} {block.description}", *(r.plain for r in block.step_rows())]
        return [Part(block, "\n".join(lines), open_task)]
    if isinstance(block, ShellBlock):
        return [Part(block, f"{block.command}\n{block.text}")]
    return []


def find(parts: list[Part], query: str) -> list[Match]:
    """Every place ``query`` is in ``parts`` (case ignored), in order."""
    if not query:
        return []
    pattern = re.compile(re.escape(query), re.IGNORECASE)
    return [Match(part, m.start(), m.end()) for part in parts for m in pattern.finditer(part.text)]


def _leaf_selection(root: Widget, query: str, nth: int) -> tuple[Widget, Selection] | None:
    """The ``nth`` occurrence of ``query`` among the texts ``root`` shows (itself and its
    Static descendants, in order), as a selection in that widget's text."""
    pattern = re.compile(re.escape(query), re.IGNORECASE)
    widgets = [root, *root.query(Static)] if isinstance(root, Static) else [*root.query(Static)]
    seen = 0
    for widget in widgets:
        if not widget.display:
            continue
        text = _plain(widget)
        for found in pattern.finditer(text):
            if seen == nth:
                line = text.count("\n", 0, found.start())
                column = found.start() - (text.rfind("\n", 0, found.start()) + 1)
                end = column + (found.end() - found.start())
                return widget, Selection(Offset(column, line), Offset(end, line))
            seen += 1
    return None


class SearchBar(Horizontal, can_focus=True):
    """The search bar (``Ctrl+F``): the words, the count, the keys."""

    SCOPED_CSS = False  # it marks the chat's blocks: .search-hit, .search-current
    DEFAULT_CSS = """
    SearchBar {
        height: 1; background: $boost; padding: 0 1; display: none;
    }
    SearchBar.open { display: block; }
    SearchBar > Input {
        border: none; height: 1; width: 1fr; padding: 0 1;
        &:focus { border: none; }
    }
    SearchBar > #search-count { width: auto; padding: 0 1; color: $text-muted; }
    SearchBar > #search-keys { width: auto; color: $text-muted; }
    SearchBar:focus > #search-count { color: $text; text-style: bold; }
    .search-hit { background: $warning 6%; }
    .search-current { background: $warning 14%; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close search", id="search.close"),
        Binding("enter,n", "next", "Older match", id="search.next"),
        Binding("shift+enter,N", "previous", "Newer match", id="search.previous"),
        Binding("ctrl+f,slash", "edit", "Edit search", show=False, id="search.edit"),
    ]

    def __init__(self, chat: ChatView, on_close: Callable[[], None], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.chat = chat
        self.on_close = on_close
        self.matches: list[Match] = []
        self.current = -1
        self.earlier = 0  # matches in the messages the chat has not drawn yet
        self._marked: list[Widget] = []
        self._query = ""
        self._code: tuple[Static, Any] | None = None  # a result's code marked, its original
        # a stretch of the conversation drawn above the chat's blocks: where it starts in the
        # messages, its first block (gone once the chat prunes it)
        self._window: tuple[int, Widget] | None = None
        self._texts: dict[int, tuple[Any, str]] = {}  # message_text by id(message)

    def compose(self) -> ComposeResult:
        yield Label("find", id="search-label")
        yield Input(placeholder="search the conversation", id="search-input")
        yield Label("", id="search-count", markup=False)
        yield Label("Enter/n older · Shift+Enter/N newer · Esc close", id="search-keys")

    @property
    def input(self) -> Input:
        return self.query_one("#search-input", Input)

    def open(self) -> None:
        self.add_class("open")
        self.input.focus()
        if self.input.value:
            self.search(self.input.value, keep=True)

    def action_edit(self) -> None:
        self.input.focus()

    def action_close(self) -> None:
        self.remove_class("open")
        self._unmark()
        self._restore()
        self.screen.selections = {}
        self.matches = []
        self.current = -1
        self.on_close()

    # -- finding ------------------------------------------------------------------------------

    def _blocks(self) -> list[Widget]:
        return [w for w in self.chat.children if not isinstance(w, (HiddenNote, FoldSpacer))]

    def search(self, query: str, keep: bool = False, move: bool = True) -> None:
        """Find ``query`` in every block; go to the newest match at or above the view
        (the last one when the view is at the bottom; not with ``move=False``)."""
        self._query = query
        parts = [part for block in self._blocks() for part in parts_of(block)]
        before = (
            self.matches[self.current] if keep and 0 <= self.current < len(self.matches) else None
        )
        self.matches = find(parts, query)
        self.earlier = self._count_earlier(query)
        self._unmark()
        for block in dict.fromkeys(match.part.block for match in self.matches):
            block.add_class("search-hit")
            self._marked.append(block)
        if not self.matches:
            self.current = -1
            self.screen.selections = {}
            self._restore()
            self._show_count()
            return
        if before is not None:
            same = [i for i, m in enumerate(self.matches) if m.part.block is before.part.block]
            self.current = same[0] if same else len(self.matches) - 1
        else:
            self.current = len(self.matches) - 1  # the newest: the chat shows the bottom
        if move:
            self.go(self.current)
        else:
            self._show_count()

    def _count_earlier(self, query: str) -> int:
        """Matches in the messages above the oldest block drawn (a resumed conversation's
        ``older``), by the messages' text, arguments and results."""
        older: Any = self.chat.older
        if not query:
            return 0
        if older is None:  # the messages above the blocks the chat holds, if it dropped some
            conversation, index = self._conversation(), self._dropped()
            if conversation is None or index is None:
                return 0
            above = list(conversation.messages)[:index]
        else:
            conversation = getattr(older, "conversation", None)
            first = getattr(older, "first", None)
            if conversation is None:
                return 0
            every = list(conversation.messages)  # reads what a resume put off: asked for
            index = next((i for i in range(len(every) - 1, -1, -1) if every[i] is first), None)
            above = every[:index] if index is not None else []
        pattern = re.compile(re.escape(query), re.IGNORECASE)
        return sum(len(pattern.findall(self._text(message))) for message in above)

    def _text(self, message: Any) -> str:
        kept = self._texts.get(id(message))
        if kept is None or kept[0] is not message:
            kept = self._texts[id(message)] = (message, message_text(message))
        return kept[1]

    def _conversation(self) -> Any:
        """The conversation the chat shows (None in an app without a session)."""
        try:
            session = getattr(self.app, "session", None)
        except RuntimeError:  # not made yet
            return None
        return getattr(session, "conversation", None)

    def _dropped(self) -> int | None:
        """Where the messages start that the chat's blocks show, when the chat dropped
        the blocks of those above (None: it holds them all, or a resume's ``older`` does)."""
        if self.chat.older is not None:
            return None
        if self._window is not None:
            start, first = self._window
            if first.parent is self.chat:
                return start
            self._window = None  # pruned since
        conversation = self._conversation()
        if not self.chat.hidden or conversation is None:
            return None
        return oldest_drawn(self._blocks(), list(conversation.messages))

    def _unmark(self) -> None:
        for block in self._marked:
            block.remove_class("search-hit")
            block.remove_class("search-current")
        self._marked = []

    def _show_count(self) -> None:
        count = self.query_one("#search-count", Label)
        if not self._query:
            count.update("")
        elif not self.matches:
            count.update("no match" + (f" · {self.earlier} earlier: N" if self.earlier else ""))
        else:
            text = f"{self.current + 1} of {len(self.matches)}"
            if self.earlier:
                text += f" · {self.earlier} earlier"
            count.update(text)

    # -- moving -------------------------------------------------------------------------------

    def go(self, index: int) -> None:
        self.current = index
        self._show_count()
        self.run_worker(
            partial(self._go, index), group="search", exclusive=True, exit_on_error=False
        )

    async def _go(self, index: int) -> None:
        match = self.matches[index]
        block = match.part.block
        for marked in self._marked:
            marked.set_class(marked is block, "search-current")
        if self.chat.folded:
            self.chat.unfold()  # what is folded away at the top has no place to scroll to
        if match.part.reveal is not None:
            await match.part.reveal()
        await asyncio.sleep(0)
        self.call_after_refresh(self._select, match)

    def _select(self, match: Match, rounds: int = 20) -> None:
        """Select the match in the text that shows it, and bring it into view (once what
        was opened for it is laid out)."""
        part = match.part
        nth = len(re.findall(re.escape(self._query), part.text[: match.start], re.IGNORECASE))
        root = part.leaf() if part.leaf is not None else part.block
        widget: Widget = root if root is not None else part.block
        if rounds > 0 and not widget.virtual_region.height:
            self.call_after_refresh(self._select, match, rounds - 1)
            return
        found = _leaf_selection(widget, self._query, nth) if root is not None else None
        self.screen.selections = {found[0]: found[1]} if found is not None else {}
        self._restore()
        if found is not None:
            widget = found[0]
            line = found[1].start.y if found[1].start is not None else 0
        else:  # a text drawn otherwise (a result's JSON): its line, marked there
            line = part.text.count("\n", 0, match.start) if root is not None else 0
            if isinstance(widget, Static):
                self._mark_code(widget, part.text, match)
        self.chat.scroll_to_center(widget, animate=False, immediate=True)
        if line:  # a tall text: its line to the middle of the chat, once it is on screen
            self.call_after_refresh(self._to_line, widget, line)
        if rounds > 0:  # the chat may still move (a load above keeps its view): again
            self.set_timer(0.3, partial(self._still_shown, match, widget, rounds))

    def _mark_code(self, widget: Static, text: str, match: Match) -> None:
        """A result's JSON is drawn as highlighted code (Rich ``Syntax``), which has no
        selection: the match is styled in a copy, the original put back when the search
        moves on or closes (``_restore``)."""
        from rich.syntax import Syntax

        code = widget.content
        if not isinstance(code, Syntax) or code.code != text:
            return
        marked = Syntax(
            code.code, code.lexer or "json", word_wrap=code.word_wrap, theme="ansi_dark"
        )
        line = text.count("\n", 0, match.start)
        start = match.start - (text.rfind("\n", 0, match.start) + 1)
        end = start + match.end - match.start
        selection = self.screen.get_component_rich_style("screen--selection")
        style = Style(color="bright_white", bgcolor=selection.bgcolor, bold=True)
        marked.stylize_range(style, (line + 1, start), (line + 1, end))
        self._code = (widget, code)
        widget.update(marked)

    def _restore(self) -> None:
        if self._code is not None:
            widget, code = self._code
            self._code = None
            if widget.is_mounted:
                widget.update(code)

    def _still_shown(self, match: Match, widget: Widget, rounds: int) -> None:
        current = self.matches[self.current] if 0 <= self.current < len(self.matches) else None
        if current is not match or not widget.is_mounted:
            return
        region, chat = widget.region, self.chat.content_region
        if not (region.height and region.intersection(chat).height):
            self._select(match, min(rounds, 3) - 1)

    def _to_line(self, widget: Widget, line: int) -> None:
        region, chat = widget.region, self.chat.content_region
        if not region.height:
            return
        y = region.y + min(line, region.height - 1)
        middle = chat.y + chat.height // 2
        self.chat.scroll_to(
            y=max(self.chat.scroll_y + y - middle, 0), animate=False, immediate=True
        )

    def action_next(self) -> None:
        """The match before the one shown: up the chat, back in time (a search starts at
        the newest); past the first drawn, the earlier messages are drawn."""
        self.focus()
        if self.current <= 0 and self.earlier:
            load = self._load_earlier if self.chat.older is not None else self._draw_dropped
            self.run_worker(load, group="search", exclusive=True, exit_on_error=False)
        elif self.matches:
            self.go((self.current - 1) % len(self.matches))

    def action_previous(self) -> None:
        """The match after the one shown: down the chat."""
        self.focus()
        if self.matches:
            self.go((self.current + 1) % len(self.matches))

    async def _load_earlier(self) -> None:
        """Draw earlier messages until the first block drawn holds a match (or nothing
        is left above), then go to the last match among them."""
        first = self.matches[0].part.block if self.matches else None
        for _ in range(200):
            if self.chat.older is None:
                if self._dropped() is not None:  # the chat holds no more: drawn from there
                    await self._draw_dropped()
                    return
                break
            older = self.chat.older
            drawn = getattr(older, "first", None)  # the oldest message drawn
            for _ in range(250):  # asked again until the chat takes it (one load at a time)
                self.chat.load_older()
                await asyncio.sleep(0.02)
                if self.chat.older is not older or getattr(older, "first", None) is not drawn:
                    break
            self.search(self._query, keep=False)
            index = next(
                (i for i, m in enumerate(self.matches) if m.part.block is first), len(self.matches)
            )
            if index > 0:
                await self._settled()  # the chat keeps its view after a load: then ours
                self.go(index - 1)
                return
        if self.matches:
            self.go(len(self.matches) - 1)

    async def _draw_dropped(self) -> None:
        """Draw the stretch of the conversation that holds the newest match above the
        chat's blocks (about a screenful of messages around it) above them; go there."""
        from .resumed import ChildRuns, results, tail_start, transcript_widgets

        conversation, below = self._conversation(), self._dropped()
        if conversation is None or below is None:
            return
        every = list(conversation.messages)
        pattern = re.compile(re.escape(self._query), re.IGNORECASE)
        found = (i for i in range(below - 1, -1, -1) if pattern.search(self._text(every[i])))
        target = next(found, None)
        if target is None:
            return
        half = max(self.chat.screenful() // 2, 1)
        end = min(target + 1 + half, below)
        for _ in range(40):  # on to the next prompt: a turn drawn whole, results with calls
            if end >= below or getattr(every[end], "role", "") == "user":
                break
            end += 1
        start = tail_start(every[: target + 1], half)
        for _ in range(40):  # back to its turn's prompt
            if start <= 0 or getattr(every[start], "role", "") == "user":
                break
            start -= 1
        batch = every[start:end]
        widgets = transcript_widgets(self.chat, batch, results(batch), ChildRuns.of(conversation))
        if not widgets:
            return
        between = below - end
        if between:
            noun = "message" if between == 1 else "messages"
            widgets.append(Gap(f"⋯ {between} later {noun} not shown here", markup=False))
        self.chat.unfold()  # the first block's place is measured from the top
        blocks = self._blocks()
        await self.chat.mount_all(widgets, before=blocks[0] if blocks else None)
        self._window = (start, widgets[0])
        self.search(self._query, move=False)
        drawn = set(widgets)
        index = max((i for i, m in enumerate(self.matches) if m.part.block in drawn), default=0)
        await self._settled()
        self.go(index)

    async def _settled(self) -> None:
        """Until the chat's scroll stays put for a moment (at most a second)."""
        last = None
        for _ in range(20):
            await asyncio.sleep(0.05)
            now = (self.chat.scroll_y, self.chat.virtual_size.height)
            if now == last:
                return
            last = now

    # -- input --------------------------------------------------------------------------------

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.search(event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_next()
