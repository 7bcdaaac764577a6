"""Public: the shell sandbox (bubblewrap on Linux) that ``execute`` and ``!command`` run
in, for plugins that run commands of their own: ``Sandbox.of(settings, worktree)`` (or
``session.sandbox``), then ``with sandbox.command(argv, workdir) as (argv, env): …``."""

from .core.sandbox.sandbox import (
    Sandbox,
    availability,
    caused,
    hint,
    problems,
)

__all__ = [
    "Sandbox",
    "availability",
    "caused",
    "hint",
    "problems",
]
