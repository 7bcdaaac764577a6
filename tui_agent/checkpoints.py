"""Public: checkpoints (``session.checkpoints``): undo, redo and rewind the file changes of
a turn, and the store of worktree snapshots behind them."""

from .core.checkpoints.controller import Checkpoint, Checkpoints, HandEdited, Restored
from .core.checkpoints.store import Change, CheckpointError, CheckpointStore, Snapshot

__all__ = [
    "Change",
    "Checkpoint",
    "CheckpointError",
    "CheckpointStore",
    "Checkpoints",
    "HandEdited",
    "Restored",
    "Snapshot",
]
