"""Issue 17, the rough edges on screen: the tools panel fits its width (whole descriptions,
no stray scrollbars) at 80×24 and 120×40, the status under the prompt is shortened by
priority instead of cut, and the approval dialog shows its keys and its key guard.

Pilot tests against the real app; what is checked is what the widgets draw."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from textual.geometry import Region
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Button, DataTable, Static

from tui_agent import create_session
from tui_agent.testing import (
    Call,
    FakeOpenAI,
    Reply,
    run_app,
    send,
    turn_over,
    wait_for,
    wait_for_prompt,
)
from tui_agent.ui.dialogs import approval
from tui_agent.ui.dialogs.approval import ApprovalScreen
from tui_agent.ui.status import StatusPart, fit_status
from tui_agent.ui.tools_panel import ToolsPanel

SMALL, LARGE = (80, 24), (120, 40)
LONG = (
    "How many times to shout it [default: 3]; each time louder than the last, until the "
    "neighbours complain and the text reaches the end of a very long line"
)


def drawn(widget: Widget) -> list[str]:
    """The lines ``widget`` draws (borders included), as text."""
    width, height = widget.outer_size
    return [strip.text for strip in widget.render_lines(Region(0, 0, width, height))]


def words(lines: list[str]) -> str:
    """Drawn lines as one line of words: a wrapped description reads whole again."""
    return " ".join(" ".join(lines).split())


def status_line(pilot: Pilot[Any]) -> str:
    return drawn(pilot.app.query_one("#prompt"))[-1]


def add_shout(session: Any) -> None:
    session.toolbox.add(
        "shout",
        description="Say it loud",
        params={
            "text": {"type": "string", "description": "What to shout"},
            "times": {"type": "integer", "default": 3, "description": LONG},
        },
        required=["text"],
        aliases=["yell", "holler"],
        handler=lambda args: {"said": args["text"].upper()},
    )


async def open_panel(pilot: Pilot[Any], select: str) -> ToolsPanel:
    app: Any = pilot.app
    await pilot.press("ctrl+t")
    await wait_for(pilot, lambda: app.tools_panel is not None and app.tools_panel.built)
    panel: ToolsPanel = app.tools_panel
    await choose(pilot, panel, select)
    return panel


async def choose(pilot: Pilot[Any], panel: ToolsPanel, name: str) -> None:
    table = panel.query_one("#tools-table", DataTable)
    table.move_cursor(row=table.get_row_index(name))
    await wait_for(pilot, lambda: panel.selected == name)
    await pilot.pause(0.1)


# -- the tools panel ----------------------------------------------------------------------


@pytest.mark.parametrize("size", [SMALL, LARGE], ids=["80x24", "120x40"])
async def test_the_tools_panel_fits_its_width_and_shows_whole_descriptions(
    project: Path, size: tuple[int, int]
) -> None:
    session = create_session(project)
    async with run_app(session, size=size) as pilot:
        await wait_for(pilot, lambda: session.extensions.loaded)
        add_shout(session)
        panel = await open_panel(pilot, "shout")
        table = panel.query_one("#tools-table", DataTable)
        # no scrollbar across anything in the panel, and the table's columns fit its width
        assert [w for w in panel.query("*") if w.show_horizontal_scrollbar] == []
        assert table.virtual_size.width <= table.scrollable_content_region.width
        # every parameter's whole description, wrapped where the panel is narrow
        params = words(drawn(panel.query_one("#params-table", Static)))
        assert LONG in params and "What to shout" in params
        assert "[default: 3]" in params  # as typed, not taken for markup
        # what a column left out of a narrow table still shows: the line under the title
        detail = words(drawn(panel.query_one("#tool-detail", Static)))
        assert "aliases: yell, holler" in detail and "hooks: 1 before, 0 after" in detail
        assert "source: " in detail and "calls: 0" in detail
        if size == LARGE:
            assert panel.columns == ["name", "aliases", "source", "hooks", "calls", "last"]
        else:
            assert "name" in panel.columns and len(panel.columns) < 6
        # read's descriptions were cut at the panel's edge ("First line (1", "Most lines to")
        await choose(pilot, panel, "read")
        params = words(drawn(panel.query_one("#params-table", Static)))
        assert "First line (1-based)" in params and "Most lines to return" in params
    session.conversation.journal.close()


async def test_a_long_error_in_the_tools_table_is_cut_and_whole_in_the_detail(
    project: Path,
) -> None:
    error = "the server at example.invalid refused the request: " + "try again later " * 4
    error = error.strip()
    script = [Reply(calls=[Call("fail", {})]), Reply("done")]
    async with FakeOpenAI(script) as server:
        session = create_session(project, base_url=server.base_url)
        async with run_app(session, size=SMALL) as pilot:
            await wait_for(pilot, lambda: session.extensions.loaded)

            def broken(args: dict[str, Any]) -> Any:
                raise RuntimeError(error)

            session.toolbox.add("fail", description="Always fails", handler=broken)
            panel = await open_panel(pilot, "fail")
            await send(pilot, "go")
            await turn_over(pilot)
            await pilot.pause(0.1)
            table = panel.query_one("#tools-table", DataTable)
            last = str(table.get_cell("fail", "last"))
            assert last.startswith("✖ ") and last.endswith("…") and len(last) <= 20
            assert table.virtual_size.width <= table.scrollable_content_region.width
            assert error in words(drawn(panel.query_one("#tool-detail", Static)))
        session.conversation.journal.close()


# -- the status under the prompt ----------------------------------------------------------


PARTS = [
    StatusPart(("openai / demo-model", "demo-model", ""), (20, 40)),
    StatusPart(("ctx 41% of 32k", "ctx 41%", ""), (30, 60)),
    StatusPart(("1234 tokens", ""), (10,)),
    StatusPart(("mode: auto-edit", "auto-edit"), (50,)),
    StatusPart(("working…",)),
]


@pytest.mark.parametrize(
    ("width", "expected"),
    [
        (200, "openai / demo-model · ctx 41% of 32k · 1234 tokens · mode: auto-edit · working…"),
        (70, "openai / demo-model · ctx 41% of 32k · mode: auto-edit · working…"),
        (60, "demo-model · ctx 41% of 32k · mode: auto-edit · working…"),
        (52, "demo-model · ctx 41% · mode: auto-edit · working…"),
        (40, "ctx 41% · mode: auto-edit · working…"),
        (30, "ctx 41% · auto-edit · working…"),
        (20, "auto-edit · working…"),
        (5, "auto-edit · working…"),  # what always stays is left for the border to cut
    ],
)
def test_the_status_gives_way_by_worth(width: int, expected: str) -> None:
    assert fit_status(PARTS, width) == expected
    assert len(expected) <= width or width < 20


def test_a_status_part_needs_a_worth_for_each_shorter_text() -> None:
    with pytest.raises(ValueError):
        StatusPart(("a", "b"))


async def test_the_status_stays_readable_beside_the_tools_panel_and_refits(
    project: Path,
) -> None:
    script = [Reply("Slowly " * 30, delay=0.05)]
    async with FakeOpenAI(script, models=["demo-model"]) as server:
        session = create_session(project, base_url=server.base_url, model="demo-model")
        async with run_app(session, size=SMALL) as pilot:
            await wait_for(pilot, lambda: session.extensions.loaded)
            await wait_for_prompt(pilot)
            await pilot.pause(0.1)
            full = status_line(pilot)
            assert "openai / demo-model · ctx " in full and "0 tokens · mode: ask" in full

            await open_panel(pilot, "read")
            beside = status_line(pilot)
            assert "…" not in beside, beside  # shortened, not cut
            assert "tokens" not in beside and "mode: ask" in beside and "ctx " in beside

            await pilot.press("shift+tab")  # the permission mode's label stays in view
            await wait_for(pilot, lambda: "auto-edit" in status_line(pilot))
            assert "…" not in status_line(pilot)

            await send(pilot, "go")
            await wait_for(pilot, lambda: "working…" in status_line(pilot))
            busy = status_line(pilot)
            assert "…" not in busy.replace("working…", "") and "auto-edit" in busy
            await turn_over(pilot)

            await pilot.resize_terminal(*LARGE)  # a wider prompt beside the panel: more shows
            await wait_for(pilot, lambda: "demo-model" in status_line(pilot))
            assert "…" not in status_line(pilot)

            await pilot.press("ctrl+t")  # the panel closes: the whole status again
            await wait_for(pilot, lambda: "tokens" in status_line(pilot))
            whole = r"openai / demo-model · ctx \d+% of 32k · \d+ tokens · mode: auto-edit"
            assert re.search(whole, status_line(pilot))
        session.conversation.journal.close()


# -- the approval dialog ------------------------------------------------------------------


def buttons(screen: ApprovalScreen) -> list[Button]:
    return list(screen.query("#approval-buttons Button").results(Button))


def label_background(button: Button) -> tuple[int, int, int]:
    """The colour the button's label ("Allow once") is drawn on."""
    strips = button.render_lines(Region(0, 0, *button.outer_size))
    line = next(strip for strip in strips if "Allow" in strip.text)
    segment = next(s for s in line if "Allow" in s.text)
    assert segment.style is not None and segment.style.bgcolor is not None
    return tuple(segment.style.bgcolor.get_truecolor())  # type: ignore[return-value]


