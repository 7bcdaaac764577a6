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
    cached_tokens: int = 0  # of prompt_tokens, read from the server's cache (pricing.py)


@dataclass(frozen=True)
class Finish:
    """The server said the reply is complete: ``reason`` is its ``finish_reason`` ("stop",
    "length", "tool_calls"…), or None when it ended the stream with ``[DONE]`` alone.
    Optional for providers: a stream that simply ends counts as finished."""

    reason: str | None = None


StreamEvent = Text | Thinking | ToolCall | Usage | Finish


class ProviderError(Exception):
    """A failure the user can act on; ``message`` says what to change. Never a traceback.

    ``overflow``: the server rejected the request as larger than the model's context window
    (a shorter conversation is the fix, a retry as it is is not: never ``retryable``);
    ``limit`` is the window the error stated, None where it stated none."""

    def __init__(
        self,
        message: str,
        *,
        retryable: bool = False,
        partial: bool = False,
        retry_after: float | None = None,
        overflow: bool = False,
        limit: int | None = None,
    ) -> None:
        super().__init__(message)
        self.retryable = retryable and not overflow
        self.partial = partial
        self.retry_after = retry_after
        self.overflow = overflow
        self.limit = limit


@runtime_checkable
class Provider(Protocol):
    """``stream`` gets the request's messages as plain OpenAI Chat Completions dicts (the
    provider boundary: the transcript's typed messages are converted there), ready to
    send as JSON; read them, do not change them. ``messages.as_message`` types one again
    for a provider that would rather read attributes (the stub does).

    Optional, and not part of the checked protocol (a plugin provider may omit it):
    ``async def context_window(self) -> int | None``, the model's context window in tokens
    as the server states it, None when unknown. It is asked once per provider object, must
    not raise, and should answer within a few seconds. A provider whose request was
    rejected for its length raises ``ProviderError(..., overflow=True, limit=N or None)``."""

    name: str
    model: str

    def stream(
        self, messages: Sequence[Mapping[str, Any]], tools: list[dict[str, Any]]
    ) -> AsyncIterator[StreamEvent]: ...

    async def models(self) -> list[str]: ...


async def reply_text(stream: AsyncIterator[StreamEvent]) -> str:
    """The text of one streamed reply (thinking and the rest left out), the stream closed
    after it, also when reading it fails."""
    parts: list[str] = []
    try:
        async for event in stream:
            if isinstance(event, Text):
                parts.append(event.text)
    finally:
        closer = getattr(stream, "aclose", None)
        if closer is not None:
            await closer()
    return "".join(parts)
