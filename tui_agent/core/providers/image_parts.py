"""Images on the wire: what the ``openai`` provider does with the images of a request.

A user message's ``image_url`` parts (``@shot.png``) go as they are to a model that takes
images. A tool result that carries an image (``read`` of a PNG: its dict's ``"image"``,
``{"file": <a copy in the images folder>, …}``) cannot: Chat Completions takes only text
in a ``tool`` message, so the images of a run of tool results follow it in one user
message, each after a line naming its call. A model that does not take images
(``[models."X"] images = false``, or a server that refused them this session) gets a text
part saying what was left out instead: the turn goes on without them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .. import images

IMAGE_KEY = '"image": {'  # a tool result's JSON that may carry an image: parsed only then


def takes_images(settings: Mapping[str, Any], model: str) -> bool | None:
    """The ``[models."MODEL"] images`` setting: True, False, or None (not said: images
    are sent, and a server that refuses them turns them off for the session)."""
    models = settings.get("models")
    entry = models.get(model) if isinstance(models, Mapping) else None
    value = entry.get("images") if isinstance(entry, Mapping) else None
    return value if isinstance(value, bool) else None


def has_images(wire: list[dict[str, Any]]) -> bool:
    """Whether a request carries an image (a user message's part or a tool result's)."""
    return any(_user_images(m) or _tool_image(m) is not None for m in wire)


def _user_images(message: Mapping[str, Any]) -> bool:
    content = message.get("content")
    return (
        message.get("role") == "user"
        and isinstance(content, list)
        and any(images.is_image_part(part) for part in content)
    )


def _tool_image(message: Mapping[str, Any]) -> dict[str, Any] | None:
    content = message.get("content")
    if message.get("role") != "tool" or not isinstance(content, str) or IMAGE_KEY not in content:
        return None
    try:
        data = json.loads(content)
    except (ValueError, RecursionError):
        return None
    image = data.get("image") if isinstance(data, dict) else None
    return image if isinstance(image, dict) and isinstance(image.get("file"), str) else None


def left_out(why: str) -> dict[str, Any]:
    return {"type": "text", "text": f"[an image was attached here; it is not sent: {why}]"}


def prepare_wire(wire: list[dict[str, Any]], why_not: str | None) -> list[dict[str, Any]]:
    """``wire`` (the request's messages) with its images as the model can take them:
    ``why_not`` None sends them (tool results' images in a user message after the run
    of tool results), else each becomes a text part saying so. Messages without images
    are the same objects."""
    if not has_images(wire):
        return wire
    out: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []  # the images of the run of tool results so far
    for message in wire:
        if message.get("role") != "tool" and pending:
            out.append({"role": "user", "content": pending})
            pending = []
        if _user_images(message):
            if why_not is not None:
                parts = [
                    left_out(why_not) if images.is_image_part(part) else part
                    for part in message["content"]
                ]
                message = {**message, "content": parts}
            out.append(message)
            continue
        out.append(message)
        image = _tool_image(message)
        if image is not None:
            pending.extend(_tool_parts(message, image, why_not))
    if pending:
        out.append({"role": "user", "content": pending})
    return out


def _tool_parts(
    message: Mapping[str, Any], image: dict[str, Any], why_not: str | None
) -> list[dict[str, Any]]:
    call = message.get("tool_call_id", "")
    name = str(image.get("path") or Path(image["file"]).name)
    head = {"type": "text", "text": f"The image {name} that tool call {call} returned:"}
    if why_not is not None:
        return [head, left_out(why_not)]
    file = Path(image["file"])
    part = None
    if file.parent.resolve() == images.store.folder().resolve():  # only our own copies
        part = images.store.file_part(file)
    return [head, part or left_out(f"its copy {file} is gone")]
