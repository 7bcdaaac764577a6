"""The testing kit rejects transcripts the way the OpenAI API does."""

from __future__ import annotations

from pathlib import Path
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
