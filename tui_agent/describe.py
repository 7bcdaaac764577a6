"""Public helpers that render tools as Markdown or rows (used by /tools and the tools panel)."""

from .core.tools.describe import (
    ParamRow,
    first_line,
    hooks_label,
    parameter_rows,
    tool_markdown,
    tools_markdown,
    type_label,
)

__all__ = [
    "ParamRow",
    "first_line",
    "hooks_label",
    "parameter_rows",
    "tool_markdown",
    "tools_markdown",
    "type_label",
]
