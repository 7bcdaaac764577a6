"""The conversation: typed messages, kept valid for the next request."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from ..protocol.messages import (
    AssistantMessage,
    Call,
    Message,
    ToolMessage,
    UserMessage,
    adopt,
    as_message,
    record_dict,
)
from ..protocol.result import Result


class Conversation:
    """An ordered list of typed messages (``messages.UserMessage``, ``AssistantMessage``…,
    each also a read-only mapping of its OpenAI dict).

    The messages before the ones held can be put off (``defer``): a resumed journal's
    newest messages are read first and the rest on the first use of ``messages``."""

    def __init__(self, messages: Iterable[Mapping[str, Any]] | None = None) -> None:
        self._messages: list[Message] = [as_message(m) for m in messages or ()]
        self._earlier: Callable[[], list[Message]] | None = None
        self._lock = threading.Lock()

    @property
    def messages(self) -> list[Message]:
        """Every message, oldest first (what ``defer`` put off is loaded here, once)."""
        if self._earlier is not None:
            with self._lock:
                load, self._earlier = self._earlier, None
                if load is not None:
                    self._messages[:0] = load()
        return self._messages

    @property
    def deferred(self) -> bool:
        """Older messages are put off (``defer``) and not loaded yet."""
        return self._earlier is not None

    @property
    def held(self) -> list[Message]:
        """The messages loaded so far (all of them unless ``deferred``)."""
        return self._messages

    def replace(self, messages: Iterable[Mapping[str, Any]]) -> None:
        """Hold ``messages`` instead of the whole conversation (a compaction)."""
        typed = [as_message(m) for m in messages]
        self._earlier = None
        self._messages[:] = typed

    def take(self, other: Conversation) -> None:
        """Hold what ``other`` holds, the very same messages and what it put off; ``other``
        is left empty (a resume takes over the conversation the app drew before its
        session was made: ``transcript.read_resumed``)."""
        with other._lock:
            self._messages[:] = other._messages
            self._earlier, other._earlier = other._earlier, None
            other._messages = []

    def defer(self, earlier: Callable[[], list[Message]]) -> None:
        """``earlier()`` gives the messages that come before the ones held now; it runs on
        the first use of ``messages``. The held messages must start with one that is not a
        tool result (so ``tail`` and ``open_calls`` need nothing before them)."""
        self._earlier = earlier

    def tail(self, count: int) -> list[Message]:
        """The last ``count`` messages, or a few more so that the first is not a tool
        result (its call comes before it); loads what ``defer`` put off only if the held
        messages are not enough."""
        held = self._messages
        messages = held if self._earlier is not None and len(held) >= count else self.messages
        start = max(0, len(messages) - count)
        while start > 0 and isinstance(messages[start], ToolMessage):
            start -= 1
        return messages[start:]

    def open_calls(self) -> list[tuple[str, str]]:
        """``missing_tool_results`` of the transcript, without loading what ``defer`` put
        off: the held messages start with a whole turn's message, and calls made before it
        were all answered when it came (``repair``)."""
        return missing_tool_results(self._messages if self._earlier else self.messages)

    def open_call_answers(self, reason: str) -> list[ToolMessage]:
        """An error result saying ``reason`` for each call ``open_calls`` finds (a
        cancelled turn, an interrupted session): what keeps the transcript one the API
        accepts, once recorded."""
        error = {"error": reason}
        return [ToolMessage(i, Result({**error, "name": name})) for i, name in self.open_calls()]

    def append(self, message: Mapping[str, Any]) -> Message:
        """Add a message (a typed one, or an OpenAI dict, which is copied and typed); returns
        the typed message. A message without a role raises ``ValueError``."""
        typed = as_message(message)
        self._messages.append(typed)
        return typed

    def clear(self) -> None:
        self._earlier = None
        self._messages.clear()

    def __bool__(self) -> bool:
        return bool(self._messages) or self._earlier is not None

    def __len__(self) -> int:
        return len(self.messages)

    def __iter__(self) -> Iterator[Message]:
        return iter(self.messages)

    def __getitem__(self, index: int) -> Message:
        return self.messages[index]


def missing_tool_results(messages: Sequence[Message]) -> list[tuple[str, str]]:
    """``(call id, tool name)`` of calls in the last assistant message that have no result."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, AssistantMessage):
            answered = {m.call_id for m in messages[index + 1 :] if isinstance(m, ToolMessage)}
            return [(call.id, call.name) for call in message.calls if call.id not in answered]
        if isinstance(message, UserMessage):
            return []
    return []


ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})


