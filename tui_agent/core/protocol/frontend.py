"""The frontend seam: what a session asks of whoever shows it (the app, a headless run,
later an ACP client). Events carry facts; a request that needs an answer or an action
from the person goes through here, to the one frontend the session has.

``Unattended`` is the frontend of a run with nobody to ask: approvals follow the
``--yes`` policy, nothing can be picked, an exit request is remembered."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

from .approval import ApprovalRequest, Decision, headless_approver


@runtime_checkable
class Frontend(Protocol):
    """Who answers the session: the app's dialogs, or a policy.

    ``interactive`` is false where no person can answer (``choose`` then always gives
    None: say what to type instead). ``themes`` are the themes ``theme`` can show."""

    @property
    def interactive(self) -> bool:
        """A person can answer (``choose`` gives None at once where not)."""
        ...

    @property
    def themes(self) -> Sequence[str]:
        """The themes ``theme`` can show."""
        ...

    async def approve(self, request: ApprovalRequest) -> Decision:
        """The person's decision on one tool call."""
        ...

    async def choose(self, title: str, options: Sequence[str]) -> str | None:
        """The option picked from ``options`` under ``title``; None when dismissed."""
        ...

    def exit(self) -> None:
        """Quit when the current work is done (``/exit``)."""
        ...

    def theme(self, name: str) -> None:
        """Show the theme ``name`` (one of ``themes``)."""
        ...

    def copy(self, text: str) -> None:
        """Put ``text`` on the clipboard and say so."""
        ...


class Unattended:
    """The frontend of a run with nobody to ask (headless, tests, a fresh session):
    every ``ask`` allowed once with ``yes`` (``--yes`` or the allow-all mode), denied
    otherwise; nothing to pick; ``exit()`` sets ``exit_requested``."""

    interactive = False
    themes: Sequence[str] = ()

    def __init__(self, yes: Callable[[], bool] = lambda: False) -> None:
        self.yes = yes  # whether every ask is allowed now (the session's mode)
        self.exit_requested = False
        self.copied: list[str] = []

    async def approve(self, request: ApprovalRequest) -> Decision:
        return await headless_approver(self.yes())(request)

    async def choose(self, title: str, options: Sequence[str]) -> str | None:
        return None

    def exit(self) -> None:
        self.exit_requested = True

    def theme(self, name: str) -> None:
        return None

    def copy(self, text: str) -> None:
        self.copied.append(text)
