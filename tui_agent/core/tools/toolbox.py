"""The toolbox: tools the model can call, guarded by before/after hooks (elelem's model)."""

from __future__ import annotations

import asyncio
import collections.abc
import contextvars
import functools
import inspect
import json
import logging
import sys
import threading
import time
from collections.abc import Callable, Coroutine, Generator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any, Literal, cast, overload

from ..protocol.context import ToolContext
from ..protocol.result import Result
from ..util.listeners import Listeners
from ..util.signatures import leading_arguments, parameters
from .validation import ArgsValidator, compile_validator, object_schema

log = logging.getLogger("tui_agent.toolbox")
CANCELLED = "cancelled by the user"


def _mapping(args: Any) -> Mapping[str, Any] | None:
    return args if isinstance(args, Mapping) else None


def _as_text(args: Any) -> str:
    """Arguments that are not an object, as text for whoever shows the call."""
    try:
        return json.dumps(args, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        return repr(args)


Handler = Callable[..., Any]
Hook = Callable[..., Any]
Listener = Callable[["ToolboxEvent"], None]
GLOBAL = "*"


def _accepts_context(handler: Handler) -> bool:
    """True when the handler takes a second positional argument (``handler(args, context)``)."""
    return leading_arguments(handler, 2) == 2


def _is_async(fn: Callable[..., Any]) -> bool:
    if inspect.iscoroutinefunction(fn):
        return True
    call = getattr(fn, "__call__", None)  # noqa: B004 - callable objects with async __call__
    return call is not None and inspect.iscoroutinefunction(call)


_HOOK_FORMS = {
    ("before", True): "hook(args, tool_name=...)",
    ("before", False): "hook(args)",
    ("after", True): "hook(args, result, tool_name=...)",
    ("after", False): "hook(args, result)",
}


def _hook_runner(fn: Hook, when: str, key: str) -> Hook:
    """``fn`` callable the way ``run`` calls hooks (the SPEC form), decided once.

    Like a Ruby block, a hook may take fewer arguments than it is offered: it gets the
    leading ones of ``(args[, result])``. A global hook also gets the tool's name: by
    keyword when a parameter is called ``tool_name`` (or it has ``**kwargs``), else as the
    next positional argument if it has room for one (``def guard(args, name)``, ``*args``).
    A hook for one tool gets the name only if it names a ``tool_name`` parameter. ``fn``
    itself is returned when it already takes the SPEC form, so most hooks cost nothing
    extra per call. Raises ``TypeError`` when ``fn`` cannot take what it would be given.
    """
    is_global = key == GLOBAL
    offered = 1 if when == "before" else 2
    found = parameters(fn)
    if found is None:  # a builtin without a readable signature: trust the SPEC form
        return fn
    mode: str | None = None
    if found.names("tool_name") or (is_global and found.var_keyword):
        mode = "keyword"
        if "tool_name" in found.positional:  # fill positions up to it, never past
            count = min(offered, found.positional.index("tool_name"))
        else:
            count = found.leading(offered)
    elif is_global and found.leading(offered + 1) > offered:
        mode, count = "positional", offered
    else:
        count = found.leading(offered)
    given = ("args", "result")[:count] + (("tool_name",) if mode == "positional" else ())
    try:
        found.signature.bind(*given, **({"tool_name": key} if mode == "keyword" else {}))
    except TypeError as exc:
        target = "every tool" if is_global else f'tool "{key}"'
        name_hint = "by keyword or right after them" if is_global else "by keyword if it needs it"
        raise TypeError(
            f"{when} hook {_label(fn)} for {target} cannot be called ({exc}). It is called as "
            f"{_HOOK_FORMS[when, is_global]}: take those arguments or only the leading ones, "
            f"and tool_name {name_hint}"
        ) from None
    if count == offered and mode == ("keyword" if is_global else None):
        return fn
    if mode == "keyword":

        def runner(*given: Any, tool_name: str = key) -> Any:
            return fn(*given[:count], tool_name=tool_name)

    elif mode == "positional":

        def runner(*given: Any, tool_name: str = key) -> Any:
            return fn(*given[:count], tool_name)

    else:

        def runner(*given: Any, tool_name: str = key) -> Any:
            return fn(*given[:count])

    return runner


def _unchecked_runner(fn: Hook, when: str, key: str) -> Hook:
    """The runner of a hook put in ``toolbox.hooks`` by hand, never checked: one that cannot
    be called fails when its turn comes, with the registration error as the call's error."""
    try:
        return _hook_runner(fn, when, key)
    except TypeError as exc:
        message = str(exc)

        def failing(*given: Any, **named: Any) -> Any:
            raise TypeError(message)

        return failing


def _label(fn: Callable[..., Any]) -> str:
    """``guard (wc.py:12)``: a hook as its author would recognise it in an error."""
    if isinstance(fn, functools.partial):
        return f"functools.partial({_label(fn.func)})"
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    if not isinstance(name, str):
        return f"{type(fn).__name__} object"
    code = getattr(getattr(fn, "__func__", fn), "__code__", None)
    if code is None:
        return name
    return f"{name} ({Path(code.co_filename).name}:{code.co_firstlineno})"


@dataclass(eq=False)
class Tool:
    """One registered tool. ``schema`` is the object schema its arguments are checked against."""

    name: str
    description: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    required: list[str] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)
    handler: Handler | None = None
    source: str = "api"
    schema: dict[str, Any] = field(default_factory=dict)
    read_only: bool = False  # changes nothing: offered in plan mode
    _validator: ArgsValidator | None = field(default=None, repr=False)
    _with_context: bool = field(default=False, repr=False)
    _async: bool = field(default=False, repr=False)

    def problem(self, args: Any) -> str | None:
        """Why ``args`` do not fit the schema (as a call would be told), or None: for
        hooks that change a call's arguments (a ``PreToolUse`` hook's ``updatedInput``)."""
        validator = self._validator or compile_validator(self.name, self.schema)
        return validator.error(args)

    def definition(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": {
                    "type": "object",
                    "properties": self.params,
                    "required": list(self.required),
                },
            },
        }


