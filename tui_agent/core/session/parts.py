"""The session's own parts: ``permissions`` (the mode and asking the person) and the
guarded ``frontend`` (what the person is asked through: the app, headless, ACP)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..permissions.permissions import MODES
from ..protocol.approval import ApprovalRequest, Decision, headless_approver
from ..protocol.errors import PermissionDenied
from ..protocol.events import Attention, EventBus, ModeChanged
from ..protocol.frontend import Frontend
from ..tools.toolbox import held_loop


class Permissions:
    """``session.permissions``: the permission mode and asking the person about a call.

    ``mode`` is "ask" (the rules as configured), "auto-edit" (write and edit inside the
    worktree need no asking), "plan" (only read-only tools are offered, and the model is
    told it is planning) or "allow-all" (every ask is allowed). Deny rules hold in every
    mode (the ``permissions`` plugin applies them)."""

    MODES = MODES

    def __init__(self, events: EventBus, frontend: Callable[[], Frontend], yes: bool) -> None:
        self._events = events
        self._frontend = frontend
        self._mode = "allow-all" if yes else "ask"

    @property
    def mode(self) -> str:
        return self._mode

    def set_mode(self, mode: str) -> None:
        """Switch the permission mode (Shift+Tab cycles ask, auto-edit and plan)."""
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}: one of {', '.join(MODES)}")
        if mode != self._mode:
            self._mode = mode
            self._events.emit(ModeChanged(mode))

    @property
    def yes(self) -> bool:
        """Every ``ask`` is allowed (``--yes``, or the allow-all mode)."""
        return self._mode == "allow-all"

    async def ask(self, request: ApprovalRequest) -> Decision:
        """The person's decision on one tool call: the frontend's (the app's dialog), or
        the unattended policy (allowed once in allow-all, denied otherwise).

        A call that sync code made on the event loop's own thread (``toolbox.run`` from a
        sync command or hook) runs while that loop waits for it, so no dialog can open:
        refused at once, saying why, instead of waiting forever."""
        frontend = self._frontend()
        if not frontend.interactive:
            return await headless_approver(self.yes)(request)
        if held_loop() is not None:
            raise PermissionDenied(
                f"Permission denied: {request.tool} needs approval, and no dialog can open "
                "while sync code holds the app's event loop (toolbox.run(...) called from a "
                "sync command or hook): make it `async def` and `await "
                f"session.toolbox.run(...)`, or allow {request.tool} in [permission]"
            )
        self._events.emit(
            Attention(
                "approval", f"tui-agent needs your permission to use {request.tool}", request.tool
            )
        )
        return await frontend.approve(request)

    def __repr__(self) -> str:
        return f"Permissions(mode={self._mode!r})"


class Guarded:
    """``session.frontend`` as parts and plugins see it: the frontend the app (or a
    headless run) put there, with ``choose`` answering None at once where no picker can
    open (nobody to pick, no options, or sync code holding the event loop)."""

    def __init__(self, inner: Frontend) -> None:
        self.inner = inner

    @property
    def interactive(self) -> bool:
        return self.inner.interactive

    @property
    def themes(self) -> Sequence[str]:
        return self.inner.themes

    async def approve(self, request: ApprovalRequest) -> Decision:
        return await self.inner.approve(request)

    async def choose(self, title: str, options: Sequence[str]) -> str | None:
        """The option picked, or None when dismissed or nobody can pick (headless runs:
        say what to type instead)."""
        if not self.inner.interactive or not options or held_loop() is not None:
            return None
        return await self.inner.choose(title, list(options))

    def exit(self) -> None:
        self.inner.exit()

    def theme(self, name: str) -> None:
        self.inner.theme(name)

    def copy(self, text: str) -> None:
        self.inner.copy(text)

    async def edit(self, path: Path) -> bool:
        """Open ``path`` in the person's editor and wait until it is closed: True when it
        was; False where the frontend has no editor (headless, ACP: say the path instead).
        An optional part of a frontend (``edit(path)``), so the others need nothing."""
        edit = getattr(self.inner, "edit", None)
        if not self.inner.interactive or not callable(edit):
            return False
        return bool(await edit(path))

    async def pick_session(self, sessions: Callable[[bool], Any], current: str = "") -> Any:
        """The session picker (``/resume`` with no id): the summary of the session picked
        from ``sessions(everywhere)``, or None when dismissed or where the frontend has no
        picker (an optional part of a frontend, as ``edit``: headless runs and ACP ask for
        an id instead)."""
        pick = getattr(self.inner, "pick_session", None)
        if not self.inner.interactive or not callable(pick) or held_loop() is not None:
            return None
        return await pick(sessions, current)

    @property
    def exit_requested(self) -> bool:
        """``exit()`` was asked for (headless runs end after the turn anyway)."""
        return bool(getattr(self.inner, "exit_requested", False))

    def __repr__(self) -> str:
        return f"Guarded({self.inner!r})"
