"""Built-in providers and the lookup that plugins extend with ``config.provider``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .base import (
    Finish,
    Provider,
    ProviderError,
    StreamEvent,
    Text,
    Thinking,
    ToolCall,
    Usage,
)


def _openai(settings: Mapping[str, Any]) -> Provider:
    from .openai import OpenAIProvider

    return OpenAIProvider(settings)


def _stub(settings: Mapping[str, Any]) -> Provider:
    from .stub import StubProvider

    return StubProvider(settings)


BUILTIN: dict[str, Callable[[Mapping[str, Any]], Provider]] = {"openai": _openai, "stub": _stub}

__all__ = [
    "BUILTIN",
    "Finish",
    "Provider",
    "ProviderError",
    "StreamEvent",
    "Text",
    "Thinking",
    "ToolCall",
    "Usage",
]
