"""Long replies in the chat: segments, folding and the frozen heap (issue 6).

A streamed reply is dealt out into ``ReplyMarkdown`` segments of ``SEGMENT_BLOCKS`` blocks,
blocks far above the view are folded (``display: none`` behind one spacer as tall as they
were), and finished segments are frozen out of the garbage collector until the turn ends.
These tests drive the real app with Pilot against the testing kit's server.
"""

from __future__ import annotations

import asyncio
import gc
import random
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.pilot import Pilot
from textual.widgets import Static

from tui_agent import create_session, testing
from tui_agent.testing import FakeOpenAI, Reply, wait_for_prompt
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.blocks.markdown import ReplyMarkdown
from tui_agent.ui.blocks.reply import ReplyStream, split_markdown
from tui_agent.ui.chat import FoldSpacer
from tui_agent.ui.prompt import PromptArea

SIZE = (100, 30)


def long_reply(blocks: int, seed: int = 3) -> str:
    """Headings, paragraphs, lists and code fences: ``blocks`` top-level blocks."""
    rng = random.Random(seed)
    words = "agent reads file edits function tests pass user watches stream chat".split()
    out: list[str] = []
    for number in range(blocks):
        sentence = " ".join(rng.choice(words) for _ in range(12))
        kind = number % 4
        if kind == 0:
            out.append(f"## Part {number}")
        elif kind == 1:
            out.append(f"- {sentence}\n- {sentence}")
        elif kind == 2:
            out.append(f"```python\ndef f_{number}():\n    return {number}\n```")
        else:
            out.append(f"Paragraph {number}: {sentence}.")
    return "\n\n".join(out)


async def wait_for(pilot: Pilot[Any], condition: Callable[[], Any], seconds: float = 30) -> None:
    """The testing kit's ``wait_for`` with this file's patience."""
    await testing.wait_for(pilot, condition, seconds)


def segments(app: TuiAgentApp) -> list[ReplyMarkdown]:
    return list(app.chat.query(ReplyMarkdown))


@asynccontextmanager
async def app_after_reply(
    tmp_path: Path, text: str, chunk_words: int = 40
) -> AsyncIterator[tuple[Pilot[Any], TuiAgentApp]]:
    """The app, after ``text`` came as a reply from the fake server (``chunk_words`` words a
    chunk), was sent as the user sends a prompt, and is drawn."""
    with FakeOpenAI([Reply(text, chunk_words=chunk_words)]) as server:
        session = create_session(tmp_path, base_url=server.base_url, model="fake-model")
        app = TuiAgentApp(session)
        async with app.run_test(size=SIZE) as pilot:
            (await wait_for_prompt(pilot)).text = "write a lot"
            await pilot.press("enter")
            await wait_for(pilot, lambda: not server.script and not session.busy)
            await app.workers.wait_for_complete()
            await pilot.pause(0.3)
            yield pilot, app


# -- split_markdown ----------------------------------------------------------------------------


def test_split_markdown_cuts_at_block_starts_and_loses_nothing() -> None:
    text = long_reply(100)
    pieces = split_markdown(text, 24)
    assert "".join(pieces) == text
    assert len(pieces) == 5  # 24 + 24 + 24 + 24 + 4 blocks (split_markdown is told 24)
    assert pieces[1].startswith("## Part 24")
    assert all(piece.count("```") % 2 == 0 for piece in pieces)  # no fence is cut


def test_split_markdown_keeps_a_fence_or_list_whole() -> None:
    fence = "```\n" + "\n\n".join(f"line {i}" for i in range(200)) + "\n```"
    assert split_markdown(fence, 3) == [fence]
    items = "\n".join(f"- item {i}" for i in range(300))
    assert split_markdown(items, 3) == [items]


def test_split_markdown_never_cuts_before_keep() -> None:
    text = long_reply(60)
    natural = split_markdown(text, 24)
    keep = len(natural[0]) + 3  # the 25th block has already started on screen
    pieces = split_markdown(text, 24, keep=keep)
    assert "".join(pieces) == text
    assert len(pieces[0]) >= keep
    assert "## Part 24" in pieces[0]  # already on screen: it stays in the first piece
    assert pieces[1].startswith("- ")  # block 25, the next one to start after keep
    assert len(split_markdown(pieces[1], 1)) == 24


