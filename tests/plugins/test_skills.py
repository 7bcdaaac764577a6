"""Agent Skills through the real loop (issue 31): the scripted model (the testing kit's
server) sees the catalog in the ``skill`` tool's description, loads a skill from
anthropics/skills and runs the script the skill names; ``/name ARGS`` sends the skill as
the prompt; a bad ``SKILL.md`` is one clear load problem and the others load; project
skills wait for trust; ``/skills`` lists them; a loaded skill survives a compaction."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, write

from tui_agent import create_session
from tui_agent.core.conversation import compaction
from tui_agent.core.project.config import user_config_file
from tui_agent.events import Compacted
from tui_agent.testing import Call, FakeOpenAI, Reply, transcript_problem

SKILLS = FIXTURES / "skills"


def install(folder: Path, *names: str, source: Path = SKILLS / "anthropics") -> Path:
    """Copy skills (whole folders, file modes kept) into ``folder``."""
    for name in names:
        shutil.copytree(source / name, folder / name)
    return folder


def user_skills(home: Path) -> Path:
    return home / ".agents" / "skills"


def tool(body: dict[str, Any], name: str) -> dict[str, Any] | None:
    found = [t["function"] for t in body.get("tools", []) if t["function"]["name"] == name]
    return found[0] if found else None


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [json.loads(m["content"]) for m in body["messages"] if m["role"] == "tool"]


async def test_the_model_lists_loads_and_uses_a_skills_script(
    project: Path, isolated_home: Path
) -> None:
    """Done means: "the model (scripted) lists, loads and uses a skill's script". The
    client guide's tiers: the catalog (name and description) at the start, the
    instructions when activated, the resources (scripts) when the instructions reference
    them; "Skill directory" in the result so the model runs them by absolute path."""
    install(user_skills(isolated_home), "webapp-testing", "mcp-builder")

    def respond(body: dict[str, Any]) -> Reply:
        last = body["messages"][-1]
        if last["role"] == "user":
            return Reply(calls=[Call("skill", {"name": "webapp-testing"})])
        output = json.loads(last["content"]).get("output", "")
        folder = re.search(r"^Skill directory: (.+)$", output, re.MULTILINE)
        if folder and "usage:" not in output:
            command = f"python3 {folder.group(1)}/scripts/with_server.py --help"
            return Reply(calls=[Call("execute", {"command": command})])
        return Reply("The helper starts servers, then runs the test.")

    async with FakeOpenAI(responder=respond) as server:
        session = create_session(project, base_url=server.base_url, model="fake-model")
        reply = await session.turn("test the login page of my web app")
        assert reply == "The helper starts servers, then runs the test."
        assert server.rejected == []
        first, second, third = server.requests
        listed = tool(first, "skill")
        assert listed is not None  # tier 1: names and descriptions, no bodies
        assert (
            "- webapp-testing: Toolkit for interacting with and testing local web"
            in (listed["description"])
        )
        assert "- mcp-builder: Guide for creating high-quality MCP" in listed["description"]
        assert "Decision Tree" not in json.dumps(first)
        assert listed["parameters"]["properties"]["name"]["enum"] == [
            "mcp-builder",
            "webapp-testing",
        ]
        [loaded] = tool_results(second)  # tier 2: the instructions, the folder, the files
        text = loaded["output"]
        folder = (user_skills(isolated_home) / "webapp-testing").resolve()
        assert text.startswith('<skill_content name="webapp-testing">\n# Web Application Testing')
        assert "## Decision Tree: Choosing Your Approach" in text
        assert f"Skill directory: {folder}" in text
        assert "<file>scripts/with_server.py</file>" in text
        assert "def is_server_ready" not in text  # listed, not read
        ran = tool_results(third)[-1]  # tier 3: the script, run by the model
        assert "error" not in ran, ran
        assert "usage: with_server.py" in ran["output"]
        assert "Run command with one or more servers" in ran["output"]
        session.conversation.journal.close()


async def test_no_skills_no_tool(project: Path) -> None:
    """Client guide: "If no skills are discovered, omit the catalog … Don't … register a
    skill tool with no valid options"."""
    session = create_session(project)
    await session.extensions.settled()
    assert "skill" not in session.toolbox.tools
    assert "skill" not in json.dumps(session.extensions.offered_tools())


async def test_a_bad_skill_is_one_clear_problem_and_the_others_load(project: Path) -> None:
    """Done means: "an invalid SKILL.md … gives one clear load problem"."""
    folder = project / ".agents" / "skills"
    install(folder, "webapp-testing")
    install(folder, "bad-name", source=SKILLS / "made" / "invalid")
    session = create_session(project, trust=True)
    problems = [p for p in session.extensions.problems if "SKILL.md" in p.path]
    assert [str(p) for p in problems] == [
        f"{folder / 'bad-name' / 'SKILL.md'}:2: the name 'bad--name' must not hold two "
        "hyphens in a row"
    ]
    assert session.toolbox.tools["skill"].params["name"]["enum"] == ["webapp-testing"]
    assert "webapp-testing" in session.commands


