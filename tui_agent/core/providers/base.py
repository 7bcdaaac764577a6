"""The provider interface: a reply arrives as a stream of events."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Thinking:
    text: str


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # raw JSON, exactly as the model sent it


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0


@dataclass(frozen=True)
class Finish:
    """The server said the reply is complete: ``reason`` is its ``finish_reason`` ("stop",
    "length", "tool_calls"…), or None when it ended the stream with ``[DONE]`` alone.
    Optional for providers: a stream that simply ends counts as finished."""

    reason: str | None = None


StreamEvent = Text | Thinking | ToolCall | Usage | Finish


class ProviderError(Exception):
    """A failure the user can act on; ``message`` says what to change. Never a traceback."""

    def __init__(
        self,
        message: str,
        *,
        retryable: bool = False,
        partial: bool = False,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.partial = partial
        self.retry_after = retry_after


@runtime_checkable
class Provider(Protocol):
    """``stream`` gets the request's messages as plain OpenAI Chat Completions dicts (the
    provider boundary: the transcript's typed messages are converted there), ready to
    send as JSON; read them, do not change them. ``messages.as_message`` types one again
    for a provider that would rather read attributes (the stub does)."""

    name: str
    model: str

    def stream(
        self, messages: Sequence[Mapping[str, Any]], tools: list[dict[str, Any]]
    ) -> AsyncIterator[StreamEvent]: ...

    async def models(self) -> list[str]: ...
