"""`tui-agent acp` facing a client that misbehaves (issue 32, "Done means", last item).

Lines written straight to the agent's stdin (``RawAgent``): what is not JSON gets
JSON-RPC's parse error (-32700), what is not a JSON-RPC message the invalid-request error
(-32600), an unknown method -32601, a prompt to a session that does not exist an error;
after each the agent still serves. Every line on stdout must be a JSON-RPC object
(``RawAgent.read`` fails on anything else), so a traceback or a plugin's ``print`` there
fails the test. A client that disappears mid-turn (its pipes closed, as when it is
killed): the turn cancelled, the process gone within seconds, the journal valid (the next
run continues it and the model gets a transcript the API accepts).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from acp_harness import (
    RawAgent,
    RecordingClient,
    acp_argv,
    acp_env,
    acp_session,
    journal_files,
    user_config,
)
from conftest import running, sleeper

from tui_agent.testing import Call, FakeOpenAI, Reply

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
GONE_WITHIN = 10.0  # seconds for the agent to exit once its client is gone


def error_of(answer: dict[str, Any]) -> dict[str, Any]:
    assert "error" in answer and "result" not in answer, answer
    error = answer["error"]
    assert isinstance(error.get("code"), int) and isinstance(error.get("message"), str), answer
    return error  # type: ignore[no-any-return]


def still_serves(agent: RawAgent) -> None:
    """The agent answers a well-formed request after whatever came before."""
    answer = agent.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    assert answer.get("result", {}).get("protocolVersion") == 1, answer


def no_traceback(agent: RawAgent) -> None:
    assert "Traceback" not in agent.stdout_text()
    assert "Traceback" not in agent.stderr_text(), agent.stderr_text()[-4000:]


@pytest.fixture
def agent(raw_agent: Callable[..., RawAgent]) -> RawAgent:
    """A started agent, initialized."""
    started = raw_agent()
    still_serves(started)
    return started


# -- lines that are no JSON-RPC ---------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "this is not json",
        '{"jsonrpc": "2.0", "id": 7, "method": "initialize"',  # cut short
        b"\xff\xfe\x00 binary\n",
        "{'single': 'quotes'}",
    ],
    ids=["words", "truncated", "binary", "python-repr"],
)
def test_a_line_that_is_not_json_gets_a_parse_error(agent: RawAgent, line: str | bytes) -> None:
    agent.send(line)

    answer = agent.read()

    assert answer is not None, "stdout closed: the agent died on a line that is not JSON"
    assert error_of(answer)["code"] == PARSE_ERROR, answer
    assert answer.get("id", "missing") is None, "a parse error's id is null (JSON-RPC 2.0 §5)"
    still_serves(agent)
    no_traceback(agent)


@pytest.mark.parametrize(
    "line",
    ["[1, 2]", "[]", "42", '"a string"', "null", '{"jsonrpc": "2.0"}', '{"id": 3}'],
    ids=["batch", "empty-batch", "number", "string", "null", "no-method", "bare-id"],
)
def test_json_that_is_no_request_gets_invalid_request(agent: RawAgent, line: str) -> None:
    agent.send(line)

    answer = agent.read()

    assert answer is not None, f"stdout closed: the agent died on {line}"
    assert error_of(answer)["code"] == INVALID_REQUEST, answer
    still_serves(agent)
    no_traceback(agent)


def test_a_huge_line_of_garbage_is_answered_and_the_agent_goes_on(agent: RawAgent) -> None:
    agent.send("x" * 5_000_000)

    answer = agent.read()

    assert answer is not None
    assert error_of(answer)["code"] == PARSE_ERROR
    still_serves(agent)


# -- requests the agent does not know ---------------------------------------------------------


def test_an_unknown_method_gets_method_not_found_with_its_id(agent: RawAgent) -> None:
    answer = agent.request("session/teleport", {"sessionId": "x"})

    assert error_of(answer)["code"] == METHOD_NOT_FOUND
    still_serves(agent)
    no_traceback(agent)


def test_an_unknown_notification_is_not_answered(agent: RawAgent) -> None:
    agent.send({"jsonrpc": "2.0", "method": "session/teleport", "params": {}})
    agent.send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "nope"}})

    still_serves(agent)  # the next thing on stdout is this answer: nothing for the two
    assert [m for m in agent.seen if "id" not in m or m["id"] is None] == []
    no_traceback(agent)


def test_a_response_nobody_asked_for_is_ignored(agent: RawAgent) -> None:
    agent.send({"jsonrpc": "2.0", "id": 999, "result": {"outcome": {"outcome": "cancelled"}}})

    still_serves(agent)
    no_traceback(agent)


def test_a_prompt_to_an_unknown_session_is_an_error(agent: RawAgent, model: FakeOpenAI) -> None:
    answer = agent.request(
        "session/prompt",
        {"sessionId": "no-such-session", "prompt": [{"type": "text", "text": "hello"}]},
    )

    error_of(answer)
    assert model.requests == [], "the model was asked for a session that does not exist"
    still_serves(agent)
    no_traceback(agent)


@pytest.mark.parametrize(
    "method, params",
    [
        ("session/new", {}),  # no cwd
        ("session/new", {"cwd": "relative/folder", "mcpServers": []}),
        ("session/prompt", {"sessionId": 12}),
        ("session/set_mode", {"sessionId": "x", "modeId": "godmode"}),
    ],
    ids=["new-without-cwd", "new-relative-cwd", "prompt-bad-types", "mode-unknown-session"],
)
def test_bad_params_are_an_error_not_a_crash(
    agent: RawAgent, method: str, params: dict[str, Any]
) -> None:
    answer = agent.request(method, params)

    assert error_of(answer)["code"] in (INVALID_PARAMS, -32002), answer
    still_serves(agent)
    no_traceback(agent)


def test_a_second_prompt_while_one_runs_is_refused_and_the_first_goes_on(
    agent: RawAgent, project: Path, model: FakeOpenAI
) -> None:
    user_config()
    model.script += [Reply("slow and steady " * 20, delay=0.05)]
    session = agent.new_session(project)
    first = agent.next_id()
    agent.send(
        {
            "jsonrpc": "2.0",
            "id": first,
            "method": "session/prompt",
            "params": {"sessionId": session, "prompt": [{"type": "text", "text": "one"}]},
        }
    )
    wait_for(lambda: len(model.requests) == 1, "the first prompt's request")

    second = agent.request(
        "session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "two"}]}
    )

    error_of(second)
    done = agent.response(first)
    assert done.get("result") == {"stopReason": "end_turn"}, done
    assert len(model.requests) == 1


# -- nothing but protocol on stdout -----------------------------------------------------------

NOISY_PLUGIN = """\
import os
import subprocess
import sys

