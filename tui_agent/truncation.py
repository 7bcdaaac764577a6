"""Public: the "keep the tail, save the whole" rule for long tool output."""

from .core.util.truncation import MAX_BYTES, MAX_LINES, keep_tail, output_dir, save_output

__all__ = ["MAX_BYTES", "MAX_LINES", "keep_tail", "output_dir", "save_output"]
