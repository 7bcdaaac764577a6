"""Issue 7, fault matrix in the TUI: the real app, driven with Pilot, against the testing
kit's fake server through the real ``openai`` client.

For every fault: the app keeps running and answers the next prompt, the user sees a clear
message in the chat (never a traceback), nothing the user typed is lost (the message is in
the chat and in the next request; a half-typed prompt stays in the prompt), and the next
request is a transcript the OpenAI API accepts (``server.rejected == []``).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import running as processes
from conftest import sleeper
from rich.console import Console
from textual.pilot import Pilot
from textual.widgets import Markdown, Static

from tui_agent import Session, create_session, testing
from tui_agent.core.util.paths import user_config_dir, user_data_dir
from tui_agent.testing import Call, FakeOpenAI, Reply
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.chat import Note, ReplyMarkdown, ToolCallBlock, UserMessage
from tui_agent.ui.prompt import PromptArea

SIZE = (120, 40)
WAIT = 20.0  # generous: other test runs share the machine
ATTEMPTS = 2  # retry_attempts for every test here, so retried faults give up quickly
DRAFT = "wip"
ALLOW_ALL = '[permission]\n"*" = "allow"\n'

# -- fixtures and helpers --------------------------------------------------------------------


class GatedOpenAI(FakeOpenAI):
    """The testing kit's server, but a request can be held (``gate.clear()``) until the
    test lets it through (``gate.set()``): the user types while the reply is pending."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.gate.set()

    def next_reply(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        self.gate.wait(WAIT)
        return super().next_reply(body, headers)


@pytest.fixture(scope="module")
def shared_server() -> Iterator[GatedOpenAI]:
    fake = GatedOpenAI()  # one server per module: stopping one takes ~0.5 s
    fake.start()
    yield fake
    fake.stop()


@pytest.fixture
def server(shared_server: GatedOpenAI) -> Iterator[GatedOpenAI]:
    """The module's server with an empty script and nothing recorded."""
    shared_server.script.clear()
    shared_server.requests.clear()
    shared_server.headers.clear()
    shared_server.rejected.clear()
    shared_server.gate.set()
    yield shared_server
    shared_server.gate.set()


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def configure(**settings: Any) -> None:
    """The user config: these settings (TOML scalars) and every tool allowed."""
    lines = [f"{key} = {json.dumps(value)}" for key, value in settings.items()]
    write(user_config_dir() / "config.toml", "\n".join(lines) + "\n" + ALLOW_ALL)


@pytest.fixture(autouse=True)
def quick_retries(isolated_home: Path) -> None:
    configure(retry_attempts=ATTEMPTS, retry_base_delay=0.01, timeout=10)


async def wait_for(pilot: Pilot[Any], condition: Callable[[], Any], seconds: float = WAIT) -> None:
    """The testing kit's ``wait_for`` with this file's patience."""
    await testing.wait_for(pilot, condition, seconds)


def plain(widget: Static) -> str:
    """The text a Static shows (markup resolved, Rich renderables rendered)."""
    content = widget.content
    if isinstance(content, str):
        return str(widget.visual.plain)  # type: ignore[attr-defined]
    console = Console(width=200, file=io.StringIO(), record=True, color_system=None)
    console.print(content)
    return console.export_text()


def chat_text(app: TuiAgentApp) -> str:
    """Everything the chat holds, folded parts included."""
    parts: list[str] = []
    for widget in app.chat.query("*"):
        if isinstance(widget, Markdown):
            parts.append(widget.source)
        elif isinstance(widget, Static):
            parts.append(plain(widget))
    return "\n".join(parts)


def error_notes(app: TuiAgentApp) -> list[str]:
    return [plain(note) for note in app.chat.query(Note) if note.has_class("error")]


def all_notes(app: TuiAgentApp) -> list[str]:
    return [plain(note) for note in app.chat.query(Note)]


def replies(app: TuiAgentApp) -> list[str]:
    return [reply.source for reply in app.chat.query(ReplyMarkdown)]


def user_lines(app: TuiAgentApp) -> list[str]:
    return [plain(message) for message in app.chat.query(UserMessage)]


def prompt_of(app: TuiAgentApp) -> PromptArea:
    return app.query_one(PromptArea)


send = testing.send


async def type_draft(pilot: Pilot[Any]) -> None:
    """The user starts typing the next prompt, key by key."""
    await pilot.press(*DRAFT)


async def ask_and_type(pilot: Pilot[Any], server: GatedOpenAI, prompt: str) -> None:
    """Send ``prompt``, then type the draft while its request is still unanswered, so the
    fault that follows happens after the user typed."""
    server.gate.clear()
    try:
        await send(pilot, prompt)
        await type_draft(pilot)
        assert prompt_of(pilot.app).text == DRAFT  # type: ignore[arg-type]
    finally:
        server.gate.set()


async def turn_over(pilot: Pilot[Any], session: Session) -> None:
    await wait_for(pilot, lambda: not session.busy)
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def error_shown(pilot: Pilot[Any], *needles: str) -> str:
    """Wait for a red note holding every needle; return it."""

    def found() -> str | None:
        return next((t for t in error_notes(pilot.app) if all(n in t for n in needles)), None)  # type: ignore[arg-type]

    await wait_for(pilot, found)
    text = found()
    assert text is not None
    return text


def user_messages(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m.get("role") == "user"]


@contextlib.asynccontextmanager
async def running(session: Session) -> AsyncIterator[tuple[TuiAgentApp, Pilot[Any]]]:
    app = TuiAgentApp(session)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: session.extensions.loaded)
            await pilot.pause()
            yield app, pilot
            assert app.is_running and app.return_code is None
    finally:
        session.conversation.journal.close()


