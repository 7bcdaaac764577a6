"""Issue 35: the notification bytes from the real app in a real terminal (tmux). tmux's
``pipe-pane -O`` records every byte the app writes; ``send-keys -H`` types the terminal's
own focus reports (``ESC [ O`` out, ``ESC [ I`` in), which Textual turns into ``AppBlur``
and ``AppFocus``. Inside tmux the OSC 9 goes out wrapped in tmux's passthrough."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tui_agent.testing import FakeOpenAI, Reply

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")

OSC9 = b"\x1bPtmux;\x1b\x1b]9;tui-agent: tui-agent is waiting for your input\x07\x1b\\"
FOCUS_OUT = ("1b", "5b", "4f")
FOCUS_IN = ("1b", "5b", "49")


def tmux(socket: str, *args: str) -> str:
    done = subprocess.run(["tmux", "-L", socket, *args], capture_output=True, text=True)
    return done.stdout


def run_app(project: Path, server: FakeOpenAI, record: Path, steps: Any) -> bytes:
    """The app in tmux (a WezTerm outside, so OSC 9), its output recorded, ``steps(keys,
    until)`` driven; what it wrote."""
    socket = f"tui-agent-notify-{os.getpid()}"
    env = {k: v for k, v in os.environ.items() if k in ("HOME", "PATH", "LANG")}
    env |= {k: v for k, v in os.environ.items() if k.startswith("XDG_")}
    command = [
        "env",
        *(f"{k}={v}" for k, v in env.items()),
        "TERM_PROGRAM=WezTerm",
        "TUI_AGENT_CI=1",
        sys.executable,
        "-m",
        "tui_agent",
        "--base-url",
        server.base_url,
        "--model",
        "fake-model",
    ]
    tmux(socket, "new-session", "-d", "-s", "app", "-x", "100", "-y", "30", "-c", str(project),
         *command)  # fmt: skip
    tmux(socket, "pipe-pane", "-O", "-t", "app", f"cat >> {record}")

    def pane() -> str:
        return tmux(socket, "capture-pane", "-p")

    def until(condition: Any, what: str) -> None:
        deadline = time.monotonic() + 30
        while not condition():
            assert time.monotonic() < deadline, f"{what}; the pane shows:\n{pane()}"
            time.sleep(0.05)

    def keys(*args: str) -> None:
        tmux(socket, "send-keys", "-t", "app", *args)

    try:
        until(lambda: "Quit" in pane(), "the app did not start")
        steps(keys, until, pane)
    finally:
        tmux(socket, "kill-server")
    return record.read_bytes() if record.exists() else b""


def test_in_tmux_osc_9_is_written_only_while_unfocused(
    project: Path, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script += [Reply("First answer.", delay=1.0), Reply("Second answer.", delay=1.0)]

    def steps(keys: Any, until: Any, pane: Any) -> None:
        keys("focused prompt", "Enter")  # the terminal keeps its focus
        until(lambda: "First answer." in pane(), "no first answer")
        keys("away prompt", "Enter")
        until(lambda: len(fake_openai.requests) == 2, "the second prompt was not sent")
        keys("-H", *FOCUS_OUT)  # the user went to another window
        until(lambda: "Second answer." in pane(), "no second answer")
        until(lambda: OSC9 in record.read_bytes(), "no notification")  # after the checkpoint

    record = tmp_path / "out.bin"
    written = run_app(project, fake_openai, record, steps)
    assert written.count(OSC9) == 1, written[-400:]


def test_in_tmux_focus_back_before_the_end_writes_nothing(
    project: Path, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script += [Reply("The answer.", delay=1.5)]

    def steps(keys: Any, until: Any, pane: Any) -> None:
        keys("a prompt", "Enter")
        until(lambda: fake_openai.requests, "the prompt was not sent")
        keys("-H", *FOCUS_OUT)
        time.sleep(0.2)
        keys("-H", *FOCUS_IN)
        until(lambda: "The answer." in pane(), "no answer")
        time.sleep(3)  # the turn's end (its checkpoint) is over by then: nothing came

    written = run_app(project, fake_openai, tmp_path / "out.bin", steps)
    assert b"]9;" not in written and written  # the app wrote its frames, no notification
