"""The call in progress and how sync code gets a call done: ``current_call`` (the
``CallInfo`` hooks and handlers see), ``held_loop``, ``ToolRun`` (what ``toolbox.run``
gives sync code: a ``Result`` and a coroutine), ``finish`` (a call run to its end from
any thread without a deadlock) and ``_in_thread`` (a sync handler in a worker thread).
"""

from __future__ import annotations

import asyncio
import collections.abc
import contextvars
import inspect
import threading
from collections.abc import Coroutine, Generator
from dataclasses import dataclass, field
from types import FrameType
from typing import Any, cast

from ..protocol.context import ToolContext
from ..protocol.result import Result
from .tool import Handler


@dataclass(frozen=True)
class CallInfo:
    """The call in progress, for hooks that need more than ``tool_name`` (the alias used).

    ``approvals``: who allowed this call in an earlier before hook (a ``PreToolUse``
    command hook's "allow", or the user it asked), so the permission hook does not ask
    again; its deny rules and plan mode still hold."""

    name: str
    called_as: str
    context: ToolContext | None
    approvals: list[str] = field(default_factory=list, compare=False)
    loop: asyncio.AbstractEventLoop | None = field(default=None, compare=False, repr=False)


_CURRENT: contextvars.ContextVar[CallInfo | None] = contextvars.ContextVar(
    "tui_agent_call", default=None
)
_HELD: contextvars.ContextVar[asyncio.AbstractEventLoop | None] = contextvars.ContextVar(
    "tui_agent_held_loop", default=None
)


def current_call() -> CallInfo | None:
    """Inside a hook or handler: which tool is running, under which name it was called."""
    return _CURRENT.get()


def held_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop a synchronous caller holds while the call it made runs elsewhere
    (``toolbox.run`` called from sync code on that loop's own thread: a sync command or
    hook), else None. Nothing that needs that loop can happen meanwhile: a dialog it
    would show cannot open (``Session.ask`` refuses, saying why, rather than wait)."""
    return _HELD.get()


# code flags of functions whose calls are awaited: ``async def`` and async generators
_AWAITING = inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR | inspect.CO_ITERABLE_COROUTINE
# frames of their own inside the function that contains them (3.11)
_INLINE = frozenset({"<genexpr>", "<listcomp>", "<dictcomp>", "<setcomp>"})


def _awaiting(frame: FrameType | None) -> bool:
    """Whether the code that called ``run`` is ``async`` (so it awaits what it gets): the
    caller's frame, or the one a comprehension or generator expression sits in
    (``await asyncio.gather(*(toolbox.run(n) for n in names))``)."""
    while frame is not None and frame.f_code.co_name in _INLINE:
        frame = frame.f_back
    return frame is not None and bool(frame.f_code.co_flags & _AWAITING)


class ToolRun(Result):
    """What ``toolbox.run`` gives sync code: the call's ``Result``, and a coroutine too,
    so code written for the async form (``asyncio.run(toolbox.run(...))``,
    ``loop.run_until_complete``, ``await``) works as before.

    Where the call must finish before ``run`` returns (a sync caller on an event loop's
    thread, or in a sync handler's worker thread: see ``finish``), it is done already.
    Elsewhere (a thread with no event loop: a script) it runs on first use: as a
    ``Result`` (``.ok``, ``["output"]``, ``to_dict()``…) on a loop of its own, or driven
    by the loop it is given to, as the coroutine would be."""

    __slots__ = ("_call", "_value")

    def __init__(self, call: Coroutine[Any, Any, Result], *, now: bool) -> None:
        self._call = call
        self._value: dict[str, Any] | None = None
        if now:
            self._value = finish(call)._data

    @property
    def _data(self) -> dict[str, Any]:  # type: ignore[override]  # Result's slot, on first use
        if self._value is None:
            self._value = _on_own_loop(self._call)._data
        return self._value

    def _done(self, result: Result) -> Result:
        self._value = result._data
        return self

    def __await__(self) -> Generator[Any, None, Result]:
        if self._value is None:
            self._done((yield from self._call.__await__()))
        return self

    # the coroutine protocol, for asyncio.run, create_task and the like
    def send(self, value: Any) -> Any:
        if self._value is not None:
            raise StopIteration(self)
        try:
            return self._call.send(value)
        except StopIteration as stop:
            raise StopIteration(self._done(stop.value)) from None

    def throw(self, *exc: Any) -> Any:
        if self._value is not None:
            raise exc[1] if len(exc) > 1 and exc[1] is not None else exc[0]
        try:
            return self._call.throw(*exc)
        except StopIteration as stop:
            raise StopIteration(self._done(stop.value)) from None

    def close(self) -> None:
        self._call.close()

    def __repr__(self) -> str:
        if self._value is None:
            return "ToolRun(<not run yet>)"
        return f"Result({self._value!r})"


collections.abc.Coroutine.register(ToolRun)


def finish(call: Coroutine[Any, Any, Result]) -> Result:
    """Run ``call`` to its end for a caller that cannot await (sync code), without a
    deadlock whichever thread that is:

    - the thread of a running event loop (a sync command or hook): that loop waits for
      the call, which runs on a loop of its own in a worker thread (``held_loop()`` says
      so inside it);
    - a worker thread a call's sync handler runs in (its context knows the loop that
      started it, which is free): on that loop, as if awaited there;
    - any other thread: on a loop of its own in this thread.
    """
    running = _running_loop()
    if running is None:
        info = _CURRENT.get()
        home = info.loop if info is not None else None
        if home is not None and home.is_running() and not home.is_closed():
            return asyncio.run_coroutine_threadsafe(call, home).result()
        return _on_own_loop(call)
    outcome: list[tuple[bool, Any]] = []
    context = contextvars.copy_context()

    def work() -> None:
        _HELD.set(running)
        try:
            outcome.append((True, _on_own_loop(call)))
        except BaseException as exc:  # the caller gets it, as an await would give it
            outcome.append((False, exc))

    thread = threading.Thread(
        target=context.run, args=(work,), name="tui-agent toolbox.run", daemon=True
    )
    thread.start()
    thread.join()
    ok, value = outcome[0]
    if not ok:
        raise value
    return cast(Result, value)


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _must_finish() -> bool:
    """Whether a sync caller here needs the call done before ``run`` returns: on a running
    loop's thread (nothing else will run it) or in a sync handler's worker thread."""
    if _running_loop() is not None:
        return True
    info = _CURRENT.get()
    return info is not None and info.loop is not None and info.loop.is_running()


def _on_own_loop(call: Coroutine[Any, Any, Result]) -> Result:
    """``call`` on a new event loop in this thread (no loop runs here), closed after. The
    thread's current loop (``asyncio.set_event_loop``) is left as it was."""
    with asyncio.Runner(loop_factory=asyncio.new_event_loop) as runner:
        return runner.run(call)


def _in_thread(handler: Handler, *args: Any) -> asyncio.Future[Any]:
    """``asyncio.to_thread(handler, *args)`` without its wrapper coroutine and partial: the
    handler runs in the default executor inside a copy of the current context."""
    return asyncio.get_running_loop().run_in_executor(
        None, contextvars.copy_context().run, handler, *args
    )