async def test_an_untrusted_projects_skills_wait_for_trust(project: Path) -> None:
    """The trust rule: a project's skills are project code (its instructions steer the
    model, its scripts run)."""
    path = install(project / ".claude" / "skills", "webapp-testing") / "webapp-testing"
    session = create_session(project)
    assert "skill" not in session.toolbox.tools
    assert path / "SKILL.md" in session.extensions.skipped
    assert session.workspace.needs_trust
    session.workspace.trust()
    await session.reload()
    assert session.toolbox.tools["skill"].params["name"]["enum"] == ["webapp-testing"]


async def test_slash_name_sends_the_skill_with_the_arguments(project: Path) -> None:
    """ "the user can also run one as /name ARGS"; Claude Code's ``$ARGUMENTS`` and ``$0``.
    The conversation keeps what was typed as the prompt."""
    install(project / ".tui-agent" / "skills", "git-summary", source=SKILLS / "made" / "valid")
    async with FakeOpenAI([Reply("Three changes.")]) as server:
        session = create_session(project, base_url=server.base_url, model="m", trust=True)
        assert await session.commands.run_line("/git-summary v1.0")
        sent = server.requests[0]["messages"][-1]["content"]
        assert sent.startswith('<skill_content name="git-summary">\n# Git summary')
        assert "Run `git log --oneline v1.0..HEAD` and `git diff --stat v1.0`" in sent
        assert session.conversation.messages[0].prompt == "/git-summary v1.0"
        session.conversation.journal.close()


async def test_who_may_use_a_skill(isolated_home: Path, project: Path) -> None:
    """Claude Code: ``disable-model-invocation: true`` keeps it from the model (the client
    guide: "Hide filtered skills entirely from the catalog"); ``user-invocable: false``
    gives no ``/name``."""
    install(user_skills(isolated_home), "deploy", "house-style", source=SKILLS / "made" / "valid")
    session = create_session(project)
    assert session.toolbox.tools["skill"].params["name"]["enum"] == ["house-style"]
    assert "deploy" not in session.toolbox.tools["skill"].description
    assert "deploy" in session.commands and "house-style" not in session.commands
    result = await session.toolbox.run("skill", {"name": "deploy"})
    assert not result.ok  # not one of the tool's names


async def test_a_command_of_that_name_keeps_it(isolated_home: Path, project: Path) -> None:
    """A bundled command keeps its name (a load problem says so), the model can still load
    the skill; a Markdown command file of a skill's name is reported (a skill wins, as in
    Claude Code: "If a skill and a command share the same name, the skill takes
    precedence")."""
    write(
        user_skills(isolated_home) / "help" / "SKILL.md", "---\nname: help\ndescription: H\n---\n"
    )
    install(user_skills(isolated_home), "webapp-testing")
    write(isolated_home / ".claude" / "commands" / "webapp-testing.md", "Test it.\n")
    session = create_session(project)
    assert session.commands.get("help").source.startswith("bundled:commands")
    assert session.commands.get("webapp-testing").source == "skill:user"
    said = [str(p) for p in session.extensions.problems]
    assert any("/help is already a command (from bundled:commands.py)" in p for p in said), said
    assert any("webapp-testing.md: /webapp-testing is already a command" in p for p in said)
    assert session.toolbox.tools["skill"].params["name"]["enum"] == ["help", "webapp-testing"]


async def test_loading_again_says_so_briefly(isolated_home: Path, project: Path) -> None:
    """Client guide: "If the model … attempts to load a skill that's already in context,
    you can skip the re-injection"."""
    install(user_skills(isolated_home), "webapp-testing")
    script = [
        Reply(calls=[Call("skill", {"name": "webapp-testing"})]),
        Reply(calls=[Call("skill", {"name": "webapp-testing"})]),
        Reply("ok"),
    ]
    async with FakeOpenAI(script) as server:
        session = create_session(project, base_url=server.base_url, model="m")
        await session.turn("test it")
        first, again = tool_results(server.requests[2])
        assert first["output"].startswith('<skill_content name="webapp-testing">')
        assert again["output"].startswith("The skill webapp-testing is already loaded")
        assert len(again["output"]) < 300
        session.conversation.journal.close()


