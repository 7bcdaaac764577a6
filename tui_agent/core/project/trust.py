"""Which folders may run their own code (plugins, tool files, config). Remembered per folder."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from ..util import paths
from ..util.atomic import write_text_atomic

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


def trusted_folders() -> list[Path]:
    """Every folder whose code the user let run (the sandbox keeps their config read-only)."""
    return [Path(folder) for folder, trusted in _read().items() if trusted]


def remember(folder: Path, trusted: bool) -> None:
    folders = _read()
    folders[str(folder.resolve())] = trusted
    write_text_atomic(trust_file(), json.dumps({"folders": folders}, indent=2, sort_keys=True))
