"""Subagents (issue 30) through the real loop and client against the testing kit's server:
a ``task`` call runs an agent from its file (Claude Code's example verbatim), with a fresh
transcript and only its tools; calls in one reply overlap; a cancel leaves a valid
transcript and no running child; a child's denied approval is an error result; the
child's run is journaled with its call."""

from __future__ import annotations

import asyncio
import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES

from tui_agent import Decision, Session, create_session
from tui_agent.core.delegation import child_records
from tui_agent.events import SubagentFinished, SubagentStarted, ToolCallFinished, ToolCallStarted
from tui_agent.testing import Call, FakeOpenAI, Person, Reply, agent_of, transcript_problem

REVIEWER = FIXTURES / "agents" / "claude" / "code-reviewer.md"


def session_for(project: Path, server: FakeOpenAI, **flags: Any) -> Session:
    return create_session(project, base_url=server.base_url, model="m", trust=True, **flags)


def with_reviewer(project: Path) -> None:
    folder = project / ".claude" / "agents"
    folder.mkdir(parents=True)
    shutil.copy(REVIEWER, folder / "code-reviewer.md")


def offered(body: dict[str, Any]) -> list[str]:
    return sorted(tool["function"]["name"] for tool in body.get("tools") or [])


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [json.loads(m["content"]) for m in body["messages"] if m["role"] == "tool"]


def task(
    prompt: str, agent: str = "general", description: str = "a job", id: str | None = None
) -> Call:
    return Call("task", {"description": description, "prompt": prompt, "agent": agent}, id=id)


async def test_claude_code_reviewer_runs_with_exactly_its_tools(project: Path) -> None:
    with_reviewer(project)
    (project / "app.py").write_text("print('hi')\n")
    parent = [Reply(calls=[task("Review app.py", "code-reviewer")]), Reply("Reviewed.")]
    with FakeOpenAI(parent) as server:
        server.for_agent(
            "code-reviewer",
            [
                Reply(calls=[Call("read", {"path": "app.py"})]),
                Reply("app.py: fine, one print."),
            ],
        )
        session = session_for(project, server)
        started: list[Any] = []
        kinds = (SubagentStarted, ToolCallStarted)
        session.events.listen(lambda e: started.append(e) if isinstance(e, kinds) else None)
        reply = await session.turn("review my change")
    assert reply == "Reviewed."
    children = [body for body in server.requests if agent_of(body) == "code-reviewer"]
    assert len(children) == 2
    first = children[0]
    # Read, Grep, Glob, Bash: Claude's names for read, grep, glob and execute
    assert offered(first) == ["execute", "glob", "grep", "read"]
    system = first["messages"][0]
    assert system["role"] == "system"
    assert "You are a senior code reviewer" in system["content"]  # the file's body
    assert [m["role"] for m in first["messages"]] == ["system", "user"]  # a fresh transcript
    assert first["messages"][1]["content"] == "Review app.py"
    assert "review my change" not in json.dumps(first["messages"])
    # the child's read ran, under the task call
    [read] = [e for e in started if isinstance(e, ToolCallStarted) and e.name == "read"]
    [task_call] = [e for e in started if isinstance(e, ToolCallStarted) and e.name == "task"]
    assert read.parent == task_call.call_id and read.agent == "code-reviewer"
    [read_result] = tool_results(children[1])
    assert "print('hi')" in read_result["content"]
    # the parent got the child's final message, with its tokens and time
    [result] = tool_results(server.requests[-1])
    assert result["output"] == "app.py: fine, one print."
    assert result["agent"] == "code-reviewer" and result["tokens"] == 30 and result["steps"] == 2
    assert result["seconds"] >= 0
    assert transcript_problem(server.requests[-1]["messages"]) is None


async def test_a_call_outside_the_agents_tools_is_refused(project: Path) -> None:
    with_reviewer(project)
    with FakeOpenAI([Reply(calls=[task("Fix it", "code-reviewer")]), Reply("ok")]) as server:
        server.for_agent(
            "code-reviewer",
            [Reply(calls=[Call("write", {"path": "x.txt", "content": "no"})]), Reply("could not")],
        )
        session = session_for(project, server)
        await session.turn("go")
    assert not (project / "x.txt").exists()
    child = [b for b in server.requests if agent_of(b) == "code-reviewer"][-1]
    [refused] = tool_results(child)
    assert 'tool "write" is not available to the agent code-reviewer' in refused["error"]


