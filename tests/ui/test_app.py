"""Issue 5 / SPEC §7: the Textual app, driven with Pilot against the testing kit's fake server.

Every flow the issue's "Done means" lists: a plain turn, tool calls (✔/✖), the approval
dialog (approve, session allow reused, always, deny, deny with feedback, Esc, mouse, the
key guard, one dialog at a time), cancel, the command palette with completions, the tools
panel following the toolbox, Tab completion, history, unknown/raising commands, the trust
dialog, /exit and /theme.
"""

from __future__ import annotations

import asyncio
import io
import json
import tomllib
from pathlib import Path
from typing import Any

import pytest
from conftest import write
from rich.console import Console
from textual.command import CommandList, CommandPalette
from textual.pilot import Pilot
from textual.widgets import DataTable, Footer, Input, Static

from tui_agent import ApprovalRequest, Session, create_session
from tui_agent.core.util.paths import user_config_dir, user_data_dir
from tui_agent.testing import Call, FakeOpenAI, Reply, send, wait_for, wait_for_prompt
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.blocks.markdown import NoteMarkdown, ReplyMarkdown
from tui_agent.ui.blocks.message import Note, UserMessage
from tui_agent.ui.blocks.thinking import Thinking
from tui_agent.ui.blocks.tool_call import ResultFold, ToolCallBlock
from tui_agent.ui.connected import history_file
from tui_agent.ui.dialogs.approval import ApprovalScreen, TrustScreen
from tui_agent.ui.prompt import CompletionMenu, PromptArea

SIZE = (120, 40)
BUNDLED_TOOLS = ["edit", "execute", "git", "glob", "grep", "list", "read", "write"]

# -- helpers ---------------------------------------------------------------------------------


def plain(widget: Static) -> str:
    """The text a Static shows (markup resolved, Rich renderables rendered)."""
    content = widget.content
    if isinstance(content, str):
        return widget.visual.plain  # type: ignore[attr-defined]
    console = Console(width=200, file=io.StringIO(), record=True, color_system=None)
    console.print(content)
    return console.export_text()


def notes(app: TuiAgentApp) -> list[Note]:
    return list(app.chat.query(Note))


def note_texts(app: TuiAgentApp) -> list[str]:
    return [plain(note) for note in notes(app)]


def markdown_notes(app: TuiAgentApp) -> list[str]:
    return [note.source for note in app.chat.query(NoteMarkdown)]


def replies(app: TuiAgentApp) -> list[str]:
    return [reply.source for reply in app.chat.query(ReplyMarkdown)]


def prompt_of(app: TuiAgentApp) -> PromptArea:
    return app.query_one(PromptArea)


async def type_in(pilot: Pilot[Any], text: str) -> None:
    """Put ``text`` in the prompt with the cursor at its end (faster than a key per letter)."""
    prompt = await wait_for_prompt(pilot)
    prompt.focus()
    prompt.text = text
    prompt.move_cursor(prompt.document.end)
    await pilot.pause()


def tool_messages(session: Session) -> list[str]:
    return [m["content"] for m in session.conversation.messages if m.get("role") == "tool"]


async def turn_done(pilot: Pilot[Any], session: Session, server: FakeOpenAI) -> None:
    """Wait for the scripted replies to be used up and the turn to end."""
    await wait_for(pilot, lambda: not server.script and not session.busy)
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def transcript_is_valid(messages: list[dict[str, Any]]) -> bool:
    """Every assistant tool call has exactly one answer, and no answer is orphaned."""
    asked = [
        c["id"] for m in messages if m.get("role") == "assistant" for c in m.get("tool_calls") or []
    ]
    answered = [m["tool_call_id"] for m in messages if m.get("role") == "tool"]
    return sorted(asked) == sorted(answered)


# -- a plain turn ----------------------------------------------------------------------------


async def test_plain_turn_streams_the_reply_and_the_status_shows_model_and_tokens(
    project: Path,
) -> None:
    text = "Hello **there**, friend. " + " ".join(f"word{n}" for n in range(30))
    async with FakeOpenAI([Reply(text, delay=0.04)]) as server:
        session = create_session(project, base_url=server.base_url, model="fake-model")
        app = TuiAgentApp(session)
        async with app.run_test(size=SIZE) as pilot:
            assert session.frontend.interactive  # the app answers (its dialogs)
            await pilot.press(*"hi model")
            assert prompt_of(app).text == "hi model"
            await pilot.press("enter")
            # streamed: part of the reply shows while the rest is still on its way
            await wait_for(pilot, lambda: replies(app) and "Hello" in replies(app)[0])
            assert replies(app)[0] != text and text.startswith(replies(app)[0].rstrip())
            await turn_done(pilot, session, server)
            assert prompt_of(app).text == ""
            assert [plain(m) for m in app.chat.query(UserMessage)] == ["hi model"]
            assert replies(app) == [text]
            status = prompt_of(app).border_subtitle
            assert "openai / fake-model" in status
            assert "15 tokens" in status
            assert server.requests[0]["messages"][-1] == {"role": "user", "content": "hi model"}
        session.conversation.journal.close()


async def test_stub_provider_banner_says_how_to_configure_a_model(project: Path) -> None:
    session = create_session(project)
    app = TuiAgentApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        banner = [text for text in markdown_notes(app) if "stub" in text]
        assert banner and "OPENAI_API_KEY" in banner[0] and "--base-url" in banner[0]
        assert "stub" in prompt_of(app).border_subtitle
    session.conversation.journal.close()


# -- tool calls ------------------------------------------------------------------------------


async def test_tool_call_block_ends_with_a_check_and_a_collapsible_result(project: Path) -> None:
    script = [Reply(calls=[Call("execute", {"command": "echo hi-from-tool"})]), Reply("done")]
    async with FakeOpenAI(script) as server:
        session = create_session(project, base_url=server.base_url)
        app = TuiAgentApp(session)
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, "run it")
            await turn_done(pilot, session, server)
            blocks = list(app.chat.query(ToolCallBlock))
            assert len(blocks) == 1
            block = blocks[0]
            await wait_for(pilot, lambda: block.query(ResultFold))
            header = plain(block.header)
            assert header.startswith("✔")
            assert "execute" in header and "echo hi-from-tool" in header
            assert not block.has_class("failed")
            result = block.query_one(ResultFold)
            assert result.title == "result" and plain(result) == "▶ result"
            assert result.collapsed and result.body is None  # made when first opened
            await pilot.click(result)
            await wait_for(pilot, lambda: result.body is not None)
            await pilot.pause()
            assert not result.collapsed and plain(result) == "▼ result"
            assert result.body is not None and result.body.display
            assert "hi-from-tool" in plain(result.body)
            result.focus()
            await pilot.press("enter")  # closed again from the keyboard
            await pilot.pause()
            assert result.collapsed and not result.body.display
            assert replies(app) == ["done"]
        session.conversation.journal.close()


