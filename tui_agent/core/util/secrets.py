"""Settings whose values are never shown, logged or journaled."""

from __future__ import annotations

SECRET_KEYS = frozenset({"api_key"})
