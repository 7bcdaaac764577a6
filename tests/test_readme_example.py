"""The README's plugin-testing example, run as written (with the seed's wc plugin)."""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import FIXTURES

from tui_agent import create_session
from tui_agent.testing import (
    Call,
    FakeOpenAI,
    Reply,
    chat_text,
    run_app,
    send,
    turn_over,
    wait_for_text,
)


async def test_wc_tool(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    plugins = tmp_path / ".agents" / "plugins"
    plugins.mkdir(parents=True)
    shutil.copy(FIXTURES / "wc.py", plugins / "wc.py")
    # --- as in the README ---
    (tmp_path / "a.txt").write_text("one two\n")
    fake_openai.script += [
        Reply(calls=[Call("wc", {"path": str(tmp_path / "a.txt")})]),
        Reply("It has 2 words."),
    ]
    session = create_session(tmp_path, base_url=fake_openai.base_url, model="m", trust=True)
    assert await session.turn("count a.txt") == "It has 2 words."
    assert '"words": 2' in fake_openai.requests[1]["messages"][-1]["content"]


async def test_wc_in_the_app(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    plugins = tmp_path / ".agents" / "plugins"
    plugins.mkdir(parents=True)
    shutil.copy(FIXTURES / "wc.py", plugins / "wc.py")
    # --- as in the README ---
    (tmp_path / "a.txt").write_text("one two\n")
    fake_openai.script += [
        Reply(calls=[Call("wc", {"path": str(tmp_path / "a.txt")})]),
        Reply("It has 2 words."),
    ]
    session = create_session(
        tmp_path, base_url=fake_openai.base_url, model="m", trust=True, yes=True
    )
    async with run_app(session) as pilot:
        await send(pilot, "count a.txt")
        await wait_for_text(pilot, "It has 2 words.")
        await turn_over(pilot)
        assert "✔ wc" in chat_text(pilot.app)


async def test_my_reviewer_agent(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    from tui_agent.testing import agent_of

    # --- as in the README ---
    (tmp_path / ".claude" / "agents").mkdir(parents=True)
    (tmp_path / ".claude" / "agents" / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: Reviews code\ntools: Read, Grep\n---\nBe strict.\n"
    )
    (tmp_path / "a.py").write_text("x = 1\n")
    fake_openai.script += [
        Reply(calls=[Call("task", {"prompt": "review a.py", "agent": "reviewer"})]),
        Reply("The reviewer found nothing."),
    ]
    fake_openai.for_agent(
        "reviewer",
        [Reply(calls=[Call("read", {"path": "a.py"})]), Reply("a.py looks fine.")],
    )
    session = create_session(tmp_path, base_url=fake_openai.base_url, model="m", trust=True)
    assert await session.turn("review my code") == "The reviewer found nothing."
    child = [body for body in fake_openai.requests if agent_of(body) == "reviewer"]
    assert [t["function"]["name"] for t in child[0]["tools"]] == ["read", "grep"]
    assert '"output": "a.py looks fine."' in fake_openai.requests[-1]["messages"][-1]["content"]
