"""Subagents in the app (issue 30): a ``task`` call is a block of its own, its subagent's
tool calls and text inside it (never top-level blocks of the chat), live while it runs
(the status says how many run), ✔ with its tokens when done; a child's approval names the
agent and a denial shows in its block; Esc stops two children at once; a resumed
conversation shows each child's steps from the journal. Driven with Pilot against the
testing kit's server, through the real loop."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from textual.pilot import Pilot
from textual.widgets import DataTable, Label, Static

from tui_agent import Session, create_session
from tui_agent.testing import (
    Call,
    FakeOpenAI,
    Reply,
    chat_text,
    run_app,
    send,
    turn_over,
    wait_for,
    wait_for_prompt,
)
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.blocks.task import TaskBlock
from tui_agent.ui.blocks.tool_call import ToolCallBlock
from tui_agent.ui.dialogs.approval import ApprovalScreen


def plain(widget: Static) -> str:
    visual = widget.visual
    plain_text = getattr(visual, "plain", None)
    if isinstance(plain_text, str):
        return plain_text
    console = Console(width=200, file=io.StringIO(), record=True, color_system=None)
    console.print(widget.content)
    return console.export_text()


def task(prompt: str, description: str, agent: str = "general", **extra: Any) -> Call:
    return Call("task", {"description": description, "prompt": prompt, "agent": agent, **extra})


def session_for(project: Path, server: FakeOpenAI) -> Session:
    return create_session(project, base_url=server.base_url, model="m", trust=True)


def blocks(app: Any) -> list[TaskBlock]:
    return list(app.chat.query(TaskBlock))


def header(block: TaskBlock) -> str:
    return plain(block.header)


def body(block: TaskBlock) -> str:
    return plain(block.body)


def status(app: Any) -> str:
    return str(app.prompt.border_subtitle)


async def opened(pilot: Pilot[Any], block: TaskBlock) -> str:
    """The block's whole body, unfolded with Enter (as a user does), then folded back."""
    block.focus()
    await pilot.press("enter")
    await pilot.pause()
    shown = body(block)
    await pilot.press("enter")
    await pilot.pause()
    return shown


TWO = Reply(calls=[task("find A", "Find A"), task("find B", "Find B")])
# the children's calls get ids of their own: the fake server numbers calls by the count
# of requests when it answers, and two children asking at once may get the same ids (the
# session maps a call's end to its task call by the call's id alone)


async def test_two_task_calls_are_two_live_blocks_with_their_childrens_steps(
    project: Path,
) -> None:
    (project / "a.txt").write_text("alpha\n")
    (project / "b.txt").write_text("beta\n")
    async with FakeOpenAI([TWO, Reply("both found")]) as server:
        for name in ("a", "b"):
            server.when(
                f"find {name.upper()}",
                [
                    Reply(calls=[Call("read", {"path": f"{name}.txt"}, id=f"read_{name}")]),
                    Reply(f"{name.upper()} is in {name}.txt", pause_after=0, pause=1.5),
                ],
            )
        session = session_for(project, server)
        async with run_app(session) as pilot:
            app: TuiAgentApp = pilot.app  # type: ignore[assignment]
            await pilot.press("ctrl+t")  # the tools panel counts every call, a child's too
            await send(pilot, "find both")
            await wait_for(pilot, lambda: "2 subagents" in status(app))
            first, second = blocks(app)
            assert header(first).startswith(tuple("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")), header(first)
            assert "general Find A" in header(first) and "general Find B" in header(second)
            # the child's read is a line in its block while the child runs on
            await wait_for(pilot, lambda: "✔ read a.txt" in body(first))
            await wait_for(pilot, lambda: "✔ read b.txt" in body(second))
            assert "2 subagents" in status(app)
            assert "15 tokens" in header(first)  # its first request's, while it runs on
            await turn_over(pilot)
            assert "subagent" not in status(app)
            for block, name in ((first, "A"), (second, "B")):
                assert header(block).startswith("✔"), header(block)
                assert "30 tokens" in header(block) and "1 tool call" in header(block)
                assert f"{name} is in" in body(block)  # its final message, folded
                whole = await opened(pilot, block)
                assert f"✔ read {name.lower()}.txt" in whole and f"{name} is in" in whole
            # no child's call is a top-level block of the chat; the parent's reply follows
            assert not app.chat.query(ToolCallBlock)
            assert "both found" in chat_text(app)
            table = app.query_one("#tools-table", DataTable)
            await wait_for(pilot, lambda: str(table.get_cell("read", "calls")) == "2")
            assert str(table.get_cell("task", "calls")) == "2"
        session.conversation.journal.close()


