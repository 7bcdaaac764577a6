"""The todo list (issue 30): the ``todo`` tool, the model's plan of several steps, written
whole at each call, and ``/todo`` to show it.

The list belongs to the conversation: it is journaled at each change and read back on
``--continue``/``/resume``, emptied by ``/clear``, and kept in front of the model through a
compaction (``budget.carry``: the newest ``todo`` result stays whole, or the list goes at
the end of the summary). Each change goes on the events as ``TodoChanged``: the app's view
above the prompt and ``tui-agent run`` follow it. The tool changes nothing outside the
session, so it is read-only: never asked about, offered in plan mode too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import tui_agent
from tui_agent import todo
from tui_agent.events import ConversationReset, Event, TodoChanged

DESCRIPTION = (
    "Your todo list for work of 3+ steps, shown to the user. Each call writes the WHOLE "
    "list. Mark an item in_progress before starting it (one at a time), completed right "
    "after it is done."
)

ITEM = {
    "type": "object",
    "properties": {
        "content": {"type": "string"},
        "status": {"type": "string", "enum": list(todo.STATUSES)},
        "activeForm": {"type": "string"},
        "priority": {"type": "string", "enum": ["high", "medium", "low"]},
        "id": {"type": "string"},
    },
    "required": ["status"],
}

EMPTY = "No todo list: the model writes one with the todo tool for work of several steps."


@tui_agent.setup("todo")
def todo_plugin(session: tui_agent.Session) -> None:
    # the list outlives a /reload; read back once, from the journal of a session resumed
    # before this plugin loaded (the app's --continue)
    kept: dict[str, Any] = session.extensions.kept(
        "todo", lambda: {"list": todo.TodoList(), "read": False}
    )
    todos: todo.TodoList = kept["list"]

    def changed(items: Sequence[todo.TodoItem], reason: str) -> None:
        if todos.write(items):
            session.events.emit(TodoChanged(tuple(items), reason))

    def read_back() -> tuple[todo.TodoItem, ...]:
        path = session.conversation.journal.path
        return todo.read_back(path) if path.is_file() else ()

    if not kept["read"]:
        kept["read"] = True
        changed(read_back(), "resume")

    def follow(event: Event) -> None:
        if isinstance(event, ConversationReset):
            if event.reason == "resume":
                changed(read_back(), "resume")
            elif event.reason == "clear":
                changed((), "clear")

    session.on("close", session.events.listen(follow))

    carry = session.conversation.budget.carry

    def keep(messages: list[tui_agent.Message]) -> list[tui_agent.Message]:
        return todo.carry(messages, todos.items)

    carry.append(keep)
    session.on("close", lambda: carry.remove(keep) if keep in carry else None)

    @session.toolbox.add(
        todo.TOOL,
        read_only=True,
        description=DESCRIPTION,
        params={
            "todos": {
                "type": "array",
                "description": "The whole list, in order (it replaces the list)",
                "items": ITEM,
            }
        },
        required=["todos"],
        aliases=list(todo.ALIASES),
    )
    async def todo_tool(args: dict[str, Any]) -> dict[str, Any]:
        try:
            items = todo.parse(args.get("todos"))
        except todo.TodoError as exc:
            return {"error": f"{exc}. The list is unchanged; send the whole list again."}
        if items != todos.items:
            session.conversation.journal.write_record(todo.record(items))
            changed(items, "tool")
        return todo.result(items)

    @session.commands.register("todo", description="Show the model's todo list")
    def todo_command(args: str | None) -> None:
        session.output.say(todo.text(todos.items) if todos else EMPTY)