async def test_two_task_calls_in_one_reply_run_at_the_same_time(project: Path) -> None:
    parent = Reply(calls=[task("find A", description="A"), task("find B", description="B")])
    with FakeOpenAI([parent, Reply("both done")]) as server:
        server.when("find A", [Reply("A is in a.py", pause_after=0, pause=1.0)])
        server.when("find B", [Reply("B is in b.py", pause_after=0, pause=1.0)])
        session = session_for(project, server)
        began = time.monotonic()
        assert await session.turn("find both") == "both done"
        took = time.monotonic() - began
    assert took < 1.8, f"the two children took {took:.2f} s: they did not overlap"
    results = tool_results(server.requests[-1])
    assert [r["output"] for r in results] == ["A is in a.py", "B is in b.py"]  # call order


async def test_the_limit_runs_them_one_at_a_time(project: Path, user_config_dir: Path) -> None:
    (user_config_dir / "config.toml").write_text('max_subagents = 1\n[permission]\n"*" = "allow"\n')
    parent = Reply(calls=[task("find A"), task("find B")])
    with FakeOpenAI([parent, Reply("both done")]) as server:
        server.when("find A", [Reply("A", pause_after=0, pause=0.6)])
        server.when("find B", [Reply("B", pause_after=0, pause=0.6)])
        session = session_for(project, server)
        began = time.monotonic()
        await session.turn("go")
        assert time.monotonic() - began >= 1.2


async def test_cancel_during_two_children_leaves_a_valid_transcript(project: Path) -> None:
    parent = Reply(calls=[task("slow A"), task("slow B")])
    with FakeOpenAI([parent]) as server:
        server.when("slow A", [Reply("A", pause_after=0, pause=5)])
        server.when("slow B", [Reply("B", pause_after=0, pause=5)])
        session = session_for(project, server)
        finished: list[SubagentFinished] = []
        session.events.listen(
            lambda e: finished.append(e) if isinstance(e, SubagentFinished) else None
        )
        turn = asyncio.create_task(session.turn("go"))
        for _ in range(200):
            await asyncio.sleep(0.02)
            if len(session.agents.running) == 2:
                break
        assert len(session.agents.running) == 2
        assert session.cancel()
        with pytest.raises(asyncio.CancelledError):
            await turn
    assert session.agents.running == {}
    assert sorted(f.cancelled for f in finished) == [True, True]
    assert transcript_problem(session.conversation.messages) is None
    tools = [m for m in session.conversation.messages if m.role == "tool"]
    assert len(tools) == 2 and all("cancelled" in m.text.lower() for m in tools)


@pytest.mark.real_permissions
async def test_a_childs_denied_approval_is_an_error_result(
    project: Path, sandbox_off: None
) -> None:
    parent = Reply(calls=[task("run the tests")])
    with FakeOpenAI([parent, Reply("the child was denied")]) as server:
        server.when(
            "run the tests",
            [Reply(calls=[Call("execute", {"command": "touch ran"})]), Reply("denied, stopping")],
        )
        session = session_for(project, server)
        person = Person(answers=["deny"])
        session.frontend = person
        await session.turn("go")
    assert person.asked == ["approve execute"]  # the task call itself was not asked about
    [request] = person.requests
    assert request.agent == "general" and request.agent_description
    assert not (project / "ran").exists()
    child = [b for b in server.requests if agent_of(b) == "general"][-1]
    [denied] = tool_results(child)
    assert "User denied permission: execute" in denied["error"]


async def test_the_childs_run_is_journaled_with_its_call(project: Path) -> None:
    (project / "a.txt").write_text("alpha\n")
    with FakeOpenAI([Reply(calls=[task("read a.txt", id="call_task_1")]), Reply("done")]) as server:
        server.when("read a.txt", [Reply(calls=[Call("read", {"path": "a.txt"})]), Reply("alpha")])
        session = session_for(project, server)
        await session.turn("go")
    runs = child_records(session.conversation.journal.path)
    [(call_id, (agent, messages))] = runs.items()
    assert agent == "general"
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert messages[0]["content"] == "read a.txt" and messages[-1]["content"] == "alpha"
    # the parent's conversation holds only its own messages: the result, not the child's
    roles = [m.role for m in session.conversation.messages]
    assert roles == ["user", "assistant", "tool", "assistant"]
    resumed = create_session(project, trust=True)
    assert resumed.conversation.resume(session.id)
    assert [m.role for m in resumed.conversation.messages] == roles
    assert call_id


async def test_an_unknown_agent_is_an_error_naming_the_subagents(project: Path) -> None:
    with FakeOpenAI([Reply(calls=[task("x", "nobody")]), Reply("ok")]) as server:
        session = session_for(project, server)
        await session.turn("go")
    [result] = tool_results(server.requests[-1])
    assert "agent 'nobody' is unknown" in result["error"]
    assert "general" in result["error"] and "explore" in result["error"]


