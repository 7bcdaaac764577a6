"""Sessions as a person finds them again: a short title, when, how many turns, the model,
the journal's size, and the last exchange (the picker's preview, ``tui-agent sessions``).

A session's title is the start of its first prompt until someone names it (``/rename``):
then a ``{"type": "title"}`` record in its journal says so, the last one winning. The model
a session talks to is written as a ``{"type": "model"}`` record when it changes (the
journal's header predates models being switchable), so a listing can say which one.

Reading a journal for its summary parses it once; the summary is kept while the file's
size and time stay the same, so reopening the picker or filtering reads nothing again.
A journal larger than ``READ_WHOLE`` (a huge session, or a file planted among them) is
read only at its start (``HEAD``: the header, the first prompt) and its end (``TAIL``: the
last exchange, the latest title and model records); its summary says so (``partial``:
turns and messages count what was read)."""

from __future__ import annotations

import json
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..protocol.messages import AssistantMessage, UserMessage, adopt
from . import journal as journal_module

TITLE_LENGTH = 60  # a title made from the first prompt: its first line, at most this long
RENAME_LENGTH = 120  # a title given with /rename
PREVIEW_LENGTH = 600  # each side of the last exchange, as the preview shows it
READ_WHOLE = 16 * 1024 * 1024  # bytes: a journal up to this size is read whole
HEAD = 1024 * 1024  # bytes read at the start of a larger one
TAIL = 4 * 1024 * 1024  # bytes read at its end


@dataclass(frozen=True)
class SessionSummary:
    """One journaled session. ``title`` is the name given (``named``) or the start of the
    first prompt; ``turns`` counts the prompts typed; ``model`` the last one recorded
    ("" before any was); ``size`` the journal's bytes; ``last_prompt`` and ``last_reply``
    the last exchange, cut to ``PREVIEW_LENGTH``. ``messages`` and ``created`` as
    ``journal.SessionInfo`` has them (``/sessions`` and ACP read either)."""

    id: str
    directory: str
    created: str
    path: Path
    title: str
    messages: int
    modified: float
    turns: int = 0
    model: str = ""
    size: int = 0
    named: bool = False
    titled_by: str = ""  # "person" (/rename), "model" (its summary), "" (the first prompt)
    first_prompt: str = ""
    last_prompt: str = ""
    last_reply: str = ""
    words: str = field(default="", repr=False)  # what a filter looks in, lower-cased
    partial: bool = False  # only its start and end were read (a journal past READ_WHOLE)

    def as_data(self) -> dict[str, Any]:
        """What ``tui-agent sessions --json`` prints for it."""
        return {
            "id": self.id,
            "title": self.title,
            "named": self.named,
            "titled_by": self.titled_by,
            "directory": self.directory,
            "created": self.created,
            "modified": self.modified,
            "turns": self.turns,
            "messages": self.messages,
            "model": self.model,
            "size": self.size,
            "path": str(self.path),
            "last_prompt": self.last_prompt,
            "last_reply": self.last_reply,
            "partial": self.partial,
        }

    @property
    def turns_label(self) -> str:
        """``3 turns``; ``≥3 turns`` when only the journal's start and end were read."""
        noun = "turn" if self.turns == 1 else "turns"
        return f"{'≥' if self.partial else ''}{self.turns} {noun}"

    @property
    def size_label(self) -> str:
        """The journal's size, short: 812 B, 14 KB, 2.3 MB."""
        if self.size < 1024:
            return f"{self.size} B"
        if self.size < 1024 * 1024:
            return f"{self.size / 1024:.0f} KB"
        return f"{self.size / 1024 / 1024:.1f} MB"

    def matches(self, query: str) -> bool:
        """Every word of ``query`` is in the title, a prompt, the id, the model or the
        folder (case ignored)."""
        return all(word in self.words for word in query.lower().split())


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """``text`` without control characters but newlines and tabs: a title or a preview
    is printed to a terminal (an escape sequence in a prompt must not reach it)."""
    return _CONTROL.sub("", text)


def default_title(prompt: str) -> str:
    """A title from a prompt: its first line that is not blank, cut at a word near
    ``TITLE_LENGTH`` characters with an ellipsis."""
    prompt = printable(prompt)
    line = next((line.strip() for line in prompt.split("\n") if line.strip()), "")
    if len(line) <= TITLE_LENGTH:
        return line
    cut = line[:TITLE_LENGTH]
    space = cut.rfind(" ")
    if space > TITLE_LENGTH // 2:
        cut = cut[:space]
    return cut.rstrip(" ,.;:") + "…"


def clean_title(title: str) -> str:
    """A title as ``/rename`` keeps it: one line, spaces collapsed; ValueError when empty
    or longer than ``RENAME_LENGTH``."""
    cleaned = " ".join(printable(title).split())
    if not cleaned:
        raise ValueError("a title needs some text: /rename TITLE")
    if len(cleaned) > RENAME_LENGTH:
        raise ValueError(f"a title is at most {RENAME_LENGTH} characters ({len(cleaned)} given)")
    return cleaned


def title_record(title: str, by: str = "person") -> dict[str, Any]:
    """A ``title`` record: given by the person (``/rename``) or the model's summary
    (``by="model"``: ``[sessions] model_titles``), which a name given always beats."""
    record: dict[str, Any] = {"type": "title", "title": clean_title(title)}
    if by != "person":
        record["by"] = by
    return record