import tui_agent


@tui_agent.setup("noisy")
def noisy(session):
    print("print() from a plugin's setup")

    def handler(args):
        print("print() from a tool")
        sys.stdout.write("sys.stdout.write from a tool\\n")
        sys.stdout.flush()
        os.write(1, b"os.write(1) from a tool\\n")
        subprocess.run(["echo", "a child process's stdout"])
        return {"output": "made noise"}

    session.toolbox.add("noise", description="Make noise", params={}, handler=handler)
"""


def test_plugins_and_their_children_writing_to_stdout_do_not_break_the_protocol(
    raw_agent: Callable[..., RawAgent], isolated_home: Path, project: Path, model: FakeOpenAI
) -> None:
    user_config(allow_all=True)
    plugin = isolated_home / ".agents" / "plugins" / "noisy.py"
    plugin.parent.mkdir(parents=True)
    plugin.write_text(NOISY_PLUGIN)
    model.script += [Reply(calls=[Call("noise", {})]), Reply("quiet now")]
    agent = raw_agent()
    still_serves(agent)
    session = agent.new_session(project)

    answer = agent.request(
        "session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "noise"}]}
    )

    # every stdout line was JSON-RPC (read() checks each), and the turn went through
    assert answer.get("result") == {"stopReason": "end_turn"}, answer
    results = [m for m in model.requests[1]["messages"] if m["role"] == "tool"]
    assert "made noise" in results[0]["content"], results
    assert "from a tool" not in agent.stdout_text()
    assert "a child process" not in agent.stdout_text()


GREEDY_PLUGIN = """\
import os
import sys

import tui_agent


