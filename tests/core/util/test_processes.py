"""A process that leaves its group (``setsid``, a daemon) survives the kill and holds the
pipe's other end: every runner that gives up on a command closes its own end then, not
when the garbage collector does (which may come after the event loop closed and print
"Exception ignored … Event loop is closed"). Real processes; the sandbox off, since
inside it the whole PID namespace dies with the command."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import running

from tui_agent import create_session
from tui_agent.core.extensions import prompt_commands
from tui_agent.core.hooks import command_hooks
from tui_agent.core.hooks.command_hooks import CommandHook
from tui_agent.core.sandbox import user_shell

pytestmark = pytest.mark.usefixtures("sandbox_off")


def open_fds() -> set[str]:
    """The pipes this process has open (``pipe:[inode]``)."""
    found = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except FileNotFoundError:  # the one listdir used
            continue
        if target.startswith("pipe:"):
            found.add(target)
    return found


@pytest.fixture
def marker() -> Iterator[str]:
    """A ``sleep`` that leaves the group; killed at the end whatever happened."""
    made = f"sleep 77.{os.getpid()}{id(object()) % 1000}"
    yield made
    for pid in running(made):
        os.kill(pid, signal.SIGKILL)


async def test_a_hook_past_its_timeout(project: Path, marker: str) -> None:
    hook = CommandHook("PreToolUse", f"setsid {marker} & sleep 30", timeout=0.3)
    before = open_fds()
    outcome = await command_hooks.run(hook, {}, project, project)
    assert "timed out after 0.3 s" in outcome.problem
    assert running(marker, first=True)  # it still holds the other ends
    await asyncio.sleep(0.05)
    assert open_fds() <= before


async def test_a_cancelled_hook(project: Path, marker: str) -> None:
    hook = CommandHook("PreToolUse", f"setsid {marker} & sleep 30", timeout=30)
    before = open_fds()
    task = asyncio.ensure_future(command_hooks.run(hook, {}, project, project))
    while not running(marker, first=True):
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.sleep(0.05)
    assert open_fds() <= before


async def test_a_prompt_command_shell_past_its_timeout(project: Path, marker: str) -> None:
    before = open_fds()
    with pytest.raises(prompt_commands.TemplateError, match=r"did not finish in 0\.3 s"):
        await prompt_commands.run_shell(f"setsid {marker} & sleep 30", project, 0.3)
    assert running(marker, first=True)
    await asyncio.sleep(0.05)
    assert open_fds() <= before


async def test_a_cancelled_bang_command(
    project: Path, marker: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(user_shell, "TERM_GRACE", 0.2)
    session = create_session(project)
    before = open_fds()
    task = asyncio.ensure_future(session.shell(f"setsid {marker} & sleep 30"))
    while not running(marker, first=True):
        await asyncio.sleep(0.02)
    assert session.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert running(marker, first=True)
    await asyncio.sleep(0.05)
    assert open_fds() <= before
    session.conversation.journal.close()
