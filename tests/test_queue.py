"""Issue 27, "type while it works": prompts sent while a turn runs are queued (sent when it
ends, in order) or steered into it (``session.steer``: the model sees them at the next
step boundary). The core, the app (Pilot) and ``tui-agent run --input json``."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from conftest import write

from tui_agent import create_session
from tui_agent.core.session import Session
from tui_agent.events import Steered, TurnStarted
from tui_agent.testing import Call, FakeOpenAI, Reply

SLOW = 0.05  # seconds between the chunks of a reply that is still streaming when we type


def slow(text: str = "one two three four five six seven eight nine ten", **kw: Any) -> Reply:
    """A reply that takes about half a second to stream (a word a chunk)."""
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
    assert [s.prompt for s in session.steering.pending] == ["and count its words"]

    assert await turn == "Read it."
    assert len(fake_openai.requests) == 2
    second = fake_openai.requests[1]
    assert roles(second)[-3:] == ["assistant", "tool", "user"]
    assert users(second) == ["read a.txt", "and count its words"]
    steered = [e for e in seen if isinstance(e, Steered)]
    assert steered == [Steered("and count its words", "and count its words")]
    assert len([e for e in seen if isinstance(e, TurnStarted)]) == 1  # the same turn
    assert not session.steering
    kept = [m["content"] for m in session.conversation if m["role"] == "user"]
    assert kept == ["read a.txt", "and count its words"]  # journaled like any user message


async def test_steer_during_the_last_reply_starts_the_next_turn(
    session: Session, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script += [slow("The first answer is long."), Reply("Second answer.")]
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
    assert [e for e in seen if isinstance(e, Steered)][0].next_turn
    assert [c.prompt for c in session.checkpoints.list()] == ["first", "second"]  # /undo: one


async def test_steer_without_a_turn_does_nothing(session: Session, fake_openai: FakeOpenAI) -> None:
    assert await session.steer("hello") is False
    assert not session.steering
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
    assert [s.prompt for s in session.steering.take()] == ["then this"]
    assert len(fake_openai.requests) == 1
    assert "then this" not in str(session.conversation.messages)
