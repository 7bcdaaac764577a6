"""kill -9 of the full-screen app mid-turn, then ``--continue`` (issue 7, the TUI half).

The real app runs in a pseudo-terminal (it refuses to start without one), a prompt is
typed into it the way a user types, the process is killed with SIGKILL while the reply
streams, and ``tui-agent --continue run`` resumes: the next request is a transcript the
API accepts and holds every user message.
"""

from __future__ import annotations

import fcntl
import os
import pty
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tui_agent.testing import FakeOpenAI, Reply

WAIT = 30.0


def wait_until(condition: Callable[[], bool], what: str, seconds: float = WAIT) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


class Terminal:
    """A child process on a 100x30 pseudo-terminal; its output is drained into ``screen``."""

    def __init__(self, argv: list[str], cwd: Path) -> None:
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
        env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "100", "LINES": "30"}
        self.process = subprocess.Popen(
            argv, cwd=cwd, env=env, stdin=slave, stdout=slave, stderr=slave, start_new_session=True
        )
        os.close(slave)
        self.master = master
        self.output = bytearray()
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    def _drain(self) -> None:
        while True:
            try:
                data = os.read(self.master, 65536)
            except OSError:
                return
            if not data:
                return
            self.output += data

    def type(self, text: str) -> None:
        for char in text:
            os.write(self.master, char.encode())
            time.sleep(0.01)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=WAIT)
        os.close(self.master)


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:
        yield fake


def test_kill_9_of_the_app_mid_stream_then_continue(project: Path, server: FakeOpenAI) -> None:
    server.script.append(Reply("a long reply that keeps coming " * 40, delay=0.05))
    base = [sys.executable, "-m", "tui_agent", "--base-url", server.base_url, "--model", "m"]
    terminal = Terminal(base, cwd=project)
    try:
        wait_until(lambda: b"palette" in terminal.output, "the first frame")
        time.sleep(0.5)  # plugins load after the first frame
        terminal.type("first question")
        terminal.type("\r")
        wait_until(lambda: len(server.requests) == 1, "the first request")
        time.sleep(0.5)  # some of the reply has arrived and is on screen
        assert terminal.process.poll() is None
        terminal.process.send_signal(signal.SIGKILL)
        terminal.process.wait(timeout=WAIT)
        assert terminal.process.returncode == -signal.SIGKILL
    finally:
        terminal.close()

    first = server.requests[0]["messages"]
    assert first[-1] == {"role": "user", "content": "first question"}
    server.script.append(Reply("second answer"))
    done = subprocess.run(
        [*base, "--continue", "run", "second question"],
        cwd=project,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "second answer"
    assert "Traceback" not in done.stderr
    assert server.rejected == []
    users = [m["content"] for m in server.requests[-1]["messages"] if m["role"] == "user"]
    assert users == ["first question", "second question"]
