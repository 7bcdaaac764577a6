"""SPEC §2: every rule of the toolbox table and the run order."""

from __future__ import annotations

import asyncio
import logging
import threading
from pathlib import Path
from typing import Any

import pytest
from conftest import write

from tui_agent import PermissionDenied, Result, Toolbox, ToolContext, create_session
from tui_agent.testing import Person


def make_wc(toolbox: Toolbox) -> list[Any]:
    calls: list[Any] = []

    @toolbox.add(
        "wc",
        description="Count",
        params={"path": {"type": "string", "description": "File"}},
        required=["path"],
        aliases=["count"],
    )
    def count(args: dict[str, Any]) -> dict[str, Any]:
        calls.append(args)
        return {"lines": 2}

    return calls


async def test_decorator_form_returns_the_function_and_registers() -> None:
    toolbox = Toolbox()

    @toolbox.add("t", description="d")
    def handler(args: dict[str, Any]) -> dict[str, Any]:
        return {"x": 1}

    assert handler({}) == {"x": 1}
    assert toolbox.tools["t"].handler is handler
    assert (await toolbox.run("t", {})).to_dict() == {"x": 1, "ok": True}


def test_direct_form_and_tool_fields() -> None:
    toolbox = Toolbox()
    tool = toolbox.add(
        "wc",
        description="Count",
        params={"path": {"type": "string"}},
        required=["path"],
        aliases=["count", "c"],
        handler=lambda a: {},
    )
    assert toolbox.tools == {"wc": tool}
    assert (tool.name, tool.description, tool.params, tool.required, tool.aliases, tool.source) == (
        "wc",
        "Count",
        {"path": {"type": "string"}},
        ["path"],
        ["count", "c"],
        "api",
    )
    assert tool.schema == {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
    }
    assert toolbox.aliases == {"count": "wc", "c": "wc"}


def test_definitions_match_openai_shape_and_never_send_aliases() -> None:
    toolbox = Toolbox()
    make_wc(toolbox)
    toolbox.add("noargs", description="Nothing", handler=lambda a: {})
    assert toolbox.definitions() == [
        {
            "type": "function",
            "function": {
                "name": "wc",
                "description": "Count",
                "parameters": {
                    "type": "object",
                    "properties": {"path": {"type": "string", "description": "File"}},
                    "required": ["path"],
                },
            },
        },
        {
            "type": "function",
            "function": {
                "name": "noargs",
                "description": "Nothing",
                "parameters": {"type": "object", "properties": {}, "required": []},
            },
        },
    ]
    assert "count" not in str(toolbox.definitions())


async def test_same_name_replaces_tool_and_its_aliases() -> None:
    toolbox = Toolbox()
    make_wc(toolbox)
    toolbox.add("wc", description="New", aliases=["tally"], handler=lambda a: {"new": True})
    assert list(toolbox.tools) == ["wc"]
    assert toolbox.tools["wc"].description == "New"
    assert toolbox.aliases == {"tally": "wc"}
    assert (await toolbox.run("wc", {})).to_dict() == {"new": True, "ok": True}
    unknown = await toolbox.run("count", {})
    assert unknown.error == 'unknown tool: "count". Available: wc'


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        ({}, {"count": "wc"}),  # no aliases given: the replaced tool's stay
        ({"aliases": None}, {"count": "wc"}),
        ({"aliases": ["tally"]}, {"tally": "wc"}),
        ({"aliases": ("tally", "count")}, {"tally": "wc", "count": "wc"}),
        ({"aliases": []}, {}),  # an explicit empty list means none
        ({"aliases": ()}, {}),
    ],
)
@pytest.mark.parametrize("form", ["direct", "decorator"])
async def test_a_replacement_keeps_the_aliases_unless_it_declares_its_own(
    given: dict[str, Any], kept: dict[str, str], form: str
) -> None:
    toolbox = Toolbox()
    make_wc(toolbox)
    new = {"description": "New", **given}
    if form == "direct":
        toolbox.add("wc", **new, handler=lambda a: {"new": True})
    else:

        @toolbox.add("wc", **new)
        def replacement(args: dict[str, Any]) -> dict[str, Any]:
            return {"new": True}

    assert toolbox.aliases == kept
    assert toolbox.tools["wc"].aliases == list(kept)
    for alias in kept:
        assert (await toolbox.run(alias, {})).to_dict() == {"new": True, "ok": True}
    if "count" not in kept:
        assert (await toolbox.run("count", {})).error == 'unknown tool: "count". Available: wc'


def test_a_replacement_keeps_only_aliases_that_still_lead_to_the_tool() -> None:
    toolbox = Toolbox()
    toolbox.add("execute", aliases=["bash", "sh"], handler=lambda a: {})
    toolbox.add("shell", aliases=["sh"], handler=lambda a: {})  # took "sh" over
    toolbox.add("execute", handler=lambda a: {})
    assert toolbox.aliases == {"bash": "execute", "sh": "shell"}
    assert toolbox.tools["execute"].aliases == ["bash"]
    toolbox.add("execute", handler=lambda a: {})  # and again: still "bash"
    assert toolbox.aliases == {"bash": "execute", "sh": "shell"}


