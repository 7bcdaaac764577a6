"""Public: the events on ``session.events``, for plugins and embedders that follow a session.

``session.events.listen(fn)`` calls ``fn(event)`` for each, in order, and returns the
function that stops listening; match on the type::

    def follow(event: tui_agent.events.Event) -> None:
        if isinstance(event, tui_agent.events.ToolCallFinished):
            ...
"""

from .core.protocol.events import (
    AgentChanged,
    Attention,
    CheckpointTaken,
    CommandsChanged,
    Compacted,
    ConversationReset,
    Event,
    EventBus,
    ModeChanged,
    ReplyFinished,
    ReplyWithdrawn,
    Retrying,
    Rewound,
    ShellFinished,
    ShellOutput,
    ShellStarted,
    Steered,
    SubagentEvent,
    SubagentFinished,
    SubagentStarted,
    TextChunk,
    ThinkingChunk,
    TodoChanged,
    ToolCallFinished,
    ToolCallStarted,
    ToolsChanged,
    TurnFinished,
    TurnStarted,
    UsageUpdate,
)
from .core.protocol.output import Note

__all__ = [
    "AgentChanged",
    "Attention",
    "CheckpointTaken",
    "CommandsChanged",
    "Compacted",
    "ConversationReset",
    "Event",
    "EventBus",
    "ModeChanged",
    "Note",
    "ReplyFinished",
    "ReplyWithdrawn",
    "Retrying",
    "Rewound",
    "ShellFinished",
    "ShellOutput",
    "ShellStarted",
    "Steered",
    "SubagentEvent",
    "SubagentFinished",
    "SubagentStarted",
    "TextChunk",
    "ThinkingChunk",
    "TodoChanged",
    "ToolCallFinished",
    "ToolCallStarted",
    "ToolsChanged",
    "TurnFinished",
    "TurnStarted",
    "UsageUpdate",
]
