"""The old path of ``dialogs/approval.py``, kept for the tests outside the UI's that
import it (test_security, test_sandbox, test_tolerant_edit, test_toolbox) and for
``tui_agent.screenshots``: import from ``tui_agent.ui.dialogs.approval`` instead."""

from __future__ import annotations

from .dialogs.approval import ApprovalScreen, TrustScreen

__all__ = ["ApprovalScreen", "TrustScreen"]
