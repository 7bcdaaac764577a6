"""The fault matrix headless and in-process (issue 7), through the real openai client.

For every fault: the session keeps running (or ``tui-agent run`` exits with its documented
code and one clear line on stderr, never a traceback), every prompt the user typed is in
the journal and in the next request, and that request is a transcript the API accepts
(the testing kit answers an invalid one with HTTP 400 and lists it in ``rejected``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import running, sleeper, write

from tui_agent import create_session
from tui_agent.core.conversation import journal
from tui_agent.core.protocol import events as ev
from tui_agent.core.session.session import Session
from tui_agent.core.util import paths
from tui_agent.testing import Call, FakeOpenAI, Reply

SECRET = "sk-reliability-do-not-leak-4242"
SETTINGS = "retry_base_delay = 0.01\nretry_attempts = 3\ntimeout = 1\n"
PERMISSIONS = '[permission]\n"*" = "allow"\nguarded = "deny"\n'
WAIT = 20.0  # seconds: generous, other test runs share the machine

PLUGIN = """\
import asyncio, time
from pathlib import Path
import tui_agent

VERSION = "v1"


class Boom(BaseException):
    pass


FAILURES = {
    "exception": lambda: RuntimeError("tool exploded"),
    "exit": lambda: SystemExit("tool called sys.exit"),
    "keyboard": lambda: KeyboardInterrupt("tool raised KeyboardInterrupt"),
    "base": lambda: Boom("tool raised a BaseException"),
}


@tui_agent.setup("faulty")
def faulty(session):
    box = session.toolbox
    box.add("echo", description="Echo", params={"text": {"type": "string"}}, required=["text"],
            handler=lambda args: {"output": "echoed " + args["text"]})
    box.add("version", description="Plugin version", handler=lambda args: {"output": VERSION})

    def guarded(args):
        (Path(session.directory) / "guarded-ran").write_text("it ran")
        return {"output": "ran"}

    box.add("guarded", description="Denied by the config", handler=guarded)

    def boom(args):
        raise FAILURES[args["kind"]]()

    box.add("boom", description="Raises", params={"kind": {"type": "string"}}, handler=boom)

    async def aboom(args):
        await asyncio.sleep(0)
        raise FAILURES[args["kind"]]()

    box.add("aboom", description="Raises, async", params={"kind": {"type": "string"}},
            handler=aboom)

    def slow(args):
        release = Path(session.directory) / "release"
        (Path(session.directory) / "slow-started").write_text(VERSION)
        deadline = time.monotonic() + 20
        while not release.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        return {"output": "slow " + VERSION}

    box.add("slow", description="Waits for the release file", handler=slow)
    box.add("hooked", description="Hooks fail on request", params={"fail": {"type": "string"}},
            handler=lambda args: {"output": "hooked ran"})

    def fail_if(where, args):
        if args.get("fail") == where:
            raise RuntimeError(where + " hook exploded")

    box.before("hooked", lambda args: fail_if("before", args))
    box.after("hooked", lambda args, raw: fail_if("after", args))
    box.before(lambda args, tool_name: fail_if("global-before", args))
    box.after(lambda args, raw, tool_name: fail_if("global-after", args))
"""


# -- the shared server ----------------------------------------------------------------------


@dataclass
class Stall(Reply):
    """A reply whose stream goes silent for ``stall`` seconds before chunk ``at``."""

    at: int = 0
    stall: float = 0.0


class StallingOpenAI(FakeOpenAI):
    """The testing kit's server, plus replies that stall mid-stream (a read timeout)."""

    def chunks(self, reply: Reply, model: str) -> Iterator[dict[str, Any]]:
        for index, chunk in enumerate(super().chunks(reply, model)):
            if isinstance(reply, Stall) and index == reply.at:
                time.sleep(reply.stall)
            yield chunk


