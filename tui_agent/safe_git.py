"""Public: git as tui-agent runs it itself, for plugins that run git of their own:
``argv(git, *args)`` (the ``-c`` overrides), ``environment()`` (no inherited ``GIT_*``
variables, no prompt, pager, editor or transport), ``driver_overrides(git, folder, env)``
(the repository's own filter, diff and merge drivers emptied, for ``with_config``) and
``executable("git", near)`` (never from a PATH folder inside the worktree). Under these no
repository config (a nested one's, a ``.git/commondir`` or ``.git`` file redirect, an
include) makes git run a program."""

from .core.util.safe_git import (
    CONFIG,
    DIFF_OPTIONS,
    USER_VARIABLES,
    argv,
    driver_overrides,
    environment,
    executable,
    with_config,
)

__all__ = [
    "CONFIG",
    "DIFF_OPTIONS",
    "USER_VARIABLES",
    "argv",
    "driver_overrides",
    "environment",
    "executable",
    "with_config",
]
