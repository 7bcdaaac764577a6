"""Issue 35: Ctrl+F searches the conversation (ui/search.py), in the real app under Pilot
against the testing kit's fake server: prompts, replies, thinking, tool calls and their
results (a folded result opens), blocks folded far above, a resumed conversation's
messages not drawn yet; Enter/n and Shift+Enter/N; Esc. Snapshots at 80x24 and 120x40."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import write
from textual.widgets import Input, Label

from tui_agent import create_session
from tui_agent.core.conversation.journal import Journal
from tui_agent.testing import (
    Call,
    FakeOpenAI,
    Reply,
    chat_text,
    send,
    turn_over,
    wait_for,
    wait_for_prompt,
)
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.blocks.message import UserMessage
from tui_agent.ui.blocks.thinking import Thinking
from tui_agent.ui.blocks.tool_call import ResultFold, ToolCallBlock
from tui_agent.ui.search import SearchBar

SIZE = (120, 40)


def bar(app: Any) -> SearchBar:
    return app.query_one(SearchBar)


def count(app: Any) -> str:
    return str(bar(app).query_one("#search-count", Label).content)


def selected(app: Any) -> str:
    """The text the search selected (the current match, as the screen shows it)."""
    if len(app.screen.selections) != 1:
        return ""
    [(widget, selection)] = app.screen.selections.items()
    got = widget.get_selection(selection)
    return got[0] if got else ""


def in_view(app: Any, widget: Any) -> bool:
    """Some of ``widget`` is on screen inside the chat."""
    region = widget.region
    return bool(region.height) and bool(region.intersection(app.chat.content_region).height)


async def find(pilot: Any, words: str) -> None:
    await pilot.press("ctrl+f")
    await wait_for(pilot, lambda: pilot.app.query(SearchBar) and bar(pilot.app).has_class("open"))
    field = bar(pilot.app).query_one(Input)
    field.value = ""
    await pilot.press(*words)
    await pilot.pause(0.1)


async def test_a_match_in_a_folded_tool_result_opens_it_and_esc_closes(project: Path) -> None:
    write(project / "notes.txt", "the secret word is zanzibar\n")
    script = [Reply("Reading.", calls=[Call("read", {"path": "notes.txt"})]), Reply("Read it.")]
    async with FakeOpenAI(script) as server:
        session = create_session(project, base_url=server.base_url)
        app = TuiAgentApp(session)
        async with app.run_test(size=(80, 24)) as pilot:
            await send(pilot, "what do my notes say?")
            await turn_over(pilot)
            fold = app.chat.query_one(ResultFold)
            assert fold.collapsed
            await find(pilot, "ZANZIBAR")  # case ignored
            await wait_for(pilot, lambda: not fold.collapsed)
            assert count(app) == "1 of 1"
            block = app.chat.query_one(ToolCallBlock)
            assert block.has_class("search-current")
            assert fold.body is not None and fold.body.display
            await wait_for(pilot, lambda: in_view(app, fold.body))
            # the JSON is code (no selection): the match is marked in a copy of it
            await wait_for(pilot, lambda: bar(app)._code is not None)
            original = bar(app)._code[1]
            assert fold.body.content is not original and "zanzibar" in original.code

            await pilot.press("escape")
            assert fold.body.content is original  # the marks go with the bar
            assert not bar(app).has_class("open")
            assert not block.has_class("search-current") and not block.has_class("search-hit")
            assert app.screen.selections == {}
            assert app.focused is app.prompt
            await pilot.press("ctrl+f")  # again: the words are kept, found again
            await wait_for(pilot, lambda: count(app) == "1 of 1")


async def test_n_and_enter_go_up_shift_enter_and_capital_n_come_back(project: Path) -> None:
    script = [
        Reply("The cobalt reply.", calls=[Call("glob", {"pattern": "**/cobalt*.py"})]),
        Reply("Nothing there."),
        Reply("Plain answer."),
    ]
    async with FakeOpenAI(script) as server:
        session = create_session(project, base_url=server.base_url)
        app = TuiAgentApp(session)
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, "find cobalt files")
            await turn_over(pilot)
            await send(pilot, "and COBALT again")
            await turn_over(pilot)
            await find(pilot, "cobalt")
            # the prompt, the reply, the call's arguments, the second prompt
            found = [m.part.text for m in bar(app).matches]
            assert found == [
                "find cobalt files",
                "The cobalt reply.",
                'glob {"pattern": "**/cobalt*.py"}',
                "and COBALT again",
            ]
            assert count(app) == "4 of 4"  # the newest first
            await wait_for(pilot, lambda: selected(app) == "COBALT")
            assert isinstance(bar(app).matches[3].part.block, UserMessage)
            await pilot.press("enter")  # from the words: up, to the one before
            await wait_for(pilot, lambda: count(app) == "3 of 4")
            await wait_for(pilot, lambda: selected(app) == "cobalt")  # in the arguments
            await pilot.press("n")  # the bar has the focus now: n and N move
            await wait_for(pilot, lambda: count(app) == "2 of 4")
            await pilot.press("N")
            await wait_for(pilot, lambda: count(app) == "3 of 4")
            await pilot.press("shift+enter")
            await wait_for(pilot, lambda: count(app) == "4 of 4")
            await pilot.press("shift+enter")  # round to the oldest
            await wait_for(pilot, lambda: count(app) == "1 of 4")
            await wait_for(pilot, lambda: selected(app).lower() == "cobalt")
            first = bar(app).matches[0].part.block
            assert isinstance(first, UserMessage) and first.has_class("search-current")
            assert in_view(app, first)
            await pilot.press("slash")  # back to the words
            await pilot.press("backspace", *"x")
            await wait_for(pilot, lambda: count(app) == "no match")
            assert app.screen.selections == {}


async def test_blocks_folded_far_above_and_folded_thinking_open_for_a_match(project: Path) -> None:
    long_reply = "\n\n".join(f"paragraph {n}" for n in range(60))
    # a long thinking, drawn as several segments: the match is in its last one
    pondering = "\n".join(f"thought {n}: " + "more words on it " * 10 for n in range(40))
    pondering += "\npondering the quasar"
    script = [Reply("Short.", thinking=pondering), Reply(long_reply, chunk_words=80)]
    async with FakeOpenAI(script) as server:
        session = create_session(project, base_url=server.base_url)
        app = TuiAgentApp(session)
        async with app.run_test(size=(80, 24)) as pilot:
            await send(pilot, "the first prompt mentions a narwhal")
            await turn_over(pilot)
            await send(pilot, "now a long answer")
            await turn_over(pilot)
            chat = app.chat
            await wait_for(pilot, lambda: chat.folded)  # the first blocks are folded away
            first = chat.query(UserMessage).first()
            assert not first.display
            await find(pilot, "narwhal")
            await wait_for(pilot, lambda: first.display and in_view(app, first))
            assert selected(app) == "narwhal"
            thinking = chat.query_one(Thinking)
            assert thinking.collapsed and len(thinking.body.children) > 1
            await find(pilot, "quasar")
            await wait_for(pilot, lambda: not thinking.collapsed)
            await wait_for(pilot, lambda: selected(app) == "quasar")


async def test_a_resumed_conversations_earlier_messages_are_drawn_to_reach_a_match(
    project: Path,
) -> None:
    script = [Reply(f"answer {n}") for n in range(40)]
    async with FakeOpenAI(script) as server:
        first = create_session(project, base_url=server.base_url)
        await first.turn("where is the walrus?")
        for n in range(39):
            await first.turn(f"prompt {n}")
        await first.close()
    session = create_session(project)
    assert session.conversation.resume(first.id)
    app = TuiAgentApp(session)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_prompt(pilot)
        assert app.chat.older is not None  # only the newest messages are drawn
        await find(pilot, "walrus")
        await wait_for(pilot, lambda: count(app) == "no match · 1 earlier: N")
        await pilot.press("enter")
        await wait_for(pilot, lambda: bar(app).matches, timeout=10)
        await wait_for(pilot, lambda: selected(app) == "walrus")
        assert count(app) == "1 of 1"
        await wait_for(pilot, lambda: in_view(app, bar(app).matches[0].part.block))


async def test_a_match_in_blocks_the_chat_no_longer_holds_is_found_and_drawn(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A conversation longer than the chat holds (``MAX_ITEMS``, made small here): the
    first prompt's blocks are gone from the chat, yet Ctrl+F counts its word among the
    earlier matches and going up draws that stretch of the conversation and shows it."""
    from tui_agent.ui.chat import ChatView
    from tui_agent.ui.search import Gap

    monkeypatch.setattr(ChatView, "MAX_ITEMS", 20)
    turns = 16
    script = [Reply("Reading.", calls=[Call("read", {"path": "notes.txt"})]), Reply("Read it.")]
    script += [Reply(f"answer {n}") for n in range(1, turns + 1)]
    write(project / "notes.txt", "nothing to see\n")
    async with FakeOpenAI(script) as server:
        session = create_session(project, base_url=server.base_url)
        app = TuiAgentApp(session)
        async with app.run_test(size=(80, 24)) as pilot:
            await send(pilot, "where does the axolotl live?")
            await turn_over(pilot)
            for n in range(1, turns):
                await send(pilot, f"prompt {n}" + (" (the axolotl again)" if n == 5 else ""))
                await turn_over(pilot)
            await send(pilot, "the newest axolotl")
            await turn_over(pilot)
            chat = app.chat
            assert chat.hidden
            assert chat_text(app).count("axolotl") == 1  # the older blocks were dropped
            await find(pilot, "axolotl")
            await wait_for(pilot, lambda: count(app) == "1 of 1 · 2 earlier")
            await pilot.press("enter")  # the 6th prompt's stretch is drawn
            await wait_for(pilot, lambda: count(app) == "1 of 2 · 1 earlier", timeout=10)
            await wait_for(pilot, lambda: selected(app) == "axolotl")
            assert "prompt 5" in bar(app).matches[bar(app).current].part.text
            await pilot.press("n")  # and then the first prompt's, above it
            await wait_for(pilot, lambda: count(app) == "1 of 3", timeout=10)
            await wait_for(pilot, lambda: selected(app) == "axolotl")
            match = bar(app).matches[0]
            assert isinstance(match.part.block, UserMessage)
            assert "where does the axolotl live?" in match.part.text
            await wait_for(pilot, lambda: in_view(app, match.part.block))
            gaps = list(chat.query(Gap))  # what lies between is said, not drawn
            assert gaps and all("later message" in str(gap.content) for gap in gaps)
            assert chat.children.index(match.part.block) < chat.children.index(gaps[0])
            # the tool call of that first turn came back with it, its result folded
            assert any(call.tool_name == "read" for call in chat.query(ToolCallBlock))
            await find(pilot, "prompt 15")  # the newest still there, found as before
            await wait_for(pilot, lambda: selected(app) == "prompt 15")
            assert count(app) == "1 of 1"
            await pilot.press("escape")
            await send(pilot, "and one more")  # the chat goes on below
            await wait_for(pilot, lambda: "and one more" in chat_text(app))


