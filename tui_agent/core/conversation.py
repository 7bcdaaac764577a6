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
