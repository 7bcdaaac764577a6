"""Public: the context budget (``session.conversation.budget``) and the estimates it uses."""

from .core.conversation.budget import Budget, Use
from .core.conversation.compaction import Summariser, estimate, text_tokens

__all__ = [
    "Budget",
    "Summariser",
    "Use",
    "estimate",
    "text_tokens",
]