def test_a_removed_tool_leaves_no_aliases_to_keep() -> None:
    toolbox = Toolbox()
    toolbox.add("execute", aliases=["bash"], handler=lambda a: {})
    toolbox.remove("execute")
    toolbox.add("execute", handler=lambda a: {})
    assert toolbox.aliases == {}


@pytest.mark.parametrize("bad", ["bash", ["bash", 3]])
def test_aliases_must_be_a_list_of_names(bad: Any) -> None:
    toolbox = Toolbox()
    with pytest.raises(ValueError, match="aliases must be a list of names"):
        toolbox.add("execute", aliases=bad, handler=lambda a: {})
    assert toolbox.tools == {} and toolbox.aliases == {}


@pytest.mark.parametrize("where", ["project", "global"])
async def test_a_tool_file_replacing_execute_keeps_bash_sh_and_exec(
    where: str, project: Path, user_config_dir: Path
) -> None:
    folder = project / ".tui-agent" if where == "project" else user_config_dir
    write(
        folder / "tools" / "execute.py",
        "from tui_agent import tool, schema\n\n"
        '@tool(description="Restricted bash wrapper", args={"command": schema.string()})\n'
        "async def execute(args):\n"
        "    return f\"blocked: {args['command']}\"\n",
    )
    session = create_session(project, trust=True)
    for _ in range(2):  # as loaded, and after /reload
        assert session.extensions.problems == []
        tool = session.toolbox.tools["execute"]
        assert tool.description == "Restricted bash wrapper"
        assert tool.source != "api" and "execute.py" in tool.source
        assert {session.toolbox.aliases.get(a) for a in ("bash", "sh", "exec")} == {"execute"}
        for name in ("bash", "sh", "exec", "execute"):
            result = await session.toolbox.run(name, {"command": "ls"})
            assert result.to_dict() == {"output": "blocked: ls", "ok": True}
        session.reload()


async def test_alias_resolves_to_tool() -> None:
    toolbox = Toolbox()
    calls = make_wc(toolbox)
    result = await toolbox.run("count", {"path": "a"})
    assert result.ok and result["lines"] == 2
    assert calls == [{"path": "a"}]


async def test_unknown_tool_lists_available_sorted_and_runs_no_hook() -> None:
    toolbox = Toolbox()
    ran: list[str] = []
    toolbox.add("zeta", handler=lambda a: {})
    toolbox.add("alpha", handler=lambda a: {})
    toolbox.before(lambda a, tool_name: ran.append(tool_name))
    result = await toolbox.run("nope", {"x": 1})
    assert result.to_dict() == {
        "error": 'unknown tool: "nope". Available: alpha, zeta',
        "ok": False,
    }
    assert ran == []


def test_tool_for_follows_aliases_and_gives_a_stand_in() -> None:
    toolbox = Toolbox()
    make_wc(toolbox)
    assert toolbox.tool_for("count") is toolbox.tools["wc"]
    assert toolbox.tool_for("wc") is toolbox.tools["wc"]
    stand_in = toolbox.tool_for("grep")
    assert stand_in.name == "grep?"
    assert "grep?" not in toolbox.tools and "grep" not in toolbox.tools


HOOK_FORMS = ["decorator", "decorator_empty", "bare", "direct", "direct_global"]


@pytest.mark.parametrize("form", HOOK_FORMS)
async def test_hook_registration_forms(form: str) -> None:
    toolbox = Toolbox()
    make_wc(toolbox)
    seen: list[Any] = []
    if form == "decorator":

        @toolbox.before("wc")
        def hook(args: dict[str, Any]) -> None:
            seen.append(("tool", args))

        key = "wc"
    elif form == "decorator_empty":

        @toolbox.before()
        def hook2(args: dict[str, Any], tool_name: str) -> None:
            seen.append(("global", tool_name))

        key = "*"
    elif form == "bare":

        @toolbox.before
        def hook3(args: dict[str, Any], tool_name: str) -> None:
            seen.append(("global", tool_name))

        key = "*"
    elif form == "direct":
        toolbox.before("wc", lambda args: seen.append(("tool", args)))
        key = "wc"
    else:
        toolbox.before(None, lambda args, tool_name: seen.append(("global", tool_name)))
        key = "*"
    assert len(toolbox.hooks["before"][key]) == 1
    await toolbox.run("count", {"path": "p"})
    assert seen == ([("tool", {"path": "p"})] if key == "wc" else [("global", "wc")])


