"""Images as the conversation holds them and as the journal writes them.

In a message, an image is the OpenAI Chat Completions part
``{"type": "image_url", "image_url": {"url": "data:image/png;base64,…"}}``: what the
provider sends, what a plugin reading ``message["content"]`` sees. A journal line must not
carry megabytes of base64, so the journal writes ``{"type": "image_file", "file":
"<sha256>.png"}`` instead (``to_journal``), the image itself kept once in
``<sessions folder>/images/`` under the hash of its bytes, and reading the journal puts
the data back (``from_journal``; a copy deleted since becomes a text part saying so).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import logging
import os
import tempfile
from pathlib import Path
from typing import Any

from ..util import paths
from .prepare import Prepared
from .sniff import MIME_TYPES, sniff

log = logging.getLogger("tui_agent.images")

_EXTENSION = {"png": "png", "jpeg": "jpg", "gif": "gif", "webp": "webp"}
_KIND_OF_MIME = {mime: kind for kind, mime in MIME_TYPES.items()}


def folder() -> Path:
    """Where the copies are: ``<user data>/sessions/images`` (beside the journals)."""
    return paths.user_data_dir() / "sessions" / "images"


def data_url(data: bytes, mime: str) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def image_part(image: Prepared) -> dict[str, Any]:
    """The OpenAI ``image_url`` content part of ``image`` (a ``data:`` URL)."""
    return {"type": "image_url", "image_url": {"url": data_url(image.data, image.mime)}}


def is_image_part(part: Any) -> bool:
    return isinstance(part, dict) and part.get("type") == "image_url"


def part_info(part: Any) -> tuple[str, bytes] | None:
    """``(mime, bytes)`` of an ``image_url`` part holding a ``data:`` URL, else None."""
    if not is_image_part(part):
        return None
    holder = part.get("image_url")
    url = holder.get("url") if isinstance(holder, dict) else None
    if not isinstance(url, str) or not url.startswith("data:"):
        return None
    head, comma, body = url.partition(",")
    if not comma or not head.endswith(";base64"):
        return None
    try:
        return head[5:-7], base64.b64decode(body, validate=True)
    except (binascii.Error, ValueError):
        return None


def save(data: bytes, kind: str) -> Path:
    """The copy of ``data`` in ``folder()``, named by its hash (written once; atomic)."""
    name = f"{hashlib.sha256(data).hexdigest()[:40]}.{_EXTENSION.get(kind, 'bin')}"
    return _written(folder() / name, data)


def _written(target: Path, data: bytes) -> Path:
    """``target`` holding ``data``: written whole (a temporary file renamed over it),
    readable by the user alone (screenshots show what they show), unless it is there."""
    if target.is_file() and target.stat().st_size == len(data):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def to_journal(part: dict[str, Any]) -> dict[str, Any]:
    """An ``image_url`` part as the journal writes it: a reference to its copy (saved now).
    A part that is no ``data:`` image (a web URL) is written as it is. ``OSError`` when the
    copy cannot be written (the journal says it cannot save the session)."""
    info = part_info(part)
    if info is None:
        return part
    mime, data = info
    kind = sniff(data) or _KIND_OF_MIME.get(mime, "png")
    path = save(data, kind)
    return {"type": "image_file", "file": path.name, "mime": MIME_TYPES.get(kind, mime)}


def from_journal(part: dict[str, Any]) -> dict[str, Any]:
    """A journal's ``image_file`` part as the conversation holds it: the ``image_url``
    part with the copy's bytes, or a text part saying the copy is gone."""
    name = part.get("file")
    mime = part.get("mime") if isinstance(part.get("mime"), str) else "image/png"
    if not isinstance(name, str) or "/" in name or "\\" in name or name.startswith("."):
        return {"type": "text", "text": "[an image whose copy's name is not valid: left out]"}
    try:
        data = (folder() / name).read_bytes()
    except OSError as exc:
        log.warning("image copy %s not readable: %s", name, exc)
        return {"type": "text", "text": f"[an image whose copy is gone ({folder() / name})]"}
    return {"type": "image_url", "image_url": {"url": data_url(data, str(mime))}}


def file_part(path: Path) -> dict[str, Any] | None:
    """The ``image_url`` part of a saved copy (a tool result's image), or None when gone."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    kind = sniff(data)
    if kind is None:
        return None
    return {"type": "image_url", "image_url": {"url": data_url(data, MIME_TYPES[kind])}}


def pasted_folder() -> Path:
    """Where images the user pasted (a path from outside the project) are copied."""
    return folder() / "pasted"


def keep_pasted(path: Path) -> Path:
    """A copy of the image file at ``path`` under ``pasted_folder()``, in a folder named by
    its hash, under its own name: the prompt's ``@`` names the copy, which the mentions
    attach although it is outside the project (``is_pasted``)."""
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()[:16]
    return _written(pasted_folder() / digest / path.name, data)


def is_pasted(path: Path) -> bool:
    """Whether ``path`` (resolved) is an image the user pasted (``keep_pasted``'s copy)."""
    return path.is_relative_to(pasted_folder().resolve()) and path.is_file()
