"""``session.output``: notes for the user, safe to call from any thread."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..util.listeners import Listeners

KINDS = (None, "error", "markdown")


@dataclass(frozen=True)
class Note:
    text: str
    kind: str | None = None


class Output:
    """Where plugins speak to the user. The UI and the headless runner listen; with nobody
    listening, notes are kept in ``history`` so nothing said at start-up is lost."""

    def __init__(self, keep: int = 1000, bus: Any = None) -> None:
        """``bus``: an ``EventBus`` that carries every note too (the session's events), so
        the app and headless hear notes and events in one stream, in order."""
        self.history: deque[Note] = deque(maxlen=keep)
        self._listeners: Listeners[Note] = Listeners("output")
        self._bus = bus
        self._lock = threading.Lock()  # notes come from worker threads too

    def say(self, text: object, kind: str | None = None) -> None:
        if kind not in KINDS:
            raise ValueError(f"output kind must be one of {KINDS}, not {kind!r}")
        note = Note(str(text), kind)
        with self._lock:
            self.history.append(note)
        self._listeners.emit(note)
        if self._bus is not None:
            self._bus.emit(note)

    def listen(self, listener: Callable[[Note], None]) -> Callable[[], None]:
        return self._listeners.add(listener)
