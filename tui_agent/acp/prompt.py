"""A ``session/prompt``'s content blocks as one prompt, attached as ``@path`` attaches.

- text: as it is;
- a resource link to a file or folder inside the project: ``@"path"`` in its place, so
  it is attached exactly as a typed ``@path`` is (and its errors are the same); a link
  elsewhere (another folder, a URL) stays text: the model's tools ask before they go there;
- an embedded resource (the editor's buffer, saved or not): attached with its text, under
  the same ``Attached file:`` header a mention gets;
- an image (PNG, JPEG, GIF, WebP; ``promptCapabilities.image``): attached as a typed
  ``@shot.png`` is (scaled down when large, a chip's label, the OpenAI image part); one
  that is no such image gets a note in the prompt saying it was left out, and so does
  audio (``promptCapabilities.audio`` is false).
"""

from __future__ import annotations

import base64
import binascii
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from ..core import images
from ..core.conversation import mentions
from ..core.conversation.mentions import Attachment, Expanded
from ..core.protocol.messages import UserText

_SURROGATE = re.compile("[\ud800-\udfff]")


def clean(text: str) -> str:
    """``text`` with lone surrogates (JSON allows ``"\\ud800"``; UTF-8 cannot carry it to the
    model) replaced by U+FFFD."""
    return _SURROGATE.sub("\ufffd", text)


def file_path(uri: str) -> Path | None:
    """The local path of a ``file://`` URI (or of a bare absolute path), else None."""
    if uri.startswith("/"):
        return Path(uri)
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return Path(unquote(parsed.path))


def _fenced(header: str, body: str, info: str = "") -> str:
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    ending = "" if not body or body.endswith("\n") else "\n"
    return f"{header}\n{fence}{info}\n{body}{ending}{fence}"


def _shown(path: Path | None, uri: str, directory: Path) -> str:
    if path is None:
        return uri
    try:
        return path.relative_to(directory).as_posix()
    except ValueError:
        return str(path)


def _embedded(resource: Any, directory: Path) -> tuple[Attachment, str]:
    uri = clean(getattr(resource, "uri", "") or "resource")
    shown = _shown(file_path(uri), uri, directory)
    text = getattr(resource, "text", None)
    text = clean(text) if isinstance(text, str) else None
    if text is None:
        blob = getattr(resource, "blob", "") or ""
        attachment = Attachment(shown, "file", f"binary, {len(blob) * 3 // 4} bytes: not included")
        return attachment, f"Attached file: {attachment.label}"
    lines = text.splitlines(keepends=True)
    cut = len(lines) > mentions.MAX_LINES or len(text.encode()) > mentions.MAX_BYTES
    if cut:
        text = (
            "".join(lines[: mentions.MAX_LINES])
            .encode()[: mentions.MAX_BYTES]
            .decode("utf-8", errors="ignore")
        )
    count = len(text.splitlines())
    detail = f"{count} line{'s' if count != 1 else ''}" + (": cut" if cut else "")
    detail += ", from the editor"
    attachment = Attachment(shown, "file", detail)
    suffix = Path(shown).suffix.lstrip(".").lower()
    info = suffix if re.fullmatch(r"[a-z0-9+-]{1,12}", suffix) else ""
    return attachment, _fenced(f"Attached file: {attachment.label}", text, info)


def _image(block: Any, number: int, directory: Path) -> tuple[Attachment, str] | str:
    """An image block's attachment and header, or why it is left out."""
    uri = clean(getattr(block, "uri", None) or "")
    shown = _shown(file_path(uri), uri, directory) if uri else f"image {number}"
    try:
        data = base64.b64decode(getattr(block, "data", "") or "", validate=True)
        prepared = images.prepare(data, shown)
    except (binascii.Error, ValueError) as exc:  # ImageError is a ValueError
        return f"an image, left out: {exc}"
    attachment = Attachment(shown, "image", prepared.detail(), images.image_part(prepared))
    return attachment, f"Attached image: {attachment.label}"


def expand(blocks: list[Any], directory: Path, worktree: Path) -> Expanded:
    """The prompt the blocks make, with its attachments (``MentionError`` as for a typed
    ``@path``)."""
    parts: list[str] = []
    extra: list[tuple[Attachment, str]] = []
    left_out: list[str] = []
    linked = False
    root = worktree.resolve()
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind == "text":
            parts.append(clean(block.text))
        elif kind == "resource_link":
            linked = True
            path = file_path(block.uri)
            inside = path is not None and path.exists() and path.resolve().is_relative_to(root)
            if inside:
                assert path is not None
                parts.append(f' @"{_shown(path, block.uri, directory)}" ')
            else:
                parts.append(f" {clean(block.uri)} ")
        elif kind == "resource":
            extra.append(_embedded(block.resource, directory))
        elif kind == "image":
            made = _image(block, len(extra) + len(left_out) + 1, directory)
            if isinstance(made, str):
                left_out.append(made)
            else:
                extra.append(made)
        elif kind == "audio":
            left_out.append("audio, left out: this agent's models take no audio")
    text = "".join(parts)
    if linked:  # the spaces put around each link, where text was there already
        text = re.sub(r" {2,}", " ", text).strip()
    expanded = mentions.expand(text, directory, worktree)
    if not extra and not left_out:
        return expanded
    prompt = expanded.prompt
    blocks_text = [block for _, block in extra]
    blocks_text += [f"(The user also sent {what}.)" for what in left_out]
    attachments = (*expanded.attachments, *(attachment for attachment, _ in extra))
    parts = [a.image for a in attachments if a.image is not None]
    content = UserText(
        "\n\n".join([str(expanded.content), *blocks_text]),
        prompt=prompt,
        attachments=[attachment.label for attachment in attachments],
        **({"images": parts} if parts else {}),
    )
    return Expanded(prompt, content, attachments)
