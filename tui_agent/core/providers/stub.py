"""The offline ``stub`` provider: deterministic, no key, no network.

It thinks, says, and when tools exist calls one; after a tool result it only says.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from ..protocol.messages import AssistantMessage, ToolMessage, UserMessage, as_message
from .base import StreamEvent, Text, Thinking, ToolCall, Usage

PREFERRED = ("list", "glob", "read")
HOW_TO = (
    "To use a real model, set `OPENAI_API_KEY` (and `OPENAI_BASE_URL` for Ollama, LM Studio, "
    "vLLM or llama.cpp), or put `provider`, `model` and `base_url` in "
    "`~/.config/tui-agent/config.toml`, or pass `--model` / `--base-url`."
)


def example_value(prop: Any) -> Any:
    if not isinstance(prop, dict):
        return ""
    if "default" in prop:
        return prop["default"]
    if prop.get("enum"):
        return prop["enum"][0]
    kind = prop.get("type")
    kind = str(kind[0] if isinstance(kind, list) and kind else kind)
    return {
        "integer": 1,
        "number": 1,
        "boolean": False,
        "array": [],
        "object": {},
        "null": None,
    }.get(kind, ".")


def pick_tool(tools: list[dict[str, Any]]) -> dict[str, Any] | None:
    functions: dict[str, dict[str, Any]] = {
        t["function"]["name"]: t["function"] for t in tools if "function" in t
    }
    for name in PREFERRED:
        if name in functions:
            return functions[name]
    return functions[sorted(functions)[0]] if functions else None


def words(text: str) -> list[str]:
    parts = text.split(" ")
    return [p + (" " if i < len(parts) - 1 else "") for i, p in enumerate(parts)]


class StubProvider:
    name = "stub"

    def __init__(self, settings: Mapping[str, Any] | None = None) -> None:
        self.model = str((settings or {}).get("model") or "stub")
        self.calls = 0

    async def models(self) -> list[str]:
        return ["stub"]

    async def context_window(self) -> int | None:
        """No server to ask: the budget's setting or default applies."""
        return None

    async def stream(
        self, messages: Sequence[Mapping[str, Any]], tools: list[dict[str, Any]]
    ) -> AsyncIterator[StreamEvent]:
        last = as_message(messages[-1]) if messages else UserMessage("")
        if isinstance(last, ToolMessage):
            name = next(
                (
                    call.name
                    for message in map(as_message, reversed(messages))
                    if isinstance(message, AssistantMessage)
                    for call in message.calls
                    if call.id == last.call_id
                ),
                "the tool",
            )
            reply = (
                f"The `{name}` tool {'finished' if last.result.ok else 'failed'}; its result "
                f"is above. This is the offline stub provider, so that is all it can do. {HOW_TO}"
            )
            for piece in words(reply):
                yield Text(piece)
            yield _usage(messages, tools, reply)
            return
        prompt = last.text
        yield Thinking(f"The user wrote {len(prompt.split())} words. I am the offline stub.")
        reply = f"Stub reply to: {prompt.strip()[:200]}"
        tool = pick_tool(tools)
        if tool is None:
            reply += f"\n\n{HOW_TO}"
        for piece in words(reply):
            yield Text(piece)
        if tool is not None:
            self.calls += 1
            params = tool.get("parameters", {})
            props = params.get("properties", {})
            args = {key: example_value(props.get(key)) for key in params.get("required", [])}
            yield ToolCall(f"stub-call-{self.calls}", tool["name"], json.dumps(args))
        yield _usage(messages, tools, reply)


def _usage(messages: Sequence[Mapping[str, Any]], tools: list[dict[str, Any]], reply: str) -> Usage:
    """What a server would report, roughly: a quarter of the request's characters (messages
    and tool definitions as JSON) in, a quarter of the reply's out, so the context budget's
    count means the same with the stub as with a real model."""
    sent = len(json.dumps(list(messages), default=str)) + len(json.dumps(tools, default=str))
    prompt, completion = -(-sent // 4), -(-len(reply) // 4)
    return Usage(prompt, completion, prompt + completion)


def factory(settings: Mapping[str, Any]) -> StubProvider:
    return StubProvider(settings)
