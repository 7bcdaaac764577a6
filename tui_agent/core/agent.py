"""The agent loop: stream a reply, run its tool calls in order, repeat.

The transcript stays valid for the next request whatever happens: every assistant
message with tool calls is followed by one ``tool`` message per call, even when a call
was cancelled or its arguments were not JSON.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from .protocol import events as ev
from .protocol.messages import (
    AssistantMessage,
    Message,
    ToolMessage,
    UserMessage,
    openai_dict,
    parse_arguments,
)
from .protocol.result import Result
from .providers.base import Finish, Provider, ProviderError, Text, Thinking, ToolCall, Usage
from .tools.toolbox import CANCELLED
from .util.secrets import SECRET_KEYS

if TYPE_CHECKING:
    from .conversation.budget import Budget
    from .conversation.steering import Steering
    from .protocol.context import ToolContext
    from .protocol.output import Output
    from .tools.toolbox import Toolbox

log = logging.getLogger("tui_agent.agent")

DEFAULT_MAX_STEPS = 50
DEFAULT_MAX_SUBAGENTS = 4  # max_subagents: calls of a parallel tool (task) run at once
DEFAULT_ATTEMPTS = 10  # requests in all for one reply, as Claude Code; llmock calls more a storm
DEFAULT_BASE_DELAY = 1.0
MAX_DELAY = 30.0
INCOMPLETE = "the reply stopped before the model finished"
CUT_CALL = (
    'not run: the reply reached the model\'s output limit (finish_reason "length") before '
    "the arguments of {name} were complete; send less in one call (write a long file in parts)"
)


class Reply:
    """One reply as it streams in. Its ``text`` and ``thinking`` are kept as the chunks
    that came (``add``) and joined when read: ``reply.text += chunk`` copied the whole text
    for every chunk (CPython grows a string in place only in a plain variable), ~190 µs a
    chunk at the end of a 100,000-token reply, 8.7 s in all."""

    def __init__(self) -> None:
        self._parts: dict[bool, list[str]] = {False: [], True: []}  # thinking -> chunks
        self.calls: list[ToolCall] = []
        self.error: str | None = None
        self.finish: str | None = None

    def add(self, chunk: str, thinking: bool = False) -> None:
        self._parts[thinking].append(chunk)

    def _joined(self, thinking: bool) -> str:
        parts = self._parts[thinking]
        if len(parts) > 1:
            parts[:] = ["".join(parts)]  # once per read after new chunks
        return parts[0] if parts else ""

    @property
    def text(self) -> str:
        return self._joined(False)

    @property
    def thinking(self) -> str:
        return self._joined(True)


class Recorder(Protocol):
    """What the loop records to and builds its requests from: the session's transcript
    (its journal with it), or a subagent's own (``delegation``)."""

    def record(self, message: Mapping[str, Any]) -> Message: ...

    def request(self, system_prompt: str) -> list[Message]: ...

    def close_open_calls(self, reason: str) -> None: ...


def new_message_id() -> str:
    """An assistant message's id, as opencode spells them (``msg_`` and 24 hex digits)."""
    return f"msg_{os.urandom(12).hex()}"


