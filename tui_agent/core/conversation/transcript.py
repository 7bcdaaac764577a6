"""The transcript: the conversation and its journal, kept in step; resuming a journal.

Every message recorded goes to the conversation (what the next request sends) and to the
journal (flushed at once, so ``--continue`` finds it after a crash). Messages are typed
(``core/protocol/messages.py``); the journal writes and reads their OpenAI dicts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..protocol.messages import Message, SystemMessage, ToolMessage
from . import journal as journal_module
from .conversation import Conversation, repair, starts_cleanly

INTERRUPTED = "interrupted: the session ended before this call finished"


class Transcript:
    RESUME_FIRST = 64  # journaled messages read before the rest (resume)

    def __init__(self, session_id: str, directory: Path, on_failure: Callable[[str], None]):
        self.directory = directory
        self._on_failure = on_failure
        self.conversation = Conversation()
        self.journal = journal_module.Journal(session_id, directory, on_failure)

    def record(self, message: Mapping[str, Any]) -> Message:
        """Append a message (typed, or an OpenAI dict, typed on the way) to the conversation
        and the journal (flushed at once); returns the typed message."""
        typed = self.conversation.append(message)
        self.journal.append(typed)
        return typed

    def request(self, system_prompt: str) -> list[Message]:
        """What the next request sends: the system prompt, then every message (typed; the
        provider makes its wire format of them)."""
        return [SystemMessage(system_prompt), *self.conversation.messages]

    def replace(self, messages: Sequence[Mapping[str, Any]], info: Mapping[str, Any]) -> None:
        """The conversation becomes ``messages`` (a compaction); the journal records it
        (with ``info``) and keeps every message it held before."""
        self.conversation.replace(messages)
        self.journal.compaction(self.conversation.messages, info)

    def close_open_calls(self, reason: str) -> None:
        """Answer the calls the last assistant message left open with an error saying
        ``reason`` (a cancelled turn, an interrupted session), so the transcript stays one
        the API accepts."""
        for answer in self.conversation.open_call_answers(reason):
            self.record(answer)

    def new_journal(self, session_id: str) -> None:
        """Later messages go to the journal of ``session_id`` (the old one is closed)."""
        self.journal.close()
        self.journal = journal_module.Journal(session_id, self.directory, self._on_failure)

    # -- resume -----------------------------------------------------------------------------

    @staticmethod
    def find(directory: Path, session_id: str | None = None) -> Path | None:
        """The journal of ``session_id``, or without one the newest journal of
        ``directory``; None when there is none."""
        if session_id is not None:
            return journal_module.find_session(session_id)
        found = journal_module.list_sessions(directory)
        return found[0].path if found else None

    def resume(self, path: Path, read: Resumed | None = None) -> None:
        """Continue the journal at ``path``: later messages are appended to it, and the
        conversation becomes its messages, repaired (a damaged journal still resumes) and
        typed (``read_resumed``). The newest ``RESUME_FIRST`` messages are read at once,
        the rest on the first use of the whole conversation (``Conversation.defer``): the
        app draws the newest ones first. Calls the journal left open are answered with an
        error. ``read``: this journal as ``read_resumed`` read it before (the app drew it
        before the session was made), taken over with its very messages when the journal
        has not changed since, else read again."""
        if read is None or read.path != path or not read.fresh():
            read = read_resumed(path)
        self.new_journal(path.stem)
        self.conversation.take(read.conversation)
        for message in read.closed:
            self.journal.append(message)


class Resumed:
    """A journal read for a resume, nothing written (``read_resumed``): its
    ``conversation`` (the newest messages typed, the rest put off), the answers it gave
    to calls the journal left open (``closed``, in the conversation already; the resume
    journals them) and the journal's size and time when read (``fresh``)."""

    def __init__(self, path: Path, conversation: Conversation, closed: list[ToolMessage]):
        self.path = path
        self.conversation = conversation
        self.closed = closed
        self._stamp = _stamp(path)

    def fresh(self) -> bool:
        """The journal is as it was read (same size and modification time)."""
        return self._stamp is not None and _stamp(self.path) == self._stamp


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        found = path.stat()
    except OSError:
        return None
    return found.st_size, found.st_mtime_ns


def read_resumed(path: Path) -> Resumed:
    """The conversation a resume of the journal at ``path`` continues, without writing
    anything: the journal's messages from its last compaction, repaired and typed; the
    newest ``RESUME_FIRST`` read now, the rest when the whole conversation is first used
    (``Conversation.defer``); calls it left open answered with an error (``closed``)."""
    lines = journal_module.read_lines(path)
    base: list[dict[str, Any]] = []
    compacted = journal_module.last_compaction(lines)
    if compacted is not None:  # the conversation starts from the last compaction
        [record] = journal_module.parse_records(path, lines[compacted : compacted + 1]) or [{}]
        found = record.get("messages")
        base = [m for m in found if isinstance(m, dict)] if isinstance(found, list) else []
        lines = lines[compacted + 1 :]
    cut, newest = _newest_messages(path, lines)
    if base:  # a compacted conversation is small: read it whole
        cut, newest = (
            0,
            [*base, *journal_module.messages_of(journal_module.parse_records(path, lines))],
        )
    conversation = Conversation()
    for message in repair(newest, INTERRUPTED):
        conversation.append(message)
    if cut:
        first = newest[0]

        def earlier() -> list[Message]:
            records = journal_module.parse_records(path, lines[:cut])
            older = journal_module.messages_of(records)
            # what repairing the whole journal gives before ``first``: it starts cleanly
            return repair([*older, first], INTERRUPTED)[:-1]

        conversation.defer(earlier)
    closed = conversation.open_call_answers(INTERRUPTED)
    for message in closed:
        conversation.append(message)
    return Resumed(path, conversation, closed)


def _newest_messages(path: Path, lines: list[tuple[int, str]]) -> tuple[int, list[dict[str, Any]]]:
    """``(cut, messages)``: the journaled messages of ``lines[cut:]``, at least
    ``RESUME_FIRST`` of them unless the journal holds fewer, the first one starting
    cleanly (nothing before it changes how ``repair`` treats it and what follows) unless
    ``cut`` is 0."""
    found: list[dict[str, Any]] = []  # newest first
    cut = len(lines)
    while cut > 0 and not (len(found) >= Transcript.RESUME_FIRST and starts_cleanly(found[-1])):
        cut -= 1
        records = journal_module.parse_records(path, lines[cut : cut + 1])
        found += reversed(journal_module.messages_of(records))
    return cut, found[::-1]
