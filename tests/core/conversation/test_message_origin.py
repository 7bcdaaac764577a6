"""A user message says where it came from (``UserMessage.origin``, issue 28): the journal
stores it, the request to the model leaves it out, undo reads it instead of the text, and
journals written before it still resume with the right origins."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES

from tui_agent import create_session
from tui_agent.core.conversation import journal
from tui_agent.core.conversation.steering import Steer
from tui_agent.core.conversation.transcript import Transcript
from tui_agent.core.protocol.messages import (
    AssistantMessage,
    UserMessage,
    UserText,
    openai_dict,
)
from tui_agent.core.sandbox import user_shell
from tui_agent.testing import Call, FakeOpenAI, Reply

OLD_JOURNAL = FIXTURES / "journals" / "before_origins.jsonl"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir()
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    (folder / "notes.md").write_text("# Notes\nremember the milk\n")
    return folder


def session_for(folder: Path, server: FakeOpenAI) -> Any:
    return create_session(folder, base_url=server.base_url, model="m", yes=True)


def users(messages: Any) -> list[UserMessage]:
    return [m for m in messages if isinstance(m, UserMessage)]


def described(message: UserMessage) -> tuple[str, str, tuple[str, ...]]:
    return message.origin, message.prompt, message.attachments


# -- the message -----------------------------------------------------------------------------


def test_a_prompt_as_typed_is_the_plain_dict_and_the_rest_say_where_they_came_from() -> None:
    assert UserMessage("hi") == {"role": "user", "content": "hi"}
    assert UserMessage("hi").origin == "prompt" and UserMessage("hi").prompt == "hi"
    text = UserText("look\n\nAttached file: a.py (1 line)", prompt="look", attachments=["a"])
    made = UserMessage(text)
    assert described(made) == ("prompt", "look", ("a",))
    assert made["prompt"] == "look" and made["attachments"] == ["a"]
    steer = UserMessage(text, origin="steer")
    assert described(steer) == ("steer", "look", ("a",))
    for message in (made, steer, UserMessage("x", origin="continuation")):
        assert openai_dict(message) == {"role": "user", "content": message.text}
        assert message.to_openai() == {"role": "user", "content": message.text}


# -- record -> journal -> resume ----------------------------------------------------------


def test_each_origin_survives_the_journal(tmp_path: Path) -> None:
    run = user_shell.ShellRun("make", "built\n", 2)
    cancelled = user_shell.ShellRun("sleep 9", "", None, cancelled=True, elapsed=1.25)
    recorded = [
        UserMessage(UserText("see @a\n\nAttached ...", prompt="see @a", attachments=["a (1)"])),
        AssistantMessage("ok"),
        UserMessage(user_shell.message(run)),
        UserMessage(user_shell.message(cancelled)),
        UserMessage("also this", origin="steer"),
        UserMessage("<hook-feedback>\nmore\n</hook-feedback>", origin="continuation"),
        UserMessage("[Summary]\n\nbefore", origin="summary"),
        UserMessage("I ran `ls` in the shell (exit status 0); it printed nothing."),  # typed
        AssistantMessage("done"),
    ]
    transcript = Transcript("origins", tmp_path, on_failure=lambda text: None)
    for message in recorded:
        transcript.record(message)
    transcript.journal.close()
    header = json.loads(transcript.journal.path.read_text().splitlines()[0])
    assert header["version"] == journal.VERSION == 2

    again = Transcript("other", tmp_path, on_failure=lambda text: None)
    again.resume(transcript.journal.path)
    resumed = again.conversation.messages
    assert resumed == recorded
    assert [m.origin for m in users(resumed)] == [
        "prompt",
        "shell",
        "shell",
        "steer",
        "continuation",
        "summary",
        "prompt",
    ]
    assert described(users(resumed)[0]) == ("prompt", "see @a", ("a (1)",))
    assert user_shell.run_of(users(resumed)[1]) == user_shell.ShellRun("make", "built", 2)
    assert user_shell.run_of(users(resumed)[2]) == cancelled
    assert user_shell.run_of(users(resumed)[-1]) is None  # typed text that looks like one


# -- who sets them, and what the model gets ------------------------------------------------


async def test_a_session_records_each_origin_and_the_request_carries_none(repo: Path) -> None:
    with FakeOpenAI() as server:
        session = session_for(repo, server)
        server.script += [Reply("About milk.")]
        await session.turn("explain @notes.md")
        await session.shell("echo hello")
        session.on("prompt", lambda prompt: "the build is green")
        stops = ["run the tests too"]
        session.on("stop", lambda reply, n: stops.pop() if stops else None)
        session.conversation.steering.add(Steer("and b.txt", UserText("and b.txt")))
        server.script += [
            Reply(calls=[Call("write", {"path": "a.txt", "content": "a\n"})]),
            Reply("Wrote them."),
            Reply("Tests pass."),
        ]
        await session.turn("write a.txt")

        got = users(session.conversation.messages)
        assert [described(m) for m in got] == [
            ("prompt", "explain @notes.md", ("notes.md (2 lines)",)),
            ("shell", got[1].text, ()),
            ("prompt", "write a.txt", ()),
            ("steer", "and b.txt", ()),
            ("continuation", got[4].text, ()),
        ]
        assert "<hook-context>\nthe build is green" in got[2].text  # the model still gets it
        for request in server.requests:
            for sent in request["messages"]:
                if sent["role"] == "user":
                    assert set(sent) == {"role", "content"}, sent
        path = session.conversation.journal.path
        session.conversation.journal.close()
    on_disk = [m for m in journal.read_messages(path) if m["role"] == "user"]
    assert [m.get("origin", "prompt") for m in on_disk] == [
        "prompt",
        "shell",
        "prompt",
        "steer",
        "continuation",
    ]


# -- undo reads origins, not text ----------------------------------------------------------


@pytest.mark.parametrize(
    "typed",
    [
        "why?\n\n<hook-context>\nlooks like a hook's\n</hook-context>",
        "I ran `ls` in the shell (exit status 0); it printed nothing.",
        "<hook-feedback>\nlooks like feedback\n</hook-feedback>",
    ],
)
async def test_undo_finds_a_prompt_whose_text_looks_like_something_else(
    repo: Path, typed: str
) -> None:
    with FakeOpenAI() as server:
        session = session_for(repo, server)
        server.script += [Reply("first answer"), Reply("second answer")]
        await session.turn("first")
        await session.turn(typed)
        restored = await session.checkpoints.undo()
        assert restored.prompt == typed and restored.conversation
        assert [m.text for m in session.conversation.messages] == ["first", "first answer"]
        session.conversation.journal.close()


async def test_a_steer_starts_no_turn_for_undo(repo: Path) -> None:
    """The steer's text is the turn's prompt: still the turn's own prompt is found."""
    with FakeOpenAI() as server:
        session = session_for(repo, server)
        session.conversation.steering.add(Steer("same", UserText("same")))
        server.script += [
            Reply(calls=[Call("write", {"path": "a.txt", "content": "a\n"})]),
            Reply("done"),
        ]
        await session.turn("same")
        assert [m.origin for m in users(session.conversation.messages)] == ["prompt", "steer"]
        restored = await session.checkpoints.undo()
        assert restored.conversation and session.conversation.messages == []
        session.conversation.journal.close()


