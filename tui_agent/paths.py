"""Public: where tui-agent keeps its files (for plugins that need a place of their own)."""

from pathlib import Path

import platformdirs

from .core.util.paths import (
    bundled_plugins_dir,
    home_plugins_dir,
    user_config_dir,
    user_data_dir,
    user_log_dir,
)


def user_cache_dir() -> Path:
    return Path(platformdirs.user_cache_dir("tui-agent"))


__all__ = [
    "bundled_plugins_dir",
    "home_plugins_dir",
    "user_cache_dir",
    "user_config_dir",
    "user_data_dir",
    "user_log_dir",
]