@pytest.fixture(scope="module")
def shared_server() -> Iterator[StallingOpenAI]:
    with StallingOpenAI() as fake:  # one per module: starting and stopping one costs time
        yield fake


@pytest.fixture
def server(shared_server: StallingOpenAI) -> StallingOpenAI:
    shared_server.script.clear()
    shared_server.requests.clear()
    shared_server.headers.clear()
    shared_server.rejected.clear()
    return shared_server


@pytest.fixture(autouse=True)
def faulty_plugin(isolated_home: Path) -> Path:
    """A global plugin (no --trust needed) with the tools the faults need, and a user config
    with small retry delays, a 1 s read timeout, every tool allowed but ``guarded``."""
    write(paths.user_config_dir() / "config.toml", SETTINGS + PERMISSIONS)
    return write(isolated_home / ".agents" / "plugins" / "faulty.py", PLUGIN)


# -- helpers --------------------------------------------------------------------------------


def new_session(project: Path, server: FakeOpenAI) -> Session:
    return create_session(project, base_url=server.base_url, model="fake-model")


def errors(session: Session) -> list[str]:
    return [note.text for note in session.output.history if note.kind == "error"]


def users(messages: list[dict[str, Any]]) -> list[str]:
    return [m["content"] for m in messages if m["role"] == "user"]


def tool_results(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [json.loads(m["content"]) for m in messages if m["role"] == "tool"]


def journaled(project: Path) -> list[dict[str, Any]]:
    """Every message journaled for ``project`` (oldest session first)."""
    found = journal.list_sessions(project)
    return [m for info in reversed(found) for m in journal.read_messages(info.path)]


def assert_nothing_lost(server: FakeOpenAI, project: Path, *prompts: str) -> None:
    """The last request is valid, and it and the journal hold every prompt, in order."""
    assert server.rejected == []
    assert users(server.requests[-1]["messages"]) == list(prompts)
    assert users(journaled(project)) == list(prompts)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until(condition: Callable[[], bool], what: str, timeout: float = WAIT) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


async def async_wait_until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


def cli(*args: str, base_url: str) -> list[str]:
    return [sys.executable, "-m", "tui_agent", *args, "--base-url", base_url, "--model", "m"]


def cli_env() -> dict[str, str]:
    return {**os.environ, "OPENAI_API_KEY": SECRET}


def run_cli(*args: str, cwd: Path, base_url: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cli(*args, base_url=base_url),
        cwd=cwd,
        env=cli_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        timeout=60,
    )


def start_cli(*args: str, cwd: Path, base_url: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        cli(*args, base_url=base_url),
        cwd=cwd,
        env=cli_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        errors="replace",
    )


def continue_in_process(project: Path, server: FakeOpenAI) -> None:
    """What ``--continue`` does (the kill -9 tests run it for real), without another
    process: resume this folder's last session and ask a second question."""
    server.script.append(Reply("second answer"))
    resumed = new_session(project, server)
    assert resumed.conversation.resume() is True
    assert asyncio.run(resumed.turn("second question")) == "second answer"
    assert_nothing_lost(server, project, "first question", "second question")


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith(("error:", "tui-agent:"))]


def assert_no_secret(home: Path, *texts: str) -> None:
    for text in texts:
        assert SECRET not in text
    for path in home.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


# -- API and stream faults, in-process ------------------------------------------------------


@dataclass(frozen=True)
class ApiFault:
    script: list[Reply]
    error: str | None  # a fragment of the one error note; None: the turn recovers by retrying
    requests: int  # requests the first turn makes
    kept: str = ""  # the partial reply kept when the stream broke mid-reply
    delay: float | None = None  # the one retry's delay, when the server said Retry-After


TEXT = "one two three four five"
STOPPED = "the reply stopped before the model finished"
ECHO = Call("echo", {"text": "never run"}, pieces=4)

