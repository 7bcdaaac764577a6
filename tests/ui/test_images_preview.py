"""The preview of a sent image in the chat (issue 33): under the chip, where the terminal
shows images (Kitty's graphics protocol, or Sixel: iTerm2, WezTerm, foot…), drawn by
textual-image; elsewhere (tmux, a terminal that shows none) the chip alone. The real app
under Pilot against the testing kit's server, live and after ``--continue``.

Which terminal this is comes from its environment (textual-image's own detection asks the
terminal at import, which cannot work once Textual reads its input): the tests set the
variables a Kitty, an iTerm2 or a tmux sets. A real pseudo-terminal checks that importing
textual-image for a preview asks the terminal nothing."""

from __future__ import annotations

import asyncio
import fcntl
import os
import pty
import select
import shutil
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest
from textual_image.widget import SixelImage, TGPImage

from tui_agent import create_session
from tui_agent.testing import (
    FakeOpenAI,
    Reply,
    chat_text,
    send,
    turn_over,
    wait_for,
    wait_for_prompt,
)
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.blocks.image import ImagePreviews, protocol

SIZE = (100, 40)
SCREENSHOT = Path(__file__).parents[1] / "fixtures" / "images" / "textual-devtools-screenshot.png"
CHIP = "📎 shot.png (image, PNG 1442×344, 50 KB)"
TERMINAL_VARIABLES = ("TERM", "TERM_PROGRAM", "TMUX", "KITTY_WINDOW_ID", "KONSOLE_VERSION")


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """A terminal that says nothing about images, until the test sets its variables."""
    for name in (*TERMINAL_VARIABLES, "TUI_AGENT_IMAGE_PREVIEW"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    return monkeypatch


Shown = list[tuple[type, int, int]]


def previews(app: TuiAgentApp) -> Shown:
    """Each preview's widget class and size (columns, rows) in the chat."""
    return [
        (type(child), child.size.width, child.size.height)
        for box in app.query(ImagePreviews)
        for child in box.children
    ]


async def sent_and_resumed(project: Path) -> tuple[Shown, Shown]:
    """The previews in the chat after ``@shot.png`` is sent, and after ``--continue``."""
    shutil.copy(SCREENSHOT, project / "shot.png")
    async with FakeOpenAI([Reply("A devtools window.")]) as server:
        first = create_session(project, base_url=server.base_url, model="fake-model")
        async with TuiAgentApp(first).run_test(size=SIZE) as pilot:
            await wait_for_prompt(pilot)
            await send(pilot, "what is wrong here @shot.png")
            await turn_over(pilot)
            await pilot.pause()
            assert CHIP in chat_text(pilot.app)
            live = previews(pilot.app)
        first.conversation.journal.close()
    again = create_session(project)
    assert again.conversation.resume(first.id)
    async with TuiAgentApp(again).run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: CHIP in chat_text(pilot.app))
        await pilot.pause()
        resumed = previews(pilot.app)
    again.conversation.journal.close()
    return live, resumed


async def test_kitty_shows_a_preview_under_the_chip_live_and_resumed(
    project: Path, terminal: pytest.MonkeyPatch
) -> None:
    terminal.setenv("TERM", "xterm-kitty")
    terminal.setenv("KITTY_WINDOW_ID", "1")
    live, resumed = await sent_and_resumed(project)
    assert [issubclass(kind, TGPImage) for kind, _, _ in live] == [True]
    assert [issubclass(kind, TGPImage) for kind, _, _ in resumed] == [True]
    # a few rows high, as wide as its shape wants (1442x344, cells 10x20 px: 8 rows, ~67)
    (_, columns, rows), *_ = live
    assert rows == 8 and 40 < columns < 90, live


async def test_iterm2_shows_a_sixel_preview(project: Path, terminal: pytest.MonkeyPatch) -> None:
    terminal.setenv("TERM_PROGRAM", "iTerm.app")
    live, resumed = await sent_and_resumed(project)
    assert [kind for kind, _, _ in live] == [SixelImage]
    assert [kind for kind, _, _ in resumed] == [SixelImage]


@pytest.mark.parametrize(
    "variables",
    [
        {},  # xterm-256color: no images
        {"TERM": "xterm-kitty", "TMUX": "/tmp/tmux-0/default,1,0"},  # Kitty, but in tmux
        {"TERM": "xterm-kitty", "TUI_AGENT_IMAGE_PREVIEW": "off"},
    ],
    ids=["xterm", "tmux", "off"],
)
async def test_no_preview_where_the_terminal_shows_no_images(
    project: Path, terminal: pytest.MonkeyPatch, variables: dict[str, str]
) -> None:
    for name, value in variables.items():
        terminal.setenv(name, value)
    live, resumed = await sent_and_resumed(project)
    assert live == [] and resumed == []


