"""Hooks take what their signature asks for, like the seed's Ruby blocks (issue 14).

``toolbox.before { |args| ... }`` is legal Ruby for a global hook: a block ignores the
arguments it has no parameter for. Here ``def guard(args)`` works the same way, the shape is
read once at registration, and a hook that could never be called is refused right there,
not at every tool call.
"""

from __future__ import annotations

import functools
import logging
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import write

from tui_agent import Toolbox, create_session
from tui_agent.core.tools import toolbox as toolbox_module
from tui_agent.core.util.signatures import leading_arguments, parameters

ARGS = {"path": "p"}
RAW = {"lines": 2}
SEEN: list[Any] = []


def make_box() -> Toolbox:
    box = Toolbox()
    box.add(
        "wc",
        description="Count",
        params={"path": {"type": "string"}},
        required=["path"],
        aliases=["count"],
        handler=lambda args: dict(RAW),
    )
    return box


# -- hooks as a plugin author types them -----------------------------------------------------


def only_args(args: Any) -> None:
    SEEN.append((args,))


def nothing() -> None:
    SEEN.append(())


def spec_global_before(args: Any, tool_name: Any) -> None:
    SEEN.append((args, tool_name))


def keyword_only_name(args: Any, *, tool_name: Any) -> None:
    SEEN.append((args, tool_name))


def name_with_default(args: Any, tool_name: Any = "?") -> None:
    SEEN.append((args, tool_name))


def positional_name(args: Any, name: Any) -> None:
    SEEN.append((args, name))


def name_and_optional(args: Any, name: Any, extra: Any = None) -> None:
    SEEN.append((args, name, extra))


def star_args(*args: Any) -> None:
    SEEN.append(args)


def args_and_kwargs(args: Any, **kwargs: Any) -> None:
    SEEN.append((args, kwargs))


def star_both(*args: Any, **kwargs: Any) -> None:
    SEEN.append((args, kwargs))


def only_kwargs(**kwargs: Any) -> None:
    SEEN.append(kwargs)


async def async_only_args(args: Any) -> None:
    SEEN.append((args,))


def args_result(args: Any, result: Any) -> None:
    SEEN.append((args, result))


def args_result_name(args: Any, result: Any, name: Any) -> None:
    SEEN.append((args, result, name))


def spec_global_after(args: Any, result: Any, *, tool_name: Any) -> None:
    SEEN.append((args, result, tool_name))


def args_then_tool_name(args: Any, tool_name: Any) -> None:
    SEEN.append((args, tool_name))


class Guard:
    def check(self, args: Any) -> None:
        SEEN.append(("method", args))

    def __call__(self, args: Any) -> None:
        SEEN.append(("object", args))


class AsyncGuard:
    async def __call__(self, args: Any, tool_name: Any) -> None:
        SEEN.append(("async object", args, tool_name))


class Unreadable:
    """A callable whose signature cannot be read: it is called as the SPEC says."""

    __signature__ = "not a signature"

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        SEEN.append(("unreadable", args, kwargs))


def prefixed(prefix: Any, args: Any) -> None:
    SEEN.append((prefix, args))


# (when, key or None for global, hook, what it records)
SHAPES: list[tuple[str, str | None, Callable[..., Any], Any]] = [
    # global before: offered (args, tool_name=...)
    ("before", None, only_args, (ARGS,)),
    ("before", None, nothing, ()),
    ("before", None, spec_global_before, (ARGS, "wc")),
    ("before", None, keyword_only_name, (ARGS, "wc")),
    ("before", None, name_with_default, (ARGS, "wc")),
    ("before", None, positional_name, (ARGS, "wc")),
    ("before", None, name_and_optional, (ARGS, "wc", None)),
    ("before", None, star_args, (ARGS, "wc")),
    ("before", None, args_and_kwargs, (ARGS, {"tool_name": "wc"})),
    ("before", None, star_both, ((ARGS,), {"tool_name": "wc"})),
    ("before", None, only_kwargs, {"tool_name": "wc"}),
    ("before", None, async_only_args, (ARGS,)),
    ("before", None, lambda args: SEEN.append((args,)), (ARGS,)),
    ("before", None, lambda: SEEN.append(()), ()),
    ("before", None, lambda args, tool_name: SEEN.append((args, tool_name)), (ARGS, "wc")),
    ("before", None, Guard().check, ("method", ARGS)),
    ("before", None, Guard(), ("object", ARGS)),
    ("before", None, AsyncGuard(), ("async object", ARGS, "wc")),
    ("before", None, functools.partial(prefixed, "x"), ("x", ARGS)),
    ("before", None, SEEN.append, ARGS),  # a builtin bound method: (object, /)
    ("before", None, Unreadable(), ("unreadable", (ARGS,), {"tool_name": "wc"})),
    # global after: offered (args, result, tool_name=...)
    ("after", None, only_args, (ARGS,)),
    ("after", None, nothing, ()),
    ("after", None, args_result, (ARGS, RAW)),
    ("after", None, args_result_name, (ARGS, RAW, "wc")),
    ("after", None, spec_global_after, (ARGS, RAW, "wc")),
    ("after", None, args_then_tool_name, (ARGS, "wc")),
    ("after", None, star_args, (ARGS, RAW, "wc")),
    ("after", None, only_kwargs, {"tool_name": "wc"}),
    ("after", None, lambda args, result: SEEN.append((args, result)), (ARGS, RAW)),
    # before one tool: offered (args)
    ("before", "wc", only_args, (ARGS,)),
    ("before", "wc", nothing, ()),
    ("before", "wc", star_args, (ARGS,)),
    ("before", "wc", args_and_kwargs, (ARGS, {})),
    ("before", "wc", args_then_tool_name, (ARGS, "wc")),
    ("before", "wc", keyword_only_name, (ARGS, "wc")),
    ("before", "wc", Guard(), ("object", ARGS)),
    ("before", "wc", lambda: SEEN.append(()), ()),
    # after one tool: offered (args, result)
    ("after", "wc", only_args, (ARGS,)),
    ("after", "wc", nothing, ()),
    ("after", "wc", args_result, (ARGS, RAW)),
    ("after", "wc", async_only_args, (ARGS,)),
    ("after", "wc", star_args, (ARGS, RAW)),
    ("after", "wc", lambda args: SEEN.append((args,)), (ARGS,)),
]


