"""Session journals: one JSONL file per session, appended and flushed per message.

A crash mid-write leaves at most a torn last line, which reading skips. Settings (and
so API keys) are never written: only the session header and the chat messages, each as
its dict (``messages.record_dict``; ``Transcript.resume`` types them again).

An image a user message carries (``@shot.png``) is written as a reference to its copy in
``<sessions folder>/images/`` (``images.to_journal``), read back as the image (a journal
with a 5 MB screenshot in it stays a few KB).

Format ``VERSION`` 2 (the header's ``"version"``): a user message says where it came from
(``"origin"``, always written; see ``messages.ORIGINS``). Journals written before (no
``"version"``) still resume: reading gives each of their user messages its origin from
its text, by the rules of that time (``classify_legacy``), so after reading every user
message has one, and nothing else parses message text to learn what it is.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from .. import images
from ..protocol.messages import (
    CONTEXT_CLOSE,
    CONTEXT_OPEN,
    FEEDBACK_CLOSE,
    FEEDBACK_OPEN,
    UserMessage,
    adopt,
    record_dict,
)
from ..sandbox import user_shell
from ..util import paths

log = logging.getLogger("tui_agent.journal")

VERSION = 2  # 2: user messages carry their origin; 1 (no "version"): it was in their text


def sessions_dir() -> Path:
    return paths.user_data_dir() / "sessions"


@dataclass(frozen=True)
class SessionInfo:
    id: str
    directory: str
    created: str
    path: Path
    title: str
    messages: int
    modified: float


class Journal:
    """``on_error(text)`` hears the first write that fails (the user should know the
    session is not being saved); later failures are only logged."""

    def __init__(
        self, session_id: str, directory: Path, on_error: Callable[[str], None] | None = None
    ) -> None:
        self.id = session_id
        self.directory = directory
        self.path = sessions_dir() / f"{session_id}.jsonl"
        self._handle: IO[str] | None = None
        self.on_error = on_error
        self.failed = False

    def _open(self) -> IO[str]:
        if self._handle is None or self._handle.closed:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fresh = not self.path.exists() or self.path.stat().st_size == 0
            self._handle = self.path.open("a", encoding="utf-8")
            if fresh:
                self._write(
                    {
                        "type": "session",
                        "version": VERSION,
                        "id": self.id,
                        "directory": str(self.directory),
                        "created": datetime.now().isoformat(timespec="seconds"),
                    }
                )
            elif not _ends_with_newline(self.path):
                self._handle.write("\n")  # seal a torn last line before appending
        return self._handle

    def _write(self, record: dict[str, Any]) -> None:
        handle = self._handle
        assert handle is not None
        try:
            line = json.dumps(record, ensure_ascii=False)
            line.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates from undecodable file names
            line = json.dumps(record)
        handle.write(line + "\n")
        handle.flush()

    def append(self, message: Mapping[str, Any]) -> None:
        """Write ``message`` (typed, or an OpenAI dict) as one flushed line."""
        try:
            self._open()
            self._write({"type": "message", "message": written(message)})
        except (OSError, ValueError) as exc:
            log.warning("could not write journal %s", self.path, exc_info=True)
            if not self.failed and self.on_error is not None:
                reason = str(exc)
                if isinstance(exc, OSError) and exc.strerror:
                    reason = exc.strerror + (f": {exc.filename}" if exc.filename else "")
                self.on_error(
                    f"could not save this session to {self.path} ({reason}); the chat goes "
                    "on, but it cannot be resumed later"
                )
            self.failed = True

    def compaction(self, messages: Sequence[Mapping[str, Any]], info: Mapping[str, Any]) -> None:
        """Record that the conversation is now ``messages`` (a compaction): resuming starts
        from the last such record; the lines before it stay in the file."""
        try:
            self._open()
            record = {"type": "compaction", **info, "messages": [written(m) for m in messages]}
            self._write(record)
        except (OSError, ValueError):
            log.warning("could not write journal %s", self.path, exc_info=True)
            self.failed = True

    def write_record(self, record: Mapping[str, Any]) -> None:
        """Write another kind of record (``{"type": …}`` first: readers find records by
        that prefix): checkpoints, undos and redos. Failures are logged (the messages'
        failure is the one the user hears about)."""
        try:
            self._open()
            self._write(dict(record))
        except (OSError, ValueError):
            log.warning("could not write journal %s", self.path, exc_info=True)
            self.failed = True

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as handle:
        handle.seek(0, os.SEEK_END)
        if handle.tell() == 0:
            return True
        handle.seek(-1, os.SEEK_END)
        return handle.read(1) == b"\n"


_last_read: tuple[tuple[str, int, int], list[tuple[int, str]]] | None = None


def read_lines(path: Path) -> list[tuple[int, str]]:
    """The journal's lines that are not blank, with their numbers (none if unreadable).
    The last journal read is kept while its size and time are the same: a resume reads
    it, then its checkpoints do."""
    global _last_read
    try:
        info = path.stat()
        key = (str(path), info.st_mtime_ns, info.st_size)
        if _last_read is not None and _last_read[0] == key:
            return list(_last_read[1])
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    # "\n" only: a message may hold U+2028, \x85 or \x1c, which splitlines() would cut
    lines = [(number, line) for number, line in enumerate(text.split("\n"), 1) if line.strip()]
    _last_read = (key, lines)
    return list(lines)


def written(message: Mapping[str, Any]) -> dict[str, Any]:
    """``message`` as the journal writes it: its whole dict (``record_dict``: the message's
    own when nothing is added), a user message with its ``"origin"`` even when it is the
    default ``"prompt"`` (a user message without one was written before origins)."""
    data = record_dict(message)
    if data.get("role") != "user":
        return data
    content = data.get("content")
    if isinstance(content, list) and any(images.is_image_part(part) for part in content):
        parts = [images.to_journal(p) if images.is_image_part(p) else p for p in content]
        data = {**data, "content": parts}  # the images by reference: a journal stays small
    if "origin" not in data:
        return {**data, "origin": "prompt"}
    return data


def read_message(data: dict[str, Any]) -> dict[str, Any]:
    """A journaled message dict as the conversation holds it: a user message's default
    ``"origin"`` left out (a prompt equals ``{"role": "user", "content": …}``), and one
    written before origins classified (``classify_legacy``). Changed in place."""
    if data.get("role") != "user":
        return data
    content = data.get("content")
    if isinstance(content, list):
        data["content"] = [_image_read(part) for part in content]
    if "origin" not in data:
        data.update(classify_legacy(data.get("content")))
    if data.get("origin") == "prompt":
        del data["origin"]
    return data


def _image_read(part: Any) -> Any:
    """A journaled part as the conversation holds it: an image's reference read back."""
    if isinstance(part, dict) and part.get("type") == "image_file":
        return images.from_journal(part)
    return part


