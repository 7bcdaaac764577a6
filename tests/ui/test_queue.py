"""Issue 27, "type while it works": prompts sent while a turn runs are queued (sent when it
ends, in order) or steered into it (``session.steer``: the model sees them at the next
step boundary). The core, the app (Pilot) and ``tui-agent run --input json``."""

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
from tui_agent.core.session.session import Session
from tui_agent.events import Steered, TurnStarted
from tui_agent.testing import (
    Call,
    FakeOpenAI,
    Reply,
    chat_text,
    run_app,
    send,
    turn_over,
    wait_for,
    wait_for_text,
)

SLOW = 0.1  # seconds between the chunks of a reply that is still streaming when we type


LONG = "The first answer is long and takes a while to come."


def slow(text: str = "one two three four five six seven eight nine ten", **kw: Any) -> Reply:
    """A reply that takes about a second to stream (a word a chunk)."""
    return Reply(text, delay=SLOW, **kw)


def users(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "user"]


def roles(request: dict[str, Any]) -> list[str]:
    return [m["role"] for m in request["messages"]]


@pytest.fixture
def session(project: Path, fake_openai: FakeOpenAI) -> Session:
    write(project / "a.txt", "alpha beta\n")
    return create_session(project, base_url=fake_openai.base_url, model="fake-model")


async def started(server: FakeOpenAI, requests: int = 1) -> None:
    """Until the server has ``requests`` requests (the reply is streaming)."""
    for _ in range(500):
        if len(server.requests) >= requests:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"the server got {len(server.requests)} requests, not {requests}")


# -- the core: session.steer ------------------------------------------------------------------


