"""Memory files in a session (plugins/memory.py, core/project/memory.py): what the model's
requests carry (FakeOpenAI records them), a subfolder's file joining once a tool reaches
it, ``/memory``, the memory rows of ``/context`` and the bundled ``/init``.

The repository is tests/fixtures/memory/repo (real files, SOURCES.md): ``AGENTS.md`` at the
top (agentskills), ``pkg/AGENTS.md`` (pydantic-ai's toolsets/AGENTS.md) and
``docs/CLAUDE.md`` (pydantic-ai's CLAUDE.md); the user's ``AGENTS.md`` is
agent-plugins-spec's. ``pkg/x.py``, ``pkg/y.py`` and ``docs/guide.md`` are made here."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import write

import tui_agent
from tui_agent import create_session
from tui_agent.core.util.paths import user_config_dir
from tui_agent.testing import Call, FakeOpenAI, Reply

FIXTURES = Path(__file__).parents[1] / "fixtures" / "memory"
TOP = "Agent Skills is a small, portable, client-neutral format."  # repo/AGENTS.md
GLOBAL = "Define the smallest genuinely portable interoperability floor"  # user/AGENTS.md
PKG = "Toolsets are reusable tool collections with lifecycle"  # repo/pkg/AGENTS.md
DOCS = "Every pull request MUST have 100% coverage."  # repo/docs/CLAUDE.md


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(FIXTURES / "repo", root)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    write(root / "pkg" / "x.py", "X = 1\n")
    write(root / "pkg" / "y.py", "Y = 2\n")
    write(root / "docs" / "guide.md", "# Guide\n")
    shutil.copy(FIXTURES / "user" / "AGENTS.md", user_config_dir() / "AGENTS.md")
    return root


def system(request: dict[str, Any]) -> str:
    first = request["messages"][0]
    assert first["role"] == "system"
    return str(first["content"])


def tool_results(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [json.loads(m["content"]) for m in request["messages"] if m["role"] == "tool"]


def said(session: tui_agent.Session, start: int) -> str:
    return "\n".join(note.text for note in list(session.output.history)[start:])


async def run(session: tui_agent.Session, line: str) -> str:
    start = len(session.output.history)
    assert await session.commands.run_line(line) is True
    return said(session, start)


async def test_a_subfolders_file_joins_once_when_a_tool_reads_there(repo: Path) -> None:
    """The issue's "Done means": "A repository with AGENTS.md at the top, pkg/AGENTS.md and
    docs/CLAUDE.md: the first request carries the top one (and the global), reading
    pkg/x.py adds pkg/AGENTS.md once." docs/CLAUDE.md joins only when docs/ is reached.
    The files are in the system prompt, not the history, so compaction keeps them; a new
    conversation starts without the subfolders' files."""
    script = [
        Reply(calls=[Call("read", {"path": "pkg/x.py"})]),
        Reply(calls=[Call("read", {"path": "pkg/y.py"})]),
        Reply("read both"),
        Reply(calls=[Call("read", {"path": "docs/guide.md"})]),
        Reply("read the guide"),
        Reply("SUMMARY: read pkg and docs"),  # /compact's summary
        Reply("after compaction"),
        Reply("after clear"),
    ]
    async with FakeOpenAI(script) as server:
        session = create_session(repo, base_url=server.base_url, model="fake-model")
        assert await session.turn("look at pkg") == "read both"
        first, second, third = (system(r) for r in server.requests[:3])
        assert TOP in first and GLOBAL in first
        assert first.index(GLOBAL) < first.index(TOP)  # the global first, the nearest last
        assert PKG not in first and DOCS not in first
        assert second.count(PKG) == 1 and third.count(PKG) == 1  # once
        assert DOCS not in third
        note = tool_results(server.requests[1])[0]["instructions"]
        assert "Instructions from pkg/AGENTS.md now apply" in note
        assert "instructions" not in tool_results(server.requests[2])[1]  # y.py: nothing new

        assert await session.turn("and the docs") == "read the guide"
        assert DOCS in system(server.requests[4]) and PKG in system(server.requests[4])
        note = tool_results(server.requests[4])[-1]["instructions"]
        assert "docs/CLAUDE.md" in note

        await session.conversation.budget.compact("command", force=True)
        assert await session.turn("go on") == "after compaction"
        kept = system(server.requests[-1])
        assert PKG in kept and DOCS in kept and TOP in kept

        session.conversation.clear()
        assert await session.turn("fresh") == "after clear"
        fresh = system(server.requests[-1])
        assert TOP in fresh and PKG not in fresh and DOCS not in fresh


