"""The approval seam: the permission hook asks, the TUI's modal or the headless policy answers."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

Choice = Literal["once", "session", "always", "deny", "feedback"]


@dataclass(frozen=True)
class ApprovalRequest:
    """One call to ask about. ``agent``: who makes it, when a subagent does (its name and
    ``agent_description``; "" for the session's own agent): the dialog says so."""

    tool: str
    called_as: str
    args: dict[str, Any] = field(default_factory=dict)
    subject: str = "*"
    rule: str = ""
    session_pattern: str = "*"
    patterns: tuple[str, ...] = ()
    agent: str = ""
    agent_description: str = ""


@dataclass(frozen=True)
class Decision:
    choice: Choice
    feedback: str = ""
    unasked: bool = False  # no one could be asked (headless without --yes): a policy said no

    @property
    def allowed(self) -> bool:
        return self.choice in ("once", "session", "always")


Approver = Callable[[ApprovalRequest], Awaitable[Decision]]


def headless_approver(yes: bool) -> Approver:
    """Without a person to ask: allow once with ``--yes``, deny otherwise."""

    async def approve(request: ApprovalRequest) -> Decision:
        return Decision("once") if yes else Decision("deny", unasked=True)

    return approve
