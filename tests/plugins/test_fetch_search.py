"""Issue 33: web search is pluggable. ``[search]`` with a SearXNG URL (or a Brave or
Tavily key, or a plugin's backend) gives a ``web_search`` tool; without it, no such tool.
The backends' APIs are played by local servers answering as the real ones do."""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from test_fetch import Site, config, send

from tui_agent import create_session, web

pytestmark = pytest.mark.real_permissions
ALLOWED = '[permission]\nweb_search = "allow"\n'


@pytest.fixture
def site() -> Iterator[Site]:
    server = Site()
    yield server
    server.close()


def searxng_answer(handler: BaseHTTPRequestHandler) -> None:
    query = parse_qs(urlsplit(handler.path).query)
    if query.get("format") != ["json"]:
        send(handler, 403, b"Forbidden", "text/html")  # SearXNG without json in formats
        return
    body = {
        "query": query["q"][0],
        "number_of_results": 2,
        "results": [
            {
                "url": "https://docs.python.org/3/library/asyncio.html",
                "title": "asyncio — Asynchronous I/O",
                "content": "asyncio is a library to write concurrent code",
                "engine": "duckduckgo",
            },
            {"url": "https://peps.python.org/pep-3156/", "title": "PEP 3156", "content": ""},
            {"title": "no url: dropped"},
        ],
    }
    send(handler, 200, json.dumps(body).encode(), "application/json")


async def test_no_search_setting_no_web_search_tool(project: Path) -> None:
    config(ALLOWED)
    session = create_session(project)
    assert "web_search" not in session.toolbox.tools
    assert "fetch" in session.toolbox.tools


async def test_searxng_json_api(project: Path, site: Site) -> None:
    site.routes["/search"] = searxng_answer
    config(ALLOWED + f'[search]\nurl = "{site.url("/")}"\n')
    session = create_session(project)
    result = (await session.toolbox.run("web_search", {"query": "python asyncio"})).to_dict()
    assert result["ok"], result
    assert result["count"] == 2
    assert result["results"][0] == {
        "title": "asyncio — Asynchronous I/O",
        "url": "https://docs.python.org/3/library/asyncio.html",
        "snippet": "asyncio is a library to write concurrent code",
    }
    assert result["untrusted"].startswith("Fetched from the web")
    path, headers = site.requests[0]
    assert parse_qs(urlsplit(path).query) == {"q": ["python asyncio"], "format": ["json"]}
    assert headers["User-Agent"].startswith("tui-agent/")


async def test_a_searxng_without_json_says_what_to_change(project: Path, site: Site) -> None:
    site.routes["/search"] = lambda h: send(h, 403, b"Forbidden", "text/html")
    config(ALLOWED + f'[search]\nurl = "{site.url("/")}"\n')
    result = (await create_session(project).toolbox.run("web_search", {"query": "x"})).to_dict()
    assert not result["ok"] and "search.formats" in result["error"]


async def test_brave_with_its_key(
    project: Path, site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    def answer(handler: BaseHTTPRequestHandler) -> None:
        if handler.headers.get("X-Subscription-Token") != "brave-key-123":
            send(handler, 401, b"{}", "application/json")
            return
        results = [{"title": "T", "url": "https://a.example/", "description": "D"}]
        send(handler, 200, json.dumps({"web": {"results": results}}).encode(), "application/json")

    site.routes["/res/v1/web/search"] = answer
    monkeypatch.setenv("BRAVE_API_KEY", "brave-key-123")
    config(
        ALLOWED + '[search]\nprovider = "brave"\napi_key_env = "BRAVE_API_KEY"\n'
        f'url = "{site.url("/res/v1/web/search")}"\nresults = 3\n'
    )
    result = (await create_session(project).toolbox.run("web_search", {"query": "q"})).to_dict()
    assert result["results"] == [{"title": "T", "url": "https://a.example/", "snippet": "D"}]
    assert parse_qs(urlsplit(site.requests[0][0]).query) == {"q": ["q"], "count": ["3"]}
    monkeypatch.setenv("BRAVE_API_KEY", "wrong")
    result = (await create_session(project).toolbox.run("web_search", {"query": "q"})).to_dict()
    assert not result["ok"] and "check the API key" in result["error"]
    assert "wrong" not in result["error"]


async def test_tavily_with_its_key(project: Path, site: Site) -> None:
    seen: list[Any] = []

    def answer(handler: BaseHTTPRequestHandler) -> None:
        send(handler, 405, b"", "text/plain")

    site.routes["/search"] = answer  # GET is not Tavily's
    original = site.server.RequestHandlerClass

    def do_post(handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length", 0))
        seen.append((dict(handler.headers), json.loads(handler.rfile.read(length))))
        results = [{"title": "T", "url": "https://t.example/", "content": "C", "score": 0.9}]
        send(handler, 200, json.dumps({"results": results}).encode(), "application/json")

    original.do_POST = do_post  # type: ignore[attr-defined]
    config(
        ALLOWED + '[search]\nprovider = "tavily"\napi_key = "tvly-abc"\n'
        f'url = "{site.url("/search")}"\n'
    )
    result = (await create_session(project).toolbox.run("web_search", {"query": "q"})).to_dict()
    assert result["results"] == [{"title": "T", "url": "https://t.example/", "snippet": "C"}]
    headers, body = seen[0]
    assert headers["Authorization"] == "Bearer tvly-abc"
    assert body == {"query": "q", "max_results": 5}


async def test_a_plugin_adds_a_backend(project: Path) -> None:
    def mine(query: str, settings: web.SearchSettings) -> list[web.SearchResult]:
        return [web.SearchResult(f"about {query}", "https://mine.example/", settings.api_key)]

    web.register_backend("mine", mine)
    try:
        config(ALLOWED + '[search]\nprovider = "mine"\napi_key = "k"\n')
        result = (await create_session(project).toolbox.run("web_search", {"query": "x"})).to_dict()
        assert result["results"] == [
            {"title": "about x", "url": "https://mine.example/", "snippet": "k"}
        ]
    finally:
        web.BACKENDS.pop("mine")


async def test_web_search_is_asked_about_by_default(project: Path, site: Site) -> None:
    site.routes["/search"] = searxng_answer
    config(f'[search]\nurl = "{site.url("/")}"\n')
    result = (await create_session(project).toolbox.run("web_search", {"query": "x"})).to_dict()
    assert "web_search needs approval" in result["error"]
    assert site.requests == []


@pytest.mark.parametrize(
    ("table", "problem"),
    [
        ("[search]\nresults = 3\n", "search needs a url"),
        ('[search]\nurl = "localhost:8888"\n', "search.url must be an http:// or https:// URL"),
        ('[search]\nurl = "http://x"\nresults = 0\n', "search.results must be"),
        ('[search]\nprovider = "brave"\napi_key = 5\n', "search.api_key must be a string"),
        ('[search]\nurl = "http://x"\nengine = "g"\n', "search.engine is not a setting"),
        ("[fetch]\ntimeout = 0\n", "fetch.timeout must be"),
        ("[fetch]\nmax_bytes = 10\n", "fetch.max_bytes must be"),
        ("[fetch]\nmax_lenght = 100\n", "fetch.max_lenght is not a setting"),
    ],
)
async def test_settings_problems_are_said(project: Path, table: str, problem: str) -> None:
    config(ALLOWED + table)
    session = create_session(project)
    problems = [p.error for p in session.extensions.config_problems]
    assert [p for p in problems if problem in p], problems
    assert "web_search" not in session.toolbox.tools