@tui_agent.setup("greedy")
def greedy(session):
    def handler(args):
        got = sys.stdin.read(100) + os.read(0, 100).decode(errors="replace")
        return {"output": "stdin gave " + repr(got)}

    session.toolbox.add("greedy", description="Read stdin", params={}, handler=handler)
"""


def test_a_tool_reading_stdin_gets_nothing_of_the_protocol(
    raw_agent: Callable[..., RawAgent], isolated_home: Path, project: Path, model: FakeOpenAI
) -> None:
    user_config(allow_all=True)
    plugin = isolated_home / ".agents" / "plugins" / "greedy.py"
    plugin.parent.mkdir(parents=True)
    plugin.write_text(GREEDY_PLUGIN)
    model.script += [Reply(calls=[Call("greedy", {})]), Reply("done")]
    agent = raw_agent()
    still_serves(agent)
    session = agent.new_session(project)
    prompt = agent.next_id()
    agent.send(
        {
            "jsonrpc": "2.0",
            "id": prompt,
            "method": "session/prompt",
            "params": {"sessionId": session, "prompt": [{"type": "text", "text": "read"}]},
        }
    )
    others = [agent.next_id() for _ in range(5)]
    for ident in others:  # requests the tool could steal, sent while the turn runs
        agent.send({"jsonrpc": "2.0", "id": ident, "method": "no/such"})

    done = agent.response(prompt)

    assert done.get("result") == {"stopReason": "end_turn"}, done
    (result,) = [m["content"] for m in model.requests[1]["messages"] if m["role"] == "tool"]
    assert "stdin gave ''" in result, result
    for ident in others:  # each answered, before the prompt's answer or after it
        if not any(m.get("id") == ident for m in agent.seen):
            agent.response(ident)
    answers = [m for m in agent.seen if m.get("id") in others and "method" not in m]
    assert [error_of(m)["code"] for m in answers] == [METHOD_NOT_FOUND] * 5
    still_serves(agent)


# -- a client that disappears -----------------------------------------------------------------


def wait_for(condition: Callable[[], bool], what: str, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


MIDDLEMAN = """\
import json, subprocess, sys

argv, cwd, stderr, prompt = json.loads(sys.argv[1])
agent = subprocess.Popen(
    argv, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open(stderr, "ab")
)
print(json.dumps({"pid": agent.pid}), flush=True)


def send(message):
    agent.stdin.write((json.dumps(message) + "\\n").encode())
    agent.stdin.flush()


def answer(ident):
    for line in agent.stdout:
        message = json.loads(line)
        print(json.dumps(message), flush=True)
        if message.get("id") == ident and "method" not in message:
            return message


