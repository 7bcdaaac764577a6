"""Tool calls through `tui-agent acp` (issue 32): kinds, titles, locations, statuses; an
edit as a diff; command output; permission asked through session/request_permission,
allowed, rejected (the call fails), allowed for the session; the todo list as the plan;
the permission modes through session/set_mode."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from acp_harness import RecordingClient, acp_session, user_config

from tui_agent.testing import Call, FakeOpenAI, Reply


class Ordered(RecordingClient):
    """Notes which updates had come when each permission request did."""

    asked_after: list[list[str]]

    async def request_permission(self, session_id, tool_call, options, **kwargs):  # type: ignore[no-untyped-def]
        self.asked_after = getattr(self, "asked_after", [])
        self.asked_after.append([u["sessionUpdate"] for _, u in self.updates if "toolCallId" in u])
        return await super().request_permission(session_id, tool_call, options, **kwargs)


def results(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [json.loads(m["content"]) for m in request["messages"] if m["role"] == "tool"]


async def test_an_edit_is_asked_and_shown_as_a_diff(project: Path, model: FakeOpenAI) -> None:
    user_config()  # the real rules: edit asks
    (project / "jam.txt").write_text("plum\ncherry\n")
    model.script += [
        Reply(calls=[Call("edit", {"path": "jam.txt", "old": "plum", "new": "quince"})]),
        Reply("Changed."),
    ]
    async with acp_session(project, model, Ordered("allow_once")) as s:
        answer = await s.prompt("make it quince")
        [call] = s.client.tool_calls().values()
        [asked] = s.client.permissions
        starts = s.client.of("tool_call")
    assert answer == {"stopReason": "end_turn"}
    assert (project / "jam.txt").read_text() == "quince\ncherry\n"
    assert starts[0]["kind"] == "edit" and starts[0]["status"] == "pending"
    assert starts[0]["title"] == "Edit jam.txt"
    assert starts[0]["locations"] == [{"path": str(project / "jam.txt")}]
    assert asked["toolCall"]["toolCallId"] == call["toolCallId"]
    assert s.client.asked_after == [["tool_call"]]  # the call's card, then its question
    assert [o["kind"] for o in asked["options"]] == [
        "allow_once",
        "allow_always",
        "allow_always",
        "reject_once",
    ]
    assert call["status"] == "completed"
    [diff] = call["content"]
    assert diff == {
        "type": "diff",
        "path": str(project / "jam.txt"),
        "oldText": "plum\ncherry\n",
        "newText": "quince\ncherry\n",
    }


async def test_a_rejected_call_fails_and_the_model_hears_it(
    project: Path, model: FakeOpenAI
) -> None:
    user_config()
    model.script += [
        Reply(calls=[Call("write", {"path": "new.txt", "content": "x"})]),
        Reply("Understood."),
    ]
    async with acp_session(project, model, RecordingClient("reject_once")) as s:
        answer = await s.prompt("write it")
        [call] = s.client.tool_calls().values()
    assert answer == {"stopReason": "end_turn"}
    assert not (project / "new.txt").exists()
    assert call["status"] == "failed"
    assert "User denied permission: write" in call["content"][0]["content"]["text"]
    assert results(model.requests[1])[0]["error"] == "User denied permission: write"


async def test_allowed_for_the_session_is_not_asked_again(project: Path, model: FakeOpenAI) -> None:
    user_config()
    model.script += [
        Reply(calls=[Call("write", {"path": "a.txt", "content": "1"})]),
        Reply(calls=[Call("write", {"path": "b.txt", "content": "2"})]),
        Reply("Both."),
    ]

    def session_option(params: dict[str, Any]) -> str:
        return "allow_always"  # the first allow_always: this session

    async with acp_session(project, model, RecordingClient(session_option)) as s:
        await s.prompt("write two files")
        asked = s.client.permissions
        calls = s.client.tool_calls()
    assert len(asked) == 1
    assert [c["status"] for c in calls.values()] == ["completed", "completed"]
    assert (project / "b.txt").read_text() == "2"
    config = (project / ".tui-agent" / "config.toml").exists()
    assert not config  # this session only: nothing saved


async def test_execute_shows_its_output(project: Path, model: FakeOpenAI) -> None:
    model.script += [
        Reply(calls=[Call("execute", {"command": "echo apricot; exit 3"})]),
        Reply("It failed."),
    ]
    async with acp_session(project, model) as s:
        await s.prompt("run it")
        [call] = s.client.tool_calls().values()
    assert call["kind"] == "execute"
    assert call["title"] == "Run `echo apricot; exit 3`"
    text = call["content"][0]["content"]["text"]
    assert "apricot" in text and "exit status 3" in text


async def test_kinds_of_the_bundled_tools(project: Path, model: FakeOpenAI) -> None:
    (project / "notes.md").write_text("one\ntwo\n")
    model.script += [
        Reply(
            calls=[
                Call("read", {"path": "notes.md", "offset": 2}),
                Call("grep", {"pattern": "two"}),
                Call("glob", {"pattern": "*.md"}),
            ]
        ),
        Reply("Read."),
    ]
    async with acp_session(project, model) as s:
        await s.prompt("look")
        calls = list(s.client.tool_calls().values())
    assert [(c["kind"], c["status"]) for c in calls] == [
        ("read", "completed"),
        ("search", "completed"),
        ("search", "completed"),
    ]
    assert calls[0]["title"] == "Read notes.md"
    assert calls[0]["locations"] == [{"path": str(project / "notes.md"), "line": 2}]
    assert calls[0]["rawOutput"]["content"].endswith("two")


async def test_the_todo_list_is_the_plan(project: Path, model: FakeOpenAI) -> None:
    todos = [
        {"content": "Read the code", "status": "completed"},
        {"content": "Fix the bug", "status": "in_progress", "priority": "high"},
        {"content": "Run the tests", "status": "pending"},
    ]
    model.script += [Reply(calls=[Call("todo", {"todos": todos})]), Reply("Planned.")]
    async with acp_session(project, model) as s:
        await s.prompt("plan it")
        [plan] = s.client.of("plan")
        [call] = s.client.tool_calls().values()
    assert plan["entries"] == [
        {"content": "Read the code", "status": "completed", "priority": "medium"},
        {"content": "Fix the bug", "status": "in_progress", "priority": "high"},
        {"content": "Run the tests", "status": "pending", "priority": "medium"},
    ]
    assert call["kind"] == "think"


async def test_modes_switch_and_plan_mode_holds(project: Path, model: FakeOpenAI) -> None:
    user_config()
    model.script += [
        Reply(calls=[Call("write", {"path": "plan.txt", "content": "x"})]),
        Reply("I only plan."),
        Reply(calls=[Call("write", {"path": "auto.txt", "content": "y"})]),
        Reply("Written."),
    ]
    async with acp_session(project, model, RecordingClient("allow_once")) as s:
        await s.conn.set_session_mode(session_id=s.session_id, mode_id="plan")
        await s.client.wait_for(lambda: bool(s.client.of("current_mode_update")), "the mode")
        await s.prompt("write plan.txt")
        planned = dict(s.client.tool_calls())
        await s.conn.set_session_mode(session_id=s.session_id, mode_id="auto-edit")
        await s.prompt("write auto.txt")
        asked = s.client.permissions
        modes = [u["currentModeId"] for u in s.client.of("current_mode_update")]
    assert modes == ["plan", "auto-edit"]
    [refused] = planned.values()
    assert refused["status"] == "failed"
    assert not (project / "plan.txt").exists()
    assert "plan mode" in model.requests[0]["messages"][0]["content"]
    assert "write" not in [t["function"]["name"] for t in model.requests[0]["tools"]]
    assert (project / "auto.txt").read_text() == "y"
    assert asked == []  # auto-edit: an edit inside the project is not asked


async def test_a_session_starts_allow_all_with_yes(project: Path, model: FakeOpenAI) -> None:
    user_config()
    model.script += [Reply(calls=[Call("write", {"path": "y.txt", "content": "y"})]), Reply("")]
    async with acp_session(project, model, extra=("--yes",)) as s:
        await s.prompt("write")
        mode = s.new["modes"]["currentModeId"]
        asked = s.client.permissions
    assert mode == "allow-all"
    assert asked == []
    assert (project / "y.txt").exists()


async def test_a_deny_rule_holds_and_nobody_is_asked(project: Path, model: FakeOpenAI) -> None:
    user_config('[permission]\nwrite = "deny"\n')
    model.script += [Reply(calls=[Call("write", {"path": "no.txt", "content": "x"})]), Reply("")]
    async with acp_session(project, model, RecordingClient("allow_once")) as s:
        await s.prompt("write no.txt")
        [call] = s.client.tool_calls().values()
        asked = s.client.permissions
    assert asked == []
    assert call["status"] == "failed"
    assert not (project / "no.txt").exists()
    assert "write" not in [t["function"]["name"] for t in model.requests[0]["tools"]]


async def test_a_model_that_fails_is_an_error_answer(project: Path, model: FakeOpenAI) -> None:
    import acp

    user_config('retry_attempts = 1\n[permission]\n"*" = "allow"\n')
    model.script += [Reply(status=500, error="the model is down")]
    async with acp_session(project, model) as s:
        try:
            await s.prompt("hello")
        except acp.RequestError as exc:
            failed = exc
        else:
            raise AssertionError("a failed turn was answered end_turn")
        model.script += [Reply("back")]
        again = await s.prompt("hello again")
    assert failed.code == -32603
    assert "the model is down" in str(failed.data)
    assert again == {"stopReason": "end_turn"}


async def test_a_subagents_calls_are_shown_and_named(project: Path, model: FakeOpenAI) -> None:
    (project / "a.txt").write_text("alpha\n")
    task = {"description": "find the answer", "prompt": "read a.txt", "agent": "explore"}
    model.script += [Reply(calls=[Call("task", task)]), Reply("It says alpha.")]
    model.for_agent(
        "explore", [Reply(calls=[Call("read", {"path": "a.txt"})]), Reply("a.txt: alpha")]
    )
    async with acp_session(project, model) as s:
        await s.prompt("what does a.txt say?")
        calls = list(s.client.tool_calls().values())
        thoughts = "".join(t["content"]["text"] for t in s.client.of("agent_thought_chunk"))
    [outer, inner] = sorted(calls, key=lambda c: c["title"].startswith("["))
    assert outer["title"] == "Task: find the answer" and outer["kind"] == "think"
    assert inner["title"] == "[explore] Read a.txt" and inner["status"] == "completed"
    assert "a.txt: alpha" in outer["content"][0]["content"]["text"]
    assert "[explore] started: find the answer" in thoughts
    assert s.client.text() == "It says alpha."