def open_session(project: Path, server: GatedOpenAI | None, **kwargs: Any) -> Session:
    base_url = server.base_url if server is not None else None
    return create_session(project, base_url=base_url, model="fake-model", **kwargs)


async def still_works(
    pilot: Pilot[Any],
    app: TuiAgentApp,
    session: Session,
    server: GatedOpenAI,
    earlier: list[str],
    *,
    draft: bool = True,
) -> dict[str, Any]:
    """After a fault: the draft is still in the prompt, the chat has no traceback, and the
    next prompt gets a reply from a request that holds every earlier user message."""
    await turn_over(pilot, session)
    if draft:
        assert prompt_of(app).text == DRAFT, "the half-typed prompt was lost"
    assert "Traceback" not in chat_text(app)
    assert app.is_running
    sent_before = len(server.requests)
    server.script.append(Reply("back to normal"))
    await send(pilot, "are you there?")
    await wait_for(pilot, lambda: "back to normal" in replies(app))
    await turn_over(pilot, session)
    assert len(server.requests) == sent_before + 1
    request = server.requests[-1]
    assert user_messages(request) == [*earlier, "are you there?"]
    typed = [line for line in user_lines(app) if not line.startswith("/")]
    assert typed == [*earlier, "are you there?"]
    assert server.rejected == []
    assert "Traceback" not in chat_text(app)
    return request


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


# -- HTTP errors -----------------------------------------------------------------------------

HTTP_FAULTS = [
    pytest.param(
        Reply(status=401, error="Incorrect API key"),
        False,
        ["authentication failed (HTTP 401)", "OPENAI_API_KEY"],
        id="401",
    ),
    pytest.param(
        Reply(status=403, error="forbidden"),
        False,
        ["authentication failed (HTTP 403)", "OPENAI_API_KEY"],
        id="403",
    ),
    pytest.param(
        Reply(status=404, error="The model does not exist"),
        False,
        ["'fake-model' was not found", "HTTP 404", "/model"],
        id="404-model",
    ),
    pytest.param(
        Reply(status=429, error="slow down"),
        True,
        ["rate limited", "HTTP 429", "slow down", f"gave up after {ATTEMPTS} attempts"],
        id="429",
    ),
    pytest.param(
        Reply(status=429, error="slow down", headers={"Retry-After": "0"}),
        True,
        ["rate limited", "HTTP 429", f"gave up after {ATTEMPTS} attempts"],
        id="429-retry-after",
    ),
    pytest.param(
        Reply(status=500, error="internal trouble"),
        True,
        ["HTTP 500", "internal trouble", f"gave up after {ATTEMPTS} attempts"],
        id="500",
    ),
    pytest.param(
        Reply(status=503, error="overloaded"),
        True,
        ["HTTP 503", "overloaded", f"gave up after {ATTEMPTS} attempts"],
        id="503",
    ),
]


