"""The context budget: how large the model's window is, how much of it the next request
uses, and making the conversation fit (``compact``).

The window, first found wins: the ``context_window`` setting for the model in use
(``[models."name"] context_window``), the ``context_window`` setting, what the server says
(``provider.context_window()``, asked once), what an overflow error stated, else
``DEFAULT_WINDOW``. Use is the provider's ``prompt_tokens`` for the last request plus an
estimate (``compaction.estimate``) of every message recorded since.
"""

from __future__ import annotations

import inspect
import json
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..protocol import events as ev
from ..protocol.messages import Message, openai_dict
from ..protocol.result import Result
from ..providers.base import Provider, reply_text
from ..util.truncation import save_output
from . import compaction
from .compaction import Summariser, estimate_all, text_tokens

if TYPE_CHECKING:
    from ..protocol.output import Output
    from .conversation import Conversation

log = logging.getLogger("tui_agent.budget")

DEFAULT_WINDOW = 32_768
DEFAULT_COMPACT_AT = 0.8
RESULT_SHARE = 0.25  # of the window: a larger tool result is cut before it is recorded
KEEP_RESULTS_SHARE = 0.15  # of the window: the newest tool results pruning leaves whole
KEEP_VERBATIM_SHARE = 0.3  # of the window: the newest messages a summary never replaces
PIECE_SHARE = 0.4  # of the window: one piece of a summary request


@dataclass(frozen=True)
class Use:
    """What the next request would use: ``tokens`` of ``window`` (``share`` = their ratio);
    ``source`` says where the window came from ("model setting", "setting", "server",
    "overflow error", "default")."""

    tokens: int
    window: int
    source: str

    @property
    def share(self) -> float:
        return self.tokens / self.window if self.window else 0.0

    def label(self) -> str:
        """For the status border: ``ctx 41% of 32k``."""
        size = f"{self.window // 1000}k" if self.window >= 10_000 else f"{self.window:,}"
        return f"ctx {self.share:.0%} of {size}"


class Compactable(Protocol):
    """What a budget compacts: the session's transcript, or a subagent's."""

    @property
    def conversation(self) -> Conversation: ...

    def replace(self, messages: Sequence[Mapping[str, Any]], info: Mapping[str, Any]) -> None: ...


