"""ACP image prompts (issue 33): ``promptCapabilities.image`` is true, and a client's
image block (a real screenshot, base64 as ACP sends it) reaches the model as the OpenAI
``image_url`` part, scaled down when large, as a typed ``@shot.png`` does; a resource link
to an image in the project is attached too; bytes that are no image are left out with a
note, the turn going on. A spawned ``tui-agent acp`` and the testing kit's server."""

from __future__ import annotations

import base64
import io
import shutil
from pathlib import Path

import acp
from acp_harness import acp_session
from PIL import Image

from tui_agent.testing import FakeOpenAI, Reply

FIXTURES = Path(__file__).parents[1] / "fixtures" / "images"
SCREENSHOT = FIXTURES / "textual-devtools-screenshot.png"
DEMO = FIXTURES / "textual-demo.png"


def image_parts(model: FakeOpenAI) -> list[dict[str, object]]:
    content = model.requests[0]["messages"][-1]["content"]
    assert isinstance(content, list), content
    return [part for part in content if part["type"] == "image_url"]


def pixels(part: dict[str, object]) -> tuple[int, int]:
    url = part["image_url"]["url"]  # type: ignore[index]
    return Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).size


async def test_an_image_block_reaches_the_model_as_an_image_part(
    project: Path, model: FakeOpenAI
) -> None:
    model.script += [Reply("A devtools window.")]
    data = base64.b64encode(SCREENSHOT.read_bytes()).decode()
    async with acp_session(project, model) as s:
        assert s.init["agentCapabilities"]["promptCapabilities"]["image"] is True
        answer = await s.prompt("what is wrong here", acp.image_block(data, "image/png"))
    assert answer == {"stopReason": "end_turn"}
    assert model.rejected == []
    text = model.requests[0]["messages"][-1]["content"][0]["text"]
    assert text.startswith("what is wrong here")
    assert "Attached image: image 1 (image, PNG 1442×344, 50 KB)" in text
    assert image_parts(model) == [
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{data}"}}
    ]


async def test_a_large_image_and_a_linked_one_are_both_sent(
    project: Path, model: FakeOpenAI
) -> None:
    shutil.copy(SCREENSHOT, project / "shot.png")
    model.script += [Reply("Two images.")]
    data = base64.b64encode(DEMO.read_bytes()).decode()
    async with acp_session(project, model) as s:
        await s.prompt(
            "compare",
            acp.resource_link_block("shot.png", (project / "shot.png").as_uri()),
            acp.image_block(data, "image/png", uri=(project / "demo.png").as_uri()),
        )
    linked, sent = image_parts(model)
    assert pixels(linked) == (1442, 344)
    assert pixels(sent) == (1320, 1568)  # scaled down from 1696x2014
    text = model.requests[0]["messages"][-1]["content"][0]["text"]
    assert "Attached image: demo.png (image, PNG 1696×2014, 368 KB; sent as 1320×1568)" in text


async def test_bytes_that_are_no_image_are_left_out_and_the_turn_goes_on(
    project: Path, model: FakeOpenAI
) -> None:
    model.script += [Reply("Fine.")]
    async with acp_session(project, model) as s:
        answer = await s.prompt("look", acp.image_block("bm90IGFuIGltYWdl", "image/png"))
    assert answer == {"stopReason": "end_turn"}
    content = model.requests[0]["messages"][-1]["content"]
    assert isinstance(content, str)  # no image part
    assert "(The user also sent an image, left out: image 1 is not a PNG, JPEG, GIF or " in content
