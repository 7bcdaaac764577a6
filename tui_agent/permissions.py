"""Public: permission rules and shell splitting, for the bundled permission plugin and
for plugins and UIs that want the same answers."""

from .core.permissions.permissions import (
    ACTIONS,
    CYCLE,
    DEFAULTS,
    MODES,
    PATH_TOOLS,
    Rules,
    Subject,
    Verdict,
    add_rule,
    matches,
    path_subject,
    session_pattern,
    strictest,
    subjects_for,
    with_rule,
)
from .core.permissions.shell import split_commands

__all__ = [
    "ACTIONS",
    "CYCLE",
    "DEFAULTS",
    "MODES",
    "PATH_TOOLS",
    "Rules",
    "Subject",
    "Verdict",
    "add_rule",
    "matches",
    "path_subject",
    "session_pattern",
    "split_commands",
    "strictest",
    "subjects_for",
    "with_rule",
]