API_FAULTS = {
    "401": ApiFault([Reply(status=401, error="bad key")], "authentication failed (HTTP 401)", 1),
    "403": ApiFault([Reply(status=403, error="no")], "authentication failed (HTTP 403)", 1),
    "404-model": ApiFault([Reply(status=404)], "model 'fake-model' was not found", 1),
    "429-retry-after": ApiFault(
        [Reply(status=429, headers={"Retry-After": "0"}), Reply("recovered")], None, 2, delay=0
    ),
    "429-no-retry-after": ApiFault([Reply(status=429), Reply("recovered")], None, 2),
    "429-exhausted": ApiFault([Reply(status=429)] * 3, "gave up after 3 attempts", 3),
    "500": ApiFault([Reply(status=500), Reply("recovered")], None, 2),
    "503": ApiFault([Reply(status=503), Reply(status=503), Reply("recovered")], None, 3),
    "503-exhausted": ApiFault([Reply(status=503)] * 3, "HTTP 503", 3),
    "dropped-at-start": ApiFault([Reply(TEXT, drop_after=0), Reply("recovered")], None, 2),
    "dropped-after-role-chunk": ApiFault([Reply(TEXT, drop_after=1), Reply("recovered")], None, 2),
    # issue 27: a reply cut after some of it was shown is taken back and asked again
    "dropped-mid-text": ApiFault([Reply(TEXT, drop_after=3), Reply("recovered")], None, 2),
    "dropped-mid-text-exhausted": ApiFault(
        [Reply(TEXT, drop_after=3)] * 3, STOPPED, 3, kept="one two "
    ),
    # nothing was shown of a cut tool call: it never runs, and the reply is asked again
    "dropped-mid-tool-call": ApiFault(
        [Reply(calls=[ECHO], drop_after=3), Reply("recovered")], None, 2
    ),
    "dropped-mid-tool-call-after-text": ApiFault(
        [Reply("Let me look.", calls=[ECHO], drop_after=5), Reply("recovered")], None, 2
    ),
    "dropped-mid-tool-call-after-text-exhausted": ApiFault(
        [Reply("Let me look.", calls=[ECHO], drop_after=5)] * 3, STOPPED, 3, kept="Let me look."
    ),
    "closed-cleanly-mid-text": ApiFault(
        [Reply(TEXT, finish="", done=False), Reply("recovered")], None, 2
    ),
    "closed-cleanly-mid-text-exhausted": ApiFault(
        [Reply(TEXT, finish="", done=False)] * 3, "without a finish_reason", 3, kept=TEXT
    ),
    "closed-cleanly-after-tool-call": ApiFault(
        [Reply(calls=[ECHO], finish="", done=False), Reply("recovered")], None, 2
    ),
    "malformed-at-start": ApiFault([Reply(TEXT, malformed_after=0), Reply("recovered")], None, 2),
    "malformed-mid-text": ApiFault([Reply(TEXT, malformed_after=3), Reply("recovered")], None, 2),
    "malformed-mid-text-exhausted": ApiFault(
        [Reply(TEXT, malformed_after=3)] * 3, "malformed chunk", 3, kept="one two "
    ),
    "malformed-mid-tool-call": ApiFault(
        [Reply(calls=[ECHO], malformed_after=3), Reply("recovered")], None, 2
    ),
    "stalled-at-start": ApiFault([Stall(TEXT, at=0, stall=4), Reply("recovered")], None, 2),
    "stalled-mid-text": ApiFault([Stall(TEXT, at=3, stall=4), Reply("recovered")], None, 2),
    "stalled-mid-text-exhausted": ApiFault(
        [Stall(TEXT, at=3, stall=4)] * 3, "no data from", 3, kept="one two "
    ),
}


