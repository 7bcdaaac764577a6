"""Issue 17, the prompt: a long paste shows as one placeholder line and is sent whole;
Ctrl+G edits the prompt in the user's editor. The real app under Pilot, real Paste events,
a real editor (a small script run as a subprocess), the real openai client against the
testing kit's server."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.pilot import Pilot

from tui_agent import create_session
from tui_agent.testing import (
    FakeOpenAI,
    Reply,
    chat_text,
    run_app,
    turn_over,
    type_keys,
    wait_for_prompt,
)
from tui_agent.ui.prompt import PromptArea

# an editor: records what it was given, then saves its own text (or fails)
EDITOR = """\
import sys
from pathlib import Path

given = Path(sys.argv[-1])
Path(sys.argv[1]).write_text(given.read_text())
if sys.argv[2] == "fail":
    given.write_text("not kept")
    sys.exit(3)
given.write_text(sys.argv[2] + "\\n")
"""


def lines(count: int, word: str = "line") -> str:
    return "".join(f"{word} {n}\n" for n in range(1, count + 1))


async def prompt_of(pilot: Pilot[Any]) -> PromptArea:
    return await wait_for_prompt(pilot)


async def paste(pilot: Pilot[Any], text: str) -> None:
    """What the terminal sends for a bracketed paste: one Paste event to the app, which
    hands it to the focused widget, the prompt."""
    pilot.app.post_message(events.Paste(text))
    await pilot.pause()


def sent(server: FakeOpenAI) -> list[str]:
    return [request["messages"][-1]["content"] for request in server.requests]


@pytest.fixture
def temp_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The editor's temporary file goes inside tmp_path."""
    folder = tmp_path / "temp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


async def test_a_long_paste_is_a_placeholder_and_is_sent_whole(
    project: Path, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script.append(Reply("Read it."))
    pasted = lines(30)
    session = create_session(project, base_url=fake_openai.base_url, model="m", load=False)
    async with run_app(session) as pilot:
        prompt = await prompt_of(pilot)
        await type_keys(pilot, "look at ")
        await paste(pilot, pasted)
        await type_keys(pilot, " please")
        assert prompt.text == "look at [pasted 30 lines] please"
        assert prompt.document.line_count == 1

        await pilot.press("enter")
        await turn_over(pilot)

        whole = f"look at {pasted} please"
        assert sent(fake_openai) == [whole]
        assert "line 17\nline 18" in chat_text(pilot.app)  # the chat shows it whole too
        assert "[pasted" not in chat_text(pilot.app)
        assert prompt.prompt_history[-1] == whole
        await pilot.press("up")
        assert prompt.text == whole  # the history gives the whole text back


async def test_each_paste_has_its_own_placeholder_and_deleting_one_drops_it(
    project: Path, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script.append(Reply("ok"))
    first, second, third = lines(25, "first"), lines(25, "second"), lines(40, "third")
    session = create_session(project, base_url=fake_openai.base_url, model="m", load=False)
    async with run_app(session) as pilot:
        prompt = await prompt_of(pilot)
        await paste(pilot, first)
        await type_keys(pilot, " and ")
        await paste(pilot, second)
        assert prompt.text == "[pasted 25 lines] and [pasted 25 lines #2]"
        await pilot.press(*["backspace"] * len("[pasted 25 lines #2]"))  # deleted: dropped
        await type_keys(pilot, "also ")
        await paste(pilot, third)
        await pilot.press("backspace")  # edited: the rest is plain text, the paste dropped
        assert prompt.text == "[pasted 25 lines] and also [pasted 40 lines"

        await pilot.press("enter")
        await turn_over(pilot)

    assert sent(fake_openai) == [f"{first} and also [pasted 40 lines"]


async def test_a_short_paste_goes_in_as_it_is(project: Path) -> None:
    session = create_session(project, load=False)
    async with run_app(session) as pilot:
        # the prompt first: a paste into the first frame's stand-in is replayed into it
        # after the swap (tests/ui/test_prompt_standin.py), a moment after it is there
        prompt = await prompt_of(pilot)
        await paste(pilot, lines(20))
        assert prompt.text == lines(20)
        assert prompt.pastes == {}


def editor(tmp_path: Path, result: str) -> tuple[str, Path]:
    """An editor command (as $EDITOR holds it) that saves ``result`` ("fail": exits 3), and
    the file where it records what it was given."""
    script = tmp_path / "editor.py"
    script.write_text(EDITOR)
    given = tmp_path / "given.txt"
    return f"{sys.executable} {script} {given} {result}", given


async def test_ctrl_g_edits_the_prompt_in_the_editor(
    project: Path, tmp_path: Path, temp_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    command, given = editor(tmp_path, "rewritten-by-the-editor")
    monkeypatch.setenv("VISUAL", command)
    monkeypatch.setenv("EDITOR", "false")  # $VISUAL comes first
    pasted = lines(22)
    session = create_session(project, load=False)
    async with run_app(session) as pilot:
        prompt = await prompt_of(pilot)
        await type_keys(pilot, "draft ")
        await paste(pilot, pasted)

        await pilot.press("ctrl+g")
        await pilot.pause()

        assert given.read_text() == f"draft {pasted}"  # the editor gets the paste whole
        assert prompt.text == "rewritten-by-the-editor"  # the editor's final newline dropped
        assert prompt.pastes == {}
        assert prompt.cursor_location == (0, len("rewritten-by-the-editor"))
    assert list(temp_home.iterdir()) == []  # the temporary file is gone


async def test_an_editor_that_fails_leaves_the_prompt_as_it_was(
    project: Path, tmp_path: Path, temp_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    command, given = editor(tmp_path, "fail")
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", command)
    session = create_session(project, load=False)
    async with run_app(session) as pilot:
        prompt = await prompt_of(pilot)
        await type_keys(pilot, "keep me")
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert given.read_text() == "keep me"
        assert prompt.text == "keep me"
        said = [str(notice.message) for notice in pilot.app._notifications]
        assert any("exited with 3: the prompt is unchanged" in text for text in said), said

        monkeypatch.setenv("EDITOR", str(tmp_path / "no-such-editor"))
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert prompt.text == "keep me"
        said = [str(notice.message) for notice in pilot.app._notifications]
        assert any("could not start the editor" in text for text in said), said
    assert list(temp_home.iterdir()) == []
