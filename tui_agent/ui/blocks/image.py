"""A small preview of the images a user message sent, under its chips, where the terminal
shows images: Kitty (its graphics protocol) or a Sixel terminal (iTerm2, WezTerm, foot,
Konsole, mlterm, contour), drawn by ``textual-image``. Elsewhere (tmux, other terminals,
the tests' headless app) the chips alone say what was sent.

Which terminal this is comes from its environment (``protocol``), not from asking it:
textual-image asks the terminal at import time (a device-attributes query for Sixel, a
graphics-protocol query for Kitty), which cannot work once Textual reads the terminal's
input (textual-image's own docs say so; the answer would arrive as keys). So the question
is left out when it is imported here (``_load``), after the first frame, on the first
image shown, and the widget of the protocol the environment names is used.
``TUI_AGENT_IMAGE_PREVIEW`` = ``kitty``, ``sixel`` or ``off`` overrides the guess (a tmux
with ``allow-passthrough``, a terminal not in the list).

This module imports nothing heavy at its top: the chat imports it when a message has
images (``Chips.images``); textual-image (and Pillow) come with the first preview.
"""

from __future__ import annotations

import base64
import binascii
import io
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from textual.containers import Horizontal
from textual.widget import Widget

PREVIEW_ENV = "TUI_AGENT_IMAGE_PREVIEW"
# terminals that draw Sixel images, by $TERM_PROGRAM, $TERM, or a variable of their own
SIXEL_PROGRAMS = frozenset({"iTerm.app", "WezTerm", "mintty"})
SIXEL_TERMS = frozenset({"foot", "foot-extra", "mlterm", "contour", "yaft-256color"})


class Chips(tuple[str, ...]):
    """The chips' labels of a user message, as a tuple of them, and the images it sent
    (``images``: their OpenAI ``image_url`` parts), which the chat previews under them."""

    images: tuple[dict[str, Any], ...]

    def __new__(cls, labels: Iterable[str], images: Iterable[dict[str, Any]] = ()) -> Chips:
        made = super().__new__(cls, labels)
        made.images = tuple(images)
        return made


def image_parts(content: Any) -> list[dict[str, Any]]:
    """The ``image_url`` parts of a message's content (a list of parts), in order."""
    if not isinstance(content, list):
        return []
    return [p for p in content if isinstance(p, dict) and p.get("type") == "image_url"]


def protocol(environ: Mapping[str, str] | None = None) -> str | None:
    """``"tgp"`` (Kitty's graphics protocol), ``"sixel"``, or None (no preview), from the
    terminal's environment: ``TUI_AGENT_IMAGE_PREVIEW`` first; inside tmux or screen none
    (their passthrough is off by default, and the image would land in the wrong place)."""
    env = os.environ if environ is None else environ
    said = env.get(PREVIEW_ENV, "").strip().lower()
    if said in ("kitty", "tgp"):
        return "tgp"
    if said == "sixel":
        return "sixel"
    if said:  # off, no, 0, or a word it does not know
        return None
    term = env.get("TERM", "")
    if env.get("TMUX") or term.startswith(("screen", "tmux")):
        return None
    if term == "xterm-kitty" or env.get("KITTY_WINDOW_ID"):
        return "tgp"
    if env.get("TERM_PROGRAM", "") in SIXEL_PROGRAMS or term in SIXEL_TERMS:
        return "sixel"
    if env.get("KONSOLE_VERSION"):
        return "sixel"
    return None


_widgets: dict[str, Any] = {}


def _load(kind: str) -> Any:
    """textual-image's widget class for ``kind``, imported without its terminal queries
    (see the module's doc); None when textual-image is missing."""
    if kind in _widgets:
        return _widgets[kind]
    _widgets.update(tgp=None, sixel=None)
    try:
        from textual_image import _terminal

        def no_question(*args: Any, **kwargs: Any) -> Any:
            raise _terminal.TerminalError("Textual reads the terminal: not asked")

        # sixel.py and tgp.py take this name when they are imported, get_cell_size reads
        # it when it runs (the cell's size in pixels still comes from the ioctl)
        _terminal.capture_terminal_response = no_question
        from textual_image import widget
    except Exception:  # missing, or its import failed (a terminal of 0 columns divides by 0)
        return None
    _widgets.update(tgp=widget.TGPImage, sixel=widget.SixelImage)
    return _widgets[kind]


def _bytes(part: Mapping[str, Any]) -> bytes | None:
    url = part.get("image_url")
    url = url.get("url") if isinstance(url, Mapping) else None
    if not isinstance(url, str) or not url.startswith("data:") or ";base64," not in url:
        return None
    try:
        return base64.b64decode(url.partition(";base64,")[2], validate=True)
    except (binascii.Error, ValueError):
        return None


class ImagePreviews(Horizontal):
    """The previews of one message's images, side by side, a few rows high."""

    DEFAULT_CSS = """
    ImagePreviews { height: auto; margin: 0 0 0 2; }
    ImagePreviews > .image-preview { width: auto; height: 8; margin: 0 1 0 0; }
    """


def preview(images: Sequence[Mapping[str, Any]]) -> ImagePreviews | None:
    """The previews of ``images`` (``image_url`` parts), or None where the terminal
    shows no images (or none could be read): then the chips alone show them."""
    kind = protocol()
    if kind is None or not images:
        return None
    made = _load(kind)
    if made is None:
        return None
    from PIL import Image, UnidentifiedImageError

    shown: list[Widget] = []
    for part in images:
        data = _bytes(part)
        if data is None:
            continue
        try:
            picture = Image.open(io.BytesIO(data))
            picture.load()
        except (OSError, UnidentifiedImageError, ValueError):
            continue
        shown.append(made(picture, classes="image-preview"))
    return ImagePreviews(*shown) if shown else None