async def test_skills_lists_them(isolated_home: Path, project: Path) -> None:
    """``/skills``: name, source, description, size (and who may use each)."""
    install(user_skills(isolated_home), "webapp-testing", "mcp-builder")
    install(project / ".agents" / "skills", "git-summary", source=SKILLS / "made" / "valid")
    session = create_session(project, trust=True)
    notes: list[str] = []
    session.output.listen(lambda note: notes.append(note.text))
    await session.commands.run_line("/skills")
    [table] = notes
    assert (
        "- **webapp-testing** — Toolkit for interacting with and testing local web "
        "applications using Playwright.  \n  user `~/.agents/skills/webapp-testing` · "
        "3.8 KB, 5 files, ~"
    ) in table
    # the project's folder relative to it
    assert "- **git-summary** — " in table
    assert "  project `.agents/skills/git-summary` · " in table
    assert "The catalog (the skill tool's description): ~" in table


def configure(**settings: Any) -> None:
    lines = [f"{key} = {json.dumps(value)}" for key, value in settings.items()]
    write(user_config_file(), "\n".join(lines) + '\n[permission]\n"*" = "allow"\n')


async def test_a_skill_summarised_away_follows_the_summary(
    isolated_home: Path, project: Path
) -> None:
    """ "Loaded skills survive compaction"; client guide: "exempt skill content from
    pruning … losing them mid-conversation silently degrades the agent's performance"."""
    install(user_skills(isolated_home), "webapp-testing")
    configure(context_window=5120)  # the tools' definitions (fetch's too) fit with room

    def respond(body: dict[str, Any]) -> Reply:
        first = str(body["messages"][0].get("content", ""))
        if first.startswith("You summarise a conversation"):
            return Reply("SUMMARY: the app was tested.")
        last = body["messages"][-1]
        if last["role"] == "user" and str(last["content"]).startswith("test"):
            return Reply(calls=[Call("skill", {"name": "webapp-testing"})])
        return Reply("Answered.")

    async with FakeOpenAI(context_limit=5120, responder=respond) as server:
        session = create_session(project, base_url=server.base_url, model="fake-model")
        events: list[Any] = []
        session.events.listen(events.append)
        await session.turn("test the app")
        for n in range(12):
            await session.turn(f"question {n}: " + "tell me more about this " * 60)
        compacted = [e for e in events if isinstance(e, Compacted)]
        assert compacted and compacted[-1].summarised
        assert server.overflowed == [] and server.rejected == []
        messages = session.conversation.messages
        assert compaction.is_summary(messages[0])
        assert [m for m in messages if m["role"] == "tool"] == []  # the call went...
        summary = messages[0].text
        assert "SUMMARY: the app was tested." in summary  # ...and the skill follows
        assert summary.rstrip().endswith("</skill_content>")
        assert '<skill_content name="webapp-testing">\n# Web Application Testing' in summary
        sent = server.requests[-1]["messages"]
        assert "## Decision Tree" in sent[1]["content"]  # what the model got next
        assert transcript_problem(session.conversation.request("system")) is None
        session.conversation.journal.close()


async def test_pruning_keeps_a_skills_result_whole(isolated_home: Path, project: Path) -> None:
    install(user_skills(isolated_home), "webapp-testing")
    for n in range(4):
        write(project / f"notes{n}.txt", f"line {n} of the notes\n" * 120)
    configure(context_window=4096)

    def respond(body: dict[str, Any]) -> Reply:
        last = body["messages"][-1]
        if last["role"] == "user" and last["content"] == "test":
            return Reply(calls=[Call("skill", {"name": "webapp-testing"})])
        if last["role"] == "user":
            return Reply(calls=[Call("read", {"path": f"notes{last['content'].split()[-1]}.txt"})])
        return Reply("Read it.")

    async with FakeOpenAI(context_limit=4096, responder=respond) as server:
        session = create_session(project, base_url=server.base_url, model="fake-model")
        events: list[Any] = []
        session.events.listen(events.append)
        await session.turn("test")
        for n in range(4):
            await session.turn(f"read notes {n}")
        compacted = [e for e in events if isinstance(e, Compacted)]
        assert compacted and all(e.pruned and not e.summarised for e in compacted)
        tools = [m for m in session.conversation.messages if m["role"] == "tool"]
        assert any(m.result.get("pruned") for m in tools)  # old reads were pruned
        kept = tools[0].result  # the skill's: given its content back
        assert not kept.get("pruned")
        assert kept["output"].startswith('<skill_content name="webapp-testing">')
        assert kept["note"] == "kept whole through a compaction"
        assert transcript_problem(session.conversation.request("system")) is None
        session.conversation.journal.close()


