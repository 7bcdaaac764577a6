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
    from .core.conversation.mentions import Attachment, Expanded, MentionError
    from .core.extensions.commands import Commands, Completion, complete, parse_command
    from .core.extensions.moments import PromptBlocked
    from .core.extensions.plugins import LoadProblem
    from .core.project.config import Config, configure, setup
    from .core.protocol.approval import ApprovalRequest, Decision
    from .core.protocol.context import ToolContext
    from .core.protocol.errors import PermissionDenied
    from .core.protocol.frontend import Frontend
    from .core.protocol.messages import (
        AssistantMessage,
        Call,
        Message,
        SystemMessage,
        ToolMessage,
        UserMessage,
    )
    from .core.protocol.output import Note, Output
    from .core.protocol.result import Result
    from .core.sandbox.user_shell import ShellRun
    from .core.session.session import Session, create_session
    from .core.tools import schema
    from .core.tools.tool_files import ToolSpec, tool
    from .core.tools.toolbox import CallInfo, Tool, Toolbox, ToolboxEvent, current_call

__version__ = "0.1.0"

logging.getLogger("tui_agent").addHandler(logging.NullHandler())

# public name -> the module that defines it ("schema" is a module itself)
_HOMES = {
    "ApprovalRequest": ".core.protocol.approval",
    "Decision": ".core.protocol.approval",
    "Frontend": ".core.protocol.frontend",
    "Commands": ".core.extensions.commands",
    "Completion": ".core.extensions.commands",
    "complete": ".core.extensions.commands",
    "parse_command": ".core.extensions.commands",
    "Config": ".core.project.config",
    "configure": ".core.project.config",
    "setup": ".core.project.config",
    "ToolContext": ".core.protocol.context",
    "PermissionDenied": ".core.protocol.errors",
    "PromptBlocked": ".core.extensions.moments",
    "Attachment": ".core.conversation.mentions",
    "Expanded": ".core.conversation.mentions",
    "MentionError": ".core.conversation.mentions",
    "AssistantMessage": ".core.protocol.messages",
    "Call": ".core.protocol.messages",
    "Message": ".core.protocol.messages",
    "SystemMessage": ".core.protocol.messages",
    "ToolMessage": ".core.protocol.messages",
    "UserMessage": ".core.protocol.messages",
    "Note": ".core.protocol.output",
    "Output": ".core.protocol.output",
    "LoadProblem": ".core.extensions.plugins",
    "Result": ".core.protocol.result",
    "Session": ".core.session.session",
    "create_session": ".core.session.session",
    "ToolSpec": ".core.tools.tool_files",
    "tool": ".core.tools.tool_files",
    "CallInfo": ".core.tools.toolbox",
    "Tool": ".core.tools.toolbox",
    "Toolbox": ".core.tools.toolbox",
    "ToolboxEvent": ".core.tools.toolbox",
    "current_call": ".core.tools.toolbox",
    "ShellRun": ".core.sandbox.user_shell",
}


def __getattr__(name: str) -> Any:
    if name == "schema":
        value: Any = import_module(".core.tools.schema", __name__)
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
    "Frontend",
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
