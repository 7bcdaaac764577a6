"""A few SVG snapshots of the real app (pytest-textual-snapshot). Update them on purpose
with ``pytest tests/ui/test_snapshots.py --snapshot-update`` and look at the diff."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tui_agent import ApprovalRequest, create_session
from tui_agent.testing import wait_for, wait_for_prompt
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.dialogs import approval
from tui_agent.ui.dialogs.approval import ApprovalScreen

SIZE = (100, 30)


@pytest.fixture
def home_project(isolated_home: Path) -> Path:
    """A project under HOME, so every path on screen is the same on every machine (~/demo)."""
    root = isolated_home / "demo"
    root.mkdir()
    (root / ".git").mkdir()
    (root / "README.md").write_text("# demo\n")
    return root


async def still(pilot: Any) -> None:
    (await wait_for_prompt(pilot)).cursor_blink = False
    await pilot.pause()


def test_start_screen_with_the_stub_banner(snap_compare: Any, home_project: Path) -> None:
    app = TuiAgentApp(create_session(home_project))
    assert snap_compare(app, terminal_size=SIZE, run_before=still)


def test_help_output(snap_compare: Any, home_project: Path) -> None:
    app = TuiAgentApp(create_session(home_project))

    async def run_before(pilot: Any) -> None:
        await still(pilot)
        await pilot.press(*"/help", "enter")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause(0.2)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_tools_panel_with_parameters(snap_compare: Any, home_project: Path) -> None:
    app = TuiAgentApp(create_session(home_project))

    async def run_before(pilot: Any) -> None:
        await still(pilot)
        await pilot.press("ctrl+t")
        await pilot.pause()
        table = pilot.app.query_one("#tools-table")
        table.move_cursor(
            row=list(table.rows).index(next(k for k in table.rows if k.value == "edit"))
        )
        await pilot.pause(0.2)

    assert snap_compare(app, terminal_size=(130, 36), run_before=run_before)


async def settled(pilot: Any, rounds: int = 50) -> None:
    """Until two screenshots 0.1 s apart are the same: the tools table refits its columns
    after its cells change, and under load a fixed pause caught it half redrawn."""
    before = None
    for _ in range(rounds):
        await pilot.pause(0.1)
        now = pilot.app.export_screenshot()
        if now == before:
            return
        before = now


def choose_tool(name: str) -> Any:
    """Open the tools panel and select ``name``."""

    async def run_before(pilot: Any) -> None:
        await still(pilot)
        await pilot.press("ctrl+t")
        await pilot.pause()
        table = pilot.app.query_one("#tools-table")
        table.move_cursor(row=table.get_row_index(name))
        await settled(pilot)

    return run_before


def test_tools_panel_and_the_status_beside_it_at_80x24(
    snap_compare: Any, home_project: Path
) -> None:
    """The narrow panel: fewer columns, read's descriptions whole, no scrollbar across, and
    the status under the prompt shortened instead of cut."""
    app = TuiAgentApp(create_session(home_project))
    assert snap_compare(app, terminal_size=(80, 24), run_before=choose_tool("read"))


def test_tools_panel_at_120x40(snap_compare: Any, home_project: Path) -> None:
    app = TuiAgentApp(create_session(home_project))
    assert snap_compare(app, terminal_size=(120, 40), run_before=choose_tool("read"))


REQUEST = ApprovalRequest(
    tool="execute",
    called_as="execute",
    args={"command": "python -m pytest -q && git status --short"},
    subject="python -m pytest -q ; git status --short",
    rule="default for execute",
    session_pattern="python *, git status *",
)


def test_approval_dialog_before_its_key_guard_ends(
    snap_compare: Any, home_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The buttons dimmed (disabled) while keys are still ignored."""
    monkeypatch.setattr(approval, "GUARD_SECONDS", 3600)
    app = TuiAgentApp(create_session(home_project))

    async def run_before(pilot: Any) -> None:
        await still(pilot)
        pilot.app.push_screen(ApprovalScreen(REQUEST))
        await pilot.pause(0.2)
        assert not pilot.app.screen.armed

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


OUTSIDE = ApprovalRequest(  # the escape hatch: a command the model wants run unsandboxed
    tool="execute",
    called_as="execute",
    args={"command": "pip install -e .", "sandbox": False},
    subject="pip install -e .",
    rule="sandbox: false — runs OUTSIDE the sandbox (always asked)",
    session_pattern="pip install *",
)


def test_approval_dialog_armed(snap_compare: Any, home_project: Path) -> None:
    """Armed, for a command the model asks to run outside the sandbox."""
    app = TuiAgentApp(create_session(home_project))

    async def run_before(pilot: Any) -> None:
        await still(pilot)
        pilot.app.push_screen(ApprovalScreen(OUTSIDE))
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ApprovalScreen))
        await wait_for(pilot, lambda: pilot.app.screen.armed)
        await pilot.pause(0.1)

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


@pytest.mark.real_permissions
def test_trust_dialog(snap_compare: Any, home_project: Path) -> None:
    plugins = home_project / ".agents" / "plugins"
    plugins.mkdir(parents=True)
    (plugins / "hello.py").write_text("import tui_agent\n")
    app = TuiAgentApp(create_session(home_project))
    assert snap_compare(app, terminal_size=SIZE, run_before=still)
