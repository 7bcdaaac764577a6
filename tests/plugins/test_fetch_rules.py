"""Which fetch rules name a host itself (and so open its private address)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

spec = importlib.util.spec_from_file_location(
    "bundled_fetch", Path(__file__).parents[2] / "plugins" / "fetch.py"
)
assert spec is not None and spec.loader is not None
fetch_plugin = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fetch_plugin)


@pytest.mark.parametrize(
    ("pattern", "subject", "named"),
    [
        ("localhost", "localhost", True),
        ("LOCALHOST.", "localhost", True),
        ("localhost:8000", "localhost:8000", True),
        ("localhost:*", "localhost:8000", True),
        ("localhost:*", "localhost", False),  # the scheme's own port: name it without one
        ("localhost", "localhost:8000", False),
        ("127.0.0.1:8000", "127.0.0.1:8000", True),
        ("[::1]:8000", "[::1]:8000", True),
        ("[::1]:*", "[::1]:8000", True),
        ("[::1]", "[::1]:8000", False),
        ("*", "localhost", False),
        ("*.internal", "db.internal", False),
        ("10.*", "10.0.0.1", False),
        ("127.0.0.*", "127.0.0.1", False),
        ("localhost:*", "localhostx:8000", False),
    ],
)
def test_names_host(pattern: str, subject: str, named: bool) -> None:
    assert fetch_plugin.names_host(pattern, subject) is named
