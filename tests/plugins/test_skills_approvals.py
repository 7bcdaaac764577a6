"""What a skill spares the user being asked, with the permission defaults in force: the
``skill`` tool itself and reading a skill's own files (the client guide: "allowlist skill
directories so the model can read bundled resources without triggering user
confirmation prompts"), and the calls its ``allowed-tools`` pre-approve ("A
space-separated string of tools that are pre-approved to run", the spec), only while the
skill is in use (from its loading to the end of that turn). Deny rules and plan mode
still hold; nothing else is spared."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, write

from tui_agent import create_session
from tui_agent.core.project.config import user_config_file
from tui_agent.testing import Call, FakeOpenAI, Person, Reply

VALID = FIXTURES / "skills" / "made" / "valid"
pytestmark = [pytest.mark.real_permissions, pytest.mark.usefixtures("sandbox_off")]


def install(folder: Path, name: str, source: Path = VALID) -> Path:
    shutil.copytree(source / name, folder / name)
    return folder / name


def results(server: FakeOpenAI) -> list[dict[str, Any]]:
    """Every tool result the model got, in order (the last request holds them all)."""
    messages = server.requests[-1]["messages"]
    return [json.loads(m["content"]) for m in messages if m["role"] == "tool"]


def denied(result: dict[str, Any]) -> bool:
    return str(result.get("error", "")).startswith("User denied permission")


async def test_the_skill_tool_and_its_files_are_not_asked_about(
    isolated_home: Path, project: Path
) -> None:
    folder = install(isolated_home / ".agents" / "skills", "webapp-testing",
                     source=FIXTURES / "skills" / "anthropics")  # fmt: skip
    script = folder / "scripts" / "with_server.py"
    replies = [
        Reply(calls=[Call("skill", {"name": "webapp-testing"})]),
        Reply(calls=[Call("read", {"path": str(script)})]),  # outside the worktree
        Reply(calls=[Call("read", {"path": str(isolated_home / ".bashrc")})]),
        Reply(calls=[Call("execute", {"command": f"python3 {script} --help"})]),
        Reply("done"),
    ]
    write(isolated_home / ".bashrc", "export X=1\n")
    async with FakeOpenAI(replies) as server:
        session = create_session(project, base_url=server.base_url, model="m")
        person = Person(default="deny")
        session.frontend = person
        await session.turn("test the app")
        loaded, read, other, ran = results(server)
        assert loaded["output"].startswith('<skill_content name="webapp-testing">')
        assert "def is_server_ready" in read["content"]
        assert denied(other) and denied(ran)  # the rest is asked as ever
        assert person.asked == ["approve read", "approve execute"]
        session.conversation.journal.close()


async def test_allowed_tools_spare_the_question_only_while_the_skill_is_in_use(
    project: Path,
) -> None:
    """``git-summary`` has ``allowed-tools: Bash(git log:*) Bash(git diff:*) Read``."""
    install(project / ".agents" / "skills", "git-summary")
    replies = [
        Reply(calls=[Call("execute", {"command": "git log --oneline -3"})]),
        Reply(calls=[Call("execute", {"command": "git push"})]),
        Reply(calls=[Call("execute", {"command": "git log && rm -rf build"})]),
        Reply("Summary written."),
        # the next turn: the skill is no longer in use
        Reply(calls=[Call("execute", {"command": "git log --oneline -3"})]),
        Reply("ok"),
    ]
    async with FakeOpenAI(replies) as server:
        session = create_session(project, base_url=server.base_url, model="m", trust=True)
        person = Person(default="deny")
        session.frontend = person
        await session.commands.run_line("/git-summary v1.0")
        log, push, compound = results(server)
        assert not denied(log) and "git log" not in str(log.get("error", ""))
        assert denied(push) and denied(compound)
        assert person.asked == ["approve execute", "approve execute"]
        await session.turn("and now?")
        assert denied(results(server)[-1])
        assert len(person.asked) == 3
        session.conversation.journal.close()


async def test_a_skill_the_model_loads_pre_approves_too(project: Path) -> None:
    install(project / ".agents" / "skills", "git-summary")
    replies = [
        Reply(calls=[Call("skill", {"name": "git-summary"})]),
        Reply(calls=[Call("execute", {"command": "git diff --stat"})]),
        Reply("ok"),
    ]
    async with FakeOpenAI(replies) as server:
        session = create_session(project, base_url=server.base_url, model="m", trust=True)
        person = Person(default="deny")
        session.frontend = person
        await session.turn("what changed?")
        assert not any(denied(r) for r in results(server))
        assert person.asked == []
        session.conversation.journal.close()


async def test_deny_rules_and_plan_mode_still_hold(project: Path) -> None:
    install(project / ".agents" / "skills", "git-summary")
    write(user_config_file(), '[permission]\nexecute = { "*" = "ask", "git diff*" = "deny" }\n')
    replies = [
        Reply(calls=[Call("execute", {"command": "git diff --stat"})]),
        Reply("ok"),
        Reply(calls=[Call("execute", {"command": "git log -1"})]),
        Reply("ok"),
    ]
    async with FakeOpenAI(replies) as server:
        session = create_session(project, base_url=server.base_url, model="m", trust=True)
        session.frontend = Person(default="deny")
        await session.commands.run_line("/git-summary")
        [diff] = results(server)
        assert diff["error"] == "Permission denied: execute"
        session.permissions.set_mode("plan")
        await session.commands.run_line("/git-summary")
        assert "plan mode" in results(server)[-1]["error"]
        session.conversation.journal.close()


async def test_a_plugins_tool_is_named_by_its_own_name(isolated_home: Path, project: Path) -> None:
    """``allowed-tools`` may name a tool a plugin adds (read once every plugin has loaded,
    so the user's plugins, which load after the bundled ones, count); a word that names no
    tool here is said, once."""
    (isolated_home / ".agents" / "plugins").mkdir(parents=True)
    shutil.copyfile(FIXTURES / "wc.py", isolated_home / ".agents" / "plugins" / "wc.py")
    write(
        project / ".agents" / "skills" / "count-words" / "SKILL.md",
        "---\nname: count-words\ndescription: Count the words of a file. (Made for the tests.)\n"
        "allowed-tools: wc WebSearch\n---\nCount the words of $ARGUMENTS with the wc tool.\n",
    )
    write(project / "notes.txt", "three little words\n")
    replies = [Reply(calls=[Call("wc", {"path": str(project / "notes.txt")})]), Reply("3.")]
    async with FakeOpenAI(replies) as server:
        session = create_session(project, base_url=server.base_url, model="m", trust=True)
        said: list[str] = []
        session.output.listen(lambda note: said.append(note.text))
        person = Person(default="deny")
        session.frontend = person
        await session.commands.run_line("/count-words notes.txt")
        assert results(server) == [{"lines": 1, "words": 3, "bytes": 19, "ok": True}]
        assert person.asked == []
        assert (
            said.count(
                "skill count-words: allowed-tools WebSearch: no such tool here: not pre-approved"
            )
            == 1
        )
        session.conversation.journal.close()