async def test_steer_reaches_the_next_request_after_the_tool_results(
    session: Session, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script += [
        Reply(calls=[Call("read", {"path": "a.txt"})], delay=SLOW, chunk_words=1),
        Reply("Read it."),
    ]
    seen: list[Any] = []
    session.events.listen(seen.append)
    turn = asyncio.ensure_future(session.turn("read a.txt"))
    await started(fake_openai)
    assert await session.steer("and count its words")
    assert [s.prompt for s in session.conversation.steering.pending] == ["and count its words"]

    assert await turn == "Read it."
    assert len(fake_openai.requests) == 2
    second = fake_openai.requests[1]
    assert roles(second)[-3:] == ["assistant", "tool", "user"]
    assert users(second) == ["read a.txt", "and count its words"]
    steered = [e for e in seen if isinstance(e, Steered)]
    assert steered == [Steered("and count its words", "and count its words")]
    assert len([e for e in seen if isinstance(e, TurnStarted)]) == 1  # the same turn
    assert not session.conversation.steering
    kept = [m["content"] for m in session.conversation if m["role"] == "user"]
    assert kept == ["read a.txt", "and count its words"]  # journaled like any user message


async def test_steer_during_the_last_reply_starts_the_next_turn(
    session: Session, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script += [
        slow(LONG),
        Reply("Second answer."),
    ]
    seen: list[Any] = []
    session.events.listen(seen.append)
    turn = asyncio.ensure_future(session.turn("first"))
    await started(fake_openai)
    assert await session.steer("second")

    assert await turn == "Second answer."
    assert [users(r) for r in fake_openai.requests] == [["first"], ["first", "second"]]
    assert roles(fake_openai.requests[1])[-2:] == ["assistant", "user"]
    assert [type(e).__name__ for e in seen if isinstance(e, Steered | TurnStarted)] == [
        "TurnStarted",
        "Steered",
        "TurnStarted",
    ]
    assert next(e for e in seen if isinstance(e, Steered)).next_turn
    assert [c.prompt for c in session.checkpoints.list()] == ["first", "second"]  # /undo: one


async def test_steer_without_a_turn_does_nothing(session: Session, fake_openai: FakeOpenAI) -> None:
    assert await session.steer("hello") is False
    assert not session.conversation.steering
    assert fake_openai.requests == []


async def test_a_cancelled_turn_keeps_what_was_steered(
    session: Session, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script += [slow("a b c d e f g h i j k l m n o p q r s t u v w x y z")]
    turn = asyncio.ensure_future(session.turn("first"))
    await started(fake_openai)
    assert await session.steer("then this")
    assert session.cancel()
    with pytest.raises(asyncio.CancelledError):
        await turn
    assert [s.prompt for s in session.conversation.steering.take()] == ["then this"]
    assert len(fake_openai.requests) == 1
    assert "then this" not in str(session.conversation.messages)


# -- the app: Enter queues, Ctrl+S steers, Up edits, Esc takes back -------------------------


def shown_users(app: Any) -> list[str]:
    """The user messages the chat shows, in order."""
    from tui_agent.ui.blocks.message import UserMessage

    return [str(m.visual.plain) for m in app.chat.query(UserMessage)]  # type: ignore[attr-defined]


def queue_text(app: Any) -> str:
    from tui_agent.ui.queue import QueuedPrompts

    views = app.query(QueuedPrompts)
    if not views or not views.first().has_class("shown"):
        return ""
    return str(views.first().visual.plain)


async def typed(pilot: Any, text: str) -> None:
    """``text`` in the prompt, cursor at its end, nothing pressed."""
    from tui_agent.ui.prompt import PromptArea

    prompt = pilot.app.query_one(PromptArea)
    prompt.focus()
    prompt.text = text
    prompt.move_cursor(prompt.document.end)
    await pilot.pause()


async def streaming(pilot: Any, server: FakeOpenAI, requests: int = 1) -> None:
    """Until the app's turn is running and the server has ``requests`` requests."""
    await wait_for(pilot, lambda: pilot.app.session.busy and len(server.requests) >= requests)


async def settled(pilot: Any, server: FakeOpenAI, requests: int) -> None:
    """Until the queue is empty, ``requests`` requests were made and the app is idle; then
    a moment more, so a request sent twice would show."""
    await wait_for(pilot, lambda: len(server.requests) >= requests, timeout=10)
    await turn_over(pilot)
    await wait_for(pilot, lambda: not pilot.app.queued and not pilot.app.working, timeout=10)
    await turn_over(pilot)
    await asyncio.sleep(0.3)
    await pilot.pause()


async def test_enter_while_working_queues_and_sends_when_the_turn_ends(
    session: Session, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script += [
        slow(LONG),
        Reply("Second answer."),
        Reply("Third."),
    ]
    async with run_app(session) as pilot:
        app: Any = pilot.app
        await send(pilot, "first")
        await streaming(pilot, fake_openai)
        await send(pilot, "second")
        await send(pilot, "third")
        assert app.queued == ("second", "third")
        assert "◦ queued: second" in queue_text(app) and "◦ queued: third" in queue_text(app)
        assert app.prompt.text == ""
        assert app.screen.active_bindings["escape"].binding.action == "unqueue"
        assert len(fake_openai.requests) == 1  # nothing goes out before the turn ends

        await settled(pilot, fake_openai, 3)
        assert [users(r) for r in fake_openai.requests] == [
            ["first"],
            ["first", "second"],
            ["first", "second", "third"],
        ]  # one at a time, in order, each once
        assert roles(fake_openai.requests[1])[-2:] == ["assistant", "user"]
        assert shown_users(app) == ["first", "second", "third"]
        assert queue_text(app) == ""
        assert "Third." in chat_text(app)
    session.conversation.journal.close()


async def test_up_in_the_empty_prompt_takes_the_last_queued_back_for_editing(
    session: Session, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script += [slow(), Reply("Done.")]
    async with run_app(session) as pilot:
        app: Any = pilot.app
        await send(pilot, "first")
        await streaming(pilot, fake_openai)
        await send(pilot, "secnd prompt")
        assert app.queued == ("secnd prompt",)
        await pilot.press("up")
        assert app.prompt.text == "secnd prompt"  # the queued one, not the history's
        assert app.queued == ()
        assert queue_text(app) == ""
        await typed(pilot, "second prompt")
        await pilot.press("enter")
        assert app.queued == ("second prompt",)

        await settled(pilot, fake_openai, 2)
        assert [users(r) for r in fake_openai.requests] == [["first"], ["first", "second prompt"]]
        assert shown_users(app) == ["first", "second prompt"]
    session.conversation.journal.close()


async def test_esc_takes_the_queue_back_before_it_cancels(
    session: Session, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script += [slow("a b c d e f g h i j k l m n o p q r s t")]
    async with run_app(session) as pilot:
        app: Any = pilot.app
        await send(pilot, "first")
        await streaming(pilot, fake_openai)
        await send(pilot, "later one")
        await send(pilot, "later two")
        await typed(pilot, "typed")
        await pilot.press("escape")
        assert app.prompt.text == "later one\n\nlater two\n\ntyped"
        assert app.queued == ()
        assert app.session.busy  # the turn goes on
        assert app.screen.active_bindings["escape"].binding.action == "cancel_turn"

        await settled(pilot, fake_openai, 1)
        assert len(fake_openai.requests) == 1  # nothing queued was sent
        assert "a b c d e f g h i j k l m n o p q r s t" in chat_text(app)
        assert app.prompt.text == "later one\n\nlater two\n\ntyped"
    session.conversation.journal.close()


async def test_cancelling_the_turn_puts_the_queue_back_into_the_prompt(
    session: Session, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script += [slow("a b c d e f g h i j k l m n o p q r s t")]
    async with run_app(session) as pilot:
        app: Any = pilot.app
        await send(pilot, "first")
        await streaming(pilot, fake_openai)
        await send(pilot, "queued one")
        await pilot.press("ctrl+c")  # cancels whatever is queued
        await settled(pilot, fake_openai, 1)
        assert "Cancelled." in chat_text(app)
        assert app.prompt.text == "queued one"
        assert app.queued == ()
        assert len(fake_openai.requests) == 1
        assert shown_users(app) == ["first"]
    session.conversation.journal.close()


async def test_ctrl_s_steers_into_the_turn_at_the_next_step(
    session: Session, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script += [
        Reply(calls=[Call("read", {"path": "a.txt"})], delay=SLOW),
        Reply("It says alpha beta."),
    ]
    async with run_app(session) as pilot:
        app: Any = pilot.app
        await send(pilot, "read a.txt")
        await streaming(pilot, fake_openai)
        assert app.screen.active_bindings["ctrl+s"].binding.action == "steer"
        await typed(pilot, "and count the words")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: "↳ steering: and count the words" in queue_text(app))
        assert app.queued == ()

        await settled(pilot, fake_openai, 2)
        second = fake_openai.requests[1]
        assert roles(second)[-3:] == ["assistant", "tool", "user"]
        assert users(second) == ["read a.txt", "and count the words"]
        assert len(fake_openai.requests) == 2  # the same turn: no request of its own
        assert shown_users(app) == ["read a.txt", "and count the words"]
        text = chat_text(app)
        assert text.index("✔ read") < text.index("and count the words") < text.index("It says")
        assert queue_text(app) == ""
    session.conversation.journal.close()


async def test_steering_the_last_reply_is_the_next_turn_shown_once(
    session: Session, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script += [
        slow(LONG),
        Reply("Second answer."),
    ]
    async with run_app(session) as pilot:
        app: Any = pilot.app
        await send(pilot, "first")
        await streaming(pilot, fake_openai)
        await typed(pilot, "second")
        await pilot.press("ctrl+s")
        await settled(pilot, fake_openai, 2)
        assert [users(r) for r in fake_openai.requests] == [["first"], ["first", "second"]]
        assert shown_users(app) == ["first", "second"]
        assert "Second answer." in chat_text(app)
    session.conversation.journal.close()


async def test_ctrl_s_with_an_empty_prompt_steers_the_queue(
    session: Session, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script += [
        Reply(calls=[Call("read", {"path": "a.txt"})], delay=SLOW),
        Reply("Done."),
    ]
    async with run_app(session) as pilot:
        app: Any = pilot.app
        await send(pilot, "read a.txt")
        await streaming(pilot, fake_openai)
        await send(pilot, "hurry")
        assert app.queued == ("hurry",)
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: app.steering == ("hurry",))
        await settled(pilot, fake_openai, 2)
        assert users(fake_openai.requests[1]) == ["read a.txt", "hurry"]
        assert len(fake_openai.requests) == 2
    session.conversation.journal.close()


async def test_cancel_takes_back_what_was_steered(
    session: Session, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script += [slow("a b c d e f g h i j k l m n o p q r s t")]
    async with run_app(session) as pilot:
        app: Any = pilot.app
        await send(pilot, "first")
        await streaming(pilot, fake_openai)
        await typed(pilot, "steered")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: app.session.conversation.steering)
        await pilot.press("escape")  # the steer is taken back, the turn goes on
        assert app.prompt.text == "steered" and app.session.busy
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: app.session.conversation.steering)
        await pilot.press("ctrl+c")
        await settled(pilot, fake_openai, 1)
        assert app.prompt.text == "steered"
        assert len(fake_openai.requests) == 1
    session.conversation.journal.close()


async def test_commands_run_at_once_and_markdown_commands_and_shell_lines_wait(
    session: Session, fake_openai: FakeOpenAI
) -> None:
    """A ``/command`` runs while the turn runs (``/reload`` mid-reply is a feature); a
    Markdown command's prompt is a turn and a ``!command`` shares the conversation: both
    wait for the turn, also when Ctrl+S is pressed."""
    from tui_agent.core.util.paths import user_config_dir

    write(user_config_dir() / "commands" / "hello.md", "Say hello to $ARGUMENTS.\n")
    session.reload()
    fake_openai.script += [slow(), Reply("Hello, Bob.")]
    ran: list[str] = []

    async def mark(args: str | None) -> None:
        ran.append(f"busy={session.busy}")

    async with run_app(session) as pilot:
        app: Any = pilot.app
        await wait_for(pilot, lambda: session.extensions.loaded)
        session.commands.register("mark", description="Mark", handler=mark)
        await send(pilot, "first")
        await streaming(pilot, fake_openai)
        await send(pilot, "/mark")
        await wait_for(pilot, lambda: ran == ["busy=True"])
        await send(pilot, "/hello Bob")
        await typed(pilot, "!echo shell-ran")
        await pilot.press("ctrl+s")  # a command is never steered: Enter's way
        assert app.queued == ("/hello Bob", "!echo shell-ran")
        await settled(pilot, fake_openai, 2)
        assert users(fake_openai.requests[1])[-1] == "Say hello to Bob."
        await wait_for_text(pilot, "shell-ran")
        assert len(fake_openai.requests) == 2
        assert ran == ["busy=True"]
    session.conversation.journal.close()


# -- tui-agent run --input json ----------------------------------------------------------------


def headless(project: Path, server: FakeOpenAI, *args: str) -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "tui_agent", "run", "--input", "json", *args]
    argv += ["--base-url", server.base_url, "--model", "fake-model"]
    return subprocess.Popen(
        argv,
        cwd=project,
        env=dict(os.environ),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )


def feed(process: subprocess.Popen[str], **line: Any) -> None:
    assert process.stdin is not None
    process.stdin.write(json.dumps({"type": "user", **line}) + "\n")
    process.stdin.flush()


def wait_requests(server: FakeOpenAI, count: int) -> None:
    deadline = time.monotonic() + 20
    while len(server.requests) < count:
        assert time.monotonic() < deadline, f"{len(server.requests)} requests, not {count}"
        time.sleep(0.02)


def test_json_input_queues_and_steers_as_lines_come(project: Path, fake_openai: FakeOpenAI) -> None:
    write(project / "a.txt", "alpha beta\n")
    fake_openai.script += [
        Reply(calls=[Call("read", {"path": "a.txt"})], delay=SLOW),
        slow("It says alpha beta and nothing more than that here."),
        Reply("Queued answer."),
    ]
    process = headless(project, fake_openai, "--json", "--yes")
    feed(process, text="read a.txt")
    wait_requests(fake_openai, 1)
    feed(process, text="and count the words", steer=True)  # into the running turn
    feed(process, text="then this")  # after it
    wait_requests(fake_openai, 2)
    out, err = process.communicate("not json\n", timeout=60)  # and the input ends

    assert [users(r) for r in fake_openai.requests] == [
        ["read a.txt"],
        ["read a.txt", "and count the words"],
        ["read a.txt", "and count the words", "then this"],
    ]
    assert roles(fake_openai.requests[1])[-3:] == ["assistant", "tool", "user"]
    events = [json.loads(line) for line in out.splitlines()]
    kinds = [e["type"] for e in events]
    assert kinds.count("turn_started") == 2 and kinds.count("done") == 2
    (steered,) = [e for e in events if e["type"] == "steered"]
    assert steered["prompt"] == "and count the words" and steered["next_turn"] is False
    assert kinds.index("tool_result") < kinds.index("steered") < kinds.index("done")
    assert "input line 4: not JSON" in err
    assert process.returncode == 2  # the bad line, said and skipped


def test_json_input_cancel_runs_what_was_steered_next(
    project: Path, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script += [slow("a b c d e f g h i j k l m n o p q r s t u v w x y z")]
    fake_openai.script += [Reply("Steered answer.")]
    process = headless(project, fake_openai)
    feed(process, text="first")
    wait_requests(fake_openai, 1)
    feed(process, text="steered", steer=True)
    time.sleep(0.3)
    out, err = process.communicate('{"type": "cancel"}\n', timeout=60)

    assert [users(r) for r in fake_openai.requests] == [["first"], ["first", "steered"]]
    assert "tui-agent: cancelled" in err
    assert "Steered answer." in out
    assert process.returncode == 1


# -- the testing kit ----------------------------------------------------------------------------


async def test_the_kit_queues_and_steers_while_a_turn_runs(
    session: Session, fake_openai: FakeOpenAI
) -> None:
    from tui_agent.testing import queue, steer

    fake_openai.script += [
        Reply(calls=[Call("read", {"path": "a.txt"})], delay=SLOW),
        Reply("Read."),
        Reply("Queued."),
    ]
    async with run_app(session) as pilot:
        app: Any = pilot.app
        with pytest.raises(AssertionError, match="nothing runs"):
            await queue(pilot, "too early")
        await send(pilot, "read a.txt")
        await streaming(pilot, fake_openai)
        await queue(pilot, "after it")
        await steer(pilot, "before the next request")
        assert app.queued == ("after it",)
        assert [s.prompt for s in session.conversation.steering.pending] == [
            "before the next request"
        ]
        await turn_over(pilot)  # the queue too
        assert [users(r) for r in fake_openai.requests] == [
            ["read a.txt"],
            ["read a.txt", "before the next request"],
            ["read a.txt", "before the next request", "after it"],
        ]
        assert "Queued." in chat_text(app)
    session.conversation.journal.close()


# -- the real app in a terminal (tmux) ------------------------------------------------------


def tmux(socket: str, *args: str) -> str:
    done = subprocess.run(["tmux", "-L", socket, *args], capture_output=True, text=True)
    return done.stdout


def test_in_tmux_a_prompt_typed_during_a_long_reply_is_sent_once(
    project: Path, isolated_home: Path, fake_openai: FakeOpenAI
) -> None:
    """The real app in a real terminal: a prompt typed (Enter) and one steered (Ctrl+S)
    while a reply streams are each sent once, the steered first."""
    words = " ".join(f"w{i}" for i in range(40))
    fake_openai.script += [slow(f"Long reply {words}"), Reply("Steered answer."), Reply("Last.")]
    socket = f"tui-agent-test-{os.getpid()}"
    env = {k: v for k, v in os.environ.items() if k in ("HOME", "PATH", "LANG")}
    env |= {k: v for k, v in os.environ.items() if k.startswith("XDG_")}
    command = [
        "env",
        *(f"{k}={v}" for k, v in env.items()),
        "TUI_AGENT_CI=1",
        sys.executable,
        "-m",
        "tui_agent",
        "--base-url",
        fake_openai.base_url,
        "--model",
        "fake-model",
    ]
    tmux(
        socket,
        "new-session",
        "-d",
        "-s",
        "app",
        "-x",
        "110",
        "-y",
        "40",
        "-c",
        str(project),
        *command,
    )

    def pane() -> str:
        return tmux(socket, "capture-pane", "-p", "-S", "-200")

    def until(condition: Any, what: str) -> None:
        deadline = time.monotonic() + 30
        while not condition():
            assert time.monotonic() < deadline, f"{what}; the pane shows:\n{pane()}"
            time.sleep(0.05)

    try:
        until(lambda: "Quit" in pane(), "the app did not start")
        tmux(socket, "send-keys", "-t", "app", "first prompt", "Enter")
        until(lambda: fake_openai.requests, "the prompt was not sent")
        tmux(socket, "send-keys", "-t", "app", "queued prompt", "Enter")
        until(lambda: "◦ queued: queued prompt" in pane(), "not queued")
        tmux(socket, "send-keys", "-t", "app", "steered prompt", "C-s")
        until(lambda: "↳ steering: steered prompt" in pane(), "not steered")
        assert len(fake_openai.requests) == 1  # the long reply still streams
        until(lambda: "Last." in pane(), "the queue was not sent")
        time.sleep(1)  # a prompt sent twice would make a fourth request by now
        shown = pane()
    finally:
        tmux(socket, "kill-server")
    assert [users(r) for r in fake_openai.requests] == [
        ["first prompt"],
        ["first prompt", "steered prompt"],
        ["first prompt", "steered prompt", "queued prompt"],
    ]
    assert shown.count("queued prompt") == 1 and shown.count("steered prompt") == 1
    assert shown.index("w39") < shown.index("steered prompt") < shown.index("Steered answer.")
    assert shown.index("Steered answer.") < shown.index("queued prompt") < shown.index("Last.")


async def test_a_steered_prompt_starts_no_turn_for_rewind_and_redo(
    session: Session, fake_openai: FakeOpenAI
) -> None:
    """/rewind takes two turns back, /redo brings them back one at a time: the steered
    message stays inside the turn it was steered into (each turn's messages start at its
    own prompt, not at any user message)."""
    fake_openai.script += [
        Reply("First answer."),
        Reply(calls=[Call("read", {"path": "a.txt"})], delay=SLOW),
        Reply("Read it."),
    ]
    assert await session.turn("first") == "First answer."
    turn = asyncio.ensure_future(session.turn("read a.txt"))
    await started(fake_openai, 2)
    assert await session.steer("and count its words")
    assert await turn == "Read it."
    whole = [(m["role"], m.get("content")) for m in session.conversation]
    assert [c for r, c in whole if r == "user"] == ["first", "read a.txt", "and count its words"]

    first = session.checkpoints.list()[0].turn
    await session.checkpoints.rewind(first, code=False)
    assert list(session.conversation) == []
    await session.checkpoints.redo()  # the first turn, and only it
    assert [(m["role"], m.get("content")) for m in session.conversation] == whole[:2]
    await session.checkpoints.redo()
    assert [(m["role"], m.get("content")) for m in session.conversation] == whole
