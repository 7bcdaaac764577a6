"""The testing kit rejects transcripts the way the OpenAI API does."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from tui_agent.testing import FakeOpenAI, Reply, transcript_problem

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
