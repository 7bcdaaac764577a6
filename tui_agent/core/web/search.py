"""``web_search``'s backends: SearXNG (its JSON API), Brave and Tavily (their APIs, with a
key), and any a plugin registers (``register_backend("name", fn)``). The endpoint is the
one the person configured, so it is not held to the fetch tool's address rules (a SearXNG
on localhost is the usual case).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SearchResult:
    title: str
    url: str
    snippet: str = ""


class SearchError(Exception):
    pass


@dataclass(frozen=True)
class SearchSettings:
    provider: str
    url: str = ""
    api_key: str = ""
    results: int = 5
    timeout: float = 20.0

    @classmethod
    def of(cls, table: Mapping[str, Any]) -> SearchSettings:
        key = str(table.get("api_key") or "")
        if not key and table.get("api_key_env"):
            key = os.environ.get(str(table["api_key_env"]), "")
        provider = str(table.get("provider") or ("searxng" if table.get("url") else ""))
        return cls(
            provider=provider.lower(),
            url=str(table.get("url") or ""),
            api_key=key,
            results=int(table.get("results") or 5),
            timeout=float(table.get("timeout") or 20.0),
        )


Backend = Callable[[str, SearchSettings], list[SearchResult]]
USER_AGENT = "tui-agent/0.1 (web_search tool)"


def _get_json(
    url: str, settings: SearchSettings, headers: Mapping[str, str], body: Any = None
) -> Any:
    import urllib.error
    import urllib.request

    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        url,
        data=data,
        headers={
            "User-Agent": USER_AGENT,
            "Accept": "application/json",
            **({"Content-Type": "application/json"} if data else {}),
            **headers,
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=settings.timeout) as response:
            raw = response.read(5 * 1024 * 1024)
    except urllib.error.HTTPError as exc:
        hint = ""
        if exc.code == 403 and settings.provider == "searxng":
            hint = " (is `json` in search.formats of SearXNG's settings.yml?)"
        elif exc.code in (401, 403):
            hint = " (check the API key: search.api_key or search.api_key_env)"
        raise SearchError(f"{settings.provider}: HTTP {exc.code} {exc.reason}{hint}") from None
    except (OSError, ValueError) as exc:
        raise SearchError(f"{settings.provider}: {getattr(exc, 'reason', exc)}") from None
    try:
        return json.loads(raw)
    except ValueError:
        raise SearchError(f"{settings.provider}: the answer is not JSON") from None


def searxng(query: str, settings: SearchSettings) -> list[SearchResult]:
    from urllib.parse import urlencode

    base = settings.url.rstrip("/")
    if not base.endswith("/search"):
        base += "/search"
    data = _get_json(f"{base}?{urlencode({'q': query, 'format': 'json'})}", settings, {})
    items = data.get("results", []) if isinstance(data, dict) else []
    return [
        SearchResult(str(i.get("title", "")), str(i.get("url", "")), str(i.get("content", "")))
        for i in items
        if isinstance(i, dict) and i.get("url")
    ]


def brave(query: str, settings: SearchSettings) -> list[SearchResult]:
    from urllib.parse import urlencode

    if not settings.api_key:
        raise SearchError("brave needs an API key: search.api_key or search.api_key_env")
    base = settings.url or "https://api.search.brave.com/res/v1/web/search"
    query_string = urlencode({"q": query, "count": settings.results})
    data = _get_json(f"{base}?{query_string}", settings, {"X-Subscription-Token": settings.api_key})
    items = data.get("web", {}).get("results", []) if isinstance(data, dict) else []
    return [
        SearchResult(str(i.get("title", "")), str(i.get("url", "")), str(i.get("description", "")))
        for i in items
        if isinstance(i, dict) and i.get("url")
    ]


def tavily(query: str, settings: SearchSettings) -> list[SearchResult]:
    if not settings.api_key:
        raise SearchError("tavily needs an API key: search.api_key or search.api_key_env")
    base = settings.url or "https://api.tavily.com/search"
    data = _get_json(
        base,
        settings,
        {"Authorization": f"Bearer {settings.api_key}"},
        {"query": query, "max_results": settings.results},
    )
    items = data.get("results", []) if isinstance(data, dict) else []
    return [
        SearchResult(str(i.get("title", "")), str(i.get("url", "")), str(i.get("content", "")))
        for i in items
        if isinstance(i, dict) and i.get("url")
    ]


BACKENDS: dict[str, Backend] = {"searxng": searxng, "brave": brave, "tavily": tavily}


def register_backend(name: str, backend: Backend) -> None:
    """Add a search backend: ``[search] provider = "name"`` then uses it."""
    BACKENDS[name.lower()] = backend


def search(query: str, settings: SearchSettings) -> list[SearchResult]:
    backend = BACKENDS.get(settings.provider)
    if backend is None:
        known = ", ".join(sorted(BACKENDS))
        raise SearchError(f"no search backend {settings.provider!r} (known: {known})")
    return backend(query, settings)[: settings.results]
