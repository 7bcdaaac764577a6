"""The transcript's messages, typed: user, assistant (with its tool calls), tool, system.

Code reads the typed attributes (``UserMessage.text``, ``AssistantMessage.calls``,
``ToolMessage.call_id`` and ``.result``); a message's OpenAI Chat Completions dict is
handed on only at the edges: the request the ``openai`` provider sends
(``openai_dict``) and the journal's JSON lines (read back by ``conversation.repair``).
Each message is also a read-only mapping of that dict, so ``message["role"]``, ``.get``,
``dict(message)`` and ``message == {"role": "user", "content": "hi"}`` work as they did
when the transcript held dicts (plugins and tests rely on it).

A message keeps the dict it was made from, keys it does not model included (``name``,
``reasoning_content``…): nothing is lost between the journal, the conversation and the
request. The typed attributes are read from that dict on first use and kept, so a long
journal is typed for little more than the dicts it holds.
"""

from __future__ import annotations

import json
from collections.abc import ItemsView, Iterable, Iterator, KeysView, Mapping, ValuesView
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from .result import Result


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call of an assistant message: ``arguments`` is the model's raw JSON."""

    id: str
    name: str
    arguments: str

    def parsed(self) -> tuple[Any, str | None]:
        """The arguments as ``(value, None)``, or ``(None, problem)`` (``parse_arguments``)."""
        return parse_arguments(self.arguments)

    def to_openai(self) -> dict[str, Any]:
        """The entry of an assistant message's ``tool_calls``."""
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


class CallLike(Protocol):
    """Anything with a call's fields: a ``Call``, a provider's ``ToolCall``."""

    @property
    def id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def arguments(self) -> str: ...


class Message(Mapping[str, Any]):
    """A message of the transcript: a role, typed attributes in the subclasses, and the
    read-only mapping of its OpenAI dict. A role tui-agent does not know (one a plugin
    made up) gives a plain ``Message``; ``from_openai`` makes any of them."""

    __slots__ = ("_data",)
    ROLE: ClassVar[str] = ""
    _data: dict[str, Any]

    @classmethod
    def _adopt(cls, data: dict[str, Any]) -> Message:
        """A message over ``data`` itself (no copy: the caller hands it over); the typed
        attributes are read from it on first use."""
        message = cls.__new__(cls)
        message._data = data
        return message

    @property
    def role(self) -> str:
        role: str = self._data["role"]
        return role

    @property
    def text(self) -> str:
        """The content as text: a string as it is, the text parts of a list joined, ``""``
        for none."""
        return _text(self._data.get("content"))

    def to_openai(self) -> dict[str, Any]:
        """The OpenAI Chat Completions dict: a copy of its own, every key kept."""
        copied: dict[str, Any] = _copy(self._data)
        return copied

    # -- the read-only mapping --------------------------------------------------------------

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def get(self, key: str, default: Any = None) -> Any:
        return self._data.get(key, default)

    def keys(self) -> KeysView[str]:
        return self._data.keys()

    def values(self) -> ValuesView[Any]:
        return self._data.values()

    def items(self) -> ItemsView[str, Any]:
        return self._data.items()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Message):
            return self._data == other._data
        if isinstance(other, dict):
            return self._data == other
        if isinstance(other, Mapping):
            return self._data == dict(other.items())
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._data!r})"


class SystemMessage(Message):
    """Instructions: the system prompt (``"developer"`` messages are of this kind too)."""

    __slots__ = ()
    ROLE = "system"

    def __init__(self, text: str, **extra: Any) -> None:
        self._data = {"role": self.ROLE, "content": text}
        if extra:
            self._data.update(_copy(extra))


class UserMessage(Message):
    """What the user typed (``text``); ``content`` may also be a list of parts."""

    __slots__ = ()
    ROLE = "user"

    def __init__(self, text: str | list[dict[str, Any]], **extra: Any) -> None:
        self._data = {"role": self.ROLE, "content": text if isinstance(text, str) else _copy(text)}
        if extra:
            self._data.update(_copy(extra))