@pytest.mark.parametrize("fault", API_FAULTS.values(), ids=API_FAULTS.keys())
async def test_api_fault_then_a_valid_next_turn(
    project: Path, server: StallingOpenAI, fault: ApiFault
) -> None:
    server.script += fault.script
    session = new_session(project, server)
    retries: list[ev.Retrying] = []
    session.events.listen(lambda e: retries.append(e) if isinstance(e, ev.Retrying) else None)

    reply = await session.turn("first question")

    assert len(server.requests) == fault.requests
    first = server.requests[0]["messages"]
    assert all(r["messages"] == first for r in server.requests)  # retries resend the same
    assert len(retries) == fault.requests - 1
    if fault.delay is not None:
        assert [r.delay for r in retries] == [fault.delay]
    if fault.error is None:
        assert reply == "recovered"
        assert errors(session) == []
    else:
        (error,) = errors(session)
        assert fault.error in error, error
        assert error.startswith("error: ") and "\n" not in error and "Traceback" not in error
        assert reply == fault.kept
    assert (project / "guarded-ran").exists() is False
    assert tool_results(session.conversation.messages) == []  # a half-streamed call never runs

    server.script.append(Reply("second answer"))
    assert await session.turn("second question") == "second answer"

    assert_nothing_lost(server, project, "first question", "second question")
    sent = server.requests[-1]["messages"][1:]
    expected_reply = "recovered" if fault.error is None else fault.kept
    replies = [m["content"] for m in sent if m["role"] == "assistant"]
    assert replies == ([expected_reply] if expected_reply else [])


async def test_connection_refused_then_resume_elsewhere(
    project: Path, server: StallingOpenAI
) -> None:
    dead = f"http://127.0.0.1:{closed_port()}/v1"
    session = create_session(project, base_url=dead, model="fake-model")
    retries: list[ev.Retrying] = []
    session.events.listen(lambda e: retries.append(e) if isinstance(e, ev.Retrying) else None)

    assert await session.turn("first question") == ""

    (error,) = errors(session)
    assert "could not reach" in error and dead in error and "gave up after 3 attempts" in error
    assert len(retries) == 2
    session.conversation.journal.close()

    resumed = new_session(project, server)  # what --continue does with a working server
    assert resumed.conversation.resume() is True
    server.script.append(Reply("second answer"))
    assert await resumed.turn("second question") == "second answer"
    assert_nothing_lost(server, project, "first question", "second question")


# -- tool and hook faults, in-process -------------------------------------------------------

TOOL_FAULTS = {
    "invalid-json": (Call("echo", '{"text": '), "invalid JSON arguments for echo"),
    "invalid-arguments": (Call("echo", {"text": 5}), "value at `/text` is not a string"),
    "unknown-tool": (Call("nope", {}), 'unknown tool: "nope". Available: '),
    "tool-raises": (Call("boom", {"kind": "exception"}), "tool exploded"),
    "tool-calls-sys-exit": (Call("boom", {"kind": "exit"}), "tool called sys.exit"),
    "tool-raises-keyboard-interrupt": (Call("boom", {"kind": "keyboard"}), "KeyboardInterrupt"),
    "tool-raises-base-exception": (Call("boom", {"kind": "base"}), "tool raised a BaseException"),
    "async-tool-raises": (Call("aboom", {"kind": "exception"}), "tool exploded"),
    "async-tool-raises-keyboard-interrupt": (
        Call("aboom", {"kind": "keyboard"}),
        "KeyboardInterrupt",
    ),
    "async-tool-raises-base-exception": (
        Call("aboom", {"kind": "base"}),
        "tool raised a BaseException",
    ),
    "before-hook-raises": (Call("hooked", {"fail": "before"}), "before hook exploded"),
    "after-hook-raises": (Call("hooked", {"fail": "after"}), "after hook exploded"),
    "global-before-hook-raises": (
        Call("hooked", {"fail": "global-before"}),
        "global-before hook exploded",
    ),
    "global-after-hook-raises": (
        Call("hooked", {"fail": "global-after"}),
        "global-after hook exploded",
    ),
    "denied-tool": (Call("guarded", {}), "Permission denied: guarded"),
}