send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}})
answer(1)
send({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": cwd, "mcpServers": []}})
session = answer(2)["result"]["sessionId"]
send({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {
    "sessionId": session, "prompt": [{"type": "text", "text": prompt}]}})
answer(3)
"""


class Middleman:
    """A client process of its own between the test and the agent (a tiny editor): it
    initializes, opens a session, sends ``prompt`` and echoes every line the agent says.
    Killing it closes the agent's pipes as a crashed or killed editor does."""

    def __init__(self, model: FakeOpenAI, project: Path, stderr: Path, prompt: str) -> None:
        spec = json.dumps([acp_argv(model), str(project), str(stderr), prompt])
        self.stderr = stderr
        self.process = subprocess.Popen(
            [sys.executable, "-c", MIDDLEMAN, spec],
            cwd=project,
            env=acp_env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
        )
        self.heard: list[dict[str, Any]] = []
        assert self.process.stdout is not None
        first = self.process.stdout.readline()
        self.agent_pid = int(json.loads(first)["pid"])
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.heard.append(json.loads(line))

    def saw(self, method: str) -> bool:
        return any(m.get("method") == method for m in list(self.heard))

    def kill(self) -> float:
        """SIGKILL the client; returns when."""
        gone = time.monotonic()
        self.process.kill()
        self.process.wait(timeout=10)
        return gone

    def agent_alive(self) -> bool:
        try:
            state = Path(f"/proc/{self.agent_pid}/stat").read_text().rsplit(") ", 1)[1][0]
        except (OSError, IndexError):
            return False
        return state not in "ZX"

    def agent_exits_soon(self, since: float) -> None:
        while self.agent_alive():
            if time.monotonic() - since > GONE_WITHIN:
                os.kill(self.agent_pid, signal.SIGKILL)
                raise AssertionError(
                    f"the agent still ran {GONE_WITHIN}s after its client was killed; stderr:\n"
                    + self.stderr.read_text(errors="replace")[-3000:]
                )
            time.sleep(0.05)

    def stderr_text(self) -> str:
        return self.stderr.read_text(errors="replace") if self.stderr.exists() else ""


@pytest.fixture
def middleman(
    project: Path, model: FakeOpenAI, agent_stderr: Path
) -> Iterator[Callable[[str], Middleman]]:
    started: list[Middleman] = []

    def start(prompt: str) -> Middleman:
        started.append(Middleman(model, project, agent_stderr, prompt))
        return started[-1]

    yield start
    for one in started:
        if one.process.poll() is None:
            one.process.kill()
        if one.agent_alive():
            os.kill(one.agent_pid, signal.SIGKILL)


def continue_in(project: Path, model: FakeOpenAI, text: str) -> subprocess.CompletedProcess[str]:
    """``tui-agent --continue run TEXT`` in ``project``: the journal left behind resumes."""
    argv = [sys.executable, "-m", "tui_agent", "--base-url", model.base_url, "--model", "m"]
    return subprocess.run(
        [*argv, "--continue", "run", text],
        cwd=project,
        env=acp_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_client_killed_mid_stream_cancels_the_turn_and_the_journal_resumes(
    middleman: Callable[[str], Middleman], project: Path, model: FakeOpenAI
) -> None:
    user_config()
    model.script += [Reply("a long reply that keeps coming " * 60, delay=0.05)]
    client = middleman("first question")
    wait_for(lambda: client.saw("session/update") and len(model.requests) == 1, "streaming")
    time.sleep(0.3)  # some of the reply is out

    client.agent_exits_soon(client.kill())

    assert "Traceback" not in client.stderr_text(), client.stderr_text()[-4000:]
    assert len(journal_files()) == 1
    model.script += [Reply("second answer")]
    done = continue_in(project, model, "second question")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "second answer"
    assert model.rejected == [], "the resumed transcript is one the API rejects"
    users = [m["content"] for m in model.requests[-1]["messages"] if m["role"] == "user"]
    assert users[0] == "first question" and users[-1] == "second question", users


def test_a_client_killed_while_asked_for_permission_runs_nothing(
    middleman: Callable[[str], Middleman], project: Path, model: FakeOpenAI
) -> None:
    user_config(sandbox=False)  # execute asks
    model.script += [Reply(calls=[Call("execute", {"command": "touch ran.txt"})])]
    client = middleman("run it")
    wait_for(lambda: client.saw("session/request_permission"), "the permission request")

    client.agent_exits_soon(client.kill())

    assert not (project / "ran.txt").exists(), "the command ran with nobody to allow it"
    assert "Traceback" not in client.stderr_text(), client.stderr_text()[-4000:]
    model.script += [Reply("resumed")]
    done = continue_in(project, model, "again")
    assert done.returncode == 0, done.stderr
    assert model.rejected == [], "the resumed transcript is one the API rejects"
    users = [m["content"] for m in model.requests[-1]["messages"] if m["role"] == "user"]
    assert users[0] == "run it" and users[-1] == "again", users


def exits_soon(agent: RawAgent, since: float) -> int:
    try:
        code = agent.process.wait(timeout=GONE_WITHIN)
    except subprocess.TimeoutExpired:
        raise AssertionError(
            f"the agent still runs {GONE_WITHIN}s after its stdin closed; stderr:\n"
            f"{agent.stderr_text()[-3000:]}"
        ) from None
    assert time.monotonic() - since < GONE_WITHIN
    return code


def test_stdin_closed_between_turns_exits_cleanly(
    agent: RawAgent, project: Path, model: FakeOpenAI
) -> None:
    user_config()
    model.script += [Reply("hello")]
    session = agent.new_session(project)
    answer = agent.request(
        "session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}
    )
    assert answer.get("result") == {"stopReason": "end_turn"}, answer

    assert agent.process.stdin is not None
    since = time.monotonic()
    agent.process.stdin.close()  # stdout stays open: anything said on the way out is protocol

    assert exits_soon(agent, since) == 0
    while agent.read(timeout=5) is not None:
        pass
    no_traceback(agent)
    (journal,) = journal_files()
    lines = [json.loads(line) for line in journal.read_text().splitlines() if line.strip()]
    assert any("hello" in json.dumps(line) for line in lines), lines


def test_a_client_killed_while_a_command_runs_leaves_no_process_behind(
    middleman: Callable[[str], Middleman], project: Path, model: FakeOpenAI
) -> None:
    """The running command is the turn's: when the client goes, it goes too."""
    user_config(allow_all=True, sandbox=False)  # no asking, no bubblewrap between us and it
    command = sleeper(60)
    model.script += [Reply(calls=[Call("execute", {"command": command})]), Reply("slept")]
    client = middleman("sleep a while")
    wait_for(lambda: running(command, first=True) != [], "the command to start")

    client.agent_exits_soon(client.kill())

    wait_for(lambda: running(command, first=True) == [], "the command to be gone", GONE_WITHIN)
    assert "Traceback" not in client.stderr_text(), client.stderr_text()[-4000:]
    model.script += [Reply("resumed")]
    done = continue_in(project, model, "again")
    assert done.returncode == 0, done.stderr
    assert model.rejected == [], "the resumed transcript is one the API rejects"


def test_sigterm_mid_stream_exits_cleanly_and_the_journal_resumes(
    agent: RawAgent, project: Path, model: FakeOpenAI
) -> None:
    """An editor stopping its agent server politely (SIGTERM) mid-reply."""
    user_config()
    model.script += [Reply("a long reply that keeps coming " * 60, delay=0.05)]
    session = agent.new_session(project)
    agent.send(
        {
            "jsonrpc": "2.0",
            "id": agent.next_id(),
            "method": "session/prompt",
            "params": {"sessionId": session, "prompt": [{"type": "text", "text": "first"}]},
        }
    )
    wait_for(lambda: len(model.requests) == 1, "the request")
    time.sleep(0.3)

    since = time.monotonic()
    agent.process.send_signal(signal.SIGTERM)
    code = exits_soon(agent, since)

    assert code in (0, -signal.SIGTERM, 128 + signal.SIGTERM), code
    while agent.read(timeout=5) is not None:  # all it said was protocol
        pass
    assert "Traceback" not in agent.stderr_text(), agent.stderr_text()[-4000:]
    model.script += [Reply("second answer")]
    done = continue_in(project, model, "second")
    assert done.returncode == 0, done.stderr
    assert model.rejected == [], "the resumed transcript is one the API rejects"
    users = [m["content"] for m in model.requests[-1]["messages"] if m["role"] == "user"]
    assert users[0] == "first" and users[-1] == "second", users


def test_a_flood_of_requests_is_answered_in_full(agent: RawAgent) -> None:
    idents = [agent.next_id() for _ in range(300)]
    lines = [
        json.dumps({"jsonrpc": "2.0", "id": ident, "method": "no/such", "params": {}})
        for ident in idents
    ]
    agent.send(("\n".join(lines) + "\n").encode())

    answered = [error_of(agent.response(ident))["code"] for ident in idents]

    assert answered == [METHOD_NOT_FOUND] * len(idents)
    still_serves(agent)


def test_a_big_embedded_resource_is_answered_not_fatal(
    agent: RawAgent, project: Path, model: FakeOpenAI
) -> None:
    user_config()
    model.script += [Reply("read it")]
    session = agent.new_session(project)
    big = "a line of an open buffer\n" * 200_000  # 5 MB
    resource = {"uri": f"file://{project}/big.txt", "mimeType": "text/plain", "text": big}

    answer = agent.request(
        "session/prompt",
        {
            "sessionId": session,
            "prompt": [
                {"type": "text", "text": "look"},
                {"type": "resource", "resource": resource},
            ],
        },
    )

    assert answer.get("result") == {"stopReason": "end_turn"}, answer
    sent = json.dumps(model.requests[0]["messages"][-1])
    assert "a line of an open buffer" in sent
    assert len(sent) < 1_000_000, "a 5 MB buffer went to the model whole"
    still_serves(agent)


def test_requests_from_a_file_are_all_answered_into_a_file(
    project: Path, model: FakeOpenAI, agent_stderr: Path, tmp_path: Path
) -> None:
    """stdin and stdout regular files (``tui-agent acp < in.jsonl > out.jsonl``), not pipes."""
    requests = tmp_path / "in.jsonl"
    replies = tmp_path / "out.jsonl"
    requests.write_text(
        "\n".join(
            [
                json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": 1,
                        "method": "initialize",
                        "params": {"protocolVersion": 1},
                    }
                ),
                "not json",
                json.dumps({"jsonrpc": "2.0", "id": 2, "method": "no/such"}),
                json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": 3,
                        "method": "session/new",
                        "params": {"cwd": str(project), "mcpServers": []},
                    }
                ),
            ]
        )
        + "\n"
    )
    with requests.open("rb") as given, replies.open("wb") as out, agent_stderr.open("ab") as err:
        done = subprocess.run(
            acp_argv(model),
            cwd=project,
            env=acp_env(),
            stdin=given,
            stdout=out,
            stderr=err,
            timeout=60,
        )

    assert done.returncode == 0, agent_stderr.read_text()[-3000:]
    answers = [json.loads(line) for line in replies.read_text().splitlines() if line.strip()]
    by_id = {a.get("id"): a for a in answers if "method" not in a}
    assert by_id[1]["result"]["protocolVersion"] == 1
    assert by_id[None]["error"]["code"] == PARSE_ERROR
    assert by_id[2]["error"]["code"] == METHOD_NOT_FOUND
    assert "sessionId" in by_id[3]["result"], answers


