"""``session.conversation``: the messages so far (SPEC §5) and what a conversation does:
record, expand a prompt's ``@path`` mentions, clear, resume a journaled one, its context
budget, its steering and a side reply (``complete``)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..conversation import mentions, titles
from ..conversation.mentions import Expanded
from ..conversation.steering import Steering
from ..conversation.transcript import Resumed, Transcript
from ..protocol.events import ConversationReset, EventBus, UsageUpdate
from ..protocol.messages import Message, UserMessage, openai_dict

if TYPE_CHECKING:
    from ..conversation.budget import Budget
    from ..providers import Provider


def new_session_id() -> str:
    # os.urandom(3).hex() is secrets.token_hex(3), without importing hashlib and hmac
    return f"{datetime.now():%Y%m%d-%H%M%S}-{os.urandom(3).hex()}"


class SessionConversation(Transcript):
    """The conversation of a session: a sequence of typed messages (``messages``,
    ``tail(n)``, ``len()``, iteration, indexing) kept in step with its ``journal``.

    ``clear()`` and ``resume()`` start a conversation over: the session's ``id`` follows
    the journal, and the parts that hold per-conversation state hear it through
    ``on_reset`` (checkpoints, the budget, the ``start`` moment) before
    ``ConversationReset`` goes on the events."""

    budget: Budget  # the context window (set by the session: it needs the conversation)

    def __init__(
        self,
        directory: Path,
        *,
        events: EventBus,
        on_failure: Callable[[str], None],
        worktree: Callable[[], Path],
        system_prompt: Callable[[], str],
        base_prompt: Callable[[], str],
        provider: Callable[[], Provider],
    ) -> None:
        self.id = new_session_id()
        super().__init__(self.id, directory, on_failure)
        self.steering = Steering()  # sent into the running turn (steer), not delivered yet
        self._usage: Callable[[], UsageUpdate] = lambda: UsageUpdate(0, 0, 0)
        self._events = events
        self._worktree = worktree
        self._system_prompt = system_prompt
        self._base_prompt = base_prompt
        self._provider = provider
        # per-conversation state elsewhere: fn(source, journal) on clear ("clear", None)
        # and resume ("resume", the journal's path)
        self.on_reset: list[Callable[[str, Path | None], None]] = []
        self._model_written = ""  # the model last recorded in this journal (titles.py)

    # -- the messages (SPEC: session.conversation) -------------------------------------------

    @property
    def messages(self) -> list[Message]:
        """Every message, oldest first."""
        return self.conversation.messages

    @property
    def held(self) -> list[Message]:
        return self.conversation.held

    @property
    def deferred(self) -> bool:
        return self.conversation.deferred

    def tail(self, count: int) -> list[Message]:
        """The last ``count`` messages (a resumed journal's older ones stay unread)."""
        return self.conversation.tail(count)

    def __len__(self) -> int:
        return len(self.conversation)

    def __bool__(self) -> bool:
        return bool(self.conversation)

    def __iter__(self) -> Iterator[Message]:
        return iter(self.conversation)

    def __getitem__(self, index: int) -> Message:
        return self.conversation[index]

    @property
    def usage(self) -> UsageUpdate:
        """The tokens the provider reported for this session's requests so far."""
        return self._usage()

    # -- what a conversation does -------------------------------------------------------------

    def system_prompt(self) -> str:
        """What the model is told first: the workspace's prompt, what ``start`` functions
        said, and in plan mode that it is planning."""
        return self._system_prompt()

    def expand(self, prompt: str) -> Expanded:
        """``prompt`` with the files and folders its ``@path`` mentions name attached (see
        ``conversation/mentions.py``): ``.content`` is what the model gets, ``.attachments``
        what was attached. Raises ``MentionError`` for a path that is missing or outside
        the project."""
        return mentions.expand(prompt, self.directory, self._worktree())

    async def complete(
        self, messages: Sequence[Mapping[str, Any]], provider: Provider | None = None
    ) -> str:
        """One reply to ``messages`` (typed or OpenAI dicts; the workspace's system prompt
        is added), no tools, the conversation untouched (``/compact`` uses it); from
        ``provider`` when given (another model's: ``session.extensions.provider_for``)."""
        from ..providers.base import reply_text

        system = {"role": "system", "content": self._base_prompt()}
        asked = provider if provider is not None else self._provider()
        return await reply_text(asked.stream([system, *map(openai_dict, messages)], []))

    def clear(self) -> None:
        """Forget the conversation; later messages go to a new journal."""
        ended, messages = self.id, tuple(self.messages)
        self.conversation.clear()
        self.id = new_session_id()
        self._model_written = ""
        self.new_journal(self.id)
        self._reset("clear", ended=ended, ended_messages=messages)

    def resume(  # type: ignore[override]
        self, session_id: str | Path | None = None, read: Resumed | None = None
    ) -> bool:
        """Load a journaled conversation (this folder's last one without an id) and go on
        with it; False when there is none. Its newest messages are read first and the
        rest on the first use of the whole conversation. ``read``: the journal as
        ``read_resumed`` read it already (``Transcript.resume``)."""
        if isinstance(session_id, Path):  # Transcript.resume(path): a journal file
            path: Path | None = session_id
        else:
            path = Transcript.find(self.directory, session_id)
        if path is None:
            return False
        self.id = path.stem
        self._model_written = ""
        super().resume(path, read)
        self._reset("resume", path)
        return True

    def record(self, message: Mapping[str, Any]) -> Message:
        """As ``Transcript.record``; before the first reply of a model (the first, or
        another after ``/model``) a ``model`` record says which it is (``titles.py``)."""
        typed = super().record(message)
        if typed.role == "assistant":
            provider = self._provider()
            if provider.model and provider.model != self._model_written:
                self._model_written = provider.model
                self.journal.write_record(titles.model_record(provider.name, provider.model))
        return typed

    def sessions(self, everywhere: bool = False) -> list[titles.SessionSummary]:
        """Journaled sessions of this folder (of every folder with ``everywhere``),
        newest first: title, when, turns, model, size, the last exchange."""
        return titles.list_summaries(None if everywhere else self.directory)

    @property
    def title(self) -> str:
        """The name ``rename`` gave this conversation, else the start of its first
        prompt ("" before one)."""
        if self.journal.path.exists():
            summary = titles.summarize(self.journal.path)
            if summary is not None:
                return summary.title
        for message in self.held:
            if isinstance(message, UserMessage) and message.origin == "prompt":
                return titles.default_title(message.prompt)
        return ""

    @property
    def titled_by(self) -> str:
        """Who gave the title: "person" (``rename``), "model" (its summary, ``[sessions]
        model_titles``) or "" (none: the first prompt's start)."""
        summary = titles.summarize(self.journal.path) if self.journal.path.exists() else None
        return summary.titled_by if summary is not None else ""

    async def title_from_model(self, provider: Provider | None = None) -> str:
        """Ask the model (``provider``'s when given: a cheaper one) for a title of this
        conversation from its first prompt (one request, no tools, the conversation
        untouched: ``[sessions] model_titles``) and record it, unless someone named the
        session meanwhile; the title, or "" (no prompt yet, no title in the answer, or
        named)."""
        first = next(
            (m for m in self.held if isinstance(m, UserMessage) and m.origin == "prompt"), None
        )
        if first is None:
            return ""
        ask = {"role": "user", "content": titles.TITLE_REQUEST + first.prompt[:4000]}
        title = titles.model_title(await self.complete([ask], provider))
        if not title or self.titled_by == "person":
            return ""
        return self.rename(title, by="model")

    def rename(self, title: str, by: str = "person") -> str:
        """Name this conversation ``title`` (one line, at most ``titles.RENAME_LENGTH``
        characters; ValueError otherwise), recorded in its journal; returns the title.
        ``by="model"``: ``title`` is a model's answer to ``titles.TITLE_REQUEST`` (its
        first line is taken), and a name the person gave stays."""
        if by == "model":
            title = titles.model_title(title)
        record = titles.title_record(title, by)
        self.journal.write_record(record)
        if self.journal.failed:
            raise ValueError(f"could not write the title to {self.journal.path}")
        return str(record["title"])

    def _reset(
        self,
        source: str,
        path: Path | None = None,
        ended: str = "",
        ended_messages: tuple[Message, ...] = (),
    ) -> None:
        for fn in self.on_reset:
            fn(source, path)
        self._events.emit(ConversationReset(source, ended, ended_messages))

    def __repr__(self) -> str:
        return f"SessionConversation(id={self.id!r}, messages={len(self.held)})"
