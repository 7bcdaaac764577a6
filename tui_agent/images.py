"""Public: images as tui-agent sends them to models, for the bundled ``read`` tool and
other plugins: what a file is (``sniff``), made ready to send (``read``, ``prepare``:
scaled down to ``MAX_SIDE`` pixels and ``MAX_BYTES``), its OpenAI ``image_url`` part
(``image_part``), and a copy kept in the sessions folder (``save``). A tool result that
carries ``"image": {"file": str(save(...)), "path": shown}`` has the image shown to a model
that takes images, in a user message after the tool results (Chat Completions takes only
text in a tool message)."""

from .core.images import (
    MAX_BYTES,
    MAX_INPUT,
    MAX_SIDE,
    MIME_TYPES,
    ImageError,
    NotAnImage,
    Prepared,
    dimensions,
    image_part,
    prepare,
    read,
    size_text,
    sniff,
)
from .core.images.store import folder, save

__all__ = [
    "MAX_BYTES",
    "MAX_INPUT",
    "MAX_SIDE",
    "MIME_TYPES",
    "ImageError",
    "NotAnImage",
    "Prepared",
    "dimensions",
    "folder",
    "image_part",
    "prepare",
    "read",
    "save",
    "size_text",
    "sniff",
]
