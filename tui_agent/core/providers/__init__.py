"""Built-in providers and the lookup that plugins extend with ``config.provider``.

The ``[models."NAME"]`` tables' check is registered with the config here: each must be a
table, and each key it knows (``MODEL_RULES``: ``images``, ``context_window``) must have
its kind of value; a key it does not know is left alone."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..project import config as _config
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

# The settings of one model, ``[models."NAME"] key = value``: what each must be, said the
# way the problem is said (``models."qwen3:8b".images must be true or false, not 'yes'``).
MODEL_RULES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "images": (lambda v: isinstance(v, bool), "true or false"),
    "context_window": (
        lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1024,
        "a whole number of tokens, 1024 or more",
    ),
}


@_config.validator("models")
def _models_problems(table: Any) -> list[str]:
    """The ``[models]`` table's problems (the first is said; the table is then set aside,
    as any setting with the wrong kind of value is)."""
    import reprlib

    if not isinstance(table, dict):
        return [f'models must be a table of tables ([models."name"]), not {reprlib.repr(table)}']
    found: list[str] = []
    for name, entry in table.items():
        if not isinstance(entry, dict):
            found.append(f'models."{name}" must be a table, not {reprlib.repr(entry)}')
            continue
        for key, value in entry.items():
            rule = MODEL_RULES.get(key)
            if rule is not None and not rule[0](value):
                found.append(f'models."{name}".{key} must be {rule[1]}, not {reprlib.repr(value)}')
    return found


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
