"""`tui-agent run` as a real subprocess against the testing kit's server (SPEC §5, §8; issue 3)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import needs_bwrap, write

from tui_agent.core.util import paths
from tui_agent.testing import Call, FakeOpenAI, Reply

PLUGIN = """\
import tui_agent


@tui_agent.setup("echo")
def echo(session):
    session.toolbox.add(
        "echo",
        description="Echo the text back",
        params={"text": {"type": "string", "description": "What to echo"}},
        required=["text"],
        handler=lambda args: {"output": "echoed " + args["text"]},
    )
"""


def run_cli(
    *args: str, cwd: Path, server: FakeOpenAI | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "tui_agent", *args]
    if server is not None:
        argv += ["--base-url", server.base_url]
        if "--model" not in args:
            argv += ["--model", "fake-model"]
    return subprocess.run(
        argv,
        cwd=cwd,
        env=dict(os.environ),
        input=stdin,
        stdin=subprocess.DEVNULL if stdin is None else None,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        timeout=60,
    )


def tool_results(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [json.loads(m["content"]) for m in request["messages"] if m["role"] == "tool"]


def json_lines(stdout: str) -> list[dict[str, Any]]:
    events = [json.loads(line) for line in stdout.splitlines() if line.strip()]
    assert all(isinstance(event, dict) and "type" in event for event in events), events
    return events


def user_config(text: str) -> Path:
    return write(paths.user_config_dir() / "config.toml", text)


@pytest.fixture
def plugin_home(isolated_home: Path) -> Path:
    """An `echo` tool from ~/.agents/plugins (global: loads without --trust; SPEC §6 asks
    before running it, so headless runs that need it pass --yes)."""
    write(isolated_home / ".agents" / "plugins" / "echo.py", PLUGIN)
    return isolated_home


@pytest.fixture(scope="module")
def shared_server() -> Any:
    with FakeOpenAI() as fake:  # one server per module: stopping one takes ~0.5 s
        yield fake


@pytest.fixture
def server(shared_server: FakeOpenAI) -> FakeOpenAI:
    """The module's server with an empty script and no recorded requests."""
    shared_server.script.clear()
    shared_server.requests.clear()
    shared_server.headers.clear()
    return shared_server


# -- output --------------------------------------------------------------------------------


def test_reply_on_stdout_tool_activity_on_stderr(
    project: Path, plugin_home: Path, server: FakeOpenAI
) -> None:
    server.script += [Reply(calls=[Call("echo", {"text": "marmalade"})]), Reply("done")]

    done = run_cli("run", "--yes", "echo marmalade", cwd=project, server=server)

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "done"
    assert "echo" in done.stderr
    assert "marmalade" in done.stderr
    assert "marmalade" not in done.stdout
    assert "Traceback" not in done.stderr
    assert len(server.requests) == 2
    first, second = server.requests
    assert first["model"] == "fake-model"
    assert first["messages"][-1] == {"role": "user", "content": "echo marmalade"}
    assert "echo" in [tool["function"]["name"] for tool in first["tools"]]
    assert tool_results(second) == [{"output": "echoed marmalade", "ok": True}]


def test_json_prints_one_event_per_line(
    project: Path, plugin_home: Path, server: FakeOpenAI
) -> None:
    server.script += [Reply(calls=[Call("echo", {"text": "jam"})]), Reply("all done")]

    done = run_cli("run", "--json", "--yes", "echo jam", cwd=project, server=server)

    assert done.returncode == 0, done.stderr
    events = json_lines(done.stdout)
    types = [event["type"] for event in events]
    assert types[0] == "turn_started"
    assert types[-1] == "done"
    for wanted in ("turn_started", "text", "tool_call", "tool_result", "usage", "done"):
        assert wanted in types, (wanted, types)
    assert types.index("tool_call") < types.index("tool_result") < types.index("text")
    assert events[0]["prompt"] == "echo jam"
    call = events[types.index("tool_call")]
    result = events[types.index("tool_result")]
    assert call["name"] == result["name"] == "echo"
    assert json.loads(call["arguments"]) == {"text": "jam"}
    assert result["result"]["ok"] is True
    assert result["result"]["output"] == "echoed jam"
    text = "".join(event["text"] for event in events if event["type"] == "text")
    assert text == "all done"
    assert not events[-1].get("error")


