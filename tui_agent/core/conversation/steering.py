"""Steering: what the user sends into a running turn, for the model to see before its
next request.

``session.steer(prompt)`` adds a ``Steer``; the agent loop takes every pending one at
the next step boundary (after the reply's tool results are recorded, before the next
request) and records each as a user message (``events.Steered``). One still pending when
the turn ends (its last reply had no tool calls) starts the next turn at once. After a
cancel, what was not delivered stays here until the frontend takes it back (``take``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Steer:
    """``prompt``: as the user typed it; ``content``: what the model gets (its ``@path``
    attachments and the prompt hooks' context added)."""

    prompt: str
    content: str


class Steering:
    """The steers not delivered yet, oldest first. ``open``: a turn runs (the session
    sets it; a ``!command`` is no turn), so a steer added now reaches it."""

    def __init__(self) -> None:
        self._pending: list[Steer] = []
        self.open = False

    def add(self, steer: Steer) -> None:
        self._pending.append(steer)

    @property
    def pending(self) -> tuple[Steer, ...]:
        return tuple(self._pending)

    def take(self) -> list[Steer]:
        """Every pending steer, oldest first; none is pending after."""
        taken, self._pending = self._pending, []
        return taken

    def take_first(self) -> Steer | None:
        return self._pending.pop(0) if self._pending else None

    def take_last(self) -> Steer | None:
        return self._pending.pop() if self._pending else None

    def __bool__(self) -> bool:
        return bool(self._pending)

    def __len__(self) -> int:
        return len(self._pending)