def test_the_terminal_is_told_by_its_environment() -> None:
    assert protocol({"TERM": "xterm-kitty"}) == "tgp"
    assert protocol({"TERM": "xterm-256color", "KITTY_WINDOW_ID": "3"}) == "tgp"
    assert protocol({"TERM": "xterm-256color", "TERM_PROGRAM": "iTerm.app"}) == "sixel"
    assert protocol({"TERM": "xterm-256color", "TERM_PROGRAM": "WezTerm"}) == "sixel"
    assert protocol({"TERM": "foot"}) == "sixel"
    assert protocol({"TERM": "xterm-256color", "KONSOLE_VERSION": "230805"}) == "sixel"
    assert protocol({"TERM": "xterm-256color"}) is None
    assert protocol({"TERM": "tmux-256color", "TERM_PROGRAM": "tmux"}) is None
    assert protocol({"TERM": "xterm-kitty", "TMUX": "/tmp/tmux"}) is None
    assert protocol({"TERM": "screen", "TUI_AGENT_IMAGE_PREVIEW": "sixel"}) == "sixel"
    assert protocol({"TERM": "tmux", "TUI_AGENT_IMAGE_PREVIEW": "kitty"}) == "tgp"
    assert protocol({"TERM": "xterm-kitty", "TUI_AGENT_IMAGE_PREVIEW": "no"}) is None


LOAD = """
import sys, time
from tui_agent.ui.blocks.image import _load
began = time.monotonic()
made = _load("tgp")
print(made.__name__, f"{time.monotonic() - began:.2f}", flush=True)
"""


def test_loading_textual_image_asks_the_terminal_nothing() -> None:
    """In a real pseudo-terminal (where textual-image's import would send a Sixel and a
    Kitty query, and wait 0.1 s for each answer), the preview's import writes nothing but
    what the script prints: Textual's input thread would get the answers as keys."""
    leader, follower = pty.openpty()
    # 24 rows of 80 columns, 800x480 pixels (a fresh pty has 0x0)
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 800, 480))
    process = subprocess.Popen(
        [sys.executable, "-c", LOAD],
        stdin=follower,
        stdout=follower,
        stderr=subprocess.PIPE,
        env=dict(os.environ, TERM="xterm-kitty"),
    )
    os.close(follower)
    written = b""
    end = time.monotonic() + 30
    while time.monotonic() < end:
        ready, _, _ = select.select([leader], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(leader, 4096)
            except OSError:
                break
            if not chunk:
                break
            written += chunk
        elif process.poll() is not None:
            break
    process.wait(10)
    os.close(leader)
    assert process.returncode == 0, process.stderr.read() if process.stderr else ""
    assert b"\x1b" not in written, written
    assert written.startswith(b"TGPImage "), written


def run_in_a_terminal(project: Path, term: str, wait: float = 20.0) -> bytes:
    """``tui-agent --continue`` in a real pseudo-terminal of 100x40 cells (1000x800
    pixels) whose $TERM is ``term``: what it wrote until a second after the resumed reply
    was drawn (or ``wait`` ran out), then it is stopped."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 1000, 800))
    env = {k: v for k, v in os.environ.items() if k not in TERMINAL_VARIABLES}
    env.update(TERM=term)
    env.pop("TUI_AGENT_IMAGE_PREVIEW", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "tui_agent", "--continue"],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        cwd=project,
        env=env,
        start_new_session=True,
    )
    os.close(follower)
    written = b""
    end = time.monotonic() + wait
    seen: float | None = None
    try:
        while time.monotonic() < end and process.poll() is None:
            ready, _, _ = select.select([leader], [], [], 0.1)
            if ready:
                try:
                    written += os.read(leader, 65536)
                except OSError:
                    break
            if seen is None and b"A devtools window." in written:
                seen = time.monotonic()  # the resumed chat is drawn: a second more
            if seen is not None and time.monotonic() - seen > 1.0:
                break
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(10)
        os.close(leader)
    return written


async def test_the_app_in_a_kitty_terminal_draws_the_preview(project: Path) -> None:
    """The whole way: the app in a real pty whose $TERM is Kitty's sends the image to the
    terminal (Kitty graphics protocol: the PNG in base64 chunks, ``f=100``, then a
    virtual placement, ``a=p``) for a resumed message with ``@shot.png``; with a $TERM
    that shows no images, nothing of the kind is sent."""
    shutil.copy(SCREENSHOT, project / "shot.png")
    async with FakeOpenAI([Reply("A devtools window.")]) as server:
        session = create_session(project, base_url=server.base_url, model="fake-model")
        await session.turn(session.conversation.expand("what is wrong here @shot.png"))
        session.conversation.journal.close()
    kitty = await asyncio.to_thread(run_in_a_terminal, project, "xterm-kitty")
    assert b"A devtools window." in kitty
    assert b"\x1b_Gi=" in kitty and b"f=100" in kitty, kitty[-2000:]
    assert b"\x1b_Ga=p," in kitty
    plain = await asyncio.to_thread(run_in_a_terminal, project, "xterm-256color")
    assert b"A devtools window." in plain
    assert b"\x1b_G" not in plain
