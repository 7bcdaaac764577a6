"""The transcript: OpenAI chat messages, kept valid for the next request."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

Message = dict[str, Any]


class Conversation:
    """An ordered list of chat messages (``role``/``content``/``tool_calls``…)."""

    def __init__(self, messages: list[Message] | None = None) -> None:
        self.messages: list[Message] = list(messages or [])

    def append(self, message: Message) -> None:
        if "role" not in message:
            raise ValueError("a message needs a role")
        self.messages.append(message)

    def clear(self) -> None:
        self.messages.clear()

    def __len__(self) -> int:
        return len(self.messages)

    def __iter__(self) -> Iterator[Message]:
        return iter(self.messages)

    def __getitem__(self, index: int) -> Message:
        return self.messages[index]


def missing_tool_results(messages: list[Message]) -> list[tuple[str, str]]:
    """``(call id, tool name)`` of calls in the last assistant message that have no result."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.get("role") == "assistant":
            answered = {
                m.get("tool_call_id") for m in messages[index + 1 :] if m.get("role") == "tool"
            }
            return [
                (call["id"], call.get("function", {}).get("name", ""))
                for call in message.get("tool_calls") or []
                if call.get("id") not in answered
            ]
        if message.get("role") == "user":
            return []
    return []
