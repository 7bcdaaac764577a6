"""A pasted path of an image (a screenshot dragged into the terminal, a path copied from a
file manager) becomes an ``@`` mention of it, so it is attached as ``@shot.png`` is.

Terminals paste a dropped file as its path, quoted or with its spaces escaped
(``'/tmp/my shot.png'``, ``/tmp/my\\ shot.png``) or as a ``file://`` URI. An image inside
the project is mentioned by its path; one outside it is copied to the sessions folder
first (``images.store.keep_pasted``: the mentions attach nothing else from outside the
project). Anything else is pasted as it is.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from urllib.parse import unquote, urlparse

from textual.events import Paste

from .connected import images


def image_path(text: str) -> Path | None:
    """The existing PNG, JPEG, GIF or WebP file ``text`` names, alone, or None."""
    text = text.strip()
    if not text or "\n" in text or len(text) > 4096:
        return None
    if text.startswith("file://"):
        candidates = [unquote(urlparse(text).path)]
    else:
        candidates = [text]  # as it is: a path with spaces some terminals paste raw
        try:
            words = shlex.split(text)
        except ValueError:
            words = []
        if len(words) == 1:
            candidates.insert(0, words[0])
    for candidate in candidates:
        path = Path(candidate).expanduser()
        if not path.is_absolute() or path.suffix.lower()[1:] not in images.sniff_extensions():
            continue
        try:
            with path.open("rb") as handle:
                if images.sniff(handle.read(16)):
                    return path
        except OSError:
            continue
    return None


def mention(path: Path, worktree: Path, directory: Path) -> str:
    """The ``@`` mention that attaches ``path``: its place in the project, or its copy."""
    real = path.resolve()
    if real.is_relative_to(worktree.resolve()):
        try:
            shown = real.relative_to(directory.resolve()).as_posix()
        except ValueError:
            shown = str(real)
    else:
        shown = str(images.store.keep_pasted(real))
    return f'@"{shown}" ' if " " in shown else f"@{shown} "


def pasted_image(event: Paste, directory: Path, worktree: Path) -> Paste:
    """``event`` with a lone image path made its mention, else ``event`` itself."""
    path = image_path(event.text)
    if path is None:
        return event
    try:
        return Paste(mention(path, worktree, directory))
    except OSError:
        return event
