"""A cancelled fetch lets go of its connection at once (issue 33): the client's
``cancelled`` event is checked before each hop and in the read loop, and a watcher shuts
the socket the moment it is set, so a server that sends nothing more sees the connection
closed within a second, not at the fetch's ``timeout`` (30 s here). Real HTTP server on
127.0.0.1 that watches its end of the connection; the real client; the real session."""

from __future__ import annotations

import asyncio
import select
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from test_fetch import Site, config

from tui_agent import create_session, web
from tui_agent.testing import Call, FakeOpenAI, Reply

pytestmark = pytest.mark.real_permissions


class Watched:
    """Routes that send headers (or not) and then nothing, and note when the client
    closes its end (EOF or reset on the server's socket)."""

    def __init__(self) -> None:
        self.closed_at: float | None = None
        self.closed = threading.Event()
        self.began = threading.Event()

    def wait_for_close(self, handler: BaseHTTPRequestHandler) -> None:
        self.began.set()
        sock = handler.connection
        end = time.monotonic() + 40
        while time.monotonic() < end:
            readable, _, _ = select.select([sock], [], [], 0.05)
            if not readable:
                continue
            try:
                data = sock.recv(1)
            except OSError:
                data = b""
            if not data:
                self.closed_at = time.monotonic()
                self.closed.set()
                return

    def silent_body(self, handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/plain")
        handler.send_header("Content-Length", "1000")
        handler.end_headers()
        handler.wfile.write(b"x" * 10)
        handler.wfile.flush()
        self.wait_for_close(handler)

    def silent_headers(self, handler: BaseHTTPRequestHandler) -> None:
        self.wait_for_close(handler)


@pytest.fixture
def site() -> Iterator[tuple[Site, Watched]]:
    server, watched = Site(), Watched()
    server.routes["/body"] = watched.silent_body
    server.routes["/headers"] = watched.silent_headers
    config(f'[permission]\nfetch = {{ "127.0.0.1:{server.port}" = "allow" }}\n')
    yield server, watched
    server.close()


def settings() -> web.FetchSettings:
    return web.FetchSettings.of({"timeout": 30})


def fetch_in_thread(url: str, cancelled: threading.Event) -> dict[str, object]:
    out: dict[str, object] = {}

    def run() -> None:
        try:
            out["page"] = web.fetch(url, settings(), opened=lambda s: True, cancelled=cancelled)
        except web.FetchError as exc:
            out["error"] = str(exc)
        out["ended"] = time.monotonic()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    out["thread"] = thread
    return out


@pytest.mark.parametrize("path", ["/body", "/headers"])
def test_a_cancelled_fetch_closes_its_socket_at_once(site: tuple[Site, Watched], path: str) -> None:
    server, watched = site
    cancelled = threading.Event()
    out = fetch_in_thread(server.url(path), cancelled)
    assert watched.began.wait(5), "the fetch never reached the site"
    time.sleep(0.5)  # blocked in the read (or waiting for the headers)
    assert not watched.closed.is_set()
    set_at = time.monotonic()
    cancelled.set()
    assert watched.closed.wait(3), "the server never saw the connection closed"
    assert watched.closed_at is not None and watched.closed_at - set_at < 1.0
    thread = out["thread"]
    assert isinstance(thread, threading.Thread)
    thread.join(3)
    assert not thread.is_alive()
    assert "cancelled" in str(out["error"])
    assert "page" not in out


def test_a_fetch_cancelled_before_it_starts_sends_nothing(site: tuple[Site, Watched]) -> None:
    server, _ = site
    cancelled = threading.Event()
    cancelled.set()
    with pytest.raises(web.FetchError, match="cancelled"):
        web.fetch(server.url("/body"), settings(), opened=lambda s: True, cancelled=cancelled)
    assert server.requests == []


def test_a_redirect_hop_after_the_cancel_is_not_followed(site: tuple[Site, Watched]) -> None:
    server, _ = site
    cancelled = threading.Event()

    def redirect(handler: BaseHTTPRequestHandler) -> None:
        cancelled.set()  # cancelled while the first hop is answered
        handler.send_response(302)
        handler.send_header("Location", "/body")
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    server.routes["/hop"] = redirect
    with pytest.raises(web.FetchError, match="cancelled"):
        web.fetch(server.url("/hop"), settings(), opened=lambda s: True, cancelled=cancelled)
    assert [path for path, _ in server.requests] == ["/hop"]


async def test_esc_on_a_fetch_closes_the_connection_within_a_second(
    project: Path, site: tuple[Site, Watched]
) -> None:
    """The bundled tool hands its cancel to the client: a session's cancel (what Esc
    does) mid-download closes the server's connection at once."""
    server, watched = site
    script = [Reply(calls=[Call("fetch", {"url": server.url("/body")})]), Reply("unused")]
    config(
        f'[permission]\nfetch = {{ "127.0.0.1:{server.port}" = "allow" }}\n[fetch]\ntimeout = 30\n'
    )
    async with FakeOpenAI(script) as model:
        session = create_session(project, base_url=model.base_url)
        turn = asyncio.create_task(session.turn("get it"))
        deadline = time.monotonic() + 10
        while not watched.began.is_set() and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert watched.began.is_set(), "the fetch never reached the site"
        await asyncio.sleep(0.5)
        set_at = time.monotonic()
        session.cancel()
        try:
            await turn
        except asyncio.CancelledError:
            pass
        while not watched.closed.is_set() and time.monotonic() - set_at < 3:
            await asyncio.sleep(0.05)
        assert watched.closed_at is not None, "the connection stayed open after the cancel"
        assert watched.closed_at - set_at < 1.0
        assert len(model.requests) == 1