# -- prompts that point outside the project ---------------------------------------------------


@pytest.mark.parametrize("how", ["link-outside", "link-through-symlink", "mention-outside"])
def test_a_prompt_cannot_carry_a_file_from_outside_the_project(
    agent: RawAgent, project: Path, model: FakeOpenAI, tmp_path: Path, how: str
) -> None:
    """A resource link or an ``@path`` to a file outside the project never attaches it:
    the model's own read asks before it reads there, and a prompt must not skip that."""
    user_config()
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("TOPSECRET-7f3a\n")
    (project / "inside-link.txt").symlink_to(secret)
    model.script += [Reply("ok")]
    session = agent.new_session(project)
    if how == "link-outside":
        blocks = [{"type": "resource_link", "uri": secret.as_uri(), "name": "secret.txt"}]
    elif how == "link-through-symlink":
        link = project / "inside-link.txt"
        blocks = [{"type": "resource_link", "uri": link.as_uri(), "name": "inside-link.txt"}]
    else:
        blocks = [{"type": "text", "text": f"look at @{secret}"}]

    answer = agent.request(
        "session/prompt",
        {"sessionId": session, "prompt": [{"type": "text", "text": "read "}, *blocks]},
    )

    assert "TOPSECRET" not in json.dumps(model.requests), "a file outside the project was sent"
    assert "TOPSECRET" not in agent.stdout_text()
    assert "result" in answer or "error" in answer, answer
    still_serves(agent)