@pytest.mark.parametrize(("fault", "retried", "needles"), HTTP_FAULTS)
async def test_http_error_is_reported_and_the_next_prompt_works(
    project: Path, server: GatedOpenAI, fault: Reply, retried: bool, needles: list[str]
) -> None:
    server.script += [fault] * (ATTEMPTS if retried else 1)
    session = open_session(project, server)
    async with running(session) as (app, pilot):
        await ask_and_type(pilot, server, "first question")
        await error_shown(pilot, *needles)
        assert len(server.requests) == (ATTEMPTS if retried else 1)
        retry_notes = [t for t in all_notes(app) if t.startswith("retrying (")]
        assert len(retry_notes) == (ATTEMPTS - 1 if retried else 0)
        await still_works(pilot, app, session, server, ["first question"])


async def test_retry_after_is_honoured_and_the_retry_answers(
    project: Path, server: GatedOpenAI
) -> None:
    # a backoff of 30 s would show (and time the test out) if Retry-After were ignored
    configure(retry_attempts=3, retry_base_delay=30, timeout=10)
    server.script += [Reply(status=429, error="busy", headers={"Retry-After": "0.2"})]
    server.script += [Reply("made it")]
    session = open_session(project, server)
    async with running(session) as (app, pilot):
        await ask_and_type(pilot, server, "first question")
        await wait_for(pilot, lambda: "made it" in replies(app))
        assert any(t.startswith("retrying (2 of 3) in 0.2s: rate limited") for t in all_notes(app))
        assert error_notes(app) == []
        await still_works(pilot, app, session, server, ["first question"])


async def test_connection_refused_is_reported_and_a_fixed_config_is_used_after_reload(
    project: Path, server: GatedOpenAI
) -> None:
    dead = closed_port_url()
    configure(retry_attempts=ATTEMPTS, retry_base_delay=0.01, timeout=10, base_url=dead)
    session = open_session(project, None)
    async with running(session) as (app, pilot):
        await ask_and_type(pilot, server, "first question")
        await error_shown(pilot, f"could not reach {dead}", f"gave up after {ATTEMPTS} attempts")
        assert server.requests == []
        await turn_over(pilot, session)
        assert prompt_of(app).text == DRAFT
        # the user points the config at a server that is up, and reloads
        configure(retry_attempts=ATTEMPTS, retry_base_delay=0.01, base_url=server.base_url)
        await send(pilot, "/reload")
        await wait_for(pilot, lambda: any(t.startswith("Reloaded") for t in all_notes(app)))
        await still_works(pilot, app, session, server, ["first question"], draft=False)


# -- broken streams --------------------------------------------------------------------------


async def test_stream_dropped_at_the_start_is_retried(project: Path, server: GatedOpenAI) -> None:
    server.script += [Reply("never arrives", drop_after=0), Reply("second try worked")]
    session = open_session(project, server)
    async with running(session) as (app, pilot):
        await ask_and_type(pilot, server, "first question")
        await wait_for(pilot, lambda: "second try worked" in replies(app))
        [retry] = [t for t in all_notes(app) if t.startswith("retrying (2 of 2)")]
        # the server was reached: the note must not send the user to check the URL
        assert "the stream from" in retry and "broke" in retry and "could not reach" not in retry
        assert "never arrives" not in chat_text(app)
        await still_works(pilot, app, session, server, ["first question"])