class Agent:
    """The loop over its parts, with no reference back to the session: the transcript it
    records to, the toolbox it calls, the events and notes it emits, and functions for
    what changes under it (settings and provider after ``/reload`` or ``/model``, the
    offered tools, the system prompt, each call's context).

    ``allowed(name)``: why this agent may not call ``name`` (a subagent's tools are a
    subset: a call outside it is answered with that error, nothing runs), or None.
    ``parallel(name)``: calls of that tool next to each other in one reply run at the same
    time (``task``: subagents), at most ``max_subagents`` at once; the others run one by
    one in order, as before."""

    def __init__(
        self,
        *,
        transcript: Recorder,
        toolbox: Toolbox,
        events: ev.EventBus,
        output: Output,
        settings: Callable[[], Mapping[str, Any]],
        provider: Callable[[], Provider],
        tools: Callable[[], list[dict[str, Any]]],
        system_prompt: Callable[[], str],
        tool_context: Callable[..., ToolContext],
        budget: Budget | None = None,
        before_tools: Callable[[], Awaitable[None]] | None = None,
        steering: Steering | None = None,
        allowed: Callable[[str], str | None] | None = None,
        parallel: Callable[[str], bool] | None = None,
    ) -> None:
        self.transcript = transcript
        self.toolbox = toolbox
        self.events = events
        self.output = output
        self.settings = settings
        self.provider = provider
        self.tools = tools
        self.system_prompt = system_prompt
        self.tool_context = tool_context
        self.budget = budget
        self.before_tools = before_tools  # the checkpoint before a turn's first tool call
        self.steering = steering  # what the user sent into the turn (session.steer)
        self.allowed = allowed
        self.parallel = parallel
        self.tokens = ev.UsageUpdate(0, 0, 0)
        self._pending: Reply | None = None

    def _setting(self, key: str, default: Any) -> Any:
        value = self.settings().get(key)
        return default if value is None else value

    async def turn(self, prompt: str) -> ev.TurnFinished:
        """Run one turn of ``prompt``; its outcome (the final reply, the error that ended
        it, the steps) is returned, and emitted as it is. A cancel emits a cancelled one and
        raises ``CancelledError``. ``prompt`` is recorded as a ``UserMessage``: a
        ``"prompt"``, unless it is a ``UserText`` that says otherwise (a stop function's
        ``"continuation"``)."""
        self.events.emit(ev.TurnStarted(prompt))
        self.transcript.record(UserMessage(prompt))
        reply_text = ""
        steps = 0
        max_steps = int(self._setting("max_steps", DEFAULT_MAX_STEPS))
        try:
            while True:
                if steps >= max_steps:
                    note = (
                        f"Stopped after {max_steps} steps (max_steps). Say 'continue' to go on, "
                        "or raise max_steps in config.toml."
                    )
                    self.output.say(note, kind="error")
                    return self._finished(ev.TurnFinished(reply_text, error=note, steps=steps))
                steps += 1
                await self._fit()
                reply = await self._reply(self.provider())
                self._pending = None
                reply_text = reply.text
                if reply.text or reply.calls:
                    self.transcript.record(AssistantMessage(reply.text, reply.calls))
                if reply.error is not None:
                    self.output.say(reply.error, kind="error")
                    return self._finished(
                        ev.TurnFinished(reply_text, error=reply.error, steps=steps)
                    )
                if not reply.calls:
                    return self._finished(ev.TurnFinished(reply_text, steps=steps))
                cut = reply.finish == "length"
                if self.before_tools is not None:
                    await self.before_tools()
                message_id = new_message_id()  # the reply's: its calls share it
                for group in self._groups(reply.calls):
                    if len(group) == 1:
                        call = group[0]
                        result = await self._run_call(call, cut=cut, message_id=message_id)
                        self._record_result(call, result)
                    else:
                        await self._run_together(group, cut=cut, message_id=message_id)
                for steer in self.steering.take() if self.steering is not None else ():
                    steered = UserMessage(steer.content, origin="steer", prompt=steer.prompt)
                    self.transcript.record(steered)  # seen by the next request
                    self.events.emit(ev.Steered(steer.prompt, steer.content))
        except asyncio.CancelledError:
            pending = self._pending
            if pending is not None and pending.text:
                self.transcript.record(AssistantMessage(pending.text))
            self.transcript.close_open_calls(CANCELLED)
            self.events.emit(ev.TurnFinished(reply_text, cancelled=True, steps=steps))
            raise

    def _record_result(self, call: ToolCall, result: Result) -> None:
        if self.budget is not None:  # one result never floods the window
            result = self.budget.cap(call.name, result)
        self.transcript.record(ToolMessage(call.id, result))

    def _groups(self, calls: list[ToolCall]) -> list[list[ToolCall]]:
        """The reply's calls in order, those of a parallel tool next to each other taken
        together."""
        groups: list[list[ToolCall]] = []
        together = False
        for call in calls:
            parallel = self.parallel is not None and self.parallel(call.name)
            if parallel and together:
                groups[-1].append(call)
            else:
                groups.append([call])
            together = parallel
        return groups

    async def _run_together(self, calls: list[ToolCall], *, cut: bool, message_id: str) -> None:
        """Run ``calls`` at the same time (at most ``max_subagents`` at once) and record
        their results in the reply's order. A cancel cancels every one and waits for them;
        the results of those that had finished are kept, the others are answered as
        cancelled (``close_open_calls``)."""
        limit = asyncio.Semaphore(
            max(1, int(self._setting("max_subagents", DEFAULT_MAX_SUBAGENTS)))
        )

        async def one(call: ToolCall) -> Result:
            async with limit:
                return await self._run_call(call, cut=cut, message_id=message_id)

        tasks = [asyncio.ensure_future(one(call)) for call in calls]
        try:
            await asyncio.gather(*tasks)
        except BaseException:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            for call, task in zip(calls, tasks, strict=True):
                if not task.cancelled() and task.exception() is None:
                    self._record_result(call, task.result())
            raise
        for call, task in zip(calls, tasks, strict=True):
            self._record_result(call, task.result())

    def _finished(self, outcome: ev.TurnFinished) -> ev.TurnFinished:
        self.events.emit(outcome)
        return outcome

    async def _fit(self, *, overflow: bool = False, limit: int | None = None) -> bool:
        """Make the next request fit the context window (``budget.fit``); after an overflow
        error, learn the window it stated and compact whatever the estimate says. A
        compaction that fails is said and the turn goes on (the request may still fit)."""
        if self.budget is None:
            return False
        try:
            if overflow:
                self.budget.learn(limit)
                return await self.budget.compact("overflow", force=True) is not None
            await self.budget.fit()
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("compaction failed", exc_info=True)
            self.output.say(
                self._redact(f"error: could not compact the conversation: {exc}"), kind="error"
            )
        return False

    async def _run_call(self, call: ToolCall, *, cut: bool = False, message_id: str = "") -> Result:
        """``cut``: the reply hit the output limit, so arguments that are not JSON were cut
        off, not mistyped; the model is told so."""
        args, problem = parse_arguments(call.arguments)
        if problem is not None:
            problem = f"invalid JSON arguments for {call.name}: {problem}"
            if cut:
                problem = CUT_CALL.format(name=call.name)
        context = self.tool_context(call_id=call.id, message_id=message_id or new_message_id())
        if problem is None and self.allowed is not None:
            problem = self.allowed(call.name)
        if problem is not None:  # announced and answered by the toolbox, like every call
            return self.toolbox.reject(
                call.name,
                problem,
                call_id=call.id,
                arguments=call.arguments,
                parent=context.parent_call,
            )
        return await self.toolbox.run(call.name, args, context)

    async def _reply(self, provider: Provider) -> Reply:
        """One streamed reply. A failure a retry can mend (``ProviderError.retryable``: 429,
        5xx, a dropped connection, a stream cut before the model finished) is retried up
        to ``retry_attempts`` requests in all, with backoff and jitter (``Retry-After``
        wins), also when part of the reply had arrived: nothing of it ran (its tool calls
        run once it has finished), so it is taken back (``ReplyWithdrawn``) and streams
        again whole. Only a finished reply is returned to be recorded; when the attempts
        run out, what had arrived is kept, marked incomplete, and never acted on."""
        attempts = int(self._setting("retry_attempts", DEFAULT_ATTEMPTS))
        base = float(self._setting("retry_base_delay", DEFAULT_BASE_DELAY))
        attempt = 0
        recovered = False
        while True:
            attempt += 1
            reply = self._pending = Reply()
            try:
                await self._stream(provider, reply)
                self.events.emit(ev.ReplyFinished(reply.finish))
                return reply
            except ProviderError as exc:
                nothing_arrived = not (reply.text or reply.thinking or reply.calls)
                message = self._redact(str(exc))  # servers and proxies echo keys back
                overflow = getattr(exc, "overflow", False)
                if overflow and nothing_arrived and not recovered:
                    recovered = True  # compact and try again, once
                    if await self._fit(overflow=True, limit=getattr(exc, "limit", None)):
                        attempt -= 1
                        continue
                if exc.retryable and attempt < attempts:
                    if not nothing_arrived:
                        self._pending = None  # a cancel now keeps nothing of it
                        self.events.emit(ev.ReplyWithdrawn(message, attempt))
                    delay = exc.retry_after
                    if delay is None:
                        delay = min(MAX_DELAY, base * 2 ** (attempt - 1))
                        delay += random.uniform(0, delay / 2)
                    delay = min(delay, MAX_DELAY * 2)
                    self.events.emit(ev.Retrying(attempt, delay, message, attempts))
                    log.info("retrying in %.2fs after: %s", delay, message)
                    await asyncio.sleep(delay)
                    continue
                if nothing_arrived:
                    reply.error = f"error: {message}"
                else:  # keep what was shown, marked; never act on it
                    reply.error = f"error: {INCOMPLETE}: {message}"
                    reply.calls = []
                    self.events.emit(ev.ReplyFinished(None, incomplete=True))
                if exc.retryable and attempt >= attempts:
                    reply.error += f" (gave up after {attempt} attempts)"
                return reply
            except Exception as exc:  # a provider plugin's bug must not end the app
                log.warning("provider %s failed", getattr(provider, "name", "?"), exc_info=True)
                reply.error = self._redact(f"error: provider failed: {type(exc).__name__}: {exc}")
                reply.calls = []
                if reply.text or reply.thinking:
                    self.events.emit(ev.ReplyFinished(None, incomplete=True))
                return reply

    def _redact(self, text: str) -> str:
        """``text`` with every secret setting (the API key) replaced by ``***``."""
        for key in SECRET_KEYS:
            value = self.settings().get(key)
            if isinstance(value, str) and len(value) >= 8:
                text = text.replace(value, "***")
        return text

    async def _stream(self, provider: Provider, reply: Reply) -> None:
        tools = self.tools()
        # the provider boundary: plain OpenAI dicts (each message's own, not a copy; a user
        # message's origin left out), so a plugin's provider can send them as JSON as it is
        request = [openai_dict(m) for m in self.transcript.request(self.system_prompt())]
        before = self.tokens
        budget = self.budget
        async with contextlib.aclosing(provider.stream(request, tools)) as stream:  # type: ignore[type-var]
            async for event in stream:
                if isinstance(event, Text):
                    reply.add(event.text)
                    self.events.emit(ev.TextChunk(event.text))
                elif isinstance(event, Thinking):
                    reply.add(event.text, thinking=True)
                    self.events.emit(ev.ThinkingChunk(event.text))
                elif isinstance(event, ToolCall):
                    reply.calls.append(event)
                elif isinstance(event, Usage):  # the last one of a reply counts, not a sum
                    self.tokens = ev.UsageUpdate(
                        before.prompt_tokens + event.prompt_tokens,
                        before.completion_tokens + event.completion_tokens,
                        before.total_tokens + event.total_tokens,
                        before.cached_tokens + event.cached_tokens,
                    )
                    self.events.emit(self.tokens)
                    if budget is not None:
                        budget.observed(event.prompt_tokens, len(request) - 1)
                elif isinstance(event, Finish):
                    reply.finish = event.reason