@pytest.mark.parametrize(("call", "error"), TOOL_FAULTS.values(), ids=TOOL_FAULTS.keys())
async def test_tool_fault_goes_back_to_the_model_and_the_turn_goes_on(
    project: Path, server: StallingOpenAI, call: Call, error: str
) -> None:
    server.script += [
        Reply(calls=[call, Call("echo", {"text": "still works"})]),
        Reply("recovered"),
        Reply("second answer"),
    ]
    session = new_session(project, server)

    assert await session.turn("first question") == "recovered"

    assert errors(session) == []  # a failed tool is the model's business, not a session error
    failed, echoed = tool_results(server.requests[1]["messages"])
    assert failed["ok"] is False and error in failed["error"], failed
    assert echoed == {"output": "echoed still works", "ok": True}
    assert (project / "guarded-ran").exists() is False
    assert await session.turn("second question") == "second answer"
    assert_nothing_lost(server, project, "first question", "second question")


async def test_a_command_past_its_timeout_is_killed_and_the_turn_goes_on(
    project: Path, server: StallingOpenAI
) -> None:
    marker = sleeper()
    command = f"echo started > started.txt; exec {marker}"
    server.script += [
        Reply(calls=[Call("execute", {"command": command, "timeout": 0.5})]),
        Reply("recovered"),
        Reply("second answer"),
    ]
    session = new_session(project, server)
    started = time.monotonic()

    assert await session.turn("first question") == "recovered"

    assert time.monotonic() - started < 15
    (result,) = tool_results(server.requests[1]["messages"])
    assert result["ok"] is False
    assert result["error"].startswith("timed out after 0.5s"), result
    assert (project / "started.txt").read_text() == "started\n"
    wait_until(lambda: not running(marker), "the timed-out command to die", timeout=5)
    assert await session.turn("second question") == "second answer"
    assert_nothing_lost(server, project, "first question", "second question")


async def test_a_failing_turn_hook_is_reported_and_the_turn_goes_on(
    project: Path, server: StallingOpenAI
) -> None:
    write(
        paths.home_plugins_dir() / "turn_hook.py",
        "import tui_agent\n\n\n@tui_agent.setup('turn_hook')\n"
        "def setup(session):\n    session.on('turn', lambda: 1 / 0)\n",
    )
    server.script += [Reply("first answer"), Reply("second answer")]
    session = new_session(project, server)

    assert await session.turn("first question") == "first answer"
    assert await session.turn("second question") == "second answer"

    assert errors(session) == ["turn hook failed: division by zero"] * 2
    assert_nothing_lost(server, project, "first question", "second question")


# -- plugins that fail to load ----------------------------------------------------------------

BROKEN_PLUGINS = {
    "a_syntax.py": ("def broken(:\n", "SyntaxError"),
    "b_import.py": ("import no_such_module_for_tui_agent\n", "ModuleNotFoundError"),
    "c_exit.py": ("import sys\nsys.exit(3)\n", "SystemExit"),
    "d_raise.py": ("raise RuntimeError('import exploded')\n", "import exploded"),
    "e_setup.py": (
        "import tui_agent\n\n\n@tui_agent.setup('half')\ndef half(session):\n"
        "    session.toolbox.add('half_made', description='h', handler=lambda a: {})\n"
        "    raise RuntimeError('setup exploded')\n",
        "(setup 'half'): RuntimeError: setup exploded",
    ),
}


def write_broken_plugins() -> None:
    for name, (source, _) in BROKEN_PLUGINS.items():
        write(paths.home_plugins_dir() / name, source)


