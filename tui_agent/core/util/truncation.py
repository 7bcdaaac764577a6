"""Long tool output: keep the end (where errors and summaries are), save the whole text.

Shared by the bundled ``execute`` and ``mcp`` plugins through ``tui_agent.truncation``.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import platformdirs

MAX_LINES = 2000
MAX_BYTES = 50 * 1024


def output_dir() -> Path:
    return Path(platformdirs.user_cache_dir("tui-agent")) / "tool-output"


def save_output(text: str, prefix: str, suffix: str = "txt") -> Path:
    """Write ``text`` to a new file under the cache's ``tool-output/`` folder."""
    folder = output_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{prefix}-{time.time_ns()}-{os.getpid()}.{suffix}"
    path.write_text(text, encoding="utf-8", errors="replace")
    return path


def keep_tail(text: str, prefix: str) -> dict[str, Any]:
    """``{"output": text}``, or past 2,000 lines / 50 KB the tail with a note saying how much
    was cut and where the full text is (``truncated``, ``full_output``)."""
    data = text.encode("utf-8", errors="replace")
    lines = text.splitlines(keepends=True)
    if len(lines) <= MAX_LINES and len(data) <= MAX_BYTES:
        return {"output": text}
    kept: list[str] = []
    size = 0
    for line in reversed(lines[-MAX_LINES:]):
        length = len(line.encode("utf-8", errors="replace"))
        if size + length > MAX_BYTES:
            break
        kept.append(line)
        size += length
    tail = "".join(reversed(kept))
    if not kept:  # one enormous last line: keep its last bytes
        tail = data[-MAX_BYTES:].decode("utf-8", errors="replace")
        size = len(tail.encode("utf-8", errors="replace"))
    saved = save_output(text, prefix)
    cut_lines = len(lines) - len(tail.splitlines())
    note = (
        f"[output cut: the first {cut_lines} lines ({len(data) - size} bytes) are not shown; "
        f"the full output is in {saved}]\n"
    )
    return {"output": note + tail, "truncated": True, "full_output": str(saved)}