async def test_stream_dropped_mid_text_is_taken_back_and_the_retry_shown_once(
    project: Path, server: GatedOpenAI
) -> None:
    """Issue 27: a reply cut after some of it was shown is retried; the screen shows the
    finished reply once, the retry's note where the cut one stood."""
    server.script += [
        Reply("one two three four five six seven", drop_after=4, delay=0.3),
        Reply("the whole answer, once"),
    ]
    session = open_session(project, server)
    async with running(session) as (app, pilot):
        await send(pilot, "first question")
        await wait_for(pilot, lambda: any("one" in r for r in replies(app)))  # on screen
        await wait_for(pilot, lambda: "the whole answer, once" in replies(app))
        await turn_over(pilot, session)
        assert replies(app) == ["the whole answer, once"]
        assert "one two" not in chat_text(app)
        assert error_notes(app) == []
        (retry,) = [t for t in all_notes(app) if t.startswith("retrying (2 of 2)")]
        assert "broke" in retry and "could not reach" not in retry
        blocks = [b for b in app.chat.children if isinstance(b, UserMessage | Note | ReplyMarkdown)]
        assert [type(b).__name__ for b in blocks] == ["UserMessage", "Note", "ReplyMarkdown"]
        assert len(server.requests) == 2
        assert server.requests[1]["messages"] == server.requests[0]["messages"]
        assert [m.get("content") for m in session.conversation.messages[-2:]] == [
            "first question",
            "the whole answer, once",
        ]
        await still_works(pilot, app, session, server, ["first question"], draft=False)


async def test_stream_dropped_mid_text_on_every_attempt_keeps_the_last_partial_reply(
    project: Path, server: GatedOpenAI
) -> None:
    server.script += [Reply("one two three four five six seven", drop_after=4)] * ATTEMPTS
    session = open_session(project, server)
    async with running(session) as (app, pilot):
        await ask_and_type(pilot, server, "first question")
        note = await error_shown(
            pilot, "broke", "the reply stopped before the model finished", "gave up after 2"
        )
        assert "could not reach" not in note
        assert replies(app) == ["one two three "]  # the first attempt's was taken back
        (reply,) = app.chat.query(ReplyMarkdown)
        assert reply.has_class("incomplete")  # its end is marked, the error right below it
        blocks = list(app.chat.children)
        assert isinstance(blocks[blocks.index(reply) + 1], Note)
        assert len(server.requests) == ATTEMPTS
        request = await still_works(pilot, app, session, server, ["first question"])
        assert {"role": "assistant", "content": "one two three "} in request["messages"]
        assert sum(m.get("role") == "assistant" for m in request["messages"]) == 1


async def test_closed_without_finish_is_marked_and_length_is_said(
    project: Path, server: GatedOpenAI
) -> None:
    from tui_agent.core.protocol.events import LENGTH_NOTE

    server.script += [Reply("half an answer", finish="", done=False)] * ATTEMPTS
    session = open_session(project, server)
    async with running(session) as (app, pilot):
        await ask_and_type(pilot, server, "first question")
        await error_shown(pilot, "without a finish_reason or [DONE]")
        assert [r.has_class("incomplete") for r in app.chat.query(ReplyMarkdown)] == [True]
        server.script.append(Reply("a long answer", finish="length"))
        await send(pilot, "second [DONE] [Bold] \\[x]")  # shown as typed, not as markup
        await wait_for(pilot, lambda: LENGTH_NOTE in all_notes(app))
        assert user_lines(app) == ["first question", "second [DONE] [Bold] \\[x]"]
        await turn_over(pilot, session)
        assert replies(app) == ["half an answer", "a long answer"]
        assert [r.has_class("incomplete") for r in app.chat.query(ReplyMarkdown)] == [True, False]
        (limit,) = [n for n in app.chat.query(Note) if plain(n) == LENGTH_NOTE]
        assert limit.has_class("warning")
        assert len(error_notes(app)) == 1  # the limit is said, not an error