def test_broken_plugins_are_reported_and_the_run_goes_on(
    project: Path, server: StallingOpenAI
) -> None:
    write_broken_plugins()
    server.script += [Reply(calls=[Call("echo", {"text": "plugins ok"})]), Reply("done")]

    done = run_cli("run", "first question", cwd=project, base_url=server.base_url)

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "done"
    assert "Traceback" not in done.stderr
    problems = [line for line in done.stderr.splitlines() if "plugin problem" in line]
    assert len(problems) == len(BROKEN_PLUGINS), done.stderr
    for (name, (_, fragment)), line in zip(BROKEN_PLUGINS.items(), problems, strict=True):
        assert line.startswith("tui-agent: plugin problem: ") and name in line, line
        assert fragment in line, line
    offered = [tool["function"]["name"] for tool in server.requests[0]["tools"]]
    assert "echo" in offered and "read" in offered and "half_made" not in offered
    (echoed,) = tool_results(server.requests[1]["messages"])
    assert echoed == {"output": "echoed plugins ok", "ok": True}
    assert_nothing_lost(server, project, "first question")


async def test_reload_reports_broken_plugins_and_the_session_goes_on(
    project: Path, server: StallingOpenAI
) -> None:
    server.script += [Reply("first answer"), Reply("second answer")]
    session = new_session(project, server)
    assert await session.turn("first question") == "first answer"
    write_broken_plugins()

    assert await session.commands.run_line("/reload") is True

    reported = errors(session)
    assert len(reported) == len(BROKEN_PLUGINS)
    assert all(line.startswith("plugin problem: ") for line in reported)
    assert "echo" in session.toolbox.tools and "half_made" not in session.toolbox.tools
    assert await session.turn("second question") == "second answer"
    assert_nothing_lost(server, project, "first question", "second question")


# -- /reload while a turn runs ----------------------------------------------------------------


@pytest.mark.parametrize("moment", ["mid-stream", "mid-tool"])
async def test_reload_while_a_turn_runs(project: Path, server: StallingOpenAI, moment: str) -> None:
    """The turn finishes; the running call keeps its handler, later calls use the reloaded
    plugin, and a denied tool stays denied across the reload."""
    later = [Call("version", {}), Call("guarded", {})]
    if moment == "mid-stream":
        first = Reply("thinking it over " * 8, calls=later, delay=0.05)
    else:
        first = Reply(calls=[Call("slow", {}), *later])
    server.script += [first, Reply("recovered"), Reply("second answer")]
    session = new_session(project, server)
    text: list[str] = []
    session.events.listen(lambda e: text.append(e.text) if isinstance(e, ev.TextChunk) else None)
    turn = asyncio.create_task(session.turn("first question"))
    if moment == "mid-stream":
        await async_wait_until(lambda: len(text) >= 2, "the reply to start streaming")
    else:
        await async_wait_until(lambda: (project / "slow-started").exists(), "the slow tool")
    plugin = paths.home_plugins_dir() / "faulty.py"
    plugin.write_text(PLUGIN.replace('VERSION = "v1"', 'VERSION = "v2"'))

    assert await session.commands.run_line("/reload") is True
    assert session.busy and not turn.done()
    (project / "release").write_text("go")
    assert await asyncio.wait_for(turn, WAIT) == "recovered"

    assert any(note.text.startswith("Reloaded ") for note in session.output.history)
    assert errors(session) == []
    results = tool_results(server.requests[1]["messages"])
    if moment == "mid-tool":
        assert results.pop(0) == {"output": "slow v1", "ok": True}
    assert results == [
        {"output": "v2", "ok": True},
        {"error": "Permission denied: guarded", "name": "guarded", "args": {}, "ok": False},
    ]
    assert (project / "guarded-ran").exists() is False
    assert await session.turn("second question") == "second answer"
    assert_nothing_lost(server, project, "first question", "second question")


# -- the journal folder cannot be written -----------------------------------------------------


