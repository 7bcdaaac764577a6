"""The todo view above the prompt (issue 30), driven by Textual's Pilot on the real app and
loop: hidden until the model writes a list, then one line ("▸ Todo 1/3 · ▶ Fixing it")
that Ctrl+O or a click unfolds into the list; it follows each write live, hides on
``/clear``, and shows the list read back on ``--continue``. ``shots(dir)`` writes SVGs of it
at 80×24 and 120×40 (``python tests/test_todo_view.py DIR``)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from tui_agent import create_session
from tui_agent.testing import Call, FakeOpenAI, Reply, run_app, send, wait_for
from tui_agent.ui.prompt import PromptArea
from tui_agent.ui.todo_view import TodoView

PLAN = [
    {"content": "Read the parser", "status": "completed"},
    {"content": "Fix the off-by-one", "status": "in_progress", "activeForm": "Fixing it"},
    {"content": "Run the tests", "status": "pending"},
]
DONE = [{**item, "status": "completed"} for item in PLAN]


def view_of(pilot: Any) -> TodoView | None:
    found = pilot.app.query(TodoView)
    return found.first() if found else None


def shown(pilot: Any) -> str:
    """What the view shows, as plain text ("" when there is none, or it is hidden)."""
    view = view_of(pilot)
    if view is None or not view.display:
        return ""
    return str(view.visual.plain) if hasattr(view.visual, "plain") else ""


async def test_the_view_follows_the_list_live_and_unfolds(project: Path) -> None:
    script = [
        Reply(calls=[Call("todo", {"todos": PLAN})]),
        Reply(calls=[Call("todo", {"todos": DONE})], delay=0.3),  # the first list stays a bit
        Reply("Fixed."),
    ]
    async with FakeOpenAI(script) as server:
        session = create_session(project, base_url=server.base_url, model="fake-model")
        async with run_app(session, size=(80, 24)) as pilot:
            assert view_of(pilot) is None  # nothing until a list comes
            await send(pilot, "fix the parser")
            await wait_for(pilot, lambda: "Todo 1/3" in shown(pilot))
            assert shown(pilot) == "▸ Todo 1/3 · ▶ Fixing it  ctrl+o unfolds"
            view = view_of(pilot)
            assert view is not None
            # pinned right above the prompt, one line high
            prompt = pilot.app.query_one(PromptArea)
            assert view.region.bottom == prompt.region.y and view.region.height == 1
            await pilot.press("ctrl+o")
            assert shown(pilot).splitlines() == [
                "▾ Todo 1/3 · ▶ Fixing it  ctrl+o folds",
                "  ☑ Read the parser",
                "  ◐ Fix the off-by-one",
                "  ☐ Run the tests",
            ]
            await wait_for(pilot, lambda: "Todo 3/3 · all done" in shown(pilot))
            assert shown(pilot).splitlines()[2] == "  ☑ Fix the off-by-one"
            await pilot.click(TodoView)  # a click folds it again
            assert shown(pilot) == "▸ Todo 3/3 · all done  ctrl+o unfolds"
            assert pilot.app.focused is prompt  # the prompt keeps the keys
            await wait_for(pilot, lambda: not session.busy)
            await send(pilot, "/clear")
            await wait_for(pilot, lambda: not view.display)
        session.conversation.journal.close()


async def test_continue_shows_the_list_read_back(project: Path) -> None:
    async with FakeOpenAI([Reply(calls=[Call("todo", {"todos": PLAN})]), Reply("ok")]) as server:
        first = create_session(project, base_url=server.base_url, model="fake-model")
        await first.turn("plan")
        await first.close()
        again = create_session(project, base_url=server.base_url, load=False)
        assert again.conversation.resume()  # what --continue does before the app starts
        async with run_app(again, size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: "Todo 1/3 · ▶ Fixing it" in shown(pilot))
        again.conversation.journal.close()


def test_a_long_list_unfolds_to_ten_lines_around_the_current_item() -> None:
    view = TodoView()
    items = [("completed", f"☑ step {n}") for n in range(8)]
    items += [("in_progress", "◐ step 8")] + [("pending", f"☐ step {n}") for n in range(9, 14)]
    view.items = tuple(items)
    lines = [line for _, line in view.visible_lines()]
    assert len(lines) == 10
    assert lines[0] == "☑ … 5 done" and lines[1] == "☑ step 5"
    assert "◐ step 8" in lines and lines[-1] == "☐ step 13"
    view.items = tuple(items[:10])
    assert [line for _, line in view.visible_lines()] == [line for _, line in items[:10]]
    pending = [("in_progress", "◐ a")] + [("pending", f"☐ {n}") for n in range(14)]
    view.items = tuple(pending)
    lines = [line for _, line in view.visible_lines()]
    assert len(lines) == 10 and lines[0] == "◐ a" and lines[-1] == "☐ … 6 more"


async def _shots(out: Path, project: Path) -> list[Path]:
    long_plan = [
        {"content": "Read the parser and its tests", "status": "completed"},
        {"content": "Find where the off-by-one comes from", "status": "completed"},
        {
            "content": "Fix the off-by-one in tokenize()",
            "status": "in_progress",
            "activeForm": "Fixing the off-by-one in tokenize()",
        },
        {"content": "Add a test for the last token", "status": "pending"},
        {"content": "Run the whole test suite", "status": "pending"},
    ]
    written: list[Path] = []
    for size in ((80, 24), (120, 40)):
        script = [
            Reply("I'll plan this first.", calls=[Call("todo", {"todos": long_plan})]),
            Reply("Working on the fix now.", delay=30),
        ]
        async with FakeOpenAI(script) as server:
            session = create_session(project, base_url=server.base_url, model="fake-model")
            async with run_app(session, size=size) as pilot:
                await send(pilot, "fix the off-by-one in the parser")
                await wait_for(pilot, lambda: "Todo 2/5" in shown(pilot))
                await pilot.pause(0.3)
                for unfolded in (False, True):
                    if unfolded:
                        await pilot.press("ctrl+o")
                        await pilot.pause(0.2)
                    name = f"todo-{size[0]}x{size[1]}{'-open' if unfolded else ''}.svg"
                    written.append(Path(pilot.app.save_screenshot(name, str(out))))
                session.cancel()
            session.conversation.journal.close()
    return written


if __name__ == "__main__":  # screenshots to look at: python tests/test_todo_view.py DIR
    import os
    import tempfile

    target = Path(sys.argv[1] if len(sys.argv) > 1 else "screenshots").resolve()
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        home = Path(work) / "home"
        os.environ["HOME"] = str(home)
        for var, sub in [("XDG_CONFIG_HOME", ".config"), ("XDG_DATA_HOME", ".local/share")]:
            os.environ[var] = str(home / sub)
        demo = home / "demo"
        (demo / ".git").mkdir(parents=True)
        for path in asyncio.run(_shots(target, demo)):
            print(path)


async def test_the_todo_calls_block_says_the_list_in_one_line(project: Path) -> None:
    """Not the JSON of the whole list: how far it is, and the item in progress."""
    from tui_agent.testing import chat_text

    async with FakeOpenAI([Reply(calls=[Call("todo", {"todos": PLAN})]), Reply("ok")]) as server:
        session = create_session(project, base_url=server.base_url, model="fake-model")
        async with run_app(session, size=(120, 40)) as pilot:
            await send(pilot, "plan")
            await wait_for(pilot, lambda: "✔ todo 1/3 done · ▶ Fixing it" in chat_text(pilot.app))
            assert '"todos"' not in chat_text(pilot.app)
        session.conversation.journal.close()
