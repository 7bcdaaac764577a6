"""The transcript's messages, typed: user, assistant (with its tool calls), tool, system.

Code reads the typed attributes (``UserMessage.text``, ``AssistantMessage.calls``,
``ToolMessage.call_id`` and ``.result``); a message's OpenAI Chat Completions dict is
handed on only at the edges: the request the ``openai`` provider sends
(``openai_dict``) and the journal's JSON lines (``record_dict``; read back by
``conversation.repair``).
Each message is also a read-only mapping of that dict, so ``message["role"]``, ``.get``,
``dict(message)`` and ``message == {"role": "user", "content": "hi"}`` work as they did
when the transcript held dicts (plugins and tests rely on it).

A message keeps the dict it was made from, keys it does not model included (``name``,
``reasoning_content``…): nothing is lost between the journal, the conversation and the
request. The typed attributes are read from that dict on first use and kept, so a long
journal is typed for little more than the dicts it holds.

A user message also says where it came from (``UserMessage.origin``, ``ORIGINS``): a
prompt, a steer, a stop function's continuation, a ``!command``'s output, a summary. No
code reads that out of its text. It is kept in keys of its dict that the journal stores
and the request leaves out (``USER_KEYS``: ``openai_dict`` is the provider's dict,
``record_dict`` the journal's); a prompt as typed has none of them.
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
        """The OpenAI Chat Completions dict (``openai_dict``), a copy of its own: every key
        kept but a user message's ``USER_KEYS``."""
        copied: dict[str, Any] = _copy(openai_dict(self))
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


ORIGINS = ("prompt", "steer", "continuation", "shell", "summary")
"""Where a user message comes from (``UserMessage.origin``):

- ``"prompt"``: a turn's prompt, as the user (or a Markdown command, or a plugin's
  ``session.turn``) sent it; the default. When the model got more than was typed (``@path``
  attachments, the context the prompt functions added), ``prompt`` is what was typed and
  ``attachments`` the labels of the attached paths.
- ``"steer"``: sent into a running turn (``session.steer``), recorded at a step boundary;
  ``prompt`` and ``attachments`` as for a prompt. (A steer that starts the next turn is
  that turn's ``"prompt"``.)
- ``"continuation"``: a stop function's feedback that keeps a turn going
  (``Moments.until_stopped``): part of the turn, not a prompt.
- ``"shell"``: a ``!command`` the user ran and its output (``user_shell.message``);
  ``shell`` holds the run's ``command``, ``exit_status``, ``cancelled`` and ``elapsed``.
- ``"summary"``: a compaction's summary of the conversation before it.
"""

USER_KEYS = frozenset({"origin", "prompt", "attachments", "shell"})
"""The keys of a user message's dict that say where it came from: the journal keeps them,
the request to the model leaves them out (``openai_dict``)."""

# how the prompt functions' context and a stop function's feedback are written into the
# content the model gets (``extensions/moments.py``); journals written before the origins
# are read by them (``journal.classify_legacy``)
CONTEXT_OPEN = "\n\n<hook-context>\n"
CONTEXT_CLOSE = "\n</hook-context>"
FEEDBACK_OPEN = "<hook-feedback>\n"
FEEDBACK_CLOSE = "\n</hook-feedback>"


class UserText(str):
    """The content of a user message still to be recorded, with where it came from: what
    ``mentions.expand``, the prompt functions (``Moments.submitted``) and
    ``user_shell.message`` give. To all code it is the text; ``UserMessage(text)`` keeps
    its ``meta`` (the ``USER_KEYS`` of the message to make), so what passes it on as text
    (the session's turn, steering, events) loses nothing. ``meta["images"]``: the OpenAI
    ``image_url`` parts attached (``@shot.png``); the message's content is then a list,
    the text part first, the images after it."""

    meta: dict[str, Any]

    def __new__(cls, text: str, **meta: Any) -> UserText:
        made = super().__new__(cls, text)
        made.meta = {**text.meta, **meta} if isinstance(text, UserText) else dict(meta)
        return made

    @property
    def origin(self) -> str:
        origin = self.meta.get("origin")
        return origin if isinstance(origin, str) else "prompt"

    @property
    def prompt(self) -> str:
        """What was typed (the text itself unless more was added to it)."""
        prompt = self.meta.get("prompt")
        return prompt if isinstance(prompt, str) else str(self)

    @property
    def attachments(self) -> tuple[str, ...]:
        return tuple(self.meta.get("attachments") or ())

    @property
    def images(self) -> tuple[dict[str, Any], ...]:
        """The ``image_url`` parts attached (``@shot.png``), in order."""
        return tuple(self.meta.get("images") or ())


