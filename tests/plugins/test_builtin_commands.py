"""Issue 4 / SPEC §3 and §5: the bundled slash commands (plugins/commands.py), run the way
the prompt runs them: ``session.commands.run_line("/name args")``."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import write

from tui_agent import Session, create_session
from tui_agent.core.conversation.journal import read_messages
from tui_agent.core.protocol.events import (
    Compacted,
    ConversationReset,
)
from tui_agent.testing import FakeOpenAI, Person, Reply

COMMANDS = [
    "/help",
    "/tools",
    "/reload",
    "/exit",
    "/quit",
    "/clear",
    "/compact",
    "/context",
    "/model",
    "/provider",
    "/sessions",
    "/resume",
    "/theme",
]
TOOLS = ["read", "write", "edit", "glob", "grep", "list", "execute", "git"]


class Recorder:
    """Events a session emits, and the notes it says from a point on."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.events: list[Any] = []
        self.start = len(session.output.history)
        session.events.listen(self.events.append)

    @property
    def notes(self) -> list[Any]:
        return list(self.session.output.history)[self.start :]

    @property
    def text(self) -> str:
        return "\n".join(note.text for note in self.notes)

    def errors(self) -> list[str]:
        return [note.text for note in self.notes if note.kind == "error"]

    def of(self, kind: type) -> list[Any]:
        return [event for event in self.events if isinstance(event, kind)]


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(models=["alpha", "beta"]) as fake:
        yield fake


async def command(session: Any, line: str) -> Recorder:
    recorder = Recorder(session)
    assert await session.commands.run_line(line) is True
    return recorder


# -- /help, /tools, /reload, unknown --------------------------------------------------------


async def test_help_lists_every_command_with_its_description(project: Path) -> None:
    session = create_session(project)
    assert set(COMMANDS) <= set(session.commands.names)
    seen = await command(session, "/help")
    assert len(seen.notes) == 1
    text = seen.notes[0].text
    for name, description in session.commands:
        assert description.strip(), f"{name} has no description"
        row = next((line for line in text.splitlines() if f"`{name}`" in line), None)
        assert row is not None, f"{name} missing from /help"
        assert description.replace("|", "\\|") in row  # escaped: a | would end the cell


async def test_tools_table_lists_every_tool(project: Path) -> None:
    session = create_session(project)
    seen = await command(session, "/tools")
    assert not seen.errors()
    rows = seen.text.splitlines()
    for name in TOOLS:
        row = next((r for r in rows if r.startswith(f"| {name} |")), None)
        assert row is not None, f"{name} missing from /tools"
        assert session.toolbox.tools[name].description.splitlines()[0][:30] in row
    execute_row = next(r for r in rows if r.startswith("| execute |"))
    assert "bash" in execute_row and "sh" in execute_row and "exec" in execute_row


@pytest.mark.parametrize(
    ("line", "tool", "params"),
    [
        ("/tools read", "read", ["path", "offset", "limit"]),
        ("/tools open", "read", ["path", "offset", "limit"]),
        ("/tools bash", "execute", ["command", "timeout", "workdir"]),
        ("/tools edit", "edit", ["path", "old", "new", "replace_all"]),
        ("/tools git", "git", ["args"]),
    ],
)
async def test_tools_name_shows_its_parameters(
    project: Path, line: str, tool: str, params: list[str]
) -> None:
    session = create_session(project)
    seen = await command(session, line)
    assert not seen.errors()
    text = seen.text
    assert f"**{tool}**" in text
    for param in params:
        assert f"| {param} |" in text, param
    for other in {"command", "pattern", "content"} - set(params):
        assert f"| {other} |" not in text


async def test_tools_unknown_name_is_an_error(project: Path) -> None:
    session = create_session(project)
    seen = await command(session, "/tools nosuchtool")
    assert len(seen.errors()) == 1
    error = seen.errors()[0]
    assert error.startswith("error: ")
    assert "nosuchtool" in error and "read" in error


async def test_tools_completes_tool_names(project: Path) -> None:
    session = create_session(project)
    everything = session.commands.completions_for("tools", "")
    for name in [*TOOLS, "open", "bash"]:
        assert name in everything
    assert session.commands.completions_for("tools", "gr") == ["grep"]
    assert sorted(session.commands.completions_for("/tools", "e")) == ["edit", "exec", "execute"]


