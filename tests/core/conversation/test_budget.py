"""Sessions that outlive the context window (issue 15): the window, the count, pruning,
summaries in pieces, overflow recovery, /compact, --continue, capped results. Every path
goes through the real openai client against the testing kit's server with a context limit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import write

from tui_agent import create_session
from tui_agent.core.conversation import compaction
from tui_agent.core.conversation.journal import read_messages, read_records
from tui_agent.core.project.config import user_config_file
from tui_agent.core.protocol.events import Compacted, ConversationReset
from tui_agent.testing import (
    Call,
    FakeOpenAI,
    Reply,
    count_tokens,
    transcript_problem,
    wait_for_prompt,
)

SUMMARY_SYSTEM = "You summarise a conversation"


def is_summary_request(body: dict[str, Any]) -> bool:
    first = (body.get("messages") or [{}])[0]
    return str(first.get("content", "")).startswith(SUMMARY_SYSTEM)


def last(body: dict[str, Any]) -> dict[str, Any]:
    return dict(body["messages"][-1])


def configure(**settings: Any) -> None:
    lines = []
    for key, value in settings.items():
        if isinstance(value, dict):
            continue
        lines.append(f"{key} = {json.dumps(value)}")
    for key, value in settings.items():
        if isinstance(value, dict):
            for name, table in value.items():
                lines.append(f'[{key}."{name}"]')
                lines += [f"{k} = {json.dumps(v)}" for k, v in table.items()]
    write(user_config_file(), "\n".join(lines) + "\n")


def heard(session: Any) -> list[Any]:
    events: list[Any] = []
    session.events.listen(events.append)
    return events


def summaries(server: FakeOpenAI) -> list[dict[str, Any]]:
    return [body for body in server.requests if is_summary_request(body)]


def turn_requests(server: FakeOpenAI) -> list[dict[str, Any]]:
    return [body for body in server.requests if not is_summary_request(body)]


def answering(summary: str = "SUMMARY: the user asked things; all answered.") -> Any:
    """A model that answers each prompt and each tool result briefly, and writes
    ``summary`` when asked for one."""

    def respond(body: dict[str, Any]) -> Reply:
        if is_summary_request(body):
            return Reply(summary)
        return Reply("Noted." if last(body)["role"] == "user" else "Read it.")

    return respond


# -- the window -----------------------------------------------------------------------------


async def test_the_window_comes_from_settings_then_the_server_then_the_default(
    project: Path,
) -> None:
    async with FakeOpenAI(context_limit=20_000, advertise_limit=True) as server:
        session = create_session(project, base_url=server.base_url, model="fake-model")
        assert session.conversation.budget.window() == (32_768, "default")
        await session.conversation.budget.discover()  # what every turn does first
        assert session.conversation.budget.window() == (20_000, "server")
        configure(context_window=8192)
        session.reload()
        assert session.conversation.budget.window() == (8192, "setting")
        configure(context_window=8192, models={"fake-model": {"context_window": 4096}})
        session.reload()
        assert session.conversation.budget.window() == (4096, "model setting")
        session.extensions.set_model("fake-model-large")  # the per-model entry is for the other one
        assert session.conversation.budget.window() == (8192, "setting")


async def test_an_ollama_guess_is_asked_again_once_the_model_is_loaded(project: Path) -> None:
    """Ollama, model not loaded, no num_ctx: the budget uses Ollama's smallest default (not
    the trained length, which Ollama would cut silently), and after the first request (which
    loads the model) the window /api/ps states."""
    info = {"general.architecture": "qwen3", "qwen3.context_length": 40960}
    running: list[dict[str, Any]] = []

    def respond(body: dict[str, Any]) -> Reply:
        running[:] = [{"name": "qwen3:8b", "model": "qwen3:8b", "context_length": 16384}]
        return Reply("Hi.")

    routes = {
        "POST /api/show": {"parameters": "temperature 0.6", "model_info": info},
        "GET /api/ps": lambda _body: {"models": running},
        "GET /v1/models": {  # Ollama's: owned_by is the name's namespace
            "object": "list",
            "data": [{"id": "qwen3:8b", "object": "model", "created": 0, "owned_by": "library"}],
        },
    }
    async with FakeOpenAI(models=["qwen3:8b"], responder=respond, extra_routes=routes) as server:
        session = create_session(project, base_url=server.base_url, model="qwen3:8b")
        await session.conversation.budget.discover()
        assert session.conversation.budget.window() == (4096, "server")
        await session.turn("hello")
        await session.conversation.budget.discover()
        assert session.conversation.budget.window() == (16384, "server")


async def test_a_bad_window_setting_is_a_config_problem(project: Path) -> None:
    configure(context_window="big", compact_at=2)
    session = create_session(project)
    problems = [str(p) for p in session.extensions.config_problems]
    assert any("context_window must be a whole number of tokens" in p for p in problems)
    assert any("compact_at must be a share of the context window" in p for p in problems)
    assert session.conversation.budget.window() == (32_768, "default")
    assert session.conversation.budget.compact_at == 0.8


async def test_use_counts_the_reported_prompt_tokens_plus_what_came_since(
    project: Path,
) -> None:
    async with FakeOpenAI(context_limit=50_000, responder=answering()) as server:
        session = create_session(project, base_url=server.base_url, model="fake-model")
        await session.turn("hello " * 200)
        [request] = server.requests
        reported = count_tokens(request)
        assert session.conversation.usage.prompt_tokens == reported
        use = session.conversation.budget.use()
        assert use is not None
        # the request's count, plus the reply recorded after it (estimated)
        reply = session.conversation.messages[-1]
        assert use.tokens == reported + compaction.estimate(reply)
        assert use.label() == f"ctx {use.tokens / 32_768:.0%} of 32k"


# -- pruning, summaries ---------------------------------------------------------------------


async def test_pruning_alone_replaces_old_tool_results_with_a_stub(project: Path) -> None:
    for n in range(4):
        write(project / f"notes{n}.txt", f"line {n} of the notes\n" * 120)  # ~650 tokens
    configure(context_window=4096)

    def respond(body: dict[str, Any]) -> Reply:
        message = last(body)
        if message["role"] == "user":
            n = message["content"].split()[-1]
            return Reply(calls=[Call("read", {"path": f"notes{n}.txt"})])
        return Reply("Read it.")

    async with FakeOpenAI(context_limit=4096, responder=respond) as server:
        session = create_session(project, base_url=server.base_url, model="fake-model")
        seen = heard(session)
        for n in range(4):
            await session.turn(f"read notes {n}")
        assert server.overflowed == [] and server.rejected == []
        assert summaries(server) == []  # pruning was enough: no summary request
        events = [e for e in seen if isinstance(e, Compacted)]  # one or two: the tools' size
        assert events
        for event in events:
            assert event.reason == "auto" and event.pruned >= 1 and event.summarised == 0
            assert event.after < event.before
        tools = [m for m in session.conversation.messages if m["role"] == "tool"]
        stubbed = [m for m in tools if m.result.get("pruned")]
        assert stubbed and "line 3 of the notes" in tools[-1]["content"]  # the newest stays
        stub = stubbed[0].result["output"]
        assert stub.startswith('[pruned to save context: read {"path": "notes0.txt"} returned')
        assert transcript_problem(session.conversation.request("system")) is None
        # the journal keeps the whole results
        journaled = read_messages(session.conversation.journal.path)
        assert sum("line 0 of the notes" in str(m.get("content")) for m in journaled) == 1
        session.conversation.journal.close()


async def test_a_long_session_is_summarised_before_it_overflows(project: Path) -> None:
    configure(context_window=4096)
    async with FakeOpenAI(context_limit=4096, responder=answering()) as server:
        session = create_session(project, base_url=server.base_url, model="fake-model")
        seen = heard(session)
        for n in range(12):
            await session.turn(f"question {n}: " + "tell me more about this " * 60)  # ~370 tok
        assert server.overflowed == [] and server.rejected == []
        events = [e for e in seen if isinstance(e, Compacted)]
        assert events and all(e.reason == "auto" and e.summarised for e in events)
        assert not [e for e in seen if isinstance(e, ConversationReset)]
        messages = session.conversation.messages
        assert messages[0]["content"].startswith(compaction.SUMMARY_HEADER)
        assert "SUMMARY: the user asked things" in messages[0]["content"]
        assert messages[-2]["content"].startswith("question 11: ")  # the newest verbatim
        for body in turn_requests(server):
            assert count_tokens(body) <= 4096
        for body in summaries(server):  # the summary requests fit too
            assert count_tokens(body) <= 4096 and not body.get("tools")
        notes = [e.text for e in seen if type(e).__name__ == "Note"]
        assert any(t.startswith("Compacted the conversation (it neared the context") for t in notes)
        # nothing is lost on disk: every prompt is in the journal, and compactions recorded
        journaled = [m.get("content", "") for m in read_messages(session.conversation.journal.path)]
        assert sum(str(c).startswith("question ") for c in journaled) == 12
        records = read_records(session.conversation.journal.path)
        assert sum(r.get("type") == "compaction" for r in records) == len(events)
        session.conversation.journal.close()


async def test_continue_after_a_compaction_resumes_the_compacted_state(project: Path) -> None:
    configure(context_window=4096)
    async with FakeOpenAI(context_limit=4096, responder=answering("SUMMARY-X")) as server:
        session = create_session(project, base_url=server.base_url, model="fake-model")
        for n in range(10):
            await session.turn(f"question {n}: " + "tell me more about this " * 60)
        compacted = [dict(m) for m in session.conversation.messages]
        assert compacted[0]["content"].startswith(compaction.SUMMARY_HEADER)
        session.conversation.journal.close()

        again = create_session(project, base_url=server.base_url, model="fake-model")
        assert again.conversation.resume()  # what --continue does
        assert [dict(m) for m in again.conversation.messages] == compacted
        await again.turn("and now?")
        sent = server.requests[-1]["messages"]
        assert "SUMMARY-X" in sent[1]["content"] and sent[-1]["content"] == "and now?"
        assert count_tokens(server.requests[-1]) <= 4096
        again.conversation.journal.close()


async def test_a_summary_request_that_would_not_fit_is_made_in_pieces(project: Path) -> None:
    """/compact on a conversation already larger than the window: each piece fits."""
    configure(context_window=2048)
    pieces: list[str] = []

    def respond(body: dict[str, Any]) -> Reply:
        if is_summary_request(body):
            pieces.append(last(body)["content"])
            return Reply(f"SUMMARY after piece {len(pieces)}")
        return Reply("ok")

    async with FakeOpenAI(context_limit=2048, responder=respond) as server:
        session = create_session(project, base_url=server.base_url, model="fake-model")
        for n in range(20):  # 20 × ~300 tokens: three windows' worth
            session.conversation.record(
                {"role": "user", "content": f"note {n}: " + "words here " * 110}
            )
            session.conversation.record({"role": "assistant", "content": f"noted {n}"})
        use = session.conversation.budget.use()
        assert use is not None and use.tokens > 3 * 2048
        assert await session.commands.run_line("/compact")
        assert len(pieces) >= 3
        assert server.overflowed == []
        for body in summaries(server):
            assert count_tokens(body) <= 2048
        # each piece carries the summary so far, and the last summary is what is kept
        assert "SUMMARY after piece 1" in pieces[1]
        messages = session.conversation.messages
        assert [m["role"] for m in messages] == ["user", "assistant"]
        assert f"SUMMARY after piece {len(pieces)}" in messages[0]["content"]
        await session.turn("go on")
        assert count_tokens(server.requests[-1]) <= 2048
        session.conversation.journal.close()


async def test_a_plugin_summariser_writes_the_summary(project: Path) -> None:
    configure(context_window=2048)
    async with FakeOpenAI(context_limit=2048, responder=answering()) as server:
        session = create_session(project, base_url=server.base_url, model="fake-model")
        given: list[tuple[int, str]] = []

        async def mine(messages: Any, so_far: str) -> str:
            given.append((len(messages), so_far))
            return f"{so_far} +{len(messages)}".strip()

        session.conversation.budget.summariser = mine
        for n in range(6):
            session.conversation.record(
                {"role": "user", "content": f"note {n}: " + "words here " * 110}
            )
            session.conversation.record({"role": "assistant", "content": f"noted {n}"})
        event = await session.conversation.budget.compact("command", force=True)
        assert event is not None and event.summarised == 12
        assert summaries(server) == []  # the model was not asked
        assert sum(count for count, _ in given) == 12
        assert session.conversation.messages[0]["content"].endswith(
            given[-1][1] + f" +{given[-1][0]}"
        )
        session.conversation.journal.close()


# -- overflow -------------------------------------------------------------------------------


async def test_an_overflow_error_compacts_and_retries_once(project: Path) -> None:
    """The window is unknown (the default is far larger than the server's): the server
    refuses, the session learns the limit from the error, compacts and goes on."""
    async with FakeOpenAI(context_limit=3000, responder=answering()) as server:
        session = create_session(project, base_url=server.base_url, model="fake-model")
        seen = heard(session)
        for n in range(12):
            reply = await session.turn(f"question {n}: " + "tell me more about this " * 50)
            assert reply in ("Noted.",), reply
        assert len(server.overflowed) == 1  # once: then the session knows the window
        assert session.conversation.budget.window() == (3000, "overflow error")
        [first, *later] = [e for e in seen if isinstance(e, Compacted)]
        assert first.reason == "overflow"
        assert all(e.reason == "auto" for e in later)
        errors = [e.text for e in seen if type(e).__name__ == "Note" and e.kind == "error"]
        assert errors == []
        assert transcript_problem(session.conversation.request("system")) is None
        session.conversation.journal.close()


async def test_an_overflow_that_compaction_cannot_fix_is_a_clear_error(project: Path) -> None:
    async with FakeOpenAI(context_limit=1000, responder=answering()) as server:
        session = create_session(project, base_url=server.base_url, model="fake-model")
        seen = heard(session)
        reply = await session.turn("x " * 3000)  # one prompt larger than the window
        assert reply == ""
        errors = [e.text for e in seen if type(e).__name__ == "Note" and e.kind == "error"]
        assert errors and "maximum context length is 1000 tokens" in errors[-1]
        # nothing older to summarise: no retry that would fail the same way, no loop
        assert len(turn_requests(server)) == 1 and summaries(server) == []
        assert session.conversation.messages[0]["role"] == "user"  # nothing typed is lost
        session.conversation.journal.close()


# -- one result never floods the window -----------------------------------------------------


async def test_a_huge_tool_result_is_cut_and_saved_whole(project: Path) -> None:
    configure(context_window=4096)
    write(project / "big.txt", "".join(f"row {n}\n" for n in range(3000)))  # ~5k tokens
    script = [Reply(calls=[Call("read", {"path": "big.txt", "limit": 3000})]), Reply("Done.")]
    async with FakeOpenAI(script, context_limit=4096) as server:
        session = create_session(project, base_url=server.base_url, model="fake-model")
        assert await session.turn("read big.txt") == "Done."
        [tool] = [m for m in session.conversation.messages if m["role"] == "tool"]
        result = tool.result
        assert result["truncated"] is True
        assert len(result.to_json()) <= 4096 // 4 * 4 + 500
        assert "row 2999" in result["output"]  # the end is kept
        assert "result cut to fit the context window" in result["output"]
        saved = Path(result["full_output"])
        assert "row 0\\n" in saved.read_text()  # the whole result, as JSON
        assert server.overflowed == []
        session.conversation.journal.close()


@pytest.mark.parametrize("window", [2048, 4096])
def test_prune_and_split_keep_the_transcript_valid(window: int) -> None:
    from tui_agent.core.protocol.messages import AssistantMessage, ToolMessage, UserMessage
    from tui_agent.core.protocol.result import Result

    messages: list[Any] = []
    for n in range(30):
        messages.append(UserMessage(f"q{n} " + "x" * 400))
        call = Call("read", {"path": f"f{n}"})
        messages.append(AssistantMessage("", [_call(f"c{n}", call)]))
        messages.append(ToolMessage(f"c{n}", Result({"output": "y" * 2000})))
        messages.append(AssistantMessage(f"a{n}"))
    pruned, count = compaction.prune(messages, int(window * 0.15))
    assert count > 0 and transcript_problem(pruned) is None
    assert "y" * 2000 in pruned[-2]["content"]  # the newest result stays
    cut = compaction.split_point(pruned, int(window * 0.3))
    kept = pruned[cut:]
    assert kept and kept[0]["role"] != "tool"
    assert compaction.estimate_all(kept) <= window * 0.3
    assert transcript_problem([*compaction.summary_messages("S", kept[0]), *kept]) is None


def _call(call_id: str, call: Call) -> Any:
    from tui_agent.core.protocol.messages import Call as MessageCall

    return MessageCall(call_id, call.name, call.raw)


# -- on screen and headless -----------------------------------------------------------------


async def test_the_status_border_shows_the_context_share(project: Path) -> None:
    from tui_agent.testing import run_app, send, turn_over, wait_for

    configure(context_window=4096)
    async with FakeOpenAI(context_limit=4096, responder=answering()) as server:
        session = create_session(project, base_url=server.base_url, model="fake-model")
        async with run_app(session) as pilot:
            prompt = await wait_for_prompt(pilot)

            def shown() -> str:
                return str(prompt.border_subtitle)

            await wait_for(pilot, lambda: session.extensions.loaded and "ctx " in shown())
            before = session.conversation.budget.use()
            assert before is not None  # the system prompt and the tools, estimated
            assert f"ctx {before.share:.0%} of 4,096 · " in shown(), shown()
            await send(pilot, "hello " * 400)
            await turn_over(pilot)
            after = session.conversation.budget.use()
            assert after is not None and after.share > before.share + 0.1
            await wait_for(pilot, lambda: f"ctx {after.share:.0%} of 4,096 · " in shown())


async def test_the_app_compacts_and_shows_a_note_in_the_chat(project: Path) -> None:
    from tui_agent.testing import chat_text, run_app, send, turn_over, wait_for_text

    # 3,072: the bundled tools' definitions alone are over 1,500 tokens (task, todo)
    configure(context_window=3072)
    async with FakeOpenAI(context_limit=3072, responder=answering()) as server:
        session = create_session(project, base_url=server.base_url, model="fake-model")
        async with run_app(session) as pilot:
            for n in range(6):
                await send(pilot, f"question {n}: " + "tell me more " * 80)
                await turn_over(pilot)
            await wait_for_text(pilot, "Compacted the conversation (it neared the context")
            assert server.overflowed == [] and server.rejected == []
            assert summaries(server)
            text = chat_text(pilot.app)
            # everything asked stays on screen: compaction changes what the model gets
            assert all(f"question {n}:" in text for n in range(6))
            assert transcript_problem(session.conversation.messages) is None


def test_headless_runs_compact_and_say_so(project: Path, tmp_path: Path) -> None:
    import subprocess
    import sys

    configure(context_window=3072)  # the bundled tools' definitions: over 1,500 tokens
    said = ""
    with FakeOpenAI(context_limit=3072, responder=answering()) as server:
        for n in range(6):
            done = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "tui_agent",
                    "run",
                    *(["--continue"] if n else []),
                    "--base-url",
                    server.base_url,
                    "--model",
                    "fake-model",
                    f"question {n}: " + "tell me more " * 80,
                ],
                cwd=project,
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert done.returncode == 0, done.stderr
            said += done.stderr
        assert server.overflowed == []
        assert summaries(server)  # --continue carried the session past its window
        assert "Compacted the conversation (it neared the context window)" in said
