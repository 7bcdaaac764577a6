"""core/messages: the one place the transcript's message shapes are written and read."""

from __future__ import annotations

from typing import Any

import pytest

from tui_agent.core import messages
from tui_agent.core.providers.base import ToolCall
from tui_agent.core.result import Result
from tui_agent.testing import transcript_problem


def test_a_turn_built_here_is_a_transcript_the_api_accepts() -> None:
    call = ToolCall("c1", "read", '{"path": "a.txt"}')
    turn = [
        messages.user("read a.txt"),
        messages.assistant("Reading it.", [call]),
        messages.tool("c1", Result({"output": "hello"})),
        messages.assistant("It says hello."),
    ]
    assert transcript_problem(turn) is None
    assert turn[1]["tool_calls"][0]["function"] == {"name": "read", "arguments": call.arguments}
    assert messages.assistant("")["content"] is None  # tool calls alone: no empty text
    assert list(messages.calls_of(turn[1])) == [messages.Call("c1", "read", call.arguments)]
    assert list(messages.calls_of(turn[0])) == []
    assert messages.result_of(turn[2]).to_dict() == {"output": "hello", "ok": True}


@pytest.mark.parametrize(
    ("raw", "value", "problem"),
    [
        ("", {}, None),
        ("  ", {}, None),
        ('{"a": 1}', {"a": 1}, None),
        ("[1, 2]", [1, 2], None),  # not an object: the toolbox's validation says so
        ('{"a": ', None, "Expecting value"),
        ("[" * 100_000, None, "nested too deep"),
    ],
)
def test_parse_arguments(raw: str, value: Any, problem: str | None) -> None:
    got, said = messages.parse_arguments(raw)
    assert got == value
    assert (said is None) == (problem is None)
    if problem is not None:
        assert problem in str(said)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"error": "no", "ok": false}', {"error": "no", "ok": False}),
        ("plain words", {"output": "plain words", "ok": True}),
        ("[1]", {"output": [1], "ok": True}),
    ],
)
def test_result_of(content: str, expected: dict[str, Any]) -> None:
    message = {"role": "tool", "tool_call_id": "c", "content": content}
    assert messages.result_of(message).to_dict() == expected
