"""The old path of ``blocks/shell.py``, kept for test_sandbox (outside the UI's tests),
which imports it: import from ``tui_agent.ui.blocks.shell`` instead."""

from __future__ import annotations

from .blocks.shell import ShellBlock

__all__ = ["ShellBlock"]