async def test_run_order_for_one_call() -> None:
    toolbox = Toolbox()
    order: list[str] = []

    def handler(args: dict[str, Any]) -> dict[str, Any]:
        order.append("handler")
        return {"done": True}

    toolbox.add("t", handler=handler, aliases=["alias"])
    toolbox.after("t", lambda a, r: order.append("after t 1"))
    toolbox.after(lambda a, r, tool_name: order.append("after * 1"))
    toolbox.before("t", lambda a: order.append("before t 1"))
    toolbox.before(lambda a, tool_name: order.append("before * 1"))
    toolbox.before("t", lambda a: order.append("before t 2"))
    toolbox.before(lambda a, tool_name: order.append("before * 2"))
    toolbox.after(lambda a, r, tool_name: order.append("after * 2"))
    toolbox.after("t", lambda a, r: order.append("after t 2"))
    await toolbox.run("alias", {})
    assert order == [
        "before * 1",
        "before * 2",
        "before t 1",
        "before t 2",
        "handler",
        "after * 1",
        "after * 2",
        "after t 1",
        "after t 2",
    ]


async def test_async_hooks_and_async_handler() -> None:
    toolbox = Toolbox()
    order: list[str] = []

    async def before(args: dict[str, Any], tool_name: str) -> None:
        await asyncio.sleep(0)
        order.append(f"before {tool_name}")

    async def handler(args: dict[str, Any]) -> dict[str, Any]:
        await asyncio.sleep(0)
        order.append("handler")
        return {"v": 1}

    async def after(args: dict[str, Any], result: dict[str, Any]) -> None:
        order.append(f"after {result}")

    toolbox.add("t", handler=handler)
    toolbox.before(before)
    toolbox.after("t", after)
    result = await toolbox.run("t", {})
    assert result.to_dict() == {"v": 1, "ok": True}
    assert order == ["before t", "handler", "after {'v': 1}"]


async def test_hook_return_values_are_ignored() -> None:
    toolbox = Toolbox()
    toolbox.add("t", handler=lambda a: {"v": 1})
    toolbox.before("t", lambda a: {"error": "ignored"})
    toolbox.after("t", lambda a, r: {"replaced": True})
    assert (await toolbox.run("t", {})).to_dict() == {"v": 1, "ok": True}


@pytest.mark.parametrize(
    ("exc", "message"),
    [
        (RuntimeError("refusing to run rm"), "refusing to run rm"),
        (PermissionDenied("Permission denied: t"), "Permission denied: t"),
        (ValueError(), "ValueError"),
    ],
)
@pytest.mark.parametrize("where", ["global", "tool"])
async def test_raising_before_hook_stops_the_call(exc: Exception, message: str, where: str) -> None:
    toolbox = Toolbox()
    ran: list[str] = []
    toolbox.add("t", aliases=["a"], handler=lambda a: ran.append("handler"))

    def raiser(*args: Any, **kwargs: Any) -> None:
        raise exc

    toolbox.before(None if where == "global" else "t", raiser)
    toolbox.after(lambda a, r, tool_name: ran.append("after"))
    result = await toolbox.run("a", {"k": 1})
    assert result.to_dict() == {"error": message, "name": "a", "args": {"k": 1}, "ok": False}
    assert ran == []


async def test_after_hooks_get_raw_dict_and_run_on_error_dicts() -> None:
    toolbox = Toolbox()
    seen: list[Any] = []
    toolbox.add("t", handler=lambda a: {"error": "not found: x"})
    toolbox.after(lambda a, r, tool_name: seen.append(("*", dict(r), tool_name)))
    toolbox.after("t", lambda a, r: seen.append(("t", dict(r))))
    result = await toolbox.run("t", {})
    assert seen == [("*", {"error": "not found: x"}, "t"), ("t", {"error": "not found: x"})]
    assert result.to_dict() == {"error": "not found: x", "ok": False}


async def test_hooks_match_real_name_never_alias() -> None:
    toolbox = Toolbox()
    seen: list[str] = []
    toolbox.add("execute", aliases=["bash"], handler=lambda a: {})
    toolbox.before("bash", lambda a: seen.append("alias hook"))
    toolbox.before("execute", lambda a: seen.append("real hook"))
    toolbox.before(lambda a, tool_name: seen.append(f"global sees {tool_name}"))
    await toolbox.run("bash", {})
    assert seen == ["global sees execute", "real hook"]