# -- session ids are names, not paths ---------------------------------------------------------


def test_session_load_does_not_follow_a_path_in_the_session_id(
    raw_agent: Callable[..., RawAgent], project: Path, model: FakeOpenAI
) -> None:
    """A journal moved out of the sessions folder cannot be loaded by a session id that
    climbs to it (``../name``) or names it absolutely."""
    user_config()
    model.script += [Reply("remember TRAVERSAL-91c")]
    first = raw_agent()
    still_serves(first)
    session = first.new_session(project)
    assert first.request(
        "session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}
    ).get("result") == {"stopReason": "end_turn"}
    assert first.close() == 0
    (journal,) = journal_files()
    moved = journal.parent.parent / "moved.jsonl"
    journal.rename(moved)
    agent = raw_agent()
    still_serves(agent)

    for session_id in ["../moved", str(moved.with_suffix("")), "./../moved", session]:
        answer = agent.request(
            "session/load", {"sessionId": session_id, "cwd": str(project), "mcpServers": []}
        )
        error_of(answer)

    assert "TRAVERSAL" not in agent.stdout_text(), "a journal outside the folder was replayed"
    assert moved.read_text() and journal_files() == []
    still_serves(agent)
    no_traceback(agent)


# -- two sessions on one connection -----------------------------------------------------------