def shape_id(row: tuple[str, str | None, Callable[..., Any], Any]) -> str:
    when, key, hook, _ = row
    name = getattr(hook, "__name__", None) or type(hook).__name__
    return f"{when}-{key or 'global'}-{name}"


@pytest.fixture(autouse=True)
def clear_seen() -> None:
    SEEN.clear()


@pytest.mark.parametrize("row", SHAPES, ids=[shape_id(row) for row in SHAPES])
@pytest.mark.parametrize("form", ["direct", "decorator"])
async def test_a_hook_gets_what_its_signature_takes(
    row: tuple[str, str | None, Callable[..., Any], Any], form: str
) -> None:
    when, key, hook, expected = row
    box = make_box()
    register = getattr(box, when)
    if form == "direct":
        register(key, hook)
    elif key is None:
        register(hook)  # bare @toolbox.before
    else:
        register(key)(hook)  # @toolbox.after("wc")
    result = await box.run("count", dict(ARGS))  # an alias: hooks still see the real name
    assert result.to_dict() == {**RAW, "ok": True}
    assert SEEN == [expected]
    assert box.hooks[when]["*" if key is None else key] == [hook]  # the table holds hook itself


async def test_the_seed_page_hooks_run_from_a_plugin(project: Path) -> None:
    """The seed's forms, typed into a real plugin file and loaded the way the app loads it."""
    write(
        project / ".agents" / "plugins" / "guards.py",
        textwrap.dedent(
            """
            import re
            import tui_agent

            @tui_agent.setup("guards")
            def guards(session):
                LOG = session.extensions.kept("log", list)

                @session.toolbox.before
                def guard(args):
                    if re.search(r"\\brm\\b", args.get("command", "")):
                        raise RuntimeError("refusing to run rm")

                @session.toolbox.after("execute")
                def log(args):
                    LOG.append(args["command"])

                session.toolbox.after(lambda args, result: LOG.append(sorted(result)))
            """
        ),
    )
    session = create_session(project, trust=True)
    assert session.extensions.problems == []
    refused = await session.toolbox.run("bash", {"command": "rm -rf build"})
    assert refused.to_dict()["error"] == "refusing to run rm"
    ran = await session.toolbox.run("bash", {"command": "echo hi"})
    assert ran.ok, ran.to_dict()
    assert session.extensions.kept("log", list) == [["exit_status", "output"], "echo hi"]


# -- refused at registration, with what to do -----------------------------------------------


def three_positional(args: Any, name: Any, extra: Any) -> None:
    return None


def needs_mode(args: Any, *, mode: Any) -> None:
    return None


BAD: list[tuple[str, str | None, Callable[..., Any], list[str]]] = [
    (
        "before",
        None,
        three_positional,
        ["three_positional", "every tool", "hook(args, tool_name=...)", "'extra'"],
    ),
    ("before", None, needs_mode, ["needs_mode", "every tool", "'mode'"]),
    ("before", "execute", args_result, ["args_result", 'tool "execute"', "hook(args)"]),
    ("before", "execute", needs_mode, ["needs_mode", 'tool "execute"', "'mode'"]),
    ("after", "wc", args_result_name, ["args_result_name", 'tool "wc"', "hook(args, result)"]),
    (
        "after",
        None,
        lambda a, r, n, x: None,
        ["<lambda>", "every tool", "hook(args, result, tool_name=...)"],
    ),
    ("after", None, functools.partial(needs_mode, 1), ["functools.partial(needs_mode", "'mode'"]),
]


