"""Public: the context budget (``session.conversation.budget``) and the estimates it uses."""

from .core.conversation.budget import DEFAULT_COMPACT_AT, DEFAULT_WINDOW, Budget, Use
from .core.conversation.compaction import Summariser, estimate, estimate_all, text_tokens

__all__ = [
    "DEFAULT_COMPACT_AT",
    "DEFAULT_WINDOW",
    "Budget",
    "Summariser",
    "Use",
    "estimate",
    "estimate_all",
    "text_tokens",
]
