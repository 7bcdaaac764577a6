"""The app as the session's frontend (``tui_agent.core.protocol.frontend.Frontend``):
what the session asks of the person goes to the app's dialogs, and what it asks the
screen to do (quit, a theme, the clipboard) to the app.

``TuiAgentApp._connect`` makes it the session's: ``session.frontend = AppFrontend(app)``.

Imports nothing of the core at run time, and not the app: what it needs of the app is
``FrontendApp`` (``TuiAgentApp`` is one)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..core.protocol.approval import ApprovalRequest, Decision


class FrontendApp(Protocol):
    """What ``AppFrontend`` needs of the app (``TuiAgentApp``, which imports this)."""

    theme: str

    @property
    def available_themes(self) -> Iterable[str]: ...

    async def approve(self, request: ApprovalRequest) -> Decision: ...

    async def choose(self, title: str, options: list[str]) -> str | None: ...

    def exit(self) -> None: ...

    def copy_to_clipboard(self, text: str) -> None: ...

    def say(self, text: str, kind: str | None = None) -> None: ...


def copied(text: str) -> str:
    """What the chat says once ``text`` is on the clipboard."""
    lines = len(text.splitlines())
    plural = "s" if lines != 1 else ""
    return f"Copied to the clipboard: {lines} line{plural}, {len(text):,} characters."


class AppFrontend:
    """The app's dialogs and screen as the session's ``Frontend``: ``approve`` is the
    approval dialog (one at a time, the rest wait), ``choose`` the picker, ``exit`` quits
    the app (and says so in ``exit_requested``), ``theme`` shows a theme, ``copy`` puts
    text on the clipboard (through the terminal: OSC 52) and says so in the chat."""

    interactive = True

    def __init__(self, app: FrontendApp) -> None:
        self.app = app
        self.themes: Sequence[str] = sorted(app.available_themes)  # /theme lists them
        self.exit_requested = False  # session.frontend.exit_requested, as Unattended's

    async def approve(self, request: ApprovalRequest) -> Decision:
        return await self.app.approve(request)

    async def choose(self, title: str, options: Sequence[str]) -> str | None:
        return await self.app.choose(title, list(options))

    def exit(self) -> None:
        self.exit_requested = True
        self.app.exit()

    def theme(self, name: str) -> None:
        self.app.theme = name

    def copy(self, text: str) -> None:
        self.app.copy_to_clipboard(text)
        self.app.say(copied(text))

    async def pick_session(self, sessions: Any, current: str = "") -> Any:
        """The session picker (``/resume`` with no id): ``sessions(everywhere)`` lists
        them; the summary picked, or None."""
        from .dialogs.sessions import ask_session

        folder = str(getattr(self.app, "directory", ""))
        return await ask_session(self.app, sessions, current, folder)  # type: ignore[arg-type]

    async def edit(self, path: Path) -> bool:
        """``path`` in the user's editor, the app stepping aside (``/memory N``); False,
        said in the chat, when the editor could not start or failed."""
        from .editor import editor_command, run_editor

        outcome = run_editor(self.app, path)  # type: ignore[arg-type]
        if outcome == 0:
            return True
        why = outcome if isinstance(outcome, str) else f"{editor_command()} exited with {outcome}"
        self.app.say(why, "error")
        return False