async def test_reload_picks_up_a_new_tool_file(project: Path, user_config_dir: Path) -> None:
    session = create_session(project)
    assert "shout" not in session.toolbox.tools
    write(
        user_config_dir / "tools" / "shout.py",
        "from tui_agent import tool\n\n"
        "@tool(description='Shout a word')\n"
        "def default(word: str) -> str:\n"
        "    return word.upper()\n",
    )
    seen = await command(session, "/reload")
    assert not seen.errors(), seen.text
    assert "Reloaded" in seen.text
    assert "shout" in session.toolbox.tools
    assert (await session.toolbox.run("shout", {"word": "hey"}))["output"] == "HEY"
    assert set(COMMANDS) <= set(session.commands.names)
    for name in TOOLS:
        assert name in session.toolbox.tools


async def test_unknown_command_lists_the_commands(project: Path) -> None:
    session = create_session(project)
    seen = await command(session, "/nosuchcommand")
    assert len(seen.errors()) == 1
    for name in COMMANDS:
        assert name in seen.errors()[0]


# -- /exit, /quit, /clear -------------------------------------------------------------------


@pytest.mark.parametrize("line", ["/exit", "/quit"])
async def test_exit_and_quit(project: Path, line: str) -> None:
    session = create_session(project)
    assert session.frontend.exit_requested is False
    seen = await command(session, line)
    assert session.frontend.exit_requested is True
    assert not seen.errors()
    session.frontend = person = Person()  # the app: it is asked to quit
    await command(session, line)
    assert person.asked == ["exit"]


async def test_clear_forgets_the_conversation_and_starts_a_new_session(project: Path) -> None:
    session = create_session(project)
    await session.turn("remember this")
    old_id = session.id
    old_journal = session.conversation.journal.path
    assert len(session.conversation) > 0
    seen = await command(session, "/clear")
    assert session.conversation.messages == []
    assert session.id != old_id
    [reset] = seen.of(ConversationReset)  # it carries the ended conversation (SessionEnd)
    assert (reset.reason, reset.ended) == ("clear", old_id)
    assert reset.ended_messages[0].text == "remember this"
    assert [info.id for info in session.conversation.sessions()] == [
        old_id
    ]  # the old one stays saved
    await session.turn("fresh start")
    assert session.conversation.messages[0] == {"role": "user", "content": "fresh start"}
    assert session.conversation.journal.path != old_journal
    assert "remember this" not in session.conversation.journal.path.read_text()
    assert "fresh start" not in old_journal.read_text()


# -- /compact -------------------------------------------------------------------------------


async def test_compact_replaces_the_conversation_with_the_summary(
    project: Path, server: FakeOpenAI
) -> None:
    server.script += [
        Reply("Hello, I looked around."),
        Reply("SUMMARY-7: the user said hello; nothing is left to do."),
        Reply("Continuing."),
    ]
    session = create_session(project, base_url=server.base_url, model="m")
    await session.turn("hello there")
    before = [dict(m) for m in session.conversation.messages]
    assert [m["role"] for m in before] == ["user", "assistant"]

    seen = await command(session, "/compact")
    assert not seen.errors(), seen.text
    assert len(server.requests) == 2
    sent = server.requests[1]["messages"]
    assert [m["role"] for m in sent] == ["system", "user"]
    assert "You summarise a conversation" in sent[0]["content"]
    assert "User: hello there" in sent[1]["content"]
    assert "Assistant: Hello, I looked around." in sent[1]["content"]
    assert not server.requests[1].get("tools")

    messages = session.conversation.messages
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert "SUMMARY-7: the user said hello; nothing is left to do." in messages[0]["content"]
    [compacted] = seen.of(Compacted)
    assert (compacted.reason, compacted.summarised) == ("command", 2)
    assert not seen.of(ConversationReset)  # the chat keeps showing what was said
    assert "Compacted the conversation (/compact): summarised 2 older messages" in seen.text

    await session.turn("go on")
    follow = server.requests[2]["messages"]
    assert [m["role"] for m in follow] == ["system", "user", "assistant", "user"]
    assert "SUMMARY-7" in follow[1]["content"]
    assert follow[3]["content"] == "go on"
    # the journal keeps the messages the summary replaced, and resumes the compacted state
    journaled = [m["content"] for m in read_messages(session.conversation.journal.path)]
    assert journaled[:2] == ["hello there", "Hello, I looked around."]
    session.conversation.journal.close()
    again = create_session(project, base_url=server.base_url, model="m")
    assert again.conversation.resume(session.id)
    assert [m["role"] for m in again.conversation.messages] == [
        "user",
        "assistant",
        "user",
        "assistant",
    ]
    assert "SUMMARY-7" in again.conversation.messages[0]["content"]
    again.conversation.journal.close()