def test_piped_stdin_is_appended_to_the_prompt(project: Path, server: FakeOpenAI) -> None:
    server.script.append(Reply("summarized"))

    done = run_cli(
        "run", "summarize this", cwd=project, server=server, stdin="line one\nline two\n"
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "summarized"
    content = server.requests[0]["messages"][-1]["content"]
    assert content.startswith("summarize this")
    assert "line one\nline two" in content
    assert content.index("summarize this") < content.index("line one")


def test_piped_stdin_alone_is_the_prompt(project: Path, server: FakeOpenAI) -> None:
    server.script.append(Reply("fine"))

    done = run_cli("run", cwd=project, server=server, stdin="only from stdin\n")

    assert done.returncode == 0, done.stderr
    assert "only from stdin" in server.requests[0]["messages"][-1]["content"]


@pytest.mark.parametrize("where", ["before", "after"], ids=["flags-before-run", "flags-after-run"])
def test_flags_before_or_after_run(project: Path, server: FakeOpenAI, where: str) -> None:
    server.script.append(Reply("ok"))
    flags = ["--base-url", server.base_url, "--model", "fake-model-large", "--yes"]
    argv = [*flags, "run", "hi"] if where == "before" else ["run", "hi", *flags]

    done = run_cli(*argv, cwd=project)

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
    assert len(server.requests) == 1
    assert server.requests[0]["model"] == "fake-model-large"


@pytest.mark.real_permissions
@pytest.mark.parametrize("yes", [False, True], ids=["without-yes", "with-yes"])
def test_headless_denies_what_asks_unless_yes(
    project: Path, plugin_home: Path, server: FakeOpenAI, yes: bool
) -> None:
    """SPEC §6: headless, `ask` is denied unless --yes; the model hears why, the turn goes on."""
    user_config("# no [permission] table: the defaults apply (echo: ask)\n")
    server.script += [Reply(calls=[Call("echo", {"text": "secret plans"})]), Reply("understood")]

    done = run_cli("run", *(["--yes"] if yes else []), "echo it", cwd=project, server=server)

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "understood"
    (result,) = tool_results(server.requests[1])
    if yes:
        assert result == {"output": "echoed secret plans", "ok": True}
    else:
        assert result["ok"] is False
        assert "denied" in result["error"].lower()
        assert "echoed" not in json.dumps(result)  # the handler never ran


@needs_bwrap
@pytest.mark.real_permissions
def test_headless_runs_sandboxed_commands_and_denies_the_escape_hatch(
    project: Path, server: FakeOpenAI, tmp_path: Path
) -> None:
    """The sandbox on (the default): the model's command runs without --yes; the same
    command asked to run outside it is an "ask", so denied headless."""
    user_config("# defaults: execute asks, the sandbox is on\n")
    outside = tmp_path / "home" / "out.txt"
    server.script += [
        Reply(calls=[Call("execute", {"command": "echo made > made.txt"})]),
        Reply(calls=[Call("execute", {"command": f"echo x > {outside}", "sandbox": False})]),
        Reply("done"),
    ]

    done = run_cli("run", "go", cwd=project, server=server)

    assert done.returncode == 0, done.stderr
    assert (project / "made.txt").read_text() == "made\n"
    made, hatch = tool_results(server.requests[-1])
    assert made["exit_status"] == 0
    assert hatch["ok"] is False and "denied" in hatch["error"].lower()
    assert not outside.exists()


def test_stub_provider_offline(project: Path) -> None:
    done = run_cli("run", "hello offline", cwd=project)

    assert done.returncode == 0, done.stderr
    assert "Stub reply to: hello offline" in done.stdout
    assert "stub" in done.stderr.lower()
    assert "OPENAI_API_KEY" in done.stderr  # how to configure a real model
    assert "Traceback" not in done.stderr


# -- exit codes ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "model", "wanted"),
    [
        (Reply(status=401, error="bad key"), "fake-model", "authentication failed"),
        (Reply(status=403, error="forbidden"), "fake-model", "authentication failed"),
        (Reply(status=404, error="no such model"), "missing-model-xyz", "missing-model-xyz"),
    ],
    ids=["401", "403", "404"],
)
def test_api_failures_exit_1_with_a_clear_message(
    project: Path, server: FakeOpenAI, reply: Reply, model: str, wanted: str
) -> None:
    server.script += [reply, Reply("should never be asked for")]

    done = run_cli("run", "hi", "--model", model, cwd=project, server=server)

    assert done.returncode == 1, (done.stdout, done.stderr)
    assert wanted in done.stderr
    assert "Traceback" not in done.stderr
    assert len(server.requests) == 1  # not retried