async def test_the_folded_body_shows_the_last_lines_and_enter_shows_all(project: Path) -> None:
    lines = "\n".join(f"line {n}" for n in range(1, 9))
    async with FakeOpenAI([Reply(calls=[task("talk", "Talk")]), Reply("ok")]) as server:
        server.when("talk", [Reply(lines, chunk_words=2)])
        session = session_for(project, server)
        async with run_app(session) as pilot:
            app: TuiAgentApp = pilot.app  # type: ignore[assignment]
            await send(pilot, "go")
            await turn_over(pilot)
            [block] = blocks(app)
            folded = body(block)
            assert "line 1" in folded and "line 4" in folded and "line 5" not in folded
            assert "4 more lines" in folded
            whole = await opened(pilot, block)
            assert all(f"line {n}" in whole for n in range(1, 9))
            assert body(block) == folded  # folded back
            await pilot.click(TaskBlock)  # a click opens it too
            await pilot.pause()
            assert body(block) == whole
        session.conversation.journal.close()


@pytest.mark.real_permissions
@pytest.mark.usefixtures("sandbox_off")  # execute asks
async def test_a_childs_approval_names_it_and_a_denial_shows_in_its_block(
    project: Path,
) -> None:
    run = Call("execute", {"command": "touch ran"})
    async with FakeOpenAI([Reply(calls=[task("run it", "Run it")]), Reply("ok")]) as server:
        server.when("run it", [Reply(calls=[run]), Reply("I was denied, stopping")])
        session = session_for(project, server)
        async with run_app(session) as pilot:
            app: TuiAgentApp = pilot.app  # type: ignore[assignment]
            await send(pilot, "go")
            await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen))
            title = plain(app.screen.query_one("#approval-title", Label))
            described = session.agents.definitions.agents["general"].description
            assert title.startswith(f"general ({described[:20]}"), title
            assert title.endswith("wants to run execute"), title
            await pilot.pause(0.4)  # the dialog's key guard
            await pilot.press("n")
            await turn_over(pilot)
            [block] = blocks(app)
            whole = await opened(pilot, block)
            assert "✖ execute touch ran — User denied permission: execute" in whole
            assert header(block).startswith("✔")  # the child itself ended well
            assert not (project / "ran").exists()
        session.conversation.journal.close()


@pytest.mark.real_permissions
@pytest.mark.usefixtures("sandbox_off")
async def test_two_childrens_dialogs_come_one_at_a_time(project: Path) -> None:
    async with FakeOpenAI([TWO, Reply("done")]) as server:
        for name in ("A", "B"):
            server.when(
                f"find {name}",
                [
                    Reply(calls=[Call("execute", {"command": f"echo {name}"}, id=f"run_{name}")]),
                    Reply(name),
                ],
            )
        session = session_for(project, server)
        async with run_app(session) as pilot:
            app: TuiAgentApp = pilot.app  # type: ignore[assignment]
            await send(pilot, "go")
            for _ in range(2):
                await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen))
                screen = app.screen
                assert sum(isinstance(s, ApprovalScreen) for s in app.screen_stack) == 1
                assert "general" in plain(screen.query_one("#approval-title", Label))
                await pilot.pause(0.4)
                await pilot.press("y")
                await wait_for(pilot, lambda s=screen: app.screen is not s)  # type: ignore[misc]
            await turn_over(pilot)
            for block in blocks(app):
                assert header(block).startswith("✔"), header(block)
                assert "✔ execute echo" in await opened(pilot, block)
        session.conversation.journal.close()


