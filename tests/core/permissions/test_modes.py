"""Permission modes (issue 17): ask, auto-edit, plan, allow-all; Shift+Tab in the app;
deny rules hold in every mode. Real turns through the real client against the testing
kit's server, with the real permission plugin (no allow-all test config)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import write

from tui_agent import create_session
from tui_agent.core.project.config import user_config_file
from tui_agent.events import ModeChanged
from tui_agent.testing import Call, FakeOpenAI, Reply, wait_for_prompt

pytestmark = pytest.mark.real_permissions


def offered(body: dict[str, Any]) -> list[str]:
    return sorted(tool["function"]["name"] for tool in body.get("tools") or [])


def results(server: FakeOpenAI) -> list[str]:
    """The tool results the model got, in order."""
    return [
        str(m.get("content"))
        for body in server.requests
        for m in body["messages"]
        if m.get("role") == "tool"
    ]


async def test_plan_mode_offers_only_read_only_tools_and_says_it_is_planning(
    project: Path,
) -> None:
    write(project / "a.txt", "alpha\n")
    with FakeOpenAI() as server:
        session = create_session(project, base_url=server.base_url, model="m", yes=True)
        seen: list[Any] = []
        session.events.listen(lambda e: seen.append(e) if isinstance(e, ModeChanged) else None)
        session.permissions.set_mode("plan")
        assert [e.mode for e in seen] == ["plan"]
        server.script += [
            Reply(calls=[Call("write", {"path": "b.txt", "content": "no\n"})]),
            Reply("Plan: 1. read a.txt …"),
        ]
        await session.turn("plan a change")
        first = server.requests[0]
        # task too: delegating changes nothing, and the subagent's tools are these; fetch
        # too (a GET changes nothing here; each host is still asked about)
        assert offered(first) == ["fetch", "glob", "grep", "list", "read", "task", "todo"]
        assert "You are in plan mode" in first["messages"][0]["content"]
        # called anyway (a model may): refused, nothing written, even with allow-all before
        assert not (project / "b.txt").exists()
        assert "plan mode" in results(server)[-1] and "Permission denied" in results(server)[-1]

        session.permissions.set_mode("ask")
        server.script.append(Reply("ok"))
        await session.turn("go on")
        assert "write" in offered(server.requests[-1])
        assert "plan mode" not in server.requests[-1]["messages"][0]["content"]


@pytest.mark.usefixtures("sandbox_off")  # commands ask: unsandboxed
async def test_auto_edit_allows_writes_inside_the_worktree_only(project: Path) -> None:
    outside = project.parent / "outside.txt"
    with FakeOpenAI() as server:
        session = create_session(
            project, base_url=server.base_url, model="m"
        )  # headless: asks are denied
        session.permissions.set_mode("auto-edit")
        server.script += [
            Reply(
                calls=[
                    Call("write", {"path": "inside.txt", "content": "in\n"}),
                    Call("edit", {"path": "inside.txt", "old": "in", "new": "IN"}),
                    Call("write", {"path": str(outside), "content": "out\n"}),
                    Call("write", {"path": ".tui-agent/config.toml", "content": "x = 1\n"}),
                    Call("execute", {"command": "echo hi > shell.txt"}),
                ]
            ),
            Reply("done"),
        ]
        await session.turn("edit things")
    assert (project / "inside.txt").read_text() == "IN\n"
    assert not outside.exists()  # outside the worktree: still asks (denied headless)
    assert not (project / ".tui-agent" / "config.toml").exists()  # protected: still asks
    assert not (project / "shell.txt").exists()  # commands: still ask
    said = results(server)
    assert said[0].startswith('{"written"') or "inside.txt" in said[0]
    assert sum("nobody was asked" in r for r in said) == 3


async def test_allow_all_allows_every_ask_but_deny_rules_hold(project: Path) -> None:
    write(user_config_file(), '[permission.execute]\n"*" = "ask"\n"rm *" = "deny"\n')
    write(project / "keep.txt", "keep\n")
    with FakeOpenAI() as server:
        session = create_session(project, base_url=server.base_url, model="m")
        assert session.permissions.mode == "ask" and not session.permissions.yes
        session.permissions.set_mode("allow-all")
        assert session.permissions.yes
        server.script += [
            Reply(
                calls=[
                    Call("execute", {"command": "echo made > made.txt"}),
                    Call("execute", {"command": "rm keep.txt"}),
                ]
            ),
            Reply("done"),
        ]
        await session.turn("do it")
    assert (project / "made.txt").read_text() == "made\n"
    assert (project / "keep.txt").exists()
    assert "Permission denied: execute" in results(server)[-1]


async def test_yes_starts_in_allow_all_and_a_bad_mode_is_refused(project: Path) -> None:
    assert create_session(project, yes=True).permissions.mode == "allow-all"
    session = create_session(project)
    assert session.permissions.mode == "ask"
    with pytest.raises(ValueError, match="unknown mode 'yolo'"):
        session.permissions.set_mode("yolo")
    start = len(session.output.history)
    assert await session.commands.run_line("/permissions mode plan")
    assert session.permissions.mode == "plan"
    assert "Mode: plan" in session.output.history[start].text
    assert await session.commands.run_line("/permissions")
    assert "**Mode: plan**" in session.output.history[-1].text


async def test_shift_tab_cycles_the_mode_shown_on_the_prompts_border(project: Path) -> None:
    from tui_agent.testing import run_app, send, wait_for

    session = create_session(project)
    async with run_app(session, size=(120, 30)) as pilot:
        prompt = await wait_for_prompt(pilot)

        def border() -> str:
            return str(prompt.border_subtitle)

        await wait_for(pilot, lambda: "mode: ask" in border())
        seen = []
        for _ in range(4):
            await pilot.press("shift+tab")
            await wait_for(pilot, lambda: f"mode: {session.permissions.mode}" in border())
            seen.append(session.permissions.mode)
        assert seen == ["auto-edit", "plan", "ask", "auto-edit"]
        await send(pilot, "/permissions mode allow-all")
        await wait_for(pilot, lambda: "mode: allow-all" in border())
        await pilot.press("shift+tab")  # allow-all is never a key away: back to ask
        await wait_for(pilot, lambda: "mode: ask" in border())
        assert session.permissions.mode == "ask"


@pytest.mark.usefixtures("sandbox_off")  # execute asks
async def test_shift_tab_in_a_dialog_moves_focus_not_the_mode(project: Path) -> None:
    from tui_agent.testing import run_app, send, wait_for

    with FakeOpenAI() as server:
        session = create_session(project, base_url=server.base_url, model="m")
        server.script += [
            Reply(calls=[Call("execute", {"command": "echo hi"})]),
            Reply("done"),
        ]
        async with run_app(session) as pilot:
            await send(pilot, "run it")
            await wait_for(pilot, lambda: type(pilot.app.screen).__name__ == "ApprovalScreen")
            await pilot.pause(0.4)
            before = pilot.app.focused
            await pilot.press("shift+tab")
            await pilot.pause()
            assert session.permissions.mode == "ask"
            assert pilot.app.focused is not before
            await pilot.press("n")
            await wait_for(pilot, lambda: not session.busy)
    assert json.loads(results(server)[-1]).get("error", "").startswith("User denied")


async def test_allow_all_in_the_app_opens_no_dialog(project: Path) -> None:
    from tui_agent.testing import run_app, send, turn_over

    with FakeOpenAI() as server:
        session = create_session(project, base_url=server.base_url, model="m")
        server.script += [
            Reply(calls=[Call("execute", {"command": "echo made > made.txt"})]),
            Reply("done"),
        ]
        async with run_app(session) as pilot:
            dialogs: list[str] = []
            await send(pilot, "/permissions mode allow-all")
            await send(pilot, "run it")

            def watch() -> None:
                dialogs.append(type(pilot.app.screen).__name__)

            pilot.app.set_interval(0.01, watch)
            await turn_over(pilot)
            assert "ApprovalScreen" not in dialogs
    assert (project / "made.txt").read_text() == "made\n"