async def test_two_sessions_at_once_stay_apart_and_cancel_only_touches_one(
    project: Path, model: FakeOpenAI, agent_stderr: Path
) -> None:
    """One editor, two threads: one streams and is cancelled while the other asks
    permission, writes and finishes; each update names its own session."""
    user_config()
    model.when("alpha", [Reply("alpha words keep coming " * 80, delay=0.03)])
    model.when(
        "beta",
        [
            Reply(calls=[Call("write", {"path": "beta.txt", "content": "beta\n"})]),
            Reply("beta done"),
        ],
    )
    client = RecordingClient("allow_once")
    async with acp_session(project, model, client, stderr=agent_stderr) as s:
        beta_id = (await s.conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        alpha = asyncio.ensure_future(s.prompt("alpha"))
        beta = asyncio.ensure_future(
            s.conn.prompt(session_id=beta_id, prompt=[{"type": "text", "text": "beta"}])
        )
        await client.wait_for(lambda: "alpha words" in client.text(s.session_id), "alpha streaming")

        await s.conn.cancel(session_id=s.session_id)
        alpha_done = await asyncio.wait_for(alpha, 30)
        beta_done = await asyncio.wait_for(beta, 30)

    assert alpha_done == {"stopReason": "cancelled"}, alpha_done
    assert beta_done.stop_reason == "end_turn", beta_done
    assert (project / "beta.txt").read_text() == "beta\n"
    assert client.text(beta_id) == "beta done"
    assert "beta" not in client.text(s.session_id)
    assert "alpha" not in client.text(beta_id)
    assert [p["sessionId"] for p in client.permissions] == [beta_id]
    assert len(client.text(s.session_id)) < len("alpha words keep coming " * 80)
    assert model.rejected == []


# -- permission answers that say nothing clear --------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        {"result": {"outcome": {"outcome": "selected", "optionId": "no-such-option"}}},
        {"result": {"outcome": {"outcome": "selected"}}},
        {"result": {"outcome": "allow"}},
        {"result": {}},
        {"result": None},
        {"error": {"code": -32603, "message": "the editor crashed"}},
    ],
    ids=["unknown-option", "no-option", "bare-string", "empty", "null", "error"],
)
def test_a_permission_answer_that_is_no_clear_yes_runs_nothing(
    agent: RawAgent, project: Path, model: FakeOpenAI, answer: dict[str, Any]
) -> None:
    user_config(sandbox=False)  # execute asks
    model.script += [Reply(calls=[Call("execute", {"command": "touch ran.txt"})]), Reply("after")]
    session = agent.new_session(project)
    prompt_id = agent.next_id()
    agent.send(
        {
            "jsonrpc": "2.0",
            "id": prompt_id,
            "method": "session/prompt",
            "params": {"sessionId": session, "prompt": [{"type": "text", "text": "run it"}]},
        }
    )
    while True:
        message = agent.read()
        assert message is not None, agent.stderr_text()[-3000:]
        if message.get("method") == "session/request_permission":
            break

    agent.send({"jsonrpc": "2.0", "id": message["id"], **answer})
    done = agent.response(prompt_id)

    assert not (project / "ran.txt").exists(), f"{answer} was taken for a yes"
    call_id = message["params"]["toolCall"]["toolCallId"]
    statuses = [
        m["params"]["update"].get("status")
        for m in agent.seen
        if m.get("method") == "session/update"
        and m["params"]["update"].get("toolCallId") == call_id
    ]
    assert "completed" not in statuses, statuses
    assert "result" in done or "error" in done, done
    still_serves(agent)
    no_traceback(agent)


def test_a_clients_mcp_server_is_stopped_when_the_client_leaves(
    agent: RawAgent, project: Path
) -> None:
    """A server from ``mcpServers`` that never speaks MCP (it only sleeps) does not hold
    session/new up, and does not outlive the agent."""
    user_config()
    command = sleeper(60)
    program, argument = command.split()
    server = {"name": "mute", "command": program, "args": [argument], "env": []}
    since = time.monotonic()

    answer = agent.request("session/new", {"cwd": str(project), "mcpServers": [server]})

    assert "sessionId" in answer.get("result", {}), answer
    assert time.monotonic() - since < 10, "session/new waited for the MCP server"
    wait_for(lambda: running(command, first=True) != [], "the MCP server to start")
    assert agent.process.stdin is not None
    since = time.monotonic()
    agent.process.stdin.close()
    assert exits_soon(agent, since) == 0
    wait_for(lambda: running(command, first=True) == [], "the MCP server to stop", GONE_WITHIN)


