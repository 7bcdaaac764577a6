"""Issue 33's safety rules, attacked: private, loopback, link-local and metadata addresses
and names resolving to them, a redirect there, DNS rebinding between check and connect,
credentials in URLs, other schemes, huge and slow and compressed-bomb answers, proxies.
Each case has a real server on 127.0.0.1 that must get no request; a ``"*"`` rule allows
everything, which must not open private addresses."""

from __future__ import annotations

import gzip
import socket
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from test_fetch import Site, config, fetch, send

from tui_agent import create_session

pytestmark = pytest.mark.real_permissions
EVERYTHING = '[permission]\nfetch = { "*" = "allow" }\n'


@pytest.fixture
def site() -> Iterator[Site]:
    server = Site()
    server.page("/", "secret admin page", "text/plain")
    yield server
    server.close()


PRIVATE = [
    "http://127.0.0.1:{port}/",
    "http://127.1.2.3:{port}/",
    "http://localhost:{port}/",
    "http://LOCALHOST.:{port}/",
    "http://api.localhost:{port}/",
    "http://[::1]:{port}/",
    "http://[::ffff:127.0.0.1]:{port}/",
    "http://0.0.0.0:{port}/",
    "http://vm:{port}/",  # /etc/hosts: a real name that resolves to 127.0.0.1
    "http://10.0.0.1/",
    "http://172.16.5.4/",
    "http://192.168.1.1/",
    "http://169.254.169.254/latest/meta-data/",
    "http://[fd00:ec2::254]/",
    "http://[fc00::1]/",
    "http://[fe80::1]/",
    "http://100.100.100.200/",
    "http://2130706433:{port}/",  # 127.0.0.1 as one number
    "http://0x7f000001:{port}/",
    "http://0177.0.0.1:{port}/",
]


@pytest.mark.parametrize("url", PRIVATE)
async def test_private_addresses_are_refused_even_with_a_star_rule(
    project: Path, site: Site, url: str
) -> None:
    if "vm:" in url:
        assert socket.gethostbyname("vm") == "127.0.0.1"  # this machine's /etc/hosts
    config(EVERYTHING)
    got = await fetch(create_session(project), {"url": url.format(port=site.port)})
    assert not got["ok"], got
    assert "private" in got["error"] or "not a valid host" in got["error"], got
    assert site.requests == []


async def test_a_rule_naming_the_host_opens_it_and_only_it(project: Path, site: Site) -> None:
    config(f'[permission]\nfetch = {{ "*" = "allow", "localhost:{site.port}" = "allow" }}\n')
    session = create_session(project)
    got = await fetch(session, {"url": f"http://localhost:{site.port}/"})
    assert got["content"] == "secret admin page"
    for other in (f"http://127.0.0.1:{site.port}/", f"http://vm:{site.port}/"):
        got = await fetch(session, {"url": other})
        assert "private" in got["error"], other
    assert len(site.requests) == 1


async def test_a_wildcard_in_the_host_does_not_open_it(project: Path, site: Site) -> None:
    config('[permission]\nfetch = { "127.0.0.*" = "allow", "127.0.0.1:*" = "deny" }\n')
    got = await fetch(create_session(project), {"url": f"http://127.0.0.2:{site.port}/"})
    assert "private" in got["error"]


async def test_a_redirect_to_a_private_address_is_refused(project: Path, site: Site) -> None:
    """The first server is opened by a rule; it redirects to another private host (with the
    ``"*"`` rule allowing the hop): the hop is checked like a first URL."""
    inner = Site()
    inner.page("/", "internal", "text/plain")
    try:
        for target in (f"http://localhost:{inner.port}/", "http://169.254.169.254/latest/"):
            site.routes["/r"] = lambda h, t=target: send(h, 302, b"", "text/plain", {"Location": t})
            config(
                f'[permission]\nfetch = {{ "*" = "allow", "127.0.0.1:{site.port}" = "allow" }}\n'
            )
            got = await fetch(create_session(project), {"url": site.url("/r")})
            assert not got["ok"] and "private" in got["error"], got
        assert inner.requests == []
    finally:
        inner.close()


@pytest.fixture
def fake_dns(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[list[str]]]:
    """Names answered from a table, one answer per lookup in turn (the last repeats);
    numbers and other names go to the real resolver. Counts the lookups."""
    answers: dict[str, list[list[str]]] = {}
    real = socket.getaddrinfo

    def lookup(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(host, str) and host in answers:
            queue = answers[host]
            addresses = queue.pop(0) if len(queue) > 1 else queue[0]
            lookup.calls.append(host)  # type: ignore[attr-defined]
            return [
                (socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, int(port or 80))) for a in addresses
            ]
        return real(host, port, *args, **kwargs)

    lookup.calls = []  # type: ignore[attr-defined]
    monkeypatch.setattr(socket, "getaddrinfo", lookup)
    answers["__calls__"] = lookup.calls  # type: ignore[assignment]
    return answers