async def test_tool_to_tool_call_goes_through_validation_and_hooks() -> None:
    toolbox = Toolbox()
    seen: list[str] = []

    @toolbox.add("execute", params={"command": {"type": "string"}}, required=["command"])
    def execute(args: dict[str, Any]) -> dict[str, Any]:
        seen.append(f"execute {args['command']}")
        return {"output": "ok"}

    @toolbox.before("execute")
    def refuse_rm(args: dict[str, Any]) -> None:
        if "rm" in args["command"]:
            raise RuntimeError("refusing to run rm")

    @toolbox.add("glob", params={"pattern": {"type": "string"}})
    async def glob(args: dict[str, Any]) -> dict[str, Any]:
        inner = await toolbox.run("execute", {"command": args["pattern"]})
        bad = await toolbox.run("execute", {"command": 5})
        return {"inner": inner.to_dict(), "bad": bad.error}

    result = await toolbox.run("glob", {"pattern": "rm -rf x"})
    assert result["inner"] == {
        "error": "refusing to run rm",
        "name": "execute",
        "args": {"command": "rm -rf x"},
        "ok": False,
    }
    assert result["bad"] == "value at `/command` is not a string"
    assert seen == []
    ok = await toolbox.run("glob", {"pattern": "ls"})
    assert ok["inner"] == {"output": "ok", "ok": True}
    assert seen == ["execute ls"]


async def test_sync_handler_runs_off_the_event_loop_thread() -> None:
    toolbox = Toolbox()
    threads: dict[str, int] = {}
    release = threading.Event()

    def slow(args: dict[str, Any]) -> dict[str, Any]:
        threads["handler"] = threading.get_ident()
        release.wait(5)
        return {"done": True}

    async def quick(args: dict[str, Any]) -> dict[str, Any]:
        threads["async"] = threading.get_ident()
        return {}

    toolbox.add("slow", handler=slow)
    toolbox.add("quick", handler=quick)
    task = asyncio.create_task(toolbox.run("slow", {}))
    # The loop stays free while the sync handler blocks: another call completes first.
    await asyncio.sleep(0.05)
    assert (await toolbox.run("quick", {})).ok
    assert not task.done()
    release.set()
    assert (await task).to_dict() == {"done": True, "ok": True}
    loop_thread = threading.get_ident()
    assert threads["handler"] != loop_thread
    assert threads["async"] == loop_thread


async def test_handler_exception_becomes_failure_with_logged_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    toolbox = Toolbox()

    def broken(args: dict[str, Any]) -> dict[str, Any]:
        raise KeyError("path")

    toolbox.add("t", aliases=["tt"], handler=broken)
    with caplog.at_level(logging.WARNING, logger="tui_agent"):
        result = await toolbox.run("tt", {"path": "x"})
    assert result.to_dict() == {"error": "'path'", "name": "tt", "args": {"path": "x"}, "ok": False}
    record = next(r for r in caplog.records if r.name == "tui_agent.toolbox")
    assert record.levelno == logging.WARNING
    assert record.exc_info is not None and record.exc_info[0] is KeyError
    assert "broken" in caplog.text


async def test_after_hook_exception_is_a_failure() -> None:
    toolbox = Toolbox()
    toolbox.add("t", handler=lambda a: {"v": 1})

    def explode(args: dict[str, Any], raw: dict[str, Any]) -> None:
        raise RuntimeError("after broke")

    toolbox.after("t", explode)
    result = await toolbox.run("t", {})
    assert result.to_dict() == {"error": "after broke", "name": "t", "args": {}, "ok": False}


async def test_sys_exit_in_a_handler_does_not_escape() -> None:
    toolbox = Toolbox()

    def leave(args: dict[str, Any]) -> None:
        raise SystemExit(3)

    toolbox.add("t", handler=leave)
    result = await toolbox.run("t", {})
    assert not result.ok and result.error == "3"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"a": 1}, {"a": 1, "ok": True}),
        ("text", {"output": "text", "ok": True}),
        (3, {"output": 3, "ok": True}),
        ([1, 2], {"output": [1, 2], "ok": True}),
        (None, {"output": None, "ok": True}),
        (True, {"output": True, "ok": True}),
        ({"error": "bad"}, {"error": "bad", "ok": False}),
        ({"error": None, "v": 1}, {"error": None, "v": 1, "ok": True}),
        ({"ok": False, "v": 1}, {"v": 1, "ok": True}),
    ],
)
async def test_return_values_are_wrapped(value: Any, expected: dict[str, Any]) -> None:
    toolbox = Toolbox()
    toolbox.add("t", handler=lambda a: value)
    assert (await toolbox.run("t", {})).to_dict() == expected


async def test_context_is_passed_to_two_argument_handlers() -> None:
    seen: list[Any] = []
    toolbox = Toolbox(context_factory=lambda: ToolContext(session_id="factory", directory="/tmp"))
    toolbox.add("one", handler=lambda args: {"n": len(args)})
    toolbox.add("two", handler=lambda args, context: seen.append(context))

    async def two_async(args: dict[str, Any], context: ToolContext) -> dict[str, Any]:
        seen.append(context)
        return {}

    toolbox.add("two_async", handler=two_async)
    given = ToolContext(session_id="s1", call_id="c1", directory="/tmp")
    assert (await toolbox.run("one", {"a": 1}, given)).to_dict() == {"n": 1, "ok": True}
    await toolbox.run("two", {}, given)
    await toolbox.run("two_async", {})
    assert seen[0] is given
    assert seen[1].session_id == "factory"