def test_split_markdown_counts_lines_the_way_markdown_it_does() -> None:
    """A lone CR is a line break for markdown-it; str.splitlines would also split on
    U+2028, which markdown-it does not."""
    assert split_markdown("a\r\n\r\nb\rc\n\nd", 1) == ["a\r\n\r\n", "b\rc\n\n", "d"]
    text = "one\u2028still one\n\ntwo\n\nthree"
    assert split_markdown(text, 1) == ["one\u2028still one\n\n", "two\n\n", "three"]


# -- the app -----------------------------------------------------------------------------------


async def test_a_long_reply_is_dealt_into_segments_that_add_up_to_the_reply(
    tmp_path: Path,
) -> None:
    text = long_reply(150)
    async with app_after_reply(tmp_path, text, chunk_words=20) as (_, app):
        parts = segments(app)
        assert "".join(part.source for part in parts) == text
        assert len(parts) >= 150 // ReplyStream.SEGMENT_BLOCKS
        for part in parts:
            blocks = split_markdown(part.source, 1)
            assert len(blocks) <= ReplyStream.SEGMENT_BLOCKS
        assert app.session.conversation.messages[-1]["content"] == text


async def test_text_that_arrives_at_once_is_dealt_out_too(tmp_path: Path) -> None:
    """The whole reply in one write (a UI that was busy): no giant segment."""
    text = long_reply(120)
    session = create_session(tmp_path, provider="stub")
    app = TuiAgentApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await app.chat.add_text(text)
        await app.chat.end_reply()
        await pilot.pause()
        parts = segments(app)
        assert "".join(part.source for part in parts) == text
        assert max(len(split_markdown(p.source, 1)) for p in parts) <= ReplyStream.SEGMENT_BLOCKS
        assert len(parts) == -(-120 // ReplyStream.SEGMENT_BLOCKS)  # 120 blocks, no more


async def test_blocks_far_above_are_folded_without_moving_anything(tmp_path: Path) -> None:
    text = long_reply(200)
    async with app_after_reply(tmp_path, text) as (pilot, app):
        chat = app.chat
        await wait_for(pilot, lambda: chat.folded)
        spacer = chat.query_one(FoldSpacer)
        assert spacer.display
        hidden = [w for w in chat.children if not w.display and w is not spacer]
        assert len(hidden) == len(chat.folded) >= 3
        folded_height = chat.virtual_size.height
        last = segments(app)[-1]
        last_y = last.virtual_region.y
        assert chat.scroll_y == chat.max_scroll_y  # still following the bottom

        chat.unfold()
        await pilot.pause(0.2)
        assert not chat.folded and not spacer.display
        assert all(w.display for w in chat.children if w is not spacer)
        # the spacer stood in for exactly the folded height: nothing moved
        assert chat.virtual_size.height == folded_height
        assert last.virtual_region.y == last_y


async def test_scrolling_up_unfolds_what_comes_into_view(tmp_path: Path) -> None:
    text = long_reply(200)
    async with app_after_reply(tmp_path, text) as (pilot, app):
        chat = app.chat
        await wait_for(pilot, lambda: chat.folded)
        first = segments(app)[0]
        assert not first.display
        chat.scroll_home(animate=False)
        await pilot.pause(0.3)
        assert first.display and not chat.folded
        assert first.region.height > 0 and first.region.y < app.size.height  # on screen
        # back at the bottom, new content folds the top away again
        chat.scroll_end(animate=False)
        await pilot.pause(0.2)
        await app.chat.add_text("\n\n" + long_reply(30, seed=9))
        await app.chat.end_reply()
        await wait_for(pilot, lambda: chat.folded)
        assert not first.display


async def test_the_wheel_never_scrolls_into_what_is_still_folded(tmp_path: Path) -> None:
    """Scrolled up a few lines at a time, as a mouse wheel does, every view shows blocks,
    never the spacer alone. A folded block reaches down to where the next one starts: a
    segment that started above the view but reached into it stayed folded, and a blank
    chat stayed on screen until the next wheel step. (Long paragraphs: a segment of them
    is taller than two screens.)"""
    text = "\n\n".join(f"Paragraph {n}: " + "the agent reads a file " * 30 for n in range(120))
    async with app_after_reply(tmp_path, text) as (pilot, app):
        chat = app.chat
        await wait_for(pilot, lambda: len(chat.folded) >= 3)
        height = chat.size.height
        blank: list[float] = []
        while chat.scroll_y > 0:
            chat.post_message(events.MouseScrollUp(chat, 10, 10, 0, 0, 0, False, False, False))
            await pilot.pause()
            top, bottom = chat.scroll_y, chat.scroll_y + height
            shown = [
                w
                for w in chat.children
                if w.display
                and not isinstance(w, FoldSpacer)
                and w.virtual_region.y < bottom
                and w.virtual_region.bottom > top
            ]
            if not shown:
                blank.append(chat.scroll_y)
        assert not blank, f"only the spacer in view at scroll_y {blank}"
        assert not chat.folded  # scrolled to the top: everything unfolded


async def test_a_change_of_width_unfolds_then_folds_at_the_new_heights(tmp_path: Path) -> None:
    text = long_reply(200)
    async with app_after_reply(tmp_path, text) as (pilot, app):
        chat = app.chat
        await wait_for(pilot, lambda: chat.folded)
        await pilot.resize_terminal(60, 30)
        await pilot.pause(0.5)
        await wait_for(pilot, lambda: chat.folded)
        folded_height = chat.virtual_size.height
        chat.unfold()
        await pilot.pause(0.2)
        assert chat.virtual_size.height == folded_height


async def test_finished_segments_are_frozen_and_the_app_thaws_on_exit(tmp_path: Path) -> None:
    gc.unfreeze()
    text = long_reply(120)
    async with app_after_reply(tmp_path, text) as (_, app):
        assert gc.get_freeze_count() > 0
        assert app.heap.baseline > 0  # the turn ended with one full collection
    assert gc.get_freeze_count() == 0


async def test_removed_widgets_are_collected_after_the_turn(tmp_path: Path) -> None:
    """/clear removes every block; the next settle must free them, frozen or not."""
    import weakref

    text = long_reply(60)
    async with app_after_reply(tmp_path, text) as (pilot, app):
        gone = weakref.ref(segments(app)[0])
        await app.chat.clear()
        assert app.heap.removed
        # the app settles after a refresh (call_after_refresh): until the chat's next
        # layout, Textual's cache of its last arrangements still holds the old blocks
        await pilot.pause()
        app.heap.settle()
        assert not app.heap.removed
        assert gone() is None


async def test_a_token_by_token_stream_updates_the_markdown_a_few_times_a_second(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """Each Markdown update re-parses and re-lays-out; one per token would starve the
    keyboard. Tokens written within ``INTERVAL`` of an update join the next one. An update
    is an append to the live segment, or the reply's first segment made with its text
    (never empty: see ``ReplyStream``)."""
    updates: list[str] = []  # the text each update brought
    make, append = ReplyMarkdown.__init__, ReplyMarkdown.append

    def made(self: ReplyMarkdown, markdown: str | None = None, **kwargs: Any) -> None:
        updates.append(markdown or "")
        make(self, markdown, **kwargs)

    def appended(self: ReplyMarkdown, markdown: str) -> Any:
        updates.append(markdown)
        return append(self, markdown)

    monkeypatch.setattr(ReplyMarkdown, "__init__", made)
    monkeypatch.setattr(ReplyMarkdown, "append", appended)
    session = create_session(tmp_path, provider="stub")
    app = TuiAgentApp(session)
    async with app.run_test(size=SIZE) as pilot:
        words = [f"word{i} " for i in range(300)]
        loop = asyncio.get_running_loop()
        started = loop.time()
        for word in words:
            await app.chat.add_text(word)
            await asyncio.sleep(0.002)
        elapsed = loop.time() - started
        await app.chat.end_reply()
        await pilot.pause()
        assert "".join(updates) == "".join(words)
        assert updates[0]  # the first segment was made with its text
        updates = [update for update in updates if update]  # later segments: mounted empty
        assert len(updates) <= elapsed / ReplyStream.INTERVAL + 2
        assert len(updates) < len(words) / 5


async def test_thinking_shows_everything_once_it_is_over(tmp_path: Path) -> None:
    from tui_agent.ui.blocks.thinking import Thinking

    session = create_session(tmp_path, provider="stub")
    app = TuiAgentApp(session)
    async with app.run_test(size=SIZE) as pilot:
        for i in range(50):
            await app.chat.add_thinking(f"step {i}. ")
        await app.chat.add_text("Answer.")
        await app.chat.end_reply()
        await pilot.pause()
        thinking = app.chat.query_one(Thinking)
        assert thinking.collapsed
        assert str(thinking.live.render()).endswith("step 49. ")


def thinking_texts(thinking: Any) -> list[str]:
    return [str(s.render()) for s in thinking.body.query(Static)]


async def test_a_long_thinking_is_drawn_in_segments_that_look_like_one_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long thinking is a chain of segments (a redraw updates the last one only): the
    characters each redraw draws do not grow with the thinking, and the segments show
    exactly its text, as tall as one text would be. Counted: characters passed to the
    segments' ``update`` per token, in the first and the last tenth of 20,000 tokens."""
    from tui_agent.ui.blocks.thinking import Thinking, ThinkingText

    drawn = [0]
    update = Static.update

    def counted(self: Any, content: Any = "", **kwargs: Any) -> None:
        if isinstance(self.parent, ThinkingText):
            drawn[0] += len(str(content))
        update(self, content, **kwargs)

    monkeypatch.setattr(Static, "update", counted)
    rng = random.Random(7)
    words = "agent reads file edits function tests pass user watches stream chat".split()
    batches = []
    for number in range(80):  # 80 batches of 250 tokens, a line break every few batches
        text = " ".join(rng.choice(words) for _ in range(250)) + " "
        batches.append(text + ("\n\n" if number % 3 == 2 else ""))
    session = create_session(tmp_path, provider="stub")
    app = TuiAgentApp(session)
    async with app.run_test(size=SIZE) as pilot:
        marks = []
        for batch in batches:
            marks.append(drawn[0])
            await app.chat.add_thinking(batch)
            thinking = app.chat.query_one(Thinking)
            thinking._draw()  # one redraw a batch (not the timer's: counts, not time)
            await pilot.pause()
        marks.append(drawn[0])
        tenth = len(batches) // 10
        first = (marks[tenth] - marks[0]) / (tenth * 250)
        last = (marks[-1] - marks[-1 - tenth]) / (tenth * 250)
        # the whole text each redraw: last / first was ~19 here
        assert last <= 2 * first, (first, last)
        segments = thinking_texts(thinking)
        assert len(segments) > 10
        assert "\n".join(segments) == thinking.text == "".join(batches)
        height = sum(s.virtual_region.height for s in thinking.body.query(Static))
    # the same thinking as one text: as tall (the breaks between segments draw no line)
    monkeypatch.setattr(Thinking, "SEGMENT", 10**9)
    app = TuiAgentApp(create_session(tmp_path, provider="stub"))
    async with app.run_test(size=SIZE) as pilot:
        await app.chat.add_thinking("".join(batches))
        thinking = app.chat.query_one(Thinking)
        thinking._draw()
        await pilot.pause()
        assert len(thinking_texts(thinking)) == 1
        assert thinking.live.virtual_region.height == height


# -- keys first --------------------------------------------------------------------------------


def shown_reply(app: TuiAgentApp) -> str:
    return "".join(segment.source for segment in segments(app))


def type_key(app: TuiAgentApp, key: str) -> None:
    """A key into the prompt as the terminal sends it, without waiting for the app to be
    idle (``pilot.press`` waits, and a streaming app is not idle)."""
    app.query_one(PromptArea).post_message(events.Key(key, key))


async def test_while_the_user_types_the_reply_waits_and_then_catches_up(tmp_path: Path) -> None:
    """Keys first: while keys come into the prompt the streamed text is not drawn (so a key
    never waits for a Markdown update and its frame); it keeps arriving, and is drawn when
    typing pauses. Nothing is lost, and what was typed stays in the prompt."""
    text = " ".join(f"word{i}" for i in range(400))
    with FakeOpenAI([Reply(text, chunk_words=1, delay=0.01)]) as server:
        session = create_session(tmp_path, base_url=server.base_url, model="fake-model")
        app = TuiAgentApp(session)
        async with app.run_test(size=SIZE) as pilot:
            app.run_line("go")
            await wait_for(pilot, lambda: "word20" in shown_reply(app))
            type_key(app, "a")
            await asyncio.sleep(0.15)  # an update under way when the key came may still land
            held = shown_reply(app)
            for key in "bcdefghij":  # ~1 s of typing, a key every 0.1 s
                type_key(app, key)
                await asyncio.sleep(0.1)
                assert app.typing() and session.busy
            assert shown_reply(app) == held  # nothing drawn while typing
            assert app.chat.backlog() > 0  # the text came in meanwhile
            await wait_for(pilot, lambda: shown_reply(app) != held)  # typing paused: catch up
            assert not app.typing()
            await wait_for(pilot, lambda: not session.busy)
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert shown_reply(app) == text
            assert app.query_one(PromptArea).text == "abcdefghij"


async def test_the_end_of_a_reply_is_drawn_even_while_the_user_types(tmp_path: Path) -> None:
    text = " ".join(f"word{i}" for i in range(60))
    with FakeOpenAI([Reply(text, chunk_words=1, delay=0.01)]) as server:
        session = create_session(tmp_path, base_url=server.base_url, model="fake-model")
        app = TuiAgentApp(session)
        async with app.run_test(size=SIZE) as pilot:
            await wait_for_prompt(pilot)  # type_key posts to it
            app.run_line("go")
            await wait_for(pilot, lambda: session.busy)
            while session.busy:  # typing through the end of the turn
                type_key(app, "x")
                await asyncio.sleep(0.05)
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert shown_reply(app) == text


async def test_a_backlog_is_drawn_in_steps(tmp_path: Path, monkeypatch: Any) -> None:
    """What piled up while the user typed is drawn ``STEP`` characters an update, so a key
    pressed during the catch-up waits for one small update, not the whole backlog."""
    feeds: list[str] = []
    original = ReplyStream._feed

    async def recording(self: ReplyStream, text: str) -> None:
        feeds.append(text)
        await original(self, text)

    monkeypatch.setattr(ReplyStream, "_feed", recording)
    session = create_session(tmp_path, provider="stub")
    app = TuiAgentApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("a")  # typing: what follows waits
        backlog = long_reply(200)
        assert len(backlog) > 3 * ReplyStream.STEP
        await app.chat.add_text(backlog)
        await pilot.pause(0.2)
        assert feeds == [] and app.chat.backlog() == len(backlog)
        await wait_for(pilot, lambda: "".join(feeds) == backlog)
        assert app.chat.backlog() == 0
        assert max(len(text) for text in feeds) <= ReplyStream.STEP
        await app.chat.end_reply()
        await pilot.pause()
        assert shown_reply(app) == backlog


async def test_a_reply_that_starts_blank_never_mounts_an_empty_segment(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """The first segment is made with text that shows something (see ReplyStream): a
    provider may send blank lines first (the openai provider holds them back itself)."""
    made: list[str] = []
    make = ReplyMarkdown.__init__

    def recording(self: ReplyMarkdown, markdown: str | None = None, **kwargs: Any) -> None:
        made.append(markdown or "")
        make(self, markdown, **kwargs)

    monkeypatch.setattr(ReplyMarkdown, "__init__", recording)
    session = create_session(tmp_path, provider="stub")
    app = TuiAgentApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: session.extensions.loaded)
        await app.chat.add_text("\n\n")
        await pilot.pause(ReplyStream.INTERVAL * 3)  # drawn on its own
        await app.chat.add_text(" \n")
        await pilot.pause(ReplyStream.INTERVAL * 3)
        assert made == []
        await app.chat.add_text("Hello there")
        await app.chat.end_reply()
        await pilot.pause()
    assert made and made[0].strip() == "Hello there", made
