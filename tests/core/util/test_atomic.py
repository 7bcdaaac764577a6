"""write_text_atomic: the trust store, "always allow" rules and the prompt history use it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tui_agent.core.util.atomic import write_text_atomic


def test_writes_whole_and_creates_folders(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "config.toml"
    write_text_atomic(target, "x = 1\n")
    write_text_atomic(target, "x = 2\n")
    assert target.read_text() == "x = 2\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["config.toml"]


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "trust.json"
    target.write_text("old")

    def full_disk(*args: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("tui_agent.core.util.atomic.os.replace", full_disk)
    with pytest.raises(OSError, match="No space left"):
        write_text_atomic(target, "new")
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.glob("*trust*")) == ["trust.json"]