async def test_edit_write_and_list_reach_a_folder_too(repo: Path) -> None:
    """Claude Code loads a nested CLAUDE.md when it reads files in that subtree; opencode
    when it reads a file or lists a folder; a file the agent writes or edits is worked on
    there too. grep and glob search trees and reach nothing."""
    write(repo / "a" / "AGENTS.md", "RULES-A")
    write(repo / "b" / "AGENTS.md", "RULES-B")
    write(repo / "c" / "AGENTS.md", "RULES-C")
    write(repo / "d" / "AGENTS.md", "RULES-D")
    write(repo / "a" / "f.txt", "old\n")
    script = [
        Reply(calls=[Call("grep", {"pattern": "old", "path": "a"})]),
        Reply(calls=[Call("edit", {"path": "a/f.txt", "old": "old", "new": "new"})]),
        Reply(calls=[Call("write", {"path": "b/new.txt", "content": "x"})]),
        Reply(calls=[Call("list", {"path": "c"})]),
        Reply("done"),
    ]
    async with FakeOpenAI(script) as server:
        session = create_session(repo, base_url=server.base_url, model="fake-model")
        await session.turn("work")
    prompts = [system(r) for r in server.requests]
    assert "RULES-A" not in prompts[1]  # after grep
    assert "RULES-A" in prompts[2] and "RULES-B" not in prompts[2]
    assert "RULES-B" in prompts[3]
    assert "RULES-C" in prompts[4]
    assert "RULES-D" not in prompts[4]


async def test_memory_lists_the_files_scopes_tokens_and_what_was_left_out(repo: Path) -> None:
    """Claude Code: "You can see what memory files are loaded by running /memory"."""
    write(repo / "CLAUDE.local.md", "My sandbox is at http://localhost:9999. See @notes.md")
    write(repo / "notes.md", "NOTES")
    write(Path.home() / ".ssh" / "config", "Host *")
    write(repo / "AGENTS.md", (repo / "AGENTS.md").read_text() + "\nAlso @~/.ssh/config\n")
    session = create_session(repo)
    text = await run(session, "/memory")
    rows = [line for line in text.splitlines() if line.startswith("| ")][1:]
    assert [row.split("|")[2].strip() for row in rows] == [
        str(Path("~/.config/tui-agent/AGENTS.md")),
        "AGENTS.md",
        "CLAUDE.local.md",
        "notes.md",
    ]
    assert [row.split("|")[3].strip() for row in rows] == [
        "user",
        "project",
        "local",
        "import (from CLAUDE.local.md)",
    ]
    assert all(int(row.split("|")[4].strip().replace(",", "")) > 0 for row in rows)
    assert "`@~/.ssh/config` in AGENTS.md: outside the repository" in text
    session.workspace.memory.touch("pkg/x.py")
    assert "| 5 | pkg/AGENTS.md | nested |" in await run(session, "/memory")


