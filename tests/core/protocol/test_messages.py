"""core/messages: the transcript's typed messages, each a read-only mapping of its OpenAI
dict (the shape the provider sends and the journal writes)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

import tui_agent
from tui_agent.core.conversation.conversation import Conversation, repair
from tui_agent.core.protocol import messages
from tui_agent.core.protocol.messages import (
    AssistantMessage,
    Call,
    Message,
    SystemMessage,
    ToolMessage,
    UserMessage,
    from_openai,
)
from tui_agent.core.protocol.result import Result
from tui_agent.core.providers.base import ToolCall
from tui_agent.testing import transcript_problem

CALL = {"id": "c1", "type": "function", "function": {"name": "read", "arguments": '{"a": 1}'}}

# OpenAI dicts as a journal, a provider or a plugin may hold them: every key, in order, is
# kept through dict -> typed -> dict (the ones tui-agent does not model too)
ROUND_TRIPS: list[tuple[dict[str, Any], type[Message]]] = [
    ({"role": "user", "content": "hi"}, UserMessage),
    ({"role": "user", "content": "hi", "name": "ann", "x-extra": {"nested": [1, 2]}}, UserMessage),
    (
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "image_url"}]},
        UserMessage,
    ),
    ({"content": "keys first", "role": "user"}, UserMessage),
    ({"role": "system", "content": "be brief"}, SystemMessage),
    ({"role": "developer", "content": "be briefer"}, SystemMessage),
    ({"role": "assistant", "content": "done"}, AssistantMessage),
    ({"role": "assistant", "content": None, "tool_calls": [CALL]}, AssistantMessage),
    (
        {
            "role": "assistant",
            "content": "thinking out loud",
            "reasoning_content": "because",
            "tool_calls": [{**CALL, "index": 0}],
            "refusal": None,
        },
        AssistantMessage,
    ),
    ({"role": "assistant", "tool_calls": "not a list"}, AssistantMessage),
    ({"role": "tool", "tool_call_id": "c1", "content": '{"ok": true}'}, ToolMessage),
    ({"role": "tool", "tool_call_id": "c1", "content": "x", "name": "read"}, ToolMessage),
    ({"role": "bogus", "content": 5, "anything": [None, True, 1.5]}, Message),
]


@pytest.mark.parametrize(("data", "kind"), ROUND_TRIPS)
def test_dict_to_typed_to_dict_is_exact(data: dict[str, Any], kind: type[Message]) -> None:
    original, data = data, copy.deepcopy(data)  # the parameters are shared: change a copy
    message = from_openai(data)
    assert type(message) is kind
    assert message.to_openai() == original
    assert json.dumps(message.to_openai()) == json.dumps(original)  # key order too
    assert json.dumps(dict(message)) == json.dumps(original)
    assert messages.openai_dict(message) == original
    # it is a copy both ways: changing either dict changes nothing in the message
    data["role"] = "changed"
    if isinstance(data.get("tool_calls"), list):
        data["tool_calls"][0]["id"] = "changed"
    given = message.to_openai()
    given["content"] = "changed"
    assert message.to_openai() == original
    assert from_openai(message) is message  # typed already


@pytest.mark.parametrize(("data", "kind"), ROUND_TRIPS)
def test_a_typed_message_reads_and_compares_as_its_dict(
    data: dict[str, Any], kind: type[Message]
) -> None:
    message = from_openai(data)
    assert message["role"] == data["role"] == message.role
    assert message.get("content") == data.get("content")
    assert message.get("missing", "default") == "default"
    assert "role" in message and "missing" not in message
    assert len(message) == len(data) and list(message) == list(data)
    assert dict(message) == data and list(message.items()) == list(data.items())
    assert message == data and data == message and [data] == [message]
    assert message == from_openai(data) and message == copy.deepcopy(message)
    assert message != {**data, "role": "other"} and message != "text"
    with pytest.raises(TypeError):
        message["role"] = "user"  # type: ignore[index]
    with pytest.raises(AttributeError):
        message.text = "no"  # type: ignore[misc]


def test_a_message_needs_a_string_role() -> None:
    for data in ({"content": "no role"}, {"role": None, "content": "x"}, {"role": 3}):
        with pytest.raises(ValueError, match="role"):
            from_openai(data)
    with pytest.raises(ValueError, match="role"):
        Conversation().append({"content": "no role"})


def test_typed_constructors_give_the_openai_shapes() -> None:
    call = ToolCall("c1", "read", '{"path": "a.txt"}')
    turn = [
        SystemMessage("rules"),
        UserMessage("read a.txt"),
        AssistantMessage("Reading it.", [call, Call("c2", "grep", "")]),
        ToolMessage("c1", Result({"output": "hello"})),
        ToolMessage("c2", Result({"error": "no"})),
        AssistantMessage("It says hello.", name="bot"),
        AssistantMessage("", [call]),
    ]
    assert [m.to_openai() for m in turn] == [
        {"role": "system", "content": "rules"},
        {"role": "user", "content": "read a.txt"},
        {
            "role": "assistant",
            "content": "Reading it.",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"path": "a.txt"}'},
                },
                {"id": "c2", "type": "function", "function": {"name": "grep", "arguments": ""}},
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": '{"output": "hello", "ok": true}'},
        {"role": "tool", "tool_call_id": "c2", "content": '{"error": "no", "ok": false}'},
        {"role": "assistant", "content": "It says hello.", "name": "bot"},
        {"role": "assistant", "content": None, "tool_calls": [turn[2]["tool_calls"][0]]},
    ]
    assert transcript_problem(turn[:-1]) is None
    assert turn[2].calls == (Call("c1", "read", call.arguments), Call("c2", "grep", ""))
    assert turn[-1].text == "" and turn[5].text == "It says hello."
    # what a constructor made reads back the same from its dict
    for message in turn:
        again = from_openai(message.to_openai())
        assert again == message and type(again) is type(message)
        if isinstance(message, AssistantMessage):
            assert isinstance(again, AssistantMessage) and again.calls == message.calls
        if isinstance(message, ToolMessage):
            assert isinstance(again, ToolMessage) and again.result == message.result


def test_typed_attributes_of_odd_shapes() -> None:
    odd = from_openai(
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}, 7],
            "tool_calls": [
                {"id": "x", "function": {"name": "read"}},
                "not a call",
                {"function": "nope", "id": 5},
                {"id": "y", "type": "function", "function": {"name": "w", "arguments": "{}"}},
            ],
        }
    )
    assert isinstance(odd, AssistantMessage)
    assert odd.text == "ab"
    assert odd.calls == (Call("x", "read", ""), Call("", "", ""), Call("y", "w", "{}"))
    assert UserMessage([{"type": "image_url", "image_url": {"url": "u"}}]).text == ""
    assert from_openai({"role": "user", "content": None}).text == ""
    tool = from_openai({"role": "tool", "content": "x"})
    assert isinstance(tool, ToolMessage) and tool.call_id == ""
    assert from_openai({"role": "assistant"}).calls == ()  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"error": "no", "ok": false}', {"error": "no", "ok": False}),
        ('{"output": 1}', {"output": 1, "ok": True}),
        ("plain words", {"output": "plain words", "ok": True}),
        ("[1]", {"output": [1], "ok": True}),
        ("", {"ok": True}),
        ("[" * 100_000, {"output": "[" * 100_000, "ok": True}),
        ([{"type": "text", "text": "t"}], {"output": [{"type": "text", "text": "t"}], "ok": True}),
    ],
)
def test_a_tool_message_result(content: Any, expected: dict[str, Any]) -> None:
    message = from_openai({"role": "tool", "tool_call_id": "c", "content": content})
    assert isinstance(message, ToolMessage)
    assert message.call_id == "c"
    assert message.result.to_dict() == expected


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
    for got, said in (messages.parse_arguments(raw), Call("c", "n", raw).parsed()):
        assert got == value
        assert (said is None) == (problem is None)
        if problem is not None:
            assert problem in str(said)


def test_the_conversation_types_what_it_is_given() -> None:
    given = {"role": "user", "content": "hi", "name": "ann"}
    conversation = Conversation([{"role": "system", "content": "s"}])
    typed = conversation.append(given)
    given["content"] = "changed later"
    assistant = AssistantMessage("ok")
    assert conversation.append(assistant) is assistant
    assert [type(m) for m in conversation] == [SystemMessage, UserMessage, AssistantMessage]
    assert conversation[1] is typed and isinstance(typed, UserMessage) and typed.text == "hi"
    assert conversation.messages == [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "hi", "name": "ann"},
        {"role": "assistant", "content": "ok"},
    ]


def test_repair_types_the_journal_and_keeps_keys_it_does_not_model() -> None:
    journaled = [
        {"role": "user", "content": "q", "name": "ann", "tool_call_id": "junk", "x": [1]},
        {"role": "user", "content": "q2", "name": 5},
        {
            "role": "assistant",
            "content": "a",
            "reasoning_content": "why",
            "tool_calls": [{**CALL, "index": 0}],
        },
        {"role": "tool", "tool_call_id": "nobody", "content": "{}"},
        {"role": "assistant", "content": "b", "tool_call_id": "junk", "name": "bot"},
        {"role": "tool", "tool_call_id": "c1", "content": "{}", "name": "read", "meta": 1},
    ]
    fixed = repair(journaled, "interrupted")
    assert fixed == [
        {"role": "user", "content": "q", "name": "ann", "x": [1]},
        {"role": "user", "content": "q2"},
        {"role": "assistant", "content": "a", "reasoning_content": "why", "tool_calls": [CALL]},
        {
            "role": "tool",
            "tool_call_id": "c1",
            "content": '{"error": "interrupted", "name": "read", "ok": false}',
        },
        {"role": "assistant", "content": "b", "name": "bot"},
    ]
    assert [type(m) for m in fixed] == [
        UserMessage,
        UserMessage,
        AssistantMessage,
        ToolMessage,
        AssistantMessage,
    ]
    assert fixed[2].calls == (Call("c1", "read", '{"a": 1}'),)  # type: ignore[attr-defined]
    assert repair(fixed, "interrupted") == fixed  # typed input too: nothing left to repair


def test_the_message_types_are_public_api() -> None:
    assert tui_agent.UserMessage is UserMessage
    assert tui_agent.AssistantMessage is AssistantMessage
    assert tui_agent.ToolMessage is ToolMessage
    assert tui_agent.SystemMessage is SystemMessage
    assert tui_agent.Message is Message and tui_agent.Call is Call
