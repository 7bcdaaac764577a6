"""The web: the ``fetch`` tool's client (addresses checked, connections pinned to the
checked address, caps and deadline), pages turned into Markdown or text, and the
pluggable ``web_search`` backends (SearXNG, Brave, Tavily, or a plugin's).

May import: ``util``, ``project`` (the ``[fetch]`` and ``[search]`` tables' checks are
registered with the config here). Heavy parts (http.client, ssl, the HTML parser) are
imported when a fetch runs, never at start.
"""

from typing import Any

from ..project import config as _config


@_config.validator("fetch")
def _fetch_problems(table: Any) -> list[str]:
    from .settings import fetch_problems

    return fetch_problems(table)


@_config.validator("search")
def _search_problems(table: Any) -> list[str]:
    from .settings import search_problems

    return search_problems(table)
