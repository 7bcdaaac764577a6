"""The agent loop through the real openai client against the testing kit's HTTP server."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from conftest import write

from tui_agent import create_session
from tui_agent.core.protocol import events as ev
from tui_agent.testing import Call, FakeOpenAI, Reply


def session_for(project: Path, server: FakeOpenAI, **settings: Any) -> Any:
    from tui_agent.core.util.paths import user_config_dir

    lines = ["retry_base_delay = 0.01", *[f"{k} = {json.dumps(v)}" for k, v in settings.items()]]
    lines += ["[permission]", '"*" = "allow"']  # the loop is under test here, not permissions
    write(user_config_dir() / "config.toml", "\n".join(lines) + "\n")
    session = create_session(project, base_url=server.base_url, model="fake-model")
    session.toolbox.add(
        "echo",
        description="Echo",
        params={"text": {"type": "string"}},
        required=["text"],
        handler=lambda a: {"echo": a["text"]},
    )
    return session


def assert_valid_transcript(messages: list[dict[str, Any]]) -> None:
    """Every assistant tool call is answered by exactly one tool message, in order."""
    index = 0
    while index < len(messages):
        message = messages[index]
        calls = message.get("tool_calls") or []
        if message["role"] == "assistant" and calls:
            answers = messages[index + 1 : index + 1 + len(calls)]
            assert [a["role"] for a in answers] == ["tool"] * len(calls)
            assert [a["tool_call_id"] for a in answers] == [c["id"] for c in calls]
            index += len(calls)
        index += 1


async def test_plain_reply(project: Path) -> None:
    async with FakeOpenAI([Reply("Hello there", thinking="pondering")]) as server:
        session = session_for(project, server)
        seen: list[Any] = []
        session.events.listen(seen.append)
        reply = await session.turn("hi")
    assert reply == "Hello there"
    assert session.conversation.messages == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "Hello there"},
    ]
    request = server.requests[0]
    assert request["model"] == "fake-model" and request["stream"] is True
    assert request["messages"][0]["role"] == "system"
    assert request["messages"][-1] == {"role": "user", "content": "hi"}
    assert request["stream_options"] == {"include_usage": True}
    names = [t["function"]["name"] for t in request["tools"]]
    assert "echo" in names and "execute" in names and "bash" not in names
    assert "".join(e.text for e in seen if isinstance(e, ev.ThinkingChunk)) == "pondering"
    assert "".join(e.text for e in seen if isinstance(e, ev.TextChunk)) == "Hello there"
    assert any(isinstance(e, ev.UsageUpdate) and e.total_tokens == 15 for e in seen)


async def test_multi_step_tool_loop_and_parallel_calls(project: Path) -> None:
    script = [
        Reply("Let me look.", calls=[Call("echo", {"text": "one"}), Call("echo", {"text": "two"})]),
        Reply(calls=[Call("echo", {"text": "three"}, pieces=5)]),
        Reply("All done."),
    ]
    async with FakeOpenAI(script) as server:
        session = session_for(project, server)
        reply = await session.turn("go")
    assert reply == "All done."
    messages = session.conversation.messages
    assert_valid_transcript(messages)
    tool_contents = [json.loads(m["content"]) for m in messages if m["role"] == "tool"]
    assert tool_contents == [
        {"echo": "one", "ok": True},
        {"echo": "two", "ok": True},
        {"echo": "three", "ok": True},
    ]
    assert len(server.requests) == 3
    # The whole exchange is sent back: the third request holds every earlier message.
    assert server.requests[2]["messages"][1:] == messages[:-1]


async def test_bad_json_and_unknown_tool_go_back_to_the_model(project: Path) -> None:
    script = [
        Reply(calls=[Call("echo", '{"text": '), Call("nope", {}), Call("echo", {"text": 5})]),
        Reply("Recovered."),
    ]
    async with FakeOpenAI(script) as server:
        session = session_for(project, server)
        assert await session.turn("go") == "Recovered."
    results = [
        json.loads(m["content"]) for m in session.conversation.messages if m["role"] == "tool"
    ]
    assert results[0]["ok"] is False and results[0]["error"].startswith(
        "invalid JSON arguments for echo"
    )
    assert results[1]["ok"] is False
    assert results[1]["error"].startswith('unknown tool: "nope". Available: ')
    assert "echo" in results[1]["error"]
    assert results[2] == {"error": "value at `/text` is not a string", "ok": False}
    sent = server.requests[1]["messages"]
    assert [m["role"] for m in sent[-3:]] == ["tool", "tool", "tool"]


async def test_max_steps_stops_with_a_note(project: Path) -> None:
    script = [Reply(calls=[Call("echo", {"text": str(i)})]) for i in range(3)]
    async with FakeOpenAI(script) as server:
        session = session_for(project, server, max_steps=2)
        await session.turn("loop")
    assert len(server.requests) == 2
    assert any("max_steps" in n.text and n.kind == "error" for n in session.output.history)
    assert_valid_transcript(session.conversation.messages)


@pytest.mark.parametrize(
    ("status", "fragment"),
    [
        (401, "authentication failed"),
        (403, "authentication failed"),
        (404, "'fake-model' was not found"),
        (400, "rejected the request"),
    ],
)
async def test_non_retryable_errors_are_clear(project: Path, status: int, fragment: str) -> None:
    async with FakeOpenAI([Reply(status=status)]) as server:
        session = session_for(project, server)
        reply = await session.turn("hi")
    assert reply == ""
    assert len(server.requests) == 1
    errors = [n.text for n in session.output.history if n.kind == "error"]
    assert len(errors) == 1 and fragment in errors[0]
    assert "Traceback" not in errors[0]
    assert session.conversation.messages == [{"role": "user", "content": "hi"}]


@pytest.mark.parametrize(
    "failure",
    [
        Reply(status=429, headers={"Retry-After": "0"}),
        Reply(status=500),
        Reply(status=503),
        Reply(drop_after=0),
    ],
    ids=["429", "500", "503", "dropped-before-data"],
)
async def test_retryable_errors_are_retried(project: Path, failure: Reply) -> None:
    async with FakeOpenAI([failure, Reply("after retry")]) as server:
        session = session_for(project, server)
        retries: list[ev.Retrying] = []
        session.events.listen(lambda e: retries.append(e) if isinstance(e, ev.Retrying) else None)
        assert await session.turn("hi") == "after retry"
    assert len(server.requests) == 2 and len(retries) == 1


async def test_retry_after_header_is_honoured(project: Path) -> None:
    async with FakeOpenAI(
        [Reply(status=429, headers={"Retry-After": "0.3"}), Reply("ok")]
    ) as server:
        session = session_for(project, server)
        delays: list[float] = []
        session.events.listen(
            lambda e: delays.append(e.delay) if isinstance(e, ev.Retrying) else None
        )
        await session.turn("hi")
    assert delays == [0.3]


async def test_retries_are_bounded(project: Path) -> None:
    async with FakeOpenAI([Reply(status=500)] * 5) as server:
        session = session_for(project, server, retry_attempts=3)
        await session.turn("hi")
    assert len(server.requests) == 3
    errors = [n.text for n in session.output.history if n.kind == "error"]
    assert "gave up after 3 attempts" in errors[-1]


async def test_stream_dying_mid_reply_on_its_last_attempt_keeps_what_arrived(
    project: Path,
) -> None:
    async with FakeOpenAI([Reply("one two three four five six", drop_after=4)]) as server:
        session = session_for(project, server, retry_attempts=1)
        reply = await session.turn("hi")
    assert reply == "one two three "
    assert session.conversation.messages[-1] == {"role": "assistant", "content": "one two three "}
    errors = [n.text for n in session.output.history if n.kind == "error"]
    assert "the reply stopped before the model finished" in errors[-1]
    assert len(server.requests) == 1


async def test_malformed_chunk_is_reported(project: Path) -> None:
    async with FakeOpenAI([Reply("alpha beta gamma", malformed_after=2)]) as server:
        session = session_for(project, server, retry_attempts=1)
        reply = await session.turn("hi")
    assert reply == "alpha "
    errors = [n.text for n in session.output.history if n.kind == "error"]
    assert errors and "the reply stopped before the model finished" in errors[-1]


async def test_cancel_mid_stream_keeps_transcript_valid(project: Path) -> None:
    async with FakeOpenAI([Reply("a b c d e f g h i j", delay=0.1), Reply("next")]) as server:
        session = session_for(project, server)
        chunks: list[str] = []
        session.events.listen(
            lambda e: chunks.append(e.text) if isinstance(e, ev.TextChunk) else None
        )
        task = asyncio.create_task(session.turn("hi"))
        while len(chunks) < 2:
            await asyncio.sleep(0.02)
        assert session.cancel() is True
        with pytest.raises(asyncio.CancelledError):
            await task
        assert session.cancel() is False
        partial = session.conversation.messages[-1]
        assert partial["role"] == "assistant" and partial["content"].startswith("a b")
        assert await session.turn("again") == "next"
    assert_valid_transcript(session.conversation.messages)


async def test_cancel_mid_tool_cancels_it_and_answers_every_call(project: Path) -> None:
    started = asyncio.Event()
    cancelled = threading.Event()

    async def slow(args: dict[str, Any]) -> dict[str, Any]:
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return {}

    script = [Reply(calls=[Call("slow", {}), Call("echo", {"text": "never"})]), Reply("fine")]
    async with FakeOpenAI(script) as server:
        session = session_for(project, server)
        session.toolbox.add("slow", handler=slow)
        task = asyncio.create_task(session.turn("go"))
        await asyncio.wait_for(started.wait(), 5)
        session.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert cancelled.is_set()
        messages = session.conversation.messages
        assert_valid_transcript(messages)
        results = [json.loads(m["content"]) for m in messages if m["role"] == "tool"]
        assert [r["error"] for r in results] == ["cancelled by the user"] * 2
        assert await session.turn("continue") == "fine"
    assert server.requests[-1]["messages"][1:] == session.conversation.messages[:-1]


async def test_agents_md_goes_into_the_system_prompt(project: Path) -> None:
    write(project / "AGENTS.md", "Always answer in haiku.")
    sub = project / "src" / "pkg"
    sub.mkdir(parents=True)
    async with FakeOpenAI([Reply("ok")]) as server:
        session = session_for(sub, server)
        await session.turn("hi")
    system = server.requests[0]["messages"][0]["content"]
    assert "Always answer in haiku." in system
    assert str(sub) in system


async def test_stub_provider_offline(project: Path) -> None:
    session = create_session(project)
    assert session.extensions.provider_name == "stub"
    session.toolbox.add(
        "list",
        params={"path": {"type": "string"}},
        required=["path"],
        handler=lambda a: {"entries": []},
    )
    reply = await session.turn("hello")
    messages = session.conversation.messages
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert messages[1]["tool_calls"][0]["function"] == {
        "name": "list",
        "arguments": '{"path": "."}',
    }
    assert json.loads(messages[2]["content"]) == {"entries": [], "ok": True}
    assert "OPENAI_API_KEY" in reply
    again = create_session(project)
    again.toolbox.add(
        "list",
        params={"path": {"type": "string"}},
        required=["path"],
        handler=lambda a: {"entries": []},
    )
    assert await again.turn("hello") == reply


async def test_models_listing(project: Path) -> None:
    async with FakeOpenAI([], models=["m1", "m2"]) as server:
        session = session_for(project, server)
        assert await session.provider.models() == ["m1", "m2"]


async def test_plugin_provider_replaces_builtin(project: Path) -> None:
    from tui_agent.core.providers import Text

    class Canned:
        name = "canned"
        model = "canned-1"

        async def stream(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
            yield Text("from the plugin provider")

        async def models(self) -> list[str]:
            return ["canned-1"]

    import tui_agent

    tui_agent.configure(lambda config: config.provider("canned", lambda settings: Canned()))
    session = create_session(project, provider="canned")
    assert await session.turn("hi") == "from the plugin provider"


async def test_server_without_stream_options_is_asked_again_without_them(project: Path) -> None:
    async with FakeOpenAI([Reply("first"), Reply("second")], reject_stream_options=True) as server:
        session = session_for(project, server)
        assert await session.turn("one") == "first"
        assert await session.turn("two") == "second"
    assert ["stream_options" in r for r in server.requests] == [True, False, False]


async def test_denied_tools_are_not_offered(project: Path) -> None:
    async with FakeOpenAI([Reply("ok")]) as server:
        session = session_for(project, server)
        session.toolbox.add("secret", handler=lambda a: {})
        session.extensions.hide_tools(lambda name: name == "secret")
        await session.turn("hi")
    names = [t["function"]["name"] for t in server.requests[0]["tools"]]
    assert "echo" in names and "secret" not in names


async def test_pytest_fixture_from_the_testing_kit(fake_openai: FakeOpenAI, project: Path) -> None:
    fake_openai.script.append(Reply("from the fixture"))
    session = create_session(project, base_url=fake_openai.base_url, model="m")
    assert await session.turn("hi") == "from the fixture"
    assert fake_openai.requests[0]["model"] == "m"


async def test_the_agent_runs_a_turn_from_its_parts_with_no_session(tmp_path: Path) -> None:
    """No reference back to a Session: a transcript, a toolbox, events, output and a few
    functions are all the loop needs (an embedder can build one the same way)."""
    from tui_agent import Toolbox
    from tui_agent.core.agent import Agent
    from tui_agent.core.conversation.transcript import Transcript
    from tui_agent.core.protocol.context import ToolContext
    from tui_agent.core.protocol.output import Output
    from tui_agent.core.providers.openai import OpenAIProvider

    toolbox = Toolbox()
    toolbox.add("echo", description="Echo", params={"text": {"type": "string"}})(
        lambda args: {"echo": args["text"]}
    )
    transcript = Transcript("agent-alone", tmp_path, lambda text: None)
    bus = ev.EventBus()
    seen: list[Any] = []
    bus.listen(seen.append)
    script = [Reply(calls=[Call("echo", {"text": "hi"})]), Reply("Echoed.")]
    async with FakeOpenAI(script) as server:
        provider = OpenAIProvider({"base_url": server.base_url, "model": "m"})
        agent = Agent(
            transcript=transcript,
            toolbox=toolbox,
            events=bus,
            output=Output(),
            settings=lambda: {"retry_base_delay": 0.01},
            provider=lambda: provider,
            tools=toolbox.definitions,
            system_prompt=lambda: "You are a test.",
            tool_context=lambda **kw: ToolContext(directory=str(tmp_path), **kw),
        )
        outcome = await agent.turn("say hi")
    assert outcome == ev.TurnFinished("Echoed.", steps=2)
    assert server.requests[0]["messages"][0] == {"role": "system", "content": "You are a test."}
    assert [m["role"] for m in transcript.conversation.messages] == [
        "user",
        "assistant",
        "tool",
        "assistant",
    ]
    assert json.loads(transcript.conversation.messages[2]["content"])["echo"] == "hi"
    assert [type(e).__name__ for e in seen if isinstance(e, ev.TurnFinished)] == ["TurnFinished"]
    assert agent.tokens == ev.UsageUpdate(20, 10, 30)
    transcript.journal.close()


async def test_notes_travel_with_the_events_in_order(project: Path) -> None:
    """One stream: a note a tool says while it runs comes between its call's start and end
    on session.events, wherever it was said from (a sync tool runs in a worker thread)."""
    from tui_agent.core.protocol.output import Note

    script = [Reply(calls=[Call("talk", {})]), Reply("done")]
    async with FakeOpenAI(script) as server:
        session = session_for(project, server)
        session.toolbox.add("talk", description="Says something")(
            lambda args: session.output.say("working on it") or {"ok": True}
        )
        seen: list[Any] = []
        session.events.listen(seen.append)
        assert await session.turn("hi") == "done"
    kinds = [type(e).__name__ for e in seen if not isinstance(e, ev.TextChunk | ev.UsageUpdate)]
    start = kinds.index("ToolCallStarted")
    assert kinds[start : start + 3] == ["ToolCallStarted", "Note", "ToolCallFinished"]
    assert Note("working on it") in seen


async def test_session_complete_is_one_reply_without_tools_and_leaves_the_transcript(
    project: Path,
) -> None:
    async with FakeOpenAI([Reply("Only the text.", thinking="not this")]) as server:
        session = session_for(project, server)
        said = await session.conversation.complete([{"role": "user", "content": "summarise"}])
    assert said == "Only the text."
    (request,) = server.requests
    assert request["messages"][0]["role"] == "system"
    assert request["messages"][1:] == [{"role": "user", "content": "summarise"}]
    assert not request.get("tools")
    assert list(session.conversation) == []