async def test_failing_tool_call_ends_with_a_cross_and_the_error_text(project: Path) -> None:
    script = [Reply(calls=[Call("boom", {})]), Reply("it failed")]
    async with FakeOpenAI(script) as server:
        session = create_session(project, base_url=server.base_url)

        def boom(args: dict[str, Any]) -> None:
            raise RuntimeError("kaboom happened")

        session.toolbox.add("boom", description="Always fails", handler=boom)
        app = TuiAgentApp(session)
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, "try boom")
            await turn_done(pilot, session, server)
            block = app.chat.query_one(ToolCallBlock)
            await wait_for(pilot, lambda: block.query(".error-text"))
            assert plain(block.header).startswith("✖")
            assert block.has_class("failed")
            assert "kaboom happened" in plain(block.query_one(".error-text", Static))
            assert block.query_one(ResultFold).collapsed
        session.conversation.journal.close()


async def test_thinking_is_shown_then_collapsed_when_the_reply_starts(project: Path) -> None:
    script = [Reply("The answer is 42.", thinking="pondering the question deeply")]
    async with FakeOpenAI(script) as server:
        session = create_session(project, base_url=server.base_url)
        app = TuiAgentApp(session)
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, "question")
            await turn_done(pilot, session, server)
            thinking = app.chat.query_one(Thinking)
            assert thinking.text == "pondering the question deeply"
            assert thinking.collapsed
            assert replies(app) == ["The answer is 42."]
        session.conversation.journal.close()


async def test_tool_call_block_names_the_tool_and_the_alias_the_model_used(
    project: Path,
) -> None:
    script = [Reply(calls=[Call("yell", {"text": "hey"})]), Reply("ok")]
    async with FakeOpenAI(script) as server:
        session = create_session(project, base_url=server.base_url)
        session.toolbox.add(
            "shout",
            params={"text": {"type": "string"}},
            aliases=["yell"],
            handler=lambda args: {"said": args["text"].upper()},
        )
        app = TuiAgentApp(session)
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, "shout")
            await turn_done(pilot, session, server)
            block = app.chat.query_one(ToolCallBlock)
            await wait_for(pilot, lambda: block.result is not None)
            header = plain(block.header)
            assert header.startswith("✔")
            # issue 5: "one block per tool call (name, alias used, arguments, ...)"
            assert "shout" in header, header
            assert "yell" in header, header
        session.conversation.journal.close()


async def test_chat_stays_at_the_bottom_unless_the_user_scrolled_up(project: Path) -> None:
    long_reply = "\n\n".join(f"paragraph {n}" for n in range(40))
    async with FakeOpenAI([Reply(long_reply, chunk_words=50), Reply("tail")]) as server:
        session = create_session(project, base_url=server.base_url)
        app = TuiAgentApp(session)
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, "long")
            await wait_for(pilot, lambda: len(server.script) == 1 and not session.busy)
            await pilot.pause(0.1)
            chat = app.chat
            assert chat.max_scroll_y > 0
            assert chat.scroll_y == chat.max_scroll_y
            chat.scroll_home(animate=False)
            await pilot.pause()
            await send(pilot, "more")
            await turn_done(pilot, session, server)
            await pilot.pause(0.1)
            assert chat.scroll_y < chat.max_scroll_y
        session.conversation.journal.close()


# -- approvals -------------------------------------------------------------------------------


async def open_approval(pilot: Pilot[Any], session: Session, prompt: str) -> ApprovalScreen:
    await send(pilot, prompt)
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, ApprovalScreen))
    screen = pilot.app.screen
    assert isinstance(screen, ApprovalScreen)
    await wait_for(pilot, lambda: screen.query("#approval-preview Static"))  # composed
    return screen


def preview_text(screen: ApprovalScreen) -> str:
    return plain(screen.query_one("#approval-preview Static", Static))


@pytest.mark.real_permissions
@pytest.mark.usefixtures("sandbox_off")  # execute asks
async def test_approval_dialog_shows_the_command_and_y_allows_once(project: Path) -> None:
    script = [Reply(calls=[Call("execute", {"command": "echo approved-once"})]), Reply("ok")]
    async with FakeOpenAI(script) as server:
        session = create_session(project, base_url=server.base_url)
        app = TuiAgentApp(session)
        async with app.run_test(size=SIZE) as pilot:
            screen = await open_approval(pilot, session, "go")
            assert screen.request.tool == "execute"
            assert "echo approved-once" in preview_text(screen)
            meta = [plain(s) for s in screen.query(".meta").results(Static)]
            assert any("default for execute" in m for m in meta)
            assert any("echo approved-once *" in m for m in meta)
            await pilot.pause(0.35)
            await pilot.press("y")
            await turn_done(pilot, session, server)
            assert not isinstance(app.screen, ApprovalScreen)
            [result] = tool_messages(session)
            assert json.loads(result)["output"].strip() == "approved-once"
            # "once" remembers nothing for the session
            assert session.extensions.kept("permissions", dict)["session"] == {}
        session.conversation.journal.close()


@pytest.mark.real_permissions
@pytest.mark.usefixtures("sandbox_off")  # execute asks
async def test_n_denies_and_the_model_is_told(project: Path) -> None:
    (project / "keep.txt").write_text("x")
    script = [Reply(calls=[Call("execute", {"command": "rm keep.txt"})]), Reply("ok")]
    async with FakeOpenAI(script) as server:
        session = create_session(project, base_url=server.base_url)
        app = TuiAgentApp(session)
        async with app.run_test(size=SIZE) as pilot:
            await open_approval(pilot, session, "delete it")
            await pilot.pause(0.35)
            await pilot.press("n")
            await turn_done(pilot, session, server)
            [result] = tool_messages(session)
            assert json.loads(result)["error"] == "User denied permission: execute"
            assert (project / "keep.txt").exists()
            block = app.chat.query_one(ToolCallBlock)
            assert plain(block.header).startswith("✖")
        session.conversation.journal.close()


