"""Public: language servers' diagnostics, as the bundled ``diagnostics`` plugin uses them
and other plugins may (issue 34): ``read_settings(config)`` (the ``[lsp.NAME]`` tables over
the built-in ones, ``[diagnostics]``), ``Servers`` (a session's servers, started lazily:
``check`` an edit, ``current`` problems, ``rows`` for /lsp, ``close``), ``BUILTINS``."""

from .core.lsp.problems import Problem, result_mark
from .core.lsp.servers import Check, Holder, Servers, servers_of
from .core.lsp.settings import BUILTINS, DiagnosticSettings, ServerSpec, Settings, read_settings

# the environment servers get: the user's, less secret-looking names (the sandbox's list)
from .core.sandbox.environment import DEFAULT_SCRUB, scrubbed_env

__all__ = [
    "BUILTINS",
    "DEFAULT_SCRUB",
    "Check",
    "DiagnosticSettings",
    "Holder",
    "Problem",
    "ServerSpec",
    "Servers",
    "Settings",
    "read_settings",
    "result_mark",
    "scrubbed_env",
    "servers_of",
]
