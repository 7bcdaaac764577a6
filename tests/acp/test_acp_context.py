"""What an ACP client brings to a session (issue 32): its MCP servers (started like
configured ones), resource links and embedded resources in a prompt (attached like
``@path``), images (left out, and said so), files through the editor."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import acp
from acp import schema
from acp_harness import RecordingClient, acp_session, user_config

from tui_agent.testing import Call, FakeOpenAI, Reply

SERVER = '''\
import os

try:  # mcp 1.x
    from mcp.server.fastmcp import FastMCP
except ModuleNotFoundError:  # mcp 2.x
    from mcp.server.mcpserver import MCPServer as FastMCP

mcp = FastMCP("calc", log_level="WARNING")


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two integers"""
    return a + b


@mcp.tool()
def env(name: str) -> str:
    """An environment variable of the server process"""
    return os.environ.get(name, "<unset>")


mcp.run()
'''


def results(request: dict[str, Any]) -> list[Any]:
    return [json.loads(m["content"]) for m in request["messages"] if m["role"] == "tool"]


async def test_the_clients_mcp_server_is_started(
    project: Path, model: FakeOpenAI, tmp_path: Path
) -> None:
    script = tmp_path / "calc_server.py"
    script.write_text(SERVER)
    server = schema.McpServerStdio(
        name="calc",
        command=sys.executable,
        args=[str(script)],
        env=[schema.EnvVariable(name="FLAVOUR", value="lime")],
    )
    model.script += [
        Reply(calls=[Call("calc_add", {"a": 2, "b": 3}), Call("calc_env", {"name": "FLAVOUR"})]),
        Reply("Five, lime."),
    ]
    async with acp_session(project, model, mcp_servers=[server]) as s:
        answer = await s.prompt("add 2 and 3")
        calls = list(s.client.tool_calls().values())
    assert answer == {"stopReason": "end_turn"}
    offered = [tool["function"]["name"] for tool in model.requests[0]["tools"]]
    assert {"calc_add", "calc_env"} <= set(offered)
    outputs = [result.get("output") for result in results(model.requests[1])]
    assert outputs == ["5", "lime"]
    assert [c["status"] for c in calls] == ["completed", "completed"]
    assert calls[0]["kind"] == "other"


async def test_links_and_embedded_resources_are_attached(project: Path, model: FakeOpenAI) -> None:
    (project / "src").mkdir()
    (project / "src" / "app.py").write_text("print('on disk')\n")
    model.script += [Reply("Seen.")]
    blocks = [
        acp.text_block("compare"),
        acp.resource_link_block("app.py", (project / "src" / "app.py").as_uri()),
        acp.text_block("with the buffer"),
        acp.resource_block(
            acp.embedded_text_resource(
                (project / "src" / "new.py").as_uri(),
                "print('unsaved')\n",
                mime_type="text/x-python",
            )
        ),
        acp.image_block("aGVsbG8=", "image/png"),
    ]
    async with acp_session(project, model) as s:
        answer = await s.prompt(*blocks)
    assert answer == {"stopReason": "end_turn"}
    content = model.requests[0]["messages"][-1]["content"]
    assert content.startswith('compare @"src/app.py" with the buffer')
    assert "Attached file: src/app.py (1 line)\n```py\nprint('on disk')\n```" in content
    assert "Attached file: src/new.py (1 line, from the editor)" in content
    assert "print('unsaved')" in content
    assert "image, left out" in content


async def test_a_link_outside_the_project_stays_text(
    project: Path, model: FakeOpenAI, tmp_path: Path
) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("do not attach")
    model.script += [Reply("Ok.")]
    async with acp_session(project, model) as s:
        await s.prompt(acp.text_block("see"), acp.resource_link_block("s", outside.as_uri()))
    content = model.requests[0]["messages"][-1]["content"]
    assert "do not attach" not in content
    assert outside.as_uri() in content


async def test_reads_and_writes_go_through_the_editor(project: Path, model: FakeOpenAI) -> None:
    user_config()
    (project / "buf.txt").write_text("saved\n")
    model.script += [
        Reply(calls=[Call("read", {"path": "buf.txt"})]),
        Reply(calls=[Call("edit", {"path": "buf.txt", "old": "unsaved", "new": "edited"})]),
        Reply("Done."),
    ]
    client = RecordingClient("allow_once", files={str(project / "buf.txt"): "unsaved\n"})
    async with acp_session(project, model, client, fs=True) as s:
        answer = await s.prompt("read and edit buf.txt")
        calls = list(s.client.tool_calls().values())
        edited = (project / "buf.txt").read_text()  # the editor saved it
        await s.prompt("/undo")  # the checkpoint recorded the write
        undone = (project / "buf.txt").read_text()
    assert (edited, undone) == ("edited\n", "saved\n")
    assert answer == {"stopReason": "end_turn"}
    [read, edit] = results(model.requests[1]) + results(model.requests[2])[1:]
    assert "unsaved" in read["content"]  # the buffer, not the disk
    assert edit["ok"] is True
    assert client.writes == [(str(project / "buf.txt"), "edited\n")]
    assert calls[1]["content"][0]["oldText"] == "unsaved\n"
    assert calls[1]["content"][0]["newText"] == "edited\n"


class Refusing(RecordingClient):
    """An editor whose rules refuse reads and writes (as acpx --deny-all does)."""

    async def read_text_file(self, session_id: str, path: str, **kwargs: Any) -> Any:
        raise acp.RequestError.internal_error({"details": "Permission denied for fs/read"})

    async def write_text_file(self, session_id: str, path: str, content: str, **kw: Any) -> Any:
        raise acp.RequestError.internal_error({"details": "Permission denied for fs/write"})


async def test_what_the_editor_refuses_fails_saying_why(project: Path, model: FakeOpenAI) -> None:
    (project / "kept.txt").write_text("on disk\n")
    model.script += [
        Reply(calls=[Call("read", {"path": "kept.txt"}), Call("read", {"path": "gone.txt"})]),
        Reply(calls=[Call("write", {"path": "kept.txt", "content": "changed"})]),
        Reply("Refused."),
    ]
    async with acp_session(project, model, Refusing(), fs=True) as s:
        await s.prompt("read and write")
        calls = list(s.client.tool_calls().values())
    kept, gone = results(model.requests[1])
    [written] = results(model.requests[2])[2:]
    assert kept["error"] == "the editor would not read kept.txt: Permission denied for fs/read"
    assert gone["error"].startswith("file not found: gone.txt")  # the bundled tool's answer
    assert written["error"] == ("the editor did not write kept.txt: Permission denied for fs/write")
    assert (project / "kept.txt").read_text() == "on disk\n"
    assert [c["status"] for c in calls] == ["failed", "failed", "failed"]
