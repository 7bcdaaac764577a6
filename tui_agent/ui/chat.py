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
        self, call_id: str, name: str, arguments: str, args: dict[str, Any] | None
    ) -> None:
        super().__init__(id=f"call-{_safe_id(call_id)}" if call_id else None)
        self.call_id = call_id
        self.tool_name = name
        self.arguments = arguments
        self.args = args
        self.started = time.monotonic()
        self.finished: float | None = None
        self.result: Result | None = None
        self.header = Static("", classes="header")

    def compose(self) -> ComposeResult:
        yield self.header

    def on_mount(self) -> None:
        self._render_header()
        self._timer = self.set_interval(0.1, self._render_header)

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
        self._timer.stop()
        self._render_header()
        if not result.ok:
            self.add_class("failed")
            self.mount(Static(escape(result.error or ""), classes="error-text"))
        body = Syntax(_pretty(result.to_dict()), "json", word_wrap=True, theme="ansi_dark")
        self.mount(Collapsible(Static(body), title="result", collapsed=True))


def _safe_id(value: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in value)


class ChatView(VerticalScroll):
    """Anchored to the bottom while new content arrives, unless the user scrolled up."""

    DEFAULT_CSS = """
    ChatView { height: 1fr; padding: 0 1; scrollbar-size-vertical: 1; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._reply: ReplyMarkdown | None = None
        self._stream: MarkdownStream | None = None
        self._thinking: Thinking | None = None
        self.calls: dict[str, ToolCallBlock] = {}

    def on_mount(self) -> None:
        self.anchor()

    async def add_user(self, text: str) -> None:
        await self.end_reply()
        await self.mount(UserMessage(escape(text)))

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

    def finish_call(self, call_id: str, result: Result, elapsed: float) -> None:
        block = self.calls.get(call_id)
        if block is not None:
            block.finish(result, elapsed)

    async def clear(self) -> None:
        await self.end_reply()
        self.calls.clear()
        await self.remove_children()

    async def show_transcript(self, messages: list[dict[str, Any]]) -> None:
        """Re-draw a resumed conversation."""
        await self.clear()
        results = {m.get("tool_call_id"): m for m in messages if m.get("role") == "tool"}
        for message in messages:
            role = message.get("role")
            if role == "user":
                await self.add_user(str(message.get("content") or ""))
            elif role == "assistant":
                if message.get("content"):
                    await self.mount(ReplyMarkdown(str(message["content"])))
                for call in message.get("tool_calls") or []:
                    function = call.get("function", {})
                    raw = function.get("arguments", "")
                    try:
                        args = json.loads(raw) if raw else {}
                    except ValueError:
                        args = None
                    await self.start_call(call.get("id", ""), function.get("name", "?"), raw, args)
                    answer = results.get(call.get("id"))
                    if answer is not None:
                        try:
                            data = json.loads(answer.get("content") or "{}")
                        except ValueError:
                            data = {"output": answer.get("content")}
                        self.finish_call(call.get("id", ""), Result(data), 0.0)