@dataclass(frozen=True)
class ToolboxEvent:
    """What changed in a toolbox; the UI listens instead of polling.

    kind: ``tools`` (added/replaced/removed/cleared), ``hooks``, ``call_started``,
    ``call_finished``. Every call is announced here, whoever made it (the model, a slash
    command, another tool), unknown names and invalid arguments included: the toolbox is
    the one source of call events. ``call_id`` is the context's, or one the toolbox made;
    ``arguments`` is the raw text of arguments that could not be parsed (``reject``).
    """

    kind: Literal["tools", "hooks", "call_started", "call_finished"]
    name: str = ""
    called_as: str = ""
    args: Mapping[str, Any] | None = None
    result: Result | None = None
    elapsed: float = 0.0
    call_id: str = ""
    arguments: str = ""


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


@dataclass
class CallStats:
    calls: int = 0
    last_result: Result | None = None


class Toolbox:
    """Tools, aliases and hooks. Usable on its own: ``tui_agent.Toolbox()``."""

    def __init__(
        self,
        *,
        context_factory: Callable[[], ToolContext] | None = None,
        hidden: Callable[[str], bool] | None = None,
    ) -> None:
        """``hidden(name)`` says a tool is never offered (a session's tools denied for
        every call): an unknown name's "Available:" list leaves it out, so the model is
        not told of tools it cannot use. A toolbox on its own lists every tool."""
        self.tools: dict[str, Tool] = {}
        self.aliases: dict[str, str] = {}
        self.hooks: dict[str, dict[str, list[Hook]]] = {"before": {}, "after": {}}
        self._plans: dict[str, dict[str, tuple[list[Hook], tuple[Hook, ...]]]] = {
            "before": {},
            "after": {},
        }
        self.stats: dict[str, CallStats] = {}
        self.context_factory = context_factory
        self.hidden = hidden
        self.source = "api"
        self._listeners: Listeners[ToolboxEvent] = Listeners("toolbox")
        self._call_count = 0

    # -- registration -------------------------------------------------------------------

    @overload
    def add(
        self,
        name: str,
        *,
        description: str = ...,
        params: Mapping[str, Any] | None = ...,
        required: list[str] | tuple[str, ...] = ...,
        aliases: list[str] | tuple[str, ...] | None = ...,
        read_only: bool = ...,
        handler: None = ...,
    ) -> Callable[[Handler], Handler]: ...

    @overload
    def add(
        self,
        name: str,
        *,
        description: str = ...,
        params: Mapping[str, Any] | None = ...,
        required: list[str] | tuple[str, ...] = ...,
        aliases: list[str] | tuple[str, ...] | None = ...,
        read_only: bool = ...,
        handler: Handler,
    ) -> Tool: ...

    def add(
        self,
        name: str,
        *,
        description: str = "",
        params: Mapping[str, Any] | None = None,
        required: list[str] | tuple[str, ...] = (),
        aliases: list[str] | tuple[str, ...] | None = None,
        handler: Handler | None = None,
        read_only: bool = False,
    ) -> Tool | Callable[[Handler], Handler]:
        """Register a tool; without ``handler``, return a decorator. Same name replaces.

        ``aliases=None`` (the default) keeps the aliases of the tool it replaces, so a
        custom ``execute`` still answers to ``bash``; a list, even an empty one, sets them.
        ``read_only=True``: the tool changes nothing (no file, no process, no remote
        state), so plan mode offers it.
        """
        if handler is None:

            def decorator(fn: Handler) -> Handler:
                self.add(
                    name,
                    description=description,
                    params=params,
                    required=required,
                    aliases=aliases,
                    handler=fn,
                    read_only=read_only,
                )
                return fn

            return decorator
        if not isinstance(name, str) or not name:
            raise ValueError(f"tool name must be a non-empty string, not {name!r}")
        if not callable(handler):
            raise ValueError(f"tool {name!r}: handler is not callable")
        if params is not None and not isinstance(params, Mapping):
            raise ValueError(f"tool {name!r}: params must be a dict, not {type(params).__name__}")
        props = dict(params or {})
        if not isinstance(required, list | tuple):
            kind = type(required).__name__
            raise ValueError(f"tool {name!r}: required must be a list of names, not {kind}")
        old = self.tools.get(name)
        if aliases is None:  # keep those of the tool it replaces that still lead to it
            kept = old.aliases if old is not None else []
            aliases = [alias for alias in kept if self.aliases.get(alias) == name]
        elif isinstance(aliases, str) or not all(isinstance(a, str) for a in aliases):
            raise ValueError(f"tool {name!r}: aliases must be a list of names, not {aliases!r}")
        schema = object_schema(props, required)
        validator = compile_validator(name, schema)
        tool = Tool(
            name=name,
            description=description,
            params=props,
            required=list(required),
            aliases=list(aliases),
            handler=handler,
            source=self.source,
            schema=schema,
            _validator=validator,
            _with_context=_accepts_context(handler),
            _async=_is_async(handler),
            read_only=bool(read_only),
        )
        self.tools.pop(name, None)
        if old is not None:
            for alias in old.aliases:
                if self.aliases.get(alias) == name:
                    del self.aliases[alias]
        self.tools[name] = tool
        for alias in tool.aliases:
            self.aliases[alias] = name
        self._emit(ToolboxEvent("tools", name=name))
        return tool

    def remove(self, name: str) -> bool:
        tool = self.tools.pop(name, None)
        if tool is None:
            return False
        for alias in tool.aliases:
            if self.aliases.get(alias) == name:
                del self.aliases[alias]
        self._emit(ToolboxEvent("tools", name=name))
        return True

    def _add_hook(self, when: str, name: str | None, fn: Hook | None) -> Any:
        key = GLOBAL if name is None else name

        def register(hook: Hook) -> Hook:
            if not callable(hook):
                raise ValueError(f"{when} hook for {key!r} is not callable")
            runner = _hook_runner(hook, when, key)  # raises for a hook that cannot be called
            hooks = self.hooks[when].setdefault(key, [])
            hooks.append(hook)
            self._runners(when, key, hooks, (hook, runner))
            self._emit(ToolboxEvent("hooks", name=key))
            return hook

        if fn is not None:
            return register(fn)
        return register

    def _runners(
        self, when: str, key: str, hooks: list[Hook], new: tuple[Hook, Hook] | None = None
    ) -> tuple[Hook, ...]:
        """The runners for ``hooks`` (a list of the public table ``self.hooks``), remembered
        with a copy of that list. Each hook's runner is made once: at registration, or, for a
        hook put in the table directly, at the first call that finds the list changed."""
        source = list(hooks)
        known: dict[int, Hook] = {}
        plan = self._plans[when].get(key)
        if plan is not None:  # ids are safe: plan[0] keeps those hooks alive
            known = {id(hook): runner for hook, runner in zip(plan[0], plan[1], strict=True)}
        if new is not None:
            known[id(new[0])] = new[1]
        runners = tuple(
            known[id(hook)] if id(hook) in known else _unchecked_runner(hook, when, key)
            for hook in source
        )
        self._plans[when][key] = (source, runners)
        return runners

    def before(self, name: str | Hook | None = None, fn: Hook | None = None) -> Any:
        """``@before("tool")``, ``@before()``, bare ``@before``, or ``before("tool", fn)``."""
        if callable(name) and fn is None:
            return self._add_hook("before", None, name)
        return self._add_hook("before", name if isinstance(name, str) else None, fn)

    def after(self, name: str | Hook | None = None, fn: Hook | None = None) -> Any:
        """``@after("tool")``, ``@after()``, bare ``@after``, or ``after("tool", fn)``."""
        if callable(name) and fn is None:
            return self._add_hook("after", None, name)
        return self._add_hook("after", name if isinstance(name, str) else None, fn)

    def clear(self) -> None:
        """Forget every tool, alias and hook (``reload`` rebuilds from disk)."""
        self.tools.clear()
        self.aliases.clear()
        self.hooks = {"before": {}, "after": {}}
        self._plans = {"before": {}, "after": {}}
        self._emit(ToolboxEvent("tools"))
        self._emit(ToolboxEvent("hooks"))

    def snapshot(self) -> tuple[Any, ...]:
        """Copy of the registry, so a failing setup can be rolled back."""
        return (
            dict(self.tools),
            dict(self.aliases),
            {when: {k: list(v) for k, v in table.items()} for when, table in self.hooks.items()},
        )

    def restore(self, snap: tuple[Any, ...]) -> None:
        tools, aliases, hooks = snap
        self.tools, self.aliases, self.hooks = dict(tools), dict(aliases), hooks
        self._emit(ToolboxEvent("tools"))
        self._emit(ToolboxEvent("hooks"))

    # -- inspection -----------------------------------------------------------------------

    def definitions(self, exclude: Callable[[str], bool] | None = None) -> list[dict[str, Any]]:
        """OpenAI function definitions, one per tool (aliases are never sent)."""
        return [
            tool.definition()
            for name, tool in self.tools.items()
            if exclude is None or not exclude(name)
        ]

    def resolve(self, name: str) -> str | None:
        if name in self.tools:
            return name
        return self.aliases.get(name)

    def tool_for(self, name: str) -> Tool:
        """The tool, following aliases; an unknown name gives a stand-in named ``name + "?"``."""
        real = self.resolve(name)
        if real is not None:
            return self.tools[real]
        return Tool(name=f"{name}?", description="unknown tool", source="unknown")

    def hooks_for(self, name: str) -> tuple[int, int]:
        """How many before and after hooks (global ones included) a call to ``name`` runs."""
        before = self.hooks["before"]
        after = self.hooks["after"]
        return (
            len(before.get(GLOBAL, ())) + len(before.get(name, ())),
            len(after.get(GLOBAL, ())) + len(after.get(name, ())),
        )

    # -- listening ------------------------------------------------------------------------

    def listen(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(event)`` on every change and call; returns an unsubscribe function."""
        return self._listeners.add(listener)

    def _emit(self, event: ToolboxEvent) -> None:
        self._listeners.emit(event)

    # -- running --------------------------------------------------------------------------

    def run(
        self, name: str, args: Mapping[str, Any] | None = None, context: ToolContext | None = None
    ) -> ToolRun:
        """Run one call: aliases, validation, hooks, handler. Tool failures never raise.

        From ``async`` code, ``await toolbox.run(...)`` (what it returns is a coroutine,
        so ``asyncio.create_task`` and ``gather`` take it too). From sync code (a sync
        command, hook or handler, any thread), ``toolbox.run(...)`` runs the call to its
        end and returns its ``Result``, as elelem's does (a ``ToolRun``: see there, and
        ``finish`` for where the call runs)."""
        call = self._run(name, args, context)
        caller = sys._getframe(1)
        if caller.f_code.co_flags & _AWAITING or _awaiting(caller):  # the first: fast path
            return call  # type: ignore[return-value]
        return ToolRun(call, now=_must_finish())

    async def _run(
        self, name: str, args: Mapping[str, Any] | None, context: ToolContext | None
    ) -> Result:
        real = self.resolve(name)
        call_args: Any = {} if args is None else (dict(args) if isinstance(args, Mapping) else args)
        call_id = ""
        if self._listeners:  # a session always listens; a toolbox on its own saves the work
            call_id = self._call_id(context)
            self._emit(
                ToolboxEvent(
                    "call_started",
                    real or name,
                    name,
                    _mapping(call_args),
                    call_id=call_id,
                    arguments="" if isinstance(call_args, Mapping) else _as_text(call_args),
                )
            )
        if real is None:
            available = ", ".join(sorted(n for n in self.tools if not self._hidden(n)))
            result = Result({"error": f'unknown tool: "{name}". Available: {available}'})
            self._finished(name, name, call_args, result, 0.0, call_id)
            return result
        tool = self.tools[real]
        assert tool._validator is not None
        problem = tool._validator.error(call_args)
        if problem is not None:
            result = Result({"error": problem})
            self._record(tool.name, name, call_args, result, 0.0, call_id)
            return result
        started = time.perf_counter()
        token = _CURRENT.set(CallInfo(tool.name, name, context, loop=asyncio.get_running_loop()))
        try:
            raw = await self._call(tool, call_args, context)
            result = Result(raw)
        except Exception as exc:  # hooks and handlers: any failure goes back as a result
            result = self._failure(exc, name, call_args)
        except asyncio.CancelledError:
            cancelled = Result({"error": CANCELLED, "name": name})
            elapsed = time.perf_counter() - started
            self._finished(tool.name, name, call_args, cancelled, elapsed, call_id)
            raise
        except BaseException as exc:  # sys.exit, KeyboardInterrupt… raised by the tool itself
            result = self._failure(exc, name, call_args)
        finally:
            _CURRENT.reset(token)
        self._record(tool.name, name, call_args, result, time.perf_counter() - started, call_id)
        return result

    def reject(self, name: str, error: str, *, call_id: str = "", arguments: str = "") -> Result:
        """A call that cannot be made (its arguments are not JSON, or were cut off): it is
        announced like any call and answered with ``error``; nothing runs, no hook is called.
        ``arguments``: the raw text, shown as it came."""
        result = Result({"error": error})
        if self._listeners:
            call_id = call_id or self._new_call_id()
            real = self.resolve(name) or name
            self._emit(
                ToolboxEvent("call_started", real, name, call_id=call_id, arguments=arguments)
            )
            self._finished(real, name, None, result, 0.0, call_id)
        return result

    def _new_call_id(self) -> str:
        self._call_count += 1
        return f"toolbox-call-{self._call_count}"

    def _call_id(self, context: ToolContext | None) -> str:
        """The context's call id, unless a tool passed its own context on to a call it
        makes (the inner call gets an id of its own), or one the toolbox makes."""
        given = context.call_id if context is not None else ""
        outer = _CURRENT.get()
        if not given or (outer is not None and outer.context and outer.context.call_id == given):
            return self._new_call_id()
        return given

    def _hidden(self, name: str) -> bool:
        """``hidden(name)``; a filter that fails hides nothing (``run`` never raises)."""
        if self.hidden is None:
            return False
        try:
            return bool(self.hidden(name))
        except Exception:
            log.warning("tool filter failed for %s", name, exc_info=True)
            return False

    def _failure(self, exc: BaseException, name: str, args: Any) -> Result:
        message = str(exc) or type(exc).__name__
        log.warning("tool %s failed: %s", name, message, exc_info=exc)
        return Result({"error": message, "name": name, "args": args})

    def _record(
        self, real: str, called_as: str, args: Any, result: Result, elapsed: float, call_id: str
    ) -> None:
        stats = self.stats.get(real)
        if stats is None:
            stats = self.stats[real] = CallStats()
        stats.calls += 1
        stats.last_result = result
        self._finished(real, called_as, args, result, elapsed, call_id)

    def _finished(
        self, real: str, called_as: str, args: Any, result: Result, elapsed: float, call_id: str
    ) -> None:
        if self._listeners:
            self._emit(
                ToolboxEvent(
                    "call_finished", real, called_as, _mapping(args), result, elapsed, call_id
                )
            )

    async def _call(
        self, tool: Tool, args: dict[str, Any], context: ToolContext | None
    ) -> dict[str, Any]:
        # Each list is read as its turn comes, so a hook added by an earlier step of this
        # call (a before hook, the handler) already runs in its later steps. A list's runners
        # (see _hook_runner) are reused while the list is unchanged: no signature is read here.
        # ``value is not None`` spares inspect.isawaitable for the usual hook returning None.
        # The four loops are written out on purpose: one helper coroutine (or generator)
        # for them cost 3-4 us a call and put sync_overhead_ratio at 1.22-1.50 in bench
        # dispatch (goal 1.3); written out, 1.07-1.28 (six runs).
        before, after = self.hooks["before"], self.hooks["after"]
        plans_before, plans_after = self._plans["before"], self._plans["after"]
        name = tool.name
        hooks = before.get(GLOBAL)
        if hooks:
            plan = plans_before.get(GLOBAL)
            runners = (
                plan[1] if plan and plan[0] == hooks else self._runners("before", GLOBAL, hooks)
            )
            for hook in runners:
                value = hook(args, tool_name=name)
                if value is not None and inspect.isawaitable(value):
                    await value
        hooks = before.get(name)
        if hooks:
            plan = plans_before.get(name)
            runners = plan[1] if plan and plan[0] == hooks else self._runners("before", name, hooks)
            for hook in runners:
                value = hook(args)
                if value is not None and inspect.isawaitable(value):
                    await value
        handler = tool.handler
        assert handler is not None
        call: tuple[Any, ...] = (args,)
        if tool._with_context:
            if context is None:
                context = self.context_factory() if self.context_factory else ToolContext()
            call = (args, context)
        if tool._async:
            value = await handler(*call)
        else:
            value = await _in_thread(handler, *call)
            if type(value) is not dict and inspect.isawaitable(value):
                value = await value
        raw: dict[str, Any]
        if isinstance(value, dict):
            raw = value
        elif isinstance(value, Mapping):
            raw = dict(value)
        else:
            raw = {"output": value}
        hooks = after.get(GLOBAL)
        if hooks:
            plan = plans_after.get(GLOBAL)
            runners = (
                plan[1] if plan and plan[0] == hooks else self._runners("after", GLOBAL, hooks)
            )
            for hook in runners:
                value = hook(args, raw, tool_name=name)
                if value is not None and inspect.isawaitable(value):
                    await value
        hooks = after.get(name)
        if hooks:
            plan = plans_after.get(name)
            runners = plan[1] if plan and plan[0] == hooks else self._runners("after", name, hooks)
            for hook in runners:
                value = hook(args, raw)
                if value is not None and inspect.isawaitable(value):
                    await value
        return raw


def _in_thread(handler: Handler, *args: Any) -> asyncio.Future[Any]:
    """``asyncio.to_thread(handler, *args)`` without its wrapper coroutine and partial: the
    handler runs in the default executor inside a copy of the current context."""
    return asyncio.get_running_loop().run_in_executor(
        None, contextvars.copy_context().run, handler, *args
    )
