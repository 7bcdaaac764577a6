"""Issue 30: ``tui-agent agents`` and ``/agents`` list the agents a session has: the
bundled ones, the user's (HOME is the test's own, conftest), a trusted project's, each
with its source, tools and model, and what loading the files found wrong."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tui_agent import create_session
from tui_agent.cli import main

FIXTURES = Path(__file__).parent / "fixtures" / "agents"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / ".claude" / "agents").mkdir(parents=True)
    (folder / ".opencode" / "agent").mkdir(parents=True)
    shutil.copy(FIXTURES / "claude" / "code-reviewer.md", folder / ".claude" / "agents")
    shutil.copy(FIXTURES / "claude" / "design-bridge.md", folder / ".claude" / "agents")
    shutil.copy(FIXTURES / "opencode" / "review.md", folder / ".opencode" / "agent")
    user = Path.home() / ".claude" / "agents"
    user.mkdir(parents=True)
    shutil.copy(FIXTURES / "claude" / "python-pro.md", user)
    return folder


def test_tui_agent_agents_json(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["agents", "-C", str(project), "--trust", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    agents = {agent["name"]: agent for agent in listed["agents"]}
    assert list(agents) == [
        "general",
        "explore",
        "python-pro",
        "review",
        "code-reviewer",
        "design-bridge",
    ]
    reviewer = agents["code-reviewer"]
    assert reviewer["tools"] == ["read", "grep", "glob", "execute"]
    assert (reviewer["source"], reviewer["dialect"], reviewer["model"]) == (
        "project",
        "claude",
        None,
    )
    assert agents["review"]["tools"] is None
    assert agents["review"]["denied"] == ["write", "edit", "execute"]
    assert agents["python-pro"]["source"] == "user"
    bridge = project / ".claude" / "agents" / "design-bridge.md"
    assert listed["problems"] == [
        f"{bridge}:4: Claude Code's WebSearch has no counterpart here: left out"
    ]
    assert listed["skipped"] == []


def test_tui_agent_agents_in_an_untrusted_project(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["agents", "-C", str(project)]) == 0
    out = capsys.readouterr().out
    assert "python-pro" in out  # the user's agents load
    table, left_out = out.split("not loaded:", 1)
    assert "code-reviewer" not in table and "code-reviewer" in left_out  # a file left out
    assert "the project is not trusted (tui-agent trust)" in out


def test_tui_agent_agents_table(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # one line a row
    assert main(["agents", "-C", str(project), "--trust"]) == 0
    out = capsys.readouterr().out
    assert "Agents" in out
    row = next(line for line in out.splitlines() if line.lstrip().startswith("code-reviewer"))
    assert "read, grep," in row and "session" in row
    review = next(line for line in out.splitlines() if line.lstrip().startswith("review "))
    assert "all but write," in review
    assert "problem: " in out and "WebSearch has no counterpart here" in " ".join(out.split())
    assert "note: python-pro: model sonnet not configured here (anthropic)" in out


async def test_the_agents_command(project: Path) -> None:
    session = create_session(project, trust=True)
    start = len(session.output.history)
    await session.commands.run_line("/agents")
    said = list(session.output.history)[start:]
    assert [note.kind for note in said] == ["markdown"]
    text = said[0].text
    assert (
        "| `code-reviewer` | .claude/agents/code-reviewer.md | read, grep, glob, execute "
        "| session | Expert code review specialist. |"
    ) in text
    assert "| `python-pro` | ~/.claude/agents/python-pro.md |" in text
    assert (
        "| `review` (all) |" not in text
        and "| `review` | .opencode/agent/review.md | all but write, edit, execute | session |"
        in text
    )
    assert "**Problems**" in text and "WebSearch has no counterpart here" in text
    assert "/agents" in session.commands.names


async def test_the_agents_command_in_an_untrusted_project(project: Path) -> None:
    session = create_session(project)
    start = len(session.output.history)
    await session.commands.run_line("/agents")
    text = list(session.output.history)[start:][-1].text
    assert "`code-reviewer`" not in text
    assert "**Not loaded**" in text and "the project is not trusted" in text
