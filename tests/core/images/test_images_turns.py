"""Images in turns (issue 33) against the testing kit's real server on 127.0.0.1 and the
real openai client: ``@shot.png`` reaches the server as an OpenAI ``image_url`` part; a
server that answers HTTP 400 to images gives one clear error naming the setting and the
turn goes on without them; ``[models."X"] images = false`` sends a note instead; the
journal stays small with a 5 MB screenshot and a resumed session has the image (and its
chip's label) back; ``read`` of an image shows it after the tool results, or says why not;
headless ``run "what is wrong here @shot.png"`` and ``--continue``."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from conftest import write
from PIL import Image

from tui_agent import create_session
from tui_agent.core.images import store
from tui_agent.core.project.config import user_config_file
from tui_agent.core.protocol.events import Retrying
from tui_agent.testing import Call, FakeOpenAI, Reply

FIXTURES = Path(__file__).parents[2] / "fixtures" / "images"
SCREENSHOT = FIXTURES / "textual-devtools-screenshot.png"
# what OpenAI answers when a model without vision gets an image
OPENAI_NO_VISION = "Invalid content type. image_url is only supported by certain models."


def models(**tables: dict[str, Any]) -> None:
    lines = []
    for name, table in tables.items():
        lines.append(f'[models."{name}"]')
        lines += [f"{key} = {json.dumps(value)}" for key, value in table.items()]
    write(user_config_file(), "\n".join(lines) + "\n")


def parts(body: dict[str, Any], index: int = -1) -> list[dict[str, Any]]:
    content = body["messages"][index]["content"]
    assert isinstance(content, list), content
    return content


def with_image(body: dict[str, Any]) -> bool:
    return any(
        isinstance(m.get("content"), list)
        and any(p.get("type") == "image_url" for p in m["content"])
        for m in body["messages"]
    )


def pixels(part: dict[str, Any]) -> tuple[int, int]:
    url = part["image_url"]["url"]
    return Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).size


async def test_the_server_gets_the_image_part_in_openai_format(project: Path) -> None:
    shutil.copy(SCREENSHOT, project / "shot.png")
    async with FakeOpenAI([Reply("A devtools window.")]) as server:
        session = create_session(project, base_url=server.base_url, model="fake-model")
        assert await session.turn("what is wrong here @shot.png") == "A devtools window."
    assert server.rejected == []
    text, image = parts(server.requests[0])
    assert text["type"] == "text" and text["text"].startswith("what is wrong here @shot.png")
    assert "Attached image: shot.png (image, PNG 1442×344, 50 KB)" in text["text"]
    expected = base64.b64encode(SCREENSHOT.read_bytes()).decode()
    assert image == {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{expected}"}}
    recorded = session.conversation.messages[0]
    assert recorded.prompt == "what is wrong here @shot.png"
    assert recorded.attachments == ("shot.png (image, PNG 1442×344, 50 KB)",)


async def test_a_server_that_refuses_images_gets_one_clear_error_and_the_turn_goes_on(
    project: Path,
) -> None:
    shutil.copy(SCREENSHOT, project / "shot.png")
    server = FakeOpenAI([Reply("I cannot see it, but…"), Reply("Next.")])
    server.when(with_image, [Reply(status=400, error=OPENAI_NO_VISION)] * 3)
    async with server:
        session = create_session(project, base_url=server.base_url, model="text-only")
        said: list[str] = []
        session.events.listen(lambda e: said.append(e.line()) if isinstance(e, Retrying) else 0)
        assert await session.turn("what is wrong here @shot.png") == "I cannot see it, but…"
        assert await session.turn("and now?") == "Next."
    assert len(server.requests) == 3  # refused once, then without the image, twice
    assert len(said) == 1
    errors = [m for m in said if "refused the request with images (HTTP 400" in m]
    assert errors and errors[0].startswith("retrying (2 of ") and " in 0.0s: " in errors[0]
    assert OPENAI_NO_VISION in errors[0]
    assert '[models."text-only"] images = false' in errors[0]
    for body in server.requests[1:]:
        assert not with_image(body)
        note = parts(body, 1)[1]
        assert note["type"] == "text" and "refused images" in note["text"]
    # the conversation keeps the image: another model may take it
    assert session.conversation.messages[0]["content"][1]["type"] == "image_url"


async def test_images_false_sends_a_note_and_asks_nothing_of_the_server(project: Path) -> None:
    shutil.copy(SCREENSHOT, project / "shot.png")
    models(**{"text-only": {"images": False}})
    async with FakeOpenAI([Reply("ok")]) as server:
        session = create_session(project, base_url=server.base_url, model="text-only")
        assert await session.turn("look @shot.png") == "ok"
    assert len(server.requests) == 1 and not with_image(server.requests[0])
    note = parts(server.requests[0])[1]["text"]
    assert note == (
        "[an image was attached here; it is not sent: this model does not take images "
        '([models."text-only"] images = false)]'
    )


async def test_a_5_mb_screenshot_keeps_the_journal_small_and_comes_back(project: Path) -> None:
    size = (1500, 1200)
    Image.frombytes("RGB", size, os.urandom(size[0] * size[1] * 3)).save(project / "big.png")
    assert (project / "big.png").stat().st_size > 5_000_000
    async with FakeOpenAI([Reply("noise"), Reply("still noise")]) as server:
        session = create_session(project, base_url=server.base_url, model="fake-model")
        await session.turn("what is @big.png")
        session.conversation.journal.close()
        journal = session.conversation.journal.path
        assert journal.stat().st_size < 1_000_000
        assert journal.stat().st_size < 5_000  # a reference, not the image
        sent = parts(server.requests[0])[1]
        assert pixels(sent) == size
        resumed = create_session(project, base_url=server.base_url, model="fake-model")
        assert resumed.conversation.resume(session.id) is True
        first = resumed.conversation.messages[0]
        assert first["content"][1] == sent  # the same image, read back from its copy
        assert first.attachments[0].startswith("big.png (image, PNG 1500×1200, 5.")
        await resumed.turn("and now?")
    assert parts(server.requests[1], 1)[1] == sent
    assert len(list(store.folder().iterdir())) == 1


async def test_read_of_an_image_shows_it_after_the_tool_results(project: Path) -> None:
    shutil.copy(SCREENSHOT, project / "shot.png")
    write(project / "notes.txt", "hello\n")
    script = [
        Reply(calls=[Call("read", {"path": "shot.png"}), Call("read", {"path": "notes.txt"})]),
        Reply("It shows devtools."),
    ]
    async with FakeOpenAI(script) as server:
        session = create_session(project, base_url=server.base_url, model="fake-model", yes=True)
        assert await session.turn("look at shot.png") == "It shows devtools."
    assert server.rejected == []
    messages = server.requests[1]["messages"]
    roles = [m["role"] for m in messages]
    assert roles[-4:] == ["assistant", "tool", "tool", "user"]  # the image after the run
    result = json.loads(messages[-3]["content"])
    assert result["output"] == (
        "shot.png: image, PNG 1442×344, 50 KB. The image follows in the next message."
    )
    head, image = messages[-1]["content"]
    assert head["text"].startswith("The image shot.png that tool call ")
    assert image["image_url"]["url"].endswith(base64.b64encode(SCREENSHOT.read_bytes()).decode())
    assert len(messages[-3]["content"]) < 1000  # the tool message holds a reference


async def test_read_of_an_image_for_a_text_model_is_a_note(project: Path) -> None:
    shutil.copy(SCREENSHOT, project / "shot.png")
    models(**{"text-only": {"images": False}})
    script = [Reply(calls=[Call("read", {"path": "shot.png"})]), Reply("I see.")]
    async with FakeOpenAI(script) as server:
        session = create_session(project, base_url=server.base_url, model="text-only", yes=True)
        await session.turn("look at shot.png")
    messages = server.requests[1]["messages"]
    assert messages[-1]["role"] == "tool" and not with_image(server.requests[1])
    assert json.loads(messages[-1]["content"]) == {
        "ok": True,
        "path": "shot.png",
        "output": "shot.png: image, PNG 1442×344, 50 KB. Not shown: model text-only does not "
        'take images ([models."text-only"] images = false).',
    }


def run_cli(*args: str, cwd: Path, server: FakeOpenAI) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "tui_agent", *args, "--base-url", server.base_url]
    return subprocess.run(
        [*argv, "--model", "fake-model"],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_headless_run_sends_the_image_and_continue_keeps_it(project: Path) -> None:
    shutil.copy(SCREENSHOT, project / "shot.png")
    with FakeOpenAI([Reply("A devtools window."), Reply("Still it.")]) as server:
        done = run_cli("run", "what is wrong here @shot.png", cwd=project, server=server)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "A devtools window."
        sent = parts(server.requests[0])
        assert sent[1]["type"] == "image_url"
        again = run_cli("run", "--continue", "and now?", cwd=project, server=server)
        assert again.returncode == 0, again.stderr
        assert server.requests[1]["messages"][1] == {"role": "user", "content": sent}


def test_headless_run_with_a_too_large_image_sends_nothing(project: Path) -> None:
    with (project / "huge.png").open("wb") as handle:
        handle.write(SCREENSHOT.read_bytes())
        handle.truncate(60 * 1024 * 1024)
    with FakeOpenAI([Reply("never")]) as server:
        done = run_cli("run", "what is @huge.png", cwd=project, server=server)
        assert done.returncode == 2, done.stdout
        assert "@huge.png is 60.0 MB: images over 50.0 MB are not sent" in done.stderr
        assert "Nothing was sent." in done.stderr
        assert server.requests == []


async def test_a_markdown_command_attaches_its_image_too(project: Path) -> None:
    shutil.copy(SCREENSHOT, project / "shot.png")
    write(user_config_file().parent / "commands" / "look.md", "What is wrong in @shot.png?\n")
    async with FakeOpenAI([Reply("Nothing.")]) as server:
        session = create_session(project, base_url=server.base_url, model="fake-model")
        assert await session.commands.run_line("/look")
    text, image = parts(server.requests[0])
    assert text["text"].startswith("What is wrong in @shot.png?")
    assert "Attached image: shot.png (image, PNG 1442×344, 50 KB)" in text["text"]
    assert image["image_url"]["url"].startswith("data:image/png;base64,iVBORw0KGgo")


async def test_a_400_that_says_what_else_is_wrong_does_not_blame_the_images(
    project: Path,
) -> None:
    shutil.copy(SCREENSHOT, project / "shot.png")
    too_long = (
        "This model's maximum context length is 8192 tokens. However, your messages "
        "resulted in 9000 tokens. Please reduce the length of the messages."
    )
    server = FakeOpenAI([Reply("Done.")])
    server.when(with_image, [Reply(status=400, error=too_long)])
    async with server:
        session = create_session(project, base_url=server.base_url, model="fake-model")
        said: list[str] = []
        session.events.listen(lambda e: said.append(e.line()) if isinstance(e, Retrying) else 0)
        await session.turn("what is wrong here @shot.png")
    assert session.provider.images_refused is None  # type: ignore[attr-defined]
    assert not [line for line in said if "refused the request with images" in line]


async def test_an_image_sent_into_a_running_turn_goes_with_the_steer(project: Path) -> None:
    shutil.copy(SCREENSHOT, project / "shot.png")
    write(project / "a.txt", "a\n")
    script = [Reply(calls=[Call("read", {"path": "a.txt"})], delay=0.3), Reply("Both seen.")]
    async with FakeOpenAI(script) as server:
        session = create_session(project, base_url=server.base_url, model="fake-model", yes=True)
        turn = asyncio.create_task(session.turn("read a.txt"))
        while not server.requests:
            await asyncio.sleep(0.01)
        assert await session.steer("and look at @shot.png")
        assert await turn == "Both seen."
    steer = server.requests[1]["messages"][-1]
    assert steer["role"] == "user"
    text, image = steer["content"]
    assert text["text"].startswith("and look at @shot.png\n\nAttached image: shot.png")
    assert image["type"] == "image_url"
    recorded = [m for m in session.conversation.messages if m.get("origin") == "steer"]
    assert recorded[0].attachments == ("shot.png (image, PNG 1442×344, 50 KB)",)


async def test_the_context_estimate_counts_an_image(project: Path) -> None:
    """The window's estimate counts an image part (``IMAGE_TOKENS``), not its base64 and not
    nothing: a conversation of screenshots fills the window as it does on the server."""
    from tui_agent.core.conversation import compaction

    shutil.copy(SCREENSHOT, project / "shot.png")
    async with FakeOpenAI([Reply("A devtools window."), Reply("Text.")]) as server:
        session = create_session(project, base_url=server.base_url, model="fake-model")
        await session.turn("what is wrong here @shot.png")
        await session.turn("and without an image")
    with_picture, without = session.conversation.messages[0], session.conversation.messages[2]
    text_only = compaction.estimate(type(with_picture)(with_picture.text))
    assert compaction.estimate(with_picture) == text_only + compaction.IMAGE_TOKENS
    assert compaction.estimate(without) < 50
    # resumed, the journal's reference to the copy counts the same
    again = create_session(project, model="fake-model")
    assert again.conversation.resume()
    assert compaction.estimate(again.conversation.messages[0]) == compaction.estimate(with_picture)