@pytest.fixture
def unwritable_journal() -> Iterator[Path]:
    """The sessions folder cannot be written: read-only, or (as root, who writes through
    permission bits) a regular file where the folder should be."""
    folder = journal.sessions_dir()
    if os.geteuid() == 0:
        write(folder, "a file where the sessions folder should be\n")
    else:
        folder.mkdir(parents=True)
        folder.chmod(0o500)
    yield folder
    if folder.is_dir():
        folder.chmod(0o700)


async def test_unwritable_journal_is_said_once_and_the_session_goes_on(
    project: Path, server: StallingOpenAI, unwritable_journal: Path
) -> None:
    server.script += [
        Reply(calls=[Call("echo", {"text": "x"})]),
        Reply("first answer"),
        Reply("second answer"),
    ]
    session = new_session(project, server)

    assert await session.turn("first question") == "first answer"
    assert await session.turn("second question") == "second answer"

    (error,) = errors(session)  # once, not once per message
    assert "could not save" in error and str(unwritable_journal) in error, error
    assert "Traceback" not in error
    assert server.rejected == []
    assert users(server.requests[-1]["messages"]) == ["first question", "second question"]


def test_unwritable_journal_headless(
    project: Path, server: StallingOpenAI, unwritable_journal: Path
) -> None:
    server.script += [Reply(calls=[Call("echo", {"text": "x"})]), Reply("the answer")]

    done = run_cli("run", "first question", cwd=project, base_url=server.base_url)

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "the answer"
    assert "Traceback" not in done.stderr
    (line,) = [line for line in done.stderr.splitlines() if "could not save" in line]
    assert str(unwritable_journal) in line
    assert server.rejected == []
    assert users(server.requests[-1]["messages"]) == ["first question"]


# -- headless: exit status and stderr, then --continue ----------------------------------------


@dataclass(frozen=True)
class HeadlessFault:
    script: list[Reply]
    error: str  # a fragment of the one error line on stderr
    stdout: str = ""  # the partial reply printed before the fault


HEADLESS_FAULTS = {
    "401": HeadlessFault([Reply(status=401)], "authentication failed (HTTP 401)"),
    "connection-refused": HeadlessFault([], "could not reach"),
    # cut on every attempt (retry_attempts = 3): the last attempt's part is kept
    "dropped-mid-text": HeadlessFault([Reply(TEXT, drop_after=3)] * 3, STOPPED, "one two"),
    "closed-cleanly-mid-text": HeadlessFault(
        [Reply(TEXT, drop_after=4, finish="", done=False)] * 3, STOPPED, "one two three"
    ),
    "stalled-mid-text": HeadlessFault([Stall(TEXT, at=3, stall=4)] * 3, "no data from", "one two"),
}


@pytest.mark.parametrize("fault", HEADLESS_FAULTS.values(), ids=HEADLESS_FAULTS.keys())
def test_headless_fault_exits_1_with_one_clear_line_then_continue(
    project: Path, server: StallingOpenAI, isolated_home: Path, fault: HeadlessFault
) -> None:
    server.script += fault.script
    base_url = server.base_url
    if not fault.script:
        base_url = f"http://127.0.0.1:{closed_port()}/v1"

    done = run_cli("run", "first question", cwd=project, base_url=base_url)

    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr + done.stdout
    (line,) = error_lines(done.stderr)
    assert line.startswith("error: ") and fault.error in line, done.stderr
    assert done.stdout.strip() == fault.stdout
    if fault.script:
        assert all(h["authorization"] == f"Bearer {SECRET}" for h in server.headers)
    assert_no_secret(isolated_home, done.stdout, done.stderr)

    continue_in_process(project, server)


# -- headless: kill -9 and Ctrl+C mid-turn ----------------------------------------------------


def sleeper_command(marker: str) -> str:
    """The command of the mid-tool faults: ``running(marker)`` finds its process (in the
    sandbox, ``$$`` would be a PID of its own namespace)."""
    return f"exec {marker}"