async def test_a_name_resolving_to_a_private_address_is_refused(
    project: Path, site: Site, fake_dns: dict[str, Any]
) -> None:
    fake_dns["intranet.example.com"] = [["10.1.2.3"]]
    fake_dns["sneaky.example.com"] = [["93.184.215.14", "127.0.0.1"]]  # one of them private
    config(EVERYTHING)
    session = create_session(project)
    for name in ("intranet.example.com", "sneaky.example.com"):
        got = await fetch(session, {"url": f"http://{name}:{site.port}/"})
        assert "resolves to a private" in got["error"], got
    assert site.requests == []


async def test_dns_rebinding_between_check_and_connect_reaches_nothing(
    project: Path, site: Site, fake_dns: dict[str, Any]
) -> None:
    """The name answers a public address to the check and 127.0.0.1 after: the connection
    goes to the address checked (unreachable here), never to a second answer."""
    fake_dns["rebind.example.com"] = [["93.184.215.14"], ["127.0.0.1"]]  # public, then loopback
    config(EVERYTHING + "[fetch]\ntimeout = 2\n")
    got = await fetch(create_session(project), {"url": f"http://rebind.example.com:{site.port}/"})
    assert not got["ok"] and "private" not in got["error"], got  # checked, then unreachable
    assert site.requests == []
    assert fake_dns["__calls__"] == ["rebind.example.com"]  # resolved once


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://user:pass@127.0.0.1:{port}/", "credentials"),
        ("http://token@127.0.0.1:{port}/", "credentials"),
        ("https://user:pass@docs.python.org/", "credentials"),
        ("file:///etc/passwd", "only http and https"),
        ("ftp://127.0.0.1/", "only http and https"),
        ("gopher://127.0.0.1:{port}/", "only http and https"),
        ("http://127.0.0.1:{port}/\r\nX-Injected: 1", "control characters"),
        ("http://exa mple.com/", "control characters"),
    ],
)
async def test_urls_fetch_will_not_open(project: Path, site: Site, url: str, why: str) -> None:
    config(f'[permission]\nfetch = {{ "*" = "allow", "127.0.0.1:{site.port}" = "allow" }}\n')
    got = await fetch(create_session(project), {"url": url.format(port=site.port)})
    assert not got["ok"] and why in got["error"], got
    assert site.requests == []


def opened_config(site: Site, fetch_table: str = "") -> None:
    config(f'[permission]\nfetch = {{ "127.0.0.1:{site.port}" = "allow" }}\n{fetch_table}')


SENT: list[int] = []


def streamed(handler: BaseHTTPRequestHandler, chunk: bytes, count: int, pause: float) -> None:
    """``count`` chunks, counted in ``SENT`` as they go (a client that stops reading stops
    them: the socket's buffers fill, then it is closed)."""
    SENT.clear()
    SENT.append(0)
    handler.send_response(200)
    handler.send_header("Content-Type", "text/plain")
    handler.send_header("Connection", "close")
    handler.end_headers()
    try:
        for _ in range(count):
            handler.wfile.write(chunk)
            handler.wfile.flush()
            SENT[0] += len(chunk)
            if pause:
                time.sleep(pause)
    except OSError:
        pass  # the client left: what it should do
    handler.close_connection = True


async def test_a_huge_answer_is_read_up_to_the_byte_cap(project: Path, site: Site) -> None:
    site.routes["/huge"] = lambda h: streamed(h, b"x" * 65536, 1600, 0)  # 100 MB offered
    opened_config(site, "[fetch]\nmax_bytes = 1048576\n")
    started = time.monotonic()
    got = await fetch(create_session(project), {"url": site.url("/huge"), "max_length": 100})
    assert time.monotonic() - started < 10
    assert got["ok"] and got["total_length"] == 1048576
    assert "only the first 1048576 were read" in got["body_note"]
    time.sleep(0.5)
    assert SENT[0] < 20 * 1048576, SENT  # it stopped reading: not 100 MB


async def test_a_compressed_bomb_is_cut_at_the_byte_cap(project: Path, site: Site) -> None:
    bomb = gzip.compress(b"\0" * (50 * 1024 * 1024))  # 50 MB in about 50 KB
    site.routes["/bomb"] = lambda h: send(h, 200, bomb, "text/plain", {"Content-Encoding": "gzip"})
    opened_config(site, "[fetch]\nmax_bytes = 1048576\n")
    session = create_session(project)
    import tracemalloc

    tracemalloc.start()
    try:
        got = await fetch(session, {"url": site.url("/bomb"), "max_length": 10})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert got["total_length"] == 1048576 and "body_note" in got
    assert peak < 20 * 1048576, peak  # never inflated whole (50 MB)


async def test_a_slow_server_is_cut_off_at_the_timeout(project: Path, site: Site) -> None:
    """A byte every 0.2 s keeps every read alive: only a deadline for the whole fetch ends
    it."""
    site.routes["/drip"] = lambda h: streamed(h, b"x", 100, 0.2)
    opened_config(site, "[fetch]\ntimeout = 1\n")
    started = time.monotonic()
    got = await fetch(create_session(project), {"url": site.url("/drip")})
    took = time.monotonic() - started
    assert not got["ok"] and "timed out after 1 s" in got["error"], got
    assert took < 3, took