@pytest.mark.parametrize("as_json", [True, False])
def test_tui_agent_skills(
    isolated_home: Path, project: Path, capsys: pytest.CaptureFixture[str], as_json: bool
) -> None:
    from tui_agent.cli import main

    install(user_skills(isolated_home), "webapp-testing", "mcp-builder")
    install(project / ".agents" / "skills", "bad-name", source=SKILLS / "made" / "invalid")
    assert main(["skills", "--trust", "-C", str(project), *(["--json"] if as_json else [])]) == 0
    out, err = capsys.readouterr()
    assert "bad-name/SKILL.md:2: the name 'bad--name' must not hold two hyphens" in err
    if as_json:
        listed = json.loads(out)
        assert [s["name"] for s in listed] == ["mcp-builder", "webapp-testing"]
        web = listed[1]
        assert web["source"] == "user" and web["size"] == 3913 and web["files"] == 5
        assert web["path"] == str(user_skills(isolated_home) / "webapp-testing" / "SKILL.md")
    else:
        assert "webapp-testing" in out and "mcp-builder" in out and "3.8 KB" in out
        assert "The catalog (the skill tool's description): ~235 tokens" in out


PLUGINS = FIXTURES / "agent_plugins"  # the Agent Plugins conformance suite's (verbatim)


async def test_agent_plugins_skills_load_from_skills_folder(
    isolated_home: Path, project: Path
) -> None:
    """Agent Plugins 1.0 §7.1: "Each immediate child directory containing a path named
    exactly SKILL.md … is treated as one skill. Clients MUST NOT recursively search deeper
    descendants"; "If a discovered skill does not conform … the client MUST skip that skill
    and continue loading other skills". The conformance suite's core and recovery plugins,
    copied without their ``mcp.json`` (no server is started: this is about skills)."""
    plugins = isolated_home / ".agents" / "plugins"
    for name in ("agent-plugins-conformance-core", "agent-plugins-conformance-recovery"):
        shutil.copytree(PLUGINS / name, plugins / name, ignore=shutil.ignore_patterns("mcp.json"))
    replies = [Reply(calls=[Call("skill", {"name": "conformance-alpha"})]), Reply("Observed.")]
    async with FakeOpenAI(replies) as server:
        session = create_session(project, base_url=server.base_url, model="m")
        skill = session.toolbox.tools["skill"]
        assert skill.params["name"]["enum"] == [
            "conformance-alpha",
            "conformance-beta",
            "conformance-recovery-valid",
        ]  # not conformance-nested (deeper), not the malformed one
        invalid = plugins / "agent-plugins-conformance-recovery" / "skills"
        said = [str(p) for p in session.extensions.problems]
        assert any(
            p.startswith(f"{invalid / 'conformance-recovery-invalid' / 'SKILL.md'}:")
            and "not valid YAML" in p
            for p in said
        ), said
        await session.turn("run the conformance probe")
        [loaded] = tool_results(server.requests[1])
        assert "This skill's marker is `APC_ALPHA_V1`." in loaded["output"]
        root = (plugins / "agent-plugins-conformance-core").resolve()
        assert f"Skill directory: {root / 'skills' / 'conformance-alpha'}" in loaded["output"]
        assert "<file>references/conformance-nested/SKILL.md</file>" in loaded["output"]
        notes: list[str] = []
        session.output.listen(lambda note: notes.append(note.text))
        await session.commands.run_line("/skills")
        assert "- **conformance-beta** — " in notes[0]
        assert "  plugin:agent-plugins-conformance-core `~/.agents/plugins/" in notes[0]
        session.conversation.journal.close()


def test_tui_agent_run_slash_name(isolated_home: Path, project: Path) -> None:
    """``tui-agent run "/name args"`` runs a slash command (SPEC §11): a skill's goes to
    the model as the prompt, its reply on stdout (a real process, as a user runs it)."""
    import os
    import subprocess
    import sys

    install(user_skills(isolated_home), "git-summary", source=SKILLS / "made" / "valid")
    with FakeOpenAI([Reply("Three changes since v1.")]) as server:
        argv = [sys.executable, "-m", "tui_agent", "run", "--base-url", server.base_url]
        done = subprocess.run(
            [*argv, "--model", "m", "/git-summary v1"],
            cwd=project,
            env=dict(os.environ),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        sent = server.requests[0]["messages"][-1]["content"]
    assert (done.returncode, done.stdout) == (0, "Three changes since v1.\n"), done.stderr
    assert sent.startswith('<skill_content name="git-summary">')
    assert "git log --oneline v1..HEAD" in sent


def test_without_skills_the_session_is_as_before(project: Path) -> None:
    """No skills: no tool, no command but /skills, no hook (the tools panel's counts and
    every call stay as they were)."""
    session = create_session(project)
    assert "skill" not in session.toolbox.tools
    sources = {session.commands.get(name).source for name in session.commands.names}
    assert "bundled:skills.py" in sources and not [s for s in sources if s.startswith("skill:")]
    assert not [
        h for h in session.toolbox.hooks["before"].get("*", []) if h.__name__ == "pre_approve"
    ]