class UserMessage(Message):
    """A user message: its ``text`` (``content`` may also be a list of parts) and its
    ``origin`` (one of ``ORIGINS``; a plugin may make up others). ``prompt``: what was
    typed, when the content holds more (attachments, the prompt functions' context);
    ``attachments``: the labels of the ``@path`` attachments; ``shell``: a ``!command``'s
    run (a dict). A ``UserText`` brings its own. These are stored in the message's dict
    (and so in the journal) only when they say something: a prompt as typed is
    ``{"role": "user", "content": …}``, as it always was."""

    __slots__ = ()
    ROLE = "user"

    def __init__(
        self,
        text: str | list[dict[str, Any]],
        *,
        origin: str | None = None,
        prompt: str | None = None,
        attachments: Iterable[str] | None = None,
        **extra: Any,
    ) -> None:
        meta: dict[str, Any] = dict(text.meta) if isinstance(text, UserText) else {}
        content: str | list[Any] = str(text) if isinstance(text, str) else _copy(text)
        if isinstance(content, str) and meta.get("images"):  # the ``@shot.png`` attached
            content = [{"type": "text", "text": content}, *_copy(meta["images"])]
        self._data = {"role": self.ROLE, "content": content}
        if origin is not None:
            meta["origin"] = origin
        if prompt is not None:
            meta["prompt"] = prompt
        if attachments is not None:
            meta["attachments"] = list(attachments)
        if meta.get("origin") not in (None, "prompt"):
            self._data["origin"] = meta["origin"]
        if isinstance(meta.get("prompt"), str) and meta["prompt"] != content:
            self._data["prompt"] = meta["prompt"]
        if meta.get("attachments"):
            self._data["attachments"] = [str(label) for label in meta["attachments"]]
        if isinstance(meta.get("shell"), Mapping):
            self._data["shell"] = _copy(meta["shell"])
        if extra:
            self._data.update(_copy(extra))

    @property
    def origin(self) -> str:
        """Where it came from (``ORIGINS``): ``"prompt"`` unless it says otherwise."""
        origin = self._data.get("origin")
        return origin if isinstance(origin, str) else "prompt"

    @property
    def prompt(self) -> str:
        """What was typed: the ``prompt`` it keeps, else its text."""
        prompt = self._data.get("prompt")
        return prompt if isinstance(prompt, str) else self.text

    @property
    def attachments(self) -> tuple[str, ...]:
        """The labels of its ``@path`` attachments (``src/app.py (120 lines)``)."""
        labels = self._data.get("attachments")
        if not isinstance(labels, list):
            return ()
        return tuple(label for label in labels if isinstance(label, str))


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
    """The OpenAI dict of ``message`` for a reader that only reads it (a provider sends
    it): a typed message's own dict, not a copy, but for a user message that says where it
    came from: a copy without its ``USER_KEYS`` (the model gets role and content)."""
    data = record_dict(message)
    if data.get("role") == "user" and not USER_KEYS.isdisjoint(data):
        return {key: value for key, value in data.items() if key not in USER_KEYS}
    return data


def record_dict(message: Mapping[str, Any]) -> dict[str, Any]:
    """The whole dict of ``message``, every key kept (the journal writes it): a typed
    message's own dict, not a copy."""
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
