"""``@path`` and ``!command`` in the real app (issue 17), driven with Pilot against the
testing kit's fake server: the picker opens on ``@`` and follows what is typed, a pick
inserts the path, a sent prompt shows a chip per attachment while the server receives the
file, a bad path keeps the prompt and sends nothing; ``!echo hi`` shows its output and the
next request holds it; Esc stops ``!sleep 30`` at once; a resumed conversation shows the
same chips and blocks."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import write
from textual.pilot import Pilot

from tui_agent import create_session
from tui_agent.core.session.session import Session
from tui_agent.testing import (
    FakeOpenAI,
    Reply,
    chat_text,
    send,
    transcript_problem,
    turn_over,
    type_keys,
    wait_for,
    wait_for_prompt,
)
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.blocks.message import UserMessage
from tui_agent.ui.blocks.shell import ShellBlock
from tui_agent.ui.prompt import PromptArea

SIZE = (100, 30)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    write(root / "src" / "app.py", "def main():\n    return 42\n")
    write(root / "src" / "ui" / "prompt.py", "prompt\n")
    write(root / "docs" / "guide.md", "guide\n")
    write(root / "README.md", "# readme\n")
    write(root / ".gitignore", "secret.py\n")
    write(root / "secret.py", "ignored\n")
    return root


def shown(prompt: PromptArea) -> list[str] | None:
    """The picker's entries while it is shown, else None."""
    menu = prompt.menu
    if menu is None or not menu.has_class("visible"):
        return None
    return [str(menu.get_option_at_index(i).prompt) for i in range(menu.option_count)]


async def ready(pilot: Pilot[Any]) -> TuiAgentApp:
    app: Any = pilot.app
    await wait_for(pilot, lambda: app.session_ready)
    await wait_for_prompt(pilot)
    return app


async def test_typing_at_opens_the_picker_which_filters_and_picks(repo: Path) -> None:
    session = create_session(repo)
    async with TuiAgentApp(session).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        prompt = app.prompt
        await type_keys(pilot, "explain @")
        await wait_for(pilot, lambda: shown(prompt) is not None)
        first = shown(prompt)
        assert first is not None and "src/" in first and "README.md" in first
        assert "secret.py" not in first  # gitignored
        await type_keys(pilot, "prmt")
        await wait_for(pilot, lambda: shown(prompt) == ["src/ui/prompt.py"])
        await pilot.press("enter")  # picks; does not send
        await wait_for(pilot, lambda: prompt.text == "explain @src/ui/prompt.py ")
        assert shown(prompt) is None
        await type_keys(pilot, "and @zzz")
        await pilot.pause(0.2)
        assert shown(prompt) is None  # nothing matches: no menu
        await pilot.press("backspace", "backspace", "backspace", "g", "u", "i")
        await wait_for(pilot, lambda: shown(prompt) == ["docs/guide.md"])
        await pilot.press("escape")  # closes it; the text stays
        assert shown(prompt) is None
        assert prompt.text == "explain @src/ui/prompt.py and @gui"
        await type_keys(pilot, "d")
        await pilot.pause(0.2)
        assert shown(prompt) is None  # closed stays closed until the next @
    session.conversation.journal.close()


async def test_a_folder_pick_keeps_the_picker_open_inside_it_and_tab_opens_it(
    repo: Path,
) -> None:
    session = create_session(repo)
    async with TuiAgentApp(session).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        prompt = app.prompt
        await type_keys(pilot, "@sr")
        await wait_for(pilot, lambda: (shown(prompt) or [""])[0] == "src/")
        await pilot.press("tab")
        await wait_for(pilot, lambda: prompt.text == "@src/")
        await wait_for(pilot, lambda: shown(prompt) is not None and "src/app.py" in shown(prompt))
        await pilot.press("escape")
        prompt.text = "see @READ"
        prompt.move_cursor(prompt.document.end)
        await pilot.press("tab")  # Tab in a mention: the fuzzy picker; one match is taken
        await wait_for(pilot, lambda: prompt.text == "see @README.md ")
    session.conversation.journal.close()


async def test_sending_attaches_the_file_and_the_chat_shows_a_chip(repo: Path) -> None:
    async with FakeOpenAI([Reply("It returns 42.")]) as server:
        session = create_session(repo, base_url=server.base_url, model="fake-model")
        async with TuiAgentApp(session).run_test(size=SIZE) as pilot:
            app = await ready(pilot)
            await send(pilot, "explain @src/app.py and @docs/")
            await turn_over(pilot)
            sent = server.requests[0]["messages"][-1]["content"]
            assert sent.startswith("explain @src/app.py and @docs/\n\nAttached file: src/app.py")
            assert "def main():\n    return 42\n" in sent
            assert "Attached folder: docs/ (1 entry)\n```\nguide.md\n```" in sent
            text = chat_text(app)
            assert "📎 src/app.py (2 lines) 📎 docs/ (1 entry)" in text
            assert "return 42" not in text  # a chip, not the file
            (user,) = app.chat.query(UserMessage)
            assert user.has_class("attached")
        session.conversation.journal.close()


