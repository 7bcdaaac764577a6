"""tui-agent: an extensible terminal coding agent.

The public plugin API. Plugin files use ``setup``/``configure``; tool files use ``tool``
and ``schema``; embedders use ``create_session``.
"""

from __future__ import annotations

import logging

from .core import schema
from .core.approval import ApprovalRequest, Decision
from .core.commands import Commands, Completion, complete, parse_command
from .core.config import Config, configure, setup
from .core.context import ToolContext
from .core.errors import PermissionDenied
from .core.output import Note, Output
from .core.plugins import LoadProblem
from .core.result import Result
from .core.session import Session, create_session
from .core.tool_files import ToolSpec, tool
from .core.toolbox import CallInfo, Tool, Toolbox, ToolboxEvent, current_call

__version__ = "0.1.0"

logging.getLogger("tui_agent").addHandler(logging.NullHandler())

__all__ = [
    "ApprovalRequest",
    "CallInfo",
    "Commands",
    "Completion",
    "Config",
    "Decision",
    "LoadProblem",
    "Note",
    "Output",
    "PermissionDenied",
    "Result",
    "Session",
    "Tool",
    "ToolContext",
    "ToolSpec",
    "Toolbox",
    "ToolboxEvent",
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
