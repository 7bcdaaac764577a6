"""``tui-agent run`` prints the todo list when it changes (issue 30): a block on stderr
with the tool lines, a ``{"type": "todo"}`` line with ``--json``; after ``--continue``,
``/todo`` shows the list read back (a run prints changes, not the list it starts with).
A real subprocess against the testing kit's server, with the default permissions (the
tool is not asked about: a headless run without --yes would refuse a call that asked)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tui_agent.testing import Call, FakeOpenAI, Reply

PLAN = [
    {"content": "Read the parser", "status": "completed"},
    {"content": "Fix the off-by-one", "status": "in_progress", "activeForm": "Fixing it"},
    {"content": "Run the tests", "status": "pending"},
]
DONE = [{**item, "status": "completed"} for item in PLAN]


def run_cli(*args: str, cwd: Path, server: FakeOpenAI) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "tui_agent", *args]
    argv += ["--base-url", server.base_url, "--model", "fake-model"]
    return subprocess.run(
        argv,
        cwd=cwd,
        env=dict(os.environ),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
    )


@pytest.mark.real_permissions
def test_run_prints_the_list_each_time_it_changes(project: Path) -> None:
    script = [
        Reply(calls=[Call("todo", {"todos": PLAN})]),
        Reply(calls=[Call("TodoWrite", {"todos": DONE})]),
        Reply("Fixed."),
    ]
    with FakeOpenAI(script) as server:
        done = run_cli("run", "fix the parser", cwd=project, server=server)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Fixed."  # the list is progress, not the reply
    assert "Permission denied" not in done.stderr
    lines = done.stderr.splitlines()
    first = lines.index("Todo 1/3 · ▶ Fixing it")
    assert lines[first + 1 : first + 4] == [
        "  ☑ Read the parser",
        "  ◐ Fix the off-by-one",
        "  ☐ Run the tests",
    ]
    second = lines.index("Todo 3/3 · all done")
    assert second > first and lines[second + 2] == "  ☑ Fix the off-by-one"


@pytest.mark.real_permissions
def test_json_has_a_todo_line_and_continue_reads_the_list_back(project: Path) -> None:
    script = [Reply(calls=[Call("todo", {"todos": PLAN})]), Reply("Planned.")]
    with FakeOpenAI(script) as server:
        done = run_cli("run", "--json", "plan the fix", cwd=project, server=server)
        assert done.returncode == 0, done.stderr
        events = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
        types = [event["type"] for event in events]
        [todo] = [event for event in events if event["type"] == "todo"]
        assert todo == {"type": "todo", "todos": PLAN, "reason": "tool"}
        assert types.index("tool_call") < types.index("todo") < types.index("tool_result")

        again = run_cli("run", "--continue", "/todo", cwd=project, server=server)
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines() == [  # read back from the journal
        "Todo 1/3 · ▶ Fixing it",
        "☑ Read the parser",
        "◐ Fix the off-by-one",
        "☐ Run the tests",
    ]