@pytest.mark.real_permissions
@pytest.mark.usefixtures("sandbox_off")  # execute asks
async def test_f_denies_with_the_feedback_text(project: Path) -> None:
    script = [Reply(calls=[Call("execute", {"command": "rm -rf build"})]), Reply("ok")]
    async with FakeOpenAI(script) as server:
        session = create_session(project, base_url=server.base_url)
        app = TuiAgentApp(session)
        async with app.run_test(size=SIZE) as pilot:
            screen = await open_approval(pilot, session, "clean")
            await pilot.pause(0.35)
            await pilot.press("f")
            feedback = screen.query_one("#feedback", Input)
            assert feedback.has_class("visible") and feedback.has_focus
            # y, n, s, a typed into the feedback box are text, not answers
            await pilot.press(*"no y")
            assert app.screen is screen
            await pilot.press("enter")
            await turn_done(pilot, session, server)
            [result] = tool_messages(session)
            assert json.loads(result)["error"] == "User denied permission: execute: no y"
            # the model saw the feedback
            assert "no y" in server.requests[1]["messages"][-1]["content"]
        session.conversation.journal.close()


@pytest.mark.real_permissions
@pytest.mark.usefixtures("sandbox_off")  # execute asks
async def test_s_allows_for_the_session_and_the_next_call_of_the_kind_does_not_ask(
    project: Path,
) -> None:
    script = [
        Reply(calls=[Call("execute", {"command": "echo -n first"})]),
        Reply("one"),
        Reply(calls=[Call("execute", {"command": "echo -n second"})]),
        Reply("two"),
    ]
    async with FakeOpenAI(script) as server:
        session = create_session(project, base_url=server.base_url)
        app = TuiAgentApp(session)
        async with app.run_test(size=SIZE) as pilot:
            screen = await open_approval(pilot, session, "first")
            pattern = screen.request.session_pattern
            assert pattern == "echo *"
            await pilot.pause(0.35)
            await pilot.press("s")
            await wait_for(pilot, lambda: len(server.script) == 2 and not session.busy)
            assert session.extensions.kept("permissions", dict)["session"] == {
                "execute": ["echo *"]
            }
            # The second turn would hang on a dialog if it asked: it finishes on its own.
            await send(pilot, "second")
            await turn_done(pilot, session, server)
            assert not isinstance(app.screen, ApprovalScreen)
            outputs = [json.loads(r).get("output", "").strip() for r in tool_messages(session)]
            assert outputs == ["first", "second"]
        session.conversation.journal.close()


@pytest.mark.real_permissions
@pytest.mark.usefixtures("sandbox_off")  # execute asks
async def test_a_always_allows_and_writes_the_rule_to_the_project_config(project: Path) -> None:
    script = [Reply(calls=[Call("execute", {"command": "echo forever"})]), Reply("ok")]
    async with FakeOpenAI(script) as server:
        session = create_session(project, base_url=server.base_url, trust=True)
        app = TuiAgentApp(session)
        async with app.run_test(size=SIZE) as pilot:
            screen = await open_approval(pilot, session, "go")
            patterns = screen.request.patterns
            assert patterns
            await pilot.pause(0.35)
            await pilot.press("a")
            await turn_done(pilot, session, server)
            assert json.loads(tool_messages(session)[0])["output"].strip() == "forever"
        session.conversation.journal.close()
    config_file = project / ".tui-agent" / "config.toml"
    assert config_file.is_file()
    rules = tomllib.loads(config_file.read_text())["permission"]["execute"]
    assert all(rules[pattern] == "allow" for pattern in patterns)
    again = create_session(project, trust=True)
    assert again.config.get("permission")["execute"][patterns[0]] == "allow"
    again.conversation.journal.close()


@pytest.mark.real_permissions
@pytest.mark.usefixtures("sandbox_off")  # execute asks
async def test_escape_denies(project: Path) -> None:
    script = [Reply(calls=[Call("execute", {"command": "echo nope"})]), Reply("ok")]
    async with FakeOpenAI(script) as server:
        session = create_session(project, base_url=server.base_url)
        app = TuiAgentApp(session)
        async with app.run_test(size=SIZE) as pilot:
            await open_approval(pilot, session, "go")
            await pilot.pause(0.35)
            await pilot.press("escape")
            await turn_done(pilot, session, server)
            [result] = tool_messages(session)
            assert json.loads(result)["error"] == "User denied permission: execute"
            # Esc answered the dialog; it did not cancel the turn
            assert replies(app)[-1] == "ok"
        session.conversation.journal.close()


@pytest.mark.real_permissions
@pytest.mark.usefixtures("sandbox_off")  # execute asks
async def test_a_key_pressed_right_after_the_dialog_opens_does_not_answer_it(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A longer script makes the dialog take a moment to draw, as real ones do: the keys the
    # user was still typing when it appeared must not answer it. The guard is stretched to
    # 1.5 s here so that a busy test machine, stalling this task between the dialog and the
    # key press, cannot make the key legitimately late.
    from tui_agent.ui.dialogs import approval

    monkeypatch.setattr(approval, "GUARD_SECONDS", 1.5)
    command = "\n".join(f"echo step {n}" for n in range(200))
    script = [Reply(calls=[Call("execute", {"command": command})]), Reply("ok")]
    async with FakeOpenAI(script) as server:
        session = create_session(project, base_url=server.base_url)
        app = TuiAgentApp(session)
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, "go")
            while not isinstance(app.screen, ApprovalScreen):
                await asyncio.sleep(0.005)
            screen = app.screen
            await pilot.press("y")
            assert app.screen is screen, "a key pressed as the dialog appeared answered it"
            await pilot.pause(1.55)
            await pilot.press("n")
            await turn_done(pilot, session, server)
            [result] = tool_messages(session)
            assert json.loads(result)["error"] == "User denied permission: execute"
        session.conversation.journal.close()