async def test_compact_with_an_empty_summary_keeps_the_conversation(
    project: Path, server: FakeOpenAI
) -> None:
    server.script += [Reply("First answer."), Reply("")]
    session = create_session(project, base_url=server.base_url, model="m")
    await session.turn("question")
    before = [dict(m) for m in session.conversation.messages]
    old_id = session.id
    seen = await command(session, "/compact")
    assert len(server.requests) == 2
    assert len(seen.errors()) == 1
    assert seen.errors()[0].startswith("error: ")
    assert "empty" in seen.errors()[0]
    assert session.conversation.messages == before
    assert session.id == old_id
    assert not seen.of(ConversationReset) and not seen.of(Compacted)


async def test_compact_with_nothing_to_compact_sends_nothing(
    project: Path, server: FakeOpenAI
) -> None:
    session = create_session(project, base_url=server.base_url, model="m")
    seen = await command(session, "/compact")
    assert server.requests == []
    assert session.conversation.messages == []
    assert "Nothing to compact" in seen.text


# -- /context -------------------------------------------------------------------------------


async def test_context_shows_the_window_and_its_parts(project: Path) -> None:
    session = create_session(project)
    empty = await command(session, "/context")
    assert "of 32,768 tokens" in empty.text and "the window is from: default" in empty.text
    assert "| User messages" not in empty.text
    await session.turn("look around")  # the stub: user, assistant + tool call, tool, assistant
    roles = [m["role"] for m in session.conversation.messages]
    assert roles == ["user", "assistant", "tool", "assistant"]
    seen = await command(session, "/context")
    assert "| User messages | 1 |" in seen.text
    assert "| Assistant messages | 2 |" in seen.text
    assert "| Tool messages | 1 |" in seen.text
    assert "compacting at 80%" in seen.text
    assert "stub" in seen.text


# -- /model and /provider -------------------------------------------------------------------


async def test_model_lists_and_switches(project: Path, server: FakeOpenAI) -> None:
    server.script += [Reply("one"), Reply("two")]
    session = create_session(project, base_url=server.base_url, model="m")
    listed = await command(session, "/model")
    assert not listed.errors()
    assert "openai / m" in listed.text
    assert "alpha" in listed.text and "beta" in listed.text

    await session.turn("first")
    assert server.requests[-1]["model"] == "m"

    switched = await command(session, "/model beta")
    assert not switched.errors()
    assert "beta" in switched.text
    assert session.provider.model == "beta"
    await session.turn("second")
    assert server.requests[-1]["model"] == "beta"


async def test_model_completions_after_the_list_was_fetched(
    project: Path, server: FakeOpenAI
) -> None:
    session = create_session(project, base_url=server.base_url, model="m")
    await command(session, "/model")
    assert session.commands.completions_for("model", "") == ["alpha", "beta", "m"]
    assert session.commands.completions_for("model", "al") == ["alpha"]


async def test_model_completions_fetch_the_list_on_first_use(
    project: Path, server: FakeOpenAI
) -> None:
    session = create_session(project, base_url=server.base_url, model="m")
    first = session.commands.completions_for("model", "")
    assert "m" in first
    for _ in range(200):
        if "alpha" in session.commands.completions_for("model", ""):
            break
        await asyncio.sleep(0.02)
    assert session.commands.completions_for("model", "") == ["alpha", "beta", "m"]


async def test_model_completions_follow_a_provider_switch(
    project: Path, server: FakeOpenAI
) -> None:
    """Completions come from the provider in use: after /provider, the new one's list."""
    session = create_session(project, base_url=server.base_url, provider="stub")
    assert session.commands.completions_for("model", "") == ["stub"]  # starts fetching
    await asyncio.sleep(0.1)  # the stub answers at once: its list is in
    await command(session, "/provider openai")
    assert session.extensions.provider_name == "openai"
    for _ in range(200):
        if "alpha" in session.commands.completions_for("model", ""):
            break
        await asyncio.sleep(0.02)
    completions = session.commands.completions_for("model", "")
    assert "alpha" in completions and "beta" in completions
    assert "stub" not in completions


