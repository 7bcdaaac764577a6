"""Images (issue 33), the core: formats sniffed and sized from their headers (a real
screenshot from Textual's repository, and JPEG/GIF/WebP files Pillow writes), scaled down
past ``MAX_SIDE`` / ``MAX_BYTES``, refused with a clear error when too large, copies kept
in the sessions folder by hash, and the journal's reference read back."""

from __future__ import annotations

import base64
import io
import os
from pathlib import Path

import pytest
from PIL import Image

from tui_agent.core import images
from tui_agent.core.images import store

FIXTURES = Path(__file__).parents[2] / "fixtures" / "images"
SCREENSHOT = FIXTURES / "textual-devtools-screenshot.png"  # 1442x344, 50,969 bytes
DEMO = FIXTURES / "textual-demo.png"  # 1696x2014, 376,493 bytes


def made(kind: str, size: tuple[int, int], noise: bool = False) -> bytes:
    """An image Pillow writes (noise: as large as a photo of that size gets)."""
    if noise:
        picture = Image.frombytes("RGB", size, os.urandom(size[0] * size[1] * 3))
    else:
        picture = Image.new("RGB", size, (200, 40, 40))
    buffer = io.BytesIO()
    picture.save(buffer, {"jpeg": "JPEG", "gif": "GIF", "webp": "WEBP", "png": "PNG"}[kind])
    return buffer.getvalue()


def decoded(part: dict[str, object]) -> Image.Image:
    url = part["image_url"]["url"]  # type: ignore[index]
    return Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))


@pytest.mark.parametrize(
    ("kind", "size"),
    [("png", (31, 17)), ("jpeg", (640, 480)), ("gif", (3, 900)), ("webp", (1000, 2))],
)
def test_formats_and_sizes_come_from_the_header(kind: str, size: tuple[int, int]) -> None:
    data = made(kind, size)
    assert images.sniff(data) == kind
    assert images.dimensions(data) == size


def test_the_real_screenshot_is_sent_as_it_is() -> None:
    data = SCREENSHOT.read_bytes()
    prepared = images.read(SCREENSHOT)
    assert (prepared.kind, prepared.width, prepared.height) == ("png", 1442, 344)
    assert prepared.data == data and not prepared.scaled
    assert prepared.detail() == "image, PNG 1442×344, 50 KB"
    part = images.image_part(prepared)
    assert part["type"] == "image_url"
    assert part["image_url"]["url"].startswith("data:image/png;base64,iVBORw0KGgo")
    assert decoded(part).size == (1442, 344)


def test_a_tall_screenshot_is_scaled_to_the_long_side_limit() -> None:
    prepared = images.read(DEMO)
    assert prepared.original == (1696, 2014)
    assert max(prepared.width, prepared.height) == images.MAX_SIDE == 1568
    assert (prepared.width, prepared.height) == (1320, 1568)  # the aspect kept
    assert prepared.detail() == "image, PNG 1696×2014, 368 KB; sent as 1320×1568"
    assert decoded(images.image_part(prepared)).size == (1320, 1568)


def test_a_5_mb_screenshot_becomes_less_than_the_byte_limit(tmp_path: Path) -> None:
    shot = tmp_path / "shot.png"
    shot.write_bytes(made("png", (1500, 1200), noise=True))
    assert shot.stat().st_size > 5_000_000
    prepared = images.read(shot)
    assert len(prepared.data) <= images.MAX_BYTES
    assert prepared.kind == "jpeg"  # still too large as a PNG
    assert prepared.detail().endswith("; sent as 1500×1200 JPEG")


def test_too_large_files_and_pixel_bombs_are_refused_before_decoding(tmp_path: Path) -> None:
    huge = tmp_path / "huge.png"
    with huge.open("wb") as handle:
        handle.write(made("png", (10, 10)))
        handle.truncate(images.MAX_INPUT + 1)
    with pytest.raises(images.ImageError, match=r"huge.png is 50.0 MB: images over 50.0 MB"):
        images.read(huge)
    header = bytearray(made("png", (10, 10)))
    header[16:24] = (40_000).to_bytes(4, "big") * 2  # claims 40000x40000
    with pytest.raises(images.ImageError, match="40000×40000 pixels: over 100,000,000"):
        images.prepare(bytes(header), "bomb.png")


def test_a_damaged_image_is_no_image() -> None:
    with pytest.raises(images.NotAnImage, match="header is damaged"):
        images.prepare(b"\x89PNG\r\n\x1a\n\0\0\0rest", "logo.png")
    with pytest.raises(images.NotAnImage, match="not a PNG, JPEG, GIF or WebP"):
        images.prepare(b"%PDF-1.7", "doc.pdf")


def test_the_journal_keeps_a_reference_and_reads_the_image_back() -> None:
    part = images.image_part(images.read(SCREENSHOT))
    written = images.to_journal(part)
    assert written["type"] == "image_file" and written["mime"] == "image/png"
    copy = store.folder() / written["file"]
    assert copy.read_bytes() == SCREENSHOT.read_bytes()
    assert copy.stat().st_mode & 0o077 == 0
    assert len(str(written)) < 200
    assert images.from_journal(dict(written)) == part
    assert images.to_journal(part) == written  # the same bytes: the same copy
    copy.unlink()
    gone = images.from_journal(dict(written))
    assert gone["type"] == "text" and "copy is gone" in gone["text"]


def test_a_journal_reference_cannot_name_a_file_elsewhere() -> None:
    for name in ("../../secret.png", "/etc/passwd", ".hidden"):
        read = images.from_journal({"type": "image_file", "file": name})
        assert read["type"] == "text" and "not valid" in read["text"]
