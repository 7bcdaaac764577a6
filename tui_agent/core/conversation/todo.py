"""The todo list the model keeps with the ``todo`` tool: the whole list at each write.

What is here: reading a write (``parse``: the shapes of Claude Code's ``TodoWrite``,
opencode's ``todowrite``, Gemini's ``write_todos`` and Qwen's ``todo_write``, with errors
the model can act on), the list as text (``summary``, ``lines``), its journal record
(written at each change, read back on resume: ``read_back``) and what a compaction does
to keep it in front of the model (``carry``). The state itself is a ``TodoList``; the
bundled plugin ``plugins/todo.py`` holds one per session and says each change on the
events (``TodoChanged``).

Several items may be ``in_progress`` at once (children of a ``task`` call run side by
side): the tool's description asks for one at a time, the check does not refuse more.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..protocol.messages import AssistantMessage, Message, ToolMessage, UserMessage
from ..protocol.records import TODO_STATUSES, TodoItem
from ..protocol.result import Result
from . import journal as journal_module
from .compaction import is_summary

log = logging.getLogger("tui_agent.todo")

TOOL = "todo"
ALIASES = ("todowrite", "TodoWrite", "todo_write", "write_todos")
NAMES = frozenset({TOOL, *ALIASES})
STATUSES = TODO_STATUSES
PRIORITIES = ("high", "medium", "low")
MARKS = {"pending": "☐", "in_progress": "◐", "completed": "☑", "cancelled": "☒"}
MAX_ITEMS = 100
MAX_CONTENT = 1000  # characters of one item
RECORD = "todo"  # the journal record's "type"
_PREFIX = '{"type": "todo"'
EXAMPLE = '{"content": "Run the tests", "status": "pending"}'


class TodoError(ValueError):
    """A write the list does not take; the message says which item and what to send."""


def _text(raw: Mapping[str, Any], *keys: str) -> Any:
    return next((raw[key] for key in keys if raw.get(key) is not None), None)


def _item(index: int, raw: Any) -> TodoItem:
    where = f"todos[{index}]"
    if not isinstance(raw, Mapping):
        raise TodoError(f"{where} is {type(raw).__name__}: each item is an object, e.g. {EXAMPLE}")
    content = _text(raw, "content", "description")  # Gemini's write_todos: description
    if content is None:
        raise TodoError(f"{where} has no content: say what to do, e.g. {EXAMPLE}")
    if not isinstance(content, str) or not content.strip():
        raise TodoError(f"{where}: content must be a non-empty string, e.g. {EXAMPLE}")
    content = " ".join(content.split())
    if len(content) > MAX_CONTENT:
        raise TodoError(
            f"{where}: content is {len(content)} characters; keep it under {MAX_CONTENT}"
        )
    named = f'{where} ("{content[:60]}")'
    status = raw.get("status")
    if status is None:
        raise TodoError(f"{named} has no status: one of {', '.join(STATUSES)}")
    if not isinstance(status, str):
        raise TodoError(f"{named}: status must be a string: one of {', '.join(STATUSES)}")
    status = status.strip().lower()
    if status not in STATUSES:
        raise TodoError(
            f'{named}: status "{raw.get("status")}" is not one of {", ".join(STATUSES)}'
        )
    ident = raw.get("id")
    if isinstance(ident, int) and not isinstance(ident, bool):
        ident = str(ident)
    if ident is not None and not isinstance(ident, str):
        raise TodoError(f"{named}: id must be a string")
    priority = raw.get("priority")
    if priority is not None:
        if not isinstance(priority, str) or priority.strip().lower() not in PRIORITIES:
            raise TodoError(f'{named}: priority "{priority}" is not one of {", ".join(PRIORITIES)}')
        priority = priority.strip().lower()
    active = _text(raw, "activeForm", "active_form")
    if active is not None and not isinstance(active, str):
        raise TodoError(f"{named}: activeForm must be a string")
    return TodoItem(content, status, ident or None, priority, (active or "").strip() or None)


def parse(todos: Any) -> tuple[TodoItem, ...]:
    """The list a write gives (``todos``: a list of items as any of the peers send them).
    Raises ``TodoError`` saying what is wrong; an empty list is a list (it clears the
    view)."""
    if not isinstance(todos, list):
        raise TodoError(
            f"todos must be a list of items, e.g. [{EXAMPLE}], not {type(todos).__name__}"
        )
    if len(todos) > MAX_ITEMS:
        raise TodoError(f"{len(todos)} items: at most {MAX_ITEMS}; merge the small ones")
    items = tuple(_item(index, raw) for index, raw in enumerate(todos))
    ids = [item.id for item in items if item.id is not None]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise TodoError(f"ids must differ: {', '.join(twice)} used more than once")
    return items


class TodoList:
    """The list now (``items``); ``write`` replaces it whole."""

    def __init__(self, items: Iterable[TodoItem] = ()) -> None:
        self.items: tuple[TodoItem, ...] = tuple(items)

    def write(self, items: Iterable[TodoItem]) -> bool:
        """The list becomes ``items``; whether that changed it."""
        new = tuple(items)
        changed = new != self.items
        self.items = new
        return changed

    def __bool__(self) -> bool:
        return bool(self.items)

    def __len__(self) -> int:
        return len(self.items)


# -- as text --------------------------------------------------------------------------------


def progress(items: Sequence[TodoItem]) -> tuple[int, int]:
    """``(closed, total)``: items completed or cancelled, of all."""
    closed = sum(item.status in ("completed", "cancelled") for item in items)
    return closed, len(items)


def current(items: Sequence[TodoItem]) -> TodoItem | None:
    """The first item in progress, or None."""
    return next((item for item in items if item.status == "in_progress"), None)


def doing(item: TodoItem) -> str:
    """What an item in progress is called while it runs: its ``activeForm`` if it has one."""
    return item.active_form or item.content


def summary(items: Sequence[TodoItem]) -> str:
    """One line: ``Todo 2/5 · ▶ Running the tests`` (what is in progress, else what is
    next, else that all is done)."""
    if not items:
        return "Todo: empty"
    closed, total = progress(items)
    now = current(items)
    if now is not None:
        tail = f"▶ {doing(now)}"
    else:
        upcoming = next((item for item in items if item.status == "pending"), None)
        tail = f"next: {upcoming.content}" if upcoming is not None else "all done"
    return f"Todo {closed}/{total} · {tail}"


def line(item: TodoItem) -> str:
    """``◐ Run the tests`` (with a ``!`` for a high priority)."""
    flag = " !" if item.priority == "high" else ""
    return f"{MARKS.get(item.status, '?')} {item.content}{flag}"


def text(items: Sequence[TodoItem]) -> str:
    """The summary line and one line per item."""
    return "\n".join([summary(items), *(line(item) for item in items)])


def result(items: Sequence[TodoItem], note: str = "") -> dict[str, Any]:
    """What the ``todo`` tool answers: the list and its summary line."""
    data: dict[str, Any] = {"summary": summary(items), "todos": [i.to_dict() for i in items]}
    if note:
        data["note"] = note
    return data


# -- the journal ----------------------------------------------------------------------------


def record(items: Sequence[TodoItem]) -> dict[str, Any]:
    """The journal record of the list now (``"type"`` first: ``read_back`` finds it by
    that prefix)."""
    return {"type": RECORD, "todos": [item.to_dict() for item in items]}


def read_back(path: Path) -> tuple[TodoItem, ...]:
    """The list the journal at ``path`` last recorded (empty when none, or when the record
    cannot be read: logged)."""
    for number, raw in reversed(journal_module.read_lines(path)):
        if not raw.startswith(_PREFIX):
            continue
        try:
            found = json.loads(raw)
            return parse(found.get("todos", []) if isinstance(found, dict) else [])
        except (ValueError, RecursionError):
            log.warning("unreadable todo list at line %d of %s", number, path)
            return ()
    return ()


# -- compaction -----------------------------------------------------------------------------

CARRIED = "The todo list now (the todo tool writes it whole; write it again to change it):"


def carry(messages: list[Message], items: Sequence[TodoItem]) -> list[Message]:
    """``messages`` (a compaction's result) changed so the model still sees ``items``: the
    newest ``todo`` result stays as it is if it is whole; a pruned one is given the list
    back; one summarised away leaves the list at the end of the summary. A valid
    transcript stays one (nothing is added or moved)."""
    if not items:
        return messages
    calls = {
        call.id: call.name
        for message in messages
        if isinstance(message, AssistantMessage)
        for call in message.calls
    }
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if not isinstance(message, ToolMessage) or calls.get(message.call_id) not in NAMES:
            continue
        if not message.result.ok:
            continue  # a refused write: the one before it holds
        if not message.result.get("pruned"):
            return messages
        kept = Result(result(items, "kept whole through a compaction"))
        return [*messages[:index], ToolMessage(message.call_id, kept), *messages[index + 1 :]]
    for index, message in enumerate(messages):
        if is_summary(message):
            block = "\n".join([CARRIED, *(line(item) for item in items)])
            carried = UserMessage(f"{message.text}\n\n{block}", origin="summary")
            return [*messages[:index], carried, *messages[index + 1 :]]
    return messages