async def test_a_missing_path_is_an_error_the_prompt_keeps_its_text_nothing_is_sent(
    repo: Path,
) -> None:
    async with FakeOpenAI([Reply("never")]) as server:
        session = create_session(repo, base_url=server.base_url, model="fake-model")
        async with TuiAgentApp(session).run_test(size=SIZE) as pilot:
            app = await ready(pilot)
            await send(pilot, "fix @src/ap.py")
            await wait_for(pilot, lambda: "no such file or folder" in chat_text(app))
            assert "Did you mean @src/app.py?" in chat_text(app)
            await wait_for(pilot, lambda: app.prompt.text == "fix @src/ap.py")
            await app.workers.wait_for_complete()
            assert server.requests == []
            assert session.conversation.messages == []
            assert not list(app.chat.query(UserMessage))
            await send(pilot, "ping @alice about it")  # not a path: sent as it is
            await turn_over(pilot)
            assert server.requests[0]["messages"][-1]["content"] == "ping @alice about it"
        session.conversation.journal.close()


async def test_bang_runs_the_command_shows_it_and_the_next_request_holds_it(repo: Path) -> None:
    async with FakeOpenAI([Reply("I see hi.")]) as server:
        session = create_session(repo, base_url=server.base_url, model="fake-model")
        async with TuiAgentApp(session).run_test(size=SIZE) as pilot:
            app = await ready(pilot)
            await send(pilot, "!echo hi; echo oops >&2; exit 4")
            await wait_for(pilot, lambda: not session.busy and app.chat.query(ShellBlock))
            await app.workers.wait_for_complete()
            await pilot.pause()
            (block,) = app.chat.query(ShellBlock)
            assert block.result is not None and block.has_class("failed")
            text = chat_text(app)
            assert "!echo hi; echo oops >&2; exit 4 exit status 4" in text
            assert "hi\noops" in text
            assert server.requests == []  # no model
            await send(pilot, "what did it print?")
            await turn_over(pilot)
            messages = server.requests[0]["messages"]
            assert messages[-2]["content"] == (
                "I ran `echo hi; echo oops >&2; exit 4` in the shell (exit status 4):\n"
                "```\nhi\noops\n```"
            )
            assert messages[-1]["content"] == "what did it print?"
            assert transcript_problem(messages) is None
        session.conversation.journal.close()


async def test_esc_cancels_a_running_command_promptly(repo: Path) -> None:
    session = create_session(repo)
    async with TuiAgentApp(session).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await send(pilot, "!echo started; sleep 30")
        await wait_for(pilot, lambda: "started" in chat_text(app))
        assert session.busy
        start = time.monotonic()
        await pilot.press("escape")
        await wait_for(pilot, lambda: not session.busy, timeout=3)
        assert time.monotonic() - start < 2
        await wait_for(pilot, lambda: "cancelled after" in chat_text(app))
        content = session.conversation.messages[-1]["content"]
        assert content.startswith("I ran `echo started; sleep 30` in the shell (cancelled")
    session.conversation.journal.close()


async def test_a_resumed_conversation_shows_the_chips_and_the_command_blocks(repo: Path) -> None:
    async with FakeOpenAI([Reply("It returns 42.")]) as server:
        first = create_session(repo, base_url=server.base_url, model="fake-model")
        async with TuiAgentApp(first).run_test(size=SIZE) as pilot:
            app = await ready(pilot)
            await send(pilot, "explain @src/app.py")
            await turn_over(pilot)
            await send(pilot, "!echo from-shell")
            await wait_for(pilot, lambda: not first.busy and "from-shell" in chat_text(app))
            await app.workers.wait_for_complete()
        first.conversation.journal.close()
    again: Session = create_session(repo)
    assert again.conversation.resume(first.id)
    async with TuiAgentApp(again).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await wait_for(pilot, lambda: "📎 src/app.py (2 lines)" in chat_text(app))
        text = chat_text(app)
        assert "It returns 42." in text and "def main" not in text
        await wait_for(pilot, lambda: app.chat.query(ShellBlock))
        (block,) = app.chat.query(ShellBlock)
        assert block.command == "echo from-shell" and block.result is not None
        assert "from-shell" in chat_text(app)
    again.conversation.journal.close()
