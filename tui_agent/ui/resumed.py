"""Drawing a resumed conversation in the chat: a screen of its newest messages, the rest
when scrolled to.

Imported when a conversation is first shown: a resume's first frame (before its session
is made) or a connected session's. Its core names come through ``journaled``, the narrow
door that brings only what reading a journal needs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from textual.geometry import Size
from textual.widget import Widget

from .blocks.image import image_parts, preview
from .blocks.markdown import ReplyMarkdown
from .blocks.message import user_message
from .blocks.reply import ReplyStream, split_markdown
from .blocks.task import Step, TaskBlock, TextStep, ToolStep, short_args
from .blocks.tool_call import ToolCallBlock
from .chat import ChatView, HiddenNote
from .journaled import Conversation, child_records, messages, user_shell

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


TASK_NAMES = frozenset({"task", "Task", "Agent", "agent"})  # plugins/task.py and its aliases


class ChildRuns:
    """The subagents' runs a journal keeps (``child_records``), by the id of their
    ``task`` call: read when the first task call is shown, not before (a resumed
    conversation without one never reads its journal again)."""

    def __init__(
        self, path: Path | None, runs: dict[str, tuple[str, list[dict[str, Any]]]] | None = None
    ) -> None:
        """``runs``: given instead of read (a journal's ``child_records``)."""
        self.path = path
        self._runs = runs

    @classmethod
    def of(cls, conversation: object) -> ChildRuns:
        """The runs of ``conversation``'s journal (none for one without a journal)."""
        path = getattr(getattr(conversation, "journal", None), "path", None)
        return cls(path if isinstance(path, Path) else None)

    def get(self, call_id: str) -> tuple[str, list[dict[str, Any]]] | None:
        if self._runs is None:
            path = self.path
            self._runs = child_records(path) if path is not None and path.exists() else {}
        return self._runs.get(call_id)


async def show_transcript(
    chat: ChatView,
    shown: Sequence[Mapping[str, Any]] | Tail,
    children: ChildRuns | None = None,
) -> None:
    """Re-draw a resumed conversation (typed messages, or OpenAI dicts): about a screen
    of its newest messages (from a ``Conversation``, without reading the messages a resume
    put off). The older ones are mounted a batch at a time when the chat is scrolled up to
    them (``Earlier``, the chat's ``older``); export and the conversation see them all.
    ``children``: the subagents' runs its ``task`` calls show (by default those of the
    journal of ``shown``, when it has one)."""
    conversation = Conversation(shown) if isinstance(shown, Sequence) else shown
    runs = children if children is not None else ChildRuns.of(shown)
    await chat.clear()
    newest = fitting(conversation.tail(chat.screenful()), chat.app.size)
    widgets = transcript_widgets(chat, newest, results(newest), runs)
    await chat.mount_all(widgets)
    chat.scroll_end(animate=False)
    chat.fold_later()
    if newest and (len(conversation.held) > len(newest) or conversation.deferred):
        chat.older = Earlier(chat, conversation, newest[0], runs)
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

    def __init__(
        self, chat: ChatView, conversation: Tail, first: Message, children: ChildRuns | None = None
    ) -> None:
        self.chat = chat
        self.conversation = conversation
        self.first = first  # the oldest message shown
        self.children = children

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
            widgets = transcript_widgets(self.chat, batch, results(batch), self.children)
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
    chat: ChatView,
    shown: list[Message],
    answers: dict[str, ToolMessage],
    children: ChildRuns | None = None,
) -> list[Widget]:
    """The blocks showing journaled messages; tool calls with their answers (the blocks
    are registered in ``chat.calls``); a ``task`` call whose subagent's run the journal
    kept (``children``) as its task block, folded."""
    widgets: list[Widget] = []
    for message in shown:
        if isinstance(message, messages.UserMessage):
            widgets.append(_user_widget(message))
            images = image_parts(message.get("content"))
            shown = preview(images) if images else None  # where the terminal shows images
            if shown is not None:
                widgets.append(shown)
        elif isinstance(message, messages.AssistantMessage):
            if message.text:
                for piece in split_markdown(message.text, ReplyStream.SEGMENT_BLOCKS):
                    widgets.append(ReplyMarkdown(piece))
            for call in message.calls:
                args, _ = call.parsed()
                answer = answers.get(call.id)
                result = None if answer is None else answer.result
                shown_args = args if isinstance(args, dict) else None
                run = children.get(call.id) if children and call.name in TASK_NAMES else None
                if run is not None:
                    task = task_block(call.id, shown_args or {}, run, answer)
                    chat.tasks[call.id] = task
                    widgets.append(task)
                    continue
                block = ToolCallBlock(call.id, call.name or "?", call.arguments, shown_args, result)
                chat.calls[call.id] = block
                widgets.append(block)
    return widgets


def task_block(
    call_id: str,
    args: Mapping[str, Any],
    run: tuple[str, list[dict[str, Any]]],
    answer: ToolMessage | None,
) -> TaskBlock:
    """A resumed ``task`` call's block: its subagent's steps from the journal's records
    (its text, a line per tool call with ✔/✖), its result (tokens, seconds)."""
    agent, records = run
    steps: list[Step] = []
    calls: dict[str, ToolStep] = {}
    for record in records:
        try:
            message = messages.from_openai(record)
        except ValueError:
            continue
        if isinstance(message, messages.AssistantMessage):
            if message.text.strip():
                steps.append(TextStep([message.text + "\n"]))
            for call in message.calls:
                parsed, _ = call.parsed()
                shown = short_args(parsed if isinstance(parsed, dict) else None, call.arguments)
                step = calls[call.id] = ToolStep(call.id, call.name or "?", shown)
                steps.append(step)
        elif isinstance(message, ToolMessage) and message.call_id in calls:
            step = calls[message.call_id]
            step.ok = message.result.ok
            step.error = (message.result.error or "").strip().split("\n")[0]
    description = str(args.get("description") or "")
    result = None if answer is None else answer.result
    return TaskBlock(call_id, agent, description, steps=steps, result=result)
