"""Exceptions that are part of the public API."""

from __future__ import annotations


class PermissionDenied(Exception):
    """Raised by a before hook to stop a tool call; the message goes back to the model."""
