"""The chat pane: user messages, streamed replies, thinking, tool calls and notes."""

from __future__ import annotations

import json
import time
from typing import Any

from rich.markup import escape
from rich.syntax import Syntax
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Collapsible, Markdown, Static
from textual.widgets._markdown import MarkdownStream

from ..core.result import Result

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


class Note(Static):
    DEFAULT_CSS = """
    Note { margin: 0 0 0 1; color: $text-muted; }
    Note.error { color: $error; }
    """


class NoteMarkdown(Markdown):
    DEFAULT_CSS = """
    NoteMarkdown { margin: 0 0 0 1; }
    """


class Thinking(Collapsible):
    DEFAULT_CSS = """
    Thinking { margin: 0; padding: 0; border: none; background: transparent; }
    Thinking Static { color: $text-muted; text-style: italic; }
    """

    def __init__(self) -> None:
        self.text = ""
        self.body = Static("")
        super().__init__(self.body, title="Thinking", collapsed=False)

    def add(self, chunk: str) -> None:
        self.text += chunk
        self.body.update(escape(self.text))


class ReplyMarkdown(Markdown):
    DEFAULT_CSS = """
    ReplyMarkdown { margin: 0 0 0 1; padding: 0; }
    """


def _pretty(value: Any) -> str:
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
        widgets: list[Any] = []
        if not result.ok:
            widgets.append(Static(escape(result.error or ""), classes="error-text"))
        body = Syntax(_pretty(result.to_dict()), "json", word_wrap=True, theme="ansi_dark")
        widgets.append(Collapsible(Static(body), title="result", collapsed=True))
        return widgets

    def _args_text(self) -> str:
        text = self.arguments if self.args is None else json.dumps(self.args, ensure_ascii=False)
        return text if len(text) <= 200 else text[:200] + "…"

    def _render_header(self) -> None:
        elapsed = (self.finished or time.monotonic()) - self.started
        if self.result is None:
            mark = SPINNER[int(elapsed * 10) % len(SPINNER)]
        else:
            mark = "[green]✔[/]" if self.result.ok else "[red]✖[/]"
        self.header.update(
            f"{mark} [b]{escape(self.tool_name)}[/b] [dim]{escape(self._args_text())}[/dim] "
            f"[dim]{elapsed:.1f}s[/dim]"
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


class ChatView(VerticalScroll):
    """Anchored to the bottom while new content arrives, unless the user scrolled up.

    Only the newest ``MAX_ITEMS`` blocks stay mounted (the conversation keeps everything),
    so a long session or a resumed 5,000-message journal stays quick."""

    MAX_ITEMS = 300
    TRANSCRIPT_TAIL = 80

    DEFAULT_CSS = """
    ChatView { height: 1fr; padding: 0 1; scrollbar-size-vertical: 1; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._reply: ReplyMarkdown | None = None
        self._stream: MarkdownStream | None = None
        self._thinking: Thinking | None = None
        self.calls: dict[str, ToolCallBlock] = {}
        self.hidden = 0

    def on_mount(self) -> None:
        self.anchor()

    async def add_user(self, text: str) -> None:
        await self.end_reply()
        await self.mount(UserMessage(escape(text)))
        await self.prune()

    async def add_note(self, text: str, kind: str | None = None) -> None:
        await self.end_reply()
        if kind == "markdown":
            await self.mount(NoteMarkdown(text))
        else:
            await self.mount(Note(escape(text), classes="error" if kind == "error" else ""))

    async def add_thinking(self, text: str) -> None:
        if self._reply is not None:
            await self.end_reply()
        thinking = self._thinking
        if thinking is None:
            thinking = self._thinking = Thinking()
            await self.mount(thinking)
        thinking.add(text)

    async def add_text(self, text: str) -> None:
        if self._thinking is not None:
            self._thinking.collapsed = True
            self._thinking = None
        if self._stream is None:
            reply = self._reply = ReplyMarkdown()
            stream = self._stream = ReplyMarkdown.get_stream(reply)
            await self.mount(reply)
        else:
            stream = self._stream
        await stream.write(text)

    async def end_reply(self) -> None:
        if self._thinking is not None:
            self._thinking.collapsed = True
            self._thinking = None
        if self._stream is not None:
            await self._stream.stop()
        self._stream = None
        self._reply = None

    async def start_call(
        self, call_id: str, name: str, arguments: str, args: dict[str, Any] | None
    ) -> None:
        await self.end_reply()
        block = ToolCallBlock(call_id, name, arguments, args)
        self.calls[call_id] = block
        await self.mount(block)
        await self.prune()

    def finish_call(self, call_id: str, result: Result, elapsed: float) -> None:
        block = self.calls.get(call_id)
        if block is not None:
            block.finish(result, elapsed)

    async def clear(self) -> None:
        await self.end_reply()
        self.calls.clear()
        self.hidden = 0
        await self.remove_children()

    async def show_transcript(self, messages: list[dict[str, Any]]) -> None:
        """Re-draw a resumed conversation: its newest messages, mounted in one batch."""
        await self.clear()
        start = max(0, len(messages) - self.TRANSCRIPT_TAIL)
        while start > 0 and messages[start].get("role") == "tool":
            start -= 1
        shown = messages[start:]
        results = {m.get("tool_call_id"): m for m in shown if m.get("role") == "tool"}
        widgets: list[Any] = []
        if start:
            self.hidden = start
            widgets.append(HiddenNote(self._hidden_text()))
        for message in shown:
            role = message.get("role")
            if role == "user":
                widgets.append(UserMessage(escape(str(message.get("content") or ""))))
            elif role == "assistant":
                if message.get("content"):
                    widgets.append(ReplyMarkdown(str(message["content"])))
                for call in message.get("tool_calls") or []:
                    function = call.get("function", {})
                    raw = function.get("arguments", "")
                    try:
                        args = json.loads(raw) if raw else {}
                    except ValueError:
                        args = None
                    answer = results.get(call.get("id"))
                    result = None
                    if answer is not None:
                        try:
                            data = json.loads(answer.get("content") or "{}")
                        except ValueError:
                            data = {"output": answer.get("content")}
                        result = Result(data if isinstance(data, dict) else {"output": data})
                    block = ToolCallBlock(
                        call.get("id", ""), function.get("name", "?"), raw, args, result
                    )
                    self.calls[call.get("id", "")] = block
                    widgets.append(block)
        await self.mount_all(widgets)
        self.scroll_end(animate=False)

    def _hidden_text(self) -> str:
        return (
            f"… {self.hidden} earlier items are not shown here "
            "(the conversation keeps them; /context counts them)"
        )

    async def prune(self) -> None:
        """Unmount the oldest blocks beyond ``MAX_ITEMS``."""
        items = [w for w in self.children if not isinstance(w, HiddenNote)]
        extra = len(items) - self.MAX_ITEMS
        if extra <= 0:
            return
        drop = items[: extra + self.MAX_ITEMS // 10]
        for widget in drop:
            if isinstance(widget, ToolCallBlock):
                self.calls.pop(widget.call_id, None)
        self.hidden += len(drop)
        await self.remove_children(drop)
        notes = list(self.query(HiddenNote))
        if notes:
            notes[0].update(self._hidden_text())
        else:
            await self.mount(HiddenNote(self._hidden_text()), before=0)
