"""tui-agent: an extensible terminal coding agent.

The public plugin API. Plugin files use ``setup``/``configure``; tool files use ``tool``
and ``schema``; embedders use ``create_session``.

The names are imported on first use (PEP 562), so ``import tui_agent`` — and with it every
``tui_agent.*`` module, the app's among them — costs nothing until one is used: the app
draws its first frame before the core is imported.
"""

from __future__ import annotations

import logging
from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .core import schema
    from .core.approval import ApprovalRequest, Decision
    from .core.commands import Commands, Completion, complete, parse_command
    from .core.config import Config, configure, setup
    from .core.context import ToolContext
    from .core.errors import PermissionDenied
    from .core.mentions import Attachment, Expanded, MentionError
    from .core.messages import (
        AssistantMessage,
        Call,
        Message,
        SystemMessage,
        ToolMessage,
        UserMessage,
    )
    from .core.moments import PromptBlocked
    from .core.output import Note, Output
    from .core.plugins import LoadProblem
    from .core.result import Result
    from .core.session import Session, create_session
    from .core.tool_files import ToolSpec, tool
    from .core.toolbox import CallInfo, Tool, Toolbox, ToolboxEvent, current_call
    from .core.user_shell import ShellRun

__version__ = "0.1.0"

logging.getLogger("tui_agent").addHandler(logging.NullHandler())

# public name -> the module that defines it ("schema" is a module itself)
_HOMES = {
    "ApprovalRequest": ".core.approval",
    "Decision": ".core.approval",
    "Commands": ".core.commands",
    "Completion": ".core.commands",
    "complete": ".core.commands",
    "parse_command": ".core.commands",
    "Config": ".core.config",
    "configure": ".core.config",
    "setup": ".core.config",
    "ToolContext": ".core.context",
    "PermissionDenied": ".core.errors",
    "PromptBlocked": ".core.moments",
    "Attachment": ".core.mentions",
    "Expanded": ".core.mentions",
    "MentionError": ".core.mentions",
    "AssistantMessage": ".core.messages",
    "Call": ".core.messages",
    "Message": ".core.messages",
    "SystemMessage": ".core.messages",
    "ToolMessage": ".core.messages",
    "UserMessage": ".core.messages",
    "Note": ".core.output",
    "Output": ".core.output",
    "LoadProblem": ".core.plugins",
    "Result": ".core.result",
    "Session": ".core.session",
    "create_session": ".core.session",
    "ToolSpec": ".core.tool_files",
    "tool": ".core.tool_files",
    "CallInfo": ".core.toolbox",
    "Tool": ".core.toolbox",
    "Toolbox": ".core.toolbox",
    "ToolboxEvent": ".core.toolbox",
    "current_call": ".core.toolbox",
    "ShellRun": ".core.user_shell",
}


def __getattr__(name: str) -> Any:
    if name == "schema":
        value: Any = import_module(".core.schema", __name__)
    elif name in _HOMES:
        value = getattr(import_module(_HOMES[name], __name__), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "ApprovalRequest",
    "AssistantMessage",
    "Attachment",
    "Call",
    "CallInfo",
    "Commands",
    "Completion",
    "Config",
    "Decision",
    "Expanded",
    "LoadProblem",
    "MentionError",
    "Message",
    "Note",
    "Output",
    "PermissionDenied",
    "PromptBlocked",
    "Result",
    "Session",
    "ShellRun",
    "SystemMessage",
    "Tool",
    "ToolContext",
    "ToolMessage",
    "ToolSpec",
    "Toolbox",
    "ToolboxEvent",
    "UserMessage",
    "__version__",
    "complete",
    "configure",
    "create_session",
    "current_call",
    "parse_command",
    "schema",
    "setup",
    "tool",
]
