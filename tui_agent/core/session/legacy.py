"""The Session's names before issue 28, kept working for one release: each warns once
(``DeprecationWarning``), naming its new home, and then does what it did."""

from __future__ import annotations

import warnings
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from ..protocol.approval import ApprovalRequest, Decision
from ..protocol.frontend import Frontend

# old name -> where it lives now (a path from the session)
MOVED = {
    "on_turn": 'on("turn", fn)',
    "on_close": 'on("close", fn)',
    "on_prompt": 'on("prompt", fn)',
    "on_stop": 'on("stop", fn)',
    "on_start": 'on("start", fn)',
    "kept": "extensions.kept",
    "hide_tools": "extensions.hide_tools",
    "ready": "extensions.ready",
    "provider_name": "extensions.provider_name",
    "model": "extensions.model",
    "set_model": "extensions.set_model",
    "mode": "permissions.mode",
    "set_mode": "permissions.set_mode",
    "yes": "permissions.yes",
    "ask": "permissions.ask",
    "choose": "frontend.choose",
    "themes": "frontend.themes",
    "request_exit": "frontend.exit",
    "request_theme": "frontend.theme",
    "request_copy": "frontend.copy",
    "exit_requested": "frontend.exit_requested",
    "approver": "frontend.approve",
    "chooser": "frontend.choose",
    "record": "conversation.record",
    "clear": "conversation.clear",
    "resume": "conversation.resume",
    "sessions": "conversation.sessions",
    "expand": "conversation.expand",
    "steering": "conversation.steering",
    "transcript": "conversation",
    "budget": "conversation.budget",
    "system_prompt": "conversation.system_prompt",
    "complete": "conversation.complete",
    "run_command_line": "commands.run_line",
    "trust": "workspace.trust() then reload()",
    "agent": "conversation.usage (the agent's tokens)",
}
MOMENTS = {"on_turn": "turn", "on_close": "close", "on_prompt": "prompt", "on_stop": "stop",
           "on_start": "start"}  # fmt: skip
_warned: set[str] = set()


def warn(name: str) -> None:
    if name not in _warned:
        _warned.add(name)
        warnings.warn(
            f"session.{name} is now session.{MOVED[name]}; the old name goes in the next release",
            DeprecationWarning,
            stacklevel=3,
        )


def resolve(session: Any, name: str) -> Any:
    """What ``session.<old name>`` gives: the new home's value."""
    if name in MOMENTS:
        moment = MOMENTS[name]
        return lambda fn: session.on(moment, fn)
    if name == "trust":

        def trust(remember: bool = True) -> Any:
            session.workspace.trust(remember)
            return session.reload()

        return trust
    if name == "agent":
        return session._agent
    if name == "transcript":
        return session.conversation
    if name == "approver":
        return session.frontend.approve
    if name == "chooser":
        inner = session.frontend.inner
        return inner.choose if inner.interactive else None
    target: Any = session
    for part in MOVED[name].split("."):
        target = getattr(target, part)
    return target


class Adapted:
    """A frontend made of old-style callbacks (``session.approver = fn``,
    ``session.chooser = fn``, ``session.themes = [...]``) over the one in place."""

    def __init__(self, base: Frontend) -> None:
        self.base = base
        self.approver: Callable[[ApprovalRequest], Awaitable[Decision]] | None = None
        self.chooser: Callable[[str, list[str]], Awaitable[str | None]] | None = None
        self._themes: Sequence[str] | None = None

    @property
    def interactive(self) -> bool:
        return self.approver is not None or self.chooser is not None or self.base.interactive

    @property
    def themes(self) -> Sequence[str]:
        return self._themes if self._themes is not None else self.base.themes

    async def approve(self, request: ApprovalRequest) -> Decision:
        if self.approver is not None:
            return await self.approver(request)
        return await self.base.approve(request)

    async def choose(self, title: str, options: Sequence[str]) -> str | None:
        if self.chooser is not None:
            return await self.chooser(title, list(options))
        return await self.base.choose(title, options) if self.base.interactive else None

    def exit(self) -> None:
        self.base.exit()

    def theme(self, name: str) -> None:
        self.base.theme(name)

    def copy(self, text: str) -> None:
        self.base.copy(text)

    @property
    def exit_requested(self) -> bool:
        return bool(getattr(self.base, "exit_requested", False))


def assign(session: Any, name: str, value: Any) -> None:
    """``session.approver = fn`` and the like: the frontend is adapted to use it."""
    warn(name)
    frontend = session.frontend.inner
    if not isinstance(frontend, Adapted):
        frontend = Adapted(frontend)
        session.frontend = frontend
    if name == "approver":
        frontend.approver = value
    elif name == "chooser":
        frontend.chooser = value
    else:
        frontend._themes = list(value)


SETTABLE = {"approver", "chooser", "themes"}