async def test_a_server_that_never_answers_times_out(project: Path) -> None:
    quiet = socket.socket()
    quiet.bind(("127.0.0.1", 0))
    quiet.listen(1)
    port = quiet.getsockname()[1]
    try:
        config(f'[permission]\nfetch = {{ "127.0.0.1:{port}" = "allow" }}\n[fetch]\ntimeout = 1\n')
        started = time.monotonic()
        got = await fetch(create_session(project), {"url": f"http://127.0.0.1:{port}/"})
        assert "timed out" in got["error"] and time.monotonic() - started < 3
    finally:
        quiet.close()


async def test_proxy_variables_are_honoured(
    project: Path, site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    """HTTP_PROXY sends the request to the proxy (here the test server, playing one) as an
    absolute URL; a name that does not resolve here is left to the proxy."""
    site.routes["http://docs.internal.test/guide"] = lambda h: send(
        h, 200, b"through the proxy", "text/plain"
    )
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{site.port}")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    config('[permission]\nfetch = { "docs.internal.test" = "allow" }\n')
    got = await fetch(create_session(project), {"url": "http://docs.internal.test/guide"})
    assert got["content"] == "through the proxy", got
    assert site.requests[0][0] == "http://docs.internal.test/guide"
    monkeypatch.setenv("NO_PROXY", "internal.test")  # bypassed: resolved here, and it is not
    got = await fetch(create_session(project), {"url": "http://docs.internal.test/guide"})
    assert "could not resolve" in got["error"]


def test_the_checks_hold_for_an_ordinary_user(tmp_path: Path, site: Site) -> None:
    """Nothing in fetch's checks depends on privileges: as nobody (this suite often runs
    as root) a loopback URL is refused before any connection, and an opened one works."""
    import os
    import shutil
    import subprocess
    import sys

    if os.geteuid() != 0:
        users = [None]
    else:
        setpriv = shutil.which("setpriv")
        assert setpriv, "setpriv (util-linux) runs the check as nobody"
        users = [None, [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]]
    code = (
        "import sys\n"
        "from tui_agent import web\n"
        "s = web.FetchSettings(timeout=5)\n"
        "try:\n"
        "    web.fetch(sys.argv[1], s)\n"
        "    print('FETCHED')\n"
        "except web.FetchError as e:\n"
        "    print('REFUSED', e)\n"
        "p = web.fetch(sys.argv[1], s, opened=lambda subject: True)\n"
        "print('OPENED', p.body.decode())\n"
    )
    root = Path(__file__).parents[2]
    for prefix in users:
        done = subprocess.run(
            [*(prefix or []), sys.executable, "-c", code, site.url("/")],
            capture_output=True,
            text=True,
            cwd="/",
            env={**os.environ, "PYTHONPATH": str(root), "HOME": str(tmp_path)},
            timeout=60,
        )
        assert done.stdout.startswith("REFUSED"), (prefix, done.stdout, done.stderr)
        assert "OPENED secret admin page" in done.stdout
    assert len(site.requests) == len(users)


def test_a_headless_run_with_yes_still_refuses_private_addresses(project: Path, site: Site) -> None:
    """``tui-agent run --yes`` (allow-all) against the fake model, as a real process: the
    model's fetch of 127.0.0.1 is refused (allow-all is no rule naming that host), and a
    fetch of a host a rule names is allowed without asking."""
    import json
    import os
    import subprocess
    import sys

    from tui_agent.testing import Call, FakeOpenAI, Reply

    config(f'[permission]\nfetch = {{ "localhost:{site.port}" = "ask" }}\n')
    script = [
        Reply(calls=[Call("fetch", {"url": site.url("/")})]),
        Reply(calls=[Call("WebFetch", {"url": site.url("/", host="localhost")})]),
        Reply("done"),
    ]
    with FakeOpenAI(script) as server:
        done = subprocess.run(
            [sys.executable, "-m", "tui_agent", "run", "--yes", "read the admin page",
             "--base-url", server.base_url, "--model", "m"],
            cwd=project, env=dict(os.environ), capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        results = [
            json.loads(m["content"])
            for body in server.requests
            for m in body["messages"]
            if m["role"] == "tool"
        ]
    first, second = results[0], results[-1]
    assert "private" in first["error"] and "127.0.0.1" in first["error"]
    assert second.get("content") == "secret admin page", results
    assert [path for path, _ in site.requests] == ["/"]  # only the named host's


async def test_an_ipv6_loopback_server_is_closed_until_a_rule_names_it(project: Path) -> None:
    site = Site("::1")
    try:
        site.page("/", "over ipv6", "text/plain")
        url = f"http://[::1]:{site.port}/"
        config(EVERYTHING)
        got = await fetch(create_session(project), {"url": url})
        assert "private" in got["error"] and site.requests == []
        config(f'[permission]\nfetch = {{ "[::1]:{site.port}" = "allow" }}\n')
        got = await fetch(create_session(project), {"url": url})
        assert got["content"] == "over ipv6", got
        assert site.requests[0][1]["Host"] == f"[::1]:{site.port}"
    finally:
        site.close()
