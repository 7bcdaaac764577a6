"""Public: checkpoints (``session.checkpoints``): undo, redo and rewind the file changes of
a turn, and the store of worktree snapshots behind them."""

from .core.checkpoints import Change, CheckpointError, CheckpointStore, Snapshot
from .core.undo import Checkpoint, Checkpoints, HandEdited, Restored

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
