"""Chat Completions stream chunks, as the servers that speak the dialect really send them.

``ReplyReader`` turns decoded chunk objects into stream events. It knows the variants seen
from real providers: reasoning as ``reasoning_content`` (DeepSeek, Qwen, xAI, vLLM),
``reasoning`` (Groq, OpenRouter, Ollama) or ``reasoning_details`` items (OpenRouter,
Snowflake); ``content`` as a list of typed parts (Mistral's magistral); a leading
``<think>…</think>`` in the text (reasoning models served without a reasoning parser);
tool calls without ``index`` (Mistral) or with their name repeated; usage reported on
every chunk as a running total (Perplexity: the last one counts, never a sum).
"""

from __future__ import annotations

import json
import logging
from typing import Any

from .base import Finish, StreamEvent, Text, Thinking, ToolCall, Usage

log = logging.getLogger("tui_agent.providers")

OPEN_TAG, CLOSE_TAG = "<think>", "</think>"


class ShapeError(ValueError):
    """A chunk whose JSON is fine but whose shape this reader does not know: not retried,
    because the same server will send the same shape again."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"`{field}` {problem}")
        self.field = field


class StreamErrorChunk(Exception):
    """The server reported an error inside the stream (a chunk with a top-level ``error``)."""

    def __init__(self, message: str, code: Any = None) -> None:
        super().__init__(message)
        self.code = code


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _text(value: Any, field: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ShapeError(field, f"is {_kind(value)}, not a string")
    return value


def _cached(usage: dict[str, Any]) -> int:
    """OpenAI's ``prompt_tokens_details.cached_tokens`` (0 when the server says none)."""
    details = usage.get("prompt_tokens_details")
    return _count(details.get("cached_tokens")) if isinstance(details, dict) else 0