@pytest.mark.real_permissions
@pytest.mark.usefixtures("sandbox_off")  # execute asks
async def test_the_approval_buttons_show_their_keys_and_are_dimmed_until_armed(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(approval, "GUARD_SECONDS", 1.0)  # room for the checks in between
    script = [Reply(calls=[Call("execute", {"command": "echo guarded"})]), Reply("ok")]
    async with FakeOpenAI(script) as server:
        session = create_session(project, base_url=server.base_url)
        async with run_app(session, size=SMALL) as pilot:
            app = pilot.app
            await send(pilot, "go")
            await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen))
            screen = app.screen
            assert isinstance(screen, ApprovalScreen)
            await pilot.pause(0.05)
            shown = [drawn(b)[1].strip() for b in buttons(screen)]  # between its edges
            assert shown == ["y Allow once", "s For session", "a Always", "n Deny", "f Feedback"]
            # every button fits the 80-column dialog
            row = screen.query_one("#approval-buttons")
            assert all(b.region.right <= row.region.right for b in buttons(screen))

            # unarmed: disabled, drawn dimmed; a key and a click do nothing
            assert not screen.armed and all(b.disabled for b in buttons(screen))
            once = screen.query_one("#once", Button)
            dim = label_background(once)
            await pilot.press("y")
            await pilot.click("#once")
            await pilot.pause(0.05)
            assert app.screen is screen and not screen.armed
            assert session.busy and server.requests and len(server.requests) == 1

            # armed: the buttons light up and the key answers
            await wait_for(pilot, lambda: screen.armed, timeout=3)
            await pilot.pause(0.05)
            lit = label_background(once)
            assert 2 * sum(dim) < sum(lit), (dim, lit)  # drawn clearly darker while disabled
            await pilot.press("y")
            await turn_over(pilot)
            [result] = [m for m in session.conversation.messages if m.get("role") == "tool"]
            assert json.loads(result["content"])["output"].strip() == "guarded"
        session.conversation.journal.close()
