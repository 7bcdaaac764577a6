"""A registered tool (``Tool``: its schema, handler and definition for the model), what
a toolbox tells its listeners (``ToolboxEvent``), a tool's call counts (``CallStats``),
and the callable types they are made of (``Handler``, ``Hook``, ``Listener``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..protocol.result import Result
from .validation import ArgsValidator, compile_validator

Handler = Callable[..., Any]
Hook = Callable[..., Any]
Listener = Callable[["ToolboxEvent"], None]


@dataclass(eq=False)
class Tool:
    """One registered tool. ``schema`` is the object schema its arguments are checked against."""

    name: str
    description: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    required: list[str] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)
    handler: Handler | None = None
    source: str = "api"
    schema: dict[str, Any] = field(default_factory=dict)
    read_only: bool = False  # changes nothing: offered in plan mode
    _validator: ArgsValidator | None = field(default=None, repr=False)
    _with_context: bool = field(default=False, repr=False)
    _async: bool = field(default=False, repr=False)

    def problem(self, args: Any) -> str | None:
        """Why ``args`` do not fit the schema (as a call would be told), or None: for
        hooks that change a call's arguments (a ``PreToolUse`` hook's ``updatedInput``)."""
        validator = self._validator or compile_validator(self.name, self.schema)
        return validator.error(args)

    def definition(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": {
                    "type": "object",
                    "properties": self.params,
                    "required": list(self.required),
                },
            },
        }


@dataclass(frozen=True)
class ToolboxEvent:
    """What changed in a toolbox; the UI listens instead of polling.

    kind: ``tools`` (added/replaced/removed/cleared), ``hooks``, ``call_started``,
    ``call_finished``. Every call is announced here, whoever made it (the model, a slash
    command, another tool), unknown names and invalid arguments included: the toolbox is
    the one source of call events. ``call_id`` is the context's, or one the toolbox made;
    ``arguments`` is the raw text of arguments that could not be parsed (``reject``).
    """

    kind: Literal["tools", "hooks", "call_started", "call_finished"]
    name: str = ""
    called_as: str = ""
    args: Mapping[str, Any] | None = None
    result: Result | None = None
    elapsed: float = 0.0
    call_id: str = ""
    arguments: str = ""
    parent: str = ""  # the ``task`` call whose subagent made this call (its context's)


@dataclass
class CallStats:
    calls: int = 0
    last_result: Result | None = None