async def test_caller_args_are_not_mutated_by_hooks() -> None:
    toolbox = Toolbox()
    toolbox.add("t", handler=lambda a: {"seen": dict(a)})
    toolbox.before("t", lambda a: a.update(injected=True))
    args = {"x": 1}
    result = await toolbox.run("t", args)
    assert result["seen"] == {"x": 1, "injected": True}
    assert args == {"x": 1}


async def test_listeners_follow_changes_and_calls() -> None:
    toolbox = Toolbox()
    events: list[tuple[str, str]] = []
    unsubscribe = toolbox.listen(lambda e: events.append((e.kind, e.name)))
    toolbox.add("t", handler=lambda a: {})
    toolbox.before("t", lambda a: None)
    await toolbox.run("t", {})
    assert events == [("tools", "t"), ("hooks", "t"), ("call_started", "t"), ("call_finished", "t")]
    assert toolbox.stats["t"].calls == 1 and toolbox.stats["t"].last_result == Result({})
    unsubscribe()
    toolbox.add("u", handler=lambda a: {})
    assert len(events) == 4


def test_hooks_for_counts_global_and_tool_hooks() -> None:
    toolbox = Toolbox()
    toolbox.add("t", handler=lambda a: {})
    toolbox.before(lambda a, tool_name: None)
    toolbox.before("t", lambda a: None)
    toolbox.after("other", lambda a, r: None)
    assert toolbox.hooks_for("t") == (2, 0)
    assert toolbox.hooks_for("other") == (1, 1)


@pytest.mark.parametrize("bad", ["", None, 3])
def test_bad_tool_names_are_rejected(bad: Any) -> None:
    with pytest.raises(ValueError):
        Toolbox().add(bad, handler=lambda a: {})


def test_result_is_a_read_only_mapping() -> None:
    result = Result({"lines": 2})
    assert dict(result) == {"lines": 2, "ok": True}
    assert result.ok and result.error is None
    with pytest.raises(TypeError):
        result["lines"] = 3  # type: ignore[index]
    failure = Result({"error": "nope", "path": object()})
    assert not failure.ok and failure.error == "nope"
    plain = failure.to_dict()
    assert isinstance(plain["path"], str)
    import json

    assert json.loads(json.dumps(plain))["ok"] is False


# -- what run() now computes once or skips must still follow every change -------------------


async def test_a_hook_added_after_the_first_call_runs_on_the_next() -> None:
    toolbox = Toolbox()
    toolbox.add("t", handler=lambda a: {"n": 1})
    seen: list[str] = []
    assert (await toolbox.run("t", {})).ok
    toolbox.before(None, lambda a, tool_name: seen.append("global before"))
    toolbox.before("t", lambda a: seen.append("before"))
    toolbox.after(None, lambda a, raw, tool_name: seen.append("global after"))
    toolbox.after("t", lambda a, raw: seen.append("after"))
    assert (await toolbox.run("t", {})).ok
    assert seen == ["global before", "before", "global after", "after"]
    toolbox.hooks["before"]["t"].clear()  # the public table, changed directly
    seen.clear()
    assert (await toolbox.run("t", {})).ok
    assert seen == ["global before", "global after", "after"]


async def test_hooks_added_during_a_call_run_in_its_later_steps_only() -> None:
    toolbox = Toolbox()
    seen: list[str] = []

    def handler(args: dict[str, Any]) -> dict[str, Any]:
        toolbox.before("t", lambda a: seen.append("late before"))  # from the worker thread
        return {}

    def first_before(args: dict[str, Any]) -> None:
        seen.append("first before")
        toolbox.before("t", lambda a: seen.append("second before"))
        toolbox.after("t", lambda a, raw: seen.append("after added by a before hook"))

    toolbox.add("t", handler=handler)
    toolbox.before("t", first_before)
    await toolbox.run("t", {})
    # The before list was copied when its turn came, the after list only after the handler.
    assert seen == ["first before", "after added by a before hook"]


async def test_an_async_hook_returning_an_awaitable_is_awaited() -> None:
    toolbox = Toolbox()
    toolbox.add("t", handler=lambda a: {})
    done: list[str] = []

    async def later() -> None:
        done.append("awaited")

    toolbox.before("t", lambda a: later())  # a sync hook that returns a coroutine
    assert (await toolbox.run("t", {})).ok
    assert done == ["awaited"]