@pytest.mark.parametrize("moment", ["mid-stream", "mid-tool"])
def test_kill_9_mid_turn_then_continue(
    project: Path, server: StallingOpenAI, isolated_home: Path, moment: str
) -> None:
    marker = sleeper()
    if moment == "mid-stream":
        server.script.append(Reply("a long reply " * 50, delay=0.05))
    else:
        server.script.append(Reply(calls=[Call("execute", {"command": sleeper_command(marker)})]))
    process = start_cli("run", "first question", cwd=project, base_url=server.base_url)
    try:
        if moment == "mid-stream":
            wait_until(lambda: len(server.requests) == 1, "the first request")
            time.sleep(0.3)  # a few chunks in
        else:
            # the command itself, not bwrap still setting up: a SIGKILL in bwrap's first
            # milliseconds can leave its inside running (bubblewrap's own window)
            wait_until(lambda: running(marker, first=True) != [], "tool")
        assert process.poll() is None, process.communicate()
        process.kill()
        process.communicate(timeout=WAIT)
        if moment == "mid-tool":  # the sandbox (on by default) dies with the agent
            wait_until(lambda: not running(marker), "the command to die with the agent", 5)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
        for pid in running(marker):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    assert process.returncode == -signal.SIGKILL

    server.script.append(Reply("second answer"))
    done = run_cli("--continue", "run", "second question", cwd=project, base_url=server.base_url)

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "second answer"
    assert "Traceback" not in done.stderr
    assert_nothing_lost(server, project, "first question", "second question")
    assert_no_secret(isolated_home, done.stdout, done.stderr)
    results = tool_results(server.requests[-1]["messages"])
    if moment == "mid-tool":
        (result,) = results
        assert result["ok"] is False and result["error"].startswith("interrupted"), result
    else:
        assert results == []


def test_ctrl_c_mid_tool_cancels_it_then_continue(
    project: Path, server: StallingOpenAI, isolated_home: Path
) -> None:
    """Headless Esc: SIGINT cancels the turn, kills the command's processes, exits 1."""
    marker = sleeper()
    server.script.append(Reply(calls=[Call("execute", {"command": sleeper_command(marker)})]))
    process = start_cli("run", "first question", cwd=project, base_url=server.base_url)
    try:
        wait_until(lambda: running(marker) != [], "tool")
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=WAIT)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 1, (stdout, stderr)
    assert "Traceback" not in stderr
    assert_no_secret(isolated_home, stdout, stderr)
    assert error_lines(stderr) == ["tui-agent: cancelled"]
    wait_until(lambda: not running(marker), "the cancelled command to die", timeout=5)

    continue_in_process(project, server)
    (result,) = tool_results(server.requests[-1]["messages"])
    assert result == {"error": "cancelled by the user", "name": "execute", "ok": False}


def test_ctrl_c_twice_quits_while_a_cancelled_tool_hangs(
    project: Path, server: StallingOpenAI
) -> None:
    """A sync plugin tool cannot be stopped from outside its thread: the first Ctrl+C
    cancels the turn (the transcript is saved), the second quits without waiting for it."""
    server.script.append(Reply(calls=[Call("slow", {})]))  # waits 20 s for a release file
    process = start_cli("run", "first question", cwd=project, base_url=server.base_url)
    try:
        wait_until(lambda: (project / "slow-started").exists(), "the slow tool")
        process.send_signal(signal.SIGINT)
        wait_until(lambda: len(tool_results(journaled(project))) == 1, "the cancelled result")
        started = time.monotonic()
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=WAIT)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert time.monotonic() - started < 10  # not the 20 s the tool would hold it
    assert process.returncode == 1, (stdout, stderr)
    assert "Traceback" not in stderr
    assert error_lines(stderr) == ["tui-agent: cancelled", "tui-agent: interrupted"], stderr

    continue_in_process(project, server)
    (result,) = tool_results(server.requests[-1]["messages"])
    assert result == {"error": "cancelled by the user", "name": "slow", "ok": False}
