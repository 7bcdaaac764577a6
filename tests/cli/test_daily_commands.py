"""Issue 17, the daily commands: `tui-agent --version`, headless output in a terminal and in
a pipe, /export and /copy. Real subprocesses, a real pseudo-terminal, the real openai client
against the testing kit's server, the real app under Pilot."""

from __future__ import annotations

import os
import pty
import re
import select
import shutil
import subprocess
import sys
import time
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from conftest import write

import tui_agent
from tui_agent import create_session
from tui_agent.headless import same_destination
from tui_agent.testing import (
    Call,
    FakeOpenAI,
    Person,
    Reply,
    chat_text,
    run_app,
    send,
    turn_over,
    wait_for,
    wait_for_text,
)

REPO = Path(tui_agent.__file__).resolve().parents[1]

# a plugin that says something while a reply streams (as an MCP server that stops would)
CHATTY = """\
import tui_agent
from tui_agent.events import TextChunk


@tui_agent.setup("chatty")
def chatty(session):
    chunks = []

    def follow(event):
        if isinstance(event, TextChunk):
            chunks.append(event.text)
            if len(chunks) == 2:
                session.output.say("a note from a plugin")

    session.events.listen(follow)
"""


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "tui_agent", *args]


# -- --version -------------------------------------------------------------------------------


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version_prints_the_installed_version(tmp_path: Path, flag: str) -> None:
    done = subprocess.run(cli(flag), cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    assert done.stdout == f"tui-agent {metadata.version('tui-agent')}\n"
    assert done.stderr == ""


def test_version_with_other_flags_goes_through_the_parser(tmp_path: Path) -> None:
    done = subprocess.run(
        cli("--model", "m", "--version"), cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stdout) == (0, f"tui-agent {metadata.version('tui-agent')}\n")


def test_version_imports_neither_textual_nor_openai(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "tui_agent", "--version"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0
    imported = [line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()]
    assert "tui_agent.cli" in imported  # the scan sees our own imports
    heavy = [name for name in imported if name.split(".")[0] in ("textual", "openai", "rich")]
    assert heavy == []


def test_version_from_a_source_tree_comes_from_pyproject(tmp_path: Path) -> None:
    """No package metadata to find (-S: no site-packages): the version in pyproject.toml,
    here a copy of the source tree with a version of its own."""
    tree = tmp_path / "tree"
    (tree / "tui_agent").mkdir(parents=True)
    for name in ("__init__.py", "cli.py"):
        shutil.copyfile(REPO / "tui_agent" / name, tree / "tui_agent" / name)
    pyproject = (REPO / "pyproject.toml").read_text()
    assert tomllib.loads(pyproject)["project"]["version"] != "9.8.7"
    (tree / "pyproject.toml").write_text(
        re.sub(r'(?m)^version = ".*"', 'version = "9.8.7"', pyproject)
    )
    assert tomllib.loads((tree / "pyproject.toml").read_text())["project"]["version"] == "9.8.7"
    probe = "import importlib.metadata as m; m.version('tui-agent')"  # really not found there
    found = subprocess.run(
        [sys.executable, "-S", "-B", "-c", probe], cwd=tree, capture_output=True, timeout=60
    )
    assert found.returncode != 0
    done = subprocess.run(
        [sys.executable, "-S", "-B", "-m", "tui_agent.cli", "--version"],
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stdout) == (0, "tui-agent 9.8.7\n"), done.stderr


# -- headless output: a terminal and a pipe ---------------------------------------------------


def test_same_destination_tells_one_place_from_two() -> None:
    master, slave = pty.openpty()
    other_master, other_slave = pty.openpty()
    read_end, write_end = os.pipe()
    other_read, other_write = os.pipe()
    again = os.open(os.ttyname(slave), os.O_RDWR | os.O_NOCTTY)  # the same terminal, opened again
    files = [
        os.fdopen(fd, "w", closefd=False)
        for fd in (slave, again, other_slave, write_end, other_write)
    ]
    try:
        one, one_again, two, pipe, other_pipe = files
        assert same_destination(one, one)
        assert same_destination(one, one_again)
        assert not same_destination(one, two)
        assert not same_destination(pipe, one)
        assert not same_destination(one, pipe)
        assert same_destination(pipe, pipe)  # 2>&1 into a pipe
        assert not same_destination(pipe, other_pipe)
    finally:
        for fd in (
            master,
            slave,
            other_master,
            other_slave,
            again,
            read_end,
            write_end,
            other_read,
            other_write,
        ):
            os.close(fd)


def in_terminal(argv: list[str], cwd: Path, timeout: float = 60) -> tuple[int, str]:
    """Run ``argv`` with stdout and stderr on one pseudo-terminal (as in a shell): its exit
    status and what the terminal received, with the terminal's \\r\\n as \\n."""
    master, slave = pty.openpty()
    process = subprocess.Popen(
        argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, close_fds=True
    )
    os.close(slave)
    received = bytearray()
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    data = os.read(master, 65536)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not data:
                    break
                received += data
            elif process.poll() is not None:
                break
        status = process.wait(timeout=5)
    finally:
        process.kill()
        os.close(master)
    return status, received.decode().replace("\r\n", "\n")


@pytest.fixture
def chatty_home(isolated_home: Path) -> Path:
    write(isolated_home / ".agents" / "plugins" / "chatty.py", CHATTY)
    return isolated_home


def turn_with_a_tool() -> list[Reply]:
    return [Reply("Let me look.", calls=[Call("list", {"path": "."})]), Reply("Done.")]


def test_in_a_terminal_tool_lines_and_notes_start_lines_of_their_own(
    project: Path, chatty_home: Path
) -> None:
    with FakeOpenAI(turn_with_a_tool()) as server:
        argv = cli("run", "--base-url", server.base_url, "--model", "m", "look")
        status, shown = in_terminal(argv, project)
    assert status == 0, shown
    lines = shown.splitlines()
    assert lines == [
        "Let ",
        "a note from a plugin",
        "me look.",
        '→ list {"path": "."}',
        lines[4],
        "",
        "Done.",
    ]
    assert lines[4].startswith("✔ list (")


def test_a_piped_stdout_holds_exactly_the_replies(project: Path, chatty_home: Path) -> None:
    with FakeOpenAI(turn_with_a_tool()) as server:
        done = subprocess.run(
            cli("run", "--base-url", server.base_url, "--model", "m", "look"),
            cwd=project,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Let me look.\n\nDone.\n"
    assert done.stderr.splitlines()[0] == "a note from a plugin"
    assert '→ list {"path": "."}' in done.stderr.splitlines()


# -- /export ----------------------------------------------------------------------------------


async def a_session_after_a_turn(project: Path, server: FakeOpenAI) -> tui_agent.Session:
    (project / "a.txt").write_text("alpha\nbeta\n")
    server.script += [
        Reply(
            "Let me look.",
            thinking="secret musings",
            calls=[Call("read", {"path": "a.txt"})],
        ),
        Reply("It says `alpha`."),
    ]
    session = create_session(project, base_url=server.base_url, model="m")
    assert await session.turn("what is in a.txt?") == "It says `alpha`."
    return session


def notes(session: tui_agent.Session) -> list[str]:
    return [note.text for note in session.output.history]


async def test_export_writes_the_conversation_as_markdown(
    project: Path, fake_openai: FakeOpenAI
) -> None:
    session = await a_session_after_a_turn(project, fake_openai)

    assert await session.commands.run_line("/export")

    path = project / f"tui-agent-{session.id}.md"
    assert notes(session)[-1] == f"Exported 4 messages to {path}"
    text = path.read_text()
    assert text.startswith(f"# tui-agent session {session.id}\n\n- Folder: `{project}`\n")
    assert "- Model: openai / m\n" in text
    body = text[text.index("## You") :]
    assert body.startswith("## You\n\nwhat is in a.txt?\n\n## Assistant\n\nLet me look.\n\n")
    call = body[body.index("<details>") : body.index("</details>") + len("</details>")]
    assert call.startswith('<details>\n<summary>✔ <code>read</code> {"path": "a.txt"}</summary>\n')
    assert 'Arguments:\n\n```json\n{\n  "path": "a.txt"\n}\n```' in call
    assert 'Result:\n\n```json\n{\n  "path": "a.txt",\n  "total_lines": 2\n}\n```' in call
    assert "`content`:\n\n```\n     1\talpha\n     2\tbeta\n```" in call  # a file's text as a block
    assert body.endswith("</details>\n\nIt says `alpha`.\n")
    assert body.count("## Assistant") == 1  # one heading for the turn's replies
    assert "secret musings" not in text  # thinking is not kept in the conversation


async def test_export_to_a_file_refuses_to_overwrite_without_force(
    project: Path, fake_openai: FakeOpenAI
) -> None:
    session = await a_session_after_a_turn(project, fake_openai)
    target = project / "notes.md"
    target.write_text("mine\n")

    await session.commands.run_line("/export notes.md")

    assert target.read_text() == "mine\n"
    assert session.output.history[-1].kind == "error"
    assert "notes.md exists" in notes(session)[-1] and "--force" in notes(session)[-1]

    await session.commands.run_line("/export notes.md --force")

    assert "## You\n\nwhat is in a.txt?" in target.read_text()
    assert notes(session)[-1] == f"Exported 4 messages to {target}"


async def test_export_again_brings_the_default_file_up_to_date(
    project: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    session = await a_session_after_a_turn(project, fake_openai)
    await session.commands.run_line("/export")
    fake_openai.script.append(Reply("Second answer."))
    await session.turn("and now?")

    await session.commands.run_line("/export")

    text = (project / f"tui-agent-{session.id}.md").read_text()
    assert text.endswith("## You\n\nand now?\n\n## Assistant\n\nSecond answer.\n")
    elsewhere = tmp_path / "out"
    elsewhere.mkdir()
    await session.commands.run_line(f"/export {elsewhere}")  # a folder: the default name in it
    assert (elsewhere / f"tui-agent-{session.id}.md").read_text().endswith("Second answer.\n")


async def test_export_of_an_empty_conversation_writes_nothing(project: Path) -> None:
    session = create_session(project)
    await session.commands.run_line("/export")
    assert notes(session)[-1] == "Nothing to export yet: the conversation is empty."
    assert list(project.glob("*.md")) == []


# -- /copy ------------------------------------------------------------------------------------


async def test_copy_puts_the_last_reply_on_the_clipboard(
    project: Path, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script += [Reply("First."), Reply("Copy **this**\nreply.")]
    session = create_session(project, base_url=fake_openai.base_url, model="m", load=False)
    async with run_app(session) as pilot:
        app = pilot.app
        await send(pilot, "/copy")
        await wait_for_text(pilot, "nothing to copy yet")
        assert app.clipboard == ""
        for prompt in ("one", "two"):
            await send(pilot, prompt)
            await turn_over(pilot)
        await send(pilot, "/copy")
        await wait_for(pilot, lambda: app.clipboard == "Copy **this**\nreply.")
        await wait_for_text(pilot, "Copied to the clipboard: 2 lines, 20 characters.")
        assert "error" not in chat_text(app).split("two", 1)[1]


async def test_copy_without_the_app_asks_the_frontend(
    project: Path, fake_openai: FakeOpenAI
) -> None:
    session = await a_session_after_a_turn(project, fake_openai)
    session.frontend = person = Person()
    await session.commands.run_line("/copy")
    assert person.copied == ["It says `alpha`."]