async def test_a_listener_added_after_calls_hears_the_next_ones_and_stats_never_stop() -> None:
    toolbox = Toolbox()
    toolbox.add("t", params={"x": {"type": "integer"}}, handler=lambda a: {"n": 1})
    await toolbox.run("t", {})
    assert not (await toolbox.run("t", {"x": "not a number"})).ok
    assert toolbox.stats["t"].calls == 2
    events: list[Any] = []
    toolbox.listen(events.append)
    await toolbox.run("t", {"x": 1})
    assert [(e.kind, e.name, e.args) for e in events] == [
        ("call_started", "t", {"x": 1}),
        ("call_finished", "t", {"x": 1}),
    ]
    assert events[1].result == {"n": 1, "ok": True} and events[1].elapsed >= 0
    assert toolbox.stats["t"].calls == 3


async def test_a_listener_added_by_a_hook_hears_that_calls_finish() -> None:
    toolbox = Toolbox()
    kinds: list[str] = []
    toolbox.add("t", handler=lambda a: {})
    toolbox.before("t", lambda a: toolbox.listen(lambda e: kinds.append(e.kind)))
    await toolbox.run("t", {})
    assert kinds == ["call_finished"]


async def test_sync_handlers_see_the_call_and_the_callers_context_in_their_thread() -> None:
    import contextvars

    from tui_agent import current_call

    marker: contextvars.ContextVar[str] = contextvars.ContextVar("marker", default="unset")
    toolbox = Toolbox()
    seen: dict[str, Any] = {}

    def handler(args: dict[str, Any], context: ToolContext) -> dict[str, Any]:
        seen["call"] = current_call()
        seen["marker"] = marker.get()
        seen["thread"] = threading.get_ident()
        seen["context"] = context
        return {}

    toolbox.add("t", handler=handler, aliases=["alias"])
    marker.set("from the caller")
    context = ToolContext(call_id="c1")
    assert (await toolbox.run("alias", {}, context)).ok
    assert seen["thread"] != threading.get_ident()
    assert (seen["call"].name, seen["call"].called_as) == ("t", "alias")
    assert seen["call"].context is context and seen["context"] is context
    assert seen["marker"] == "from the caller"
    assert current_call() is None


# -- call events: review fixes ------------------------------------------------------------


async def test_a_call_made_with_the_callers_own_context_gets_an_id_of_its_own() -> None:
    from tui_agent import ToolContext

    toolbox = Toolbox()
    toolbox.add("inner", description="Inner")(lambda args: {"inner": True})

    @toolbox.add("outer", description="Outer")
    async def outer(args: dict[str, Any], context: ToolContext) -> dict[str, Any]:
        result = await toolbox.run("inner", {}, context)  # the context passed on as is
        return {"inner_ok": result.ok}

    events: list[Any] = []
    toolbox.listen(lambda e: events.append(e) if e.kind.startswith("call") else None)
    result = await toolbox.run("outer", {}, ToolContext(call_id="model-call-1"))
    assert result.ok and result["inner_ok"] is True
    pairs = [(e.kind, e.name, e.call_id) for e in events]
    inner_id = pairs[1][2]
    assert pairs == [
        ("call_started", "outer", "model-call-1"),
        ("call_started", "inner", inner_id),
        ("call_finished", "inner", inner_id),
        ("call_finished", "outer", "model-call-1"),
    ]
    assert inner_id != "model-call-1"


