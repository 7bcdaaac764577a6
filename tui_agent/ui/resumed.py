"""Drawing a resumed conversation in the chat: the newest messages first, the rest after.

Imported when a conversation is first shown, which needs a connected session: it takes its
core names from ``connected``, the UI's one door to the core.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

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
    def messages(self) -> list[Message]: ...


async def show_transcript(chat: ChatView, shown: Sequence[Mapping[str, Any]] | Tail) -> None:
    """Re-draw a resumed conversation (typed messages, or OpenAI dicts): its newest
    ``chat.TRANSCRIPT_TAIL`` messages. About a screen of them is mounted at once, for the
    first frame (from a ``Conversation``, without loading the messages a resume put off);
    the rest follow above them after that frame (``_show_older``)."""
    conversation = Conversation(shown) if isinstance(shown, Sequence) else shown
    await chat.clear()
    newest = conversation.tail(max(8, chat.app.size.height // 3))
    widgets = transcript_widgets(chat, newest, results(newest))
    await chat.mount_all(widgets)
    chat.scroll_end(animate=False)
    chat.fold_later()
    if newest:
        above = widgets[0] if widgets else None
        chat.call_after_refresh(_show_older, chat, conversation, newest, above)


async def _show_older(
    chat: ChatView,
    conversation: Tail,
    newest: list[Message],
    above: Widget | None,
    rounds: int = 100,
) -> None:
    """Once the app's first frame is drawn (``chat.first_frame_drawn()``, or after
    ``rounds`` refreshes): the hidden-items note and the rest of the tail above ``newest``
    (shown from ``above`` down), ``TRANSCRIPT_BATCH`` messages a refresh. Nothing if the
    chat was cleared meanwhile."""
    if above is not None and above.parent is not chat:
        return
    if rounds > 0 and not chat.first_frame_drawn():
        chat.call_after_refresh(_show_older, chat, conversation, newest, above, rounds - 1)
        return
    every = conversation.messages
    first = next((i for i in range(len(every) - 1, -1, -1) if every[i] is newest[0]), None)
    if first is None:  # the conversation was cleared or replaced meanwhile
        return
    start = tail_start(every[: first + len(newest)], chat.TRANSCRIPT_TAIL)
    if start:
        chat.hidden = start
        note = HiddenNote(chat.hidden_text())
        chat.unfold()  # the spacer must stay below the note (see ChatView._size_spacer)
        await (chat.mount(note) if above is None else chat.mount(note, before=above))
    older = every[start:first]
    if older:
        await _show_earlier(chat, older, results(older), above)


async def _show_earlier(
    chat: ChatView, older: list[Message], answers: dict[str, ToolMessage], above: Widget | None
) -> None:
    """Mount the last ``TRANSCRIPT_BATCH`` of ``older`` above ``above`` (at the end without
    it), then the rest after the next refresh; stops when ``above`` is gone."""
    if above is not None and above.parent is not chat:
        return
    cut = max(0, len(older) - chat.TRANSCRIPT_BATCH)
    widgets = transcript_widgets(chat, older[cut:], answers)
    if widgets:
        chat.unfold()  # the folded blocks' positions move down
        await chat.mount_all(widgets, before=above)
        chat.fold_later()
        above = widgets[0]
    if cut:
        chat.call_after_refresh(_show_earlier, chat, older[:cut], answers, above)


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
