"""`tui-agent run` with subagents (issue 30): the child's calls are printed on stderr,
indented and named, between its start and end lines; ``--json`` has them as events, the
child's own events wrapped. A real subprocess against the testing kit's server."""

from __future__ import annotations

from pathlib import Path

from test_headless import json_lines, run_cli

from tui_agent.testing import Call, FakeOpenAI, Reply


def script(server: FakeOpenAI) -> None:
    task = {"description": "find the answer", "prompt": "read a.txt", "agent": "explore"}
    server.script += [Reply(calls=[Call("task", task)]), Reply("It says alpha.")]
    server.for_agent(
        "explore", [Reply(calls=[Call("read", {"path": "a.txt"})]), Reply("a.txt: alpha")]
    )


def test_the_childs_calls_are_printed_indented_and_named(project: Path) -> None:
    (project / "a.txt").write_text("alpha\n")
    with FakeOpenAI() as server:
        script(server)
        done = run_cli("run", "what does a.txt say?", cwd=project, server=server)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "It says alpha.\n"
    lines = done.stderr.splitlines()
    started = lines.index("  [explore] started: find the answer")
    read = next(i for i, line in enumerate(lines) if line.startswith('  [explore] → read {"path"'))
    ended = next(i for i, line in enumerate(lines) if line.startswith("  [explore] done ("))
    task_done = next(i for i, line in enumerate(lines) if line.startswith("✔ task ("))
    assert started < read < ended < task_done
    assert any(line.startswith("  [explore] ✔ read (") for line in lines[read:ended])


def test_json_has_the_subagents_events(project: Path) -> None:
    (project / "a.txt").write_text("alpha\n")
    with FakeOpenAI() as server:
        script(server)
        done = run_cli("run", "--json", "what does a.txt say?", cwd=project, server=server)
    assert done.returncode == 0, done.stderr
    events = json_lines(done.stdout)
    kinds = [e["type"] for e in events]
    assert "subagent_started" in kinds and "subagent_finished" in kinds
    [task_call] = [e for e in events if e["type"] == "tool_call" and e["name"] == "task"]
    [read] = [e for e in events if e["type"] == "tool_call" and e["name"] == "read"]
    assert read["parent"] == task_call["call_id"] and read["agent"] == "explore"
    texts = [
        e["event"]["text"]
        for e in events
        if e["type"] == "subagent_event" and e["event"]["type"] == "text"
    ]
    assert "".join(texts) == "a.txt: alpha"
    [finished] = [e for e in events if e["type"] == "subagent_finished"]
    assert finished["reply"] == "a.txt: alpha" and finished["tokens"] == 30
