"""The URL parse fetch and its permission rows share, and which addresses count as
private: table-driven."""

from __future__ import annotations

import pytest

from tui_agent.core.permissions.permissions import Rules, session_pattern, subjects_for
from tui_agent.core.util.urls import URLError, parse, subject
from tui_agent.core.web.addresses import private


@pytest.mark.parametrize(
    ("url", "host", "port", "path", "subject_text"),
    [
        ("https://docs.python.org/3/", "docs.python.org", 443, "/3/", "docs.python.org"),
        (
            "HTTPS://Docs.Python.ORG./a?b=1#frag",
            "docs.python.org",
            443,
            "/a?b=1",
            "docs.python.org",
        ),
        ("http://example.com", "example.com", 80, "/", "example.com"),
        ("http://example.com:443/", "example.com", 443, "/", "example.com:443"),
        ("https://localhost:8000/x", "localhost", 8000, "/x", "localhost:8000"),
        ("http://[::1]:8080/", "::1", 8080, "/", "[::1]:8080"),
        ("http://127.0.0.1/", "127.0.0.1", 80, "/", "127.0.0.1"),
        ("https://bücher.example/", "xn--bcher-kva.example", 443, "/", "xn--bcher-kva.example"),
    ],
)
def test_parse(url: str, host: str, port: int, path: str, subject_text: str) -> None:
    target = parse(url)
    assert (target.host, target.port, target.path, target.subject) == (
        host, port, path, subject_text,
    )  # fmt: skip
    assert subject(url) == subject_text


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("ftp://example.com/", "only http and https"),
        ("javascript:alert(1)", "only http and https"),
        ("example.com/page", "only http and https"),
        ("http://u:p@example.com/", "credentials"),
        ("http://@example.com/", "credentials"),
        ("http://example.com:99999/", "not a valid URL"),
        ("http://exa_mple-.com/", "not a valid host"),
        ("http://2130706433/", "not a valid host"),
        ("http://0x7f.0.0.1/", "not a valid host"),
        ("http://127.1/", "not a valid host"),
        ("http://a b.com/", "spaces or control"),
        ("http:///path", "no host"),
    ],
)
def test_refused_urls(url: str, why: str) -> None:
    with pytest.raises(URLError, match=why):
        parse(url)
    assert subject(url) == "*"


@pytest.mark.parametrize(
    ("address", "hidden"),
    [
        ("127.0.0.1", True), ("127.255.0.1", True), ("0.0.0.0", True), ("10.9.8.7", True),
        ("172.16.0.1", True), ("172.31.255.255", True), ("192.168.0.1", True),
        ("169.254.169.254", True), ("100.100.100.200", True), ("192.0.0.192", True),
        ("224.0.0.1", True), ("255.255.255.255", True), ("::1", True), ("::", True),
        ("fc00::1", True), ("fd00:ec2::254", True), ("fe80::1%eth0", True),
        ("::ffff:127.0.0.1", True), ("::ffff:10.0.0.1", True), ("64:ff9b::7f00:1", True),
        ("2002:7f00:1::", True),
        ("93.184.215.14", False), ("8.8.8.8", False), ("172.32.0.1", False),
        ("2606:4700::6810:85e5", False), ("::ffff:8.8.8.8", False),
    ],
)  # fmt: skip
def test_private_addresses(address: str, hidden: bool) -> None:
    assert private(address) is hidden


@pytest.mark.parametrize(
    ("url", "rule", "action"),
    [
        ("https://docs.python.org/3/", {"docs.python.org": "allow"}, "allow"),
        ("https://docs.python.org:8443/", {"docs.python.org": "allow"}, "ask"),
        ("https://docs.python.org:8443/", {"docs.python.org:*": "allow"}, "allow"),
        ("https://a.b.python.org/", {"*.python.org": "allow"}, "allow"),
        ("https://evil.com/", {"*": "allow", "evil.com": "deny"}, "deny"),
        ("not a url", {"*": "ask", "x.org": "allow"}, "ask"),
    ],
)
def test_the_subject_of_fetch_is_the_host(url: str, rule: dict[str, str], action: str) -> None:
    from pathlib import Path

    subjects = subjects_for("fetch", {"url": url}, Path("/p"), Path("/p"))
    verdict = Rules({"fetch": rule}).check_all("fetch", subjects, ["webfetch"])
    assert [v.action for v in verdict] == [action]
    assert session_pattern("fetch", subjects[0].text) == subjects[0].text
