"""What the app does with each core event: one handler per event type, looked up by type
(``tui-agent run`` has its own table in ``headless.py``). Imported when the app connects
to its session, after the first frame, with ``connected`` (where its core names come
from). Text and thinking chunks never come here: the app batches them
(``TuiAgentApp._on_core_event``).

This table is the app's one way to hear the session: the chat, the status line and the
tools panel (when it has been shown) are all updated from here; no widget listens to the
toolbox or the commands itself."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from .blocks.task import short_args
from .connected import Note, todo
from .connected import events as ev

if TYPE_CHECKING:
    from ..core.session.session import Session
    from .chat import ChatView
    from .connected import Connection
    from .heap import Heap
    from .prompt import PromptArea
    from .tools_panel import ToolsPanel


class AgentApp(Protocol):
    """What the handlers need of the app (``TuiAgentApp``): this module never imports the
    app (the app imports it, when it connects its session)."""

    heap: Heap

    @property
    def session(self) -> Session: ...

    @property
    def connection(self) -> Connection: ...

    @property
    def prompt(self) -> PromptArea: ...

    @property
    def prompt_ready(self) -> bool: ...

    @property
    def tools_panel(self) -> ToolsPanel | None: ...

    def update_status(self) -> None: ...

    def refresh_bindings(self) -> None: ...

    def refill_prompt(self, text: str) -> None: ...

    def call_after_refresh(self, callback: Callable[[], Any]) -> bool: ...

    async def show_todo(self, summary: str, items: Sequence[tuple[str, str]]) -> None: ...


Handler = Callable[[AgentApp, "ChatView", Any], Awaitable[None]]


async def turn_started(app: AgentApp, chat: ChatView, event: ev.TurnStarted) -> None:
    app.refresh_bindings()  # Cancel comes into the footer
    app.update_status()  # "working…" from the start, not from the first usage report


TASK = "task"  # the tool whose calls run subagents (plugins/task.py): a block of its own


async def call_started(app: AgentApp, chat: ChatView, event: ev.ToolCallStarted) -> None:
    """A subagent's call (``parent``: its ``task`` call) is a line in that call's block,
    never a block of the chat's; a ``task`` call of the session's agent is a task block."""
    real = app.session.toolbox.resolve(event.name)
    if event.parent:
        task = chat.task_block(event.parent)
        if task is not None:
            args = short_args(event.args, event.arguments)
            task.tool_started(event.call_id, event.name, args, event.agent)
            if real == TASK:  # its own subagent's steps go to the same block
                chat.tasks[event.call_id] = task
        return
    if real == TASK:
        given = event.args or {}
        agent = given.get("agent") or given.get("subagent_type") or "general"
        await chat.start_task(event.call_id, str(agent), str(given.get("description") or ""))
        return
    name = event.name if real in (None, event.name) else f"{real} (as {event.name})"
    await chat.start_call(event.call_id, name, event.arguments, event.args)


async def call_finished(app: AgentApp, chat: ChatView, event: ev.ToolCallFinished) -> None:
    if event.parent:
        task = chat.task_block(event.parent)
        if task is not None:
            task.tool_finished(event.call_id, event.result.ok, event.result.error or "")
    else:
        chat.finish_call(event.call_id, event.result, event.elapsed)
    if app.tools_panel is not None:  # every call counts, a subagent's too
        app.tools_panel.call_finished(event.name)


async def subagent_started(app: AgentApp, chat: ChatView, event: ev.SubagentStarted) -> None:
    task = chat.task_block(event.call_id)
    if task is not None and task.call_id == event.call_id:
        task.subagent_started(event.agent, event.description, event.model)
    app.update_status()  # "2 subagents"


async def subagent_event(app: AgentApp, chat: ChatView, event: ev.SubagentEvent) -> None:
    """What the subagent's loop said, in its block: its text and thinking as they stream
    (a reply withdrawn for a retry taken back), its tokens, its notes and retries. A
    grandchild's (wrapped twice) is left out: its calls and its ``task`` call's line in
    the block say what it does."""
    task = chat.task_block(event.call_id)
    inner = event.event
    if task is None:
        return
    if isinstance(inner, ev.TextChunk):
        task.add_text(inner.text)
    elif isinstance(inner, ev.ThinkingChunk):
        task.add_text(inner.text, thinking=True)
    elif isinstance(inner, ev.UsageUpdate):
        task.usage(inner.total_tokens)
    elif isinstance(inner, ev.ReplyFinished):
        task.reply_finished()
    elif isinstance(inner, ev.ReplyWithdrawn):
        task.withdraw()
    elif isinstance(inner, ev.Retrying):
        task.add_note(inner.line(), "warning")
    elif isinstance(inner, Note):
        task.add_note(inner.text, inner.kind)


async def subagent_finished(app: AgentApp, chat: ChatView, event: ev.SubagentFinished) -> None:
    task = chat.task_block(event.call_id)
    if task is not None and task.call_id == event.call_id:
        task.subagent_finished(
            tokens=event.tokens, seconds=event.seconds, error=event.error, cancelled=event.cancelled
        )
    app.update_status()


async def tools_changed(app: AgentApp, chat: ChatView, event: ev.ToolsChanged) -> None:
    if app.tools_panel is not None:  # not shown yet: it lists the toolbox when it is
        app.tools_panel.tools_changed()


async def commands_changed(app: AgentApp, chat: ChatView, event: ev.CommandsChanged) -> None:
    """The palette and Tab completion read the registry when used; an open completion
    menu is worked out again (its commands may have gone)."""
    if app.prompt_ready:  # before, its stand-in has no menu
        app.prompt.commands_changed(app.connection.complete)


async def usage(app: AgentApp, chat: ChatView, event: ev.UsageUpdate) -> None:
    app.update_status()


async def retrying(app: AgentApp, chat: ChatView, event: ev.Retrying) -> None:
    await chat.add_note(event.line())


async def reply_withdrawn(app: AgentApp, chat: ChatView, event: ev.ReplyWithdrawn) -> None:
    """The reply stopped before the model finished: taken off the screen; the retry's note
    (``Retrying`` comes next) stands where it was, and the new reply streams after it."""
    await chat.withdraw_reply()


async def reply_finished(app: AgentApp, chat: ChatView, event: ev.ReplyFinished) -> None:
    chat.reply_done()
    if event.incomplete:
        await chat.end_reply(incomplete=True)
    elif event.finish_reason == "length":
        await chat.add_note(ev.LENGTH_NOTE, kind="warning")


async def turn_finished(app: AgentApp, chat: ChatView, event: ev.TurnFinished) -> None:
    chat.reply_done()
    await chat.end_reply()
    app.update_status()
    app.call_after_refresh(app.heap.settle)


async def conversation_reset(app: AgentApp, chat: ChatView, event: ev.ConversationReset) -> None:
    if event.reason == "resume":
        from .resumed import show_transcript  # Markdown: not before the first frame

        await show_transcript(chat, app.session.conversation)  # what a resume put off waits
    else:
        await chat.clear()


async def compacted(app: AgentApp, chat: ChatView, event: ev.Compacted) -> None:
    app.update_status()  # the context share in the status border (a note says what happened)


async def rewound(app: AgentApp, chat: ChatView, event: ev.Rewound) -> None:
    """/undo, /redo, /rewind: the chat shows the conversation as it now is; a prompt
    taken back comes back into the prompt box for editing (unless something is typed)."""
    done = event.restored
    if done.conversation:
        from .resumed import ChildRuns, show_transcript  # Markdown: not before the first frame

        conversation = app.session.conversation
        await show_transcript(chat, conversation.messages, ChildRuns.of(conversation))
    if done.prompt and done.conversation and done.kind != "redo":
        app.refill_prompt(done.prompt)
    app.update_status()


async def agent_changed(app: AgentApp, chat: ChatView, event: ev.AgentChanged) -> None:
    app.update_status()  # the primary agent (/agent) is on the prompt's border too


async def mode_changed(app: AgentApp, chat: ChatView, event: ev.ModeChanged) -> None:
    app.update_status()  # the mode is on the prompt's border
    app.refresh_bindings()


async def shell_started(app: AgentApp, chat: ChatView, event: ev.ShellStarted) -> None:
    await chat.start_shell(event.command, event.outside)
    app.update_status()
    app.refresh_bindings()  # Cancel (Esc) comes into the footer


async def shell_output(app: AgentApp, chat: ChatView, event: ev.ShellOutput) -> None:
    chat.shell_output(event.text)


async def shell_finished(app: AgentApp, chat: ChatView, event: ev.ShellFinished) -> None:
    chat.finish_shell(event.run)
    app.update_status()
    app.refresh_bindings()


async def todo_changed(app: AgentApp, chat: ChatView, event: ev.TodoChanged) -> None:
    lines = [(item.status, todo.line(item)) for item in event.todos]
    await app.show_todo(todo.summary(event.todos), lines)


async def note(app: AgentApp, chat: ChatView, event: Note) -> None:
    await chat.add_note(event.text, event.kind)


async def attention(app: AgentApp, chat: ChatView, event: ev.Attention) -> None:
    """An approval waits or a turn ended: a desktop notification while the terminal is
    not focused (``notify.py``); a wrong ``[notify]`` setting is said once."""
    from . import notify

    settings = app.session.config.settings
    _, problem = notify.wanted(settings)
    said = app.session.extensions.kept("notify_problem_said", set)
    if problem and problem not in said:
        said.add(problem)
        await chat.add_note(f"{problem} (notifying as by default)", "error")
    notify.attention(app, event.kind, event.message, settings)  # type: ignore[arg-type]


HANDLERS: dict[type, Handler] = {
    ev.TurnStarted: turn_started,
    ev.ToolCallStarted: call_started,
    ev.ToolCallFinished: call_finished,
    ev.ToolsChanged: tools_changed,
    ev.CommandsChanged: commands_changed,
    ev.UsageUpdate: usage,
    ev.Retrying: retrying,
    ev.ReplyWithdrawn: reply_withdrawn,
    ev.ReplyFinished: reply_finished,
    ev.TurnFinished: turn_finished,
    ev.ConversationReset: conversation_reset,
    ev.Compacted: compacted,
    ev.Rewound: rewound,
    ev.ShellStarted: shell_started,
    ev.ShellOutput: shell_output,
    ev.ShellFinished: shell_finished,
    ev.ModeChanged: mode_changed,
    ev.AgentChanged: agent_changed,
    ev.TodoChanged: todo_changed,
    ev.SubagentStarted: subagent_started,
    ev.SubagentEvent: subagent_event,
    ev.SubagentFinished: subagent_finished,
    ev.Attention: attention,
    Note: note,
}
