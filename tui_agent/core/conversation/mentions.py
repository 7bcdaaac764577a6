"""``@path`` mentions: the files and folders a prompt names, attached to the message the
model gets.

The message recorded (and journaled, and sent) is the prompt as typed, then one block per
attachment, each headed by a line saying what it is; the message keeps the prompt as typed
and the attachments' labels besides (``Expanded.content`` is a ``UserText``), so nothing
reads them out of its text again (``split`` does, for journals written before that)::

    explain @src/app.py

    Attached file: src/app.py (120 lines)
    ```py
    …the file…
    ```

Which ``@`` counts, so that an e-mail address or ``@decorator`` in prose never blocks a
prompt: ``@`` at the start or after a space or an opening bracket (not inside a word, not
in `code` or a fenced block), followed by a path up to the next space (or in quotes,
``@"my notes.md"``; a trailing ``.,;:!?)`` is dropped when the path exists without it).
A path that exists inside the project (the session's git worktree, or its folder outside
git) is attached. A missing one is an error (``MentionError``: nothing is sent) when it
clearly means a path: quoted, starting with ``./``, ``../``, ``~/`` or ``/``, in a folder
that exists (``@src/mian.py``), or ending in a common file extension (``@READNE.md``).
Anything else stays text as written (``@alice``, ``@dataclass``, ``@app.get``,
``@types/node``). A path outside the project is an error: the model's own ``read`` tool
asks before it reads there, and a prompt must not carry such a file past that question.
The one exception is an image the user pasted the path of in the app: it is copied to
the sessions folder first (``images.store.keep_pasted``) and that copy is attached.
"""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .. import images
from ..engines.project_files import SKIP_DIRS, git_files, in_git
from ..protocol.messages import UserText

MAX_BYTES = 100 * 1024  # of a file's text attached
MAX_LINES = 2000
MAX_ENTRIES = 500  # of a folder's listing
BINARY_PROBE = 8192