@pytest.mark.real_permissions
@pytest.mark.usefixtures("sandbox_off")  # execute asks
async def test_every_dialog_button_answers_it_with_the_mouse(project: Path) -> None:
    script = [
        Reply(calls=[Call("execute", {"command": "echo -n denied"})]),
        Reply("1"),
        Reply(calls=[Call("execute", {"command": "echo -n once"})]),
        Reply("2"),
        Reply(calls=[Call("execute", {"command": "echo -n session"})]),
        Reply("3"),
        Reply(calls=[Call("execute", {"command": "printf always"})]),
        Reply("4"),
    ]
    async with FakeOpenAI(script) as server:
        session = create_session(project, base_url=server.base_url, trust=True)
        app = TuiAgentApp(session)
        async with app.run_test(size=SIZE) as pilot:
            for n, button in enumerate(["#deny", "#once", "#session", "#always"], start=1):
                screen = await open_approval(pilot, session, f"turn {n}")
                await wait_for(pilot, lambda screen=screen: screen.armed)  # buttons enabled
                assert await pilot.click(button)
                await wait_for(
                    pilot, lambda n=n: len(server.script) == 8 - 2 * n and not session.busy
                )
            results = [json.loads(r) for r in tool_messages(session)]
            assert results[0]["error"] == "User denied permission: execute"
            assert [r.get("output") for r in results[1:]] == ["once", "session", "always"]
            assert session.extensions.kept("permissions", dict)["session"] == {
                "execute": ["echo *"]
            }
        session.conversation.journal.close()
    config = tomllib.loads((project / ".tui-agent" / "config.toml").read_text())
    assert config["permission"]["execute"] == {"printf always *": "allow"}


@pytest.mark.real_permissions
@pytest.mark.usefixtures("sandbox_off")  # execute asks
async def test_feedback_button_opens_the_feedback_box(project: Path) -> None:
    script = [Reply(calls=[Call("execute", {"command": "echo x"})]), Reply("ok")]
    async with FakeOpenAI(script) as server:
        session = create_session(project, base_url=server.base_url)
        app = TuiAgentApp(session)
        async with app.run_test(size=SIZE) as pilot:
            screen = await open_approval(pilot, session, "go")
            await wait_for(pilot, lambda: screen.armed)  # the buttons are enabled
            await pilot.click("#feedback-button")
            await pilot.pause()
            assert screen.query_one("#feedback", Input).has_focus
            await pilot.press(*"later")
            await pilot.press("enter")
            await turn_done(pilot, session, server)
            [result] = tool_messages(session)
            assert json.loads(result)["error"] == "User denied permission: execute: later"
        session.conversation.journal.close()


@pytest.mark.real_permissions
@pytest.mark.usefixtures("sandbox_off")  # execute asks
async def test_two_calls_in_one_reply_show_one_dialog_at_a_time(project: Path) -> None:
    calls = [
        Call("execute", {"command": "echo alpha"}),
        Call("execute", {"command": "printf beta"}),
    ]
    async with FakeOpenAI([Reply(calls=calls), Reply("ok")]) as server:
        session = create_session(project, base_url=server.base_url)
        app = TuiAgentApp(session)
        async with app.run_test(size=SIZE) as pilot:
            first = await open_approval(pilot, session, "both")
            assert "echo alpha" in preview_text(first)
            assert sum(isinstance(s, ApprovalScreen) for s in app.screen_stack) == 1
            await pilot.pause(0.35)
            await pilot.press("y")
            await wait_for(
                pilot, lambda: isinstance(app.screen, ApprovalScreen) and app.screen is not first
            )
            second = app.screen
            assert isinstance(second, ApprovalScreen)
            await wait_for(pilot, lambda: second.query("#approval-preview Static"))
            assert "printf beta" in preview_text(second)
            assert sum(isinstance(s, ApprovalScreen) for s in app.screen_stack) == 1
            await pilot.pause(0.35)
            await pilot.press("n")
            await turn_done(pilot, session, server)
            first_result, second_result = (json.loads(r) for r in tool_messages(session))
            assert first_result["output"].strip() == "alpha"
            assert second_result["error"] == "User denied permission: execute"
        session.conversation.journal.close()


async def test_concurrent_approval_requests_queue_behind_the_open_dialog(project: Path) -> None:
    session = create_session(project)
    app = TuiAgentApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        requests = [
            ApprovalRequest("execute", "execute", {"command": f"echo {n}"}, subject=f"echo {n}")
            for n in ("one", "two")
        ]
        tasks = [asyncio.create_task(session.permissions.ask(r)) for r in requests]
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        await pilot.pause(0.1)
        stacked = [s for s in app.screen_stack if isinstance(s, ApprovalScreen)]
        assert len(stacked) == 1
        assert stacked[0].request is requests[0]
        await pilot.pause(0.35)
        await pilot.press("y")
        await wait_for(pilot, lambda: tasks[0].done())
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, ApprovalScreen) and app.screen.request is requests[1],
        )
        assert not tasks[1].done()
        await pilot.pause(0.35)
        await pilot.press("n")
        await wait_for(pilot, lambda: tasks[1].done())
        assert tasks[0].result().choice == "once"
        assert tasks[1].result().choice == "deny"
    session.conversation.journal.close()


