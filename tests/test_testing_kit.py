"""The testing kit rejects transcripts the way the OpenAI API does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import openai
import pytest

from tui_agent.testing import FakeOpenAI, Reply, count_tokens, transcript_problem

CALL = {"id": "c1", "type": "function", "function": {"name": "t", "arguments": "{}"}}
CALL2 = {"id": "c2", "type": "function", "function": {"name": "t", "arguments": "{}"}}
USER = {"role": "user", "content": "hi"}

VALID = [
    [USER],
    [{"role": "system", "content": "s"}, USER, {"role": "assistant", "content": "a"}],
    [
        USER,
        {"role": "assistant", "content": None, "tool_calls": [CALL, CALL2]},
        {"role": "tool", "tool_call_id": "c2", "content": "{}"},
        {"role": "tool", "tool_call_id": "c1", "content": "{}"},
        USER,
    ],
    [USER, USER],
]
INVALID = [
    ([], "non-empty"),
    ([{"role": "robot", "content": "x"}], "role"),
    ([USER, {"role": "tool", "tool_call_id": "c1", "content": "{}"}], "preceeding"),
    (
        [
            USER,
            {"role": "assistant", "content": None, "tool_calls": [CALL, CALL2]},
            {"role": "tool", "tool_call_id": "c1", "content": "{}"},
            USER,
        ],
        "c2",
    ),
    ([USER, {"role": "assistant", "content": None, "tool_calls": [CALL]}], "c1"),
    (
        [
            USER,
            {"role": "assistant", "content": None, "tool_calls": [CALL]},
            {"role": "tool", "tool_call_id": "c1", "content": "{}"},
            {"role": "tool", "tool_call_id": "c1", "content": "{}"},
        ],
        "preceeding",
    ),
    ([USER, {"role": "assistant", "content": None}], "content or tool_calls"),
    ([{"role": "user", "content": None}], "content"),
]


@pytest.mark.parametrize("messages", VALID)
def test_valid_transcripts_pass(messages: list[dict[str, Any]]) -> None:
    assert transcript_problem(messages) is None


@pytest.mark.parametrize(("messages", "fragment"), INVALID)
def test_invalid_transcripts_are_named(messages: list[dict[str, Any]], fragment: str) -> None:
    problem = transcript_problem(messages)
    assert problem is not None and fragment in problem


async def test_the_server_answers_an_invalid_transcript_with_400() -> None:
    async with FakeOpenAI([Reply("never sent")]) as server:
        client = openai.AsyncOpenAI(api_key="k", base_url=server.base_url, max_retries=0)
        bad = [USER, {"role": "tool", "tool_call_id": "zz", "content": "{}"}]
        with pytest.raises(openai.BadRequestError) as info:
            await client.chat.completions.create(model="m", messages=bad)  # type: ignore[arg-type]
        assert "preceeding" in str(info.value)
        assert server.rejected and server.script  # the scripted reply was not used
        ok = await client.chat.completions.create(model="m", messages=[USER])  # type: ignore[list-item]
        assert ok.choices[0].message.content == "never sent"
        await client.close()


# -- the Pilot helpers -----------------------------------------------------------------------


async def test_pilot_helpers_drive_the_real_app(project: Path) -> None:
    from tui_agent import create_session
    from tui_agent.testing import (
        chat_text,
        run_app,
        send,
        turn_over,
        type_keys,
        wait_for,
        wait_for_text,
    )
    from tui_agent.ui.prompt import PromptArea

    async with FakeOpenAI([Reply("first answer"), Reply("second answer")]) as server:
        session = create_session(project, base_url=server.base_url, model="m")
        async with run_app(session, size=(90, 30)) as pilot:
            await wait_for(pilot, lambda: session.extensions.loaded)
            await send(pilot, "first question")
            shown = await wait_for_text(pilot, "first answer")
            assert shown.index("first question") < shown.index("first answer")
            await turn_over(pilot)
            await type_keys(pilot, "two words")
            assert pilot.app.query_one(PromptArea).text == "two words"
            await pilot.press("enter")
            await wait_for_text(pilot, "second answer")
            await turn_over(pilot)
            assert not session.busy
            assert chat_text(pilot.app).count("answer") == 2
            with pytest.raises(AssertionError, match=r"timed out after 0\.1 s"):
                await wait_for(pilot, lambda: False, 0.1)
    assert [m["content"] for m in server.requests[1]["messages"] if m["role"] == "user"] == [
        "first question",
        "two words",
    ]


# -- long sessions: a context limit, a responder, extra routes ---------------------------------


def test_count_tokens_is_the_documented_approximation() -> None:
    tools = [{"type": "function", "function": {"name": "read", "parameters": {}}}]
    body = {
        "messages": [
            {"role": "system", "content": "abcde"},  # 4 + 2
            {"role": "user", "content": [{"type": "text", "text": "abcd"}, {"type": "image"}]},
            {"role": "assistant", "content": None, "tool_calls": [CALL]},  # 4 + 0 + ceil(3/4)
            {"role": "tool", "tool_call_id": "c1", "content": ""},  # 4
        ],
        "tools": tools,
    }
    tools_json = '[{"type":"function","function":{"name":"read","parameters":{}}}]'
    assert count_tokens(body) == 6 + 5 + 5 + 4 + -(-len(tools_json) // 4)
    assert count_tokens({"messages": [USER]}) == 5
    assert count_tokens({}) == 0


async def test_a_request_over_the_limit_is_rejected_like_openai() -> None:
    long = {"role": "user", "content": "x" * 400}  # 104 tokens
    async with FakeOpenAI([Reply("fits")], context_limit=100) as server:
        client = openai.AsyncOpenAI(api_key="k", base_url=server.base_url, max_retries=0)
        with pytest.raises(openai.BadRequestError) as info:
            await client.chat.completions.create(model="m", messages=[long])  # type: ignore[list-item]
        error = info.value
        assert (error.code, error.type, error.param) == (
            "context_length_exceeded",
            "invalid_request_error",
            "messages",
        )
        assert error.body == {
            "message": "This model's maximum context length is 100 tokens. However, your "
            "messages resulted in 104 tokens. Please reduce the length of the messages.",
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
        assert server.overflowed == [104] and len(server.requests) == 1
        assert server.script  # not used by the rejected request
        ok = await client.chat.completions.create(model="m", messages=[USER])  # type: ignore[list-item]
        assert ok.choices[0].message.content == "fits"
        assert ok.usage is not None and ok.usage.prompt_tokens == 5  # the request's count
        assert ok.usage.completion_tokens == 5  # the Reply's
        await client.close()


async def test_streamed_usage_reports_the_requests_size() -> None:
    script = [Reply("one", usage=(1, 7)), Reply("two", usage=None)]
    async with FakeOpenAI(script, context_limit=10_000) as server:
        client = openai.AsyncOpenAI(api_key="k", base_url=server.base_url, max_retries=0)
        messages: Any = [USER, {"role": "assistant", "content": "a" * 40}, USER]
        stream = await client.chat.completions.create(
            model="m", messages=messages, stream=True, stream_options={"include_usage": True}
        )
        usage = [chunk.usage async for chunk in stream if chunk.usage]
        assert [(u.prompt_tokens, u.completion_tokens) for u in usage] == [
            (count_tokens(server.requests[0]), 7)
        ]
        assert usage[0].prompt_tokens == 5 + 14 + 5
        stream = await client.chat.completions.create(
            model="m", messages=messages, stream=True, stream_options={"include_usage": True}
        )
        assert [chunk.usage async for chunk in stream if chunk.usage] == []  # usage=None stays
        await client.close()


async def test_without_a_limit_usage_is_the_replys() -> None:
    async with FakeOpenAI([Reply("one", usage=(3, 4))]) as server:
        client = openai.AsyncOpenAI(api_key="k", base_url=server.base_url, max_retries=0)
        big: Any = [{"role": "user", "content": "x" * 10_000}]
        ok = await client.chat.completions.create(model="m", messages=big)
        assert ok.usage is not None
        assert (ok.usage.prompt_tokens, ok.usage.completion_tokens) == (3, 4)
        assert server.overflowed == []
        await client.close()


async def test_advertise_limit_says_it_in_the_models_list() -> None:
    async with FakeOpenAI(context_limit=8192, advertise_limit=True) as server:
        client = openai.AsyncOpenAI(api_key="k", base_url=server.base_url, max_retries=0)
        page = await client.models.list()
        assert [m.to_dict().get("max_model_len") for m in page.data] == [8192, 8192]
        await client.close()
    async with FakeOpenAI(context_limit=8192) as server:
        client = openai.AsyncOpenAI(api_key="k", base_url=server.base_url, max_retries=0)
        page = await client.models.list()
        assert all("max_model_len" not in m.to_dict() for m in page.data)
        await client.close()
    with pytest.raises(ValueError, match="context_limit"):
        FakeOpenAI(advertise_limit=True)


async def test_a_responder_answers_when_the_script_is_empty() -> None:
    seen: list[int] = []

    def responder(body: dict[str, Any]) -> Reply:
        seen.append(len(body["messages"]))
        return Reply(f"answer {len(seen)}")

    async with FakeOpenAI([Reply("scripted")], responder=responder) as server:
        client = openai.AsyncOpenAI(api_key="k", base_url=server.base_url, max_retries=0)
        answers = []
        for count in range(1, 4):
            messages: Any = [USER] * count
            reply = await client.chat.completions.create(model="m", messages=messages)
            answers.append(reply.choices[0].message.content)
        assert answers == ["scripted", "answer 1", "answer 2"]
        assert seen == [2, 3]
        assert len(server.requests) == 3
        await client.close()
    async with FakeOpenAI() as server:  # no responder: an empty script still answers 500
        client = openai.AsyncOpenAI(api_key="k", base_url=server.base_url, max_retries=0)
        with pytest.raises(openai.InternalServerError, match="no more replies"):
            await client.chat.completions.create(model="m", messages=[USER])  # type: ignore[list-item]
        await client.close()


async def test_extra_routes_serve_other_endpoints() -> None:
    def show(body: Any) -> Any:
        if body.get("model") == "missing":
            return 404, {"error": "model 'missing' not found"}
        return {"model_info": {"llama.context_length": 8192}}

    routes = {
        "GET /props": {"default_generation_settings": {"n_ctx": 4096}},
        "post /api/show": show,
    }
    async with FakeOpenAI(extra_routes=routes) as server:
        client = openai.AsyncOpenAI(api_key="k", base_url=server.base_url, max_retries=0)
        root = server.base_url.removesuffix("/v1")
        props = await client.get(f"{root}/props?x=1", cast_to=object)
        assert props == {"default_generation_settings": {"n_ctx": 4096}}
        shown = await client.post(f"{root}/api/show", cast_to=object, body={"model": "m"})
        assert shown == {"model_info": {"llama.context_length": 8192}}
        with pytest.raises(openai.NotFoundError):
            await client.post(f"{root}/api/show", cast_to=object, body={"model": "missing"})
        with pytest.raises(openai.NotFoundError):
            await client.get(f"{root}/api/tags", cast_to=object)
        assert server.routed == [
            ("GET", "/props", None),
            ("POST", "/api/show", {"model": "m"}),
            ("POST", "/api/show", {"model": "missing"}),
        ]
        assert (await client.models.list()).data  # the API's own routes still answer
        await client.close()
