"""What the fake server checks and counts: a transcript the OpenAI API would accept
(``transcript_problem``) and a request's tokens (``count_tokens``, an approximation)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

ROLES = {"system", "developer", "user", "assistant", "tool"}


def transcript_problem(messages: Any) -> str | None:
    """What the OpenAI API would reject in ``messages`` (400), or None when it is valid.
    Typed messages (``session.conversation``'s) are checked as the OpenAI dicts they map."""
    if not isinstance(messages, list) or not messages:
        return "'messages' must be a non-empty array"
    open_ids: set[str] | None = None
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping):
            return f"Invalid type for 'messages[{index}]': expected an object"
        role = message.get("role")
        if role not in ROLES:
            return f"Invalid value for 'messages[{index}].role': {role!r}"
        if role == "tool":
            call_id = message.get("tool_call_id")
            if open_ids is None or call_id not in open_ids:
                return (
                    "Invalid parameter: messages with role 'tool' must be a response to a "
                    f"preceeding message with 'tool_calls' (messages[{index}], id {call_id!r})"
                )
            open_ids.discard(call_id)
            if not isinstance(message.get("content"), (str, list)):
                return f"Invalid type for 'messages[{index}].content': expected a string"
            continue
        if open_ids:
            return (
                "An assistant message with 'tool_calls' must be followed by tool messages "
                "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                f"response messages: {', '.join(sorted(open_ids))}"
            )
        open_ids = None
        if role == "assistant":
            calls = message.get("tool_calls") or []
            if message.get("content") is None and not calls:
                return (
                    f"Invalid 'messages[{index}]': an assistant message needs content or tool_calls"
                )
            if calls:
                ids = [c.get("id") for c in calls if isinstance(c, dict)]
                if len(ids) != len(calls) or not all(isinstance(i, str) and i for i in ids):
                    return f"Invalid 'messages[{index}].tool_calls': every call needs an id"
                open_ids = set(ids)
        elif not isinstance(message.get("content"), (str, list)):
            return f"Invalid type for 'messages[{index}].content': expected a string"
    if open_ids:
        return (
            "An assistant message with 'tool_calls' must be followed by tool messages "
            "responding to each 'tool_call_id'. The following tool_call_ids did not have "
            f"response messages: {', '.join(sorted(open_ids))}"
        )
    return None


def _quarter(text: str) -> int:
    return -(-len(text) // 4)


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: their text
        return "".join(
            part["text"]
            for part in content
            if isinstance(part, Mapping) and isinstance(part.get("text"), str)
        )
    return ""


def count_tokens(body: Mapping[str, Any]) -> int:
    """The fake's token count of a chat request: per message 4, plus ceil(characters / 4) of
    its text content, plus ceil(characters / 4) of each tool call's name and arguments
    together; plus ceil(characters / 4) of ``tools`` as compact JSON. Deterministic, and
    roughly what real tokenizers give for English and code (they differ); it is the number
    the fake holds against ``context_limit`` and reports as ``usage.prompt_tokens``."""
    total = 0
    for message in body.get("messages") or []:
        if not isinstance(message, Mapping):
            continue
        total += 4 + _quarter(_content_text(message.get("content")))
        for call in message.get("tool_calls") or []:
            function = call.get("function") if isinstance(call, Mapping) else None
            if isinstance(function, Mapping):
                name, arguments = function.get("name") or "", function.get("arguments") or ""
                total += _quarter(f"{name}{arguments}")
    tools = body.get("tools")
    if tools:
        total += _quarter(json.dumps(tools, separators=(",", ":")))
    return total
