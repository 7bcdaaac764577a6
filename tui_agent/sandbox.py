"""Public: the shell sandbox (bubblewrap on Linux) that ``execute`` and ``!command`` run
in, for plugins that run commands of their own: ``Sandbox.of(settings, worktree)`` (or
``session.sandbox``), then ``with sandbox.command(argv, workdir) as (argv, env): …``."""

from .core.sandbox.sandbox import (
    DEFAULT_HIDE,
    DEFAULT_SCRUB,
    ENV_PASSED,
    PROTECTED,
    Sandbox,
    Settings,
    availability,
    caused,
    hint,
    passed_env,
    problems,
    scrubbed_env,
)

__all__ = [
    "DEFAULT_HIDE",
    "DEFAULT_SCRUB",
    "ENV_PASSED",
    "PROTECTED",
    "Sandbox",
    "Settings",
    "availability",
    "caused",
    "hint",
    "passed_env",
    "problems",
    "scrubbed_env",
]
