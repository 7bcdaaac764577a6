"""Public: permission rules, for the bundled permission plugin and
for plugins and UIs that want the same answers."""

from .core.permissions.permissions import (
    MODES,
    Rules,
    Subject,
    add_rule,
    matches,
    session_pattern,
    strictest,
    subjects_for,
    with_rule,
)

__all__ = [
    "MODES",
    "Rules",
    "Subject",
    "add_rule",
    "matches",
    "session_pattern",
    "strictest",
    "subjects_for",
    "with_rule",
]