async def test_escape_during_two_children_cancels_both_and_the_app_goes_on(
    project: Path,
) -> None:
    async with FakeOpenAI([TWO, Reply("fresh answer")]) as server:
        server.when("find A", [Reply("A", pause_after=0, pause=5)])
        server.when("find B", [Reply("B", pause_after=0, pause=5)])
        session = session_for(project, server)
        async with run_app(session) as pilot:
            app: TuiAgentApp = pilot.app  # type: ignore[assignment]
            await send(pilot, "go")
            await wait_for(pilot, lambda: len(session.agents.running) == 2)
            await pilot.press("escape")
            await wait_for(pilot, lambda: not session.busy)
            await turn_over(pilot)
            first = blocks(app)
            assert len(first) == 2
            for block in first:
                await pilot.pause(0.2)
                shown = header(block)
                assert shown.startswith("✖") and "cancelled" in shown, shown
                await pilot.pause(0.2)
                assert header(block) == shown  # its clock stopped: no spinner left behind
            assert "subagent" not in status(app)
            await send(pilot, "again")
            await turn_over(pilot)
            assert "fresh answer" in chat_text(app)
        session.conversation.journal.close()


async def test_a_childs_withdrawn_reply_is_taken_back_from_its_block(project: Path) -> None:
    from tui_agent.core.util.paths import user_config_dir

    config = user_config_dir() / "config.toml"
    config.write_text("retry_base_delay = 0.01\n" + config.read_text())
    async with FakeOpenAI([Reply(calls=[task("talk", "Talk")]), Reply("ok")]) as server:
        cut = Reply("half of a first try", drop_after=3, delay=0.05)
        server.when("talk", [cut, Reply("the whole second try")])
        session = session_for(project, server)
        async with run_app(session) as pilot:
            app: TuiAgentApp = pilot.app  # type: ignore[assignment]
            await send(pilot, "go")
            await turn_over(pilot)
            [block] = blocks(app)
            whole = await opened(pilot, block)
            assert "the whole second try" in whole and "retrying (" in whole
            assert "half of" not in whole
        session.conversation.journal.close()


LEAD = """\
---
name: lead
description: Splits a job among helpers
tools: [read, task]
delegate: true
---

Split the job.
"""


async def test_a_grandchilds_steps_show_in_its_ancestors_block(project: Path) -> None:
    (project / ".tui-agent" / "agents").mkdir(parents=True)
    (project / ".tui-agent" / "agents" / "lead.md").write_text(LEAD)
    (project / "a.txt").write_text("alpha\n")
    async with FakeOpenAI(
        [Reply(calls=[task("split it", "Split", "lead")]), Reply("ok")]
    ) as server:
        server.for_agent(
            "lead", [Reply(calls=[task("the small part", "Small part")]), Reply("lead: done")]
        )
        server.when(
            "the small part",
            [Reply(calls=[Call("read", {"path": "a.txt"})]), Reply("small part done")],
        )
        session = session_for(project, server)
        async with run_app(session) as pilot:
            app: TuiAgentApp = pilot.app  # type: ignore[assignment]
            await send(pilot, "go")
            await turn_over(pilot)
            [block] = blocks(app)  # the grandchild has no block of its own
            assert header(block).startswith("✔ lead Split"), header(block)
            whole = await opened(pilot, block)
            assert "✔ task Small part" in whole
            assert "✔ general: read a.txt" in whole
            assert "lead: done" in whole
            assert not app.chat.query(ToolCallBlock)
        session.conversation.journal.close()


async def test_a_resumed_conversation_shows_each_childs_steps(project: Path) -> None:
    (project / "a.txt").write_text("alpha\n")
    parent = Reply(calls=[task("read a", "Read A", id="call_task_a")])
    async with FakeOpenAI([parent, Reply("read it")]) as server:
        server.when(
            "read a", [Reply(calls=[Call("read", {"path": "a.txt"})]), Reply("a.txt says alpha")]
        )
        session = session_for(project, server)
        await session.turn("go")
        session.conversation.journal.close()
    resumed = create_session(project, trust=True)
    assert resumed.conversation.resume(session.id)
    async with run_app(resumed) as pilot:
        app: TuiAgentApp = pilot.app  # type: ignore[assignment]
        await wait_for(pilot, lambda: blocks(app))
        [block] = blocks(app)
        assert header(block).startswith("✔ general Read A"), header(block)
        assert "30 tokens" in header(block)
        assert "a.txt says alpha" in body(block)  # folded: the final message
        whole = await opened(pilot, block)
        assert "✔ read a.txt" in whole
        assert not app.chat.query(ToolCallBlock)  # the child's read is not a chat block
    resumed.conversation.journal.close()


