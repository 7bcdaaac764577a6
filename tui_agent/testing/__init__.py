"""A real OpenAI-compatible HTTP server on 127.0.0.1 for tests (yours and ours).

It checks each request's transcript the way the OpenAI API does (``strict=False`` turns
that off) and answers an invalid one with HTTP 400; ``server.rejected`` lists why.
It replays a script of replies, one per ``POST /v1/chat/completions``, streaming SSE
chunks with text, thinking (``reasoning_content``), tool calls whose arguments arrive
split over several deltas, and usage. Every request body is recorded. Faults: an HTTP
status (with headers such as ``Retry-After``), a connection closed after N chunks (no
``finish_reason``, no ``[DONE]``), a stream ended cleanly after N chunks, a delay between
chunks, a pause, a stream that stalls, a malformed chunk, a chosen ``finish_reason``
(``"length"``; ``""`` sends none), no ``[DONE]``. ``FakeOpenAI(faults=Faults(errors={429:
0.15}, streams={"disconnect": 0.1}, seed=1))`` injects them at random, as a chaos server
does (a reply not delivered whole is sent again to the retry). ``Reply(chunks=[...])``
sends chunks you write yourself (dicts as JSON, strings as they are) to try a provider's
dialect.

    from tui_agent.testing import FakeOpenAI, Reply, Call

    with FakeOpenAI([Reply(calls=[Call("read", {"path": "a.txt"})]), Reply("Done.")]) as server:
        session = create_session(tmp, base_url=server.base_url)
        ...
        assert server.requests[1]["messages"][-1]["role"] == "tool"

``async with FakeOpenAI(...)`` works too, and the ``fake_openai`` pytest fixture gives a
started server with an empty script (``server.script.append(Reply(...))``).

Long sessions: ``FakeOpenAI(context_limit=16_384)`` counts each chat request with
``count_tokens`` (a documented approximation) and answers one over the limit the way OpenAI
does (HTTP 400, ``error.code = "context_length_exceeded"``, "This model's maximum context
length is N tokens. However, your messages resulted in M tokens. …"), recorded in
``server.requests`` and ``server.overflowed`` (the M of each) without using a scripted
reply; every reply's ``usage.prompt_tokens`` is then the request's count.
``advertise_limit=True`` puts the limit in ``/v1/models`` as vLLM does (``max_model_len``).
``responder=lambda body: Reply(...)`` answers whenever the script is empty, so a 300-turn
session needs no 300 scripted replies. ``extra_routes={"GET /props": {...}}`` serves other
endpoints beside the API (a JSON payload, or a function of the request's JSON body returning
a payload or ``(status, payload)``), recorded in ``server.routed``.

The app, driven by Textual's ``Pilot`` (Textual is imported only when these are used):

    async with run_app(session) as pilot:
        await send(pilot, "count a.txt")
        await wait_for_text(pilot, "It has 2 words.")
        await turn_over(pilot)

While a turn runs (a ``Reply(..., delay=0.1)`` keeps it running), ``queue(pilot, text)``
sends a line as Enter does then (it waits in ``app.queued`` and is sent when the turn
ends) and ``steer(pilot, text)`` as Ctrl+S does (the model gets it before its next
request: ``server.requests[n]["messages"]`` shows where); ``turn_over`` waits until the
queue is sent too. The prompt comes right after the first frame (a stand-in shows it
before and keeps the keys pressed meanwhile): ``wait_for_prompt(pilot)`` waits for it.
"""

from __future__ import annotations

from collections.abc import Iterator

from .checks import count_tokens, transcript_problem
from .frontend import Person
from .pilot import (
    chat_text,
    queue,
    run_app,
    send,
    steer,
    turn_over,
    type_keys,
    wait_for,
    wait_for_prompt,
    wait_for_text,
)
from .server import Call, FakeOpenAI, Faults, Reply, agent_of

__all__ = [
    "Call",
    "FakeOpenAI",
    "Faults",
    "Person",
    "Reply",
    "agent_of",
    "chat_text",
    "count_tokens",
    "fake_openai",
    "queue",
    "run_app",
    "send",
    "steer",
    "transcript_problem",
    "turn_over",
    "type_keys",
    "wait_for",
    "wait_for_prompt",
    "wait_for_text",
]


try:  # the pytest fixture, when pytest is around
    import pytest

    @pytest.fixture
    def fake_openai() -> Iterator[FakeOpenAI]:
        """A started fake server with an empty script; append ``Reply`` objects to it."""
        with FakeOpenAI() as server:
            yield server

except ImportError:  # pragma: no cover - pytest is a test extra
    pass
