"""Garbage collection for a chat that holds thousands of long-lived widgets.

A long streamed reply becomes thousands of widgets, and Textual widgets live in reference
cycles. CPython runs a full collection each time the long-lived heap grows by a quarter,
and each one walks every object: during a 20,000-token reply that was eleven full
collections, about a quarter of the CPU, the last ones stopping the UI for over a second
in the middle of the stream (bench/README.md). So a finished part of a reply is frozen
(``gc.freeze()``, a constant-time list splice), and collections during the stream only
walk what is new. When the turn ends the heap is thawed and collected once (what was
removed or replaced during the turn is freed there), then frozen again. The app thaws
everything when it exits.

Start-up makes hundreds of thousands of objects that live as long as the app (modules,
classes, styles, widgets) and almost no garbage, and CPython collects the young ones
every 700 allocations: about 3 % of the instructions to the first frame (bench/
instructions.py). So ``tui-agent`` holds collections from the start of ``start_app`` to
the first frame (``hold_collections``, ``release_collections``).
"""

from __future__ import annotations

import gc
import sys

_held = False


def hold_collections() -> None:
    """No collections until ``release_collections`` (if they were on)."""
    global _held
    if gc.isenabled():
        gc.disable()
        _held = True


def release_collections() -> None:
    """Collections as before ``hold_collections`` (nothing if it held none), with what
    start-up made frozen: the first young collection would otherwise walk all of it."""
    global _held
    if _held:
        _held = False
        gc.freeze()
        gc.enable()


class Heap:
    """The heap's size is judged by ``sys.getallocatedblocks()`` (Python's small-object
    allocator's blocks in use, read in constant time), not ``gc.get_freeze_count()``: that
    walks the whole frozen list, 0.13 s at the end of a 20,000-token reply (bench/
    README.md)."""

    GROWTH = 1.25  # CPython's own rule: a full collection when the old heap grew by 1/4

    def __init__(self) -> None:
        self.baseline = 0  # blocks allocated after the last full collection
        self.removed = False  # widgets were removed: there is garbage among the frozen

    def freeze(self) -> None:
        """Keep everything alive now out of the collections to come."""
        gc.freeze()

    def settle(self) -> None:
        """After a turn: one full collection if the frozen heap grew by a quarter or
        widgets were removed, then everything is frozen again."""
        if self.removed or sys.getallocatedblocks() > self.GROWTH * self.baseline:
            gc.unfreeze()
            gc.collect()
            gc.freeze()
            self.baseline = sys.getallocatedblocks()
            self.removed = False

    def thaw(self) -> None:
        gc.unfreeze()
