"""Drawing a resumed conversation in the chat: a screen of its newest messages, the rest
when scrolled to.

Imported when a conversation is first shown, which needs a connected session: it takes its
core names from ``connected``, the UI's one door to the core.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from textual.geometry import Size
from textual.widget import Widget

from .blocks.markdown import ReplyMarkdown
from .blocks.message import user_message
from .blocks.reply import ReplyStream, split_markdown
from .blocks.tool_call import ToolCallBlock
from .chat import ChatView, HiddenNote
from .connected import Conversation, messages, user_shell

Message = messages.Message
ToolMessage = messages.ToolMessage


class Tail(Protocol):
    """A conversation that gives its newest messages without reading the ones a resume
    put off (``Conversation``, ``session.conversation``)."""

    def tail(self, count: int) -> list[Message]: ...

    @property
    def held(self) -> list[Message]: ...

    @property
    def deferred(self) -> bool: ...

    @property
    def messages(self) -> list[Message]: ...


async def show_transcript(chat: ChatView, shown: Sequence[Mapping[str, Any]] | Tail) -> None:
    """Re-draw a resumed conversation (typed messages, or OpenAI dicts): about a screen
    of its newest messages (from a ``Conversation``, without reading the messages a resume
    put off). The older ones are mounted a batch at a time when the chat is scrolled up to
    them (``Earlier``, the chat's ``older``); export and the conversation see them all."""
    conversation = Conversation(shown) if isinstance(shown, Sequence) else shown
    await chat.clear()
    newest = fitting(conversation.tail(chat.screenful()), chat.app.size)
    widgets = transcript_widgets(chat, newest, results(newest))
    await chat.mount_all(widgets)
    chat.scroll_end(animate=False)
    chat.fold_later()
    if newest and (len(conversation.held) > len(newest) or conversation.deferred):
        chat.older = Earlier(chat, conversation, newest[0])
        await chat.mount(HiddenNote(chat.older.note()), before=0)
        chat.call_after_refresh(chat.fill_view)


FRAME_ROWS = 6  # the app's rows around the chat: title, prompt box, footer


def fitting(newest: list[Message], size: Size) -> list[Message]:
    """The last of ``newest`` that fill the chat of an app of ``size`` by their estimated
    heights (``rows``), the first not a tool result; more comes after the first frame
    (``ChatView.fill_view``)."""
    height, width = size.height - FRAME_ROWS, max(size.width - 6, 20)
    total = 0
    start = len(newest)
    while start > 0 and total < height:
        start -= 1
        total += rows(newest[start], width)
    while start > 0 and isinstance(newest[start], ToolMessage):
        start -= 1
    return newest[start:]


def rows(message: Message, width: int) -> int:
    """About how many rows ``message`` takes in the chat ``width`` columns wide: its
    text's lines, wrapped, and a margin; a row a tool call; a tool result none (its call's
    block shows it folded)."""
    if isinstance(message, messages.UserMessage):
        text = message.prompt  # as typed: attachments show as chips
    else:
        text = message.text if isinstance(message, messages.AssistantMessage) else ""
    lines = sum(1 + len(line) // width for line in text.split("\n")) if text else 0
    fences = text.count("```")  # a code block's padding: a row above and below
    calls = len(message.calls) if isinstance(message, messages.AssistantMessage) else 0
    return lines + fences + calls + (1 if lines else 0)


class Earlier:
    """The messages of a resumed conversation above the oldest one the chat shows, mounted
    ``ChatView.screenful()`` at a time (``load``) when the chat is scrolled up to them. The
    messages a resume put off are read when the held ones run out."""

    def __init__(self, chat: ChatView, conversation: Tail, first: Message) -> None:
        self.chat = chat
        self.conversation = conversation
        self.first = first  # the oldest message shown

    def _above(self, every: list[Message]) -> int | None:
        """Where ``first`` is in ``every`` (the messages above it are ``every[:index]``),
        None when the conversation no longer holds it (cleared or replaced)."""
        return next((i for i in range(len(every) - 1, -1, -1) if every[i] is self.first), None)

    def note(self) -> str:
        held = self.conversation.held
        index = self._above(held)
        if self.conversation.deferred or index is None:
            return "↑ earlier messages: scroll up to show them"
        noun = "message" if index == 1 else "messages"
        return f"↑ {index} earlier {noun}: scroll up to show them"

    def remaining(self) -> int:
        return self._above(self.conversation.messages) or 0

    async def load(self, before: Widget | None) -> bool:
        count = self.chat.screenful()
        index = self._above(self.conversation.held)
        if index is None or (index < count and self.conversation.deferred):
            index = self._above(self.conversation.messages)  # reads what was put off
        if index is None:
            return False
        above = self.conversation.held[:index]
        start = tail_start(above, count)
        batch = above[start:]
        if batch:
            widgets = transcript_widgets(self.chat, batch, results(batch))
            await self.chat.mount_all(widgets, before=before)
            self.first = batch[0]
        return start > 0 or self.conversation.deferred


def results(shown: list[Message]) -> dict[str, ToolMessage]:
    """Tool results by call id (they follow their call)."""
    return {m.call_id: m for m in shown if isinstance(m, ToolMessage)}


def tail_start(shown: list[Message], count: int) -> int:
    """Where the last ``count`` messages start, moved up off tool results (their call comes
    first)."""
    start = max(0, len(shown) - count)
    while start > 0 and isinstance(shown[start], ToolMessage):
        start -= 1
    return start


def _user_widget(message: messages.UserMessage) -> Widget:
    """A user message as it was shown live, by its origin: a ``!command`` as its block, a
    prompt with ``@path`` attachments as the prompt as typed and a chip per attachment."""
    run = user_shell.run_of(message)
    if run is not None:
        from .blocks.shell import ShellBlock

        return ShellBlock(run.command, run)
    return user_message(message.prompt, list(message.attachments))


def transcript_widgets(
    chat: ChatView, shown: list[Message], answers: dict[str, ToolMessage]
) -> list[Widget]:
    """The blocks showing journaled messages; tool calls with their answers (the blocks
    are registered in ``chat.calls``)."""
    widgets: list[Widget] = []
    for message in shown:
        if isinstance(message, messages.UserMessage):
            widgets.append(_user_widget(message))
        elif isinstance(message, messages.AssistantMessage):
            if message.text:
                for piece in split_markdown(message.text, ReplyStream.SEGMENT_BLOCKS):
                    widgets.append(ReplyMarkdown(piece))
            for call in message.calls:
                args, _ = call.parsed()
                answer = answers.get(call.id)
                result = None if answer is None else answer.result
                shown_args = args if isinstance(args, dict) else None
                block = ToolCallBlock(call.id, call.name or "?", call.arguments, shown_args, result)
                chat.calls[call.id] = block
                widgets.append(block)
    return widgets
