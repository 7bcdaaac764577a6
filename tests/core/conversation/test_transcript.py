"""The typed transcript at its edges: the journal's JSON lines, resume, and the request the
real openai client sends to the testing kit's server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import write

from tui_agent import create_session
from tui_agent.core.conversation import journal
from tui_agent.core.conversation.transcript import Transcript
from tui_agent.core.protocol.events import ConversationReset
from tui_agent.core.protocol.messages import (
    AssistantMessage,
    Call,
    SystemMessage,
    ToolMessage,
    UserMessage,
)
from tui_agent.core.protocol.result import Result
from tui_agent.testing import Call as FakeCall
from tui_agent.testing import FakeOpenAI, Reply

PLUGIN_NOTE = {"role": "user", "content": "from a plugin", "name": "ann", "x-meta": {"n": [1]}}
REASONED = {
    "role": "assistant",
    "content": "Looking.",
    "reasoning_content": "the file will tell",
    "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "read", "arguments": '{"p": 1}'}}
    ],
}


def journaled(path: Path) -> list[dict[str, Any]]:
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert records[0]["type"] == "session"
    records = [r for r in records[1:] if r["type"] != "model"]  # the model a reply came from
    assert all(r["type"] == "message" for r in records)
    return [r["message"] for r in records]


def test_the_journal_writes_openai_dicts_and_resume_types_them_again(project: Path) -> None:
    transcript = Transcript("t-1", project, on_failure=lambda text: None)
    recorded = [
        transcript.record(UserMessage("read it")),
        transcript.record(dict(REASONED)),  # a plugin's dict: typed on the way in
        transcript.record(ToolMessage("c1", Result({"output": "hi"}))),
        transcript.record(PLUGIN_NOTE),
        transcript.record(AssistantMessage("It says hi.")),
    ]
    transcript.journal.close()
    assert [type(m) for m in recorded] == [
        UserMessage,
        AssistantMessage,
        ToolMessage,
        UserMessage,
        AssistantMessage,
    ]
    exact = [
        {"role": "user", "content": "read it"},
        REASONED,
        {"role": "tool", "tool_call_id": "c1", "content": '{"output": "hi", "ok": true}'},
        PLUGIN_NOTE,
        {"role": "assistant", "content": "It says hi."},
    ]
    lines = journaled(transcript.journal.path)
    # a user message is journaled with its origin (issue 28), which resuming takes off again
    written = [{**m, "origin": "prompt"} if m["role"] == "user" else m for m in exact]
    assert lines == written
    assert [json.dumps(m) for m in lines] == [json.dumps(m) for m in written]  # key order too

    again = Transcript("other", project, on_failure=lambda text: None)
    again.resume(transcript.journal.path)
    resumed = again.conversation.messages
    assert resumed == exact  # the keys tui-agent does not model come back as well
    assert [type(m) for m in resumed] == [type(m) for m in recorded]
    assert isinstance(resumed[1], AssistantMessage)
    assert resumed[1].calls == (Call("c1", "read", '{"p": 1}'),)
    assert isinstance(resumed[2], ToolMessage)
    assert resumed[2].call_id == "c1" and resumed[2].result.to_dict() == {
        "output": "hi",
        "ok": True,
    }
    assert again.journal.path == transcript.journal.path  # later messages go on in it
    again.record(UserMessage("more"))
    again.journal.close()
    more = {"role": "user", "content": "more", "origin": "prompt"}
    assert journaled(transcript.journal.path) == [*written, more]


def test_find_takes_an_id_or_the_newest_journal_of_the_folder(tmp_path: Path) -> None:
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir()
    there.mkdir()
    assert Transcript.find(here) is None
    assert Transcript.find(here, "nope") is None
    for session_id, folder in (("a", here), ("b", there)):
        transcript = Transcript(session_id, folder, on_failure=lambda text: None)
        transcript.record(UserMessage(f"in {folder.name}"))
        transcript.journal.close()
    assert Transcript.find(here) == journal.sessions_dir() / "a.jsonl"
    assert Transcript.find(here, "b") == journal.sessions_dir() / "b.jsonl"  # any folder's
    assert Transcript.find(here, "../b") is None


async def test_a_resumed_session_holds_typed_messages_and_answers_open_calls(
    project: Path,
) -> None:
    first = create_session(project, load=False)
    first.conversation.record({"role": "user", "content": "do it"})
    first.conversation.record(REASONED)  # its call never got a result: the session was cut off
    first.conversation.journal.close()

    second = create_session(project, load=False)
    seen: list[Any] = []
    second.events.listen(seen.append)
    assert second.conversation.resume() is True
    assert second.id == first.id
    assert [e for e in seen if isinstance(e, ConversationReset)] == [ConversationReset("resume")]
    user, assistant, answer = second.conversation.messages
    assert isinstance(user, UserMessage) and user.text == "do it"
    assert isinstance(assistant, AssistantMessage) and assistant == REASONED
    assert [call.name for call in assistant.calls] == ["read"]
    assert isinstance(answer, ToolMessage) and answer.call_id == "c1"
    assert answer.result.error == "interrupted: the session ended before this call finished"
    assert journaled(second.conversation.journal.path)[-1] == answer  # the answer is journaled
    second.conversation.journal.close()


async def test_the_request_sent_has_the_exact_openai_shapes(project: Path) -> None:
    from tui_agent.core.util.paths import user_config_dir

    write(user_config_dir() / "config.toml", '[permission]\n"*" = "allow"\n')
    script = [
        Reply("Let me look.", calls=[FakeCall("echo", {"text": "one"}, id="call_a")]),
        Reply(calls=[FakeCall("echo", '{"text": ', id="call_b")]),  # bad JSON: an error result
        Reply("All done."),
    ]
    async with FakeOpenAI(script) as server:
        session = create_session(project, base_url=server.base_url, model="fake-model")
        session.toolbox.add(
            "echo",
            description="Echo",
            params={"text": {"type": "string"}},
            required=["text"],
            handler=lambda a: {"echo": a["text"]},
        )
        session.conversation.record(PLUGIN_NOTE)
        assert await session.turn("go") == "All done."
        session.conversation.journal.close()
    assert server.rejected == []
    sent = server.requests[2]["messages"]
    system, *rest = sent
    assert system == {"role": "system", "content": system["content"]}
    assert isinstance(system["content"], str) and system["content"]
    bad_arguments = json.loads(rest[5]["content"])
    assert (
        bad_arguments["ok"] is False and "invalid JSON arguments for echo" in bad_arguments["error"]
    )
    assert rest == [
        PLUGIN_NOTE,
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": "Let me look.",
            "tool_calls": [
                {
                    "id": "call_a",
                    "type": "function",
                    "function": {"name": "echo", "arguments": '{"text": "one"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_a", "content": '{"echo": "one", "ok": true}'},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_b",
                    "type": "function",
                    "function": {"name": "echo", "arguments": '{"text": '},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_b", "content": rest[5]["content"]},
    ]
    # the conversation holds the same messages, typed
    assert session.conversation.messages == [*rest, {"role": "assistant", "content": "All done."}]
    assert [type(m) for m in session.conversation.messages] == [
        UserMessage,
        UserMessage,
        AssistantMessage,
        ToolMessage,
        AssistantMessage,
        ToolMessage,
        AssistantMessage,
    ]
    assert isinstance(session.conversation.request("s")[0], SystemMessage)