async def test_stream_dropped_mid_tool_call_runs_no_tool(
    project: Path, server: GatedOpenAI
) -> None:
    call = Call("write", {"path": "dropped.txt", "content": "half"}, pieces=6)
    # chunks: role, "let ", "me ", "write", the call's header, one piece of arguments, drop
    server.script += [Reply("let me write", calls=[call], drop_after=6)] * ATTEMPTS
    session = open_session(project, server)
    async with running(session) as (app, pilot):
        await ask_and_type(pilot, server, "first question")
        note = await error_shown(pilot, "broke", "the reply stopped before the model finished")
        assert "could not reach" not in note
        assert not (project / "dropped.txt").exists()
        assert list(app.chat.query(ToolCallBlock)) == []
        request = await still_works(pilot, app, session, server, ["first question"])
        assert {"role": "assistant", "content": "let me write"} in request["messages"]
        assert not any(m.get("tool_calls") for m in request["messages"])


async def test_malformed_sse_chunk_ends_the_reply_with_a_clear_error(
    project: Path, server: GatedOpenAI
) -> None:
    server.script += [Reply("alpha beta gamma delta", malformed_after=3)] * ATTEMPTS
    session = open_session(project, server)
    async with running(session) as (app, pilot):
        await ask_and_type(pilot, server, "first question")
        note = await error_shown(
            pilot, "malformed chunk", "the reply stopped before the model finished"
        )
        assert "127.0.0.1" in note
        assert replies(app) == ["alpha beta "]
        await still_works(pilot, app, session, server, ["first question"])


async def test_stalled_stream_times_out_and_a_prompt_sent_meanwhile_is_sent_after(
    project: Path, server: GatedOpenAI
) -> None:
    configure(retry_attempts=1, retry_base_delay=0.01, timeout=1)
    server.script += [Reply("too late", delay=5)]
    session = open_session(project, server)
    async with running(session) as (app, pilot):
        await send(pilot, "first question")
        await wait_for(pilot, lambda: session.busy)
        # the user sends another prompt while the stream hangs: it is queued (issue 27)
        await send(pilot, "second thought")
        await pilot.pause()
        assert app.queued == ("second thought",)
        assert user_lines(app) == ["first question"]
        server.script.append(Reply("now then"))  # for the queued prompt, once the turn ends
        await error_shown(pilot, "timed out")
        await wait_for(pilot, lambda: "now then" in replies(app))
        await turn_over(pilot, session)
        assert "too late" not in chat_text(app)
        assert app.queued == () and prompt_of(app).text == ""
        assert user_messages(server.requests[-1]) == ["first question", "second thought"]
        await still_works(
            pilot, app, session, server, ["first question", "second thought"], draft=False
        )


# -- tool faults -----------------------------------------------------------------------------


async def finished_block(pilot: Pilot[Any], app: TuiAgentApp) -> ToolCallBlock:
    await wait_for(pilot, lambda: app.chat.query(ToolCallBlock))
    block = app.chat.query(ToolCallBlock).last()
    await wait_for(pilot, lambda: block.result is not None and block.query(".error-text"))
    return block


