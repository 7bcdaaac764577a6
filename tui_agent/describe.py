"""Public: tools rendered as Markdown (what ``/tools`` shows)."""

from .core.tools.describe import tool_markdown, tools_markdown

__all__ = ["tool_markdown", "tools_markdown"]
