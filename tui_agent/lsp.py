"""Public: language servers' diagnostics, as the bundled ``diagnostics`` plugin uses them
and other plugins may (issue 34): ``read_settings(config)`` (the ``[lsp.NAME]`` tables over
the built-in ones, ``[diagnostics]``), ``Servers`` (a session's servers, started lazily:
``check`` an edit, ``current`` problems, ``rows`` for /lsp, ``close``), ``BUILTINS``."""

from .core.lsp.problems import Problem, result_mark
from .core.lsp.servers import Check, Holder, Servers, servers_of
from .core.lsp.settings import BUILTINS, DiagnosticSettings, ServerSpec, Settings, read_settings

__all__ = [
    "BUILTINS",
    "Check",
    "DiagnosticSettings",
    "Holder",
    "Problem",
    "ServerSpec",
    "Servers",
    "Settings",
    "read_settings",
    "result_mark",
    "servers_of",
]