async def test_memory_n_or_path_says_where_to_edit_it_without_an_editor_frontend(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Headless (no screen to step aside from): ``/memory N`` names the file and the
    command that opens it in ``$VISUAL`` / ``$EDITOR``."""
    monkeypatch.setenv("EDITOR", "nano")
    monkeypatch.delenv("VISUAL", raising=False)
    session = create_session(repo)
    text = await run(session, "/memory 2")
    assert f"`nano {repo / 'AGENTS.md'}`" in text
    assert "Memory file AGENTS.md" in await run(session, "/memory AGENTS.md")
    assert "pkg/AGENTS.md" in await run(session, "/memory pkg/AGENTS.md")
    with pytest.raises(ValueError, match="no memory file 9"):
        await session.commands.run("memory", "9")
    with pytest.raises(ValueError, match="not a memory file"):
        await session.commands.run("memory", "pkg/x.py")


async def test_no_memory_files_says_how_to_make_one(project: Path) -> None:
    session = create_session(project)
    text = await run(session, "/memory")
    assert "No memory files" in text and "/init" in text


async def test_context_shows_each_memory_file_and_the_skills_catalog(repo: Path) -> None:
    """The issue: "The tokens these take appear in /context": each memory file is a row
    under the system prompt; the skills catalog (the ``skill`` tool's description) under
    the tool definitions."""
    session = create_session(repo)
    text = await run(session, "/context")
    assert "| ↳ memory file AGENTS.md (project) | |" in text
    user_row = next(line for line in text.splitlines() if "tui-agent/AGENTS.md (user)" in line)
    assert int(user_row.split("|")[3].strip().replace(",", "")) > 1000  # 5 KB of text
    assert "skills catalog" not in text  # no skills: no skill tool
    write(
        Path.home() / ".agents" / "skills" / "pdf-forms" / "SKILL.md",
        "---\nname: pdf-forms\ndescription: Fill PDF forms and read their fields.\n---\n"
        "Use pypdf.\n",
    )  # made for the test: one user skill, read by the skills plugin
    await session.reload()
    assert "skill" in session.toolbox.tools
    text = await run(session, "/context")
    row = next(line for line in text.splitlines() if "skills catalog" in line)
    assert int(row.split("|")[3].strip().replace(",", "")) > 20


async def test_init_is_a_bundled_markdown_command_that_asks_for_agents_md(repo: Path) -> None:
    """opencode: "To create a new AGENTS.md file, you can run the /init command ... If you
    already have an AGENTS.md, /init will improve it in place." A bundled Markdown
    command: its prompt is the turn, the words typed after it are added."""
    async with FakeOpenAI([Reply("wrote it")]) as server:
        session = create_session(repo, base_url=server.base_url, model="fake-model")
        command = session.commands.get("init")
        assert command is not None and command.source == "markdown"
        assert "(bundled)" in command.description
        await session.commands.run("init", "focus on the tests")
    prompt = server.requests[0]["messages"][-1]["content"]
    assert "AGENTS.md" in prompt and "improve it in place" in prompt
    assert prompt.rstrip().endswith("ARGUMENTS: focus on the tests")


async def test_a_users_or_projects_init_md_replaces_the_bundled_one(repo: Path) -> None:
    """A command file takes the name of a bundled command, as opencode lets it (the
    Markdown commands' rule): the user's init.md, then the trusted project's."""
    write(user_config_dir() / "commands" / "init.md", "MY OWN INIT\n")
    session = create_session(repo)
    command = session.commands.get("init")
    assert command is not None and "replaces the bundled /init" in command.description
    assert any("replaces the bundled /init" in note.text for note in session.output.history)
    write(repo / ".claude" / "commands" / "init.md", "THE PROJECT'S INIT\n")
    trusted = create_session(repo, trust=True)
    template = getattr(trusted.commands.get("init").handler, "template", None)
    assert template is not None and template.body == "THE PROJECT'S INIT\n"


async def test_a_plugins_init_command_wins_over_the_bundled_file(repo: Path) -> None:
    plugin = user_config_dir() / "plugins" / "myinit.py"
    write(
        plugin,
        "import tui_agent\n"
        "@tui_agent.setup('myinit')\n"
        "def setup(session):\n"
        "    session.commands.register('init', description='MINE', handler=lambda a: None)\n",
    )
    session = create_session(repo)
    assert session.commands.get("init").description == "MINE"
    assert not session.extensions.problems


def test_headless_run_init_sends_its_prompt_and_memory_lists(repo: Path) -> None:
    """``tui-agent run "/init"`` (SPEC: "tui-agent run "/name args" runs a slash command"):
    the bundled Markdown command's prompt is the turn and the reply is the output; the
    system message of that request carries the memory files. ``run "/memory"`` prints
    the table without asking the model."""
    import os
    import sys

    def cli(*args: str, server: FakeOpenAI) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "tui_agent", *args]
        argv += ["--base-url", server.base_url, "--model", "fake-model"]
        return subprocess.run(
            argv,
            cwd=repo,
            env=dict(os.environ),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )

    with FakeOpenAI([Reply("Wrote AGENTS.md.")]) as server:
        done = cli("run", "/init", server=server)
        assert done.returncode == 0, done.stderr
        assert done.stdout == "Wrote AGENTS.md.\n"
        (request,) = server.requests
        assert "write an `AGENTS.md` at its top" in request["messages"][-1]["content"]
        assert TOP in system(request) and GLOBAL in system(request)

        listed = cli("run", "/memory", server=server)
        assert listed.returncode == 0, listed.stderr
        assert "| 2 | AGENTS.md | project |" in listed.stdout
        assert len(server.requests) == 1