class AssistantMessage(Message):
    """The model's reply: its ``text`` and the tool ``calls`` it makes, in order."""

    __slots__ = ("_calls",)
    ROLE = "assistant"
    _calls: tuple[Call, ...]

    def __init__(self, text: str | None = "", calls: Iterable[CallLike] = (), **extra: Any):
        """``calls``: anything with ``id``, ``name`` and ``arguments`` (a ``Call``, a
        provider's ``ToolCall``). No text gives ``"content": None`` (tool calls alone)."""
        typed = tuple(Call(call.id, call.name, call.arguments) for call in calls)
        data: dict[str, Any] = {"role": self.ROLE, "content": text or None}
        if typed:
            data["tool_calls"] = [call.to_openai() for call in typed]
        if extra:
            data.update(_copy(extra))
        self._data = data
        if "tool_calls" not in extra:
            self._calls = typed

    @property
    def calls(self) -> tuple[Call, ...]:
        """The tool calls; entries of another shape are skipped, missing fields are ``""``."""
        try:
            return self._calls
        except AttributeError:  # read from the dict on first use
            self._calls = tuple(_calls(self._data.get("tool_calls")))
            return self._calls


class ToolMessage(Message):
    """The answer to one tool call: the ``Result`` as JSON."""

    __slots__ = ("_result",)
    ROLE = "tool"
    _result: Result

    def __init__(self, call_id: str, result: Result, **extra: Any) -> None:
        self._data = {"role": self.ROLE, "tool_call_id": call_id, "content": result.to_json()}
        if extra:
            self._data.update(_copy(extra))
        self._result = result

    @property
    def call_id(self) -> str:
        call_id = self._data.get("tool_call_id")
        return call_id if isinstance(call_id, str) else ""

    @property
    def result(self) -> Result:
        """The result (content that is not a JSON object is its ``output``)."""
        try:
            return self._result
        except AttributeError:  # read from the dict on first use
            self._result = _result(self._data.get("content"))
            return self._result


_KINDS: dict[str, type[Message]] = {
    "system": SystemMessage,
    "developer": SystemMessage,
    "user": UserMessage,
    "assistant": AssistantMessage,
    "tool": ToolMessage,
}


def from_openai(data: Mapping[str, Any]) -> Message:
    """The typed message of an OpenAI dict (copied: later changes to ``data`` do not reach
    it). Every key is kept; a ``role`` that is not a string raises ``ValueError``."""
    if isinstance(data, Message):
        return data
    return adopt(_copy(data))


def adopt(data: dict[str, Any], calls: tuple[Call, ...] | None = None) -> Message:
    """``from_openai`` without the copy, for a dict nothing else holds (a journal line just
    parsed). ``calls``: an assistant message's calls when the caller has read them already
    from its ``tool_calls`` (``conversation.repair``)."""
    role = data.get("role")
    if not isinstance(role, str):
        raise ValueError(f"a message needs a role (a string), not {role!r}")
    message = _KINDS.get(role, Message)._adopt(data)
    if calls is not None and isinstance(message, AssistantMessage):
        message._calls = calls
    return message


def as_message(message: Mapping[str, Any]) -> Message:
    """``message`` typed: itself when it is already, else ``from_openai(message)``."""
    return message if isinstance(message, Message) else from_openai(message)


def openai_dict(message: Mapping[str, Any]) -> dict[str, Any]:
    """The OpenAI dict of ``message`` for a reader that only reads it (the journal writes
    it, a provider sends it): a typed message's own dict, not a copy."""
    if isinstance(message, Message):
        return message._data
    return message if isinstance(message, dict) else dict(message)


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


def _copy(value: Any) -> Any:
    """A copy of JSON-shaped ``value`` (mappings become dicts, tuples lists)."""
    if isinstance(value, str | int | float) or value is None:
        return value
    if isinstance(value, dict | Mapping):
        return {key: _copy(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_copy(item) for item in value]
    return value


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part["text"]
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    return ""


def _calls(tool_calls: Any) -> Iterator[Call]:
    if not isinstance(tool_calls, list):
        return
    for call in tool_calls:
        if not isinstance(call, dict):
            continue
        function = call.get("function")
        function = function if isinstance(function, dict) else {}
        call_id, name, arguments = call.get("id"), function.get("name"), function.get("arguments")
        yield Call(
            call_id if isinstance(call_id, str) else "",
            name if isinstance(name, str) else "",
            arguments if isinstance(arguments, str) else "",
        )


def _result(content: Any) -> Result:
    try:
        data = json.loads(content or "{}") if isinstance(content, str) else content
    except (ValueError, RecursionError):
        data = {"output": content}
    return Result(data if isinstance(data, dict) else {"output": data})
