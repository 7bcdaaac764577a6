"""A real ACP client nobody here wrote drives `tui-agent acp` (issue 32, "Done means").

acpx (npm, a headless ACP client) runs ``acpx --agent 'python -m tui_agent ... acp' exec
PROMPT`` against the testing kit's FakeOpenAI; ``--format json`` prints every JSON-RPC
message of the conversation, both ways, one a line, which is what these tests read.
acpx offers fs/read_text_file and fs/write_text_file (unless ``--no-fs``), so writes go
through it as they would through an editor.

Where acpx comes from, first found: ``$TUI_AGENT_ACPX`` (.ci/run installs the pinned
version under .ci-venv/npm and sets it), ``acpx`` on PATH if it is the pinned version,
else ``npm install`` of the pinned version into this run's tmp folder (~5 s). Without npm
the tests fail, saying how to install it (never a skip); an install that fails fails.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from acp_harness import acp_argv, acp_env, user_config

from tui_agent.testing import Call, FakeOpenAI, Reply

ACPX_VERSION = "0.19.1"  # .ci/run pins the same
PERMISSION_DENIED = 5  # acpx's exit code when it refused a permission request


@pytest.fixture(scope="session")
def acpx(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The acpx executable, pinned to ACPX_VERSION."""
    given = os.environ.get("TUI_AGENT_ACPX")
    if given:
        found = given
    elif (on_path := shutil.which("acpx")) and _version(on_path) == ACPX_VERSION:
        found = on_path
    else:
        npm = shutil.which("npm")
        if npm is None:
            pytest.fail(  # never a skip: .ci/run installs npm, as the sandbox tests' bwrap
                f"npm is missing: cannot install acpx {ACPX_VERSION}, the ACP client these "
                "tests drive tui-agent acp with (install Node.js and npm, or set "
                "TUI_AGENT_ACPX to an acpx executable)"
            )
        prefix = tmp_path_factory.mktemp("acpx")
        install = [npm, "install", "--no-audit", "--no-fund", "--prefix", str(prefix)]
        done = subprocess.run(
            [*install, f"acpx@{ACPX_VERSION}"],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, f"npm install acpx@{ACPX_VERSION} failed:\n{done.stderr}"
        found = str(prefix / "node_modules" / ".bin" / "acpx")
    version = _version(found)
    assert version == ACPX_VERSION, f"{found} is acpx {version}, these tests pin {ACPX_VERSION}"
    return found


def _version(executable: str) -> str:
    done = subprocess.run([executable, "--version"], capture_output=True, text=True, timeout=60)
    return done.stdout.strip()


def run_acpx(
    acpx: str,
    project: Path,
    model: FakeOpenAI,
    prompt: str,
    *flags: str,
) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    """``acpx --agent '<tui-agent acp>' --cwd PROJECT --format json FLAGS exec PROMPT``: the
    finished process and its stdout's JSON-RPC messages (every line must be one)."""
    agent = shlex.join(acp_argv(model))
    options = ["--agent", agent, "--cwd", str(project), "--format", "json", "--timeout", "60"]
    done = subprocess.run(
        [acpx, *options, *flags, "exec", prompt],
        cwd=project,
        env=acp_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    messages = []
    for line in done.stdout.splitlines():
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError:
            raise AssertionError(
                f"acpx --format json printed a line that is not JSON: {line!r}\n"
                f"stderr:\n{done.stderr[-3000:]}"
            ) from None
        assert isinstance(message, dict) and message.get("jsonrpc") == "2.0", line
        messages.append(message)
    return done, messages


def updates(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m["params"]["update"] for m in messages if m.get("method") == "session/update"]


def reply_text(messages: list[dict[str, Any]]) -> str:
    return "".join(
        u["content"].get("text", "")
        for u in updates(messages)
        if u["sessionUpdate"] == "agent_message_chunk"
    )


def tool_calls(messages: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each tool call by id: its ``tool_call`` and ``tool_call_update``s merged in order,
    with ``statuses`` (every status it had, in order) and ``contents`` (all content items)."""
    calls: dict[str, dict[str, Any]] = {}
    for update in updates(messages):
        if update["sessionUpdate"] not in ("tool_call", "tool_call_update"):
            continue
        call = calls.setdefault(update["toolCallId"], {"statuses": [], "contents": []})
        call.update({k: v for k, v in update.items() if k not in ("sessionUpdate", "content")})
        if update.get("status"):
            call["statuses"].append(update["status"])
        call["contents"] += update.get("content") or []
    return calls


def agent_requests(messages: list[dict[str, Any]], method: str) -> list[dict[str, Any]]:
    return [m for m in messages if m.get("method") == method and "id" in m]


def permission_answers(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """acpx's answers to session/request_permission: their ``outcome``s, in order."""
    return [
        m["result"]["outcome"]
        for m in messages
        if isinstance(m.get("result"), dict) and "outcome" in m["result"]
    ]


def prompt_result(messages: list[dict[str, Any]]) -> dict[str, Any]:
    (prompt,) = [m for m in messages if m.get("method") == "session/prompt"]
    answers = [m for m in messages if m.get("id") == prompt["id"] and "method" not in m]
    assert answers, f"no response to session/prompt in {messages[-3:]}"
    return answers[-1]


def tool_messages(request: dict[str, Any]) -> list[str]:
    return [str(m["content"]) for m in request["messages"] if m["role"] == "tool"]


def check_conversation(messages: list[dict[str, Any]]) -> None:
    """What every run shows: initialize answered with our agent's capabilities, one
    session, a prompt that ended its turn."""
    (init,) = [m for m in messages if m.get("method") == "initialize"]
    answer = next(m for m in messages if m.get("id") == init["id"] and "result" in m)
    assert answer["result"]["protocolVersion"] == 1
    assert "agentCapabilities" in answer["result"]
    assert len([m for m in messages if m.get("method") == "session/new"]) == 1
    assert prompt_result(messages).get("result") == {"stopReason": "end_turn"}, prompt_result(
        messages
    )


# -- allowed ----------------------------------------------------------------------------------


def test_approve_all_a_write_goes_through_the_editor_and_the_reply_streams(
    acpx: str, project: Path, model: FakeOpenAI
) -> None:
    user_config()  # the real rules: write asks
    model.script += [
        Reply(calls=[Call("write", {"path": "notes.txt", "content": "written via acpx\n"})]),
        Reply("I wrote notes.txt for you."),
    ]

    done, messages = run_acpx(acpx, project, model, "write a note", "--approve-all")

    assert done.returncode == 0, done.stderr[-3000:]
    check_conversation(messages)
    assert reply_text(messages) == "I wrote notes.txt for you."
    assert (project / "notes.txt").read_text() == "written via acpx\n"
    # the model saw the prompt, then the write's result
    assert model.requests[0]["messages"][-1]["content"] == "write a note"
    assert model.rejected == []
    assert len(model.requests) == 2
    (result,) = tool_messages(model.requests[1])
    assert json.loads(result).get("ok") is True, result
    # the call as acpx saw it: an edit, asked about, allowed once, completed, shown as a diff
    (call,) = tool_calls(messages).values()
    assert call["kind"] == "edit", call
    assert "notes.txt" in call["title"], call
    assert call["statuses"][-1] == "completed", call
    diffs = [c for c in call["contents"] if c.get("type") == "diff"]
    assert diffs and diffs[-1]["path"] == str(project / "notes.txt"), call
    assert diffs[-1]["newText"] == "written via acpx\n"
    (asked,) = agent_requests(messages, "session/request_permission")
    assert asked["params"]["toolCall"]["toolCallId"] == call["toolCallId"]
    announced = next(
        i
        for i, m in enumerate(messages)
        if m.get("method") == "session/update"
        and m["params"]["update"]["sessionUpdate"] == "tool_call"
    )
    assert announced < messages.index(asked), "asked about a call the client was not shown"
    kinds = {option["kind"] for option in asked["params"]["options"]}
    assert {"allow_once", "reject_once"} <= kinds, kinds
    (outcome,) = permission_answers(messages)
    chosen = next(o for o in asked["params"]["options"] if o["optionId"] == outcome["optionId"])
    assert chosen["kind"] in ("allow_once", "allow_always")
    assert "Traceback" not in done.stdout


def test_acpx_offers_fs_so_reads_and_writes_go_through_it(
    acpx: str, project: Path, model: FakeOpenAI
) -> None:
    """acpx says it reads and writes text files (as an editor with unsaved buffers does):
    the agent's read and write go through fs/read_text_file and fs/write_text_file."""
    user_config()
    (project / "source.txt").write_text("from the editor's side\n")
    model.script += [
        Reply(calls=[Call("read", {"path": "source.txt"})]),
        Reply(calls=[Call("write", {"path": "notes.txt", "content": "written via acpx\n"})]),
        Reply("done"),
    ]

    done, messages = run_acpx(acpx, project, model, "read then write", "--approve-all")

    assert done.returncode == 0, done.stderr[-3000:]
    check_conversation(messages)
    (read,) = agent_requests(messages, "fs/read_text_file")
    assert read["params"]["path"] == str(project / "source.txt")
    (written,) = agent_requests(messages, "fs/write_text_file")
    assert written["params"]["path"] == str(project / "notes.txt")
    assert written["params"]["content"] == "written via acpx\n"
    assert (project / "notes.txt").read_text() == "written via acpx\n"
    assert any("from the editor's side" in text for text in tool_messages(model.requests[1]))


def test_a_read_acpx_refuses_fails_with_its_reason(
    acpx: str, project: Path, model: FakeOpenAI
) -> None:
    """With fs offered, acpx's --deny-all refuses fs/read_text_file: the read fails saying
    so; the agent does not go round the editor to the disk."""
    user_config()
    (project / "README.md").write_text("# private until allowed\n")
    model.script += [Reply(calls=[Call("read", {"path": "README.md"})]), Reply("could not")]

    _, messages = run_acpx(acpx, project, model, "read it", "--deny-all")

    check_conversation(messages)
    assert agent_requests(messages, "fs/read_text_file"), "the read did not go to acpx"
    (call,) = tool_calls(messages).values()
    assert call["statuses"][-1] == "failed", call
    (result,) = tool_messages(model.requests[1])
    assert "private until allowed" not in result, "read from disk after the editor said no"
    assert "Permission denied" in result, result


def test_no_fs_the_write_goes_to_disk(acpx: str, project: Path, model: FakeOpenAI) -> None:
    user_config()
    model.script += [
        Reply(calls=[Call("write", {"path": "disk.txt", "content": "straight to disk\n"})]),
        Reply("done"),
    ]

    done, messages = run_acpx(acpx, project, model, "write it", "--approve-all", "--no-fs")

    assert done.returncode == 0, done.stderr[-3000:]
    check_conversation(messages)
    assert (project / "disk.txt").read_text() == "straight to disk\n"
    assert agent_requests(messages, "fs/write_text_file") == []
    assert reply_text(messages) == "done"


# -- denied -----------------------------------------------------------------------------------


def test_deny_all_a_command_is_refused_and_fails_a_read_needs_no_asking(
    acpx: str, project: Path, model: FakeOpenAI
) -> None:
    user_config(sandbox=False)  # without the sandbox, execute asks
    (project / "README.md").write_text("# the project\n")
    model.script += [
        Reply(
            calls=[
                Call("read", {"path": "README.md"}),
                Call("execute", {"command": "touch ran.txt"}),
            ]
        ),
        Reply("The command was refused."),
    ]

    # --no-fs: with fs offered, acpx's --deny-all refuses fs/read_text_file as well
    done, messages = run_acpx(acpx, project, model, "read and run", "--deny-all", "--no-fs")

    assert done.returncode == PERMISSION_DENIED, (done.returncode, done.stderr[-3000:])
    check_conversation(messages)
    assert reply_text(messages) == "The command was refused."
    assert not (project / "ran.txt").exists(), "a refused command ran"
    calls = tool_calls(messages)
    by_kind = {call["kind"]: call for call in calls.values()}
    assert set(by_kind) == {"read", "execute"}, calls
    assert by_kind["read"]["statuses"][-1] == "completed", by_kind["read"]
    assert by_kind["execute"]["statuses"][-1] == "failed", by_kind["execute"]
    # only the command was asked about (read is allowed by default), and acpx said no
    (asked,) = agent_requests(messages, "session/request_permission")
    assert asked["params"]["toolCall"]["toolCallId"] == by_kind["execute"]["toolCallId"]
    (outcome,) = permission_answers(messages)
    chosen = next(o for o in asked["params"]["options"] if o["optionId"] == outcome["optionId"])
    assert chosen["kind"] in ("reject_once", "reject_always")
    # the model heard the read's text and the refusal
    results = tool_messages(model.requests[1])
    assert any("the project" in text for text in results), results
    assert any("denied" in text.lower() or "reject" in text.lower() for text in results), results
    assert model.rejected == []


def test_approve_all_cannot_open_what_a_deny_rule_closes(
    acpx: str, project: Path, model: FakeOpenAI
) -> None:
    """acpx says yes to everything it is asked; a denied call is never asked."""
    user_config('[permission]\nexecute = { "*" = "ask", "touch *" = "deny" }\n', sandbox=False)
    model.script += [
        Reply(calls=[Call("execute", {"command": "touch ran.txt"})]),
        Reply("It is not allowed."),
    ]

    done, messages = run_acpx(acpx, project, model, "run it", "--approve-all", "--no-fs")

    assert done.returncode == 0, done.stderr[-3000:]
    check_conversation(messages)
    assert agent_requests(messages, "session/request_permission") == []
    (call,) = tool_calls(messages).values()
    assert call["statuses"][-1] == "failed", call
    assert not (project / "ran.txt").exists(), "a denied command ran"
    assert reply_text(messages) == "It is not allowed."


# -- both in one turn -------------------------------------------------------------------------


def test_a_policy_allows_the_edit_and_denies_the_command_in_one_turn(
    acpx: str, project: Path, model: FakeOpenAI
) -> None:
    user_config(sandbox=False)
    model.script += [
        Reply(
            calls=[
                Call("write", {"path": "kept.txt", "content": "kept\n"}),
                Call("execute", {"command": "touch ran.txt"}),
            ]
        ),
        Reply("One of two."),
    ]
    policy = json.dumps({"autoApprove": ["edit"], "autoDeny": ["execute"]})

    # --no-fs: acpx's own fs/write_text_file allows writes only under --approve-all (a
    # policy covers permission requests), so with fs offered it would refuse this one
    done, messages = run_acpx(
        acpx, project, model, "both", "--permission-policy", policy, "--no-fs"
    )

    # acpx exits 5 only when it allowed nothing; here it allowed one
    assert done.returncode == 0, (done.returncode, done.stderr[-3000:])
    check_conversation(messages)
    assert reply_text(messages) == "One of two."
    assert (project / "kept.txt").read_text() == "kept\n"
    assert not (project / "ran.txt").exists()
    by_kind = {call["kind"]: call for call in tool_calls(messages).values()}
    assert by_kind["edit"]["statuses"][-1] == "completed", by_kind
    assert by_kind["execute"]["statuses"][-1] == "failed", by_kind
    assert len(agent_requests(messages, "session/request_permission")) == 2


def test_the_quiet_format_prints_only_the_reply(
    acpx: str, project: Path, model: FakeOpenAI
) -> None:
    user_config()
    model.script += [Reply("Just the answer.")]
    agent = shlex.join(acp_argv(model))

    done = subprocess.run(
        [acpx, "--agent", agent, "--cwd", str(project), "--format", "quiet", "exec", "hi"],
        cwd=project,
        env=acp_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "Just the answer."
    assert model.requests[0]["messages"][-1]["content"] == "hi"


# -- a persistent session: acpx's sessions, set-mode, and session/load --------------------------


def acpx_session(
    acpx: str, project: Path, model: FakeOpenAI, *args: str
) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    """``acpx --agent ... --ttl 1 ARGS`` (a saved session under the test's ~/.acpx; its
    queue owner, and so the agent, stops 1 s after the last prompt)."""
    agent = shlex.join(acp_argv(model))
    options = ["--agent", agent, "--cwd", str(project), "--format", "json", "--ttl", "1"]
    done = subprocess.run(
        [acpx, *options, *args],
        cwd=project,
        env=acp_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, (args, done.stderr[-3000:])
    return done, [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def agent_processes(project: Path) -> list[int]:
    """PIDs of the `tui-agent acp` processes whose folder is ``project``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            folder = os.readlink(entry / "cwd")
        except OSError:
            continue
        if b"tui_agent" in cmdline and b"acp" in cmdline and folder == str(project):
            found.append(int(entry.name))
    return found


def wait_gone(project: Path, seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while agent_processes(project):
        assert time.monotonic() < deadline, "acpx's agent still runs after its ttl"
        time.sleep(0.1)


def test_a_saved_session_goes_on_after_the_agent_stopped_through_session_load(
    acpx: str, project: Path, model: FakeOpenAI
) -> None:
    user_config()
    model.script += [Reply("first answer"), Reply("second answer")]
    acpx_session(acpx, project, model, "sessions", "new")

    _, first = acpx_session(acpx, project, model, "prompt", "one")
    wait_gone(project)  # the next prompt starts the agent again
    _, second = acpx_session(acpx, project, model, "prompt", "two")
    wait_gone(project)

    assert reply_text(first) == "first answer" and reply_text(second) == "second answer"
    (opened,) = [m for m in first if m.get("method") == "session/new"]
    session_id = next(m for m in first if m.get("id") == opened["id"] and "result" in m)["result"][
        "sessionId"
    ]
    (loaded,) = [m for m in second if m.get("method") == "session/load"]
    assert loaded["params"]["sessionId"] == session_id
    assert "result" in next(m for m in second if m.get("id") == loaded["id"] and "method" not in m)
    history = [(m["role"], m["content"]) for m in model.requests[-1]["messages"]]
    assert history[-3:] == [("user", "one"), ("assistant", "first answer"), ("user", "two")]
    assert model.rejected == []


def test_set_mode_plan_through_acpx_keeps_files_unchanged(
    acpx: str, project: Path, model: FakeOpenAI
) -> None:
    user_config(allow_all=True)  # even where everything is allowed, plan mode changes nothing
    model.script += [
        Reply(calls=[Call("write", {"path": "planned.txt", "content": "no\n"})]),
        Reply("Here is the plan instead."),
    ]
    acpx_session(acpx, project, model, "sessions", "new")

    _, moded = acpx_session(acpx, project, model, "set-mode", "plan")
    _, turn = acpx_session(acpx, project, model, "--approve-all", "prompt", "change it")
    wait_gone(project)

    # acpx saves the mode and sends session/set_mode once the agent runs (here: the prompt)
    (asked,) = [m for m in moded + turn if m.get("method") == "session/set_mode"]
    assert asked["params"]["modeId"] == "plan"
    assert "result" in next(m for m in turn if m.get("id") == asked["id"] and "method" not in m)
    modes = [
        u["currentModeId"] for u in updates(turn) if u["sessionUpdate"] == "current_mode_update"
    ]
    assert modes == ["plan"], modes
    assert not (project / "planned.txt").exists(), "plan mode let a write through"
    assert reply_text(turn) == "Here is the plan instead."
    calls = list(tool_calls(turn).values())
    assert all(call["statuses"][-1] == "failed" for call in calls), calls


def test_set_model_through_acpx_changes_the_model_asked(
    acpx: str, project: Path, model: FakeOpenAI
) -> None:
    """acpx's ``set model`` uses the session's advertised ``model`` config option."""
    user_config()
    model.script += [Reply("from the large one")]
    acpx_session(acpx, project, model, "sessions", "new")

    acpx_session(acpx, project, model, "set", "model", "fake-model-large")
    _, turn = acpx_session(acpx, project, model, "prompt", "which model?")
    wait_gone(project)

    assert reply_text(turn) == "from the large one"
    assert model.requests[-1]["model"] == "fake-model-large"
    (asked,) = [m for m in turn if m.get("method") == "session/set_config_option"]
    assert asked["params"]["configId"] == "model"
    assert asked["params"]["value"] == "fake-model-large"


def test_acpx_cancel_stops_a_running_turn_and_the_session_goes_on(
    acpx: str, project: Path, model: FakeOpenAI
) -> None:
    user_config()
    model.script += [Reply("slow words " * 200, delay=0.05), Reply("going on")]
    acpx_session(acpx, project, model, "sessions", "new")
    agent = shlex.join(acp_argv(model))
    options = ["--agent", agent, "--cwd", str(project), "--format", "json", "--ttl", "1"]
    running = subprocess.Popen(
        [acpx, *options, "prompt", "talk"],
        cwd=project,
        env=acp_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not model.requests:
            assert time.monotonic() < deadline, "the prompt never reached the model"
            time.sleep(0.05)
        time.sleep(0.5)  # some words are out

        _, cancelled = acpx_session(acpx, project, model, "cancel")
        out, err = running.communicate(timeout=60)
    finally:
        if running.poll() is None:
            running.kill()
    turn = [json.loads(line) for line in out.splitlines() if line.strip()]
    _, after = acpx_session(acpx, project, model, "prompt", "go on")
    wait_gone(project)

    assert cancelled[-1].get("cancelled") is True, cancelled
    assert running.returncode == 0, err[-3000:]
    assert [m for m in turn if m.get("method") == "session/cancel"], "acpx sent no cancel"
    assert prompt_result(turn).get("result") == {"stopReason": "cancelled"}
    assert len(reply_text(turn)) < len("slow words " * 200)
    assert reply_text(after) == "going on"
    assert model.rejected == [], "the transcript after the cancel is one the API rejects"
    users = [m["content"] for m in model.requests[-1]["messages"] if m["role"] == "user"]
    assert users[0] == "talk" and users[-1] == "go on", users