def _content_ok(content: Any) -> bool:
    return isinstance(content, str) or (
        isinstance(content, list) and all(isinstance(part, dict) for part in content)
    )


def _call_ok(call: Any) -> bool:
    if not isinstance(call, dict):
        return False
    function = call.get("function")
    return (
        isinstance(call.get("id"), str)
        and bool(call["id"])
        and isinstance(function, dict)
        and isinstance(function.get("name"), str)
        and isinstance(function.get("arguments"), str)
    )


def well_formed(message: Any) -> bool:
    """A message the API accepts on its own (where it stands in the transcript aside)."""
    if not isinstance(message, dict) or message.get("role") not in ROLES:
        return False
    content = message.get("content")
    if message["role"] == "tool":
        call_id = message.get("tool_call_id")
        return isinstance(call_id, str) and bool(call_id) and _content_ok(content)
    if message["role"] != "assistant":
        return _content_ok(content)
    calls = message.get("tool_calls")
    if calls is None or calls == []:
        return _content_ok(content)
    if not isinstance(calls, list) or not all(_call_ok(call) for call in calls):
        return False
    ids = [call["id"] for call in calls]
    return (content is None or _content_ok(content)) and len(set(ids)) == len(ids)


_TAKEN = {  # the keys tui-agent models, by the roles that take them
    "tool": frozenset({"role", "tool_call_id", "content"}),
    "assistant": frozenset({"role", "content", "tool_calls", "name"}),
}
_TAKEN_BY_OTHERS = frozenset({"role", "content", "name"})
_MODELLED = frozenset({"role", "content", "name", "tool_calls", "tool_call_id"})


def _strict(value: Any) -> bool:
    """Whether ``value`` is strict JSON (a NaN in a message would make every later request
    fail) and not nested too deep to send."""
    try:
        json.dumps(value, allow_nan=False)
    except (ValueError, RecursionError):
        return False
    return True


def _cleaned(message: dict[str, Any]) -> Message:
    """A well-formed journaled message, typed, with only the modelled keys its role takes
    (a ``name`` only as a string); keys tui-agent does not model (``reasoning_content``…)
    stay as they are."""
    taken = _TAKEN.get(message["role"], _TAKEN_BY_OTHERS)
    if message.keys() <= taken:
        cleaned = dict(message)
    else:
        cleaned = {k: v for k, v in message.items() if k in taken or k not in _MODELLED}
    if "name" in cleaned and not isinstance(cleaned["name"], str):
        del cleaned["name"]
    calls = None
    if cleaned.get("tool_calls"):  # well formed: every field is there, and a string
        calls = tuple(
            Call(call["id"], call["function"]["name"], call["function"]["arguments"])
            for call in cleaned["tool_calls"]
        )
        cleaned["tool_calls"] = [call.to_openai() for call in calls]
    else:
        cleaned.pop("tool_calls", None)
    return adopt(cleaned, calls)  # a new dict: typed without a copy


def starts_cleanly(message: Any) -> bool:
    """Whether ``repair`` keeps ``message`` (a journaled dict) whatever comes before it,
    and treats what follows it the same: a well-formed, strict-JSON message that is not a
    tool result. Repairing a transcript from such a message on gives the end of repairing
    the whole of it."""
    if not well_formed(message) or message["role"] == "tool":
        return False
    return _strict(record_dict(_cleaned(message)))


def repair(messages: Iterable[Any], reason: str) -> list[Message]:
    """A transcript the API accepts, typed, from journaled messages (dicts, or typed ones)
    that may be damaged: messages of the wrong shape and tool results that answer no open
    call are dropped, modelled keys a role does not take are left out; calls still open
    when another message comes get an error result saying ``reason``. Calls the last
    message left open stay open: the caller answers them (and journals the answers)."""
    raw = (
        m if type(m) is dict else record_dict(m) if isinstance(m, Mapping) else m for m in messages
    )
    cleaned = [_cleaned(message) for message in raw if well_formed(message)]
    # one check for the whole transcript, per message only if it fails
    if not _strict([record_dict(message) for message in cleaned]):
        cleaned = [message for message in cleaned if _strict(record_dict(message))]
    fixed: list[Message] = []
    waiting: dict[str, str] = {}  # call id -> tool name
    for message in cleaned:
        if isinstance(message, ToolMessage):
            if waiting.pop(message.call_id, None) is not None:
                fixed.append(message)
            continue
        for call_id, name in waiting.items():
            fixed.append(ToolMessage(call_id, Result({"error": reason, "name": name})))
        calls = message.calls if isinstance(message, AssistantMessage) else ()
        waiting = {call.id: call.name for call in calls}
        fixed.append(message)
    return fixed
