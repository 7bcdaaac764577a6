"""Stream fidelity and provider dialects (issue 13), through the real openai client.

A reply is finished only when the server says so; an unfinished reply is never acted on.
The dialect streams below are written from each provider's documentation of its streaming
format (not copied from recordings): DeepSeek's ``reasoning_content``, Groq's and
OpenRouter's ``reasoning``, OpenRouter's ``reasoning_details``, Mistral's content chunks,
Perplexity's running usage, Qwen3 / DeepSeek-R1 ``<think>`` text as served by Ollama,
vLLM or LM Studio without a reasoning parser, and errors sent inside the stream.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import write
from test_agent import assert_valid_transcript, session_for

from tui_agent.core.protocol import events as ev
from tui_agent.core.providers.base import Finish, Text, Thinking, ToolCall, Usage
from tui_agent.core.providers.chunks import ReplyReader, ShapeError, ThinkTags
from tui_agent.core.util.paths import user_config_dir
from tui_agent.testing import Call, FakeOpenAI, Reply

STOPPED = "the reply stopped before the model finished"


def delta(**fields: Any) -> dict[str, Any]:
    """A chunk with one choice holding ``fields`` as its delta (finish_reason null)."""
    finish = fields.pop("finish_reason", None)
    return {
        "id": "chatcmpl-doc",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": fields, "finish_reason": finish}],
    }


def usage(prompt: int, completion: int) -> dict[str, Any]:
    return {
        "id": "chatcmpl-doc",
        "object": "chat.completion.chunk",
        "choices": [],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }


def events_of(session: Any) -> list[Any]:
    seen: list[Any] = []
    session.events.listen(seen.append)
    return seen


def texts(seen: list[Any], kind: type) -> str:
    return "".join(e.text for e in seen if isinstance(e, kind))


def errors(session: Any) -> list[str]:
    return [n.text for n in session.output.history if n.kind == "error"]


# -- the reader on its own: every shape, table-driven -----------------------------------------


def read(*chunks: Any) -> list[Any]:
    reader = ReplyReader()
    out = [event for chunk in chunks for event in reader.feed(chunk)]
    return out + reader.end()


def joined(events: list[Any], kind: type) -> str:
    return "".join(e.text for e in events if isinstance(e, kind))


THINK_REPLY = "<think>\nweigh it</think>\n\nThe answer."


@pytest.mark.parametrize("cut", range(1, len(THINK_REPLY)))
def test_think_tags_split_anywhere_give_the_same_result(cut: int) -> None:
    tags = ThinkTags()
    out = tags.feed(THINK_REPLY[:cut]) + tags.feed(THINK_REPLY[cut:]) + tags.flush()
    assert joined(out, Thinking) == "\nweigh it"
    assert joined(out, Text) == "The answer."


def test_think_tags_one_character_a_chunk() -> None:
    tags = ThinkTags()
    out = [event for char in THINK_REPLY for event in tags.feed(char)] + tags.flush()
    assert joined(out, Thinking) == "\nweigh it"
    assert joined(out, Text) == "The answer."


@pytest.mark.parametrize(
    ("pieces", "thinking", "text"),
    [
        (["Hello <think>not a tag</think>"], "", "Hello <think>not a tag</think>"),
        (["<", "b>bold</b>"], "", "<b>bold</b>"),
        (["<thin", "g>"], "", "<thing>"),
        (["  \n", "<think>a</think>b"], "a", "b"),  # blank lines before the tag
        (["<think>\n\n</think>\n\n", "Hi"], "\n\n", "Hi"),  # thinking switched off: empty
        (["<think>never closed"], "never closed", ""),  # a cut reply keeps its thinking
        (["<think>a</thi"], "a</thi", ""),
        (["<think>x</think>"], "x", ""),
        (["<think>a</think>b</think>c"], "a", "b</think>c"),  # only the leading block
        (["<"], "", "<"),
        (["2 < 3"], "", "2 < 3"),
    ],
)
def test_think_tags(pieces: list[str], thinking: str, text: str) -> None:
    tags = ThinkTags()
    out = [event for piece in pieces for event in tags.feed(piece)] + tags.flush()
    assert (joined(out, Thinking), joined(out, Text)) == (thinking, text)


def test_usage_is_the_last_one_reported_never_a_sum() -> None:
    out = read(
        {**delta(content="a"), "usage": {"prompt_tokens": 11, "completion_tokens": 1}},
        {**delta(content="b"), "usage": {"prompt_tokens": 11, "completion_tokens": 2}},
        {**delta(finish_reason="stop"), "usage": {"prompt_tokens": 11, "completion_tokens": 3}},
    )
    assert [e for e in out if isinstance(e, Usage)] == [Usage(11, 3, 0)]


def test_reasoning_fields_and_details() -> None:
    out = read(
        delta(reasoning_content="deep "),
        delta(reasoning="groq "),
        # OpenRouter sends the same text twice: in reasoning and in reasoning_details
        delta(reasoning="once ", reasoning_details=[{"type": "reasoning.text", "text": "once "}]),
        delta(
            reasoning_details=[
                {"type": "reasoning.summary", "summary": "summed "},
                {"type": "reasoning.encrypted", "data": "opaque"},
                {"type": "reasoning.text", "text": "detailed", "signature": "sig"},
            ]
        ),
        delta(content="done", finish_reason="stop"),
    )
    assert joined(out, Thinking) == "deep groq once summed detailed"
    assert joined(out, Text) == "done"


def test_content_part_lists() -> None:
    out = read(
        delta(content=[{"type": "thinking", "thinking": [{"type": "text", "text": "hmm "}]}]),
        delta(content=[{"type": "thinking", "thinking": "plain"}]),
        delta(content=[{"type": "text", "text": "4"}, {"type": "reference", "reference_ids": [1]}]),
        delta(content=" is it", finish_reason="stop"),
    )
    assert joined(out, Thinking) == "hmm plain"
    assert joined(out, Text) == "4 is it"


@pytest.mark.parametrize(
    ("chunk", "field"),
    [
        ([], "chunk"),
        ({"choices": {"0": {}}}, "choices"),
        ({"choices": ["x"]}, "choices[0]"),
        ({"choices": [{"delta": "text"}]}, "choices[0].delta"),
        (delta(content=5), "choices[0].delta.content"),
        (delta(content=["text"]), "choices[0].delta.content[0]"),
        (delta(content=[{"type": "text", "text": 1}]), "choices[0].delta.content[0].text"),
        (delta(reasoning_content=["a"]), "choices[0].delta.reasoning_content"),
        (delta(reasoning_details="a"), "choices[0].delta.reasoning_details"),
        (delta(tool_calls={"index": 0}), "choices[0].delta.tool_calls"),
        (delta(tool_calls=[{"index": 0, "function": "f"}]), "choices[0].delta.tool_calls[0]"),
        (delta(tool_calls=[{"id": 7}]), "choices[0].delta.tool_calls[0].id"),
        (delta(finish_reason=1), "choices[0].finish_reason"),
    ],
)
def test_a_shape_it_does_not_know_names_the_field(chunk: Any, field: str) -> None:
    with pytest.raises(ShapeError) as caught:
        ReplyReader().feed(chunk)
    assert caught.value.field.startswith(field)
    assert str(caught.value).startswith(f"`{caught.value.field}` is ")


def test_tool_calls_come_only_at_the_end_with_their_finish() -> None:
    reader = ReplyReader()
    first = reader.feed(
        delta(tool_calls=[{"index": 0, "id": "c1", "function": {"name": "echo"}}])
    ) + reader.feed(delta(tool_calls=[{"index": 0, "function": {"arguments": '{"text": 1}'}}]))
    assert first == []  # nothing of a call is handed on before the reply ends
    assert reader.end() == [ToolCall("c1", "echo", '{"text": 1}'), Finish(None)]


def test_tool_call_dialects() -> None:
    out = read(
        # Mistral: no index, the whole call in one delta
        delta(tool_calls=[{"id": "a", "function": {"name": "one", "arguments": "{}"}}]),
        delta(tool_calls=[{"id": "b", "function": {"name": "two", "arguments": "{"}}]),
        delta(tool_calls=[{"function": {"arguments": "}"}}]),  # goes on with the last call
        # a server that repeats the name, and one that sends arguments as an object
        delta(tool_calls=[{"index": 5, "id": "c", "function": {"name": "three"}}]),
        delta(tool_calls=[{"index": 5, "function": {"name": "three", "arguments": {"x": 1}}}]),
        delta(finish_reason="tool_calls"),
    )
    calls = [e for e in out if isinstance(e, ToolCall)]
    assert calls == [
        ToolCall("a", "one", "{}"),
        ToolCall("b", "two", "{}"),
        ToolCall("c", "three", '{"x": 1}'),
    ]
    assert out[-1] == Finish("tool_calls")


# -- through the real client: finished or not -------------------------------------------------


async def test_the_issue_repro_a_cut_stream_is_retried_and_only_the_whole_reply_kept(
    project: Path,
) -> None:
    """Issue 27: a stream cut after some text was shown is retried (nothing of it ran),
    the shown part is taken back, and only the finished reply is recorded."""
    whole = "Hello there my good friend"
    script = [Reply(whole, drop_after=3), Reply(whole)]
    async with FakeOpenAI(script) as server:
        session = session_for(project, server)
        seen = events_of(session)
        reply = await session.turn("hi")
    assert reply == whole
    assert errors(session) == []
    (withdrawn,) = [e for e in seen if isinstance(e, ev.ReplyWithdrawn)]
    assert withdrawn.attempt == 1 and "broke" in withdrawn.reason
    (retry,) = [e for e in seen if isinstance(e, ev.Retrying)]
    assert retry.line().startswith("retrying (2 of 10) in ")
    assert seen.index(withdrawn) < seen.index(retry)  # taken back, then asked again
    after = seen[seen.index(retry) :]
    assert texts(after, ev.TextChunk) == whole  # the retry streams the whole reply
    assert ev.ReplyFinished(None, incomplete=True) not in seen
    assert len(server.requests) == 2
    assert server.requests[1]["messages"] == server.requests[0]["messages"]
    messages = session.conversation.messages
    assert [m["role"] for m in messages if m["role"] != "system"] == ["user", "assistant"]
    assert messages[-1]["content"] == whole
    journal = session.conversation.journal.path.read_text()
    assert 'Hello there "' not in journal and journal.count(whole) == 1


async def test_a_cancel_while_a_cut_reply_waits_for_its_retry_keeps_none_of_it(
    project: Path,
) -> None:
    """Taken back is taken back: Esc during the retry's backoff records nothing of the cut
    reply (a cancel mid-stream keeps what arrived, as before)."""
    import asyncio

    script = [Reply("Hello there my good friend", drop_after=3), Reply("next turn")]
    async with FakeOpenAI(script) as server:
        session = session_for(project, server, retry_base_delay=30)
        seen = events_of(session)
        task = asyncio.ensure_future(session.turn("hi"))
        while not any(isinstance(e, ev.Retrying) for e in seen):
            await asyncio.sleep(0.01)
        assert session.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert [m["role"] for m in session.conversation.messages] == ["user"]
        assert await session.turn("again") == "next turn"
    assert server.rejected == []
    assert "Hello there" not in session.conversation.journal.path.read_text()


async def test_a_reply_cut_on_every_attempt_keeps_the_last_part_marked(project: Path) -> None:
    script = [Reply("Hello there my good friend", drop_after=3)] * 2
    async with FakeOpenAI(script) as server:
        session = session_for(project, server, retry_attempts=2)
        seen = events_of(session)
        reply = await session.turn("hi")
    assert reply == "Hello there "
    (error,) = errors(session)
    assert error.startswith(f"error: {STOPPED}: ") and "(gave up after 2 attempts)" in error
    assert ev.ReplyFinished(None, incomplete=True) in seen
    assert sum(isinstance(e, ev.ReplyWithdrawn) for e in seen) == 1
    assert len(server.requests) == 2  # retry_attempts counts every request, as for a 500
    assert [m.get("content") for m in session.conversation.messages[-2:]] == ["hi", reply]


async def test_clean_close_without_finish_or_done_keeps_text_and_marks_it(project: Path) -> None:
    script = [Reply("one two three", finish="", done=False), Reply("next")]
    async with FakeOpenAI(script) as server:
        session = session_for(project, server, retry_attempts=1)
        seen = events_of(session)
        assert await session.turn("hi") == "one two three"
        (error,) = errors(session)
        assert STOPPED in error and "without a finish_reason or [DONE]" in error
        turn_end = [e for e in seen if isinstance(e, ev.TurnFinished)][-1]
        assert turn_end.error == error
        assert await session.turn("go on") == "next"  # the transcript stays valid
    assert server.rejected == []
    assert {"role": "assistant", "content": "one two three"} in server.requests[1]["messages"]


# a reply with thinking, text and a tool call whose arguments arrive in four pieces; its
# chunks: 0 role, 1-2 thinking, 3-5 text, 6 the call's header, 7-10 its arguments,
# 11 the finish_reason, 12 usage
WHOLE = Reply(
    "I will mark it now",
    thinking="let me think",
    calls=[Call("mark", {"text": "the mark", "n": 12345}, pieces=4)],
)
FAULTS = {
    "dropped": lambda at: {"drop_after": at},
    "malformed": lambda at: {"malformed_after": at},
    "stalled": lambda at: {"stall_after": at},
    "closed-cleanly": lambda at: {"truncate_after": at},
}


@pytest.mark.parametrize("fault", list(FAULTS))
@pytest.mark.parametrize("at", range(1, 11))
async def test_a_cut_at_every_position_is_retried_and_only_the_finished_reply_kept(
    project: Path, fault: str, at: int
) -> None:
    """Issue 27: wherever the reply stops (in its thinking, its text, inside the tool
    call's arguments), it is retried: the tool runs once, with the whole arguments, and the
    conversation holds only the reply that finished."""
    from dataclasses import replace

    ran: list[dict[str, Any]] = []
    script = [replace(WHOLE, **FAULTS[fault](at)), WHOLE, Reply("marked")]
    async with FakeOpenAI(script) as server:
        session = session_for(project, server, stream_idle_timeout=0.3)
        session.toolbox.add(
            "mark",
            params={"text": {"type": "string"}, "n": {"type": "integer"}},
            description="Mark",
        )(lambda args: ran.append(args) or {"ok": True})
        seen = events_of(session)
        assert await session.turn("mark it") == "marked"
    assert ran == [{"text": "the mark", "n": 12345}]
    assert errors(session) == []
    shown = at > 1  # chunk 1 is the first thinking
    assert sum(isinstance(e, ev.ReplyWithdrawn) for e in seen) == (1 if shown else 0)
    assert sum(isinstance(e, ev.Retrying) for e in seen) == 1
    assert len(server.requests) == 3 and server.rejected == []
    messages = [m for m in session.conversation.messages if m["role"] != "system"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert messages[1]["content"] == "I will mark it now"
    assert [c["function"]["name"] for c in messages[1]["tool_calls"]] == ["mark"]
    assert_valid_transcript(session.conversation.messages)


@pytest.mark.parametrize(
    "cut",
    [
        {"drop_after": 3},  # the connection drops mid-arguments
        {"finish": "", "done": False},  # closed cleanly after the whole arguments
        {"malformed_after": 3},
        {"stall_after": 3},
    ],
    ids=["dropped", "closed-cleanly-complete-json", "malformed", "stalled"],
)
async def test_a_cut_tool_call_never_runs_and_the_reply_is_asked_again(
    project: Path, cut: dict[str, Any]
) -> None:
    ran: list[str] = []
    script = [
        Reply(calls=[Call("mark", {"text": "first"}, pieces=2)], **cut),
        Reply(calls=[Call("mark", {"text": "second"})]),
        Reply("done"),
    ]
    async with FakeOpenAI(script) as server:
        session = session_for(project, server, stream_idle_timeout=0.5)
        session.toolbox.add("mark", params={"text": {"type": "string"}}, description="Mark")(
            lambda args: ran.append(args["text"]) or {"ok": True}
        )
        seen = events_of(session)
        assert await session.turn("hi") == "done"
    assert ran == ["second"]
    assert sum(isinstance(e, ev.Retrying) for e in seen) == 1
    assert errors(session) == []
    assert server.rejected == []
    assert_valid_transcript(session.conversation.messages)


async def test_done_without_a_finish_reason_counts_as_finished(project: Path) -> None:
    # Snowflake Cortex ends with [DONE] and never sends a finish_reason
    script = [Reply("fine", finish="")]
    async with FakeOpenAI(script) as server:
        session = session_for(project, server)
        seen = events_of(session)
        assert await session.turn("hi") == "fine"
    assert errors(session) == []
    assert ev.ReplyFinished(None) in seen


async def test_a_finish_reason_without_done_counts_as_finished(project: Path) -> None:
    async with FakeOpenAI([Reply("fine", done=False)]) as server:
        session = session_for(project, server)
        assert await session.turn("hi") == "fine"
    assert errors(session) == []


@pytest.mark.parametrize("at", [0, 1, 2, 3, 5])
async def test_malformed_chunk_at_each_place(project: Path, at: int) -> None:
    # chunks: 0 role, 1-2 thinking, 3-4 text, 5 the call's header
    reply = Reply("alpha beta", thinking="hmm ok", calls=[Call("echo", {"text": "x"})])
    reply.malformed_after = at
    async with FakeOpenAI([reply, Reply("recovered")]) as server:
        session = session_for(project, server)
        seen = events_of(session)
        result = await session.turn("hi")
        where = server.base_url
    assert result == "recovered" and errors(session) == []
    assert len(server.requests) == 2
    (retry,) = [e for e in seen if isinstance(e, ev.Retrying)]
    assert f"the server at {where} sent a malformed chunk" in retry.reason
    shown = at > 1  # what was shown is taken back first
    assert sum(isinstance(e, ev.ReplyWithdrawn) for e in seen) == (1 if shown else 0)
    assert not [e for e in seen if isinstance(e, ev.ToolCallStarted)]
    assert_valid_transcript(session.conversation.messages)


async def test_malformed_chunk_on_the_last_attempt_keeps_the_part_marked(project: Path) -> None:
    async with FakeOpenAI([Reply("alpha beta gamma", malformed_after=3)]) as server:
        session = session_for(project, server, retry_attempts=1)
        seen = events_of(session)
        assert await session.turn("hi") == "alpha beta "
        where = server.base_url
    (error,) = errors(session)
    assert f"{STOPPED}: the server at {where} sent a malformed chunk" in error
    assert ev.ReplyFinished(None, incomplete=True) in seen


async def test_a_chunk_of_unknown_shape_is_not_retried(project: Path) -> None:
    chunks = [delta(role="assistant"), delta(content={"weird": True})]
    async with FakeOpenAI([Reply(chunks=chunks), Reply("never asked")]) as server:
        session = session_for(project, server, retry_attempts=5)
        assert await session.turn("hi") == ""
        where = server.base_url
    assert len(server.requests) == 1
    (error,) = errors(session)
    assert "`choices[0].delta.content` is dict, not a string or a list" in error
    assert where in error


async def test_stall_is_a_broken_stream_after_stream_idle_timeout(project: Path) -> None:
    script = [Reply("one two three four", stall_after=3), Reply("second")]
    async with FakeOpenAI(script) as server:
        session = session_for(
            project, server, stream_idle_timeout=0.5, timeout=60, retry_attempts=1
        )
        assert await session.turn("hi") == "one two "
        (error,) = errors(session)
        assert STOPPED in error and "no data from" in error and "stream_idle_timeout" in error
        assert await session.turn("again") == "second"
    assert server.rejected == []


async def test_stall_before_anything_shown_is_retried(project: Path) -> None:
    script = [Reply("lost", stall_after=1), Reply("second try")]
    async with FakeOpenAI(script) as server:
        session = session_for(project, server, stream_idle_timeout=0.5)
        assert await session.turn("hi") == "second try"
    assert errors(session) == []


def test_stream_idle_timeout_is_checked_in_config(project: Path) -> None:
    from tui_agent import create_session

    write(user_config_dir() / "config.toml", 'stream_idle_timeout = "soon"\n')
    session = create_session(project)
    (problem,) = session.extensions.config_problems
    assert "stream_idle_timeout must be a number of seconds above 0" in str(problem)


# -- finish_reason "length" --------------------------------------------------------------------


async def test_length_keeps_the_reply_and_says_so(project: Path) -> None:
    async with FakeOpenAI([Reply("a long answer cut", finish="length")]) as server:
        session = session_for(project, server)
        seen = events_of(session)
        assert await session.turn("hi") == "a long answer cut"
    assert ev.ReplyFinished("length") in seen
    assert errors(session) == []
    assert session.conversation.messages[-1] == {
        "role": "assistant",
        "content": "a long answer cut",
    }


async def test_length_cut_tool_call_is_not_run_and_the_model_is_told(project: Path) -> None:
    ran: list[str] = []
    whole = Call("mark", {"text": "whole"})
    cut = Call("mark", '{"text": "half', id="cut-1")
    script = [Reply(calls=[whole, cut], finish="length"), Reply("ok")]
    async with FakeOpenAI(script) as server:
        session = session_for(project, server)
        session.toolbox.add("mark", params={"text": {"type": "string"}}, description="Mark")(
            lambda args: ran.append(args["text"]) or {"ok": True}
        )
        assert await session.turn("hi") == "ok"
    assert ran == ["whole"]
    results = [m for m in server.requests[1]["messages"] if m["role"] == "tool"]
    told = json.loads(results[1]["content"])
    assert told["ok"] is False and "output limit" in told["error"]
    assert server.rejected == []


# -- dialects through the client ----------------------------------------------------------------


async def run_chunks(project: Path, chunks: list[Any]) -> tuple[Any, list[Any], str]:
    async with FakeOpenAI([Reply(chunks=chunks), Reply("")], strict=False) as server:
        session = session_for(project, server)
        seen = events_of(session)
        reply = await session.turn("hi")
    return session, seen, reply


async def test_perplexity_running_usage(project: Path) -> None:
    chunks = [
        {**delta(role="assistant", content="Eco"), "usage": usage(11, 1)["usage"]},
        {**delta(role="assistant", content="Vista"), "usage": usage(11, 2)["usage"]},
        {
            **delta(role="assistant", content="", finish_reason="stop"),
            "usage": usage(11, 3)["usage"],
        },
    ]
    _, seen, reply = await run_chunks(project, chunks)
    assert reply == "EcoVista"
    assert [e for e in seen if isinstance(e, ev.UsageUpdate)][-1] == ev.UsageUpdate(11, 3, 14)


async def test_usage_over_several_requests_adds_replies_not_chunks(project: Path) -> None:
    script = [
        Reply(calls=[Call("echo", {"text": "x"})], usage=(100, 10)),
        Reply("done", usage=(130, 5)),
    ]
    async with FakeOpenAI(script) as server:
        session = session_for(project, server)
        seen = events_of(session)
        await session.turn("hi")
    assert [e for e in seen if isinstance(e, ev.UsageUpdate)][-1] == ev.UsageUpdate(230, 15, 245)


async def test_mistral_content_parts(project: Path) -> None:
    chunks = [
        delta(
            role="assistant",
            content=[{"type": "thinking", "thinking": [{"type": "text", "text": "Two and two."}]}],
        ),
        delta(content=[{"type": "text", "text": "2 + 2 = 4"}]),
        delta(content="", finish_reason="stop"),
        usage(10, 46),
    ]
    session, seen, reply = await run_chunks(project, chunks)
    assert reply == "2 + 2 = 4"
    assert texts(seen, ev.ThinkingChunk) == "Two and two."
    assert errors(session) == []


async def test_reasoning_details_only(project: Path) -> None:
    chunks = [
        delta(
            role="assistant",
            content="",
            reasoning_details=[
                {"type": "reasoning.text", "text": "15 * 27", "format": "anthropic-claude-v1"}
            ],
        ),
        delta(content="", reasoning_details=[{"type": "reasoning.text", "text": " = 405"}]),
        delta(content="405"),
        usage(45, 73),
    ]  # no finish_reason at all: [DONE] ends it
    session, seen, reply = await run_chunks(project, chunks)
    assert reply == "405"
    assert texts(seen, ev.ThinkingChunk) == "15 * 27 = 405"
    assert errors(session) == []


@pytest.mark.parametrize("size", [1, 3, 7, 100])
async def test_think_tags_from_a_local_server(project: Path, size: int) -> None:
    text = "<think>\nThe user greets me.\n</think>\n\nHello!"
    pieces = [text[i : i + size] for i in range(0, len(text), size)]
    chunks = [delta(role="assistant", content="")]
    chunks += [delta(content=piece) for piece in pieces]
    chunks += [delta(finish_reason="stop")]
    session, seen, reply = await run_chunks(project, chunks)
    assert reply == "Hello!"
    assert texts(seen, ev.ThinkingChunk) == "\nThe user greets me.\n"
    assert session.conversation.messages[-1] == {"role": "assistant", "content": "Hello!"}


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        ({"error": {"message": "Token limit reached", "code": 400}}, "Token limit reached"),
        ({"error": {"message": "overloaded", "type": "server_error"}}, "overloaded"),
        ({"error": "plain words"}, "plain words"),
    ],
)
async def test_an_error_inside_the_stream_ends_the_reply(
    project: Path, error: dict[str, Any], expected: str
) -> None:
    chunks = [delta(role="assistant", reasoning="We need"), error]
    session, _, _ = await run_chunks(project, chunks)
    (shown,) = errors(session)
    assert f"reported an error: {expected}" in shown and STOPPED in shown


async def test_a_429_error_chunk_before_anything_shown_is_retried(project: Path) -> None:
    chunks = [delta(role="assistant"), {"error": {"message": "slow down", "code": 429}}]
    async with FakeOpenAI([Reply(chunks=chunks), Reply("after the wait")]) as server:
        session = session_for(project, server)
        assert await session.turn("hi") == "after the wait"
    assert errors(session) == []


# -- headless ------------------------------------------------------------------------------------


def run_cli(project: Path, base_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    return subprocess.run(
        [sys.executable, "-m", "tui_agent", "run", *args, "--base-url", base_url, "hi"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_headless_cut_stream_exits_1_with_the_note(project: Path) -> None:
    write(user_config_dir() / "config.toml", "retry_base_delay = 0.01\nretry_attempts = 1\n")
    with FakeOpenAI([Reply("Hello there my good friend", drop_after=3)]) as server:
        done = run_cli(project, server.base_url)
    assert done.returncode == 1
    assert done.stdout == "Hello there \n"
    (line,) = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert line.startswith(f"error: {STOPPED}: ")


def test_headless_cut_stream_is_retried_and_stdout_holds_the_reply_once(project: Path) -> None:
    """Into a pipe, a reply is written once it has finished: the taken-back part of a cut
    one never reaches it."""
    write(user_config_dir() / "config.toml", "retry_base_delay = 0.01\n")
    whole = "Hello there my good friend"
    with FakeOpenAI([Reply(whole, drop_after=3), Reply(whole)]) as server:
        done = run_cli(project, server.base_url)
    assert done.returncode == 0, done.stderr
    assert done.stdout == whole + "\n"
    (retry,) = [line for line in done.stderr.splitlines() if line.startswith("retrying")]
    assert retry.startswith("retrying (2 of 10) in ") and "broke" in retry
    assert "error" not in done.stderr


def test_headless_on_a_terminal_streams_and_marks_what_is_taken_back(project: Path) -> None:
    """On a terminal the reply streams as it comes; a cut one is marked taken back and the
    retry follows in its own paragraph."""
    import pty
    import select

    from tui_agent.headless import Printer

    write(user_config_dir() / "config.toml", "retry_base_delay = 0.01\n")
    whole = "Hello there my good friend"
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    with FakeOpenAI([Reply(whole, drop_after=3), Reply(whole)]) as server:
        leader, follower = pty.openpty()
        process = subprocess.Popen(
            [sys.executable, "-m", "tui_agent", "run", "--base-url", server.base_url, "hi"],
            cwd=project,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=follower,
            stderr=subprocess.PIPE,
            text=True,
        )
        os.close(follower)
        shown = b""
        while True:
            ready, _, _ = select.select([leader], [], [], 30)
            if not ready:
                break
            try:
                piece = os.read(leader, 4096)
            except OSError:  # the terminal closed: the run ended
                break
            if not piece:
                break
            shown += piece
        _, err = process.communicate(timeout=30)
        os.close(leader)
    assert process.returncode == 0, err
    lines = shown.decode().replace("\r\n", "\n").split("\n")
    assert lines == ["Hello there ", Printer.WITHDRAWN, "", whole, ""]


def test_headless_json_cut_stream_has_an_error_event(project: Path) -> None:
    write(user_config_dir() / "config.toml", "retry_base_delay = 0.01\nretry_attempts = 1\n")
    with FakeOpenAI([Reply("Hello there my good friend", finish="", done=False)]) as server:
        done = run_cli(project, server.base_url, "--json")
    assert done.returncode == 1
    events = [json.loads(line) for line in done.stdout.splitlines()]
    kinds = [e["type"] for e in events]
    assert {"type": "reply_finished", "finish_reason": None, "incomplete": True} in events
    (note,) = [e for e in events if e["type"] == "note"]
    assert note["kind"] == "error" and STOPPED in note["text"]
    assert kinds[-1] == "done" and STOPPED in events[-1]["error"]


def test_headless_json_says_a_reply_was_withdrawn(project: Path) -> None:
    write(user_config_dir() / "config.toml", "retry_base_delay = 0.01\n")
    whole = "Hello there my good friend"
    with FakeOpenAI([Reply(whole, finish="", done=False), Reply(whole)]) as server:
        done = run_cli(project, server.base_url, "--json")
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    kinds = [e["type"] for e in events]
    withdrawn = kinds.index("reply_withdrawn")
    assert events[withdrawn]["attempt"] == 1
    assert "without a finish_reason" in events[withdrawn]["reason"]
    assert kinds[withdrawn + 1] == "retrying" and events[withdrawn + 1]["attempts"] == 10
    before = "".join(e["text"] for e in events[:withdrawn] if e["type"] == "text")
    after = "".join(e["text"] for e in events[withdrawn:] if e["type"] == "text")
    assert (before, after) == (whole, whole)
    assert events[-1]["type"] == "done" and events[-1]["reply"] == whole


def test_headless_length_exits_0_with_a_note(project: Path) -> None:
    with FakeOpenAI([Reply("cut short", finish="length")]) as server:
        done = run_cli(project, server.base_url)
    assert done.returncode == 0
    assert done.stdout == "cut short\n"
    assert f"note: {ev.LENGTH_NOTE}" in done.stderr.splitlines()


@pytest.mark.parametrize("cut", [{"drop_after": 5}, {"stall_after": 5}], ids=["dropped", "stalled"])
async def test_a_stream_that_breaks_after_its_finish_reason_stands(
    project: Path, cut: dict[str, Any]
) -> None:
    """The server said the reply was complete; what went missing is the usage chunk that
    follows (OpenAI's order) or [DONE]: the reply and its tool calls stand."""
    ran: list[str] = []
    # chunks: 0 role, 1 "Calling", 2 the call's header, 3 its arguments, 4 finish, 5 usage
    script = [
        Reply("Calling", calls=[Call("mark", {"text": "x"}, pieces=1)], **cut),
        Reply("done"),
    ]
    async with FakeOpenAI(script) as server:
        session = session_for(project, server, stream_idle_timeout=0.5)
        session.toolbox.add("mark", params={"text": {"type": "string"}}, description="Mark")(
            lambda args: ran.append(args["text"]) or {"ok": True}
        )
        assert await session.turn("hi") == "done"
    assert ran == ["x"]
    assert errors(session) == []
    assert server.rejected == []


async def test_a_file_name_that_is_not_utf8_reaches_the_model_as_u_fffd(project: Path) -> None:
    """Linux file names are bytes: one that is not UTF-8 comes back from glob as a
    surrogate escape, which UTF-8 cannot carry. The request is made again at once with
    U+FFFD in its place: it is no network failure to retry (it was retried for minutes,
    found through ACP, every frontend had it), and the transcript keeps the name."""
    name = b"caf\xe9.txt".decode("utf-8", "surrogateescape")  # latin-1 bytes
    (project / name).write_text("x\n")
    async with FakeOpenAI(
        [Reply(calls=[Call("glob", {"pattern": "*.txt"})]), Reply("listed")]
    ) as server:
        session = session_for(project, server)
        reply = await session.turn("what is here?")
    assert reply == "listed"
    assert len(server.requests) == 2 and server.rejected == []
    (tool,) = [m for m in server.requests[1]["messages"] if m["role"] == "tool"]
    assert "caf\ufffd.txt" in tool["content"]
    assert any(name in str(m.get("content")) for m in session.conversation.messages)