TITLE_REQUEST = (
    "Give a title of at most eight words for a coding session that starts with the "
    "request below. Answer with the title only: no quotes, no full stop.\n\n"
)


def model_title(reply: str) -> str:
    """The title in a model's answer to ``TITLE_REQUEST``: its first line that is not
    blank, without Markdown marks or quotes, cut as ``default_title`` cuts ("" if none)."""
    for line in printable(reply).split("\n"):
        line = line.strip().strip("#*_`\"'“”‘’ ").removeprefix("Title:").strip().rstrip(".")
        if line:
            return default_title(line)
    return ""


def model_record(provider: str, model: str) -> dict[str, Any]:
    return {"type": "model", "provider": provider, "model": model}


def _cut(text: str) -> str:
    text = printable(text).strip()
    return text if len(text) <= PREVIEW_LENGTH else text[:PREVIEW_LENGTH].rstrip() + " …"


_cache: dict[str, tuple[tuple[int, int], SessionSummary | None]] = {}


def summarize(path: Path) -> SessionSummary | None:
    """The summary of the journal at ``path``; None when it is not a session journal
    (no header) or cannot be read."""
    try:
        info = path.stat()
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):  # a fifo or a device would never end a read
        return None
    key = (info.st_mtime_ns, info.st_size)
    kept = _cache.get(str(path))
    if kept is not None and kept[0] == key:
        return kept[1]
    summary = _read(path, info.st_mtime, info.st_size)
    _cache[str(path)] = (key, summary)
    return summary


def _read(path: Path, modified: float, size: int) -> SessionSummary | None:
    partial = size > READ_WHOLE
    records = _ends(path, size) if partial else _records(path)
    if not records or records[0].get("type") != "session":
        return None
    head = records[0]
    title = summary_title = ""
    model = ""
    count = turns = 0
    first_prompt = last_prompt = last_reply = ""
    prompts: list[str] = []
    for record in records[1:]:
        kind = record.get("type")
        if kind == "title" and isinstance(record.get("title"), str):
            given = " ".join(printable(record["title"]).split())[:RENAME_LENGTH]
            if record.get("by") == "model":
                summary_title = given
            else:
                title = given
        elif kind == "model" and isinstance(record.get("model"), str):
            model = printable(record["model"])[:100]
        elif kind == "message" and isinstance(record.get("message"), dict):
            count += 1
            message = _typed(record["message"])
            if isinstance(message, UserMessage) and message.origin == "prompt":
                turns += 1
                first_prompt = first_prompt or message.prompt
                last_prompt, last_reply = message.prompt, ""
                if len(prompts) < 20:
                    prompts.append(message.prompt[:300])
            elif isinstance(message, AssistantMessage) and message.text.strip():
                last_reply = message.text
    session_id = path.stem  # what --resume and /resume find it by
    directory = str(head.get("directory", ""))
    shown = title or summary_title or default_title(first_prompt)
    words = " ".join([shown, session_id, model, directory, *prompts, last_prompt]).lower()
    return SessionSummary(
        id=session_id,
        directory=directory,
        created=str(head.get("created", "")),
        path=path,
        title=shown,
        messages=count,
        modified=modified,
        turns=turns,
        model=model,
        size=size,
        named=bool(title),
        titled_by="person" if title else "model" if summary_title else "",
        first_prompt=_cut(first_prompt),
        last_prompt=_cut(last_prompt),
        last_reply=_cut(last_reply),
        words=words,
        partial=partial,
    )


def _records(path: Path) -> list[dict[str, Any]]:
    """The journal's records that parse, messages as stored (no origin classified:
    ``_typed`` does that for the few it reads)."""
    found: list[dict[str, Any]] = []
    for _number, line in journal_module.read_lines(path):
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(record, dict):
            found.append(record)
    return found


def _ends(path: Path, size: int) -> list[dict[str, Any]]:
    """The records in the first ``HEAD`` and the last ``TAIL`` bytes of a large journal
    (lines cut by either edge left out)."""
    try:
        with path.open("rb") as file:
            head = file.read(HEAD)
            file.seek(max(size - TAIL, len(head)))
            tail = file.read(TAIL)
    except OSError:
        return []
    lines = head.split(b"\n")[:-1]  # the last one runs on past the head
    lines += tail.split(b"\n")[1:]  # the first one started before the tail
    found: list[dict[str, Any]] = []
    for line in lines:
        if not line.strip():
            continue
        try:
            record = json.loads(line.decode("utf-8", errors="replace"))
        except (ValueError, RecursionError):
            continue
        if isinstance(record, dict):
            found.append(record)
    return found


def _typed(data: Mapping[str, Any]) -> Any:
    """A journaled message typed (a user message written before origins classified as
    a resume does); None when it is not a message."""
    try:
        return adopt(journal_module.read_message(dict(data)))
    except (ValueError, TypeError, KeyError):
        return None


def list_summaries(directory: Path | None = None) -> list[SessionSummary]:
    """The sessions journaled, newest first; only ``directory``'s when it is given."""
    folder = journal_module.sessions_dir()
    if not folder.is_dir():
        return []
    wanted = None if directory is None else str(Path(directory).resolve())
    found: list[SessionSummary] = []
    for path in folder.glob("*.jsonl"):
        summary = summarize(path)
        if summary is None or (wanted is not None and summary.directory != wanted):
            continue
        found.append(summary)
    return sorted(found, key=lambda s: (s.modified, s.id), reverse=True)
