"""Where commands run: the bubblewrap sandbox and its settings, the network proxy, and the
user's ``!`` shell.

May import: ``protocol``, ``util``, ``project`` (trust; the ``[sandbox]`` table's check is
registered with the config here, its rules imported when a table is checked).
"""

from typing import Any

from ..project import config as _config


@_config.validator("sandbox")
def _sandbox_problems(table: Any) -> list[str]:
    from .settings import problems  # imported when a [sandbox] table is there

    return problems(table)