def tool_results(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [json.loads(m["content"]) for m in request["messages"] if m.get("role") == "tool"]


async def tool_fault(
    project: Path, server: GatedOpenAI, call: Call, needle: str, session: Session | None = None
) -> tuple[TuiAgentApp, ToolCallBlock, dict[str, Any]]:
    """The model makes ``call``; it fails; the model hears ``needle`` and the turn goes on."""
    server.script += [Reply(calls=[call]), Reply("I see the error")]
    session = session or open_session(project, server)
    async with running(session) as (app, pilot):
        await ask_and_type(pilot, server, "use the tool")
        block = await finished_block(pilot, app)
        assert plain(block.header).startswith("✖")
        assert block.has_class("failed")
        assert needle in plain(block.query_one(".error-text", Static))
        await wait_for(pilot, lambda: "I see the error" in replies(app))
        [result] = tool_results(server.requests[1])
        assert needle in result["error"]
        await still_works(pilot, app, session, server, ["use the tool"])
        return app, block, result


async def test_invalid_tool_json_goes_back_to_the_model(project: Path, server: GatedOpenAI) -> None:
    await tool_fault(project, server, Call("read", '{"path": "a.txt"'), "invalid JSON arguments")


async def test_unknown_tool_goes_back_to_the_model(project: Path, server: GatedOpenAI) -> None:
    _, _, result = await tool_fault(
        project, server, Call("teleport", {}), 'unknown tool: "teleport"'
    )
    assert "read" in result["error"]  # it lists what is available


async def test_a_raising_tool_shows_its_error_and_no_traceback(
    project: Path, server: GatedOpenAI
) -> None:
    session = open_session(project, server)

    def boom(args: dict[str, Any]) -> None:
        raise RuntimeError("kaboom in the tool")

    session.toolbox.add("boom", description="Always fails", handler=boom)
    await tool_fault(project, server, Call("boom", {}), "kaboom in the tool", session)


@pytest.mark.parametrize("when", ["before", "after"])
async def test_a_raising_hook_fails_the_call_not_the_app(
    project: Path, server: GatedOpenAI, when: str
) -> None:
    (project / "a.txt").write_text("hello\n")
    session = open_session(project, server)

    def broken_hook(*args: Any) -> None:
        raise ValueError(f"the {when} hook broke")

    if when == "before":
        session.toolbox.before("read", broken_hook)
    else:
        session.toolbox.after("read", broken_hook)
    await tool_fault(
        project, server, Call("read", {"path": "a.txt"}), f"the {when} hook broke", session
    )


async def test_a_tool_hanging_past_its_timeout_is_killed(
    project: Path, server: GatedOpenAI
) -> None:
    marker = sleeper()  # found by its command line: in the sandbox $! is another PID
    command = f"echo started > started.txt; {marker} & wait"
    call = Call("execute", {"command": command, "timeout": 0.5})
    _, block, _ = await tool_fault(project, server, call, "timed out after 0.5s")
    assert (project / "started.txt").is_file()
    deadline = time.monotonic() + 5
    while processes(marker) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert not processes(marker), "the timed-out command's child still runs"
    assert block.finished is not None and block.finished - block.started < 10


async def test_escape_during_a_tool_cancels_it_and_kills_the_process(
    project: Path, server: GatedOpenAI
) -> None:
    marker = sleeper()
    server.script += [Reply(calls=[Call("execute", {"command": f"{marker} & wait"})])]
    session = open_session(project, server)
    async with running(session) as (app, pilot):
        await send(pilot, "sleep a while")
        await wait_for(pilot, lambda: processes(marker))
        block = app.chat.query_one(ToolCallBlock)
        assert block.result is None
        await type_draft(pilot)
        await pilot.press("escape")
        await turn_over(pilot, session)
        await wait_for(pilot, lambda: "Cancelled." in error_notes(app))
        await wait_for(pilot, lambda: block.result is not None)
        first = plain(block.header)
        assert first.startswith("✖"), first
        await pilot.pause(0.3)
        assert plain(block.header) == first, "the block still spins"
        await wait_for(pilot, lambda: not processes(marker))
        request = await still_works(pilot, app, session, server, ["sleep a while"])
        [result] = tool_results(request)
        assert result["error"] == "cancelled by the user"


# -- plugins ---------------------------------------------------------------------------------

BROKEN_IMPORT = "import tui_agent\nimport no_such_module_for_this_test\n"
BROKEN_SETUP = (
    "import tui_agent\n\n"
    "@tui_agent.setup('exploding')\n"
    "def _setup(session):\n"
    "    session.toolbox.add('half_made', description='never kept', handler=lambda a: 1)\n"
    "    raise RuntimeError('setup exploded')\n"
)
GOOD = (
    "import tui_agent\n\n"
    "@tui_agent.setup('weather')\n"
    "def _setup(session):\n"
    "    session.toolbox.add('weather', description='Today',\n"
    "                        handler=lambda args: {'sky': 'blue'})\n"
)


async def test_plugins_failing_at_import_and_at_setup_leave_a_working_app(
    project: Path, server: GatedOpenAI
) -> None:
    plugins = user_config_dir() / "plugins"
    write(plugins / "a_broken_import.py", BROKEN_IMPORT)
    write(plugins / "b_broken_setup.py", BROKEN_SETUP)
    write(plugins / "c_weather.py", GOOD)
    server.script += [Reply(calls=[Call("weather", {})]), Reply("It is sunny.")]
    session = open_session(project, server, load=False)  # the app loads, as `tui-agent` does
    async with running(session) as (app, pilot):
        await error_shown(
            pilot, "plugin problem:", "a_broken_import.py", "no_such_module_for_this_test"
        )
        await error_shown(pilot, "plugin problem:", "b_broken_setup.py", "setup exploded")
        assert "half_made" not in session.toolbox.tools
        assert {"weather", "read", "execute"} <= set(session.toolbox.tools)
        await ask_and_type(pilot, server, "weather?")
        await wait_for(pilot, lambda: "It is sunny." in replies(app))
        block = app.chat.query_one(ToolCallBlock)
        assert plain(block.header).startswith("✔")
        await still_works(pilot, app, session, server, ["weather?"])


# -- /reload while a turn runs ---------------------------------------------------------------


async def test_reload_while_a_tool_runs(project: Path, server: GatedOpenAI) -> None:
    command = "touch started; sleep 1; echo slept"
    server.script += [Reply(calls=[Call("execute", {"command": command})]), Reply("all done")]
    session = open_session(project, server)
    async with running(session) as (app, pilot):
        await send(pilot, "take a nap")
        await wait_for(pilot, lambda: (project / "started").exists())
        assert session.busy
        await send(pilot, "/reload")
        await wait_for(pilot, lambda: any(t.startswith("Reloaded") for t in all_notes(app)))
        await type_draft(pilot)
        await wait_for(pilot, lambda: "all done" in replies(app))
        block = app.chat.query_one(ToolCallBlock)
        assert plain(block.header).startswith("✔")
        [result] = tool_results(server.requests[1])
        assert result["output"].strip() == "slept"
        assert error_notes(app) == []
        await still_works(pilot, app, session, server, ["take a nap"])


async def test_reload_while_a_reply_streams_adds_the_new_tool_for_the_next_step(
    project: Path, server: GatedOpenAI
) -> None:
    words = " ".join(f"w{n}" for n in range(20))
    server.script += [
        Reply(words, delay=0.05, calls=[Call("weather", {})]),
        Reply("sunny, said the new tool"),
    ]
    session = open_session(project, server)
    async with running(session) as (app, pilot):
        await send(pilot, "weather?")
        await wait_for(pilot, lambda: any("w3" in r for r in replies(app)))
        write(user_config_dir() / "plugins" / "weather.py", GOOD)
        await send(pilot, "/reload")
        await wait_for(pilot, lambda: any(t.startswith("Reloaded") for t in all_notes(app)))
        assert session.busy, "the reply should still be streaming"
        await type_draft(pilot)
        await wait_for(pilot, lambda: "sunny, said the new tool" in replies(app))
        [result] = tool_results(server.requests[1])
        assert result == {"sky": "blue", "ok": True}
        assert "weather" in [t["function"]["name"] for t in server.requests[1]["tools"]]
        await still_works(pilot, app, session, server, ["weather?"])


# -- the journal -----------------------------------------------------------------------------


async def test_unwritable_journal_folder_is_reported_and_the_chat_goes_on(
    project: Path, server: GatedOpenAI
) -> None:
    sessions = user_data_dir() / "sessions"
    write(sessions, "a file where the sessions folder should be\n")  # unwritable even as root
    if os.geteuid() != 0:
        sessions.parent.chmod(0o500)
    server.script += [Reply("first answer")]
    session = open_session(project, server)
    try:
        async with running(session) as (app, pilot):
            await ask_and_type(pilot, server, "first question")
            await wait_for(pilot, lambda: "first answer" in replies(app))
            note = await error_shown(pilot, "could not save this session")
            assert str(sessions) in note and "cannot be resumed" in note
            await still_works(pilot, app, session, server, ["first question"])
            # said once, not once per message
            assert len([t for t in error_notes(app) if "could not save" in t]) == 1
    finally:
        sessions.parent.chmod(0o700)
