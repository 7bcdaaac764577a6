"""The toolbox: tools the model can call, guarded by before/after hooks (elelem's model).

This module owns the ``Toolbox`` (tools, aliases, hooks, ``run``) and the adaptation of a
hook to the form it is called in (``_hook_runner``). Beside it, re-exported here:
``tool`` (``Tool``, ``ToolboxEvent``, ``CallStats``, the callable types) and ``calls``
(``current_call``, ``held_loop``, ``ToolRun``, ``finish``).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import logging
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, overload

from ..protocol.context import ToolContext
from ..protocol.result import Result
from ..util.listeners import Listeners
from ..util.signatures import leading_arguments, parameters
from .calls import (
    _AWAITING,
    _CURRENT,
    CallInfo,
    ToolRun,
    _awaiting,
    _in_thread,
    _must_finish,
    current_call,
    finish,
    held_loop,
)
from .tool import CallStats, Handler, Hook, Listener, Tool, ToolboxEvent
from .validation import compile_validator, object_schema

# the names this module had before its split (issue 28), still imported from here
__all__ = [
    "CANCELLED",
    "GLOBAL",
    "CallInfo",
    "CallStats",
    "Handler",
    "Hook",
    "Listener",
    "Tool",
    "ToolRun",
    "Toolbox",
    "ToolboxEvent",
    "current_call",
    "finish",
    "held_loop",
]

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
        parent = context.parent_call if context is not None else ""
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
                    parent=parent,
                )
            )
        if real is None:
            available = ", ".join(sorted(n for n in self.tools if not self._hidden(n)))
            result = Result({"error": f'unknown tool: "{name}". Available: {available}'})
            self._finished(name, name, call_args, result, 0.0, call_id, parent)
            return result
        tool = self.tools[real]
        assert tool._validator is not None
        problem = tool._validator.error(call_args)
        if problem is not None:
            result = Result({"error": problem})
            self._record(tool.name, name, call_args, result, 0.0, call_id, parent)
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
            self._finished(tool.name, name, call_args, cancelled, elapsed, call_id, parent)
            raise
        except BaseException as exc:  # sys.exit, KeyboardInterrupt… raised by the tool itself
            result = self._failure(exc, name, call_args)
        finally:
            _CURRENT.reset(token)
        elapsed = time.perf_counter() - started
        self._record(tool.name, name, call_args, result, elapsed, call_id, parent)
        return result

    def reject(
        self, name: str, error: str, *, call_id: str = "", arguments: str = "", parent: str = ""
    ) -> Result:
        """A call that cannot be made (its arguments are not JSON, or were cut off): it is
        announced like any call and answered with ``error``; nothing runs, no hook is called.
        ``arguments``: the raw text, shown as it came; ``parent``: as ``ToolboxEvent``'s."""
        result = Result({"error": error})
        if self._listeners:
            call_id = call_id or self._new_call_id()
            real = self.resolve(name) or name
            started = ToolboxEvent(
                "call_started", real, name, call_id=call_id, arguments=arguments, parent=parent
            )
            self._emit(started)
            self._finished(real, name, None, result, 0.0, call_id, parent)
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
        self,
        real: str,
        called_as: str,
        args: Any,
        result: Result,
        elapsed: float,
        call_id: str,
        parent: str = "",
    ) -> None:
        stats = self.stats.get(real)
        if stats is None:
            stats = self.stats[real] = CallStats()
        stats.calls += 1
        stats.last_result = result
        self._finished(real, called_as, args, result, elapsed, call_id, parent)

    def _finished(
        self,
        real: str,
        called_as: str,
        args: Any,
        result: Result,
        elapsed: float,
        call_id: str,
        parent: str = "",
    ) -> None:
        if self._listeners:
            self._emit(
                ToolboxEvent(
                    "call_finished",
                    real,
                    called_as,
                    _mapping(args),
                    result,
                    elapsed,
                    call_id,
                    parent=parent,
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
