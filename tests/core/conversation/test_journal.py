"""Session journals (SPEC §5, issue 3): JSONL per session, flushed, resumable, no secrets."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import write

from tui_agent import create_session
from tui_agent.core.conversation import journal
from tui_agent.core.util import paths
from tui_agent.testing import Call, FakeOpenAI, Reply

SECRET_ENV = "sk-secret-123"
SECRET_FILE = "sk-secret-456"


def journal_path(session_id: str) -> Path:
    return paths.user_data_dir() / "sessions" / f"{session_id}.jsonl"


def lines_of(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def assert_valid_transcript(messages: list[dict[str, Any]]) -> None:
    """What the OpenAI API demands: every assistant tool call answered by one tool message,
    tool messages only right after the assistant message that asked for them."""
    index = 0
    while index < len(messages):
        message = messages[index]
        assert message.get("role") in {"system", "user", "assistant", "tool"}, message
        assert message["role"] != "tool", f"orphan tool message at {index}: {message}"
        index += 1
        calls = (message.get("tool_calls") or []) if message["role"] == "assistant" else []
        wanted = [call["id"] for call in calls]
        answered: list[str] = []
        while index < len(messages) and messages[index].get("role") == "tool":
            answered.append(messages[index]["tool_call_id"])
            json.loads(messages[index]["content"])
            index += 1
        assert sorted(answered) == sorted(wanted), (wanted, answered)


def other_folder(tmp_path: Path, name: str = "other") -> Path:
    folder = tmp_path / name
    (folder / ".git").mkdir(parents=True)
    return folder


async def stub_session_with_turn(folder: Path, prompt: str) -> Any:
    session = create_session(folder)
    assert session.extensions.provider_name == "stub"
    await session.turn(prompt)
    session.conversation.journal.close()
    return session


def only_tool(session: Any, name: str, handler: Any, **spec: Any) -> None:
    """Leave ``name`` as the one tool, so the stub provider is sure to call it."""
    for existing in list(session.toolbox.tools):
        session.toolbox.remove(existing)
    session.toolbox.add(name, handler=handler, **spec)


def last_user(messages: list[dict[str, Any]]) -> str:
    return next(m["content"] for m in reversed(messages) if m["role"] == "user")


def age(path: Path, seconds_ago: float) -> None:
    stamp = time.time() - seconds_ago
    os.utime(path, (stamp, stamp))


# -- writing -------------------------------------------------------------------------------


async def test_a_turn_writes_a_header_and_one_flushed_record_per_message(project: Path) -> None:
    session = create_session(project, yes=True)  # yes: the permission hook may ask about peek
    assert session.extensions.provider_name == "stub"
    path = journal_path(session.id)
    seen_during_tool: list[list[str]] = []

    def peek(args: dict[str, Any]) -> dict[str, Any]:
        # runs mid-turn, in another thread: what is on disk right now?
        seen_during_tool.append(lines_of(path) if path.exists() else [])
        return {"output": "peeked"}

    only_tool(session, "peek", peek, description="Look at the journal")

    reply = await session.turn("hello journal")

    assert reply
    # the stub calls the one tool, then answers: user, assistant+call, tool, assistant
    roles = [m["role"] for m in session.conversation.messages]
    assert roles == ["user", "assistant", "tool", "assistant"]
    # the user message and the assistant's tool call were on disk before the tool ran
    assert len(seen_during_tool) == 1
    during = [json.loads(line) for line in seen_during_tool[0]]
    # the turn's checkpoint record (its snapshot before the tool) comes too, and the model
    # the reply came from (a record for each model the session talks to: the picker's)
    assert [r["type"] for r in during] == ["session", "message", "message", "model", "checkpoint"]
    assert during[3] == {"type": "model", "model": "stub", "provider": "stub"}
    during = [r for r in during if r["type"] not in ("checkpoint", "model")]
    assert during[1]["message"] == {"role": "user", "content": "hello journal", "origin": "prompt"}
    assert during[2]["message"]["tool_calls"][0]["function"]["name"] == "peek"

    # read while the session (and its journal handle) is still open
    records = [json.loads(line) for line in lines_of(path)]
    head = records[0]
    assert head["type"] == "session"
    assert head["id"] == session.id
    assert head["directory"] == str(project.resolve())
    records = [r for r in records if r["type"] not in ("checkpoint", "model")]
    assert [r["type"] for r in records[1:]] == ["message"] * 4
    # read back, a user message's default origin is left out again (issue 28)
    read = [journal.read_message(r["message"]) for r in records[1:]]
    assert read == session.conversation.messages
    session.conversation.journal.close()


async def test_clear_sends_later_messages_to_a_new_journal(project: Path) -> None:
    session = create_session(project)
    await session.turn("first")
    old_id, old_path = session.id, journal_path(session.id)
    old_text = old_path.read_text(encoding="utf-8")

    session.conversation.clear()
    assert session.id != old_id
    assert len(session.conversation) == 0
    await session.turn("second")
    session.conversation.journal.close()

    assert old_path.read_text(encoding="utf-8") == old_text
    new_records = journal.read_records(journal_path(session.id))
    assert new_records[0]["type"] == "session"
    assert new_records[0]["id"] == session.id
    users = [
        r["message"]["content"]
        for r in new_records
        if r["type"] == "message" and r["message"]["role"] == "user"
    ]
    assert users == ["second"]


async def test_cancel_mid_tool_leaves_a_valid_journal(project: Path) -> None:
    session = create_session(project, yes=True)
    started = asyncio.Event()

    async def slow(args: dict[str, Any]) -> dict[str, Any]:
        started.set()
        await asyncio.sleep(30)
        return {"output": "never"}

    only_tool(session, "slow", slow, description="Take a long time")
    turn = asyncio.create_task(session.turn("go slowly"))
    await asyncio.wait_for(started.wait(), 5)
    assert session.cancel() is True
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(turn, 5)
    session.conversation.journal.close()

    on_disk = journal.read_messages(journal_path(session.id))
    assert on_disk == session.conversation.messages
    assert_valid_transcript(on_disk)
    assert on_disk[-1]["role"] == "tool"
    result = json.loads(on_disk[-1]["content"])
    assert result["ok"] is False
    assert result["error"]


async def test_undecodable_file_names_do_not_break_the_journal(project: Path) -> None:
    """os.listdir gives a Latin-1 file name on a UTF-8 system as a lone surrogate
    ("caf\\udce9.txt"); journaling that tool result must neither end the turn nor lose it."""
    name = "caf\udce9.txt"
    session = create_session(project, yes=True)
    only_tool(session, "ls", lambda args: {"output": [name]}, description="List files")

    reply = await session.turn("what is here?")
    session.conversation.journal.close()

    assert reply
    assert [m["role"] for m in session.conversation.messages] == [
        "user",
        "assistant",
        "tool",
        "assistant",
    ]
    assert journal.read_messages(journal_path(session.id)) == session.conversation.messages
    resumed = create_session(project)
    assert resumed.conversation.resume(session.id) is True
    assert json.loads(resumed.conversation.messages[2]["content"])["output"] == [name]


# -- resuming ------------------------------------------------------------------------------


async def test_resume_by_id_restores_the_exact_messages(project: Path) -> None:
    first = create_session(project, yes=True)
    only_tool(first, "peek", lambda args: {"output": 'ü ✓ "quoted"\nline'}, description="Peek")
    await first.turn("round trip ✓ with\nnewlines")
    first.conversation.journal.close()
    original = [dict(m) for m in first.conversation.messages]
    assert len(original) == 4
    assert json.loads(original[2]["content"])["output"] == 'ü ✓ "quoted"\nline'

    second = create_session(project)
    assert second.id != first.id
    assert second.conversation.resume(first.id) is True

    assert second.id == first.id
    assert second.conversation.messages == original
    # later messages go on in the same journal, and it still round-trips
    await second.turn("and again")
    second.conversation.journal.close()
    on_disk = journal.read_messages(journal_path(first.id))
    assert on_disk == second.conversation.messages
    assert on_disk[: len(original)] == original
    records = journal.read_records(journal_path(first.id))
    # each turn's checkpoint and each session's model record (once: the same model), beside
    assert [r for r in records if r["type"] == "model"] == [
        {"type": "model", "model": "stub", "provider": "stub"}
    ] * 2
    records = [r for r in records if r["type"] not in ("checkpoint", "model")]
    assert len(records) == 1 + len(on_disk)  # one header


async def test_resume_unknown_id_is_false_and_keeps_the_session(project: Path) -> None:
    session = create_session(project)
    before = session.id
    assert session.conversation.resume("no-such-session") is False
    assert session.conversation.resume("../../etc/passwd") is False
    assert session.id == before
    assert len(session.conversation) == 0


async def test_resume_without_id_takes_the_last_session_of_this_folder(
    tmp_path: Path, project: Path
) -> None:
    other = other_folder(tmp_path)
    older = await stub_session_with_turn(project, "older question")
    newer = await stub_session_with_turn(project, "newer question")
    elsewhere = await stub_session_with_turn(other, "question in another folder")
    age(journal_path(older.id), 30)
    age(journal_path(newer.id), 20)
    age(journal_path(elsewhere.id), 10)  # newest of all, but another folder's

    session = create_session(project)
    assert session.conversation.resume() is True

    assert session.id == newer.id
    assert session.conversation.messages == newer.conversation.messages
    assert session.conversation.messages[0]["content"] == "newer question"


async def test_resume_without_id_ignores_other_folders(tmp_path: Path, project: Path) -> None:
    await stub_session_with_turn(other_folder(tmp_path), "not yours")

    session = create_session(project)
    assert session.conversation.resume() is False
    assert len(session.conversation) == 0


async def test_list_sessions_is_newest_first_and_per_folder(tmp_path: Path, project: Path) -> None:
    other = other_folder(tmp_path)
    made = [await stub_session_with_turn(project, f"question {n}") for n in range(3)]
    elsewhere = await stub_session_with_turn(other, "elsewhere")
    for ago, session in zip((40, 30, 20), made, strict=True):
        age(journal_path(session.id), ago)
    age(journal_path(elsewhere.id), 10)

    mine = journal.list_sessions(project)
    assert [info.id for info in mine] == [s.id for s in reversed(made)]
    assert {info.directory for info in mine} == {str(project.resolve())}
    assert [info.path for info in mine] == [journal_path(s.id) for s in reversed(made)]

    everything = journal.list_sessions()
    assert [info.id for info in everything] == [elsewhere.id, *(s.id for s in reversed(made))]
    assert [info.id for info in journal.list_sessions(other)] == [elsewhere.id]


async def test_list_sessions_accepts_a_relative_folder(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = await stub_session_with_turn(project, "here")
    monkeypatch.chdir(project)

    assert [info.id for info in journal.list_sessions(Path("."))] == [made.id]


@pytest.mark.parametrize("cut", [1, 17], ids=["newline-only", "mid-json"])
async def test_a_truncated_last_line_is_skipped_and_appending_stays_valid(
    project: Path, cut: int
) -> None:
    first = await stub_session_with_turn(project, "before the crash")
    path = journal_path(first.id)
    lines = path.read_bytes().splitlines(keepends=True)
    while b'"type": "checkpoint"' in lines[-1]:  # the turn's end: the last message is torn
        lines.pop()
    data = b"".join(lines)
    path.write_bytes(data[:-cut])  # a crash mid-write
    expected = first.conversation.messages if cut == 1 else first.conversation.messages[:-1]

    second = create_session(project)
    assert second.conversation.resume(first.id) is True
    assert second.conversation.messages == expected

    await second.turn("after the crash")
    second.conversation.journal.close()
    lines = lines_of(path)
    bad = []
    for line in lines:
        try:
            json.loads(line)
        except ValueError:
            bad.append(line)
    # at most the torn line itself is unreadable, and nothing was glued onto it
    assert bad == ([] if cut == 1 else [data[:-cut].decode().splitlines()[-1]])
    assert journal.read_messages(path) == second.conversation.messages
    assert last_user(second.conversation.messages) == "after the crash"


async def test_a_half_written_appended_line_is_skipped(project: Path) -> None:
    first = await stub_session_with_turn(project, "all good so far")
    path = journal_path(first.id)
    torn = '{"type": "message", "message": {"role": "assistant", "content": "half'
    with path.open("a", encoding="utf-8") as handle:
        handle.write(torn)

    third = create_session(project)
    assert third.conversation.resume() is True  # listing survives the torn line too
    assert third.id == first.id
    assert third.conversation.messages == first.conversation.messages

    await third.turn("next prompt")
    third.conversation.journal.close()
    lines = lines_of(path)
    assert torn in lines  # still on its own line, nothing glued to it
    unreadable = [line for line in lines if line == torn]
    assert len(unreadable) == 1
    for line in lines:
        if line != torn:
            json.loads(line)
    assert journal.read_messages(path) == third.conversation.messages

    fourth = create_session(project)
    assert fourth.conversation.resume(first.id) is True
    assert fourth.conversation.messages == third.conversation.messages


async def test_resume_answers_dangling_tool_calls_with_errors(project: Path) -> None:
    crashed = create_session(project)
    crashed.conversation.record({"role": "user", "content": "do two things"})
    crashed.conversation.record(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_a",
                    "type": "function",
                    "function": {"name": "read", "arguments": "{}"},
                },
                {
                    "id": "call_b",
                    "type": "function",
                    "function": {"name": "write", "arguments": "{}"},
                },
            ],
        }
    )
    crashed.conversation.record(
        {"role": "tool", "tool_call_id": "call_a", "content": json.dumps({"ok": True})}
    )
    crashed.conversation.journal.close()  # the app died while call_b was running

    with FakeOpenAI([Reply("picked up again")]) as server:
        session = create_session(project, base_url=server.base_url, model="fake-model")
        assert session.conversation.resume(crashed.id) is True

        messages = session.conversation.messages
        assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool"]
        assert messages[3]["tool_call_id"] == "call_b"
        result = json.loads(messages[3]["content"])
        assert result["ok"] is False
        assert result["error"]
        assert_valid_transcript(messages)

        # the repair is journaled, so a later resume does not need it again
        assert journal.read_messages(journal_path(crashed.id)) == messages

        reply = await session.turn("carry on")
        session.conversation.journal.close()

    assert reply == "picked up again"
    assert len(server.requests) == 1
    sent = server.requests[0]["messages"]
    assert sent[0]["role"] == "system"
    assert_valid_transcript(sent[1:])
    assert sent[-1] == {"role": "user", "content": "carry on"}


# -- secrets -------------------------------------------------------------------------------


def every_file(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()]


def assert_no_secret_on_disk(home: Path, allowed: Path) -> list[Path]:
    files = every_file(home)
    for file in files:
        data = file.read_bytes()
        for secret in (SECRET_ENV, SECRET_FILE):
            if file == allowed and secret == SECRET_FILE:
                continue
            assert secret.encode() not in data, f"{secret} written to {file}"
    return files


async def test_no_api_key_is_written_by_a_real_turn(
    isolated_home: Path, project: Path, user_config_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeOpenAI([Reply(calls=[Call("peek", {"what": "config"})]), Reply("all done")]) as server:
        config = write(
            user_config_dir / "config.toml",
            f'api_key = "{SECRET_FILE}"\nbase_url = "{server.base_url}"\nmodel = "fake-model"\n',
        )
        monkeypatch.setenv("OPENAI_API_KEY", SECRET_ENV)
        session = create_session(project, yes=True)  # yes: the permission hook may ask
        assert session.extensions.provider_name == "openai"
        session.toolbox.add(
            "peek",
            description="Show the settings",
            params={"what": {"type": "string"}},
            handler=lambda args: {"settings": session.config.public_settings()},
        )
        reply = await session.turn("use the key")
        session.conversation.journal.close()

    assert reply == "all done"
    assert len(server.requests) == 2
    # the environment beats the config file, and the key really was used
    assert server.headers[0]["authorization"] == f"Bearer {SECRET_ENV}"
    files = assert_no_secret_on_disk(isolated_home, config)
    assert journal_path(session.id) in files
    assert SECRET_FILE in config.read_text(encoding="utf-8")


def test_no_api_key_in_the_log_of_a_cli_run(
    isolated_home: Path, project: Path, user_config_dir: Path
) -> None:
    broken = write(
        isolated_home / ".agents" / "plugins" / "broken.py",
        "import tui_agent\n\n@tui_agent.setup('broken')\ndef broken(session):\n"
        "    raise RuntimeError('this plugin is broken on purpose')\n",
    )
    with FakeOpenAI([Reply(status=500), Reply(status=401), Reply("never")]) as server:
        config = write(
            user_config_dir / "config.toml",
            f'api_key = "{SECRET_FILE}"\nretry_base_delay = 0.01\n',
        )
        env = {**os.environ, "OPENAI_API_KEY": SECRET_ENV}
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "tui_agent",
                "run",
                "hello",
                "--base-url",
                server.base_url,
                "--model",
                "fake-model",
            ],
            cwd=project,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=60,
        )

    assert done.returncode == 1, done.stderr
    assert "authentication failed" in done.stderr
    assert SECRET_ENV not in done.stderr + done.stdout
    assert server.headers[0]["authorization"] == f"Bearer {SECRET_ENV}"
    log_file = paths.user_log_dir() / "tui-agent.log"
    assert str(log_file).startswith(str(isolated_home))
    log_text = log_file.read_text(encoding="utf-8")
    assert "broken" in log_text  # the log was really written during the run
    assert broken.is_file()
    files = assert_no_secret_on_disk(isolated_home, config)
    assert log_file in files


async def test_session_close_closes_the_journal_and_a_later_message_reopens_it(
    project: Path,
) -> None:
    async with FakeOpenAI([Reply("one"), Reply("two")]) as server:
        session = create_session(project, base_url=server.base_url, model="m")
        assert await session.turn("first") == "one"
        handle = session.conversation.journal._handle
        assert handle is not None and not handle.closed
        await session.close()
        assert handle.closed  # callers no longer close it themselves
        assert await session.turn("second") == "two"
        await session.close()
    contents = [m.get("content") for m in journal.read_messages(journal_path(session.id))]
    assert contents == ["first", "one", "second", "two"]
