"""Context windows learned from servers, remembered per base URL and model in the user data
folder (``windows.json``) with the time each was learned, so a later session asks nothing.
An answer older than ``MAX_AGE`` is asked again (a local server may be restarted with
another context size; an overflow error teaches the real one meanwhile). Never raises: a
file that cannot be read or written only means asking the server."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

from ..util.atomic import write_text_atomic
from ..util.paths import user_data_dir

log = logging.getLogger(__name__)

MAX_AGE = 24 * 3600.0  # seconds a learned window is trusted
FILE = "windows.json"


def _path() -> Path:
    return user_data_dir() / FILE


def _key(base_url: str | None, model: str) -> str:
    return f"{(base_url or 'https://api.openai.com/v1').rstrip('/')} {model}"


def _load() -> dict[str, Any]:
    try:
        data = json.loads(_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def recall(
    base_url: str | None, model: str, *, now: float | None = None
) -> tuple[bool, int | None]:
    """``(True, window)`` when this server's window for ``model`` was learned less than
    ``MAX_AGE`` ago (``window`` None: the server states none); ``(False, None)`` otherwise."""
    entry = _load().get(_key(base_url, model))
    if not isinstance(entry, dict):
        return False, None
    learned, window = entry.get("learned"), entry.get("window")
    if not isinstance(learned, (int, float)) or not (window is None or isinstance(window, int)):
        return False, None
    if abs((time.time() if now is None else now) - learned) > MAX_AGE:
        return False, None
    return True, window


def remember(base_url: str | None, model: str, window: int | None) -> None:
    """Keeps ``window`` (None: none stated) for this server and model, with the time."""
    try:
        data = _load()
        data[_key(base_url, model)] = {"window": window, "learned": time.time()}
        write_text_atomic(_path(), json.dumps(data, indent=1, sort_keys=True) + "\n")
    except OSError:
        log.info("could not remember the context window in %s", _path(), exc_info=True)
