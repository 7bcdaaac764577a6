"""Issue 35: the session picker (``/resume`` with no id, ``tui-agent --resume``), driven
with Pilot in the real app; the sessions are real journals of real turns against the
testing kit's fake server. Snapshots at 80x24 and 120x40."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input, OptionList, Static

from tui_agent import Session, create_session
from tui_agent.core.conversation.journal import Journal
from tui_agent.testing import FakeOpenAI, Reply, chat_text, send, wait_for, wait_for_prompt
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.dialogs.sessions import SessionPicker, when_text

SIZE = (120, 40)


async def made(folder: Path, server: FakeOpenAI, *prompts: str) -> Session:
    session = create_session(folder, base_url=server.base_url, model="fake-model")
    for prompt in prompts:
        await session.turn(prompt)
    await session.close()
    return session


def age(session: Session, minutes: int) -> None:
    path = session.conversation.journal.path
    stamp = path.stat().st_mtime - 60 * minutes
    os.utime(path, (stamp, stamp))


@pytest.fixture
async def three(project: Path, tmp_path: Path) -> list[Session]:
    """Two sessions of ``project`` (the newest last) and one of another folder."""
    other = tmp_path / "other"
    other.mkdir()
    script = [Reply("The login code is in auth.py."), Reply("Use tenacity."), Reply("Elsewhere.")]
    async with FakeOpenAI(script) as server:
        login = await made(project, server, "where is the login code?")
        retry = await made(project, server, "how should the retry logic work?")
        elsewhere = await made(other, server, "a prompt in another folder")
    age(login, 30)
    age(elsewhere, 10)
    return [login, retry, elsewhere]


def rows(picker: SessionPicker) -> list[str]:
    options = picker.query_one(OptionList)
    return [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]


def preview(picker: SessionPicker) -> str:
    return str(picker.query_one("#sessions-preview", Static).content)


async def picker_of(pilot: Any) -> SessionPicker:
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, SessionPicker))
    picker = pilot.app.screen
    await wait_for(pilot, lambda: picker.is_mounted and picker.query(OptionList))
    await wait_for(pilot, lambda: picker.query_one(OptionList).option_count or picker.found == [])
    return picker


async def test_resume_without_an_id_picks_filters_previews_and_resumes(
    project: Path, three: list[Session]
) -> None:
    login = three[0]
    session = create_session(project)
    async with TuiAgentApp(session).run_test(size=SIZE) as pilot:
        await wait_for_prompt(pilot)
        await send(pilot, "/resume")
        picker = await picker_of(pilot)
        shown = rows(picker)
        assert len(shown) == 2  # this folder's: the other folder's is not offered
        assert "how should the retry logic work?" in shown[0]  # newest first
        assert "where is the login code?" in shown[1]
        assert "1 turn" in shown[1] and "30 min" in shown[1] and "fake-model" in shown[1]
        assert "Use tenacity." in preview(picker)  # the highlighted one's last exchange
        assert "how should the retry logic work?" in preview(picker)

        await pilot.press(*"login")  # typing filters
        assert len(rows(picker)) == 1 and "login" in rows(picker)[0]
        assert "The login code is in auth.py." in preview(picker)
        await pilot.press(*" nothing")
        assert rows(picker) == [] and "No session matches" in preview(picker)
        for _ in " nothing":
            await pilot.press("backspace")
        await pilot.press("enter")  # resumes the one highlighted
        await wait_for(pilot, lambda: not isinstance(pilot.app.screen, SessionPicker))
        await wait_for(pilot, lambda: session.id == login.id)
        await wait_for(pilot, lambda: "The login code is in auth.py." in chat_text(pilot.app))
        assert session.conversation.messages == login.conversation.messages
        assert f"Resumed {login.id} (where is the login code?)" in chat_text(pilot.app)
        assert isinstance(pilot.app.focused, type(pilot.app.prompt))


async def test_tab_shows_every_folder_and_another_folders_session_is_not_resumed_here(
    project: Path, three: list[Session]
) -> None:
    elsewhere = three[2]
    session = create_session(project)
    before = session.id
    async with TuiAgentApp(session).run_test(size=SIZE) as pilot:
        await wait_for_prompt(pilot)
        await send(pilot, "/resume")
        picker = await picker_of(pilot)
        await pilot.press("tab")
        assert picker.everywhere
        shown = rows(picker)
        assert len(shown) == 3 and "a prompt in another folder" in shown[1]
        assert "/other" in shown[1]  # each row says its folder
        await pilot.press("down", "enter")
        await wait_for(pilot, lambda: "was started in" in chat_text(pilot.app))
        text = chat_text(pilot.app)
        assert f"--resume {elsewhere.id}" in text and str(elsewhere.directory) in text
        assert session.id == before and not session.conversation.messages
        await pilot.press("tab")  # the prompt's Tab again: the picker has gone


async def test_esc_cancels_and_nothing_changes(project: Path, three: list[Session]) -> None:
    async with FakeOpenAI([Reply("kept")]) as server:
        session = create_session(project, base_url=server.base_url)
        async with TuiAgentApp(session).run_test(size=SIZE) as pilot:
            await wait_for_prompt(pilot)
            await send(pilot, "stay here")
            await wait_for(pilot, lambda: not session.busy and "kept" in chat_text(pilot.app))
            before = (session.id, list(session.conversation.messages))
            await send(pilot, "/resume")
            await picker_of(pilot)
            await pilot.press("escape")
            await wait_for(pilot, lambda: not isinstance(pilot.app.screen, SessionPicker))
            await pilot.pause(0.1)
            assert (session.id, list(session.conversation.messages)) == before
            assert "kept" in chat_text(pilot.app)


async def test_the_picker_opens_at_start_for_tui_agent_resume(
    project: Path, three: list[Session]
) -> None:
    """What ``tui-agent --resume`` (no id) gives the app: the session made after the first
    frame, then the picker; Enter resumes."""
    login = three[0]
    app = TuiAgentApp(make_session=lambda: create_session(project), directory=project)
    app.start_line = "/resume"
    async with app.run_test(size=SIZE) as pilot:
        await picker_of(pilot)
        await pilot.press("down", "enter")
        await wait_for(pilot, lambda: app.session.id == login.id)
        await wait_for(pilot, lambda: "The login code is in auth.py." in chat_text(app))


async def test_resume_without_an_id_asks_about_trust_first(
    project: Path, three: list[Session]
) -> None:
    """An untrusted folder with project code: ``tui-agent --resume`` shows the trust
    question alone; the picker opens once it is answered (not on top of it)."""
    from tui_agent.ui.dialogs.approval import TrustScreen

    login = three[0]
    plugin = project / ".agents" / "plugins" / "x.py"
    plugin.parent.mkdir(parents=True)
    plugin.write_text("import tui_agent\n")
    app = TuiAgentApp(  # as `tui-agent --resume` makes it (cli.py): loaded by the app
        make_session=lambda: create_session(project, load=False), directory=project
    )
    app.start_line = "/resume"
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: any(isinstance(s, TrustScreen) for s in app.screen_stack))
        await pilot.pause(0.5)  # the picker would have opened by now
        assert isinstance(app.screen, TrustScreen)
        assert not any(isinstance(screen, SessionPicker) for screen in app.screen_stack)
        await pilot.press("n")
        picker = await picker_of(pilot)
        assert len(rows(picker)) == 2
        await pilot.press("down", "enter")
        await wait_for(pilot, lambda: app.session.id == login.id)
        await wait_for(pilot, lambda: "The login code is in auth.py." in chat_text(app))


async def test_rename_shows_in_the_picker_and_an_empty_folder_says_so(
    project: Path, tmp_path: Path
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    async with TuiAgentApp(create_session(empty)).run_test(size=SIZE) as pilot:
        await wait_for_prompt(pilot)
        await send(pilot, "/resume")
        picker = await picker_of(pilot)
        assert rows(picker) == []
        assert "No saved sessions for this folder yet" in preview(picker)
        await pilot.press("enter")  # nothing to pick: the picker stays
        assert isinstance(pilot.app.screen, SessionPicker)
        await pilot.press("escape")
        await send(pilot, "/rename   the empty one ")
        await wait_for(pilot, lambda: "now called: the empty one" in chat_text(pilot.app))
        await send(pilot, "/rename")
        await wait_for(pilot, lambda: "a title needs some text" in chat_text(pilot.app))
        await send(pilot, "/resume")
        picker = await picker_of(pilot)
        assert "the empty one" in rows(picker)[0] and "(current)" in rows(picker)[0]
        await pilot.press("enter")
        await wait_for(pilot, lambda: "is the session you are in" in chat_text(pilot.app))


@pytest.mark.parametrize(
    ("ago", "shown"), [(5, "now"), (125, "2 min"), (3 * 3600, "3 h"), (2 * 86400, "2 d")]
)
def test_when_is_short(ago: int, shown: str) -> None:
    assert when_text(1_000_000 - ago, now=1_000_000) == shown


# -- snapshots --------------------------------------------------------------------------------

STAMP = 1748779200  # 2025-06-01 12:00 UTC: old enough to be shown as its date


def journal(
    folder: Path, session_id: str, exchanges: list[tuple[str, str]], model: str, size: int
) -> None:
    """A journal as a session writes it (the real Journal), its time fixed, and its size:
    it holds the folder's path, whose length changes from run to run (pytest-9 and
    pytest-10), so it is padded with blank lines (which a journal skips) to ``size``."""
    written = Journal(session_id, folder)
    written.write_record({"type": "model", "provider": "openai", "model": model})
    for prompt, reply in exchanges:
        written.append({"role": "user", "content": prompt})
        written.append({"role": "assistant", "content": reply})
    written.close()
    padding = size - written.path.stat().st_size
    assert padding >= 0, "a longer folder path than the test expects"
    with written.path.open("a", encoding="utf-8") as file:
        file.write("\n" * padding)
    os.utime(written.path, (STAMP, STAMP))


@pytest.fixture
def demo(isolated_home: Path) -> Path:
    root = isolated_home / "demo"
    (root / ".git").mkdir(parents=True)
    journal(
        root,
        "20250601-120000-aaaaaa",
        [
            ("fix the login bug: the session cookie expires after five minutes", "Done."),
            (
                "now add a test for it",
                "I added `test_cookie_lifetime` in tests/test_auth.py; it fails before the "
                "fix and passes after. Run it with `pytest -k cookie`.",
            ),
        ],
        "qwen2.5-coder:32b",
        1024,
    )
    journal(
        root,
        "20250531-093000-bbbbbb",
        [("explain the retry logic of the HTTP client and suggest a simpler design", "…")],
        "gpt-4.1-mini",
        768,
    )
    return root


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_picker_snapshot(snap_compare: Any, demo: Path, size: tuple[int, int]) -> None:

    async def run_before(pilot: Any) -> None:
        (await wait_for_prompt(pilot)).cursor_blink = False
        await send(pilot, "/resume")
        picker = await picker_of(pilot)
        picker.query_one(Input).cursor_blink = False
        await pilot.pause(0.2)

    assert snap_compare(
        TuiAgentApp(create_session(demo)), terminal_size=size, run_before=run_before
    )


async def test_in_the_app_the_models_title_comes_after_the_turn_and_shows_in_the_picker(
    project: Path, user_config_dir: Path
) -> None:
    path = user_config_dir / "config.toml"
    path.write_text(path.read_text() + "\n[sessions]\nmodel_titles = true\n")
    script = [Reply("It is in auth.py.", delay=0.01), Reply("Login code location")]
    async with FakeOpenAI(script) as server:
        session = create_session(project, base_url=server.base_url)
        async with TuiAgentApp(session).run_test(size=SIZE) as pilot:
            await send(pilot, "where is the login code?")
            await wait_for(pilot, lambda: session.conversation.titled_by == "model")
            assert "Login code location" not in chat_text(pilot.app)  # not a reply
            await send(pilot, "/resume")
            picker = await picker_of(pilot)
            assert "Login code location" in rows(picker)[0]


async def test_a_commands_working_timer_that_fires_as_the_app_closes_does_nothing(
    project: Path,
) -> None:
    """A slash command's "working…" timer (0.2 s) once fired while the app was closing,
    with no screen left: ``ScreenStackError`` ended the test above. It does nothing then."""
    app = TuiAgentApp(create_session(project, provider="stub"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_prompt(pilot)
    assert not app.screen_stack
    app._show_working()  # as the timer would, now
