"""An image made ready for a model: checked, and scaled down when it is larger than models
take well.

The limits: ``MAX_SIDE`` 1568 pixels on the long side (Anthropic's advice for no resize
on their side; OpenAI's "high" detail fits 2048 and then 768 on the short side, so 1568
loses nothing there either) and ``MAX_BYTES`` 3.75 MB of image (5 MB once in base64,
Anthropic's limit per image). A larger image is scaled with Pillow (imported only then)
and kept in its format; a PNG still over ``MAX_BYTES`` becomes a JPEG. A file over
``MAX_INPUT`` (50 MB) is refused before it is decoded.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .sniff import MIME_TYPES, dimensions, sniff

MAX_SIDE = 1568
MAX_BYTES = 3_750_000
MAX_INPUT = 50 * 1024 * 1024
MAX_PIXELS = 100_000_000  # a header claiming more is refused (a decompression bomb)


class ImageError(ValueError):
    """An image that cannot be sent: the message says which, why and what to do."""


class NotAnImage(ImageError):
    """Bytes that start as an image but are none (a damaged header, undecodable): the
    caller treats the file as any binary file."""


@dataclass(frozen=True)
class Prepared:
    """An image ready to send: ``data`` in ``kind`` (``"png"``…), ``width`` × ``height``;
    ``original`` the file's size in pixels and ``original_bytes`` in bytes."""

    data: bytes
    kind: str
    width: int
    height: int
    original: tuple[int, int]
    original_bytes: int
    original_kind: str

    @property
    def mime(self) -> str:
        return MIME_TYPES[self.kind]

    @property
    def scaled(self) -> bool:
        return (self.width, self.height) != self.original or len(self.data) != self.original_bytes

    def detail(self) -> str:
        """How the chat's chip says it: ``image, PNG 3840×2160, 5.2 MB; sent as 1568×882``."""
        width, height = self.original
        text = f"image, {self.original_kind.upper()} {width}×{height}"
        text += f", {size_text(self.original_bytes)}"
        if self.scaled:
            text += f"; sent as {self.width}×{self.height}"
            if self.kind != self.original_kind:
                text += f" {self.kind.upper()}"
        return text


def size_text(count: int) -> str:
    if count < 1024:
        return f"{count} bytes"
    if count < 1024 * 1024:
        return f"{count / 1024:.0f} KB"
    return f"{count / 1024 / 1024:.1f} MB"


def read(path: Path, name: str | None = None) -> Prepared:
    """The image file at ``path`` made ready (``prepare``). ``ImageError`` when it is not
    a PNG, JPEG, GIF or WebP, too large, or unreadable; ``OSError`` when it cannot be read."""
    shown = name or path.name
    size = path.stat().st_size
    if size > MAX_INPUT:
        raise ImageError(
            f"{shown} is {size_text(size)}: images over {size_text(MAX_INPUT)} are not sent. "
            "Crop or shrink it first."
        )
    with path.open("rb") as handle:
        data = handle.read(MAX_INPUT + 1)
    return prepare(data, shown)


def prepare(data: bytes, name: str = "the image") -> Prepared:
    """``data`` checked and, when larger than ``MAX_SIDE`` or ``MAX_BYTES``, scaled down."""
    kind = sniff(data)
    if kind is None:
        raise NotAnImage(f"{name} is not a PNG, JPEG, GIF or WebP image")
    if len(data) > MAX_INPUT:
        raise ImageError(f"{name} is over {size_text(MAX_INPUT)}: not sent. Shrink it first.")
    size = dimensions(data)
    if size is None or size[0] <= 0 or size[1] <= 0:
        raise NotAnImage(f"{name}: its {kind.upper()} header is damaged (no size in it)")
    if size[0] * size[1] > MAX_PIXELS:
        raise ImageError(
            f"{name} is {size[0]}×{size[1]} pixels: over {MAX_PIXELS:,}, not decoded. "
            "Shrink it first."
        )
    if max(size) <= MAX_SIDE and len(data) <= MAX_BYTES:
        return Prepared(data, kind, size[0], size[1], size, len(data), kind)
    return _scaled(data, kind, size, name)


def _scaled(data: bytes, kind: str, size: tuple[int, int], name: str) -> Prepared:
    try:
        from PIL import Image
    except ImportError:
        raise ImageError(
            f"{name} is {size[0]}×{size[1]}, {size_text(len(data))}: larger than models take "
            f"({MAX_SIDE} pixels, {size_text(MAX_BYTES)}), and scaling it needs Pillow: "
            "pip install pillow"
        ) from None
    try:
        with Image.open(io.BytesIO(data)) as opened:
            opened.seek(0)  # a GIF's or WebP's first frame
            picture = opened.convert("RGBA" if _has_alpha(opened) else "RGB")
    except (OSError, ValueError, Image.DecompressionBombError) as exc:
        raise NotAnImage(f"{name} cannot be decoded: {exc}") from None
    picture.thumbnail((MAX_SIDE, MAX_SIDE), Image.Resampling.LANCZOS)
    out_kind = kind if kind in ("png", "jpeg", "webp") else "png"
    encoded = _encode(picture, out_kind)
    if len(encoded) > MAX_BYTES and out_kind != "jpeg":
        out_kind = "jpeg"
        encoded = _encode(picture, out_kind)
    if len(encoded) > MAX_BYTES:
        raise ImageError(
            f"{name} is still {size_text(len(encoded))} at {picture.width}×{picture.height}: "
            f"over the limit of {size_text(MAX_BYTES)}. Crop it first."
        )
    return Prepared(encoded, out_kind, picture.width, picture.height, size, len(data), kind)


def _has_alpha(picture: Any) -> bool:
    mode = getattr(picture, "mode", "")
    info = getattr(picture, "info", {})
    return mode in ("RGBA", "LA", "PA") or (mode == "P" and "transparency" in info)


def _encode(picture: Any, kind: str) -> bytes:
    """``picture`` (a Pillow image) written as ``kind``."""
    buffer = io.BytesIO()
    if kind == "jpeg":
        rgb = picture.convert("RGB") if picture.mode != "RGB" else picture
        rgb.save(buffer, "JPEG", quality=85, optimize=True)
    elif kind == "webp":
        picture.save(buffer, "WEBP", quality=85)
    else:
        picture.save(buffer, "PNG")  # optimize=True: 2.3 s instead of 0.3 s for 2 % less
    data: bytes = buffer.getvalue()
    return data