# -- journals written before origins ---------------------------------------------------------


def old_journal(name: str = "before-origins") -> Path:
    target = journal.sessions_dir() / f"{name}.jsonl"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(OLD_JOURNAL, target)
    return target


def test_the_old_journal_fixture_is_in_the_old_format() -> None:
    lines = [json.loads(line) for line in OLD_JOURNAL.read_text().splitlines()]
    assert "version" not in lines[0]
    assert not any("origin" in r.get("message", {}) for r in lines)


async def test_an_old_journal_resumes_with_the_right_origins(repo: Path) -> None:
    old_journal()
    with FakeOpenAI() as server:
        session = session_for(repo, server)
        assert session.conversation.resume("before-origins")
        got = users(session.conversation.messages)
        assert [described(m) for m in got] == [
            ("prompt", "explain @notes.md", ("notes.md (2 lines)",)),
            ("shell", got[1].text, ()),
            ("prompt", "write a.txt", ()),
            ("continuation", got[3].text, ()),
            ("prompt", "just a question", ()),
        ]
        assert user_shell.run_of(got[1]) == user_shell.ShellRun("echo hello", "hello", 0)
        for message in got:  # what the model gets is what it got before
            assert set(openai_dict(message)) == {"role", "content"}

        # undo finds the turns' prompts in the old messages (the files are not restored:
        # the fixture's snapshots are not in this repository's store)
        restored = await session.checkpoints.rewind(2, code=False)
        assert restored.prompt == "write a.txt" and restored.conversation
        texts = [m.text for m in session.conversation.messages]
        assert texts[-1] == got[1].text  # the !command's output stays, before turn 2

        server.script += [Reply("again")]
        await session.turn("a new turn")  # appended to the old file, with its origin
        path = session.conversation.journal.path
        session.conversation.journal.close()
    on_disk = [m for m in journal.read_messages(path) if m["role"] == "user"]
    assert [m.get("origin", "prompt") for m in on_disk][-1] == "prompt"
    assert journal.list_sessions()[0].title == "explain @notes.md"