def classify_legacy(content: Any) -> dict[str, Any]:
    """Where a user message written before origins (journal format 1) came from, from its
    text, by the rules of that time: the one place that still reads them. The keys to add
    to its dict (``messages.USER_KEYS``)."""
    from . import mentions  # (here only: a journal of today's format never needs them)
    from .compaction import SUMMARY_HEADER

    text = adopt({"role": "user", "content": content}).text
    run = user_shell.parse(text)
    if run is not None:
        return {"origin": "shell", "shell": user_shell.kept(run)}
    if text.startswith(FEEDBACK_OPEN) and text.endswith(FEEDBACK_CLOSE):
        return {"origin": "continuation"}
    if text.startswith(SUMMARY_HEADER):
        return {"origin": "summary"}
    expanded = mentions.split(text)
    prompt = expanded.prompt
    if prompt.endswith(CONTEXT_CLOSE) and (start := prompt.rfind(CONTEXT_OPEN)) >= 0:
        prompt = prompt[:start]  # the prompt functions' context, after what was typed
    found: dict[str, Any] = {"origin": "prompt"}
    if prompt != text:
        found["prompt"] = prompt
    if expanded.attachments:
        found["attachments"] = [attachment.label for attachment in expanded.attachments]
    return found


def _read(record: dict[str, Any]) -> dict[str, Any]:
    """A record's messages as the conversation holds them (``read_message``): a
    message's, a compaction's, an undo's."""
    kind = record.get("type")
    if kind == "message" and isinstance(record.get("message"), dict):
        read_message(record["message"])
    elif kind in ("compaction", "undo"):
        found = record.get("messages" if kind == "compaction" else "removed")
        for message in found if isinstance(found, list) else ():
            if isinstance(message, dict):
                read_message(message)
    return record


