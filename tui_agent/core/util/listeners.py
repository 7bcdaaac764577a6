"""One way to be told: the session's events, notes, toolbox and command changes use it."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Generic, TypeVar

E = TypeVar("E")
log = logging.getLogger("tui_agent.listeners")


class Listeners(Generic[E]):
    """Callbacks for one stream of events. ``add`` returns the function that removes the
    listener; a listener that raises is logged and the others are still called. Adding and
    removing replace the tuple of listeners (never mutate it), so a note said from a worker
    thread while the UI subscribes cannot trip over the change."""

    def __init__(self, what: str) -> None:
        self.what = what
        self._items: tuple[Callable[[E], None], ...] = ()

    def add(self, listener: Callable[[E], None]) -> Callable[[], None]:
        self._items = (*self._items, listener)

        def remove() -> None:
            items = list(self._items)
            if listener in items:
                items.remove(listener)
                self._items = tuple(items)

        return remove

    def emit(self, event: E) -> None:
        for listener in self._items:
            try:
                listener(event)
            except Exception:
                log.warning("%s listener failed", self.what, exc_info=True)

    def __bool__(self) -> bool:
        """Someone listens (so an event worth building only for them is built)."""
        return bool(self._items)

    def __len__(self) -> int:
        return len(self._items)
