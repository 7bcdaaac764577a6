"""Which folders may run their own code (plugins, tool files, config). Remembered per folder."""

from __future__ import annotations

import json
import logging
import os
import tempfile
from pathlib import Path

from . import paths

log = logging.getLogger("tui_agent.trust")


def trust_file() -> Path:
    return paths.user_data_dir() / "trust.json"


def _read() -> dict[str, bool]:
    try:
        data = json.loads(trust_file().read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError):
        log.warning("trust file %s is unreadable; treating every folder as undecided", trust_file())
        return {}
    folders = data.get("folders", {}) if isinstance(data, dict) else {}
    return {str(k): bool(v) for k, v in folders.items()} if isinstance(folders, dict) else {}


def decision(folder: Path) -> bool | None:
    """True (trusted), False (refused) or None (never asked)."""
    return _read().get(str(folder.resolve()))


def remember(folder: Path, trusted: bool) -> None:
    folders = _read()
    folders[str(folder.resolve())] = trusted
    target = trust_file()
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".trust-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump({"folders": folders}, handle, indent=2, sort_keys=True)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