# the extensions that make a missing ``@name.ext`` an error rather than text
EXTENSIONS = frozenset(
    "py pyi ipynb md markdown rst txt json jsonl toml yaml yml ini cfg conf env lock xml csv "
    "tsv html htm css scss sass less js mjs cjs jsx ts tsx vue svelte rs go c h cc cpp cxx "
    "hpp hh java kt kts scala swift m mm rb php pl lua r jl dart ex exs erl hs ml clj sql sh "
    "bash zsh fish ps1 bat cmd gradle cmake mk make tf proto graphql log diff patch "
    "dockerfile gitignore editorconfig svg png jpg jpeg gif webp pdf zip gz tar".split()
)
_TRAILING = ".,;:!?)]}>'\""
_MENTION = re.compile(r'(?<![^\s(\[{<])@(?:"([^"\n]+)"|([^\s"`]+))')
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,}).*?(?:^ {0,3}\1[`~]*[ \t]*$|\Z)", re.M | re.S)
_INLINE_CODE = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)", re.S)
_HEADER = re.compile(r"Attached (file|folder): (.+) \(([^()\n]*)\)(?:\n|\Z)")
_OPEN_FENCE = re.compile(r"(`{3,})[^`\n]*\n")


class MentionError(ValueError):
    """A prompt names a path that cannot be attached: nothing was sent; the message says
    which, why, and what to do."""


@dataclass(frozen=True)
class Attachment:
    """One attached path: ``path`` as shown (relative to the session's folder, folders end
    in ``/``), ``kind`` "file" or "folder", and ``detail`` (its size, and whether it was
    cut or left out: "120 lines", "binary, 3 KB: content not included"). A PNG, JPEG, GIF
    or WebP file is an ``"image"``: its ``image`` part goes with the message (scaled down
    when large: ``images.prepare``), its ``detail`` says its size ("image, PNG
    3840×2160, 5.2 MB; sent as 1568×882")."""

    path: str
    kind: Literal["file", "folder", "image"]
    detail: str
    image: dict[str, Any] | None = field(default=None, compare=False, repr=False)

    @property
    def label(self) -> str:
        """How the chat shows it: ``src/app.py (120 lines)``."""
        return f"{self.path} ({self.detail})"


@dataclass(frozen=True)
class Expanded:
    """A prompt with its mentions attached: ``prompt`` as typed, ``content`` what the model
    gets (the prompt, then the attachments: a ``UserText`` that keeps the prompt and the
    attachments' labels for the ``UserMessage`` made of it), and the ``attachments``."""

    prompt: str
    content: str
    attachments: tuple[Attachment, ...] = ()

    def __post_init__(self) -> None:
        """Whoever made it (``expand``, a Markdown command), ``content`` keeps what was
        typed and the attachments' labels: the message made of it says so, not its text."""
        if not isinstance(self.content, UserText) and (
            self.attachments or self.content != self.prompt
        ):
            labels = [attachment.label for attachment in self.attachments]
            meta: dict[str, Any] = {"attachments": labels} if labels else {}
            parts = [a.image for a in self.attachments if a.image is not None]
            if parts:  # a Markdown command's @diagram.png
                meta["images"] = parts
            object.__setattr__(self, "content", UserText(self.content, prompt=self.prompt, **meta))


@dataclass(frozen=True)
class Mention:
    """One ``@`` token of a prompt: its ``text`` after the ``@`` (unquoted), whether it
    was quoted, and where it is (``start`` at the ``@``)."""

    text: str
    quoted: bool
    start: int
    end: int


def _code_spans(prompt: str) -> list[tuple[int, int]]:
    spans = [(m.start(), m.end()) for m in _FENCE.finditer(prompt)]
    for match in _INLINE_CODE.finditer(prompt):
        if not any(a <= match.start() < b for a, b in spans):
            spans.append((match.start(), match.end()))
    return spans


def find(prompt: str) -> list[Mention]:
    """The ``@`` tokens of ``prompt`` that may name a path (outside code), in order."""
    if "@" not in prompt:
        return []
    spans = _code_spans(prompt) if "`" in prompt or "~~~" in prompt else []
    found: list[Mention] = []
    for match in _MENTION.finditer(prompt):
        if any(a <= match.start() < b for a, b in spans):
            continue
        quoted = match.group(1) is not None
        found.append(Mention(match.group(1) or match.group(2), quoted, *match.span()))
    return found


def _looks_like_path(text: str, quoted: bool, directory: Path) -> bool:
    """A missing path that clearly means one (an error), not a word with an ``@``."""
    if quoted or text.startswith(("./", "../", "~/", "/")):
        return True
    folder, slash, name = text.rstrip("/").rpartition("/")
    if slash and (directory / folder).is_dir():
        return True
    stem, dot, extension = name.rpartition(".")
    return bool(dot) and extension.lower() in EXTENSIONS and (bool(stem) or not slash)


def _resolve(text: str, directory: Path) -> Path:
    target = Path(os.path.expanduser(text))
    return target if target.is_absolute() else directory / target


def _exists(path: Path) -> bool:
    return path.is_file() or path.is_dir()


def _shown(path: Path, directory: Path) -> str:
    """``path`` as the chat and the model see it: relative to the session's folder where
    it can be (``../x`` for a file above it in the worktree)."""
    absolute = path.resolve()
    base = directory.resolve()
    try:
        text = absolute.relative_to(base).as_posix()
    except ValueError:
        text = Path(os.path.relpath(absolute, base)).as_posix()
    if text == ".":
        text = ""
    return text + "/" if path.is_dir() and text else text or "./"


def _suggest(text: str, directory: Path, worktree: Path) -> str:
    """``Did you mean …?`` from the project's files with a close name, or ""."""
    listed = git_files(directory) if in_git(worktree) else None
    if listed is None:
        try:
            listed = sorted(e.name for e in os.scandir(directory))
        except OSError:
            return ""
    by_name: dict[str, str] = {}
    for path in listed[:50_000]:
        by_name.setdefault(path.rsplit("/", 1)[-1], path)
    wanted = text.rstrip("/").rsplit("/", 1)[-1]
    close = difflib.get_close_matches(wanted, list(by_name), n=3, cutoff=0.75)
    return f" Did you mean {', '.join('@' + by_name[c] for c in close)}?" if close else ""


def _size(count: int) -> str:
    if count < 1024:
        return f"{count} bytes"
    if count < 1024 * 1024:
        return f"{count / 1024:.0f} KB"
    return f"{count / 1024 / 1024:.1f} MB"


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def _fence(body: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    return "`" * max(3, longest + 1)


def _block(header: str, body: str, info: str = "") -> str:
    fence = _fence(body)
    ending = "" if not body or body.endswith("\n") else "\n"
    return f"{header}\n{fence}{info}\n{body}{ending}{fence}"


def attach_image(path: Path, shown: str) -> tuple[Attachment, str] | None:
    """The attachment for an image and its header line (the image goes as a part of its
    own); None when it is no image after all (a damaged header: a binary file).
    ``MentionError`` when it cannot be sent (too large)."""
    try:
        prepared = images.read(path, shown)
    except images.NotAnImage:
        return None
    except images.ImageError as exc:
        raise MentionError(f"@{exc} Nothing was sent.") from None
    attachment = Attachment(shown, "image", prepared.detail(), images.image_part(prepared))
    return attachment, f"Attached image: {attachment.label}"


def attach_file(path: Path, shown: str) -> tuple[Attachment, str]:
    """The attachment for a file and its block: the text up to ``MAX_LINES`` lines and
    ``MAX_BYTES`` (cut at a line's end, and said so), or a note for a binary file; an
    image (by its first bytes) is ``attach_image``'s."""
    size = path.stat().st_size
    with path.open("rb") as handle:
        data = handle.read(MAX_BYTES + 1)
    if images.sniff(data[:16]) is not None and (image := attach_image(path, shown)):
        return image
    if b"\0" in data[:BINARY_PROBE]:
        attachment = Attachment(shown, "file", f"binary, {_size(size)}: content not included")
        return attachment, f"Attached file: {attachment.label}"
    over_bytes = size > MAX_BYTES or len(data) > MAX_BYTES
    if over_bytes:
        data = data[:MAX_BYTES]
        data = data[: data.rfind(b"\n") + 1] or data
    text = data.decode("utf-8", errors="replace")
    lines = text.splitlines(keepends=True)
    if len(lines) > MAX_LINES:
        text = "".join(lines[:MAX_LINES])
        detail = (
            f"the first {MAX_LINES:,} lines of {_size(size)}: cut at {MAX_LINES:,} lines"
            if over_bytes
            else f"the first {MAX_LINES:,} of {len(lines):,} lines: cut at {MAX_LINES:,}"
        )
    elif over_bytes:
        detail = f"the first {_plural(len(lines), 'line')} ({_size(len(data))}) of {_size(size)}"
        detail += f": cut at {_size(MAX_BYTES)}"
    elif not text:
        detail = "empty"
    else:
        detail = _plural(len(lines), "line")
    attachment = Attachment(shown, "file", detail)
    extension = path.suffix.lstrip(".").lower()
    info = extension if re.fullmatch(r"[a-z0-9+-]{1,12}", extension) else ""
    return attachment, _block(f"Attached file: {attachment.label}", text, info)


def folder_entries(folder: Path, worktree: Path) -> list[str]:
    """The folder's entries one level down (folders end in ``/``), sorted, as the ``list``
    tool would show them: git's view inside a repository, else the folder without
    ``SKIP_DIRS``."""
    listed = git_files(folder) if in_git(worktree) else None
    if listed:
        return sorted({name.split("/", 1)[0] + ("/" * ("/" in name)) for name in listed})
    try:
        found = list(os.scandir(folder))
    except OSError:
        return []
    shown: list[str] = []
    for entry in found:
        try:
            is_dir = entry.is_dir()
        except OSError:
            is_dir = False
        if is_dir and entry.name in SKIP_DIRS:
            continue
        shown.append(entry.name + ("/" if is_dir else ""))
    return sorted(shown)


def attach_folder(path: Path, shown: str, worktree: Path) -> tuple[Attachment, str]:
    """The attachment for a folder: its listing one level down (``MAX_ENTRIES`` at most)."""
    entries = folder_entries(path, worktree)
    if len(entries) > MAX_ENTRIES:
        detail = f"the first {MAX_ENTRIES} of {len(entries):,} entries"
        entries = entries[:MAX_ENTRIES]
    else:
        detail = f"{len(entries):,} entr{'y' if len(entries) == 1 else 'ies'}"
    attachment = Attachment(shown, "folder", detail)
    body = "".join(f"{entry}\n" for entry in entries)
    return attachment, _block(f"Attached folder: {attachment.label}", body)


def _pick(mention: Mention, directory: Path) -> tuple[str, Path] | None:
    """The path a mention names, trailing punctuation dropped when the path exists without
    it; None when neither form exists."""
    text = mention.text
    candidates = [text]
    if not mention.quoted:
        while text and text[-1] in _TRAILING:
            text = text[:-1]
            candidates.append(text)
    for candidate in candidates:
        if candidate and _exists(_resolve(candidate, directory)):
            return candidate, _resolve(candidate, directory)
    return None


def expand(prompt: str, directory: Path, worktree: Path) -> Expanded:
    """``prompt`` with the files and folders it mentions attached (see the module's
    docstring for which ``@`` counts). Raises ``MentionError`` for a mention that names
    a missing path, a path outside the project, or something that is neither a file nor
    a folder; nothing is attached then."""
    mentions = find(prompt)
    if not mentions:
        return Expanded(prompt, prompt)
    root = worktree.resolve()
    attachments: list[Attachment] = []
    blocks: list[str] = []
    seen: set[Path] = set()
    for mention in mentions:
        picked = _pick(mention, directory)
        if picked is None:
            text = mention.text.rstrip(_TRAILING) if not mention.quoted else mention.text
            if not _looks_like_path(text, mention.quoted, directory):
                continue  # @alice, @dataclass: text
            hint = _suggest(text, directory, worktree)
            raise MentionError(
                f"@{text}: no such file or folder in {directory}.{hint} Nothing was sent. "
                "(To send an @word as text, put it in `backticks`.)"
            )
        text, path = picked
        real = path.resolve()
        pasted = images.store.is_pasted(real)  # the user's pasted image: shown by its name
        if not real.is_relative_to(root) and not pasted:
            raise MentionError(
                f"@{text} is outside the project ({root}): only files inside it are attached. "
                "Nothing was sent. Ask the model to read it instead (its read tool asks first)."
            )
        if real in seen:
            continue
        seen.add(real)
        shown = real.name if pasted else _shown(path, directory)
        try:
            if path.is_dir():
                attachment, block = attach_folder(path, shown, worktree)
            else:
                attachment, block = attach_file(path, shown)
        except OSError as exc:
            raise MentionError(
                f"@{text}: cannot read it ({exc.strerror or exc}). Nothing was sent."
            ) from exc
        attachments.append(attachment)
        blocks.append(block)
    if not attachments:
        return Expanded(prompt, prompt)
    labels = [attachment.label for attachment in attachments]
    parts = [attachment.image for attachment in attachments if attachment.image is not None]
    meta: dict[str, Any] = {"images": parts} if parts else {}
    text = "\n\n".join([prompt, *blocks])
    content = UserText(text, prompt=prompt, attachments=labels, **meta)
    return Expanded(prompt, content, tuple(attachments))


def _closing(text: str, fence: str, position: int) -> int | None:
    """Where the block whose body starts at ``position`` ends (after its closing
    ``fence`` line), or None. The fence is longer than any run of backticks in the body,
    so the first line that is the fence alone closes it."""
    close = position
    while True:
        close = text.find(fence, close)
        if close < 0:
            return None
        after = close + len(fence)
        if (close == position or text[close - 1] == "\n") and (
            after == len(text) or text[after] == "\n"
        ):
            return after
        close = after


def _blocks_from(text: str, position: int) -> list[Attachment] | None:
    """The attachments written from ``position`` to the end of ``text``, or None when
    that part is not exactly a run of attachment blocks."""
    found: list[Attachment] = []
    while True:
        header = _HEADER.match(text, position)
        if header is None:
            return None
        kind, path, detail = header.groups()
        found.append(Attachment(path, "folder" if kind == "folder" else "file", detail))
        position = header.end()
        if position == len(text):  # a binary file, last: a header alone
            return found
        opened = _OPEN_FENCE.match(text, position)
        if opened is None:
            if not text.startswith("\n", position):  # a binary file, then the next one
                return None
            position += 1
            continue
        ended = _closing(text, opened.group(1), opened.end())
        if ended is None:
            return None
        if ended == len(text):
            return found
        if not text.startswith("\n\n", ended):
            return None
        position = ended + 2


def split(content: str) -> Expanded:
    """A user message's text taken apart again: the prompt as typed and its attachments;
    a message without attachment blocks is all prompt. Only for journals written before
    user messages kept these (``journal.classify_legacy``)."""
    marker = "\n\nAttached "
    start = content.find(marker)
    while start >= 0:
        found = _blocks_from(content, start + 2)
        if found:
            return Expanded(content[:start], content, tuple(found))
        start = content.find(marker, start + 1)
    return Expanded(content, content)
