"""A session's life through `tui-agent acp` (issue 32): cancel mid-stream (the transcript
stays valid, as Esc leaves it), a cancel while permission is asked, load of a finished
session (its conversation replayed as updates), usage."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import acp
from acp_harness import RecordingClient, acp_session, journal_files, user_config

from tui_agent.testing import Call, FakeOpenAI, Reply

LONG = "Quince " * 40


async def test_cancel_mid_stream(project: Path, model: FakeOpenAI) -> None:
    model.script += [Reply(LONG, stall_after=3), Reply("Fresh start.")]
    async with acp_session(project, model) as s:
        running = asyncio.ensure_future(s.prompt("tell me about quinces"))
        await s.client.wait_for(lambda: len(s.client.of("agent_message_chunk")) >= 2, "chunks")
        await s.conn.cancel(session_id=s.session_id)
        answer = await asyncio.wait_for(running, 10)
        again = await s.prompt("and now?")
    assert answer == {"stopReason": "cancelled"}
    assert again == {"stopReason": "end_turn"}
    second = model.requests[1]["messages"]
    roles = [m["role"] for m in second]
    assert roles[-2:] == ["assistant", "user"] or roles[-1] == "user"
    assert second[-1]["content"] == "and now?"
    assert s.client.text().endswith("Fresh start.")


async def test_cancel_while_permission_is_asked(project: Path, model: FakeOpenAI) -> None:
    user_config()
    model.script += [Reply(calls=[Call("write", {"path": "w.txt", "content": "w"})]), Reply("ok")]
    asked = asyncio.Event()
    release = asyncio.Event()

    class Slow(RecordingClient):
        async def request_permission(self, session_id, tool_call, options, **kwargs):  # type: ignore[no-untyped-def]
            asked.set()
            await release.wait()  # the user has not answered yet
            return await super().request_permission(session_id, tool_call, options, **kwargs)

    client = Slow("cancelled")
    async with acp_session(project, model, client) as s:
        running = asyncio.ensure_future(s.prompt("write w.txt"))
        await asyncio.wait_for(asked.wait(), 30)
        await s.conn.cancel(session_id=s.session_id)
        release.set()  # the client answers the pending request "cancelled", as ACP says
        answer = await asyncio.wait_for(running, 10)
        [call] = s.client.tool_calls().values()
    assert answer == {"stopReason": "cancelled"}
    assert not (project / "w.txt").exists()
    assert call["status"] == "failed"
    assert len(model.requests) == 1


async def test_load_replays_a_finished_session(project: Path, model: FakeOpenAI) -> None:
    (project / "a.txt").write_text("apple\n")
    model.script += [
        Reply("Reading it.", calls=[Call("read", {"path": "a.txt"})]),
        Reply("It says apple."),
        Reply("Still apple."),
    ]
    async with acp_session(project, model) as s:
        await s.prompt("what does a.txt say?")
        first = s.session_id
    [journal] = journal_files()
    assert journal.stem == first

    client = RecordingClient()
    async with acp_session(project, model, client) as s:
        loaded = await s.conn.load_session(cwd=str(project), session_id=first, mcp_servers=[])
        replayed = list(client.updates)
        answer = await s.conn.prompt(session_id=first, prompt=[acp.text_block("and now?")])
    kinds = [u["sessionUpdate"] for sid, u in replayed if sid == first]
    assert kinds[:5] == [
        "user_message_chunk",
        "agent_message_chunk",
        "tool_call",
        "tool_call_update",
        "agent_message_chunk",
    ]
    texts = [u["content"]["text"] for sid, u in replayed if "content" in u and sid == first]
    assert texts[0] == "what does a.txt say?"
    assert "Reading it." in texts and "It says apple." in texts
    calls = [u for sid, u in replayed if u["sessionUpdate"] == "tool_call_update"]
    assert calls[0]["status"] == "completed"
    assert loaded.modes is not None and loaded.modes.current_mode_id == "ask"
    assert answer.stop_reason == "end_turn"
    last = model.requests[-1]["messages"]
    assert [m["role"] for m in last[1:]] == ["user", "assistant", "tool", "assistant", "user"]
    lines = [json.loads(line) for line in journal.read_text().splitlines()]
    said = [line["message"].get("content") for line in lines if line.get("type") == "message"]
    assert said[-2:] == ["and now?", "Still apple."]  # the same journal goes on


async def test_load_of_an_unknown_session_is_an_error(project: Path, model: FakeOpenAI) -> None:
    async with acp_session(project, model) as s:
        try:
            await s.conn.load_session(cwd=str(project), session_id="20990101-000000-abcdef")
        except acp.RequestError as exc:
            assert exc.code == -32002
        else:
            raise AssertionError("an unknown session loaded")


async def test_usage_after_a_turn(project: Path, model: FakeOpenAI) -> None:
    user_config('context_window = 32000\n[permission]\n"*" = "allow"\n')
    model.script += [Reply("Counted.", usage=(1234, 5))]
    async with acp_session(project, model) as s:
        await s.prompt("count")
        usage = s.client.of("usage_update")
    assert usage and usage[-1]["size"] == 32000
    assert usage[-1]["used"] >= 1234


async def test_sessions_are_listed_for_the_folder(project: Path, model: FakeOpenAI) -> None:
    model.script += [Reply("one")]
    async with acp_session(project, model) as s:
        await s.prompt("the first question")
        listed = await s.conn.list_sessions(cwd=str(project))
        elsewhere = await s.conn.list_sessions(cwd=str(project.parent))
    assert s.init["agentCapabilities"]["sessionCapabilities"] == {"list": {}}
    [info] = listed.sessions
    assert info.session_id == s.session_id
    assert info.cwd == str(project.resolve())
    assert info.title == "the first question"
    assert elsewhere.sessions == []


async def test_listed_sessions_have_the_pickers_titles(project: Path, model: FakeOpenAI) -> None:
    """session/list shows the titles the picker and `tui-agent sessions` show: a name
    given with /rename wins, else the first prompt's first line cut at a word."""
    from tui_agent.core.conversation.titles import list_summaries

    first = "where does the retry logic live in this project, and why does it give up so soon?"
    model.script += [Reply("one"), Reply("two")]
    async with acp_session(project, model) as s:
        await s.prompt(first + "\nsecond line")
        plain = s.session_id
    async with acp_session(project, model) as s:
        await s.prompt("the other question")
        await s.prompt("/rename   Retry  work ")
        listed = await s.conn.list_sessions(cwd=str(project))
        named = s.session_id
    titles = {info.session_id: info.title for info in listed.sessions}
    assert titles[named] == "Retry work"
    assert titles[plain] == "where does the retry logic live in this project, and why…"
    assert titles == {summary.id: summary.title for summary in list_summaries(project)}