async def test_children_do_not_get_todo_nor_task_and_explore_is_read_only(project: Path) -> None:
    with FakeOpenAI([Reply(calls=[task("look", "explore")]), Reply("ok")]) as server:
        server.for_agent("explore", [Reply("found")])
        server.for_agent("general", [Reply("done")])
        session = session_for(project, server)
        await session.turn("go")
        explore = next(b for b in server.requests if agent_of(b) == "explore")
    assert offered(explore) == ["glob", "grep", "list", "read"]
    general = session.agents.tool_names(session.agents.definitions.agents["general"])
    assert "todo" not in general and "task" not in general and "execute" in general


@pytest.mark.real_permissions
async def test_approvals_from_two_children_come_one_at_a_time(
    project: Path, sandbox_off: None
) -> None:
    """Both children ask about the same command at once: one dialog at a time, and the
    second is not asked when the first was allowed for the session."""
    parent = Reply(calls=[task("first job"), task("second job")])
    run = Call("execute", {"command": "echo hello"})
    with FakeOpenAI([parent, Reply("done")]) as server:
        server.when("first job", [Reply(calls=[run]), Reply("one")])
        server.when("second job", [Reply(calls=[run]), Reply("two")])
        session = session_for(project, server)
        open_now = [0]
        most = [0]

        async def decide(request: Any) -> Decision:
            open_now[0] += 1
            most[0] = max(most[0], open_now[0])
            await asyncio.sleep(0.3)  # the person reads the dialog
            open_now[0] -= 1
            return Decision("session")

        person = Person(decide=decide)
        session.frontend = person
        await session.turn("go")
    assert most[0] == 1
    assert person.asked == ["approve execute"]
    results = [tool_results(b) for b in server.requests if agent_of(b) == "general"]
    outputs = [r[0]["output"] for r in results if r]
    assert len(outputs) == 2 and all("hello" in out for out in outputs)


LEAD = """\
---
name: lead
description: Splits a job among helpers
tools: [read, task]
delegate: true
model: fake-model-large
max_steps: 3
---

Split the job.
"""


def with_lead(project: Path) -> None:
    (project / ".tui-agent" / "agents").mkdir(parents=True)
    (project / ".tui-agent" / "agents" / "lead.md").write_text(LEAD)


async def test_an_agent_that_delegates_starts_a_grandchild_with_its_model(project: Path) -> None:
    with_lead(project)
    with FakeOpenAI([Reply(calls=[task("split it", "lead")]), Reply("all done")]) as server:
        server.for_agent("lead", [Reply(calls=[task("the small part")]), Reply("lead: done")])
        server.when("the small part", [Reply("small part done")])
        session = session_for(project, server)
        await session.turn("go")
    lead = [b for b in server.requests if agent_of(b) == "lead"]
    assert lead[0]["model"] == "fake-model-large"  # the agent's model
    assert offered(lead[0]) == ["read", "task"]
    [grandchild] = [b for b in server.requests if first_prompt_is(b, "the small part")]
    assert grandchild["model"] == "m" and "task" not in offered(grandchild)  # general: no task
    assert tool_results(lead[1])[0]["output"] == "small part done"
    assert tool_results(server.requests[-1])[0]["output"] == "lead: done"


def first_prompt_is(body: dict[str, Any], text: str) -> bool:
    users = [m for m in body["messages"] if m["role"] == "user"]
    return bool(users) and users[0]["content"] == text


async def test_a_subagent_that_may_not_delegate_cannot_call_task(project: Path) -> None:
    with FakeOpenAI([Reply(calls=[task("do it")]), Reply("ok")]) as server:
        server.when("do it", [Reply(calls=[task("nested")]), Reply("could not")])
        session = session_for(project, server)
        await session.turn("go")
    child = [b for b in server.requests if first_prompt_is(b, "do it")]
    assert "task" not in offered(child[0])
    [refused] = tool_results(child[1])
    assert 'tool "task" is not available to the agent general' in refused["error"]
    assert not any(first_prompt_is(b, "nested") for b in server.requests)


async def test_the_agents_max_steps_stops_the_child(project: Path) -> None:
    with_lead(project)
    loop = Reply(calls=[Call("read", {"path": "missing.txt"})])
    with FakeOpenAI([Reply(calls=[task("go on", "lead")]), Reply("ok")]) as server:
        server.for_agent("lead", [loop, loop, loop, loop])
        session = session_for(project, server)
        await session.turn("go")
    assert len([b for b in server.requests if agent_of(b) == "lead"]) == 3
    [result] = tool_results(server.requests[-1])
    assert "the subagent lead stopped: Stopped after 3 steps (max_steps)" in result["error"]


