"""What a callable's signature takes, read once when it is registered.

Plugins hand us handlers and hooks written the way their authors like (``def guard(args)``
where ``(args, tool_name=...)`` is offered; ``handler(args)`` or ``handler(args, context)``).
The toolbox reads each signature here, at registration, and then makes a plain call.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
_BY_KEYWORD = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


@dataclass(frozen=True)
class Parameters:
    """A signature reduced to what a caller needs to decide how to call it."""

    signature: inspect.Signature
    positional: tuple[str, ...]
    """Names of the parameters that can be filled by position, in order."""
    var_positional: bool
    keywords: frozenset[str]
    """Names that can be passed by keyword (``**kwargs`` is ``var_keyword``)."""
    var_keyword: bool

    def leading(self, offered: int) -> int:
        """How many of ``offered`` leading positional arguments to pass: all of them to
        ``*args``, else as many as there are positional parameters."""
        if self.var_positional:
            return offered
        return min(offered, len(self.positional))

    def names(self, keyword: str) -> bool:
        """True when a parameter is called ``keyword`` and can be passed by keyword."""
        return keyword in self.keywords


def parameters(fn: Callable[..., Any]) -> Parameters | None:
    """The parameters of ``fn``; ``None`` when its signature cannot be read (some builtins)."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    params = signature.parameters.values()
    return Parameters(
        signature=signature,
        positional=tuple(p.name for p in params if p.kind in _POSITIONAL),
        var_positional=any(p.kind is p.VAR_POSITIONAL for p in params),
        keywords=frozenset(p.name for p in params if p.kind in _BY_KEYWORD),
        var_keyword=any(p.kind is p.VAR_KEYWORD for p in params),
    )


def leading_arguments(fn: Callable[..., Any], offered: int) -> int | None:
    """How many of ``offered`` leading positional arguments ``fn`` takes; ``None`` when its
    signature cannot be read, so the caller falls back to its documented form."""
    found = parameters(fn)
    return None if found is None else found.leading(offered)
