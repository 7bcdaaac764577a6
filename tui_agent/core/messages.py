"""The transcript's messages: the one place their OpenAI shapes are written and read.

The conversation and the journal hold Chat Completions messages (what the provider sends
and a resumed session reads back); everything else builds and reads them here, so the
assistant-with-calls, tool-result and argument shapes exist once.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .result import Result

Message = dict[str, Any]


@dataclass(frozen=True)
class Call:
    """A tool call as the transcript holds it: ``arguments`` is the model's raw JSON."""

    id: str
    name: str
    arguments: str


def user(text: str) -> Message:
    return {"role": "user", "content": text}


def assistant(text: str, calls: Sequence[Any] = ()) -> Message:
    """The model's reply; ``calls`` are anything with ``id``, ``name`` and ``arguments``
    (a provider's ``ToolCall``, a ``Call``)."""
    message: Message = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in calls
        ]
    return message


def tool(call_id: str, result: Result) -> Message:
    """The answer to one call: the result as JSON."""
    return {"role": "tool", "tool_call_id": call_id, "content": result.to_json()}


def calls_of(message: Mapping[str, Any]) -> Iterator[Call]:
    """The tool calls an assistant message makes (none for any other message)."""
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        arguments = function.get("arguments")
        yield Call(
            str(call.get("id", "")),
            str(function.get("name", "")),
            arguments if isinstance(arguments, str) else "",
        )


def parse_arguments(raw: str) -> tuple[Any, str | None]:
    """A call's raw arguments as ``(value, None)``, or ``(None, problem)`` when they are
    not JSON. Empty text counts as ``{}``; a value that is not an object is returned as it
    is (the toolbox's validation says what is wrong with it)."""
    if not raw.strip():
        return {}, None
    try:
        return json.loads(raw), None
    except ValueError as exc:
        return None, str(exc)
    except RecursionError:
        return None, "nested too deep"


def result_of(message: Mapping[str, Any]) -> Result:
    """A tool message's result (content that is not a JSON object is its ``output``)."""
    content = message.get("content")
    try:
        data = json.loads(content or "{}") if isinstance(content, str) else content
    except ValueError:
        data = {"output": content}
    return Result(data if isinstance(data, dict) else {"output": data})
