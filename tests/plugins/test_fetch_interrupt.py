"""Esc during a ``fetch`` (issue 33): the turn stops at once, the page is not cached, and
nothing waits for the download: a process whose turn was cancelled mid-fetch ends in a
second or two, not at the fetch's ``timeout`` (it used to wait, the download running on in
the event loop's executor, which ``asyncio.run`` joins before it returns). Real processes,
a real slow HTTP server on 127.0.0.1, the testing kit's model server, the app via Pilot."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from test_fetch import Site, config

from tui_agent import create_session
from tui_agent.testing import Call, FakeOpenAI, Reply
from tui_agent.testing.pilot import run_app, send, turn_over, wait_for_text

pytestmark = pytest.mark.real_permissions


def trickle(handler: BaseHTTPRequestHandler, count: int = 200) -> None:
    """A page of ``count`` bytes, one every 0.3 s: 60 s for 200 (the fetch's timeout is
    60 s)."""
    handler.send_response(200)
    handler.send_header("Content-Type", "text/plain")
    handler.send_header("Content-Length", str(count))
    handler.end_headers()
    for _ in range(count):
        try:
            handler.wfile.write(b"x")
            handler.wfile.flush()
        except OSError:
            return
        time.sleep(0.3)


@pytest.fixture
def slow_site() -> Iterator[Site]:
    site = Site()
    site.routes["/slow"] = trickle
    rule = f'fetch = {{ "127.0.0.1:{site.port}" = "allow" }}'
    config(f"[permission]\n{rule}\n[fetch]\ntimeout = 60\n")
    yield site
    site.close()


SCRIPT = """
import asyncio, sys, time
from pathlib import Path
from tui_agent import create_session
from tui_agent.testing import Call, FakeOpenAI, Reply

async def main() -> None:
    script = [Reply(calls=[Call("fetch", {{"url": "{url}"}})]), Reply("never")]
    async with FakeOpenAI(script) as server:
        session = create_session(Path("{project}"), base_url=server.base_url)
        turn = asyncio.create_task(session.turn("get it"))
        while len(server.requests) < 1:
            await asyncio.sleep(0.05)
        await asyncio.sleep(1.5)  # the download has begun
        session.cancel()
        try:
            await turn
        except asyncio.CancelledError:
            pass
        print("cancelled", flush=True)

started = time.monotonic()
asyncio.run(main())
print(f"ended {{time.monotonic() - started:.1f}}", flush=True)
"""


def test_a_process_cancelled_mid_fetch_ends_without_waiting_for_the_download(
    project: Path, slow_site: Site
) -> None:
    code = textwrap.dedent(SCRIPT).format(url=slow_site.url("/slow"), project=project)
    began = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=40,  # the download alone takes 60 s
        env=dict(os.environ, TUI_AGENT_CI="1"),
    )
    assert done.returncode == 0, done.stderr
    assert "cancelled" in done.stdout
    assert time.monotonic() - began < 20, done.stdout
    assert [path for path, _ in slow_site.requests] == ["/slow"]


async def test_esc_in_the_app_stops_a_fetch_and_the_page_is_not_cached(
    project: Path, slow_site: Site
) -> None:
    slow_site.routes["/slow"] = lambda h: trickle(h, 12)  # 3.6 s
    url = slow_site.url("/slow")
    script = [Reply(calls=[Call("fetch", {"url": url})]), Reply("unused")]
    async with FakeOpenAI(script) as server:
        session = create_session(project, base_url=server.base_url)
        async with run_app(session) as pilot:
            await send(pilot, "get the slow page")
            deadline = time.monotonic() + 10
            while not slow_site.requests and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            assert slow_site.requests, "the fetch never reached the site"
            await asyncio.sleep(0.5)
            began = time.monotonic()
            await pilot.press("escape")
            await turn_over(pilot)
            assert time.monotonic() - began < 3
            await wait_for_text(pilot, "cancelled")
        assert len(server.requests) == 1  # the model was not asked again
        await asyncio.sleep(4)  # the cancelled download would have ended by now
        # a second fetch of the page goes to the site again: what the cancelled fetch read
        # on was not cached (it was: the executor's thread went on and cached the page)
        slow_site.routes["/slow"] = lambda h: _quick(h)
        result = (await session.toolbox.run("fetch", {"url": url})).to_dict()
        assert result["ok"] and result["content"] == "done" and "cached" not in result
        assert len(slow_site.requests) == 2


def _quick(handler: BaseHTTPRequestHandler) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "text/plain")
    handler.send_header("Content-Length", "4")
    handler.end_headers()
    handler.wfile.write(b"done")
