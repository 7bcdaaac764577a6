"""What kind of image some bytes are, and how large, from their header alone: no image
library, so a file is recognised (and a 50 MB one refused) before anything decodes it."""

from __future__ import annotations

import struct

MIME_TYPES = {
    "png": "image/png",
    "jpeg": "image/jpeg",
    "gif": "image/gif",
    "webp": "image/webp",
}
"""The formats sent to models (what OpenAI, Anthropic, Gemini and the local servers take)."""

EXTENSIONS = {"png": "png", "jpg": "jpeg", "jpeg": "jpeg", "gif": "gif", "webp": "webp"}
"""File name endings that mean an image (``@shot.png``, ``read`` of ``logo.webp``)."""


def sniff_extensions() -> frozenset[str]:
    return frozenset(EXTENSIONS)


def sniff(data: bytes) -> str | None:
    """``"png"``, ``"jpeg"``, ``"gif"`` or ``"webp"`` by the first bytes, else None."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if data.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    return None


def dimensions(data: bytes) -> tuple[int, int] | None:
    """``(width, height)`` in pixels from the header, or None when it cannot be read."""
    kind = sniff(data)
    try:
        if kind == "png" and data[12:16] == b"IHDR":
            width, height = struct.unpack(">II", data[16:24])
            return int(width), int(height)
        if kind == "gif":
            width, height = struct.unpack("<HH", data[6:10])
            return int(width), int(height)
        if kind == "webp":
            return _webp(data)
        if kind == "jpeg":
            return _jpeg(data)
    except struct.error:
        return None
    return None


def _webp(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8X":
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return width, height
    if chunk == b"VP8L" and data[20:21] == b"\x2f":
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8 " and data[23:26] == b"\x9d\x01\x2a":
        width, height = struct.unpack("<HH", data[26:30])
        return int(width) & 0x3FFF, int(height) & 0x3FFF
    return None


_SOF = frozenset({*range(0xC0, 0xC4), *range(0xC5, 0xC8), *range(0xC9, 0xCC), *range(0xCD, 0xD0)})


def _jpeg(data: bytes) -> tuple[int, int] | None:
    """The frame header's size: the segments are walked from the start (APP, DQT…)."""
    position = 2
    while position + 4 <= len(data):
        if data[position] != 0xFF:
            return None
        marker = data[position + 1]
        if marker == 0xFF:  # fill byte
            position += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            position += 2
            continue
        (length,) = struct.unpack(">H", data[position + 2 : position + 4])
        if marker in _SOF:
            height, width = struct.unpack(">HH", data[position + 5 : position + 9])
            return int(width), int(height)
        position += 2 + length
    return None
