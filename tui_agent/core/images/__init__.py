"""Images in the conversation: what a file is (``sniff``: PNG, JPEG, GIF, WebP by their
first bytes, and their size in pixels, read from the header), made ready to send
(``prepare``: scaled down to ``MAX_SIDE`` pixels and ``MAX_BYTES``; Pillow, imported only
when an image needs it), the OpenAI ``image_url`` part made of it, and the copies kept in
the sessions folder (``store``) so a journal holds a reference, not the image.

May import: ``util``, ``protocol``. Nothing here runs at start-up.
"""

from .prepare import (
    MAX_BYTES,
    MAX_INPUT,
    MAX_SIDE,
    ImageError,
    NotAnImage,
    Prepared,
    prepare,
    read,
    size_text,
)
from .sniff import MIME_TYPES, dimensions, sniff, sniff_extensions
from .store import from_journal, image_part, is_image_part, part_info, to_journal

__all__ = [
    "MAX_BYTES",
    "MAX_INPUT",
    "MAX_SIDE",
    "MIME_TYPES",
    "ImageError",
    "NotAnImage",
    "Prepared",
    "dimensions",
    "from_journal",
    "image_part",
    "is_image_part",
    "part_info",
    "prepare",
    "read",
    "size_text",
    "sniff",
    "sniff_extensions",
    "to_journal",
]