async def test_the_app_as_frontend_asks_with_its_dialogs_and_acts_on_the_screen(
    project: Path,
) -> None:
    """``AppFrontend``: the session's ``Frontend`` made of the app's picker, approval
    dialog, theme, clipboard and exit."""
    from tui_agent import Frontend
    from tui_agent.ui.dialogs.choice import ChoiceScreen
    from tui_agent.ui.frontend import AppFrontend

    session = create_session(project)
    app = TuiAgentApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        frontend = AppFrontend(app)
        assert isinstance(frontend, Frontend) and frontend.interactive
        assert list(frontend.themes) == sorted(app.available_themes)
        other = next(name for name in frontend.themes if name != app.theme)
        frontend.theme(other)
        assert app.theme == other
        frontend.copy("one\ntwo")
        note = "Copied to the clipboard: 2 lines, 7 characters."
        await wait_for(pilot, lambda: note in [plain(n) for n in app.chat.query(Note)])
        picked = asyncio.create_task(frontend.choose("Pick one", ("a", "b")))
        await wait_for(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        await pilot.press("down", "enter")
        await wait_for(pilot, picked.done)
        assert picked.result() == "b"
        request = ApprovalRequest("execute", "execute", {"command": "echo hi"}, subject="echo hi")
        approved = asyncio.create_task(frontend.approve(request))
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        await pilot.pause(0.35)
        await pilot.press("y")
        await wait_for(pilot, approved.done)
        assert approved.result().choice == "once"
        assert not frontend.exit_requested
        frontend.exit()
        assert frontend.exit_requested
        await wait_for(pilot, lambda: app.return_code is not None or not app.is_running)
    session.conversation.journal.close()


# -- cancel ----------------------------------------------------------------------------------


async def test_escape_cancels_a_streaming_turn_and_the_next_turn_works(project: Path) -> None:
    slow = Reply(" ".join(f"word{n}" for n in range(60)), delay=0.1)
    async with FakeOpenAI([slow, Reply("fresh answer")]) as server:
        session = create_session(project, base_url=server.base_url)
        app = TuiAgentApp(session)
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, "talk slowly")
            await wait_for(pilot, lambda: any("word1" in r for r in replies(app)))
            assert session.busy
            await pilot.press("escape")
            await wait_for(pilot, lambda: not session.busy)
            await app.workers.wait_for_complete()
            await wait_for(pilot, lambda: "Cancelled." in note_texts(app))
            cancelled = next(n for n in notes(app) if plain(n) == "Cancelled.")
            assert cancelled.has_class("error")
            assert "word59" not in "".join(replies(app))
            assert transcript_is_valid(session.conversation.messages)
            await send(pilot, "again")
            await turn_done(pilot, session, server)
            assert replies(app)[-1] == "fresh answer"
            last_request = server.requests[-1]["messages"]
            assert last_request[-1] == {"role": "user", "content": "again"}
            assert transcript_is_valid(session.conversation.messages)
        session.conversation.journal.close()


def footer_keys(app: TuiAgentApp) -> list[str]:
    return [str(key.render()).strip() for key in app.query_one(Footer).children]


async def test_the_footer_shows_cancel_only_while_a_turn_runs(project: Path) -> None:
    slow = Reply(" ".join(f"word{n}" for n in range(60)), delay=0.05)
    async with FakeOpenAI([slow, Reply("done")]) as server:
        session = create_session(project, base_url=server.base_url)
        app = TuiAgentApp(session)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            idle = footer_keys(app)
            assert any("Tools" in k for k in idle) and not any("Cancel" in k for k in idle)
            assert not any("Send" in k for k in idle)  # Enter sends, as in every chat
            await send(pilot, "talk slowly")
            await wait_for(pilot, lambda: any("Cancel" in k for k in footer_keys(app)))
            assert session.busy
            await pilot.press("escape")
            await wait_for(pilot, lambda: not session.busy)
            await app.workers.wait_for_complete()
            await wait_for(pilot, lambda: not any("Cancel" in k for k in footer_keys(app)))

            # idle, Esc and Ctrl+C close the completion menu and leave the draft alone
            await type_in(pilot, "/re")
            await pilot.press("tab")
            await pilot.pause()
            assert app.query("CompletionMenu.visible")
            await pilot.press("escape")
            await pilot.pause()
            assert not app.query("CompletionMenu.visible")
            await pilot.press("tab")
            await pilot.pause()
            assert app.query("CompletionMenu.visible")
            await pilot.press("ctrl+c")
            await pilot.pause()
            assert not app.query("CompletionMenu.visible")
            assert prompt_of(app).text == "/re"

            await send(pilot, "again")  # the turn after a cancel works
            await turn_done(pilot, session, server)
            assert replies(app)[-1] == "done"
        session.conversation.journal.close()


async def test_cancelling_a_running_tool_call_closes_its_block(project: Path) -> None:
    script = [Reply(calls=[Call("execute", {"command": "sleep 5"})]), Reply("after")]
    async with FakeOpenAI(script) as server:
        session = create_session(project, base_url=server.base_url)
        app = TuiAgentApp(session)
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, "sleep")
            await wait_for(pilot, lambda: app.chat.query(ToolCallBlock))
            await pilot.pause(0.2)
            await pilot.press("escape")
            await wait_for(pilot, lambda: not session.busy)
            await app.workers.wait_for_complete()
            await wait_for(pilot, lambda: "Cancelled." in note_texts(app))
            [result] = tool_messages(session)
            assert "cancelled" in json.loads(result)["error"]
            block = app.chat.query_one(ToolCallBlock)
            await pilot.pause(0.3)
            first = plain(block.header)
            await pilot.pause(0.3)
            # the block says the call ended (✖) and its clock stopped; no spinner left behind
            assert first.startswith("✖"), first
            assert plain(block.header) == first
            await send(pilot, "again")
            await turn_done(pilot, session, server)
            assert replies(app)[-1] == "after"
        session.conversation.journal.close()


@pytest.mark.real_permissions
@pytest.mark.usefixtures("sandbox_off")  # execute asks
async def test_ctrl_c_while_the_dialog_is_open_cancels_the_turn_and_closes_it(
    project: Path,
) -> None:
    script = [Reply(calls=[Call("execute", {"command": "echo never"})]), Reply("next")]
    async with FakeOpenAI(script) as server:
        session = create_session(project, base_url=server.base_url)
        app = TuiAgentApp(session)
        async with app.run_test(size=SIZE) as pilot:
            await open_approval(pilot, session, "go")
            await pilot.pause(0.35)
            await pilot.press("ctrl+c")
            await wait_for(pilot, lambda: not session.busy)
            await app.workers.wait_for_complete()
            await wait_for(pilot, lambda: not isinstance(app.screen, ApprovalScreen))
            await wait_for(pilot, lambda: "Cancelled." in note_texts(app))
            assert transcript_is_valid(session.conversation.messages)
            await send(pilot, "again")
            await turn_done(pilot, session, server)
            assert replies(app)[-1] == "next"
        session.conversation.journal.close()


# -- command palette -------------------------------------------------------------------------


