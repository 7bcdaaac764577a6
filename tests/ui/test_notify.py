"""Issue 35: desktop notifications through the terminal. The real app (Pilot) on a real
session whose turns run against the testing kit's server; Textual's own ``AppBlur`` and
``AppFocus`` events say whether the terminal has focus. Pilot has no terminal, so the
one stand-in is the last hop: what the app would write to its terminal is recorded
(``notify.terminal_of``); the bytes are Claude-peers' OSC 9 / OSC 777 and the bell."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import ALLOW_ALL, write
from textual import events

from tui_agent import create_session
from tui_agent.core.util.paths import user_config_dir
from tui_agent.testing import Call, FakeOpenAI, Reply, send, wait_for
from tui_agent.ui import notify
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.blocks.message import Note
from tui_agent.ui.dialogs.approval import ApprovalScreen

SIZE = (100, 30)


def plain(note: Note) -> str:
    return note.visual.plain  # type: ignore[attr-defined]


DONE = "tui-agent is waiting for your input"


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What the app writes to its terminal for notifications; a WezTerm outside tmux."""
    written: list[str] = []
    monkeypatch.setattr(notify, "terminal_of", lambda app: written.append)
    for var in ("TMUX", "VTE_VERSION", "WT_SESSION"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.setenv("TERM_PROGRAM", "WezTerm")
    return written


async def one_turn(project: Path, *, blur: bool, replies: list[Reply] | None = None) -> Any:
    """Send a prompt, lose focus (or not) while the reply comes, wait for its end."""
    async with FakeOpenAI(replies or [Reply("ok", delay=0.3)]) as server:
        session = create_session(project, base_url=server.base_url, model="m")
        app = TuiAgentApp(session)
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, "hello")
            await wait_for(pilot, lambda: session.busy)
            if blur:
                app.post_message(events.AppBlur())
                await wait_for(pilot, lambda: not app.app_focus)
            await wait_for(pilot, lambda: not session.busy, timeout=10)
            await pilot.pause(0.1)
            return app


async def test_a_turn_that_ends_unfocused_writes_osc_9(project: Path, terminal: list[str]) -> None:
    await one_turn(project, blur=True)
    assert terminal == [f"\x1b]9;tui-agent: {DONE}\x07"]


async def test_nothing_is_written_while_the_terminal_has_focus(
    project: Path, terminal: list[str]
) -> None:
    await one_turn(project, blur=False)
    assert terminal == []


async def test_focus_back_before_the_end_writes_nothing(project: Path, terminal: list[str]) -> None:
    async with FakeOpenAI([Reply("ok", delay=0.5)]) as server:
        session = create_session(project, base_url=server.base_url, model="m")
        app = TuiAgentApp(session)
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, "hello")
            app.post_message(events.AppBlur())
            await wait_for(pilot, lambda: not app.app_focus)
            app.post_message(events.AppFocus())
            await wait_for(pilot, lambda: app.app_focus)
            await wait_for(pilot, lambda: not session.busy, timeout=10)
            await pilot.pause(0.1)
    assert terminal == []


@pytest.mark.real_permissions
async def test_an_approval_waiting_unfocused_notifies(project: Path, terminal: list[str]) -> None:
    write(user_config_dir() / "config.toml", '[notify]\non = ["approval"]\n')
    replies = [
        Reply(calls=[Call("write", {"path": "a.txt", "content": "x"})], delay=0.3),
        Reply("done"),
    ]
    async with FakeOpenAI(replies) as server:
        session = create_session(project, base_url=server.base_url, model="m")
        app = TuiAgentApp(session)
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, "write it")
            app.post_message(events.AppBlur())
            await wait_for(pilot, lambda: not app.app_focus)
            await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen))
            await pilot.pause(0.1)
            assert terminal == [
                "\x1b]9;tui-agent: tui-agent needs your permission to use write\x07"
            ]
            await pilot.pause(0.4)  # the dialog ignores keys pressed as it opens
            await pilot.press("y")  # the person is back: allowed once
            await wait_for(pilot, lambda: not session.busy, timeout=10)
    assert terminal == [  # "done" is not in [notify] on
        "\x1b]9;tui-agent: tui-agent needs your permission to use write\x07"
    ]


async def test_the_bell_where_the_terminal_shows_no_notification(
    project: Path, terminal: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TERM_PROGRAM")
    await one_turn(project, blur=True)
    assert terminal == ["\x07"]


async def test_osc_777_through_tmux(
    project: Path, terminal: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TERM", "foot")
    monkeypatch.setenv("TMUX", "/tmp/tmux-0/default,1,0")
    await one_turn(project, blur=True)
    assert terminal == [f"\x1bPtmux;\x1b\x1b]777;notify;tui-agent;{DONE}\x07\x1b\\"]


async def test_notify_off_and_a_wrong_setting_said_once(project: Path, terminal: list[str]) -> None:
    write(user_config_dir() / "config.toml", ALLOW_ALL + "[notify]\non = []\n")
    await one_turn(project, blur=True)
    assert terminal == []
    write(user_config_dir() / "config.toml", ALLOW_ALL + '[notify]\non = "always"\n')
    replies = [Reply("one", delay=0.3), Reply("two", delay=0.3)]
    async with FakeOpenAI(replies) as server:
        session = create_session(project, base_url=server.base_url, model="m")
        app = TuiAgentApp(session)
        async with app.run_test(size=SIZE) as pilot:
            for prompt in ("one", "two"):
                await send(pilot, prompt)
                await wait_for(pilot, lambda: session.busy)
                app.post_message(events.AppBlur())
                await wait_for(pilot, lambda: not session.busy, timeout=10)
                await pilot.pause(0.1)
            texts = [plain(note) for note in app.chat.query(Note)]
    assert terminal == [f"\x1b]9;tui-agent: {DONE}\x07"] * 2  # the default applies
    assert sum("[notify] on must be a list" in t for t in texts) == 1, texts


@pytest.mark.parametrize(
    ("environ", "how"),
    [
        ({"TERM": "foot"}, "osc777"),
        ({"TERM": "rxvt-unicode-256color"}, "osc777"),
        ({"TERM": "xterm-256color", "VTE_VERSION": "7600"}, "osc777"),
        ({"TERM": "xterm-kitty"}, "osc9"),
        ({"TERM": "xterm-256color", "TERM_PROGRAM": "iTerm.app"}, "osc9"),
        ({"TERM": "xterm-256color", "WT_SESSION": "x"}, "osc9"),
        ({"TERM": "xterm-256color"}, "bell"),
        ({"TERM": "screen-256color"}, "bell"),
    ],
)
def test_the_terminal_decides_the_sequence(environ: dict[str, str], how: str) -> None:
    assert notify.method(environ) == how


def test_a_message_cannot_end_the_sequence_early() -> None:
    assert notify.sequence("a\x1b]9;x\x07b; c", "osc777") == (
        "\x1b]777;notify;tui-agent;a]9,xb, c\x07"
    )