async def test_a_resumed_conversation_past_the_chats_cap_is_searched_to_its_start(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A resumed conversation with more messages than the chat holds: drawing the earlier
    messages stops at the cap, and the search goes on in the conversation from there."""
    from tui_agent.ui.chat import ChatView

    monkeypatch.setattr(ChatView, "MAX_ITEMS", 20)
    script = [Reply(f"answer {n}") for n in range(40)]
    async with FakeOpenAI(script) as server:
        first = create_session(project, base_url=server.base_url)
        await first.turn("where is the walrus?")
        for n in range(39):
            await first.turn(f"prompt {n}")
        await first.close()
    session = create_session(project)
    assert session.conversation.resume(first.id)
    app = TuiAgentApp(session)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_prompt(pilot)
        await find(pilot, "walrus")
        await wait_for(pilot, lambda: count(app) == "no match · 1 earlier: N")
        await pilot.press("enter")
        await wait_for(pilot, lambda: selected(app) == "walrus", timeout=15)
        assert app.chat.older is None and app.chat.hidden  # the chat drew all it holds
        assert count(app) == "1 of 1"
        await wait_for(pilot, lambda: in_view(app, bar(app).matches[0].part.block))


async def test_a_subagents_folded_steps_and_a_commands_output_are_searched(
    project: Path, sandbox_off: None
) -> None:
    app = TuiAgentApp(create_session(project))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_prompt(pilot)
        await app.chat.start_task("t1", "explore", "look around")
        task = app.chat.tasks["t1"]
        task.add_text("first the walrus step\n" + "".join(f"step {n}\n" for n in range(8)))
        await pilot.pause(0.3)
        assert task.collapsed and "walrus" not in str(task.body.content)  # folded away
        await send(pilot, "!echo narwhal-output")
        await wait_for(pilot, lambda: "narwhal-output" in chat_text(app), timeout=10)
        await turn_over(pilot)
        await find(pilot, "walrus")
        await wait_for(pilot, lambda: not task.collapsed)
        await wait_for(pilot, lambda: selected(app) == "walrus")
        await find(pilot, "narwhal")
        assert count(app) == "2 of 2"  # the command and its output
        await wait_for(pilot, lambda: selected(app) == "narwhal")


async def test_ctrl_f_does_nothing_over_a_dialog(project: Path) -> None:
    app = TuiAgentApp(create_session(project))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_prompt(pilot)
        await send(pilot, "/resume")
        await wait_for(pilot, lambda: len(app.screen_stack) > 1)
        await pilot.press("ctrl+f")
        await pilot.pause()
        assert not app.query(SearchBar)


# -- snapshots --------------------------------------------------------------------------------


@pytest.fixture
def resumed(isolated_home: Path) -> Any:
    """A journaled conversation (the real Journal) with a tool call whose result holds
    the words searched, resumed: every time shown is the journal's, not the clock's."""
    root = isolated_home / "demo"
    (root / ".git").mkdir(parents=True)
    journal = Journal("20250601-120000-aaaaaa", root)
    call = {"id": "c1", "type": "function", "function": {"name": "grep", "arguments": "{}"}}
    call["function"]["arguments"] = '{"pattern": "retry"}'
    for message in [
        {"role": "user", "content": "where does the client retry?"},
        {"role": "assistant", "content": "Let me search.", "tool_calls": [call]},
        {
            "role": "tool",
            "tool_call_id": "c1",
            "content": '{"matches": ["http.py:12: def retry(request, attempts=3):", '
            '"http.py:40:     return retry(request)"], "count": 2}',
        },
        {"role": "assistant", "content": "`retry` in **http.py** tries three times."},
    ]:
        journal.append(message)
    journal.close()
    session = create_session(root)
    assert session.conversation.resume("20250601-120000-aaaaaa")
    return session


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_search_snapshot(snap_compare: Any, resumed: Any, size: tuple[int, int]) -> None:
    async def run_before(pilot: Any) -> None:
        (await wait_for_prompt(pilot)).cursor_blink = False
        await find(pilot, "attempts")
        bar(pilot.app).query_one(Input).cursor_blink = False
        await wait_for(pilot, lambda: not pilot.app.chat.query_one(ResultFold).collapsed)
        await pilot.pause(0.3)

    assert snap_compare(TuiAgentApp(resumed), terminal_size=size, run_before=run_before)


async def test_a_command_sent_after_a_search_shows_its_answer(project: Path) -> None:
    """The search scrolled the chat up to a match and left it there; a ``/command`` sent
    next brings the chat back to the bottom, so its answer is on screen (seen in tmux:
    ``/cost`` after Esc answered below the view). A prompt leaves the view where it is
    (test_app's ``test_chat_stays_at_the_bottom_unless_the_user_scrolled_up``)."""
    script = [Reply("the first answer mentions zanzibar " + "filler " * 300)] + [
        Reply("more words " * 80) for _ in range(4)
    ]
    async with FakeOpenAI(script) as server:
        session = create_session(project, base_url=server.base_url)
        app = TuiAgentApp(session)
        async with app.run_test(size=(80, 24)) as pilot:
            for prompt in ("one", "two", "three", "four", "five"):
                await send(pilot, prompt)
                await turn_over(pilot)
            await find(pilot, "zanzibar")
            await wait_for(pilot, lambda: count(app) == "1 of 1")
            await wait_for(pilot, lambda: app.chat.scroll_y < app.chat.max_scroll_y - 10)
            await pilot.press("escape")
            assert app.focused is app.prompt
            await send(pilot, "/help")
            await wait_for(pilot, lambda: "/rename" in chat_text(app))
            await wait_for(pilot, lambda: app.chat.scroll_y >= app.chat.max_scroll_y - 1)