def _count(value: Any) -> int:
    """A token count; usage is informative, so a malformed one counts as 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _partial_tag(text: str, tag: str) -> int:
    """How many characters at the end of ``text`` could begin ``tag``."""
    for size in range(min(len(tag) - 1, len(text)), 0, -1):
        if text.endswith(tag[:size]):
            return size
    return 0


class ThinkTags:
    """Splits a leading ``<think>…</think>`` off streamed text, tags split across chunks
    included. Text that does not start with the tag passes through untouched."""

    def __init__(self) -> None:
        self.state = "start"  # start → think → after → text
        self.held = ""

    def feed(self, text: str) -> list[StreamEvent]:
        if self.state == "text":
            return [Text(text)]
        self.held += text
        out: list[StreamEvent] = []
        if self.state == "start":
            lead = self.held.lstrip()
            if not lead or (len(lead) < len(OPEN_TAG) and OPEN_TAG.startswith(lead)):
                return out  # undecided yet
            if not lead.startswith(OPEN_TAG):
                self.state = "text"
                held, self.held = self.held, ""
                return [Text(held)]
            self.state, self.held = "think", lead[len(OPEN_TAG) :]
        if self.state == "think":
            end = self.held.find(CLOSE_TAG)
            if end < 0:
                keep = _partial_tag(self.held, CLOSE_TAG)
                thought = self.held[: len(self.held) - keep]
                self.held = self.held[len(self.held) - keep :]
                return [Thinking(thought)] if thought else out
            if end:
                out.append(Thinking(self.held[:end]))
            self.state, self.held = "after", self.held[end + len(CLOSE_TAG) :]
        rest = self.held.lstrip()  # state "after": the blank lines after the tag go
        self.held = ""
        if rest:
            self.state = "text"
            out.append(Text(rest))
        return out

    def flush(self) -> list[StreamEvent]:
        held, self.held = self.held, ""
        if not held:
            return []
        return [Thinking(held)] if self.state == "think" else [Text(held)]


class ReplyReader:
    """One reply's chunks in, stream events out; ``end()`` gives what comes at the end."""

    def __init__(self) -> None:
        self.calls: dict[int, dict[str, str]] = {}
        # each call's arguments as their pieces, joined at the end: ``+=`` on the text in
        # ``calls`` copied it whole for every piece (a 100 KB ``write`` in 20,000 pieces:
        # 1 GB copied)
        self.arguments: dict[int, list[str]] = {}
        self.last_call = 0
        self.usage: Usage | None = None
        self.finish_reason: str | None = None
        self.shown = False  # text or thinking was handed on (a retry would repeat it)
        self.tags = ThinkTags()

    def feed(self, chunk: Any) -> list[StreamEvent]:
        if not isinstance(chunk, dict):
            raise ShapeError("chunk", f"is {_kind(chunk)}, not an object")
        error = chunk.get("error")
        if error:
            message = error.get("message") if isinstance(error, dict) else error
            code = error.get("code") if isinstance(error, dict) else None
            raise StreamErrorChunk(str(message or "the server reported an error"), code)
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self.usage = Usage(
                _count(usage.get("prompt_tokens")),
                _count(usage.get("completion_tokens")),
                _count(usage.get("total_tokens")),
                _cached(usage),
            )
        choices = chunk.get("choices")
        if choices is None:
            return []
        if not isinstance(choices, list):
            raise ShapeError("choices", f"is {_kind(choices)}, not a list")
        out: list[StreamEvent] = []
        for number, choice in enumerate(choices):
            where = f"choices[{number}]"
            if not isinstance(choice, dict):
                raise ShapeError(where, f"is {_kind(choice)}, not an object")
            delta = choice.get("delta")
            if delta is not None:
                if not isinstance(delta, dict):
                    raise ShapeError(f"{where}.delta", f"is {_kind(delta)}, not an object")
                self._delta(delta, f"{where}.delta", out)
            finish = choice.get("finish_reason")
            if finish is not None:
                self.finish_reason = _text(finish, f"{where}.finish_reason") or None
        if out:
            self.shown = True
        return out

    def _delta(self, delta: dict[str, Any], where: str, out: list[StreamEvent]) -> None:
        self._reasoning(delta, where, out)
        content = delta.get("content")
        if isinstance(content, list):
            self._parts(content, f"{where}.content", out)
        elif isinstance(content, str):
            if content:
                out.extend(self.tags.feed(content))
        elif content is not None:
            raise ShapeError(f"{where}.content", f"is {_kind(content)}, not a string or a list")
        calls = delta.get("tool_calls")
        if calls is None:
            return
        if not isinstance(calls, list):
            raise ShapeError(f"{where}.tool_calls", f"is {_kind(calls)}, not a list")
        for number, part in enumerate(calls):
            self._call(part, f"{where}.tool_calls[{number}]")

    def _reasoning(self, delta: dict[str, Any], where: str, out: list[StreamEvent]) -> None:
        for key in ("reasoning_content", "reasoning"):
            text = _text(delta.get(key), f"{where}.{key}")
            if text:
                out.append(Thinking(text))
                return  # OpenRouter sends reasoning_details beside it, with the same text
        details = delta.get("reasoning_details")
        if not details:
            return
        if not isinstance(details, list):
            raise ShapeError(f"{where}.reasoning_details", f"is {_kind(details)}, not a list")
        for number, item in enumerate(details):
            field = f"{where}.reasoning_details[{number}]"
            if not isinstance(item, dict):
                raise ShapeError(field, f"is {_kind(item)}, not an object")
            key = {"reasoning.text": "text", "reasoning.summary": "summary"}.get(
                str(item.get("type")), ""
            )
            text = _text(item.get(key), f"{field}.{key}") if key else ""  # encrypted: none
            if text:
                out.append(Thinking(text))

    def _parts(self, parts: list[Any], where: str, out: list[StreamEvent]) -> None:
        for number, part in enumerate(parts):
            field = f"{where}[{number}]"
            if not isinstance(part, dict):
                raise ShapeError(field, f"is {_kind(part)}, not an object")
            kind = part.get("type")
            if kind == "text":
                text = _text(part.get("text"), f"{field}.text")
                if text:
                    out.extend(self.tags.feed(text))
            elif kind == "thinking":
                thought = part.get("thinking")
                if isinstance(thought, list):
                    self._parts_as_thinking(thought, f"{field}.thinking", out)
                elif thought:
                    out.append(Thinking(_text(thought, f"{field}.thinking")))
            else:  # references, images…: nothing to show as text
                log.info("ignoring a content part of type %r", kind)

    def _parts_as_thinking(self, parts: list[Any], where: str, out: list[StreamEvent]) -> None:
        for number, part in enumerate(parts):
            field = f"{where}[{number}]"
            if isinstance(part, str):
                text = part
            elif isinstance(part, dict):
                text = _text(part.get("text"), f"{field}.text")
            else:
                raise ShapeError(field, f"is {_kind(part)}, not an object")
            if text:
                out.append(Thinking(text))

    def _call(self, part: Any, where: str) -> None:
        if not isinstance(part, dict):
            raise ShapeError(where, f"is {_kind(part)}, not an object")
        call_id = _text(part.get("id"), f"{where}.id")
        index = part.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            # no index (Mistral): a new id starts a call, anything else goes on with the last
            known = {slot["id"] for slot in self.calls.values()}
            fresh = not self.calls or (call_id and call_id not in known)
            index = max(self.calls) + 1 if fresh and self.calls else self.last_call
        self.last_call = index
        slot = self.calls.setdefault(index, {"id": "", "name": ""})
        pieces = self.arguments.setdefault(index, [])
        if call_id:
            slot["id"] = call_id
        function = part.get("function")
        if function is None:
            return
        if not isinstance(function, dict):
            raise ShapeError(f"{where}.function", f"is {_kind(function)}, not an object")
        name = _text(function.get("name"), f"{where}.function.name")
        if name.startswith(slot["name"]):  # some servers repeat the whole name each delta
            slot["name"] = name or slot["name"]
        else:
            slot["name"] += name
        arguments = function.get("arguments")
        if isinstance(arguments, dict):  # an object instead of its JSON text
            arguments = json.dumps(arguments)
        pieces.append(_text(arguments, f"{where}.function.arguments"))

    def end(self) -> list[StreamEvent]:
        """The events that close a reply the server finished: held text, usage, the tool
        calls (never before the end: a cut call must not run) and the finish reason."""
        out = self.tags.flush()
        if out:
            self.shown = True
        if self.usage is not None:
            out.append(self.usage)
        seen: set[str] = set()
        for index in sorted(self.calls):
            slot = self.calls[index]
            call_id = slot["id"] or f"call_{index}"
            while call_id in seen:  # the API wants each call answered by its own id
                call_id += f"_{index}"
            seen.add(call_id)
            out.append(ToolCall(call_id, slot["name"], "".join(self.arguments[index])))
        out.append(Finish(self.finish_reason))
        return out
