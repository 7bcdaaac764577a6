"""Issue 6, start-up: what the app does before its first frame, and what it leaves for later.

The first frame (header, chat, prompt, status line, footer keys) comes before plugins, tool
files and config are loaded, and before the heavy libraries are imported: the OpenAI client,
jsonschema, Markdown, syntax highlighting, TOML, the tools panel's tables.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Footer

from tui_agent import Session, create_session
from tui_agent.testing import FakeOpenAI, Reply, wait_for, wait_for_prompt, wait_for_text
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.prompt import PromptArea
from tui_agent.ui.tools_panel import ToolsPanel

SIZE = (100, 30)

# imported only when something needs them: never on the way to the first frame
HEAVY = [
    "openai",
    "httpx",
    "jsonschema",
    "markdown_it",
    "pygments",
    "rich.syntax",
    "tomllib",
    "textual.widgets._markdown",
    "textual.widgets._data_table",
    "tui_agent.ui.blocks.markdown",
    "textual.widgets._collapsible",  # thinking and tool calls: with the first one shown
    "argparse",  # ``tui-agent`` alone builds no parser
]

BEFORE_FIRST_FRAME = [
    "tui_agent",
    "tui_agent.cli",
    "tui_agent.ui",
    "tui_agent.ui.app",
    "tui_agent.ui.blocks",
    "tui_agent.ui.blocks.message",
    "tui_agent.ui.chat",
    "tui_agent.ui.frame",
    "tui_agent.ui.heap",
    "tui_agent.ui.palette",
    "tui_agent.ui.prompt",  # right after the first frame, before the session is made
    "tui_agent.ui.prompt_standin",  # the first frame's (test_prompt_standin.py)
    "tui_agent.ui.sending",
    "tui_agent.ui.session_app",
]

# what a resume adds before its first frame: the drawing of its newest messages and the
# light part of the core that reads a journal (ui/journaled.py); not the session
RESUME_BEFORE_FIRST_FRAME = [
    *(f"tui_agent.core{m}" for m in ("", ".conversation", ".project", ".protocol", ".util")),
    *(f"tui_agent.core.conversation.{m}" for m in ("conversation", "journal", "transcript")),
    *(f"tui_agent.core.images{m}" for m in ("", ".prepare", ".sniff", ".store")),
    "tui_agent.core.project.config",
    *(f"tui_agent.core.protocol.{m}" for m in ("messages", "records", "result")),
    *("tui_agent.core.sandbox", "tui_agent.core.sandbox.user_shell"),
    *(f"tui_agent.core.util.{m}" for m in ("paths", "processes", "secrets", "truncation")),
    *(f"tui_agent.ui.blocks.{m}" for m in ("image", "live", "markdown", "reply", "task")),
    *("tui_agent.ui.blocks.tool_call", "tui_agent.ui.journaled", "tui_agent.ui.resumed"),
]

FIRST_FRAME = textwrap.dedent(
    """
    import asyncio, json, sys

    from tui_agent.core.session.session import Session, create_session
    from tui_agent.ui.app import TuiAgentApp

    seen = {}
    reload = Session.reload

    def recording_reload(self):
        footer = app.query_one("Footer")
        seen["keys_drawn"] = bool(footer.children) and all(k.region for k in footer.children)
        seen["prompt_focused"] = app.focused is app.query_one("#prompt")
        seen["modules"] = sorted(sys.modules)
        return reload(self)

    Session.reload = recording_reload

    async def main():
        async with app.run_test(size=(100, 30)) as pilot:
            for _ in range(200):
                if app.session.extensions.loaded:
                    break
                await pilot.pause(0.02)
            seen["loaded"] = app.session.extensions.loaded

    app = TuiAgentApp(create_session(sys.argv[1], load=False))
    asyncio.run(main())
    print(json.dumps(seen))
    """
)


def run_fresh(script: str, project: Path) -> dict[str, Any]:
    """Run ``script`` in a fresh Python on ``project``; what it saw (its last line, JSON)."""
    done = subprocess.run(
        [sys.executable, "-c", script, str(project)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    seen: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return seen


def test_the_first_frame_is_drawn_before_plugins_load_and_heavy_imports(project: Path) -> None:
    """A fresh process, as ``tui-agent`` starts: when loading begins the footer keys are on
    screen, the prompt has the focus, and none of the heavy libraries is imported yet."""
    seen = run_fresh(FIRST_FRAME, project)
    assert seen["loaded"]
    assert seen["keys_drawn"]
    assert seen["prompt_focused"]
    modules = set(seen["modules"])
    assert [name for name in HEAVY if name in modules] == []


DEFERRED = textwrap.dedent(
    """
    import asyncio, os, sys

    from tui_agent import cli
    from tui_agent.ui import app as ui_app

    seen = {"made": 0}
    apps = []
    new_session = cli.new_session

    def recording_new_session(args, *, load):  # what the app's make_session calls
        app = apps[0]
        footer = app.query_one("Footer")
        seen["keys_drawn"] = bool(footer.children) and all(k.region for k in footer.children)
        seen["prompt_focused"] = app.focused is app.query_one("#prompt")
        seen["modules"] = sorted(sys.modules)
        seen["made"] += 1
        return new_session(args, load=load)

    async def main(app):
        async with app.run_test(size=(100, 30)) as pilot:
            for _ in range(200):
                if app.session_ready:
                    break
                await pilot.pause(0.02)
            seen["loaded"] = app.session_ready and app.session.extensions.loaded
            seen["tools"] = sorted(app.session.toolbox.tools)

    def run_app(app):
        apps.append(app)
        asyncio.run(main(app))
        return 0

    cli.new_session = recording_new_session
    ui_app.run_app = run_app  # what `tui-agent` runs, headless
    sys.stdin.isatty = sys.stdout.isatty = lambda: True
    os.chdir(sys.argv[1])
    cli.main([])
    import json  # not before: json is one of the modules the first frame goes without

    print(json.dumps(seen))
    """
)


def test_tui_agent_alone_draws_its_first_frame_before_it_imports_the_core(project: Path) -> None:
    """``tui-agent`` with no arguments: the session is made after the first frame, so no
    module of ``tui_agent.core`` is imported before it (and no argument parser is built);
    then the session is made and loaded (the bundled tools are there)."""
    seen = run_fresh(DEFERRED, project)
    assert seen["keys_drawn"] and seen["prompt_focused"]
    modules = set(seen["modules"])
    # start-up speed by structure: exactly these modules of ours come before the first
    # frame; a new one here (an import at the top of a UI module, say) must be deliberate
    assert sorted(m for m in modules if m.startswith("tui_agent")) == BEFORE_FIRST_FRAME
    later = [
        *HEAVY,
        "json",
        "tui_agent.ui.connected",  # the one UI module that imports the core (test_ui_imports)
        "tui_agent.ui.event_handlers",
        "tui_agent.ui.tools_panel",
        "tui_agent.ui.dialogs",
        "tui_agent.ui.dialogs.approval",
    ]
    assert [name for name in later if name in modules] == []
    assert seen["loaded"] and {"read", "write", "execute"} <= set(seen["tools"])


RESUMED = textwrap.dedent(
    """
    import asyncio, os, sys

    from tui_agent import cli
    from tui_agent.ui import app as ui_app

    seen = {"made": 0}
    apps = []
    new_session = cli.new_session

    def drawn(app):
        return [str(getattr(w, "_markdown", "")) for w in app.chat.children]

    def recording_new_session(args, *, load):  # what the app's make_session calls
        app = apps[0]
        footer = app.query_one("Footer")
        seen["keys_drawn"] = bool(footer.children) and all(k.region for k in footer.children)
        seen["newest_drawn"] = any("answer **39**" in text for text in drawn(app))
        seen["modules"] = sorted(sys.modules)
        seen["made"] += 1
        return new_session(args, load=load)

    async def main(app):
        async with app.run_test(size=(100, 30)) as pilot:
            for _ in range(300):
                if app.session_ready:
                    break
                await pilot.pause(0.02)
            session = app.session
            conversation = session.conversation
            older = app.chat.older
            seen["switched"] = older is not None and older.conversation is conversation
            held = conversation.held
            seen["anchored"] = older is not None and any(m is older.first for m in held)
            seen["deferred"] = conversation.deferred
            chat = app.chat
            whole = conversation.messages  # (reads what the resume put off)
            for _ in range(600):  # scrolled up to the top, as a user would
                if older is None or older.first is whole[0]:
                    break
                if not chat._loading_older:
                    chat.scroll_to(y=0, animate=False, immediate=True)
                await pilot.pause(0.01)
            seen["whole"] = len(whole)
            seen["first_is_the_sessions"] = older is not None and older.first is whole[0]
            seen["interrupted"] = sum(
                "interrupted: the session ended" in line
                for line in conversation.journal.path.read_text().splitlines()
            )

    def run_app(app):
        apps.append(app)
        asyncio.run(main(app))
        return 0

    cli.new_session = recording_new_session
    ui_app.run_app = run_app  # what `tui-agent --resume ID` runs, headless
    sys.stdin.isatty = sys.stdout.isatty = lambda: True
    os.chdir(sys.argv[1])
    cli.main(["--resume", sys.argv[2]])
    import json

    print(json.dumps(seen))
    """
)


def test_a_resume_draws_its_newest_messages_before_it_makes_its_session(project: Path) -> None:
    """``tui-agent --resume ID``: the first frame shows the journal's newest messages, read
    with the light part of the core only (no session, agent, provider or ``connected``);
    the session made after it takes those very messages over (the chat's earlier ones
    come from the session's conversation, scrolled up to the first), and the call the
    journal left open is answered once."""
    session_id = journaled_session(project, turns=40)  # 160 messages: most put off
    path = create_session(project, load=False).conversation.find(project, session_id)
    assert path is not None
    with path.open("a", encoding="utf-8") as journal:  # a call the session never answered
        call = {"id": "open", "type": "function", "function": {"name": "read", "arguments": "{}"}}
        journal.write(
            json.dumps({"type": "message", "message": {"role": "assistant", "tool_calls": [call]}})
            + "\n"
        )
    done = subprocess.run(
        [sys.executable, "-c", RESUMED, str(project), session_id],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["made"] == 1 and seen["keys_drawn"] and seen["newest_drawn"]
    ours = [m for m in seen["modules"] if m.startswith("tui_agent")]
    assert sorted(set(ours) - set(BEFORE_FIRST_FRAME)) == sorted(RESUME_BEFORE_FIRST_FRAME)
    assert not [m for m in seen["modules"] if m in ("openai", "httpx", "jsonschema")]
    assert seen["switched"] and seen["anchored"] and seen["deferred"]
    assert seen["whole"] == 161 + 1  # the journal's messages and the open call's answer
    assert seen["first_is_the_sessions"]
    assert seen["interrupted"] == 1


def test_no_arguments_is_what_the_parser_gives_for_none() -> None:
    from tui_agent.cli import build_parser, no_arguments

    assert vars(no_arguments()) == vars(build_parser().parse_args([]))


async def test_the_footer_is_rebuilt_only_when_its_keys_change(project: Path) -> None:
    app = TuiAgentApp(create_session(project))
    async with app.run_test(size=SIZE) as pilot:
        # the load ends after the prompt is in (plugins may change the keys then): the
        # keys are compared once it has (a busy CI machine caught the load's own rebuild)
        await app.wait_for_session()
        await pilot.pause()
        await pilot.pause()
        footer = app.query_one(Footer)
        keys = list(footer.children)
        assert keys and isinstance(app.focused, PromptArea)

        app.screen.refresh_bindings()  # the same bindings: the same key widgets stay
        await pilot.pause()
        await pilot.pause()
        assert list(footer.children) == keys

        app.bind("f9", "bell", description="Panel")  # a new key: rebuilt
        app.screen.refresh_bindings()
        await pilot.pause()
        await pilot.pause()
        assert list(footer.children) != keys
        assert any("Panel" in str(key.render()) for key in footer.children)
    app.session.conversation.journal.close()


async def test_the_tools_panel_is_built_when_first_shown_and_lists_every_tool(
    project: Path,
) -> None:
    session = create_session(project)
    app = TuiAgentApp(session)
    async with app.run_test(size=SIZE) as pilot:
        assert not app.query(ToolsPanel) and not app.query("#tools-table")
        session.toolbox.add("early", description="Before the panel exists", handler=lambda a: 1)
        await pilot.pause()

        await pilot.press("ctrl+t")
        await pilot.pause()
        panel = app.query_one(ToolsPanel)
        assert panel.built and panel.display
        table = app.query_one("#tools-table")
        names = {str(key.value) for key in table.rows}  # type: ignore[attr-defined]
        assert "early" in names and "read" in names

        session.toolbox.add("late", description="While it is shown", handler=lambda a: 2)
        await pilot.pause()
        assert "late" in {str(key.value) for key in table.rows}  # type: ignore[attr-defined]
    session.conversation.journal.close()


# -- resume ----------------------------------------------------------------------------------


def journaled_session(project: Path, turns: int) -> str:
    """A journaled session of ``turns`` turns (question, a tool call, its result, an answer);
    returns its id."""
    session = create_session(project, load=False)
    for n in range(turns):
        call = {
            "id": f"call_{n}",
            "type": "function",
            "function": {"name": "read", "arguments": json.dumps({"path": f"f{n}.py"})},
        }
        session.conversation.record({"role": "user", "content": f"question {n}"})
        session.conversation.record(
            {"role": "assistant", "content": f"looking {n}", "tool_calls": [call]}
        )
        session.conversation.record(
            {"role": "tool", "tool_call_id": f"call_{n}", "content": '{"ok": true}'}
        )
        session.conversation.record({"role": "assistant", "content": f"answer **{n}**\n\n- a\n- b"})
    session.conversation.journal.close()
    return session.id


def _shown_blocks(chat: Any) -> list[Any]:
    from tui_agent.ui.chat import ReplyMarkdown, ToolCallBlock, UserMessage

    return [b for b in chat._blocks() if isinstance(b, (UserMessage, ReplyMarkdown, ToolCallBlock))]


async def _scroll_to_top_until(pilot: Any, chat: Any, done: Any, rounds: int = 400) -> None:
    """Scroll the chat up to its top, as a user would, until ``done()``."""
    for _ in range(rounds):
        if done():
            return
        if not chat._loading_older:
            up = max(chat.scroll_y - chat.size.height, 0)
            chat.scroll_to(y=up, animate=False, immediate=True)
        await pilot.pause(0.01)
    raise AssertionError("scrolling up never showed what was asked")


async def test_resume_mounts_a_screenful_and_the_rest_when_scrolled_to(project: Path) -> None:
    """A resumed conversation mounts about a screen of its newest messages (and a little
    more, two screens' height), not its tail: the rest comes in batches when the chat is
    scrolled up to the top, above what is shown, and what was on screen stays in place."""
    from tui_agent.ui.chat import HiddenNote, ReplyMarkdown, ToolCallBlock, UserMessage

    session_id = journaled_session(project, turns=30)  # 120 messages
    session = create_session(project)
    assert session.conversation.resume(session_id)
    assert len(session.conversation.messages) == 120
    app = TuiAgentApp(session)
    async with app.run_test(size=SIZE) as pilot:
        chat = app.chat
        await wait_for(pilot, lambda: app.first_frame_drawn)
        for _ in range(30):
            await pilot.pause(0.01)
        users = [str(m.render()) for m in chat.query(UserMessage)]
        # a screenful and a little more: far fewer than the 30 questions, the newest last
        assert 2 <= len(users) <= 10 and users[-1] == "question 29"
        assert users == [f"question {n}" for n in range(30 - len(users), 30)]
        assert chat.virtual_size.height >= 2 * chat.size.height  # two screens to scroll
        assert not chat._loading_older
        note = chat.query_one(HiddenNote)
        assert "earlier messages: scroll up to show them" in str(note.render())
        # the view follows the bottom; scrolling up one screen shows blocks already there
        last = _shown_blocks(chat)[-1]
        assert last is chat.query(ReplyMarkdown).last() and "answer **29**" in last.source
        # scrolled to the top: the next batch goes in above, the view keeps its place
        top = _shown_blocks(chat)[0]
        on_screen = top.virtual_region.y  # below the note, at the top of the view
        chat.scroll_to(y=0, animate=False, immediate=True)
        await wait_for(pilot, lambda: _shown_blocks(chat)[0] is not top)
        await wait_for(pilot, lambda: not chat._loading_older)
        await pilot.pause()
        assert top.virtual_region.y > on_screen  # the batch went in above it
        assert top.virtual_region.y - chat.scroll_y == on_screen  # and it did not move
        more = [str(m.render()) for m in chat.query(UserMessage)]
        assert len(more) > len(users) and more[-len(users) :] == users
        # up to the first message: the whole conversation, in order, and no note
        await _scroll_to_top_until(pilot, chat, lambda: chat.older is None)
        await pilot.pause()
        assert [str(m.render()) for m in chat.query(UserMessage)] == [
            f"question {n}" for n in range(30)
        ]
        expected: list[str] = []
        for n in range(30):
            expected += [f"looking {n}", f"answer **{n}**\n\n- a\n- b"]
        assert [r.source for r in chat.query(ReplyMarkdown)] == expected
        calls = list(chat.query(ToolCallBlock))
        assert [c.call_id for c in calls] == [f"call_{n}" for n in range(30)]
        assert all(c.result is not None and c.result.ok for c in calls)
        assert list(chat.query(HiddenNote)) == []
        assert _shown_blocks(chat) == list(chat.query("UserMessage, ReplyMarkdown, ToolCallBlock"))
    session.conversation.journal.close()


async def test_a_resumes_first_frame_does_not_try_bubblewrap(project: Path) -> None:
    """A resume draws its status before the first frame: whether the sandbox works here
    (bubblewrap started once, 15-20 ms) is found after it, and the status says it then."""
    from tui_agent.core.sandbox import host

    session_id = journaled_session(project, turns=3)
    session = create_session(project, load=False)
    assert session.conversation.resume(session_id)
    app = TuiAgentApp(session)
    load = app._load
    tried: list[dict[str, Any]] = []

    async def first_frame() -> None:  # what the app calls right after its first frame
        tried.append(dict(host._AVAILABILITY))
        await load()

    app._load = first_frame  # type: ignore[method-assign]
    host._AVAILABILITY.clear()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: tried and app.status.endswith("sandbox"))
        assert tried == [{}], tried
        assert host._AVAILABILITY and all(v is None for v in host._AVAILABILITY.values())


async def test_scrolling_up_a_resumed_conversation_stops_at_the_chats_limit(
    project: Path, monkeypatch: Any
) -> None:
    """Past ``MAX_ITEMS`` blocks, scrolling up mounts no more: the note counts the messages
    left above (the conversation keeps them all)."""
    from tui_agent.ui.chat import ChatView, HiddenNote

    monkeypatch.setattr(ChatView, "MAX_ITEMS", 40)
    session_id = journaled_session(project, turns=30)  # 120 messages, 90 blocks
    session = create_session(project)
    assert session.conversation.resume(session_id)
    app = TuiAgentApp(session)
    async with app.run_test(size=SIZE) as pilot:
        chat = app.chat
        await wait_for(pilot, lambda: app.first_frame_drawn)
        await _scroll_to_top_until(pilot, chat, lambda: chat.older is None)
        await pilot.pause()
        assert 40 <= len(chat._blocks()) < 40 + 3 * chat.screenful()  # notes count too
        blocks = _shown_blocks(chat)
        # a message each: a question, a reply (its text), a call (its result is its tool
        # message); nothing else is shown
        left = 120 - len(blocks)
        assert f"… {left} earlier items are not shown here" in str(
            chat.query_one(HiddenNote).render()
        )
    session.conversation.journal.close()


async def test_a_cleared_chat_gets_no_more_of_the_resumed_tail(project: Path) -> None:
    from tui_agent.ui.chat import UserMessage

    session_id = journaled_session(project, turns=30)
    session = create_session(project)
    assert session.conversation.resume(session_id)
    app = TuiAgentApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await app.chat.clear()
        for _ in range(20):
            await pilot.pause(0.02)
        assert len(app.chat.query(UserMessage)) == 0
    session.conversation.journal.close()


def test_repair_checks_the_whole_transcript_at_once_and_each_message_when_that_fails() -> None:
    """One JSON check for the whole transcript; when it fails (a NaN, or a message just
    deep enough that the list around it is too deep), each message is checked on its own
    and only the bad ones are dropped."""
    from tui_agent.core.conversation.conversation import repair

    def nested(depth: int) -> Any:
        value: Any = "x"
        for _ in range(depth):
            value = [value]
        return value

    depth = next(  # sendable alone, too deep one level down
        d
        for d in range(sys.getrecursionlimit() + 50, 10, -1)
        if _dumps_ok({"role": "user", "content": [{"t": nested(d)}]})
        and not _dumps_ok([{"role": "user", "content": [{"t": nested(d)}]}])
    )
    deep = {"role": "user", "content": [{"t": nested(depth)}]}
    nan = {"role": "user", "content": [{"t": float("nan")}]}
    plain = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
    assert repair(plain, "r") == plain
    assert repair([plain[0], nan, plain[1]], "r") == plain
    assert repair([plain[0], deep, plain[1]], "r") == [plain[0], deep, plain[1]]


def _dumps_ok(value: Any) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except (ValueError, RecursionError):
        return False
    return True


# -- resume reads the newest messages first --------------------------------------------------


def damaged_journal(project: Path, turns: int, seed: int) -> tuple[str, Path]:
    """A journal of ``turns`` turns with damage here and there: calls left unanswered,
    tool results answering nothing, NaN, messages of the wrong shape, unreadable lines, a
    torn last line. Returns its id and path."""
    import random

    rng = random.Random(seed)
    session = create_session(project, load=False)
    session.conversation.record({"role": "user", "content": "start"})
    session.conversation.journal.close()
    path = session.conversation.journal.path
    lines: list[str] = []

    def message(m: Any) -> None:
        lines.append(json.dumps({"type": "message", "message": m}, allow_nan=True))

    for n in range(turns):
        message({"role": "user", "content": f"q{n}"})
        calls = [
            {"id": f"c{n}_{k}", "type": "function", "function": {"name": "read", "arguments": "{}"}}
            for k in range(rng.randrange(3))
        ]
        message(
            {"role": "assistant", "content": f"a{n}", **({"tool_calls": calls} if calls else {})}
        )
        for call in calls:
            if rng.random() < 0.8:  # some calls never got their result
                message({"role": "tool", "tool_call_id": call["id"], "content": '{"ok": true}'})
        roll = rng.random()
        if roll < 0.1:
            message({"role": "tool", "tool_call_id": "nobody", "content": "{}"})
        elif roll < 0.2:
            message({"role": "user", "content": [{"type": "text", "n": float("nan")}]})
        elif roll < 0.25:
            message({"role": "assistant", "tool_calls": 3})
        elif roll < 0.3:
            lines.append('{"type": "message", "message": {"role": "us')
        elif roll < 0.35:
            message({"role": "system", "content": f"note {n}"})
        if rng.random() < 0.7:
            message({"role": "assistant", "content": f"done {n}"})
    text = "\n".join(lines) + "\n"
    if seed % 2:
        text = text[:-9]  # torn
    with path.open("a", encoding="utf-8") as handle:
        handle.write(text)
    return session.id, path


def test_resume_reads_the_newest_messages_first_and_the_conversation_is_the_whole_journal(
    project: Path, monkeypatch: Any
) -> None:
    """Lazily or not, the conversation is what repairing the whole journal gives; the first
    read covers only the newest messages (RESUME_FIRST, small here to put the cut in many
    places)."""
    from tui_agent.core.conversation import journal
    from tui_agent.core.conversation.conversation import repair
    from tui_agent.core.conversation.transcript import Transcript

    parsed: list[int] = []
    parse_records = journal.parse_records

    def counting(path: Path, lines: list[tuple[int, str]]) -> list[dict[str, Any]]:
        parsed.append(len(lines))
        return parse_records(path, lines)

    monkeypatch.setattr(journal, "parse_records", counting)
    reason = "interrupted: the session ended before this call finished"
    for first in (1, 2, 5, 64):
        monkeypatch.setattr(Transcript, "RESUME_FIRST", first)
        for seed in range(12):
            session_id, path = damaged_journal(project, turns=40, seed=seed)
            whole = repair(
                journal.messages_of(parse_records(path, journal.read_lines(path))), reason
            )
            session = create_session(project, load=False)
            parsed.clear()
            assert session.conversation.resume(session_id)
            assert sum(parsed) < len(journal.read_lines(path)) / 2  # the newest only
            newest = session.conversation.tail(1)  # held: the first read kept at least one
            assert sum(parsed) < len(journal.read_lines(path)) / 2  # still
            assert session.conversation.tail(first)[-1] is newest[-1]
            messages = session.conversation.messages
            answered = messages[len(whole) :]  # calls the last message left open
            assert messages[: len(whole)] == whole, (first, seed)
            assert all(m["role"] == "tool" for m in answered)
            assert messages[-len(newest) :] == newest
            assert len(session.conversation) == len(messages)
            session.conversation.journal.close()


async def test_a_lazily_resumed_conversation_is_sent_whole(project: Path) -> None:
    session_id = journaled_session(project, turns=100)  # 400 messages
    with FakeOpenAI([Reply("all of it")]) as server:
        session = create_session(project, base_url=server.base_url, model="fake-model")
        assert session.conversation.resume(session_id)
        assert len(session.conversation.tail(8)) == 8
        assert await session.turn("and now?") == "all of it"
        session.conversation.journal.close()
    sent = server.requests[0]["messages"]
    assert sent[0]["role"] == "system" and sent[-1] == {"role": "user", "content": "and now?"}
    users = [m["content"] for m in sent if m["role"] == "user"]
    assert users == [f"question {n}" for n in range(100)] + ["and now?"]
    assert len(sent) == 1 + 400 + 1


async def test_the_app_reads_what_a_resume_put_off_only_when_scrolled_up_to_it(
    project: Path,
) -> None:
    """A lazily resumed conversation (64 of 240 messages read) is drawn and idles without
    reading the rest of the journal; scrolling up past the messages read reads it, and
    the chat goes on up from where it was."""
    from tui_agent.ui.chat import HiddenNote, UserMessage

    session_id = journaled_session(project, turns=60)  # 240 messages
    session = create_session(project)
    assert session.conversation.resume(session_id)
    app = TuiAgentApp(session)
    async with app.run_test(size=SIZE) as pilot:
        chat = app.chat
        await wait_for(pilot, lambda: app.first_frame_drawn)
        for _ in range(30):
            await pilot.pause(0.01)
        assert session.conversation.conversation.deferred  # nothing more read
        users = [str(m.render()) for m in chat.query(UserMessage)]
        assert users and users[-1] == "question 59"
        assert "↑ earlier messages" in str(chat.query_one(HiddenNote).render())
        await _scroll_to_top_until(pilot, chat, lambda: len(chat.query(UserMessage)) >= 20)
        assert not session.conversation.conversation.deferred
        assert len(session.conversation.messages) == 240
        await _scroll_to_top_until(pilot, chat, lambda: "question 30" in _users(chat))
        assert _users(chat) == [f"question {n}" for n in range(60 - len(_users(chat)), 60)]
        note = str(chat.query_one(HiddenNote).render())
        left = 240 - len(_shown_blocks(chat))  # a block a message (see above)
        assert f"↑ {left} earlier messages: scroll up to show them" in note
    session.conversation.journal.close()


def _users(chat: Any) -> list[str]:
    from tui_agent.ui.chat import UserMessage

    return [str(m.render()) for m in chat.query(UserMessage)]


async def test_drawing_the_resumed_tail_reads_nothing_the_resume_put_off(
    project: Path,
) -> None:
    """``show_transcript`` takes the newest messages from ``session.conversation`` itself
    (its ``tail``), so the first frame of a resumed conversation waits for no more of the
    journal than the newest messages; the rest is read after that frame."""
    from tui_agent.ui.resumed import show_transcript

    session_id = journaled_session(project, turns=60)  # 240 messages: 64 read at once
    session = create_session(project, load=False)
    assert session.conversation.resume(session_id)
    app = TuiAgentApp(create_session(project, load=False))
    async with app.run_test(size=SIZE):
        assert session.conversation.deferred
        await show_transcript(app.chat, session.conversation)
        assert session.conversation.deferred  # the older messages come after the frame
    session.conversation.journal.close()


async def test_lines_sent_before_the_app_has_made_its_session_wait_for_it_in_order(
    project: Path,
) -> None:
    """The app makes its session in one place, right after the first frame. Before that
    ``app.session`` raises (no property makes it as a side effect); a command and a prompt
    sent early wait for it and then run in order. The session is made once and connected
    (the app approves its calls and hears its events), so both show in the chat."""
    with FakeOpenAI([Reply("early answer")]) as server:
        made: list[Session] = []

        def make() -> Session:
            made.append(create_session(project, base_url=server.base_url, load=False))
            return made[-1]

        app = TuiAgentApp(make_session=make, directory=project)
        with pytest.raises(RuntimeError, match="wait_for_session"):
            app.session  # noqa: B018
        async with app.run_test(size=SIZE) as pilot:
            assert made == [] and not app.session_ready  # the first frame is not drawn yet
            app.run_line("/help")
            app.run_line("hello")
            text = await wait_for_text(pilot, "early answer", 10)
            assert len(made) == 1 and app.session is made[0]
            assert made[0].frontend.interactive
            assert text.index("/help") < text.index("Description") < text.index("hello")
            assert text.index("hello") < text.index("early answer")
            assert text.count("early answer") == 1
        assert len(made) == 1  # made once
        made[0].conversation.journal.close()


async def test_tools_panel_asked_for_before_the_session_is_made_shows_once_it_is(
    project: Path,
) -> None:
    app = TuiAgentApp(make_session=lambda: create_session(project, load=False), directory=project)
    async with app.run_test(size=SIZE) as pilot:
        assert not app.session_ready
        await pilot.press("ctrl+t")
        await wait_for(pilot, lambda: app.tools_panel is not None and app.tools_panel.built)
        assert app.session_ready
        table = app.query_one("#tools-table", DataTable)
        assert {"read", "write"} <= {str(key.value) for key in table.rows}
    app.session.conversation.journal.close()


async def test_a_resize_or_a_tools_change_while_the_panel_builds_waits_for_it(
    project: Path,
) -> None:
    """CI once saw the panel's resize list the table before its parameter labels were
    mounted (NoMatches '#params-title'): until its children are in, nothing lists."""
    session = create_session(project)
    app = TuiAgentApp(session)
    async with app.run_test(size=SIZE) as pilot:
        panel = ToolsPanel(session.toolbox, id="tools")
        await app.screen.mount(panel)
        building = asyncio.ensure_future(panel.show())
        await asyncio.sleep(0)  # show() now waits for its children to mount
        assert not panel.built
        panel.refresh_table()
        panel.tools_changed()
        panel.call_finished("read")
        await panel.show()  # shown again meanwhile: the first show lists
        await building
        await pilot.pause()
        assert panel.built
        names = {str(key.value) for key in app.query_one("#tools-table", DataTable).rows}
        assert {"read", "write"} <= names
        assert str(app.query_one("#params-title").render()) == f"{sorted(names)[0]} — parameters"
    session.conversation.journal.close()


async def test_tab_pressed_before_the_session_is_made_completes_once_it_is(project: Path) -> None:
    app = TuiAgentApp(make_session=lambda: create_session(project, load=False), directory=project)
    async with app.run_test(size=SIZE) as pilot:
        assert not app.session_ready
        await pilot.press(*"/he", "tab")
        await wait_for(pilot, lambda: app.prompt.text == "/help ")
        assert app.session_ready
    app.session.conversation.journal.close()


async def test_the_palette_opened_before_the_session_is_made_lists_its_commands(
    project: Path,
) -> None:
    from textual.command import CommandList, CommandPalette

    def options() -> list[str]:
        if not isinstance(app.screen, CommandPalette):
            return []
        found = app.screen.query_one(CommandList)
        return [str(found.get_option_at_index(i).prompt) for i in range(found.option_count)]

    app = TuiAgentApp(make_session=lambda: create_session(project, load=False), directory=project)
    async with app.run_test(size=SIZE) as pilot:
        assert not app.session_ready
        await pilot.press("ctrl+p")
        await pilot.press(*"/reload")
        await wait_for(pilot, lambda: any("/reload" in option for option in options()))
        assert app.session_ready
    app.session.conversation.journal.close()


async def test_a_prompt_sent_before_the_session_is_connected_joins_the_saved_history(
    project: Path,
) -> None:
    """The prompt is drawn before the core is imported, so it keeps its history in memory
    until the app connects its session and hands it the history's file: then the saved
    prompts come first, and the one sent before is saved after them."""
    from tui_agent.ui.connected import PromptHistory

    PromptHistory().save(["older prompt"])

    def make() -> Session:  # runs just before the app connects: a line is sent now
        assert app.prompt.prompt_history == []
        app.prompt.text = "/help"
        app.prompt.action_submit()
        return create_session(project, load=False)

    app = TuiAgentApp(make_session=make, directory=project)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_text(pilot, "Description", 10)  # /help ran, once the session was ready
        assert PromptHistory().load() == ["older prompt", "/help"]
        await pilot.press("up")
        assert app.prompt.text == "/help"
        await pilot.press("up")
        assert app.prompt.text == "older prompt"
        app.prompt.text = "later"
        await pilot.press("enter")
        await pilot.pause()
        assert PromptHistory().load() == ["older prompt", "/help", "later"]
    app.session.conversation.journal.close()


async def test_start_up_holds_garbage_collection_until_the_first_frame(project: Path) -> None:
    """``cli.start_app`` holds collections (``hold_collections``); the app lets them go
    right after its first frame, with what start-up made frozen (a young collection would
    walk all of it). Collections someone else turned off stay off."""
    import gc

    from tui_agent.ui import heap

    assert gc.isenabled()
    heap.hold_collections()
    try:
        assert not gc.isenabled()
        app = TuiAgentApp(
            make_session=lambda: create_session(project, load=False), directory=project
        )
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: app.first_frame_drawn)
            assert gc.isenabled() and gc.get_freeze_count() > 0
        gc.disable()  # turned off by someone else: not ours to turn on
        heap.release_collections()
        assert not gc.isenabled()
    finally:
        gc.enable()
        gc.unfreeze()


async def test_code_blocks_are_coloured_after_the_first_frame() -> None:
    """A code block drawn before the app's first frame (a resumed conversation's) shows
    plain, without making pygments build its lexer; it is coloured right after."""
    from textual.app import App, ComposeResult

    from tui_agent.ui.blocks.markdown import Fence, ReplyMarkdown

    class Host(App[None]):
        first_frame_drawn = False

        def compose(self) -> ComposeResult:
            yield ReplyMarkdown("Look:\n\n```python\ndef f(x):\n    return x + 1\n```\n")

    app = Host()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.query(Fence))
        fence = app.query_one(Fence)
        for _ in range(5):
            await pilot.pause(0.02)
        assert fence._plain and fence._highlighted_code.spans == []
        assert "return x + 1" in fence._highlighted_code.plain
        app.first_frame_drawn = True
        await wait_for(pilot, lambda: not fence._plain)
        await pilot.pause()
        assert fence._highlighted_code.spans  # pygments' colours
        assert "return x + 1" in fence._highlighted_code.plain


def test_a_resume_reads_its_journal_once(project: Path, monkeypatch: Any) -> None:
    """The conversation and the checkpoints of a resumed journal come from one read of
    it; a journal that changed is read again."""
    from tui_agent.core.conversation import journal

    session_id = journaled_session(project, turns=3)
    reads: list[Path] = []
    read_text = Path.read_text

    def counting(self: Path, *args: Any, **kwargs: Any) -> str:
        if self.suffix == ".jsonl":
            reads.append(self)
        return read_text(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", counting)
    session = create_session(project, load=False)
    assert session.conversation.resume(session_id)
    assert len(reads) == 1
    path = reads[0]
    assert len(journal.read_lines(path)) > 0 and len(reads) == 1
    session.conversation.record({"role": "user", "content": "one more"})
    session.conversation.journal.close()
    assert any("one more" in line for _, line in journal.read_lines(path))
    assert len(reads) == 2


async def test_export_of_a_resumed_conversation_holds_what_the_chat_has_not_shown(
    project: Path,
) -> None:
    """The chat of a resumed conversation shows a screenful; ``/export`` (typed at the
    prompt) writes every message, the ones the resume put off too."""
    from tui_agent.ui.chat import UserMessage

    session_id = journaled_session(project, turns=60)  # 240 messages: 64 read at once
    session = create_session(project)
    assert session.conversation.resume(session_id)
    app = TuiAgentApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.first_frame_drawn and app.session_ready)
        assert len(app.chat.query(UserMessage)) < 10
        assert session.conversation.conversation.deferred
        (await wait_for_prompt(pilot)).text = "/export all.md"
        await pilot.press("enter")
        await wait_for(pilot, lambda: (project / "all.md").exists())
        text = (project / "all.md").read_text(encoding="utf-8")
        assert all(f"question {n}" in text for n in range(60))
        assert len(app.chat.query(UserMessage)) < 10  # the chat still shows a screenful
    session.conversation.journal.close()


async def test_the_chat_gaining_the_focus_restyles_it_alone(monkeypatch: Any) -> None:
    """Focus moving into or out of the chat restyles the chat, not each of its blocks
    (Textual restyles every descendant: ~2 s after a long reply)."""
    from textual.app import App, ComposeResult
    from textual.css.stylesheet import Stylesheet

    from tui_agent.ui.chat import ChatView, Note

    class Host(App[None]):
        def compose(self) -> ComposeResult:
            yield ChatView(id="chat")
            yield PromptArea(lambda *a: None, id="prompt")  # type: ignore[arg-type,return-value]

    app = Host()
    async with app.run_test(size=SIZE) as pilot:
        chat = app.query_one(ChatView)
        await chat.mount_all([Note(f"note {n}") for n in range(300)])
        app.query_one(PromptArea).focus()
        await pilot.pause()
        restyled: list[int] = []
        update_nodes = Stylesheet.update_nodes

        def counting(self: Stylesheet, nodes: Any, animate: bool = False) -> None:
            nodes = list(nodes)
            restyled.append(len(nodes))
            update_nodes(self, nodes, animate)

        monkeypatch.setattr(Stylesheet, "update_nodes", counting)
        chat.focus()
        await pilot.pause()
        assert app.focused is chat and restyled and max(restyled) < 20
        app.query_one(PromptArea).focus()
        await pilot.pause()
        assert len(restyled) >= 2 and max(restyled) < 20


@pytest.mark.parametrize("cut", [len("Intro:\n\n- one\n- tw"), len("Intro:\n\n- one\n- two\n"), 9])
async def test_a_reply_made_with_its_text_then_appended_to_keeps_every_block(cut: int) -> None:
    """The streamed reply's first segment is made with its text (Textual's ``update``),
    then appended to. Textual's update left the next append to re-parse from the last
    *line*, not from where the last block starts: a list cut there lost its first items
    (seen in the README's screenshot: one bullet of two). An append right after the
    segment is made waits for its update."""
    from textual.app import App, ComposeResult

    from tui_agent.ui.blocks.markdown import ReplyMarkdown

    text = "Intro:\n\n- one\n- two\n- three\n\nDone, **all** of it."
    segment = ReplyMarkdown(text[:cut])

    class Host(App[None]):
        def compose(self) -> ComposeResult:
            yield segment

    app = Host()
    async with app.run_test(size=SIZE) as pilot:
        await segment.append(text[cut:])  # at once: the update may still be parsing
        await pilot.pause()
        fresh = ReplyMarkdown(text)
        await app.mount(fresh)
        await pilot.pause()

        def shown(markdown: ReplyMarkdown) -> list[tuple[str, str]]:
            return [
                (type(w).__name__, str(getattr(w, "_content", "")))
                for w in markdown.walk_children()
                if type(w).__name__ in ("MarkdownParagraph", "MarkdownBulletList")
            ]

        assert shown(segment) == shown(fresh)
        assert [t for _, t in shown(segment) if t] == [
            "Intro:",
            "one",
            "two",
            "three",
            "Done, all of it.",
        ]
