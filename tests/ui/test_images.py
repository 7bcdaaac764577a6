"""Images in the app (issue 33), the real app under Pilot against the testing kit's
server: ``@shot.png`` shows a chip with the image's size while the server gets the image
part; a resumed conversation (``--continue``) shows the same chip; a pasted path of a
screenshot (absolute, quoted, escaped, a ``file://`` URI; inside the project or outside
it) becomes its mention and is attached; a pasted path of anything else stays text."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.pilot import Pilot

from tui_agent import create_session
from tui_agent.core.images import store
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

SIZE = (100, 30)
FIXTURES = Path(__file__).parents[1] / "fixtures" / "images"
SCREENSHOT = FIXTURES / "textual-devtools-screenshot.png"
CHIP = "📎 shot.png (image, PNG 1442×344, 50 KB)"


def image_parts(body: dict[str, Any]) -> list[dict[str, Any]]:
    content = body["messages"][-1]["content"]
    if not isinstance(content, list):
        return []
    return [part for part in content if part["type"] == "image_url"]


async def paste(pilot: Pilot[Any], text: str) -> None:
    """A bracketed paste, as the terminal sends it: one Paste event to the app."""
    pilot.app.post_message(events.Paste(text))
    await pilot.pause()


async def test_a_sent_image_shows_a_chip_and_a_resumed_chat_shows_it_again(project: Path) -> None:
    shutil.copy(SCREENSHOT, project / "shot.png")
    async with FakeOpenAI([Reply("A devtools window.")]) as server:
        first = create_session(project, base_url=server.base_url, model="fake-model")
        async with TuiAgentApp(first).run_test(size=SIZE) as pilot:
            await wait_for_prompt(pilot)
            await send(pilot, "what is wrong here @shot.png")
            await turn_over(pilot)
            text = chat_text(pilot.app)
            assert f"what is wrong here @shot.png\n{CHIP}" in text
            assert "base64" not in text
        assert len(image_parts(server.requests[0])) == 1
        first.conversation.journal.close()
    again = create_session(project)
    assert again.conversation.resume(first.id)
    async with TuiAgentApp(again).run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: CHIP in chat_text(pilot.app))
        assert "A devtools window." in chat_text(pilot.app)
    again.conversation.journal.close()


@pytest.mark.parametrize(
    "form",
    ["{path}", "'{path}'", "{escaped}", "file://{uri}", "  {path}\n"],
    ids=["plain", "quoted", "escaped", "uri", "spaced"],
)
async def test_a_pasted_screenshot_path_from_outside_the_project_is_attached(
    project: Path, tmp_path: Path, form: str
) -> None:
    desktop = tmp_path / "My Desktop"
    desktop.mkdir()
    shot = desktop / "shot.png"
    shutil.copy(SCREENSHOT, shot)
    escaped = str(shot).replace(" ", "\\ ")
    pasted = form.format(path=shot, escaped=escaped, uri=str(shot).replace(" ", "%20"))
    async with FakeOpenAI([Reply("Seen.")]) as server:
        session = create_session(project, base_url=server.base_url, model="fake-model")
        async with TuiAgentApp(session).run_test(size=SIZE) as pilot:
            prompt = await wait_for_prompt(pilot)
            await pilot.press(*"look ")
            await paste(pilot, pasted)
            copy = next(store.pasted_folder().glob("*/shot.png"))
            assert prompt.text == f"look @{copy} "
            await pilot.press("enter")
            await turn_over(pilot)
            assert CHIP in chat_text(pilot.app)
        session.conversation.journal.close()
    assert copy.read_bytes() == SCREENSHOT.read_bytes()
    assert copy.stat().st_mode & 0o077 == 0  # the user's alone
    (part,) = image_parts(server.requests[0])
    assert part["image_url"]["url"].startswith("data:image/png;base64,iVBORw0KGgo")


async def test_a_pasted_path_inside_the_project_is_mentioned_by_its_place(project: Path) -> None:
    (project / "docs").mkdir()
    shutil.copy(SCREENSHOT, project / "docs" / "shot.png")
    session = create_session(project)
    async with TuiAgentApp(session).run_test(size=SIZE) as pilot:
        prompt = await wait_for_prompt(pilot)
        await paste(pilot, str(project / "docs" / "shot.png"))
        assert prompt.text == "@docs/shot.png "
    assert not store.pasted_folder().exists()  # nothing copied


async def test_a_pasted_path_of_anything_else_stays_text(project: Path, tmp_path: Path) -> None:
    notes = tmp_path / "notes.png"
    notes.write_text("not an image, whatever its name says")
    session = create_session(project)
    async with TuiAgentApp(session).run_test(size=SIZE) as pilot:
        prompt = await wait_for_prompt(pilot)
        for text in (str(notes), str(tmp_path / "missing.png"), f"see {SCREENSHOT}"):
            prompt.clear()
            await paste(pilot, text)
            assert prompt.text == text
