"""Public: the todo list (``plugins/todo.py`` keeps one per session with the ``todo`` tool):
its items, reading a write, the list as text, its journal record and how a compaction
keeps it. ``TodoChanged`` (``tui_agent.events``) says each change."""

from .core.conversation.todo import (
    ALIASES,
    MARKS,
    STATUSES,
    TOOL,
    TodoError,
    TodoList,
    carry,
    line,
    parse,
    read_back,
    record,
    result,
    summary,
    text,
)
from .core.protocol.records import TodoItem

__all__ = [
    "ALIASES",
    "MARKS",
    "STATUSES",
    "TOOL",
    "TodoError",
    "TodoItem",
    "TodoList",
    "carry",
    "line",
    "parse",
    "read_back",
    "record",
    "result",
    "summary",
    "text",
]