# -- one journal for every frontend -----------------------------------------------------------


def test_a_session_from_the_terminal_loads_over_acp(
    agent: RawAgent, project: Path, model: FakeOpenAI
) -> None:
    """The README's claim: the app's and ACP's sessions are the same journals (the other
    way, ACP to ``--continue``, is checked by the killed-client tests above)."""
    user_config()
    model.script += [Reply("said in the terminal")]
    argv = [sys.executable, "-m", "tui_agent", "--base-url", model.base_url, "--model", "m"]
    done = subprocess.run(
        [*argv, "run", "hello from the shell"],
        cwd=project,
        env=acp_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    (journal,) = journal_files()

    answer = agent.request(
        "session/load", {"sessionId": journal.stem, "cwd": str(project), "mcpServers": []}
    )

    assert "result" in answer, answer
    replayed = json.dumps(agent.seen)
    assert "hello from the shell" in replayed and "said in the terminal" in replayed


# -- text JSON allows and UTF-8 does not ------------------------------------------------------


@pytest.mark.parametrize(
    "block",
    [
        {"type": "text", "text": "lone \ud800"},
        {"type": "resource_link", "uri": "file:///nowhere/\ud800.txt", "name": "\ud800.txt"},
        {"type": "resource", "resource": {"uri": "file:///buffer.txt", "text": "x \udfff y"}},
    ],
    ids=["text", "resource-link", "embedded"],
)
def test_a_prompt_with_a_lone_surrogate_is_answered_at_once(
    agent: RawAgent, project: Path, model: FakeOpenAI, block: dict[str, Any]
) -> None:
    """``"\\ud800"`` is valid JSON but no Unicode text UTF-8 can carry: the prompt is
    refused or the character replaced, at once, not retried as a network failure."""
    user_config()
    model.script += [Reply("fine"), Reply("still fine")]
    session = agent.new_session(project)
    ident = agent.next_id()
    agent.send(  # json.dumps writes the lone surrogate as the escape "\ud800", as clients do
        {
            "jsonrpc": "2.0",
            "id": ident,
            "method": "session/prompt",
            "params": {"sessionId": session, "prompt": [{"type": "text", "text": "see "}, block]},
        }
    )

    answer = agent.response(ident, timeout=10)

    assert "result" in answer or "error" in answer, answer
    retries = [
        m
        for m in agent.seen
        if m.get("method") == "session/update"
        and "retrying" in json.dumps(m["params"]["update"].get("content", ""))
    ]
    assert retries == [], "an encoding error was retried as if the network had failed"
    follow = agent.request(
        "session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "next"}]}
    )
    assert follow.get("result") == {"stopReason": "end_turn"}, follow
    assert model.rejected == []
    no_traceback(agent)


@pytest.mark.parametrize(
    "call",
    [
        Call("glob", {"pattern": "*.txt"}),
        Call("list", {"path": "."}),
        Call("grep", {"pattern": "x"}),
    ],
    ids=["glob", "list", "grep"],
)
def test_a_file_name_that_is_not_utf8_does_not_stall_the_turn(
    agent: RawAgent, project: Path, model: FakeOpenAI, call: Call
) -> None:
    """Linux file names are bytes; one that is not UTF-8 comes back from a tool as a
    surrogate escape, which the next request to the model must still carry (a core bug
    every frontend has: found through ACP, where the client waits with nothing said)."""
    user_config(allow_all=True)
    name = b"caf\xe9.txt".decode("utf-8", "surrogateescape")  # latin-1 bytes, as old disks have
    (project / name).write_text("x marks it\n")
    model.script += [Reply(calls=[call]), Reply("listed")]
    session = agent.new_session(project)

    answer = agent.request(
        "session/prompt",
        {"sessionId": session, "prompt": [{"type": "text", "text": "what is here?"}]},
        timeout=15,
    )

    assert answer.get("result") == {"stopReason": "end_turn"}, answer
    assert len(model.requests) == 2 and model.rejected == []
    (result,) = [m["content"] for m in model.requests[1]["messages"] if m["role"] == "tool"]
    assert "caf" in result, result
