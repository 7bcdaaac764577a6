"""Issue 35: the Claude Code hook events that decide little now run too: ``Notification``
(an approval waits, the prompt waits), ``SessionEnd`` (with its reason), ``PreCompact``
(manual or auto, with the custom instructions) and ``SubagentStop`` (which, like ``Stop``,
may keep the subagent going). Real shell scripts run as real processes through real turns
against the testing kit's server; each expectation is Claude Code's hooks reference: exit 2
shows stderr to the user for the first three, and keeps the subagent going for the last.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from test_command_hooks import errors, hook_table, recorded, recorder, script, user_hooks

from tui_agent import Session, create_session
from tui_agent.command_hooks import in_force
from tui_agent.testing import Call, FakeOpenAI, Person, Reply


def session_for(project: Path, server: FakeOpenAI, person: Person | None = None) -> Session:
    session = create_session(project, base_url=server.base_url, model="m", trust=True)
    if person is not None:
        session.frontend = person
    return session


def said(session: Session) -> list[str]:
    return [note.text for note in session.output.history]


# -- Notification ------------------------------------------------------------------------------


async def test_notification_runs_when_an_approval_waits_and_when_the_prompt_waits(
    project: Path, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    every, every_log = recorder(tmp_path, "every.sh")
    asks, asks_log = recorder(tmp_path, "asks.sh")
    user_hooks(
        hook_table("Notification", every) + hook_table("Notification", asks, "permission_prompt"),
        permissions="",  # write asks
    )
    fake_openai.script += [
        Reply(calls=[Call("write", {"path": "a.txt", "content": "hi"})]),
        Reply("done"),
    ]
    person = Person(["once"])
    session = session_for(project, fake_openai, person)
    assert await session.turn("go") == "done"
    assert person.asked == ["approve write"]
    await session.close()  # waits for the hooks still running
    first, second = sorted(recorded(every_log), key=lambda r: r["notification_type"])
    assert second["notification_type"] == "permission_prompt"
    assert second["message"] == "tui-agent needs your permission to use Write"
    assert second["hook_event_name"] == "Notification"
    assert second["session_id"] == session.id and second["cwd"] == str(project)
    assert first["notification_type"] == "idle_prompt"
    assert first["message"] == "tui-agent is waiting for your input"
    # the matcher takes the notification_type: this one ran for the approval only
    assert [r["notification_type"] for r in recorded(asks_log)] == ["permission_prompt"]


async def test_notification_exit_2_is_said_to_the_user_and_headless_runs_notify_nobody(
    project: Path, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    hook = script(tmp_path, "loud.sh", "cat > /dev/null\necho 'no notifier here' >&2\nexit 2\n")
    user_hooks(hook_table("Notification", hook))
    fake_openai.responder = lambda body: Reply("ok")
    headless = session_for(project, fake_openai)  # nobody to notify: no Notification
    await headless.turn("one")
    await headless.close()
    assert not any("Notification" in text for text in said(headless))
    session = session_for(project, fake_openai, Person())
    assert await session.turn("two") == "ok"
    await session.close()
    assert any("Notification hook" in t and "no notifier here" in t for t in errors(session))


# -- SessionEnd ------------------------------------------------------------------------------


async def test_session_end_runs_once_when_the_session_closes_with_its_reason(
    project: Path, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    hook, log = recorder(tmp_path, "end.sh")
    other, other_log = recorder(tmp_path, "other.sh")
    user_hooks(hook_table("SessionEnd", hook) + hook_table("SessionEnd", other, "other|clear"))
    fake_openai.responder = lambda body: Reply("ok")
    session = session_for(project, fake_openai)
    await session.turn("hello")
    await session.reload()  # a reload is no end
    assert recorded(log) == []
    await session.close("prompt_input_exit")
    await session.close("prompt_input_exit")  # once
    (seen,) = recorded(log)
    assert seen["hook_event_name"] == "SessionEnd"
    assert seen["reason"] == "prompt_input_exit"
    assert seen["session_id"] == session.id
    assert Path(seen["transcript_path"]).read_text().count('"hello"') == 1
    assert recorded(other_log) == []  # its matcher takes other reasons


async def test_clear_ends_the_conversation_with_reason_clear(
    project: Path, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    """Claude Code runs SessionEnd with reason "clear" on /clear: the payload is the ended
    conversation's (its id, its transcript), and the session's close later ends the new
    one with its own reason."""
    hook, log = recorder(tmp_path, "end.sh")
    only_exit, exit_log = recorder(tmp_path, "exit.sh")
    user_hooks(
        hook_table("SessionEnd", hook) + hook_table("SessionEnd", only_exit, "prompt_input_exit")
    )
    fake_openai.responder = lambda body: Reply("ok")
    session = session_for(project, fake_openai)
    await session.turn("hello before the clear")
    first = session.id
    assert await session.commands.run_line("/clear")
    for _ in range(200):  # it runs beside the session, as Claude's does
        if recorded(log):
            break
        await asyncio.sleep(0.02)
    (seen,) = recorded(log)
    assert seen["reason"] == "clear"
    assert seen["session_id"] == first != session.id
    assert Path(seen["transcript_path"]).read_text().count('"hello before the clear"') == 1
    assert recorded(exit_log) == []  # its matcher takes only the quit
    await session.turn("after it")
    await session.close("prompt_input_exit")
    assert [r["reason"] for r in recorded(log)] == ["clear", "prompt_input_exit"]
    assert recorded(log)[1]["session_id"] == session.id
    assert [r["reason"] for r in recorded(exit_log)] == ["prompt_input_exit"]


async def test_session_end_exit_2_and_json_are_said_and_the_close_goes_on(
    project: Path, tmp_path: Path
) -> None:
    blocked = script(tmp_path, "two.sh", "cat > /dev/null\necho 'cannot stop this' >&2\nexit 2\n")
    says = script(tmp_path, "json.sh", """cat > /dev/null\necho '{"systemMessage": "bye"}'\n""")
    user_hooks(hook_table("SessionEnd", blocked) + hook_table("SessionEnd", says))
    session = create_session(project, trust=True)
    closed: list[str] = []
    session.on("close", lambda: closed.append("closed"))
    await session.close()
    assert closed == ["closed"]
    assert any("SessionEnd hook" in t and "cannot stop this" in t for t in errors(session))
    assert "SessionEnd hook: bye" in said(session)


# -- PreCompact ------------------------------------------------------------------------------


async def test_pre_compact_gets_the_trigger_and_the_custom_instructions(
    project: Path, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    hook, log = recorder(tmp_path, "compact.sh")
    user_hooks(hook_table("PreCompact", hook))
    fake_openai.responder = lambda body: Reply("the summary")
    session = session_for(project, fake_openai)
    await session.turn("hello")
    asked = len(fake_openai.requests)
    assert await session.commands.run_line("/compact keep the API notes")
    (manual,) = recorded(log)
    assert manual["hook_event_name"] == "PreCompact"
    assert manual["trigger"] == "manual"
    assert manual["custom_instructions"] == "keep the API notes"
    assert len(fake_openai.requests) == asked + 1  # the summary was still written
    await session.turn("more")
    await session.conversation.budget.compact("auto", force=True)
    assert [r["trigger"] for r in recorded(log)] == ["manual", "auto"]
    assert recorded(log)[1]["custom_instructions"] == ""


async def test_pre_compact_matcher_and_exit_2_never_stop_the_compaction(
    project: Path, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    auto_only, auto_log = recorder(tmp_path, "auto.sh")
    blocker = script(tmp_path, "block.sh", "cat > /dev/null\necho 'please do not' >&2\nexit 2\n")
    user_hooks(hook_table("PreCompact", auto_only, "auto") + hook_table("PreCompact", blocker))
    fake_openai.responder = lambda body: Reply("the summary")
    session = session_for(project, fake_openai)
    await session.turn("hello")
    assert await session.commands.run_line("/compact")
    assert recorded(auto_log) == []
    assert any("PreCompact hook" in t and "please do not" in t for t in errors(session))
    assert session.conversation.messages[0].text.endswith("the summary")


# -- SubagentStop ----------------------------------------------------------------------------


async def test_subagent_stop_exit_2_keeps_the_subagent_going_with_its_reason(
    project: Path, tmp_path: Path
) -> None:
    log = tmp_path / "sub.jsonl"
    hook = script(
        tmp_path,
        "sub.sh",
        f"""
        input=$(cat)
        echo "$input" >> "{log}"
        case "$input" in *'"last_assistant_message": "found nothing"'*)
            echo 'look in src/ too' >&2; exit 2;;
        esac
        """,
    )
    user_hooks(hook_table("SubagentStop", hook, "general"))
    parent = [Reply(calls=[Call("task", {"prompt": "find it", "agent": "general"})]), Reply("ok")]
    with FakeOpenAI(parent) as server:
        server.for_agent("general", [Reply("found nothing"), Reply("found it in src/a.py")])
        session = session_for(project, server)
        assert await session.turn("go") == "ok"
        child_requests = [r for r in server.requests if "Subagent" in r["messages"][0]["content"]]
    assert len(child_requests) == 2
    assert "look in src/ too" in child_requests[1]["messages"][-1]["content"]
    first, second = recorded(log)
    assert first["hook_event_name"] == "SubagentStop"
    assert first["agent_type"] == "general" and first["stop_hook_active"] is False
    assert first["agent_id"] and first["agent_id"] == second["agent_id"]
    assert second["stop_hook_active"] is True
    assert second["last_assistant_message"] == "found it in src/a.py"
    # the task's result is the subagent's last reply
    result = json.loads(
        next(m["content"] for m in server.requests[-1]["messages"] if m["role"] == "tool")
    )
    assert result["output"] == "found it in src/a.py"


async def test_subagent_stop_json_block_continue_false_and_matcher(
    project: Path, tmp_path: Path
) -> None:
    block = {"decision": "block", "reason": "add line numbers"}
    blocker = script(tmp_path, "block.sh", f"cat > /dev/null\necho '{json.dumps(block)}'\n")
    other, other_log = recorder(tmp_path, "other.sh")
    user_hooks(
        hook_table("SubagentStop", blocker, "explore")
        + hook_table("SubagentStop", other, "code-reviewer")
    )
    parent = [Reply(calls=[Call("task", {"prompt": "look", "agent": "explore"})]), Reply("ok")]
    with FakeOpenAI(parent) as server:
        server.for_agent("explore", [Reply("a.py"), Reply("a.py:3"), Reply("a.py:3"), Reply("x")])
        session = session_for(project, server)
        await session.turn("go")
        explore = [r for r in server.requests if "Subagent" in r["messages"][0]["content"]]
    assert len(explore) == 4  # its reply, then 3 continuations: the most one task allows
    assert "add line numbers" in explore[1]["messages"][-1]["content"]
    assert any("kept it going 3 times" in t for t in errors(session))
    assert recorded(other_log) == []
    # continue: false ends it at once
    stop = {"continue": False, "stopReason": "enough"}
    user_hooks(hook_table("SubagentStop", script(tmp_path, "s.sh", f"echo '{json.dumps(stop)}'")))
    with FakeOpenAI(parent) as server:
        server.for_agent("explore", [Reply("a.py"), Reply("never")])
        session = session_for(project, server)
        await session.turn("go")
        explore = [r for r in server.requests if "Subagent" in r["messages"][0]["content"]]
    assert len(explore) == 1
    assert any("enough" in t for t in errors(session)), session.output.history


def test_the_new_events_are_read_and_listed(project: Path, tmp_path: Path) -> None:
    user_hooks(
        hook_table("Notification", "n.sh")
        + hook_table("SessionEnd", "e.sh")
        + hook_table("PreCompact", "p.sh", "manual")
        + hook_table("SubagentStop", "s.sh")
    )
    session = create_session(project, trust=True)
    hooks = in_force(session)
    assert [h.event for h in hooks.hooks] == [
        "Notification",
        "SessionEnd",
        "PreCompact",
        "SubagentStop",
    ]
    assert hooks.ignored == []
