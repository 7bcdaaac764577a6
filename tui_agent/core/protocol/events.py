"""What the session tells the UI (events out) and asks it (approvals, as awaitables).

One typed stream: the agent's turn, every tool call (whoever made it), notes, and changes
of the toolbox and the commands. The UI, the headless runner and plugins subscribe with
``session.events.listen``; neither the agent nor the toolbox touches a widget.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ..util.listeners import Listeners
from .output import Note
from .result import Result

if TYPE_CHECKING:
    from .records import Checkpoint, Restored, ShellRun, TodoItem


@dataclass(frozen=True)
class TurnStarted:
    prompt: str


@dataclass(frozen=True)
class TextChunk:
    text: str


@dataclass(frozen=True)
class ThinkingChunk:
    text: str


@dataclass(frozen=True)
class ToolCallStarted:
    """``parent``: the id of the ``task`` call whose subagent made this call ("" for the
    session's own agent); ``agent`` its name."""

    call_id: str
    name: str
    arguments: str
    args: dict[str, Any] | None
    parent: str = ""
    agent: str = "main"


@dataclass(frozen=True)
class ToolCallFinished:
    call_id: str
    name: str
    result: Result
    elapsed: float
    parent: str = ""
    agent: str = "main"


@dataclass(frozen=True)
class UsageUpdate:
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    cached_tokens: int = 0  # of prompt_tokens, from the server's cache


@dataclass(frozen=True)
class TurnFinished:
    reply: str
    cancelled: bool = False
    error: str | None = None
    steps: int = 0


LENGTH_NOTE = "the model hit its output limit (finish_reason: length); the reply may be cut short"


@dataclass(frozen=True)
class ReplyFinished:
    """One streamed reply ended. ``finish_reason`` is the server's ("stop", "length",
    "tool_calls"…; None with ``[DONE]`` alone or a provider that does not say);
    ``incomplete``: the stream stopped before the model finished and the text that arrived
    was kept (the turn ends with the error)."""

    finish_reason: str | None = None
    incomplete: bool = False


@dataclass(frozen=True)
class Retrying:
    """The request failed in a way a retry can mend (429, 5xx, a dropped connection, a
    stream cut before the model finished) and is sent again in ``delay`` seconds:
    ``attempt`` is the one that failed, ``attempts`` the most there will be
    (``retry_attempts``)."""

    attempt: int
    delay: float
    reason: str
    attempts: int = 0

    def line(self) -> str:
        """What the app and ``tui-agent run`` say: "retrying (2 of 10) in 1.3s: why"."""
        count = f"{self.attempt + 1} of {self.attempts}" if self.attempts else f"{self.attempt + 1}"
        return f"retrying ({count}) in {self.delay:.1f}s: {self.reason}"


@dataclass(frozen=True)
class ReplyWithdrawn:
    """The reply streaming now stopped before the model finished (a cut stream, a dropped
    connection, a malformed chunk, a stall, an error chunk) and is taken back: its text
    and thinking, shown as they arrived, are not part of the conversation, and a retry
    (``Retrying`` follows) streams the whole reply again. Nothing of it ran: a reply's
    tool calls run only once it has finished."""

    reason: str
    attempt: int


@dataclass(frozen=True)
class ConversationReset:
    """The conversation was cleared, compacted or replaced by a resumed one. After a
    ``"clear"``, ``ended`` is the id of the conversation that ended and ``ended_messages``
    its messages (Claude's ``SessionEnd`` with reason ``clear``)."""

    reason: str
    ended: str = ""
    ended_messages: tuple[Any, ...] = ()


@dataclass(frozen=True)
class Compacted:
    """The conversation was made smaller to fit the context window (``reason``: "auto"
    before a request, "overflow" after the server refused one, "command" for
    ``/compact``). Token counts are estimates; ``pruned`` tool results were replaced by a
    stub, ``summarised`` messages by a summary. The journal keeps the messages it replaced."""

    reason: str
    before: int
    after: int
    pruned: int = 0
    summarised: int = 0


@dataclass(frozen=True)
class CheckpointTaken:
    """A turn ended and its checkpoint is complete (``checkpoint.snapshots`` is None for a
    turn that ran no tool: nothing to restore but its messages)."""

    checkpoint: Checkpoint


@dataclass(frozen=True)
class Rewound:
    """``/undo``, ``/redo`` or ``/rewind`` (or ``session.checkpoints``) restored files
    and/or took turns out of the conversation (put them back, for redo)."""

    restored: Restored


@dataclass(frozen=True)
class ShellStarted:
    """A ``!command`` the user typed started (``session.shell``): no model, no approval;
    ``outside``: a ``!!command``, outside the sandbox."""

    command: str
    outside: bool = False


@dataclass(frozen=True)
class ShellOutput:
    """Output of the running ``!command`` as it arrives (stdout and stderr merged)."""

    text: str


@dataclass(frozen=True)
class ShellFinished:
    """The ``!command`` ended (or was cancelled); ``run.output`` is what the conversation
    got (the end of a long output), ``run.exit_status``, ``run.cancelled``."""

    run: ShellRun


@dataclass(frozen=True)
class ToolsChanged:
    """The session's toolbox changed: ``kind`` "tools" (a tool added, replaced or removed)
    or "hooks" (a hook added); ``name`` is the tool's (``"*"`` for a global hook), ``""``
    when everything changed at once (``reload`` clears the toolbox, a failed setup is
    rolled back). Read ``session.toolbox`` for what it holds now."""

    kind: Literal["tools", "hooks"]
    name: str = ""


@dataclass(frozen=True)
class CommandsChanged:
    """A slash command was registered, replaced or removed, or all were cleared
    (``reload``). Read ``session.commands`` for what it holds now."""


@dataclass(frozen=True)
class ModeChanged:
    """The permission mode changed (``session.permissions.mode``: ask, auto-edit, plan or
    allow-all)."""

    mode: str


@dataclass(frozen=True)
class Steered:
    """Text the user sent into the running turn (``session.steer``) reached the model.
    ``next_turn`` False: recorded as a user message at a step boundary, after the tool
    results and before the next request; True: the reply it came during had no tool
    calls, so it is the prompt of the turn that starts now (its ``TurnStarted`` follows).
    ``prompt`` is what was typed, ``content`` what the model got."""

    prompt: str
    content: str
    next_turn: bool = False


@dataclass(frozen=True)
class TodoChanged:
    """The todo list changed (``conversation/todo.py``): ``todos`` is the whole list now
    (empty: there is none). ``reason``: "tool" (the model wrote it), "resume" (read back
    from the journal), "clear" (the conversation was cleared)."""

    todos: tuple[TodoItem, ...]
    reason: str = "tool"

    def to_dict(self) -> dict[str, Any]:
        return {"todos": [item.to_dict() for item in self.todos], "reason": self.reason}


@dataclass(frozen=True)
class AgentChanged:
    """The session's own agent is now ``agent`` (a primary agent made so with ``/agent``;
    "" for none: the session's prompt, tools and model as configured)."""

    agent: str


@dataclass(frozen=True)
class SubagentStarted:
    """A ``task`` call (``call_id``) started the subagent ``agent`` on ``description``."""

    call_id: str
    agent: str
    description: str
    model: str = ""


@dataclass(frozen=True)
class SubagentEvent:
    """What a subagent's own loop said (its ``TextChunk``, ``ThinkingChunk``,
    ``UsageUpdate``, ``Retrying``, notes…), for the ``task`` call ``call_id``. Its tool
    calls come as ``ToolCallStarted``/``ToolCallFinished`` with ``parent`` = ``call_id``."""

    call_id: str
    agent: str
    event: Any


@dataclass(frozen=True)
class SubagentFinished:
    """The subagent of ``call_id`` ended: its last reply, or the error or cancel that
    ended it; its tokens (all its requests) and seconds."""

    call_id: str
    agent: str
    reply: str = ""
    error: str | None = None
    cancelled: bool = False
    tokens: int = 0
    seconds: float = 0.0
    steps: int = 0


@dataclass(frozen=True)
class Attention:
    """The person is needed where a person is (an interactive frontend): ``kind``
    "approval" (a call waits for their decision; ``tool`` names it) or "done" (a turn
    ended and the prompt waits). The app notifies the desktop while unfocused; the
    ``Notification`` command hooks run."""

    kind: str
    message: str
    tool: str = ""


Event = (
    TurnStarted
    | TextChunk
    | ThinkingChunk
    | ToolCallStarted
    | ToolCallFinished
    | UsageUpdate
    | TurnFinished
    | ReplyFinished
    | Retrying
    | ReplyWithdrawn
    | ConversationReset
    | Compacted
    | CheckpointTaken
    | Rewound
    | ShellStarted
    | ShellOutput
    | ShellFinished
    | ToolsChanged
    | CommandsChanged
    | ModeChanged
    | Steered
    | TodoChanged
    | AgentChanged
    | SubagentStarted
    | SubagentEvent
    | SubagentFinished
    | Attention
    | Note
)


class EventBus:
    """The session's events: ``listen(fn)`` gets every one (``fn(event)``), in order."""

    def __init__(self) -> None:
        self._listeners: Listeners[Event] = Listeners("event")

    def listen(self, listener: Callable[[Event], None]) -> Callable[[], None]:
        return self._listeners.add(listener)

    def emit(self, event: Event) -> None:
        self._listeners.emit(event)
