"""The todo list (issue 30) through the real loop: the model calls ``todo`` (or a peer's
name for it) on the testing kit's server, the list changes, ``TodoChanged`` is heard, the
result is the list; bad writes are error results that leave the list as it was; the list
comes back on ``--continue``, is emptied by ``/clear``, survives a compaction, and
``/todo`` shows it. The tool is not asked about (the permission rules' default) and is
offered in plan mode."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import write

import tui_agent
from tui_agent import AssistantMessage, Result, ToolMessage, UserMessage, create_session
from tui_agent.core.conversation import compaction
from tui_agent.core.conversation.journal import read_records
from tui_agent.core.project.config import user_config_file
from tui_agent.events import Compacted, TodoChanged
from tui_agent.testing import Call, FakeOpenAI, Reply, transcript_problem
from tui_agent.todo import TodoError, TodoItem, carry, parse

PLAN = [
    {"content": "Read the parser", "status": "completed"},
    {"content": "Fix the off-by-one", "status": "in_progress", "activeForm": "Fixing it"},
    {"content": "Run the tests", "status": "pending"},
]
ITEMS = (
    TodoItem("Read the parser", "completed"),
    TodoItem("Fix the off-by-one", "in_progress", active_form="Fixing it"),
    TodoItem("Run the tests", "pending"),
)


def heard(session: Any) -> list[TodoChanged]:
    events: list[Any] = []
    session.events.listen(events.append)
    return events  # filtered by the callers: every event lands here


def todo_events(events: list[Any]) -> list[TodoChanged]:
    return [e for e in events if isinstance(e, TodoChanged)]


def tool_result(server: FakeOpenAI, request: int = 1) -> dict[str, Any]:
    message = server.requests[request]["messages"][-1]
    assert message["role"] == "tool"
    return dict(json.loads(message["content"]))


def journaled_lists(session: Any) -> list[list[dict[str, Any]]]:
    records = read_records(session.conversation.journal.path)
    return [r["todos"] for r in records if r.get("type") == "todo"]


@pytest.mark.real_permissions  # the defaults: a call that asked would be refused headless
async def test_a_todo_call_writes_the_list_and_the_result_is_the_list(project: Path) -> None:
    script = [Reply(calls=[Call("todo", {"todos": PLAN})]), Reply("On it.")]
    async with FakeOpenAI(script) as server:
        session = create_session(project, base_url=server.base_url, model="fake-model")
        events = heard(session)
        assert await session.turn("fix the parser") == "On it."
        assert server.rejected == []
        [changed] = todo_events(events)
        assert changed.todos == ITEMS and changed.reason == "tool"
        result = tool_result(server)
        assert "error" not in result, result
        assert result["todos"] == PLAN
        assert result["summary"] == "Todo 1/3 · ▶ Fixing it"
        assert journaled_lists(session) == [PLAN]
        # the same list again changes nothing: no event, no second record
        await session.toolbox.run("todo", {"todos": PLAN})
        assert len(todo_events(events)) == 1 and len(journaled_lists(session)) == 1
        session.conversation.journal.close()


@pytest.mark.parametrize(
    ("name", "items", "expected"),
    [
        (  # Claude Code
            "TodoWrite",
            [{"content": "Run tests", "status": "in_progress", "activeForm": "Running tests"}],
            TodoItem("Run tests", "in_progress", active_form="Running tests"),
        ),
        (  # opencode
            "todowrite",
            [{"content": "Ship it", "status": "cancelled", "priority": "high", "id": "3"}],
            TodoItem("Ship it", "cancelled", id="3", priority="high"),
        ),
        (
            "todo_write",
            [{"id": "a", "content": "Lint", "status": "pending"}],
            TodoItem("Lint", id="a"),
        ),
        (  # Gemini CLI: description, not content
            "write_todos",
            [{"description": "Write docs", "status": "completed"}],
            TodoItem("Write docs", "completed"),
        ),
    ],
)
async def test_the_peers_names_and_shapes_are_taken(
    project: Path, name: str, items: list[dict[str, Any]], expected: TodoItem
) -> None:
    script = [Reply(calls=[Call(name, {"todos": items})]), Reply("ok")]
    async with FakeOpenAI(script) as server:
        session = create_session(project, base_url=server.base_url, model="fake-model")
        events = heard(session)
        await session.turn("plan")
        [changed] = todo_events(events)
        assert changed.todos == (expected,)
        assert "error" not in tool_result(server)
        session.conversation.journal.close()


@pytest.mark.parametrize(
    ("bad", "said"),
    [
        (
            [{"content": "Read it", "status": "completed"}, {"content": "Ship", "status": "done"}],
            "/todos/1/status",  # the schema's enum: the toolbox answers before the tool runs
        ),
        (
            [{"content": "Read it", "status": "completed"}, {"status": "pending"}],
            "todos[1] has no content",
        ),
        ([{"content": "   ", "status": "pending"}], "todos[0]: content must be a non-empty"),
        ("not a list", "value at `/todos` is not an array"),
        (
            [
                {"content": "a", "status": "pending", "id": "x"},
                {"content": "b", "status": "pending", "id": "x"},
            ],
            "ids must differ: x",
        ),
    ],
)
async def test_a_bad_write_is_an_error_result_and_the_list_stays(
    project: Path, bad: Any, said: str
) -> None:
    script = [
        Reply(calls=[Call("todo", {"todos": PLAN})]),
        Reply(calls=[Call("todo", {"todos": bad})]),
        Reply("ok"),
    ]
    async with FakeOpenAI(script) as server:
        session = create_session(project, base_url=server.base_url, model="fake-model")
        events = heard(session)
        await session.turn("plan")
        error = tool_result(server, 2)["error"]
        assert said in error, error
        assert len(todo_events(events)) == 1  # the first write only
        assert journaled_lists(session) == [PLAN]
        await session.commands.run_line("/todo")
        assert session.output.history[-1].text.splitlines()[1:] == [
            "☑ Read the parser",
            "◐ Fix the off-by-one",
            "☐ Run the tests",
        ]
        session.conversation.journal.close()


async def test_todo_shows_the_list_or_says_there_is_none(project: Path) -> None:
    async with FakeOpenAI([Reply(calls=[Call("todo", {"todos": PLAN})]), Reply("ok")]) as server:
        session = create_session(project, base_url=server.base_url, model="fake-model")
        await session.commands.run_line("/todo")
        assert session.output.history[-1].text.startswith("No todo list")
        await session.turn("plan")
        await session.commands.run_line("/todo")
        assert session.output.history[-1].text == (
            "Todo 1/3 · ▶ Fixing it\n☑ Read the parser\n◐ Fix the off-by-one\n☐ Run the tests"
        )
        session.conversation.journal.close()


async def test_plan_mode_offers_the_todo_tool_and_runs_it(project: Path) -> None:
    async with FakeOpenAI([Reply(calls=[Call("todo", {"todos": PLAN})]), Reply("ok")]) as server:
        session = create_session(project, base_url=server.base_url, model="fake-model")
        session.permissions.set_mode("plan")
        events = heard(session)
        await session.turn("plan it")
        offered = {tool["function"]["name"] for tool in server.requests[0]["tools"]}
        assert "todo" in offered and "write" not in offered
        assert len(todo_events(events)) == 1 and "error" not in tool_result(server)
        session.conversation.journal.close()


async def test_continue_restores_the_list_and_clear_empties_it(project: Path) -> None:
    async with FakeOpenAI([Reply(calls=[Call("todo", {"todos": PLAN})]), Reply("ok")]) as server:
        first = create_session(project, base_url=server.base_url, model="fake-model")
        await first.turn("plan")
        await first.close()

        # the app's --continue: resumed before the plugins load, read back when they do
        again = create_session(project, base_url=server.base_url, load=False)
        assert again.conversation.resume()
        events = heard(again)
        await again.reload()
        [restored] = todo_events(events)
        assert restored.todos == ITEMS and restored.reason == "resume"
        await again.commands.run_line("/todo")
        assert again.output.history[-1].text.startswith("Todo 1/3 · ▶ Fixing it")

        await again.commands.run_line("/clear")
        assert todo_events(events)[-1] == TodoChanged((), "clear")
        # /resume in a running session reads it back again
        assert again.conversation.resume(first.id)
        assert todo_events(events)[-1] == TodoChanged(ITEMS, "resume")
        # a /reload keeps the list (and does not read it back again)
        await again.reload()
        assert len(todo_events(events)) == 3
        await again.commands.run_line("/todo")
        assert again.output.history[-1].text.startswith("Todo 1/3")
        await again.close()


def configure(**settings: Any) -> None:
    lines = [f"{key} = {json.dumps(value)}" for key, value in settings.items()]
    write(user_config_file(), "\n".join(lines) + '\n[permission]\n"*" = "allow"\n')


async def test_a_summary_keeps_the_list_in_front_of_the_model(project: Path) -> None:
    configure(context_window=4096)

    def respond(body: dict[str, Any]) -> Reply:
        first = str(body["messages"][0].get("content", ""))
        if first.startswith("You summarise a conversation"):
            return Reply("SUMMARY: questions were asked and answered.")
        last = body["messages"][-1]
        if last["role"] == "user" and str(last["content"]).startswith("plan"):
            return Reply(calls=[Call("todo", {"todos": PLAN})])
        return Reply("Answered.")

    async with FakeOpenAI(context_limit=4096, responder=respond) as server:
        session = create_session(project, base_url=server.base_url, model="fake-model")
        events = heard(session)
        await session.turn("plan the fix")
        for n in range(12):
            await session.turn(f"question {n}: " + "tell me more about this " * 60)
        compacted = [e for e in events if isinstance(e, Compacted)]
        assert compacted and compacted[-1].summarised
        assert server.overflowed == [] and server.rejected == []
        messages = session.conversation.messages
        assert compaction.is_summary(messages[0])
        calls = [m for m in messages if m["role"] == "tool"]
        assert calls == []  # the todo call was summarised away...
        summary = messages[0].text
        assert "SUMMARY: questions were asked" in summary  # ...and the list follows the summary
        assert summary.endswith("☑ Read the parser\n◐ Fix the off-by-one\n☐ Run the tests")
        sent = server.requests[-1]["messages"]
        assert "◐ Fix the off-by-one" in sent[1]["content"]  # what the model got next
        assert transcript_problem(session.conversation.request("system")) is None
        session.conversation.journal.close()


async def test_pruning_keeps_the_newest_todo_result_whole(project: Path) -> None:
    for n in range(4):
        write(project / f"notes{n}.txt", f"line {n} of the notes\n" * 120)  # ~650 tokens
    configure(context_window=4096)
    long_plan = [
        {"content": f"Step {n}: read notes file {n} and note what it says", "status": "pending"}
        for n in range(8)
    ]

    def respond(body: dict[str, Any]) -> Reply:
        last = body["messages"][-1]
        if last["role"] == "user" and last["content"] == "plan":
            return Reply(calls=[Call("todo", {"todos": long_plan})])
        if last["role"] == "user":
            return Reply(calls=[Call("read", {"path": f"notes{last['content'].split()[-1]}.txt"})])
        return Reply("Read it.")

    async with FakeOpenAI(context_limit=4096, responder=respond) as server:
        session = create_session(project, base_url=server.base_url, model="fake-model")
        events = heard(session)
        await session.turn("plan")
        for n in range(4):
            await session.turn(f"read notes {n}")
        compacted = [e for e in events if isinstance(e, Compacted)]
        assert compacted and all(e.pruned and not e.summarised for e in compacted)
        tools = [m for m in session.conversation.messages if m["role"] == "tool"]
        assert any(m.result.get("pruned") for m in tools)  # old reads were pruned
        kept = tools[0].result  # the todo call's result: given the list back
        assert not kept.get("pruned") and kept["todos"] == long_plan
        assert kept["note"] == "kept whole through a compaction"
        assert transcript_problem(session.conversation.request("system")) is None
        session.conversation.journal.close()


# -- the parts, table-driven -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("todos", "said"),
    [
        ([{"content": "a", "status": "pending", "priority": "urgent"}], 'priority "urgent"'),
        ([{"content": "a", "status": "pending", "id": ["x"]}], "id must be a string"),
        ([{"content": "a", "status": "done"}], 'status "done" is not one of pending,'),
        ([{"content": "a"}], 'todos[0] ("a") has no status'),
        ([{"content": "a", "status": 1}], "status must be a string"),
        (["Run the tests"], "todos[0] is str: each item is an object"),
        ([{"content": "x" * 1001, "status": "pending"}], "content is 1001 characters"),
        ([{"content": "a", "status": "pending"}] * 101, "101 items: at most 100"),
    ],
)
def test_parse_says_what_is_wrong(todos: Any, said: str) -> None:
    with pytest.raises(TodoError) as raised:
        parse(todos)
    assert said in str(raised.value)


def test_parse_takes_ids_as_numbers_and_squeezes_whitespace() -> None:
    [item] = parse([{"content": "  Run\n the   tests ", "status": "pending", "id": 3}])
    assert item == TodoItem("Run the tests", "pending", id="3")
    assert parse([]) == ()


def _conversation(*results: dict[str, Any]) -> list[Any]:
    """A user prompt, then one todo call answered by each of ``results`` in turn."""
    messages: list[Any] = [UserMessage("plan")]
    for n, data in enumerate(results):
        messages.append(AssistantMessage("", calls=[tui_agent.Call(f"c{n}", "todo", "{}")]))
        messages.append(ToolMessage(f"c{n}", Result(data)))
    return messages


def test_carry_gives_a_pruned_result_the_list_back_and_leaves_a_whole_one() -> None:
    whole = _conversation({"todos": PLAN})
    assert carry(whole, ITEMS) is whole
    assert carry(whole, ()) is whole  # no list: nothing to keep
    pruned = _conversation({"todos": PLAN}, {"output": "[pruned …]", "pruned": True})
    kept = carry(pruned, ITEMS)
    assert kept[:-1] == pruned[:-1] and kept[-1].result["todos"] == PLAN
    # a refused write is not the list: the one before it (pruned) is given the list
    refused = _conversation({"output": "[pruned …]", "pruned": True}, {"error": "bad"})
    kept = carry(refused, ITEMS)
    assert kept[2].result["todos"] == PLAN and kept[4] == refused[4]
    assert transcript_problem(kept) is None


def test_carry_puts_the_list_after_a_summary_it_replaced() -> None:
    summary = UserMessage(f"{compaction.SUMMARY_HEADER}\n\nWe planned.", origin="summary")
    [carried] = carry([summary], ITEMS)
    assert compaction.is_summary(carried)
    assert carried.text.endswith("◐ Fix the off-by-one\n☐ Run the tests")
    assert carried.text.startswith(summary.text)