async def test_provider_lists_and_switches(project: Path, server: FakeOpenAI) -> None:
    session = create_session(project, base_url=server.base_url, model="m")
    assert session.extensions.provider_name == "openai"
    shown = await command(session, "/provider")
    assert "openai" in shown.text and "stub" in shown.text
    assert sorted(session.commands.completions_for("provider", "")) == ["openai", "stub"]

    switched = await command(session, "/provider stub")
    assert not switched.errors()
    assert session.extensions.provider_name == "stub"
    reply = await session.turn("offline now")
    assert "offline stub provider" in reply
    assert server.requests == []

    bad = await command(session, "/provider nosuch")
    assert len(bad.errors()) == 1
    assert bad.errors()[0].startswith("error: ")
    assert "nosuch" in bad.errors()[0]
    assert session.extensions.provider_name == "stub"

    server.script.append(Reply("back online"))
    await command(session, "/provider openai")
    assert session.extensions.provider_name == "openai"
    assert await session.turn("hello again") == "back online"
    assert len(server.requests) == 1


# -- /sessions and /resume ------------------------------------------------------------------


async def test_sessions_lists_this_folders_journaled_sessions(
    project: Path, tmp_path: Path
) -> None:
    session = create_session(project)
    nothing = await command(session, "/sessions")
    assert "No saved sessions" in nothing.text

    await session.turn("first prompt in this folder")
    other_folder = tmp_path / "elsewhere"
    other_folder.mkdir()
    other = create_session(other_folder)
    await other.turn("prompt from another folder")

    seen = await command(session, "/sessions")
    assert not seen.errors()
    assert f"`{session.id}` (current)" in seen.text
    assert "first prompt in this folder" in seen.text
    assert other.id not in seen.text
    assert "prompt from another folder" not in seen.text

    later = create_session(project)
    listed = await command(later, "/sessions")
    assert session.id in listed.text and "(current)" not in listed.text


async def test_resume_restores_the_messages(project: Path) -> None:
    first = create_session(project)
    await first.turn("something to come back to")
    saved = [dict(m) for m in first.conversation.messages]
    assert len(saved) == 4

    second = create_session(project)
    assert second.id != first.id
    assert first.id in second.commands.completions_for("resume", "")
    seen = await command(second, f"/resume {first.id}")
    assert not seen.errors(), seen.text
    assert second.conversation.messages == saved
    assert second.id == first.id
    assert seen.of(ConversationReset) == [ConversationReset("resume")]


@pytest.mark.parametrize("line", ["/resume 20000101-000000-abcdef", "/resume ../x", "/resume"])
async def test_resume_with_a_bad_id_is_an_error(project: Path, line: str) -> None:
    session = create_session(project)
    await session.turn("keep me")
    before = [dict(m) for m in session.conversation.messages]
    old_id = session.id
    seen = await command(session, line)
    assert len(seen.errors()) == 1
    assert seen.errors()[0].startswith("error: ")
    assert session.conversation.messages == before
    assert session.id == old_id
    assert not seen.of(ConversationReset)


# -- /theme ---------------------------------------------------------------------------------


def themed(project: Path) -> tuple[Session, Person]:
    session = create_session(project)
    session.frontend = person = Person(themes=["dark", "light"])
    return session, person


async def test_theme_switches_to_a_known_theme(project: Path) -> None:
    session, person = themed(project)
    assert session.commands.completions_for("theme", "l") == ["light"]
    seen = await command(session, "/theme light")
    assert not seen.errors()
    assert person.asked == ["theme light"]


async def test_theme_unknown_name_is_an_error(project: Path) -> None:
    session, person = themed(project)
    seen = await command(session, "/theme neon")
    assert len(seen.errors()) == 1
    assert seen.errors()[0].startswith("error: ")
    assert "neon" in seen.errors()[0] and "dark" in seen.errors()[0]
    assert person.asked == []


async def test_theme_without_a_name_lists_the_themes(project: Path) -> None:
    session, person = themed(project)
    seen = await command(session, "/theme")
    assert "dark" in seen.text and "light" in seen.text
    assert person.asked == []