@pytest.mark.parametrize(
    "args",
    [
        ["run"],
        ["run", "   "],
        ["run", "hi", "--resume", "nosuchid"],
        ["run", "hi", "--no-such-flag"],
    ],
    ids=["no-prompt", "blank-prompt", "resume-unknown", "unknown-flag"],
)
def test_usage_errors_exit_2(project: Path, server: FakeOpenAI, args: list[str]) -> None:
    server.script.append(Reply("should never be asked for"))

    done = run_cli(*args, cwd=project, server=server)

    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.strip()
    assert "Traceback" not in done.stderr
    assert server.requests == []


# -- sessions ------------------------------------------------------------------------------


def test_continue_resumes_the_last_session_of_this_folder(
    tmp_path: Path, project: Path, server: FakeOpenAI
) -> None:
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / ".git").mkdir(parents=True)
    server.script += [Reply("first answer"), Reply("other answer"), Reply("second answer")]

    first = run_cli("run", "first question", cwd=project, server=server)
    other = run_cli("run", "other question", cwd=elsewhere, server=server)
    second = run_cli("--continue", "run", "second question", cwd=project, server=server)

    for done in (first, other, second):
        assert done.returncode == 0, done.stderr
    assert second.stdout.strip() == "second answer"
    sent = [(m["role"], m["content"]) for m in server.requests[2]["messages"][1:]]
    assert sent == [
        ("user", "first question"),
        ("assistant", "first answer"),
        ("user", "second question"),
    ]
    sessions = sorted((paths.user_data_dir() / "sessions").glob("*.jsonl"))
    assert len(sessions) == 2  # the continued run appended to the first run's journal


def test_resume_by_id(project: Path, server: FakeOpenAI) -> None:
    server.script += [Reply("remembered"), Reply("still remembered")]
    first = run_cli("run", "remember 42", cwd=project, server=server)
    assert first.returncode == 0, first.stderr
    (journal,) = (paths.user_data_dir() / "sessions").glob("*.jsonl")

    second = run_cli("run", "what number?", "--resume", journal.stem, cwd=project, server=server)

    assert second.returncode == 0, second.stderr
    contents = [m["content"] for m in server.requests[1]["messages"][1:]]
    assert contents == ["remember 42", "remembered", "what number?"]


# -- retries -------------------------------------------------------------------------------


def test_5xx_is_retried_then_succeeds(project: Path, server: FakeOpenAI) -> None:
    user_config("retry_base_delay = 0.01\n")
    server.script += [Reply(status=500), Reply(status=503), Reply("ok")]

    done = run_cli("run", "hi", cwd=project, server=server)

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
    assert len(server.requests) == 3
    assert all(r["messages"] == server.requests[0]["messages"] for r in server.requests)


def test_429_honours_retry_after(project: Path, server: FakeOpenAI) -> None:
    # no retry_base_delay: the default backoff is about a second, Retry-After says 0
    server.script += [Reply(status=429, headers={"Retry-After": "0"}), Reply("ok")]

    done = run_cli("run", "--json", "hi", cwd=project, server=server)

    assert done.returncode == 0, done.stderr
    assert len(server.requests) == 2
    events = json_lines(done.stdout)
    retries = [event for event in events if event["type"] == "retrying"]
    assert len(retries) == 1
    assert retries[0]["delay"] < 0.5
    assert "".join(e["text"] for e in events if e["type"] == "text") == "ok"


def test_retries_exhausted_exit_1(project: Path, server: FakeOpenAI) -> None:
    user_config("retry_base_delay = 0.01\nretry_attempts = 2\n")
    server.script += [Reply(status=500), Reply(status=500), Reply(status=500), Reply("late")]

    done = run_cli("run", "hi", cwd=project, server=server)

    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "gave up after 2 attempts" in done.stderr
    assert "500" in done.stderr
    assert "Traceback" not in done.stderr
    assert len(server.requests) == 2


def test_replies_and_tool_lines_never_run_together(project: Path) -> None:
    """Each reply of a turn is its own paragraph on stdout, and a tool line on stderr starts
    on its own line even when both go to one terminal (here: one pipe for both)."""
    (project / "README.md").write_text("hi\n")
    argv = [sys.executable, "-m", "tui_agent", "run", "count README.md", "--provider", "stub"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    both = subprocess.run(
        argv, cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    lines = both.stdout.splitlines()
    assert "Stub reply to: count README.md" in lines
    assert [line for line in lines if "→" in line] == ["→ list {}"]
    alone = subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True)
    assert alone.returncode == 0
    assert alone.stdout.startswith("Stub reply to: count README.md\n\nThe `list` tool finished")
    assert alone.stdout.endswith("--base-url`.\n")