def palette_options(app: TuiAgentApp) -> list[str]:
    if not isinstance(app.screen, CommandPalette):
        return []
    command_list = app.screen.query_one(CommandList)
    return [
        str(getattr(command_list.get_option_at_index(i).hit, "text", "") or "")  # type: ignore[attr-defined]
        for i in range(command_list.option_count)
    ]


async def test_palette_lists_commands_and_their_completions_and_runs_the_choice(
    project: Path,
) -> None:
    session = create_session(project)
    app = TuiAgentApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"/tools")
        await wait_for(pilot, lambda: "/tools" in palette_options(app))
        await pilot.press(*" rea")
        await wait_for(pilot, lambda: "/tools read" in palette_options(app))
        assert all(o.startswith("/tools rea") for o in palette_options(app) if o.startswith("/"))
        command_list = app.screen.query_one(CommandList)
        command_list.highlighted = palette_options(app).index("/tools read")
        await pilot.press("enter")
        await wait_for(pilot, lambda: not isinstance(app.screen, CommandPalette))
        await app.workers.wait_for_complete()
        await wait_for(pilot, lambda: any("path" in m for m in markdown_notes(app)))
        shown = markdown_notes(app)[-1]
        assert "read" in shown and "path" in shown
        assert any(plain(m) == "/tools read" for m in app.chat.query(UserMessage))
    session.conversation.journal.close()


async def test_palette_follows_commands_registered_at_runtime(project: Path) -> None:
    session = create_session(project)
    app = TuiAgentApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        ran: list[str | None] = []

        def zap(args: str | None) -> None:
            ran.append(args)
            session.output.say("zapped!")

        session.commands.register("zapzap", description="Zap everything", handler=zap)
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"zapzap")
        await wait_for(pilot, lambda: "/zapzap" in palette_options(app))
        command_list = app.screen.query_one(CommandList)
        command_list.highlighted = palette_options(app).index("/zapzap")
        await pilot.press("enter")
        await wait_for(pilot, lambda: "zapped!" in note_texts(app))
        assert ran == [None]
    session.conversation.journal.close()


# -- tools panel -----------------------------------------------------------------------------


def tools_table(app: TuiAgentApp) -> DataTable[Any]:
    return app.query_one("#tools-table", DataTable)


def row_names(table: DataTable[Any]) -> list[str]:
    return [str(key.value) for key in table.rows]


async def test_tools_panel_lists_tools_and_follows_adds_calls_and_selection(
    project: Path,
) -> None:
    (project / "README.md").write_text("# hello\n")
    script = [Reply(calls=[Call("read", {"path": "README.md"})]), Reply("read it")]
    async with FakeOpenAI(script) as server:
        session = create_session(project, base_url=server.base_url)
        app = TuiAgentApp(session)
        async with app.run_test(size=SIZE) as pilot:
            assert not app.query("#tools")  # mounted when first shown
            await pilot.press("ctrl+t")
            await pilot.pause()
            panel = app.query_one("#tools")
            assert panel.display
            assert panel.region.x > 0 and panel.region.right == SIZE[0]  # on the right
            assert app.chat.region.right <= panel.region.x  # the chat beside it, not under
            table = tools_table(app)
            assert set(BUNDLED_TOOLS) <= set(row_names(table))
            assert str(table.get_cell("read", "calls")) == "0"

            # a tool added at runtime shows up without a refresh
            session.toolbox.add(
                "shout",
                description="Say it loud",
                params={
                    "text": {"type": "string", "description": "What to shout"},
                    "times": {"type": "integer", "default": 1},
                },
                required=["text"],
                aliases=["yell"],
                handler=lambda args: {"said": args["text"].upper()},
            )
            await pilot.pause()
            assert "shout" in row_names(table)
            assert str(table.get_cell("shout", "aliases")) == "yell"
            hooks_before = str(table.get_cell("shout", "hooks"))
            session.toolbox.before("shout", lambda args: None)
            await pilot.pause()
            assert str(table.get_cell("shout", "hooks")) != hooks_before

            # a call through the agent bumps the Calls column and the last result
            await send(pilot, "read the readme")
            await turn_done(pilot, session, server)
            await pilot.pause()
            assert str(table.get_cell("read", "calls")) == "1"
            assert "ok" in str(table.get_cell("read", "last"))

            # selecting a row shows its parameters
            table.focus()
            table.move_cursor(row=table.get_row_index("shout"))
            await pilot.pause()
            params = plain(app.query_one("#params-table", Static))  # a table at width 200
            by_name = {line.split()[0]: line.split() for line in params.splitlines()[1:]}
            assert set(by_name) == {"text", "times"}
            assert by_name["text"][1] == "string" and by_name["text"][2] == "yes"
            assert by_name["times"][2] == "no" and by_name["times"][3] == "1"
            assert " ".join(by_name["text"][3:]) == "What to shout"
            schema = json.loads(plain(app.query_one("#params-schema", Static)))
            assert schema["required"] == ["text"]

            await pilot.press("ctrl+t")
            assert not panel.display
        session.conversation.journal.close()


async def test_tools_panel_follows_a_plugin_added_and_reloaded_at_runtime(project: Path) -> None:
    session = create_session(project)
    app = TuiAgentApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+t")
        await pilot.pause()
        table = tools_table(app)
        assert "weather" not in row_names(table)
        write(
            user_config_dir() / "plugins" / "weather.py",
            "import tui_agent\n\n"
            "@tui_agent.setup('weather')\n"
            "def _setup(session):\n"
            "    session.toolbox.add('weather', description='Today',\n"
            "                        handler=lambda args: {'sky': 'blue'})\n"
            "    @session.toolbox.before('weather')\n"
            "    def check(args):\n"
            "        pass\n",
        )
        await send(pilot, "/reload")
        await app.workers.wait_for_complete()
        await wait_for(pilot, lambda: "weather" in row_names(table))
        assert str(table.get_cell("weather", "source")).startswith("user")
        assert set(BUNDLED_TOOLS) <= set(row_names(table))
        # the hook column counts the plugin's before hook (plus the global ones)
        hooks = str(table.get_cell("weather", "hooks"))
        assert hooks != str(table.get_cell("read", "hooks"))
        await session.toolbox.run("weather", {})
        await pilot.pause()
        assert str(table.get_cell("weather", "calls")) == "1"
    session.conversation.journal.close()