class Budget:
    """The context budget of one session (``session.conversation.budget``). Plugins read ``use()``,
    listen for ``Compacted`` on ``session.events``, and may set ``summariser`` (an async
    function of ``(messages, summary_so_far) -> new summary``) to write summaries their way.
    ``carry`` holds functions each compaction's messages go through before they replace the
    conversation (``fn(messages) -> messages``, a valid transcript in and out): what must
    stay in front of the model does (the todo plugin keeps its list so)."""

    def __init__(
        self,
        *,
        transcript: Compactable,
        events: ev.EventBus,
        output: Output,
        settings: Callable[[], Mapping[str, Any]],
        provider: Callable[[], Provider],
        system_prompt: Callable[[], str],
        tools: Callable[[], list[dict[str, Any]]],
        before_compact: Callable[[str, str], Awaitable[None]] | None = None,
    ) -> None:
        self.transcript = transcript
        # (trigger "manual" | "auto", custom instructions): the PreCompact moment
        self.before_compact = before_compact
        self.events = events
        self.output = output
        self.settings = settings
        self.provider = provider
        self.system_prompt = system_prompt
        self.tools = tools
        self.summariser: Summariser | None = None
        self.carry: list[Callable[[list[Message]], list[Message]]] = []
        self._server: dict[int, int | None] = {}  # provider object id -> what it said
        self._unsettled: set[int] = set()  # providers whose answer was a guess
        self._learned: int | None = None  # from an overflow error
        self._last: tuple[int, int] | None = None  # (prompt_tokens, messages in that request)

    # -- the window ---------------------------------------------------------------------------

    def window(self) -> tuple[int, str]:
        settings = self.settings()
        model = settings.get("model")
        models = settings.get("models")
        if isinstance(models, Mapping) and model is not None:
            entry = models.get(str(model))
            if isinstance(entry, Mapping) and isinstance(entry.get("context_window"), int):
                return int(entry["context_window"]), "model setting"
        if isinstance(settings.get("context_window"), int):
            return int(settings["context_window"]), "setting"
        if self._learned is not None:
            return self._learned, "overflow error"
        said = self._said()
        if said is not None:
            return said, "server"
        return DEFAULT_WINDOW, "default"

    def _said(self) -> int | None:
        try:
            return self._server.get(id(self.provider()))
        except Exception:
            return None

    async def discover(self) -> None:
        """Ask the provider for its window (``context_window()``, an optional method): once
        per provider, or again before the next request while the provider says its answer
        is a guess (``window_settled`` False, as for an Ollama model not loaded yet)."""
        try:
            provider = self.provider()
        except Exception:
            return
        if id(provider) in self._server and id(provider) not in self._unsettled:
            return
        self._server.setdefault(id(provider), None)
        ask = getattr(provider, "context_window", None)
        if ask is None:
            return
        try:
            value = ask()
            if inspect.isawaitable(value):
                value = await value
        except Exception:
            log.info("could not ask %s for its context window", provider, exc_info=True)
            self._unsettled.discard(id(provider))
            return
        if getattr(provider, "window_settled", True) is False:
            self._unsettled.add(id(provider))
        else:
            self._unsettled.discard(id(provider))
        if isinstance(value, int) and value > 0:
            self._server[id(provider)] = value

    def learn(self, limit: int | None) -> None:
        """An overflow error stated the window (kept unless a setting gives one)."""
        if limit is not None and limit > 0:
            self._learned = limit

    @property
    def compact_at(self) -> float:
        value = self.settings().get("compact_at")
        return float(value) if isinstance(value, int | float) else DEFAULT_COMPACT_AT

    # -- use ------------------------------------------------------------------------------

    def observed(self, prompt_tokens: int, messages: int) -> None:
        """The provider reported ``prompt_tokens`` for a request of ``messages`` messages
        (the system prompt not counted)."""
        if prompt_tokens > 0:
            self._last = (prompt_tokens, messages)

    def forget(self) -> None:
        """The conversation was replaced (cleared, compacted, resumed): estimate it anew."""
        self._last = None

    def use(self, *, load: bool = True) -> Use | None:
        """What the next request would use. ``load=False``: None rather than read the
        older part of a resumed conversation that is not loaded yet (the status border)."""
        window, source = self.window()
        conversation = self.transcript.conversation
        if self._last is not None:
            prompt, count = self._last
            held = conversation.held if conversation.deferred else conversation.messages
            if count <= len(held) or not conversation.deferred:
                messages = conversation.messages if load or not conversation.deferred else held
                if count <= len(messages):
                    return Use(prompt + estimate_all(messages[count:]), window, source)
        if not load and conversation.deferred:
            return None
        tokens = estimate_all(conversation.messages) + text_tokens(self.system_prompt())
        tokens += text_tokens(_tools_json(self.tools()))
        return Use(tokens, window, source)

    # -- making it fit --------------------------------------------------------------------

    async def fit(self) -> None:
        """Before a request: compact when the request would pass ``compact_at`` of the
        window."""
        await self.discover()
        use = self.use()
        if use is not None and use.share >= self.compact_at:
            await self.compact("auto")

    def cap(self, name: str, result: Result) -> Result:
        """A tool result larger than ``RESULT_SHARE`` of the window, cut before it enters
        the conversation: its end kept, the whole saved to a file (as ``execute`` does)."""
        window, _ = self.window()
        limit = int(window * RESULT_SHARE) * compaction.CHARS_PER_TOKEN
        text = result.to_json()
        if len(text) <= limit:
            return result
        saved = save_output(text, f"result-{name}", "json")
        keep = max(0, limit - 400)
        note = (
            f"[result cut to fit the context window: the first {len(text) - keep:,} of "
            f"{len(text):,} characters are not shown; the whole result is in {saved}]\n"
        )
        data: dict[str, Any] = {"output": note + text[len(text) - keep :], "truncated": True}
        data["full_output"] = str(saved)
        if result.error:
            data["error"] = result.error[:500]
        return Result(data)

    async def compact(
        self, reason: str = "command", *, force: bool = False, focus: str = ""
    ) -> ev.Compacted | None:
        """Make the conversation smaller: prune old tool results; if the request is still
        over ``compact_at`` of the window (or ``force``), summarise the older messages with
        the model (in pieces that each fit; ``focus`` says what the summary should keep)
        and keep the newest verbatim. The journal
        records the result (``--continue`` resumes it) and keeps what it replaced. None when
        there was nothing to do."""
        conversation = self.transcript.conversation
        messages = list(conversation.messages)
        if not messages:
            return None
        if self.before_compact is not None:
            await self.before_compact("manual" if reason == "command" else "auto", focus)
        window, _ = self.window()
        fixed = text_tokens(self.system_prompt()) + text_tokens(_tools_json(self.tools()))
        before = estimate_all(messages) + fixed
        target = int(window * self.compact_at)
        pruned, count = compaction.prune(messages, int(window * KEEP_RESULTS_SHARE))
        summarised = 0
        if force or estimate_all(pruned) + fixed >= target:
            # /compact (between turns) summarises everything; during a turn the newest
            # messages stay verbatim, so the model goes on from where it was
            cut = (
                len(pruned)
                if reason == "command"
                else compaction.split_point(pruned, int(window * KEEP_VERBATIM_SHARE))
            )
            older = [m for m in pruned[:cut] if not compaction.is_summary(m)]
            previous = next((m.text for m in pruned[:cut] if compaction.is_summary(m)), "")
            if older:
                summary = await self._summarise(older, previous, window, focus)
                kept = pruned[cut:]
                pruned = [*compaction.summary_messages(summary, kept[0] if kept else None), *kept]
                summarised = cut
        if not count and not summarised:
            return None
        for carry in list(self.carry):
            pruned = carry(pruned)
        after = estimate_all(pruned) + fixed
        event = ev.Compacted(reason, before, after, count, summarised)
        self.transcript.replace(
            pruned, info={"reason": reason, "pruned": count, "summarised": summarised}
        )
        self.forget()
        self.events.emit(event)
        self.output.say(describe(event, window))
        return event

    async def _summarise(
        self, older: Sequence[Message], previous: str, window: int, focus: str
    ) -> str:
        piece_tokens = max(256, int(window * PIECE_SHARE) - text_tokens(previous))
        summary = previous
        for piece in compaction.pieces(older, piece_tokens):
            if self.summariser is not None:
                summary = await self.summariser(piece, summary)
                continue
            piece_chars = max(1000, (int(window * PIECE_SHARE) - text_tokens(summary)) * 4)
            request = compaction.summary_request(piece, summary, piece_chars, focus)
            summary = await self._ask([openai_dict(m) for m in request])
        return summary

    async def _ask(self, request: list[dict[str, Any]]) -> str:
        text = (await reply_text(self.provider().stream(request, []))).strip()
        if not text:
            raise RuntimeError("the model wrote an empty summary")
        return text


def describe(event: ev.Compacted, window: int) -> str:
    what = []
    if event.pruned:
        what.append(f"pruned {event.pruned} old tool result{'s' * (event.pruned != 1)}")
    if event.summarised:
        what.append(f"summarised {event.summarised} older messages")
    why = {
        "auto": "it neared the context window",
        "overflow": "the server said it was over the context window",
        "command": "/compact",
    }.get(event.reason, event.reason)
    return (
        f"Compacted the conversation ({why}): {' and '.join(what)}; about "
        f"{event.before:,} → {event.after:,} tokens of {window:,}. The journal keeps the "
        "full history."
    )


def _tools_json(tools: list[dict[str, Any]]) -> str:
    return json.dumps(tools) if tools else ""