async def test_undo_draws_an_earlier_turns_task_block_again(project: Path) -> None:
    parent = Reply(calls=[task("read a", "Read A", id="call_task_a")])
    script = [parent, Reply("read it"), Reply("second answer")]
    async with FakeOpenAI(script) as server:
        server.when("read a", [Reply(calls=[Call("list", {"path": "."})]), Reply("listed")])
        session = session_for(project, server)
        async with run_app(session) as pilot:
            app: TuiAgentApp = pilot.app  # type: ignore[assignment]
            await send(pilot, "first")
            await turn_over(pilot)
            await send(pilot, "second")
            await turn_over(pilot)
            before = blocks(app)[0]
            await send(pilot, "/undo")
            await wait_for(pilot, lambda: blocks(app) and blocks(app)[0] is not before)
            [block] = blocks(app)
            assert header(block).startswith("✔ general Read A"), header(block)
            assert "✔ list ." in await opened(pilot, block)
            assert not app.chat.query(ToolCallBlock)
        session.conversation.journal.close()


# -- how it looks ---------------------------------------------------------------------------


def call(call_id: str, name: str, **args: Any) -> dict[str, Any]:
    arguments = json.dumps(args)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def answer(call_id: str, **result: Any) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": json.dumps(result)}


REVIEW = "app.py is fine:\n- `main()` prints a greeting\n- no tests yet\n- no error handling"
SHOWN: list[dict[str, Any]] = [
    {"role": "user", "content": "review app.py and find who calls main"},
    {
        "role": "assistant",
        "content": "I'll split this into two jobs.",
        "tool_calls": [
            call("call_a", "task", description="Review app.py", prompt="Review", agent="explore"),
            call("call_b", "task", description="Find main's callers", prompt="Find"),
        ],
    },
    answer("call_a", agent="explore", tokens=1234, seconds=3.2, steps=3, output=REVIEW),
    answer("call_b", error="cancelled by the user", name="task"),
]
RUNS: dict[str, tuple[str, list[dict[str, Any]]]] = {
    "call_a": (
        "explore",
        [
            {"role": "user", "content": "Review"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [call("r1", "read", path="app.py")],
            },
            answer("r1", content="def main(): ..."),
            {"role": "assistant", "content": None, "tool_calls": [call("g1", "grep", pattern="x")]},
            answer("g1", error="grep: bad pattern"),
            {"role": "assistant", "content": REVIEW},
        ],
    ),
    "call_b": (
        "general",
        [
            {"role": "user", "content": "Find"},
            {
                "role": "assistant",
                "content": "Looking for the callers of main.",
                "tool_calls": [call("g2", "grep", pattern="main\\(")],
            },
            answer("g2", output="app.py:1: def main():"),
        ],
    ),
}


@pytest.fixture
def home_project(isolated_home: Path) -> Path:
    root = isolated_home / "demo"  # under HOME: ~/demo on every machine
    root.mkdir()
    (root / ".git").mkdir()
    return root


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_task_blocks_snapshot(snap_compare: Any, home_project: Path, size: tuple[int, int]) -> None:
    """A resumed turn's two task blocks, folded: one done (its final message's first lines,
    a failed call among its steps), one cancelled (its last lines)."""
    from tui_agent.ui.resumed import ChildRuns, show_transcript

    app = TuiAgentApp(create_session(home_project))

    async def run_before(pilot: Pilot[Any]) -> None:
        (await wait_for_prompt(pilot)).cursor_blink = False
        await show_transcript(app.chat, SHOWN, ChildRuns(None, RUNS))
        await pilot.pause(0.2)

    assert snap_compare(app, terminal_size=size, run_before=run_before)
