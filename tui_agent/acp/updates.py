"""The session's events as ACP ``session/update`` notifications: one handler per event
type, as the app's ``event_handlers.py`` and ``tui-agent run``'s printer have.

Events may come from any thread (notes do); ``Outbox`` keeps them in order and sends
them from the event loop, one at a time, so a reply's chunks arrive as they streamed.
``drain()`` waits until everything put so far was sent: a prompt's answer goes after
its last update."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from acp import schema

from ..core.protocol import events as ev
from ..core.protocol.output import Note
from .tool_calls import Calls

log = logging.getLogger("tui_agent.acp")
Send = Callable[[str, Any], Awaitable[None]]

WITHDRAWN = "\n\n↺ cut off before the model finished: taken back, the reply comes again\n\n"


def text(update: str) -> schema.TextContentBlock:
    return schema.TextContentBlock(type="text", text=update)


def message(words: str) -> schema.AgentMessageChunk:
    return schema.AgentMessageChunk(session_update="agent_message_chunk", content=text(words))


def thought(words: str) -> schema.AgentThoughtChunk:
    return schema.AgentThoughtChunk(session_update="agent_thought_chunk", content=text(words))


def user(words: str) -> schema.UserMessageChunk:
    return schema.UserMessageChunk(session_update="user_message_chunk", content=text(words))


def mode(current: str) -> schema.CurrentModeUpdate:
    return schema.CurrentModeUpdate(session_update="current_mode_update", current_mode_id=current)


PRIORITY = {"high": "high", "medium": "medium", "low": "low"}
STATUS = {"pending": "pending", "in_progress": "in_progress", "completed": "completed"}


def plan(todos: tuple[Any, ...]) -> schema.AgentPlanUpdate:
    """The todo list as the plan (a cancelled item is left out: the plan has no such
    status; an empty list empties the plan)."""
    entries = [
        schema.PlanEntry(
            content=item.content,
            priority=PRIORITY.get(item.priority or "", "medium"),  # type: ignore[arg-type]
            status=STATUS[item.status],  # type: ignore[arg-type]
        )
        for item in todos
        if item.status in STATUS
    ]
    return schema.AgentPlanUpdate(session_update="plan", entries=entries)


class Outbox:
    """Updates of one session, sent in order from the event loop."""

    def __init__(self, send: Send, session_id: str) -> None:
        self._send = send  # (session id, update)
        self.session_id = session_id
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._pump: asyncio.Task[None] | None = None
        self.gone = False  # the client is gone: nothing more is sent

    def start(self) -> None:
        """Send what is queued and what comes: once the client knows the session."""
        if self._pump is None:
            self._pump = asyncio.ensure_future(self._run())

    def put(self, update: Any) -> None:
        if threading.get_ident() == self._thread:
            self._queue.put_nowait(update)
        else:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, update)

    async def _run(self) -> None:
        while True:
            update = await self._queue.get()
            try:
                if not self.gone:
                    await self._send(self.session_id, update)
            except (ConnectionError, OSError, RuntimeError):
                self.gone = True
            except Exception:
                log.warning("could not send an update", exc_info=True)
            finally:
                self._queue.task_done()

    async def drain(self) -> None:
        """Wait until what was put so far is sent (nothing, before ``start``)."""
        await asyncio.sleep(0)  # what another thread handed over just now
        if self._pump is not None:
            await self._queue.join()

    def close(self) -> None:
        if self._pump is not None:
            self._pump.cancel()


class Updates:
    """Event type -> update(s) for one session's client."""

    def __init__(self, outbox: Outbox, directory: Path) -> None:
        self.outbox = outbox
        self.calls = Calls(directory)
        self.finish_reason: str | None = None  # the last reply's ("length": max_tokens)
        self._handlers: dict[type, Callable[[Any], None]] = {
            ev.TextChunk: lambda e: self.put(message(e.text)),
            ev.ThinkingChunk: lambda e: self.put(thought(e.text)),
            ev.ToolCallStarted: lambda e: self.put(self.calls.started(e)),
            ev.ToolCallFinished: lambda e: self.put(self.calls.finished(e)),
            ev.ReplyWithdrawn: lambda e: self.put(message(WITHDRAWN)),
            ev.ReplyFinished: self._reply_finished,
            ev.Retrying: lambda e: self.put(thought(e.line() + "\n")),
            ev.TodoChanged: lambda e: self.put(plan(e.todos)),
            ev.ModeChanged: self._mode,
            ev.SubagentStarted: self._subagent_started,
            ev.SubagentFinished: self._subagent_finished,
            ev.ShellOutput: lambda e: self.put(message(e.text)),
            Note: self._note,
        }

    def put(self, update: Any) -> None:
        self.outbox.put(update)

    def event(self, event: Any) -> None:
        handler = self._handlers.get(type(event))
        if handler is None:
            return
        try:
            handler(event)
        except Exception:  # never let a frontend's mapping break the turn
            log.warning("could not map %s to an ACP update", type(event).__name__, exc_info=True)

    def _reply_finished(self, event: ev.ReplyFinished) -> None:
        self.finish_reason = event.finish_reason

    def _mode(self, event: ev.ModeChanged) -> None:
        self.put(mode(event.mode))

    def _subagent_started(self, event: ev.SubagentStarted) -> None:
        what = f": {event.description}" if event.description else ""
        self.put(thought(f"[{event.agent}] started{what}\n"))

    def _subagent_finished(self, event: ev.SubagentFinished) -> None:
        how = "cancelled" if event.cancelled else ("✖ " + event.error if event.error else "done")
        self.put(thought(f"[{event.agent}] {how}\n"))

    def _note(self, note: Note) -> None:
        words = note.text.rstrip("\n")
        if note.kind == "error" and not words.startswith("error"):
            words = f"error: {words}"
        self.put(message(f"\n\n{words}\n\n"))
