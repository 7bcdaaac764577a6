"""``!command`` in the core (issue 17): ``session.shell`` runs the user's command in the
session's folder with real processes, streams its output as events, records command and
output for the model, keeps long output to its tail as ``execute`` does, and a cancel
kills the whole process group."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tui_agent import create_session
from tui_agent.core.sandbox import user_shell
from tui_agent.core.session.session import Session
from tui_agent.events import ShellFinished, ShellOutput, ShellStarted
from tui_agent.testing import transcript_problem


@pytest.fixture
def session(project: Path) -> Iterator[Session]:
    made = create_session(project)
    yield made
    made.conversation.journal.close()


def follow(session: Session) -> list[Any]:
    seen: list[Any] = []
    session.events.listen(seen.append)
    return seen


def test_output_is_streamed_recorded_and_runs_in_the_session_folder(session: Session) -> None:
    seen = follow(session)
    run = asyncio.run(session.shell("pwd; echo out; echo err >&2; exit 3"))
    assert run.exit_status == 3 and not run.ok and not run.cancelled
    assert run.output == f"{session.directory}\nout\nerr\n"
    shell_events = [e for e in seen if isinstance(e, (ShellStarted, ShellOutput, ShellFinished))]
    assert shell_events[0] == ShellStarted("pwd; echo out; echo err >&2; exit 3")
    assert "".join(e.text for e in shell_events if isinstance(e, ShellOutput)) == run.output
    assert shell_events[-1] == ShellFinished(run)
    (message,) = session.conversation.messages
    assert message.origin == "shell"  # and what the model gets:
    assert message.to_openai() == {
        "role": "user",
        "content": (
            "I ran `pwd; echo out; echo err >&2; exit 3` in the shell (exit status 3):\n"
            f"```\n{session.directory}\nout\nerr\n```"
        ),
    }
    assert transcript_problem(session.conversation.messages) is None
    assert not session.busy


def test_long_output_keeps_its_end_as_execute_does(session: Session) -> None:
    run = asyncio.run(session.shell("seq 1 5000"))
    assert run.exit_status == 0
    assert run.output.startswith("[output cut: the first 3000 lines")
    assert run.output.endswith("\n4999\n5000\n")
    assert run.full_output is not None
    assert Path(run.full_output).read_text().splitlines()[0] == "1"
    assert str(Path.home()) in run.full_output  # under the test's own cache folder
    content = session.conversation.messages[-1]["content"]
    assert "\n1\n" not in content and "\n5000\n```" in content


@pytest.mark.usefixtures("sandbox_off")  # the kill without bwrap
def test_cancel_kills_the_process_group_and_records_what_came(
    session: Session, tmp_path: Path
) -> None:
    pid_file = tmp_path / "child.pid"

    async def go() -> user_shell.ShellRun | None:
        task = asyncio.ensure_future(
            session.shell(f"sleep 30 & echo $! > {pid_file}; echo started; sleep 30")
        )
        deadline = time.monotonic() + 5
        while not (pid_file.exists() and pid_file.read_text().strip()):
            assert time.monotonic() < deadline
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.1)
        assert session.busy
        started = time.monotonic()
        assert session.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert time.monotonic() - started < 2
        return None

    asyncio.run(go())
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 2
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not _alive(child)  # the background sleep went with the group
    content = session.conversation.messages[-1]["content"]
    assert content.startswith("I ran `sleep 30 & echo $! > ")
    assert "(cancelled after " in content and "started" in content
    assert not session.busy


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie has not been reaped yet but runs no more
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return True


@pytest.mark.parametrize(
    "run",
    [
        user_shell.ShellRun("ls -la", "a\nb\n", 0, elapsed=0.2),
        user_shell.ShellRun("echo `date` ``x``", "```\ninner\n```\n", 1),
        user_shell.ShellRun("true", "", 0),
        user_shell.ShellRun("make\ntest", "out\n", None, cancelled=True, elapsed=2.5),
        user_shell.ShellRun("kill -9 $$", "", -9),
    ],
)
def test_the_message_is_recognised_again(run: user_shell.ShellRun) -> None:
    parsed = user_shell.parse(user_shell.message(run))
    assert parsed is not None
    assert parsed.command == run.command
    assert parsed.output == run.output.rstrip("\n")
    assert (parsed.exit_status, parsed.cancelled, parsed.status) == (
        run.exit_status,
        run.cancelled,
        run.status,
    )
    assert user_shell.parse("I ran `x` in the shell today") is None
    assert user_shell.parse("hello") is None


def test_output_is_cleaned_of_colours_and_redrawn_lines() -> None:
    assert user_shell.clean("\x1b[31mred\x1b[0m\r\n10%\r50%\r100%\ndone") == "red\n100%\ndone"


def test_command_of_a_line() -> None:
    assert user_shell.command_of("!ls -la") == "ls -la"
    assert user_shell.command_of("! ") == ""
    assert user_shell.command_of("ls") is None
    assert user_shell.command_of(" !ls") is None
