"""Every test runs with HOME and the XDG folders inside its own tmp_path, and no API keys."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tui_agent.core import config as config_module

FIXTURES = Path(__file__).parent / "fixtures"

pytest_plugins = ["tui_agent.testing"]


ALLOW_ALL = '[permission]\n"*" = "allow"\n'


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "real_permissions: run without the allow-all user config the other tests get"
    )


@pytest.fixture(autouse=True)
def isolated_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> Iterator[Path]:
    """HOME and XDG folders inside tmp_path. Unless marked ``real_permissions``, the user
    config allows every tool, so tests about other things are not stopped by the
    permission plugin (headless policy: deny what asks)."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for var, sub in [
        ("XDG_CONFIG_HOME", ".config"),
        ("XDG_DATA_HOME", ".local/share"),
        ("XDG_STATE_HOME", ".local/state"),
        ("XDG_CACHE_HOME", ".cache"),
    ]:
        monkeypatch.setenv(var, str(home / sub))
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "TUI_AGENT_MODEL"):
        monkeypatch.delenv(var, raising=False)
    config_module.reset_default_config()
    if request.node.get_closest_marker("real_permissions") is None:
        from tui_agent.core.paths import user_config_dir

        folder = user_config_dir()
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "config.toml").write_text(ALLOW_ALL)
    yield home
    config_module.reset_default_config()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project folder (a git worktree) outside HOME."""
    root = tmp_path / "project"
    root.mkdir()
    (root / ".git").mkdir()
    return root


@pytest.fixture
def user_config_dir(isolated_home: Path) -> Path:
    from tui_agent.core.paths import user_config_dir

    folder = user_config_dir()
    assert str(folder).startswith(str(isolated_home))
    return folder


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