# -- Tab completion --------------------------------------------------------------------------


async def test_tab_completes_a_command_name(project: Path) -> None:
    session = create_session(project)
    app = TuiAgentApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"/he")
        await pilot.press("tab")
        assert prompt_of(app).text == "/help "
        assert not app.query("CompletionMenu.visible")  # one candidate: no menu
    session.conversation.journal.close()


async def test_tab_shows_a_dropdown_and_enter_picks(project: Path) -> None:
    session = create_session(project)
    app = TuiAgentApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("/")
        await pilot.press("tab")
        await pilot.pause()
        menu = app.query_one(CompletionMenu)
        assert menu.has_class("visible")
        options = [str(menu.get_option_at_index(i).prompt) for i in range(menu.option_count)]
        assert options == session.commands.names
        await pilot.press("down")
        await pilot.press("enter")
        assert prompt_of(app).text == options[1] + " "
        assert not menu.has_class("visible")
        # Enter picked; it did not send
        assert not list(app.chat.query(UserMessage))
    session.conversation.journal.close()


async def test_tab_completes_a_commands_own_completions(project: Path) -> None:
    session = create_session(project)
    app = TuiAgentApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await type_in(pilot, "/tools gr")
        await pilot.press("tab")
        assert prompt_of(app).text == "/tools grep "
    session.conversation.journal.close()


async def test_tab_completes_file_names(project: Path) -> None:
    (project / "README.md").write_text("# hi\n")
    (project / "setup.cfg").write_text("")
    (project / "setup.py").write_text("")
    session = create_session(project)
    app = TuiAgentApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await type_in(pilot, "look at REA")
        await pilot.press("tab")
        assert prompt_of(app).text == "look at README.md "
        await pilot.press(*"and se")
        await pilot.press("tab")
        await pilot.pause()
        menu = app.query_one(CompletionMenu)
        assert menu.has_class("visible")
        assert prompt_of(app).text == "look at README.md and setup."
        await pilot.press("tab")
        assert prompt_of(app).text == "look at README.md and setup.cfg "
    session.conversation.journal.close()


async def test_clicking_a_dropdown_entry_picks_it(project: Path) -> None:
    session = create_session(project)
    app = TuiAgentApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await type_in(pilot, "/re")
        await pilot.press("tab")
        await pilot.pause()
        menu = app.query_one(CompletionMenu)
        assert menu.has_class("visible")
        options = [str(menu.get_option_at_index(i).prompt) for i in range(menu.option_count)]
        assert options == ["/redo", "/reload", "/rename", "/resume", "/rewind"]
        # the second entry sits on the menu's second content line (below the top border)
        assert await pilot.click(menu, offset=(3, 2))
        await pilot.pause()
        assert menu.highlighted == 1  # the click landed on "/reload"
        assert prompt_of(app).text == "/reload "
        assert not menu.has_class("visible")
    session.conversation.journal.close()


# -- history ---------------------------------------------------------------------------------


async def test_up_brings_back_earlier_prompts_and_history_is_saved(
    project: Path, isolated_home: Path
) -> None:
    async with FakeOpenAI([Reply("one"), Reply("two")]) as server:
        session = create_session(project, base_url=server.base_url)
        app = TuiAgentApp(session)
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, "first prompt")
            await wait_for(pilot, lambda: len(server.script) == 1 and not session.busy)
            await send(pilot, "second prompt")
            await turn_done(pilot, session, server)
            await pilot.press("up")
            assert prompt_of(app).text == "second prompt"
            await pilot.press("up")
            assert prompt_of(app).text == "first prompt"
            await pilot.press("down")
            assert prompt_of(app).text == "second prompt"
            await pilot.press("down")
            assert prompt_of(app).text == ""
        session.conversation.journal.close()
    path = history_file()
    assert path.is_file()
    assert path.is_relative_to(isolated_home)
    assert path.parent == user_data_dir()
    assert json.loads(path.read_text())[-2:] == ["first prompt", "second prompt"]

    # a new app starts with the saved history
    session = create_session(project)
    app = TuiAgentApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("up")
        assert prompt_of(app).text == "second prompt"
    session.conversation.journal.close()


async def test_ctrl_j_inserts_a_newline_and_enter_sends_both_lines(project: Path) -> None:
    async with FakeOpenAI([Reply("ok")]) as server:
        session = create_session(project, base_url=server.base_url)
        app = TuiAgentApp(session)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("a", "ctrl+j", "b")
            assert prompt_of(app).text == "a\nb"
            await pilot.press("enter")
            await turn_done(pilot, session, server)
            assert server.requests[0]["messages"][-1]["content"] == "a\nb"
        session.conversation.journal.close()


# -- commands --------------------------------------------------------------------------------


async def test_unknown_command_lists_the_commands(project: Path) -> None:
    session = create_session(project)
    app = TuiAgentApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "/nosuchthing")
        await app.workers.wait_for_complete()
        await wait_for(pilot, lambda: any("nosuchthing" in t for t in note_texts(app)))
        note = next(n for n in notes(app) if "nosuchthing" in plain(n))
        text = plain(note)
        for name in ("/help", "/tools", "/exit", "/theme"):
            assert name in text
        assert note.has_class("error")
    session.conversation.journal.close()


async def test_a_tool_run_by_a_slash_command_shows_in_the_chat(project: Path) -> None:
    """The toolbox announces every call, whoever makes it: a command's tool call gets its
    block like a model's (it could open the approval dialog but never showed before)."""
    session = create_session(project, yes=True)

    async def count(args: str | None) -> None:
        result = await session.toolbox.run("list", {"path": "."})
        session.output.say(f"listed: {result.ok}")

    app = TuiAgentApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: session.extensions.loaded)
        session.commands.register("count", description="Count", handler=count)
        await send(pilot, "/count")
        await wait_for(pilot, lambda: "listed: True" in note_texts(app))
        (block,) = app.chat.query(ToolCallBlock)
        assert block.tool_name == "list" and block.result is not None and block.result.ok
        assert block.call_id.startswith("toolbox-call-")
    session.conversation.journal.close()