async def test_a_long_subagent_compacts_its_own_conversation(
    project: Path, user_config_dir: Path
) -> None:
    """The child reads a big file again and again: its own budget compacts its
    conversation (old results pruned; the journal records it), no request overflows, the
    parent gets its answer; the parent's conversation is not compacted."""
    from test_budget import is_summary_request

    (user_config_dir / "config.toml").write_text(
        'context_window = 3072\n[permission]\n"*" = "allow"\n'
    )
    (project / "big.txt").write_text(
        "".join(f"line {n}: " + "word " * 30 + "\n" for n in range(60))
    )
    read = Reply(calls=[Call("read", {"path": "big.txt", "limit": 40})])
    with FakeOpenAI(
        [Reply(calls=[task("read big.txt often")]), Reply("ok")], context_limit=3072
    ) as server:
        server.when(is_summary_request, [Reply("SUMMARY: read big.txt twice.")] * 5)
        server.for_agent("general", [read, read, read, read, Reply("big.txt has 60 lines")])
        session = session_for(project, server)
        await session.turn("go")
    assert server.overflowed == [] and server.rejected == []
    [result] = tool_results(server.requests[-1])
    assert result["output"] == "big.txt has 60 lines"
    records = [
        json.loads(line) for line in session.conversation.journal.path.read_text().splitlines()
    ]
    assert any(r.get("type") == "subagent_compaction" for r in records)
    assert not any(r.get("type") == "compaction" for r in records)


async def test_a_claude_hook_on_task_sees_claudes_fields(project: Path) -> None:
    """A PreToolUse hook matching Claude's ``Task`` gets the call under Claude's names
    (``subagent_type``); one matching ``Read`` also sees the subagent's read."""
    from test_claude_hooks import command_hook, recorded, recorder, settings

    (project / "a.txt").write_text("alpha\n")
    task_hook, task_log = recorder(project.parent, "task")
    read_hook, read_log = recorder(project.parent, "read")
    settings(
        project,
        {"PreToolUse": [command_hook(task_hook, "Task"), command_hook(read_hook, "Read")]},
    )
    with FakeOpenAI([Reply(calls=[task("read a.txt", "explore", "look")]), Reply("ok")]) as server:
        server.for_agent(
            "explore", [Reply(calls=[Call("read", {"path": "a.txt"})]), Reply("alpha")]
        )
        session = session_for(project, server)
        await session.turn("go")
    [seen] = recorded(task_log)
    assert seen["tool_name"] == "Task"
    assert seen["tool_input"] == {
        "description": "look",
        "prompt": "read a.txt",
        "subagent_type": "explore",
    }
    [read] = recorded(read_log)
    assert read["tool_name"] == "Read" and read["tool_input"]["file_path"].endswith("a.txt")


async def test_two_childrens_calls_with_one_id_keep_their_own_parent(project: Path) -> None:
    """Servers may give two requests' calls the same id: each finished call still names
    the task call it belongs to."""
    (project / "a.txt").write_text("alpha\n")
    read = Reply(calls=[Call("read", {"path": "a.txt"}, id="call_same")])
    parent = Reply(calls=[task("first", id="task_1"), task("second", id="task_2")])
    with FakeOpenAI([parent, Reply("ok")]) as server:
        server.when("first", [read, Reply("one")])
        server.when("second", [read, Reply("two")])
        session = session_for(project, server)
        finished: list[Any] = []
        session.events.listen(
            lambda e: finished.append(e) if isinstance(e, ToolCallFinished) else None
        )
        await session.turn("go")
    reads = sorted((e.parent, e.agent) for e in finished if e.name == "read")
    assert reads == [("task_1", "general"), ("task_2", "general")]


async def test_a_bad_agent_file_is_one_load_problem(project: Path) -> None:
    """Shown with the plugins' problems, once, though the files are read again after
    plugins register tools."""
    folder = project / ".claude" / "agents"
    folder.mkdir(parents=True)
    (folder / "broken.md").write_text("---\nname: [unclosed\n---\nbody\n")
    with FakeOpenAI([Reply("ok"), Reply("ok")]) as server:
        session = session_for(project, server)
        await session.turn("one")
        await session.turn("two")
    broken = [p for p in session.extensions.problems if "broken.md" in str(p)]
    assert len(broken) == 1, broken
    assert "general" in session.agents.definitions.agents