def parse_records(path: Path, lines: list[tuple[int, str]]) -> list[dict[str, Any]]:
    """The records of ``lines`` (from ``read_lines``) that parse, their messages as the
    conversation holds them (``read_message``: each user message has its origin); torn or
    corrupt lines are skipped with a warning."""
    records: list[dict[str, Any]] = []
    for number, line in lines:
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            log.warning("skipping unreadable line %d of %s", number, path)
            continue
        if isinstance(record, dict):
            records.append(_read(record))
    return records


def read_records(path: Path) -> list[dict[str, Any]]:
    """Every record that parses; torn or corrupt lines are skipped with a warning."""
    return parse_records(path, read_lines(path))


COMPACTION_PREFIX = '{"type": "compaction"'


def last_compaction(lines: list[tuple[int, str]]) -> int | None:
    """The index in ``lines`` of the last compaction record (written with ``"type"``
    first, so a prefix finds it without parsing every line), or None."""
    for index in range(len(lines) - 1, -1, -1):
        if lines[index][1].startswith(COMPACTION_PREFIX):
            return index
    return None


def read_messages(path: Path) -> list[dict[str, Any]]:
    """The journaled message dicts, as the conversation holds them (unchecked:
    ``conversation.repair`` makes a transcript of them)."""
    return messages_of(read_records(path))


def messages_of(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The chat messages among journal records (their dicts, unchecked)."""
    return [
        r["message"]
        for r in records
        if r.get("type") == "message" and isinstance(r.get("message"), dict)
    ]


def _info(path: Path) -> SessionInfo | None:
    records = read_records(path)
    if not records or records[0].get("type") != "session":
        return None
    head = records[0]
    messages = messages_of(records)
    first_user = next((m for m in messages if m.get("role") == "user"), None)
    typed = adopt(first_user) if first_user else None  # a record nothing else holds
    title = typed.prompt[:80] if isinstance(typed, UserMessage) else ""
    return SessionInfo(
        id=str(head.get("id") or path.stem),
        directory=str(head.get("directory", "")),
        created=str(head.get("created", "")),
        path=path,
        title=title.splitlines()[0] if title else "",
        messages=len(messages),
        modified=path.stat().st_mtime,
    )


def list_sessions(directory: Path | None = None) -> list[SessionInfo]:
    """Sessions, newest first; only this folder's when ``directory`` is given."""
    found: list[SessionInfo] = []
    wanted = None if directory is None else str(Path(directory).resolve())
    folder = sessions_dir()
    if not folder.is_dir():
        return found
    for path in folder.glob("*.jsonl"):
        info = _info(path)
        if info is None:
            continue
        if wanted is not None and info.directory != wanted:
            continue
        found.append(info)
    return sorted(found, key=lambda i: (i.modified, i.id), reverse=True)


def find_session(session_id: str) -> Path | None:
    path = sessions_dir() / f"{session_id}.jsonl"
    if path.is_file() and "/" not in session_id and not session_id.startswith("."):
        return path
    return None


SUBAGENT = "subagent"  # a subagent's message, with the task call it answers (delegation)


def child_records(path: Path) -> dict[str, tuple[str, list[dict[str, Any]]]]:
    """The subagents' runs a journal holds: for each ``task`` call id, the agent's name
    and its messages (OpenAI dicts, in order)."""
    runs: dict[str, tuple[str, list[dict[str, Any]]]] = {}
    for record in read_records(path):
        if record.get("type") != SUBAGENT or not isinstance(record.get("message"), dict):
            continue
        call, agent = str(record.get("call", "")), str(record.get("agent", ""))
        runs.setdefault(call, (agent, []))[1].append(record["message"])
    return runs