@pytest.mark.parametrize("row", BAD, ids=[shape_id((*row[:3], None)) for row in BAD])
def test_a_hook_that_cannot_be_called_is_refused_when_registered(
    row: tuple[str, str | None, Callable[..., Any], list[str]],
) -> None:
    when, key, hook, words = row
    box = make_box()
    with pytest.raises(TypeError) as caught:
        getattr(box, when)(key, hook)
    message = str(caught.value)
    for word in words:
        assert word in message
    assert message.startswith(f"{when} hook ") and "test_hook_signatures.py:" in message
    assert box.hooks == {"before": {}, "after": {}}  # nothing half-registered


def test_a_refused_hook_in_a_plugin_is_reported_and_rolled_back(project: Path) -> None:
    write(
        project / ".agents" / "plugins" / "bad.py",
        textwrap.dedent(
            """
            import tui_agent

            @tui_agent.setup("bad")
            def bad(session):
                session.toolbox.add("mine", description="d", handler=lambda args: {})

                @session.toolbox.after("execute")
                def log(args, result, when):
                    pass
            """
        ),
    )
    session = create_session(project, trust=True)
    assert "mine" not in session.toolbox.tools  # the whole setup rolled back
    assert any("log" in str(p) and 'tool "execute"' in str(p) for p in session.extensions.problems)


# -- read once, not per call ------------------------------------------------------------------


async def test_signatures_are_read_at_registration_not_per_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reads: list[Any] = []

    def counting(fn: Callable[..., Any]) -> Any:
        reads.append(fn)
        return parameters(fn)

    monkeypatch.setattr(toolbox_module, "parameters", counting)
    box = make_box()
    box.before(only_args)
    box.after("wc", only_args)
    assert reads == [only_args, only_args]
    for _ in range(3):
        assert (await box.run("wc", dict(ARGS))).ok
    assert reads == [only_args, only_args]
    assert SEEN == [(ARGS,)] * 6


async def test_a_hook_put_in_the_table_directly_is_adapted_too(
    caplog: pytest.LogCaptureFixture,
) -> None:
    box = make_box()
    box.before(spec_global_before)
    box.hooks["before"]["*"].append(only_args)  # the public table, changed by hand
    assert (await box.run("wc", dict(ARGS))).ok
    assert SEEN == [(ARGS, "wc"), (ARGS,)]
    SEEN.clear()
    box.after("wc", only_args)
    box.hooks["after"]["wc"].append(three_positional)  # cannot be called: fails at its turn
    box.after("wc", nothing)  # registering another hook is not stopped by it
    with caplog.at_level(logging.WARNING):
        result = await box.run("wc", dict(ARGS))
    assert not result.ok and "three_positional" in str(result.error)
    assert "missing a required argument: 'extra'" in str(result.error)
    assert SEEN == [(ARGS, "wc"), (ARGS,), (ARGS,)]  # the hooks before it ran, not the one after


async def test_hooks_survive_snapshot_and_restore() -> None:
    box = make_box()
    box.before(only_args)
    snap = box.snapshot()
    box.clear()
    box.restore(snap)
    box.add("wc", description="again", handler=lambda args: dict(RAW))
    assert (await box.run("wc", dict(ARGS))).ok
    assert SEEN == [(ARGS,)]


# -- the helper handlers and hooks share --------------------------------------------------------


@pytest.mark.parametrize(
    ("fn", "offered", "expected"),
    [
        (lambda args: None, 2, 1),
        (lambda args, context: None, 2, 2),
        (lambda args, context, extra=None: None, 2, 2),
        (lambda *args: None, 2, 2),
        (lambda: None, 2, 0),
        (lambda *, key: None, 2, 0),
        (functools.partial(lambda a, b, c: None, 1), 2, 2),
        (Guard().check, 2, 1),
        (max, 2, None),  # no readable signature
    ],
)
def test_leading_arguments(fn: Callable[..., Any], offered: int, expected: int | None) -> None:
    assert leading_arguments(fn, offered) == expected


@pytest.mark.parametrize(
    ("handler", "context_expected"),
    [
        (lambda args: {"got": 1}, False),
        (lambda args, context: {"got": 2}, True),
        (functools.partial(lambda prefix, args, context: {"got": prefix}, 3), True),
        (lambda *given: {"got": len(given)}, True),
    ],
)
async def test_handlers_get_the_context_when_they_take_a_second_argument(
    handler: Callable[..., Any], context_expected: bool
) -> None:
    box = Toolbox()
    tool = box.add("t", description="d", handler=handler)
    assert tool._with_context is context_expected
    assert (await box.run("t", {})).ok