async def test_a_bare_slash_lists_the_commands_and_goes_nowhere(project: Path) -> None:
    with FakeOpenAI([]) as server:
        session = create_session(project, base_url=server.base_url, model="m")
        app = TuiAgentApp(session)
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: session.extensions.loaded)
            await send(pilot, "/")
            await wait_for(pilot, lambda: any(t.startswith("Commands: ") for t in note_texts(app)))
            (listed,) = [n for n in notes(app) if plain(n).startswith("Commands: ")]
            assert "/help" in plain(listed) and not listed.has_class("error")
            await app.workers.wait_for_complete()
        assert server.requests == []  # not sent to the model
    session.conversation.journal.close()


async def test_a_raising_command_prints_the_error_in_red_and_the_app_keeps_going(
    project: Path,
) -> None:
    session = create_session(project)

    def broken(args: str | None) -> None:
        raise ValueError("the widget is jammed")

    session.commands.register("broken", description="Always fails", handler=broken)
    app = TuiAgentApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "/broken now")
        await app.workers.wait_for_complete()
        await wait_for(pilot, lambda: "error: the widget is jammed" in note_texts(app))
        note = next(n for n in notes(app) if plain(n) == "error: the widget is jammed")
        assert note.has_class("error")
        assert app.is_running
        await send(pilot, "/help")
        await app.workers.wait_for_complete()
        await wait_for(pilot, lambda: any("/broken" in m for m in markdown_notes(app)))
    session.conversation.journal.close()


async def test_exit_command_quits_the_app(project: Path) -> None:
    session = create_session(project)
    app = TuiAgentApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "/exit")
        await wait_for(pilot, lambda: app.return_code is not None or not app.is_running)
    assert app.return_code == 0
    assert session.frontend.exit_requested
    session.conversation.journal.close()


async def test_ctrl_q_quits(project: Path) -> None:
    session = create_session(project)
    app = TuiAgentApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: app.return_code is not None)
    session.conversation.journal.close()


async def test_theme_command_changes_the_theme(project: Path) -> None:
    session = create_session(project)
    app = TuiAgentApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        target = next(t for t in ("gruvbox", "nord", "dracula") if t in app.available_themes)
        assert app.theme != target
        await send(pilot, f"/theme {target}")
        await app.workers.wait_for_complete()
        await wait_for(pilot, lambda: app.theme == target)
        await send(pilot, "/theme no-such-theme")
        await app.workers.wait_for_complete()
        await wait_for(pilot, lambda: any("no-such-theme" in t for t in note_texts(app)))
        assert app.theme == target
    session.conversation.journal.close()


# -- trust -----------------------------------------------------------------------------------

PLUGIN = (
    "import tui_agent\n\n"
    "@tui_agent.setup('x')\n"
    "def _setup(session):\n"
    "    session.toolbox.add('xtool', description='From the project',\n"
    "                        handler=lambda args: {'ok': True})\n"
)


async def test_trust_dialog_yes_loads_the_project_code_and_is_remembered(project: Path) -> None:
    write(project / ".agents" / "plugins" / "x.py", PLUGIN)
    session = create_session(project)
    assert "xtool" not in session.toolbox.tools
    app = TuiAgentApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, TrustScreen))
        await pilot.press("y")
        await wait_for(pilot, lambda: "xtool" in session.toolbox.tools)
        await wait_for(pilot, lambda: any(t.startswith("Trusted") for t in note_texts(app)))
        assert not isinstance(app.screen, TrustScreen)
    session.conversation.journal.close()
    again = create_session(project)
    assert not again.workspace.needs_trust
    assert "xtool" in again.toolbox.tools
    again.conversation.journal.close()


async def test_trust_dialog_no_keeps_the_code_off_and_says_so(project: Path) -> None:
    write(project / ".agents" / "plugins" / "x.py", PLUGIN)
    session = create_session(project)
    app = TuiAgentApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, TrustScreen))
        await pilot.press("n")
        await wait_for(pilot, lambda: any(t.startswith("Not trusted") for t in note_texts(app)))
        assert "xtool" not in session.toolbox.tools
        assert not isinstance(app.screen, TrustScreen)
    session.conversation.journal.close()
    again = create_session(project)
    assert not again.workspace.needs_trust
    assert "xtool" not in again.toolbox.tools
    again.conversation.journal.close()


async def test_trust_dialog_answers_by_mouse(project: Path) -> None:
    write(project / ".agents" / "plugins" / "x.py", PLUGIN)
    session = create_session(project)
    app = TuiAgentApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, TrustScreen))
        await pilot.click("#yes")
        await wait_for(pilot, lambda: "xtool" in session.toolbox.tools)
    session.conversation.journal.close()


async def test_a_broken_config_file_is_named_as_a_config_problem(project: Path) -> None:
    config = user_config_dir() / "config.toml"
    config.write_text("model = [unclosed\n")
    session = create_session(project, provider="stub")
    app = TuiAgentApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: any("problem:" in text for text in note_texts(app)))
        problems = [text for text in note_texts(app) if "problem:" in text]
        assert problems and all(text.startswith("config problem: ") for text in problems)
        assert str(config) in problems[0]


async def test_enter_in_a_burst_of_keys_sends_the_text_the_keys_before_it_left(
    project: Path, fake_openai: FakeOpenAI
) -> None:
    """Keys that arrive together (a paste of keystrokes, tmux's send-keys, a fast typist
    over ssh) are applied in order: Enter after five Backspaces sends what they left. It
    sent the text as it was before them (Backspace is a binding, run once the key has come
    up to the app; Enter was handled in the prompt at once)."""
    from textual import events

    from tui_agent.testing import run_app, turn_over

    fake_openai.script.append(Reply("ok"))
    session = create_session(project, base_url=fake_openai.base_url, model="fake-model")
    async with run_app(session) as pilot:
        await pilot.press(*"hello world")
        await pilot.pause()
        for key in ["backspace"] * 5 + ["enter"]:  # as the driver posts a burst: no pause
            pilot.app.post_message(events.Key(key, "\r" if key == "enter" else None))
        await wait_for(pilot, lambda: len(fake_openai.requests) == 1)
        await turn_over(pilot)
        users = [m["content"] for m in fake_openai.requests[0]["messages"] if m["role"] == "user"]
        assert users == ["hello "]
        assert pilot.app.query_one(PromptArea).text == ""