async def test_a_cancelled_call_is_announced_with_the_time_it_ran() -> None:
    toolbox = Toolbox()

    @toolbox.add("slow", description="Slow")
    async def slow(args: dict[str, Any]) -> dict[str, Any]:
        await asyncio.sleep(30)
        return {}

    finished: list[Any] = []
    toolbox.listen(lambda e: finished.append(e) if e.kind == "call_finished" else None)
    task = asyncio.ensure_future(toolbox.run("slow", {}))
    await asyncio.sleep(0.2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    (event,) = finished
    assert event.result is not None and event.result.error == "cancelled by the user"
    assert event.elapsed >= 0.15


async def test_a_failing_tool_filter_hides_nothing_and_run_never_raises() -> None:
    def broken(name: str) -> bool:
        raise KeyError(name)

    toolbox = Toolbox(hidden=broken)
    toolbox.add("shown", description="Shown")(lambda args: {})
    result = await toolbox.run("nope", {})
    assert result.error == 'unknown tool: "nope". Available: shown'


async def test_arguments_that_are_not_an_object_are_announced_as_text() -> None:
    toolbox = Toolbox()
    toolbox.add("t", description="T", params={"x": {"type": "string"}})(lambda args: {})
    started: list[Any] = []
    toolbox.listen(lambda e: started.append(e) if e.kind == "call_started" else None)
    result = await toolbox.run("t", [1, 2])  # type: ignore[arg-type]
    assert not result.ok
    assert (started[0].args, started[0].arguments) == (None, "[1, 2]")


# -- issue 26: sync code calls toolbox.run and gets a Result (elelem's command block) -------

# elelem's setup block, typed literally in Python: its /wc command is a plain (sync)
# function that calls session.toolbox.run(...) and uses the Result at once
ELELEM_WC = """
import os, re
from pathlib import Path
import tui_agent

@tui_agent.setup("wc")
def wc(session):
    @session.toolbox.add("wc",
                         description="Count lines, words, and bytes in a file",
                         params={"path": {"type": "string", "description": "File to count"}},
                         required=["path"],
                         aliases=["count"])
    def count(args):
        path = Path(args["path"])
        if not path.is_file():
            return {"error": f"not found: {path}"}
        text = path.read_text()
        return {"lines": len(text.splitlines()), "words": len(text.split()),
                "bytes": len(text.encode())}

    @session.toolbox.before("execute")
    def refuse_rm(args):
        if re.search(r"\\brm\\b", args["command"]):
            raise RuntimeError("refusing to run rm")

    @session.commands.register("wc", description="Count a file",
                               completions=lambda: sorted(os.listdir()))
    def wc_command(path):
        session.output.say(repr(session.toolbox.run("wc", {"path": path or ""}).to_dict()))

    # "A tool can call another tool through toolbox.run": here from a sync handler
    @session.toolbox.add("wc_total", description="Lines in several files",
                         params={"paths": {"type": "array", "items": {"type": "string"}}})
    def total(args):
        return {"lines": sum(session.toolbox.run("wc", {"path": p})["lines"]
                             for p in args["paths"])}
"""


def said(session: Any) -> list[str]:
    return [note.text for note in session.output.history]


async def test_elelem_sync_command_calls_toolbox_run_through_the_real_agent(
    project: Path,
) -> None:
    import json

    from tui_agent.testing import Call, FakeOpenAI, Reply

    write(project / ".agents" / "plugins" / "wc.py", ELELEM_WC)
    readme = write(project / "README.md", "a\nb c\n")
    script = [
        Reply(calls=[Call("wc_total", {"paths": [str(readme), str(readme)]})]),
        Reply("four lines"),
    ]
    async with FakeOpenAI(script) as server:
        session = create_session(project, base_url=server.base_url, trust=True, yes=True)
        assert session.extensions.problems == []
        assert await session.commands.run_line(f"/wc {readme}")
        assert await session.commands.run_line("/wc nope")
        assert await session.turn("count twice") == "four lines"
    notes = said(session)
    assert "{'lines': 2, 'words': 3, 'bytes': 6, 'ok': True}" in notes
    assert "{'error': 'not found: nope', 'ok': False}" in notes
    assert not [n for n in notes if n.startswith("error:")]
    results = [
        json.loads(m["content"]) for m in session.conversation.messages if m["role"] == "tool"
    ]
    assert results == [{"lines": 4, "ok": True}]


async def test_a_sync_call_on_the_loop_thread_runs_on_a_loop_of_its_own() -> None:
    """A sync hook runs on the event loop's thread: its toolbox.run runs the call in a
    worker thread on a loop of its own (the held loop waits), and hooks still run."""
    from tui_agent.core.tools.toolbox import ToolRun, held_loop

    main_loop = asyncio.get_running_loop()
    toolbox = Toolbox()
    seen: dict[str, Any] = {}

    @toolbox.add("inner")
    async def inner(args: dict[str, Any]) -> dict[str, Any]:
        seen["thread"] = threading.get_ident()
        seen["held"] = held_loop()
        seen["loop"] = asyncio.get_running_loop()
        return {"x": 1}

    @toolbox.before("inner")
    def inner_hook(args: dict[str, Any]) -> None:
        seen["hooked"] = True

    @toolbox.add("outer")
    async def outer(args: dict[str, Any]) -> dict[str, Any]:
        return {"ok_outer": True}

    @toolbox.before("outer")
    def sync_hook(args: dict[str, Any]) -> None:
        result = toolbox.run("inner", {})
        seen["result"] = result
        seen["hook_thread"] = threading.get_ident()

    result = await toolbox.run("outer", {})
    assert result.ok, result
    inner_result = seen["result"]
    assert isinstance(inner_result, ToolRun)
    assert inner_result.to_dict() == {"x": 1, "ok": True}
    assert inner_result.ok and inner_result["x"] == 1
    assert seen["hooked"] is True
    assert seen["hook_thread"] == threading.get_ident()  # the hook: on the loop's thread
    assert seen["thread"] != threading.get_ident()  # the call: in a worker thread
    assert seen["held"] is main_loop and seen["loop"] is not main_loop
    assert held_loop() is None


async def test_a_sync_handler_calls_toolbox_run_on_the_free_loop() -> None:
    """A sync handler runs in a worker thread: its toolbox.run runs the call on the loop
    that started the handler, which is free, as if awaited there."""
    main_loop = asyncio.get_running_loop()
    toolbox = Toolbox()
    seen: dict[str, Any] = {}

    @toolbox.add("inner")
    async def inner(args: dict[str, Any]) -> dict[str, Any]:
        seen["loop"] = asyncio.get_running_loop()
        return {"n": args["n"] * 2}

    @toolbox.add("outer")
    def outer(args: dict[str, Any]) -> dict[str, Any]:
        seen["thread"] = threading.get_ident()
        return {"total": sum(toolbox.run("inner", {"n": n})["n"] for n in (1, 2, 3))}

    assert (await toolbox.run("outer", {})).to_dict() == {"total": 12, "ok": True}
    assert seen["loop"] is main_loop and seen["thread"] != threading.get_ident()

    # async callers still get a coroutine: awaited, gathered, made a task
    import inspect

    call = toolbox.run("inner", {"n": 1})
    assert inspect.iscoroutine(call)
    assert (await call)["n"] == 2
    results = await asyncio.gather(*(toolbox.run("inner", {"n": n}) for n in range(3)))
    assert [r["n"] for r in results] == [0, 2, 4]
    assert (await asyncio.create_task(toolbox.run("inner", {"n": 5})))["n"] == 10


@pytest.mark.real_permissions
async def test_a_sync_command_cannot_open_a_dialog_while_it_holds_the_loop(
    project: Path,
) -> None:
    """The app's approver needs the app's loop; a sync command holding it gets a refusal
    that says why (no deadlock). The same command written async gets the dialog."""
    from tui_agent import Decision

    write(project / ".agents" / "plugins" / "wc.py", ELELEM_WC)
    readme = write(project / "README.md", "a\nb c\n")
    session = create_session(project, trust=True)
    main_loop = asyncio.get_running_loop()
    asked: list[str] = []

    async def dialog(request: Any) -> Any:  # answered on the app's loop, as the app's is
        asked.append(request.tool)
        answer = asyncio.run_coroutine_threadsafe(asyncio.sleep(0, Decision("once")), main_loop)
        return await asyncio.wrap_future(answer)

    session.frontend = Person(decide=dialog)
    await asyncio.wait_for(session.commands.run_line(f"/wc {readme}"), 20)
    [note] = [n for n in said(session) if "'ok': False" in n]
    assert "wc needs approval, and no dialog can open while sync code holds" in note
    assert asked == []

    @session.commands.register("awc")
    async def awc(path: str | None) -> None:
        session.output.say(repr((await session.toolbox.run("wc", {"path": path})).to_dict()))

    await session.commands.run_line(f"/awc {readme}")
    assert asked == ["wc"]
    assert said(session)[-1] == "{'lines': 2, 'words': 3, 'bytes': 6, 'ok': True}"


def test_sync_code_without_a_loop_gets_a_result_and_the_async_forms_still_work() -> None:
    toolbox = Toolbox()
    loops: list[Any] = []

    @toolbox.add("t")
    async def t(args: dict[str, Any]) -> dict[str, Any]:
        loops.append(asyncio.get_running_loop())
        return {"x": args.get("x", 0)}

    # a plain thread: the Result at first use
    out: list[Any] = []
    thread = threading.Thread(target=lambda: out.append(toolbox.run("t", {"x": 1}).to_dict()))
    thread.start()
    thread.join(20)
    assert out == [{"x": 1, "ok": True}]
    assert toolbox.run("t", {"x": 2})["x"] == 2
    # what scripts wrote for the async form: the loop given runs the call
    assert asyncio.run(toolbox.run("t", {"x": 3})).to_dict() == {"x": 3, "ok": True}
    loop = asyncio.new_event_loop()
    try:
        assert loop.run_until_complete(toolbox.run("t", {"x": 4}))["x"] == 4
        assert loops[-1] is loop
    finally:
        loop.close()


@pytest.mark.real_permissions
async def test_elelem_sync_command_in_the_app(project: Path) -> None:
    """In the real app (Pilot): the sync /wc of elelem's block shows its Result; when wc
    needs approval, the chat says why no dialog could open, and the app keeps running."""
    from tui_agent.testing import run_app, send, wait_for, wait_for_text
    from tui_agent.ui.dialogs.approval import ApprovalScreen

    write(project / ".agents" / "plugins" / "wc.py", ELELEM_WC)
    readme = write(project / "README.md", "a\nb c\n")
    session = create_session(project, trust=True)
    async with run_app(session) as pilot:
        await wait_for(pilot, lambda: session.extensions.loaded)
        await send(pilot, f"/wc {readme}")
        await wait_for_text(pilot, "no dialog can open while sync code holds", timeout=10)
        assert not isinstance(pilot.app.screen, ApprovalScreen)
        write(project / ".tui-agent" / "config.toml", '[permission]\nwc = "allow"\n')
        await send(pilot, "/reload")
        await wait_for(pilot, lambda: session.extensions.loaded)
        await send(pilot, f"/wc {readme}")
        await wait_for_text(pilot, "{'lines': 2, 'words': 3, 'bytes': 6, 'ok': True}", timeout=10)
    session.conversation.journal.close()
