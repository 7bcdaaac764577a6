"""Public: the web, as the bundled ``fetch`` plugin uses it and other plugins may: one
checked fetch (``fetch``: private addresses refused unless ``opened``, connections pinned
to the checked address, caps and a deadline), a body as Markdown or text (``convert``),
the permission subject of a URL (``subject``), and ``web_search``'s backends
(``register_backend("name", fn)`` adds one for ``[search] provider = "name"``)."""

from .core.util.urls import URLError, parse, subject
from .core.web.client import FetchError, Page, Redirect, fetch
from .core.web.convert import FORMATS, Converted, Unreadable, convert
from .core.web.search import (
    BACKENDS,
    SearchError,
    SearchResult,
    SearchSettings,
    register_backend,
    search,
)
from .core.web.settings import FetchSettings

__all__ = [
    "BACKENDS",
    "FORMATS",
    "Converted",
    "FetchError",
    "FetchSettings",
    "Page",
    "Redirect",
    "SearchError",
    "SearchResult",
    "SearchSettings",
    "URLError",
    "Unreadable",
    "convert",
    "fetch",
    "parse",
    "register_backend",
    "search",
    "subject",
]
