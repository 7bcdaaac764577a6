"""A long reply costs the core the same per chunk at its end as at its start (issue 29):
the reply's text, its thinking and a tool call's arguments are not rebuilt on every chunk.

Counted, not timed: every chunk is a ``str`` that counts the characters of any text it is
appended to with ``+`` (Python calls the right operand's ``__radd__`` first when its type
is a subclass of the left's), so a text rebuilt on every chunk counts about the square of
its length. Before the fix the loop did ``reply.text += chunk`` and the provider's reader
``+=`` on each call's arguments: CPython grows a string in place only in a plain variable,
so both copied the whole text for each chunk (~190 µs a chunk at the end of a
100,000-token reply, 8.7 s in all).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tui_agent import create_session
from tui_agent.core.protocol import events as ev
from tui_agent.core.providers import Text, Thinking
from tui_agent.core.providers.chunks import ReplyReader

TOKENS = 100_000


class Counted(str):
    """A chunk that counts the characters of the text it is appended to."""

    copied = 0

    def __radd__(self, other: str) -> str:
        Counted.copied += len(other)
        return str.__add__(other, self)


def test_a_chunk_counts_what_it_is_appended_to() -> None:
    """(The instrument itself: a text grown with ``+=`` counts what it held each time.)"""
    Counted.copied = 0
    text = "x" * 10
    holder = {"text": text}
    for _ in range(3):
        holder["text"] += Counted("ab")
    assert holder["text"] == "x" * 10 + "ab" * 3
    assert Counted.copied == 10 + 12 + 14


async def test_a_100000_token_reply_is_not_rebuilt_on_every_chunk(project: Path) -> None:
    class Long:
        name = "long"
        model = "long-1"

        async def stream(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
            for _ in range(TOKENS // 2):
                yield Thinking(Counted("hmm "))
            for _ in range(TOKENS):
                yield Text(Counted("word "))

        async def models(self) -> list[str]:
            return ["long-1"]

    import tui_agent

    tui_agent.configure(lambda config: config.provider("long", lambda settings: Long()))
    session = create_session(project, provider="long")
    chunks = [0]

    def listen(event: Any) -> None:
        if isinstance(event, ev.TextChunk | ev.ThinkingChunk):
            chunks[0] += 1

    session.events.listen(listen)
    Counted.copied = 0
    answer = await session.turn("write a lot")
    assert answer == "word " * TOKENS
    assert chunks[0] == TOKENS + TOKENS // 2  # each chunk still goes out as it comes
    assert session.conversation.messages[-1].text == "word " * TOKENS
    # rebuilt on every chunk this would be ~2.5e10 (the text) + 3e9 (the thinking)
    assert Counted.copied <= 1000, Counted.copied


def test_a_tool_calls_arguments_in_100000_pieces_are_joined_once() -> None:
    reader = ReplyReader()
    Counted.copied = 0
    pieces = ['{"path": "big.txt", "content": "'] + ["line\\n"] * TOKENS + ['"}']
    for number, piece in enumerate(pieces):
        call: dict[str, Any] = {"index": 0, "function": {"arguments": Counted(piece)}}
        if number == 0:
            call |= {
                "id": "call_1",
                "type": "function",
                "function": {"name": "write"} | call["function"],
            }
        reader.feed({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]})
    reader.feed({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    calls = [event for event in reader.end() if hasattr(event, "arguments")]
    assert len(calls) == 1 and calls[0].name == "write" and calls[0].id == "call_1"
    assert calls[0].arguments == "".join(pieces)
    assert Counted.copied <= 1000, Counted.copied  # rebuilt on every piece: ~3e10
