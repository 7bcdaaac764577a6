"""``[fetch]`` and ``[search]``: what they may say, their defaults, and their problems (the
config registers the checks in ``web/__init__``)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

USER_AGENT = "tui-agent/0.1 (fetch tool; +https://pypi.org/project/tui-agent/)"
ACCEPT = "text/markdown, text/html;q=0.9, application/xhtml+xml;q=0.9, text/plain;q=0.8, " + (
    "application/json;q=0.8, application/pdf;q=0.5, */*;q=0.1"
)


@dataclass(frozen=True)
class FetchSettings:
    timeout: float = 30.0  # seconds for the whole fetch, redirects included
    max_bytes: int = 5 * 1024 * 1024  # read at most (after decompression)
    max_length: int = 50_000  # characters returned by one call unless it asks otherwise
    max_redirects: int = 5
    user_agent: str = USER_AGENT
    accept: str = ACCEPT

    @classmethod
    def of(cls, table: Any) -> FetchSettings:
        if not isinstance(table, Mapping) or fetch_problems(table):
            return cls()
        return cls(**{k: table[k] for k in FETCH_KEYS if k in table})


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _whole(value: Any, least: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= least


FETCH_KEYS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "timeout": (lambda v: _number(v) and 0 < v <= 600, "a number of seconds above 0, at most 600"),
    "max_bytes": (lambda v: _whole(v, 1024), "a whole number of bytes, 1024 or more"),
    "max_length": (lambda v: _whole(v, 100), "a whole number of characters, 100 or more"),
    "max_redirects": (lambda v: _whole(v, 0), "a whole number, 0 or more"),
}


def fetch_problems(table: Any) -> list[str]:
    if not isinstance(table, Mapping):
        return ["fetch must be a table ([fetch])"]
    found = []
    for key, value in table.items():
        rule = FETCH_KEYS.get(str(key))
        if rule is None:
            found.append(f"fetch.{key} is not a setting (known: {', '.join(FETCH_KEYS)})")
        elif not rule[0](value):
            found.append(f"fetch.{key} must be {rule[1]}, not {value!r}")
    return found


SEARCH_KEYS = ("provider", "url", "api_key", "api_key_env", "results", "timeout")


def search_problems(table: Any) -> list[str]:
    """``[search]``: a SearXNG ``url``, or a ``provider`` (brave, tavily, or one a plugin
    adds) with ``api_key`` or ``api_key_env``. Secrets are never quoted."""
    if not isinstance(table, Mapping):
        return ["search must be a table ([search])"]
    found = []
    for key, value in table.items():
        if key not in SEARCH_KEYS:
            found.append(f"search.{key} is not a setting (known: {', '.join(SEARCH_KEYS)})")
        elif key in ("provider", "api_key", "api_key_env") and not isinstance(value, str):
            found.append(f"search.{key} must be a string")
        elif key == "url" and not (
            isinstance(value, str) and value.startswith(("http://", "https://"))
        ):
            found.append(f"search.url must be an http:// or https:// URL, not {value!r}")
        elif key == "results" and not (_whole(value, 1) and value <= 50):
            found.append(f"search.results must be a whole number from 1 to 50, not {value!r}")
        elif key == "timeout" and not (_number(value) and value > 0):
            found.append(f"search.timeout must be a number of seconds above 0, not {value!r}")
    if not found and not table.get("url") and not table.get("provider"):
        found.append(
            'search needs a url (SearXNG: url = "http://localhost:8888") or a provider '
            '(provider = "brave" with api_key_env = "BRAVE_API_KEY")'
        )
    return found
