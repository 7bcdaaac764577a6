"""Issue 8: MCP servers as tools (plugins/mcp.py), against real servers written with the
``mcp`` package's FastMCP (1.x) or MCPServer (2.x): over stdio (a script run with this
Python) and over streamable HTTP on 127.0.0.1 (a subprocess on a free port). The suite
runs unchanged under both majors of ``mcp`` (issue 13)."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, write

import tui_agent
from tui_agent import create_session
from tui_agent.core.util.paths import user_config_dir
from tui_agent.paths import user_cache_dir
from tui_agent.testing import Call, FakeOpenAI, Person, Reply

SERVER = '''\
"""A FastMCP server for the tests; argv[1], when given, is a file to write the pid to."""
import os
import sys

from mcp.types import ToolAnnotations
from pydantic import BaseModel

try:  # mcp 1.x
    from mcp.server.fastmcp import FastMCP
    from mcp.server.fastmcp.exceptions import ToolError
except ModuleNotFoundError:  # mcp 2.x renamed it
    from mcp.server.mcpserver import MCPServer as FastMCP
    from mcp.server.mcpserver.exceptions import ToolError

if len(sys.argv) > 1:
    with open(sys.argv[1], "a") as pids:
        pids.write(f"{os.getpid()}\\n")

mcp = FastMCP("demo", log_level="WARNING")


class Point(BaseModel):
    x: int
    y: int


@mcp.tool(annotations=ToolAnnotations.model_validate({"readOnlyHint": True}))
def add(a: int, b: int) -> int:
    """Add two integers"""
    return a + b


@mcp.tool()
def env(name: str) -> str:
    """An environment variable of the server process"""
    return os.environ.get(name, "<unset>")


@mcp.tool()
def norm(point: Point) -> int:
    """Manhattan norm of a point"""
    return abs(point.x) + abs(point.y)


@mcp.tool()
def fail(message: str) -> str:
    """Always fails (2.x shows the client a ToolError's message, not another exception's)"""
    raise ToolError(message)


@mcp.tool()
def big(lines: int) -> str:
    """Many lines of text"""
    return "\\n".join(f"line {i}" for i in range(lines))


@mcp.tool()
def crash() -> str:
    """The server process exits"""
    os._exit(3)


mcp.run()
'''

HTTP_SERVER = """\
import sys

ADDRESS = {"host": "127.0.0.1", "port": int(sys.argv[1])}
try:  # mcp 1.x: the address goes to the constructor
    from mcp.server.fastmcp import Context, FastMCP

    mcp = FastMCP("web", log_level="WARNING", **ADDRESS)
    ADDRESS = {}
except ModuleNotFoundError:  # mcp 2.x: MCPServer, the address goes to run()
    from mcp.server.mcpserver import Context, MCPServer

    mcp = MCPServer("web", log_level="WARNING")


@mcp.tool()
def shout(text: str) -> str:
    \"\"\"The text in capitals\"\"\"
    return text.upper()


@mcp.tool()
def token(ctx: Context) -> str:
    \"\"\"The Authorization header of the request\"\"\"
    return ctx.request_context.request.headers.get("authorization", "<none>")


mcp.run(transport=sys.argv[2] if len(sys.argv) > 2 else "streamable-http", **ADDRESS)
"""

NOISY_SERVER = '''\
"""A stdio server that prints to stdout what is not JSON-RPC: a banner (then it works), or,
with argv[1] == "junk", a line of text instead of every answer."""
import json
import sys

JUNK = len(sys.argv) > 1 and sys.argv[1] == "junk"
print("Server listening on stdio, ready!", flush=True)
for line in sys.stdin:
    message = json.loads(line)
    if message.get("id") is None:
        continue
    if JUNK:
        print(f"handling {message['method']}...", flush=True)
        continue
    if message["method"] == "initialize":
        result = {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "noisy", "version": "1"},
        }
    elif message["method"] == "tools/list":
        result = {"tools": [{"name": "hello", "inputSchema": {"type": "object"}}]}
    else:
        result = {"content": [{"type": "text", "text": "hello"}]}
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
'''

RAW_SERVER = '''\
"""An MCP server written against the protocol itself (JSON-RPC lines on stdin/stdout), no
``mcp`` package: its tool list comes in pages; argv[1] picks a failure."""
import json
import sys

MODE = sys.argv[1] if len(sys.argv) > 1 else "ok"
SCHEMA = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}
TOOLS = [{"name": f"t{i}", "description": f"tool {i}", "inputSchema": SCHEMA} for i in range(5)]
PAGE = 2
PNG = "iVBORw0KGgo="


def answer(id_, result=None, error=None):
    message = {"jsonrpc": "2.0", "id": id_}
    message.update({"error": error} if error else {"result": result})
    print(json.dumps(message), flush=True)


def call(name, args):
    if name == "t0":
        return {
            "content": [
                {"type": "text", "text": f"x={args['x']}"},
                {"type": "image", "data": PNG, "mimeType": "image/png"},
                {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "inside"}},
                {"type": "resource_link", "uri": "file:///b.txt", "name": "b"},
            ],
            "structuredContent": {"x": args["x"]},
        }
    if name == "t1":  # what the spec asks: the structure, and its JSON as text
        value = {"x": args["x"], "square": args["x"] ** 2}
        text = {"type": "text", "text": json.dumps(value)}
        return {"content": [text], "structuredContent": value}
    if name == "t2":  # the structure alone
        return {"content": [], "structuredContent": {"x": args["x"]}}
    return {"content": [{"type": "text", "text": f"{name} refuses"}], "isError": True}


for line in sys.stdin:
    message = json.loads(line)
    id_, method = message.get("id"), message.get("method")
    params = message.get("params") or {}
    if id_ is None:
        continue  # a notification
    if method == "initialize":
        if MODE == "init-error":
            answer(id_, error={"code": -32603, "message": "this server is not configured"})
            continue
        answer(id_, {
            "protocolVersion": params["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "raw", "version": "0.1"},
        })
    elif method == "tools/list":
        if MODE == "list-error":
            answer(id_, error={"code": -32603, "message": "no tools today"})
            continue
        start = int(params.get("cursor") or 0)
        page = {"tools": TOOLS[start : start + PAGE]}
        if start + PAGE < len(TOOLS):
            page["nextCursor"] = str(start + PAGE)
        answer(id_, page)
    elif method == "tools/call":
        answer(id_, call(params["name"], params.get("arguments") or {}))
    elif method == "ping":
        answer(id_, {})
    else:
        answer(id_, error={"code": -32601, "message": f"unknown method {method}"})
'''

SILENT = "import sys\nsys.stdin.read()\n"  # starts, never answers, leaves when stdin closes
BROKEN = "import sys\nprint('no config found, giving up', file=sys.stderr)\nsys.exit(2)\n"
DEMO_TOOLS = ["add", "env", "norm", "fail", "big", "crash"]


# -- helpers ------------------------------------------------------------------------------


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return (
            "{ " + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + " }"
        )
    return json.dumps(str(value))


def configure(servers: dict[str, dict[str, Any]], *, allow_all: bool = True) -> None:
    """The user config: ``[mcp.servers.NAME]`` tables (plus the allow-all rule)."""
    lines = ["[permission]", '"*" = "allow"', ""] if allow_all else []
    for name, table in servers.items():
        lines.append(f"[mcp.servers.{name}]")
        lines += [f"{key} = {toml_value(value)}" for key, value in table.items()]
        lines.append("")
    write(user_config_dir() / "config.toml", "\n".join(lines))


def stdio(script: Path, *args: str, **extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(script), *args], **extra}


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def pids(path: Path) -> list[int]:
    return [int(line) for line in path.read_text().split()] if path.exists() else []


async def gone(pid: int, within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


def tool_messages(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [json.loads(m["content"]) for m in request["messages"] if m["role"] == "tool"]


def errors(session: tui_agent.Session) -> list[str]:
    return [note.text for note in session.output.history if note.kind == "error"]


async def mcp_table(session: tui_agent.Session) -> str:
    """Run ``/mcp`` (it waits for servers still starting) and return the table it says."""
    start = len(session.output.history)
    assert await session.commands.run_line("/mcp")
    notes = list(session.output.history)[start:]
    tables = [n.text for n in notes if n.kind == "markdown" and "MCP servers" in n.text]
    assert tables, [n.text for n in notes]
    return tables[-1]


@pytest.fixture
def raw(tmp_path: Path) -> Path:
    return write(tmp_path / "servers" / "raw_server.py", RAW_SERVER)


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python -m tui_agent ARGS`` in ``cwd`` (HOME and XDG_* are the test's)."""
    return subprocess.run(
        [sys.executable, "-m", "tui_agent", *args],
        cwd=cwd,
        env={**os.environ, "COLUMNS": "200", "NO_COLOR": "1"},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def script(tmp_path: Path) -> Path:
    return write(tmp_path / "servers" / "demo_server.py", SERVER)


@pytest.fixture
async def sessions() -> AsyncIterator[Callable[..., tui_agent.Session]]:
    """create_session, with every session closed (servers stopped) at the end."""
    made: list[tui_agent.Session] = []

    def make(directory: Path, **kwargs: Any) -> tui_agent.Session:
        session = create_session(directory, **kwargs)
        made.append(session)
        return session

    yield make
    for session in made:
        await session.close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    """A FastMCP server over streamable HTTP on 127.0.0.1, answering before the test starts."""
    yield from web_server(tmp_path, "streamable-http")


@pytest.fixture
def sse_server(tmp_path: Path) -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    """The same server over the older HTTP+SSE transport (Claude Code's type "sse")."""
    yield from web_server(tmp_path, "sse")


def web_server(tmp_path: Path, transport: str) -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    path = write(tmp_path / "servers" / f"web_server_{transport}.py", HTTP_SERVER)
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(path), str(port), transport],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            assert process.poll() is None, "the HTTP MCP server exited"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the HTTP MCP server never answered"
                time.sleep(0.05)
        yield port, process
    finally:
        process.kill()
        process.wait()


# -- tools, schemas, results --------------------------------------------------------------


async def test_tools_are_listed_with_their_schemas_and_source(
    project: Path, script: Path, sessions: Any
) -> None:
    configure({"demo": stdio(script)})
    session = sessions(project)
    table = await mcp_table(session)
    assert "| demo | running | 6 |" in table
    names = [f"demo_{tool}" for tool in DEMO_TOOLS]
    assert set(names) <= set(session.toolbox.tools)
    add = session.toolbox.tools["demo_add"]
    assert add.source == "mcp:demo"
    assert add.description == "Add two integers"
    assert add.params == {
        "a": {"title": "A", "type": "integer"},
        "b": {"title": "B", "type": "integer"},
    }
    assert add.required == ["a", "b"]
    # the server's readOnlyHint: plan mode offers it; a tool without the hint is not
    assert add.read_only and not session.toolbox.tools["demo_env"].read_only
    # a pydantic model argument: its $ref is inlined, the model sees the whole schema
    point = session.toolbox.tools["demo_norm"].params["point"]
    assert "$ref" not in json.dumps(point)
    assert point["properties"] == {
        "x": {"title": "X", "type": "integer"},
        "y": {"title": "Y", "type": "integer"},
    }
    offered = {d["function"]["name"]: d["function"] for d in session.extensions.offered_tools()}
    assert offered["demo_add"]["parameters"]["required"] == ["a", "b"]
    assert {"read", "execute"} <= set(offered)  # the built-ins are still there
    # validation happens in the toolbox, before the server is asked
    bad = await session.toolbox.run("demo_add", {"a": "one", "b": 2})
    assert bad.error == "value at `/a` is not an integer"
    assert (await session.toolbox.run("demo_norm", {"point": {"x": 3, "y": -4}}))["output"] == "7"


async def test_results_errors_and_truncation(project: Path, script: Path, sessions: Any) -> None:
    configure({"demo": stdio(script)})
    session = sessions(project)
    await mcp_table(session)
    result = await session.toolbox.run("demo_add", {"a": 20, "b": 22})
    # FastMCP's structuredContent {"result": 42} mirrors the text "42": sent once (issue 26)
    assert result.to_dict() == {"output": "42", "ok": True}
    failed = await session.toolbox.run("demo_fail", {"message": "no luck"})
    assert not failed.ok and "no luck" in (failed.error or "")
    long = await session.toolbox.run("demo_big", {"lines": 3000})
    assert long.ok and long["truncated"] is True
    assert long["output"].endswith("line 2999")
    assert "line 999\n" not in long["output"]
    assert "the first 1000 lines" in long["output"].splitlines()[0]
    saved = Path(long["full_output"])
    assert saved.parent == user_cache_dir() / "tool-output"
    assert saved.read_text().splitlines()[0] == "line 0"
    # the structured copy of the same 3,000 lines is neither sent nor saved twice
    assert "structured_content" not in long and "structured_content_file" not in long


async def test_a_paged_tool_list_and_every_kind_of_content(
    project: Path, raw: Path, sessions: Any
) -> None:
    """A server speaking the protocol by hand: the tool list comes in three pages (the
    ``nextCursor`` that 1.x and 2.x of the ``mcp`` package spell differently), and a result
    holds text, an image, an embedded resource, a resource link and structured content."""
    configure({"raw": stdio(raw)})
    session = sessions(project)
    table = await mcp_table(session)
    assert "| raw | running | 5 |" in table and "| raw 0.1 |" in table
    assert {f"raw_t{i}" for i in range(5)} <= set(session.toolbox.tools)
    t4 = session.toolbox.tools["raw_t4"]
    assert (t4.description, t4.params, t4.required) == ("tool 4", {"x": {"type": "integer"}}, ["x"])
    result = await session.toolbox.run("raw_t0", {"x": 3})
    assert result.to_dict() == {
        "output": "x=3\n"
        "[image: image/png, about 9 bytes, not shown]\n"
        "inside\n"
        "[resource file:///b.txt: b]",
        "structured_content": {"x": 3},
        "ok": True,
    }
    refused = await session.toolbox.run("raw_t3", {"x": 1})
    assert refused.to_dict() == {"error": "t3 refuses", "ok": False}


async def test_servers_failing_at_initialize_or_list_tools_are_reported(
    project: Path, raw: Path, sessions: Any
) -> None:
    configure({"init": stdio(raw, "init-error"), "list": stdio(raw, "list-error")})
    session = sessions(project)
    table = await mcp_table(session)
    assert "| init | failed | 0 |" in table and "| list | failed | 0 |" in table
    problems = errors(session)
    assert 'MCP server "init" failed to start: this server is not configured' in problems
    assert 'MCP server "list" failed to start: no tools today' in problems
    assert not any(name.startswith(("init_", "list_")) for name in session.toolbox.tools)


async def test_a_call_round_trip_through_a_turn(project: Path, script: Path, sessions: Any) -> None:
    configure({"srv": stdio(script)})
    with FakeOpenAI([Reply(calls=[Call("srv_add", {"a": 1, "b": 2})]), Reply("done")]) as server:
        session = sessions(project, base_url=server.base_url, model="m")
        assert await session.turn("add 1 and 2") == "done"
    # the turn waited for the server: its tools were offered from the first request
    first = {tool["function"]["name"] for tool in server.requests[0]["tools"]}
    assert "srv_add" in first
    [message] = tool_messages(server.requests[1])
    assert message == {"output": "3", "ok": True}
    assert session.toolbox.stats["srv_add"].calls == 1


def test_headless_run_starts_servers_on_the_turn_and_stops_them_after(
    project: Path, script: Path, tmp_path: Path
) -> None:
    """`tui-agent run` builds the session before any event loop runs: the servers start
    with the turn and are stopped when the run ends."""
    pidfile = tmp_path / "pids"
    configure({"srv": stdio(script, str(pidfile))})
    replies = [Reply(calls=[Call("srv_add", {"a": 2, "b": 5})]), Reply("seven")]
    with FakeOpenAI(replies) as server:
        argv = ["-m", "tui_agent", "--base-url", server.base_url, "--model", "m", "run", "add"]
        done = subprocess.run(
            [sys.executable, *argv],
            cwd=project,
            env=dict(os.environ),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "seven"
    assert "✔ srv_add" in done.stderr
    assert tool_messages(server.requests[1])[0]["output"] == "7"
    [pid] = pids(pidfile)
    assert not alive(pid)


def test_tools_command_lists_mcp_tools_and_stops_the_server(
    project: Path, script: Path, tmp_path: Path
) -> None:
    pidfile = tmp_path / "pids"
    configure({"srv": stdio(script, str(pidfile))})
    done = subprocess.run(
        [sys.executable, "-m", "tui_agent", "tools", "--json"],
        cwd=project,
        env=dict(os.environ),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    names = [d["function"]["name"] for d in json.loads(done.stdout)]
    assert "srv_add" in names and "read" in names
    [pid] = pids(pidfile)
    assert not alive(pid)


# -- config -------------------------------------------------------------------------------


async def test_variables_are_substituted_from_the_environment(
    project: Path, script: Path, sessions: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_TEST_TOKEN", "s3cret")
    monkeypatch.setenv("MCP_TEST_DIR", str(tmp_path))
    monkeypatch.delenv("MCP_TEST_UNSET", raising=False)
    configure(
        {
            "srv": {
                "command": sys.executable,
                "args": [str(script), "${MCP_TEST_DIR}/pids"],
                "env": {"TOKEN": "${MCP_TEST_TOKEN}", "MODE": "${MCP_TEST_UNSET:-plain}"},
            },
            "nokey": stdio(script, env={"TOKEN": "${MCP_TEST_UNSET}"}),
        }
    )
    session = sessions(project)
    table = await mcp_table(session)
    assert (await session.toolbox.run("srv_env", {"name": "TOKEN"}))["output"] == "s3cret"
    assert (await session.toolbox.run("srv_env", {"name": "MODE"}))["output"] == "plain"
    assert len(pids(tmp_path / "pids")) == 1  # ${MCP_TEST_DIR} in args
    # the parent's other variables are not handed to servers
    assert (await session.toolbox.run("srv_env", {"name": "MCP_TEST_TOKEN"}))["output"] == "<unset>"
    assert "| nokey | failed | 0 |" in table
    assert any("nokey" in e and "${MCP_TEST_UNSET} is not set" in e for e in errors(session))
    assert not any(name.startswith("nokey_") for name in session.toolbox.tools)


async def test_streamable_http_server(
    project: Path, sessions: Any, http_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    port, process = http_server
    monkeypatch.setenv("MCP_TEST_PORT", str(port))
    monkeypatch.setenv("MCP_TEST_TOKEN", "t0k3n")
    configure(
        {
            "web": {
                "url": "http://127.0.0.1:${MCP_TEST_PORT}/mcp",
                "headers": {"Authorization": "Bearer ${MCP_TEST_TOKEN}"},
            }
        }
    )
    session = sessions(project)
    table = await mcp_table(session)
    assert f"| web | running | 2 | http http://127.0.0.1:{port}/mcp |" in table
    shout = session.toolbox.tools["web_shout"]
    assert shout.source == "mcp:web"
    assert shout.params == {"text": {"title": "Text", "type": "string"}}
    assert shout.required == ["text"]
    assert (await session.toolbox.run("web_shout", {"text": "hi"}))["output"] == "HI"
    assert (await session.toolbox.run("web_token", {}))["output"] == "Bearer t0k3n"
    # the server goes away: a clear error, and the app goes on
    process.kill()
    process.wait()
    lost = await session.toolbox.run("web_shout", {"text": "hi"})
    assert not lost.ok and 'MCP server "web"' in (lost.error or "")
    assert (await session.toolbox.run("list", {"path": "."})).ok


# -- failures -----------------------------------------------------------------------------


async def test_a_server_crash_mid_session(project: Path, script: Path, sessions: Any) -> None:
    configure({"srv": stdio(script), "other": stdio(script)})
    replies = [
        Reply(calls=[Call("srv_crash", {})]),
        Reply(calls=[Call("srv_add", {"a": 1, "b": 1}), Call("other_add", {"a": 2, "b": 2})]),
        Reply("the other one still works"),
    ]
    with FakeOpenAI(replies) as server:
        session = sessions(project, base_url=server.base_url, model="m")
        assert await session.turn("go") == "the other one still works"
    [crashed] = tool_messages(server.requests[1])
    assert crashed["ok"] is False
    assert 'MCP server "srv" is not running: it stopped unexpectedly' in crashed["error"]
    assert "/mcp restart srv" in crashed["error"]
    after, other = tool_messages(server.requests[2])[1:]
    assert after["ok"] is False and "stopped unexpectedly" in after["error"]
    assert other == {"output": "4", "ok": True}
    assert sum("srv" in e and "stopped unexpectedly" in e for e in errors(session)) == 1
    assert "| srv | crashed | 6 |" in await mcp_table(session)
    # its tools stay listed (and explain themselves); a restart brings them back
    assert "srv_add" in session.toolbox.tools
    assert await session.commands.run_line("/mcp restart srv")
    assert (await session.toolbox.run("srv_add", {"a": 1, "b": 1}))["output"] == "2"


async def test_servers_that_never_start_are_reported_and_the_app_goes_on(
    project: Path, script: Path, sessions: Any, tmp_path: Path
) -> None:
    broken = write(tmp_path / "servers" / "broken.py", BROKEN)
    silent = write(tmp_path / "servers" / "silent.py", SILENT)
    configure(
        {
            "missing": {"command": str(tmp_path / "no-such-program")},
            "broken": stdio(broken),
            "silent": stdio(silent, startup_timeout=1),
            "srv": stdio(script),
        }
    )
    replies = [Reply(calls=[Call("srv_add", {"a": 1, "b": 2})]), Reply("still here")]
    with FakeOpenAI(replies) as server:
        session = sessions(project, base_url=server.base_url, model="m")
        started = time.monotonic()
        assert await session.turn("go") == "still here"
        assert time.monotonic() - started < 10
    assert tool_messages(server.requests[1])[0]["output"] == "3"
    problems = errors(session)
    assert any('MCP server "missing" failed to start: command not found' in e for e in problems), (
        problems
    )
    [broken_note] = [e for e in problems if '"broken"' in e]
    assert "failed to start" in broken_note and "no config found, giving up" in broken_note
    assert any('"silent" failed to start: timed out' in e for e in problems), problems
    table = await mcp_table(session)
    for name in ("missing", "broken", "silent"):
        assert f"| {name} | failed | 0 |" in table
    assert "| srv | running | 6 |" in table
    assert {"read", "execute", "srv_add"} <= set(session.toolbox.tools)


def failing_servers(tmp_path: Path, raw: Path) -> None:
    """One server that works and three that do not: one exits at once (with a line on its
    stderr), one fails at list_tools, one has a variable the environment lacks (said while
    the plugins load, before any listener)."""
    broken = write(tmp_path / "servers" / "broken.py", BROKEN)
    configure(
        {
            "srv": stdio(raw),
            "broken": stdio(broken),
            "listless": stdio(raw, "list-error"),
            "nokey": stdio(raw, env={"TOKEN": "${MCP_TEST_UNSET}"}),
        }
    )


FAILURES = [
    'tui-agent: MCP server "broken" failed to start: the connection closed\n'
    "stderr:\nno config found, giving up",
    'tui-agent: MCP server "listless" failed to start: no tools today',
    'tui-agent: MCP server "nokey" not started: mcp.servers.nokey.env.TOKEN: '
    "${MCP_TEST_UNSET} is not set in the environment",
]


@pytest.mark.parametrize("json_flag", [[], ["--json"]], ids=["table", "json"])
def test_tools_command_reports_failing_servers_on_stderr(
    project: Path, raw: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, json_flag: list[str]
) -> None:
    monkeypatch.delenv("MCP_TEST_UNSET", raising=False)
    failing_servers(tmp_path, raw)
    done = run_cli("tools", *json_flag, cwd=project)
    assert done.returncode == 0, done.stderr
    for failure in FAILURES:
        assert done.stderr.count(failure) == 1, done.stderr
    assert "Traceback" not in done.stderr
    if json_flag:
        names = [d["function"]["name"] for d in json.loads(done.stdout)]
        assert "srv_t0" in names and not any(n.startswith("listless_") for n in names)
    else:
        assert "srv_t4" in done.stdout and "mcp:srv" in done.stdout


def test_run_reports_failing_servers_on_stderr(
    project: Path, raw: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MCP_TEST_UNSET", raising=False)
    failing_servers(tmp_path, raw)
    replies = [Reply(calls=[Call("srv_t0", {"x": 7})]), Reply("still here")]
    with FakeOpenAI(replies) as server:
        done = run_cli("--base-url", server.base_url, "--model", "m", "run", "go", cwd=project)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "still here"
    # said during the turn, when the servers start: the printer's plain text
    for failure in FAILURES[:2]:
        assert done.stderr.count(failure.removeprefix("tui-agent: ")) == 1, done.stderr
    assert done.stderr.count(FAILURES[2]) == 1, done.stderr  # said while loading
    assert "✔ srv_t0" in done.stderr
    offered = {tool["function"]["name"] for tool in server.requests[0]["tools"]}
    assert "srv_t0" in offered and not any(n.startswith("listless_") for n in offered)


async def test_the_app_shows_failing_servers(
    project: Path, raw: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The app loads the plugins on its loop after the first frame (a session made with
    ``load=False``, as ``tui-agent`` does): the servers start then, and each one that
    fails shows in the chat once."""
    from test_app import SIZE, note_texts, wait_for

    from tui_agent.ui.app import TuiAgentApp

    monkeypatch.delenv("MCP_TEST_UNSET", raising=False)
    failing_servers(tmp_path, raw)
    session = create_session(project, load=False)
    app = TuiAgentApp(session)
    wanted = [failure.removeprefix("tui-agent: ") for failure in FAILURES]
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: all(any(w in t for t in note_texts(app)) for w in wanted), 30)
        await wait_for(pilot, lambda: "srv_t0" in session.toolbox.tools, 30)
        await pilot.pause(0.2)
        texts = note_texts(app)
        for failure in wanted:  # after loading, and said by a setup while the app loads
            assert sum(failure in text for text in texts) == 1, texts
    await session.close()


@pytest.mark.real_permissions
async def test_the_permission_hook_asks_for_mcp_tools(
    project: Path, script: Path, sessions: Any
) -> None:
    configure({"srv": stdio(script)}, allow_all=False)
    asked: list[tui_agent.ApprovalRequest] = []

    async def approver(request: tui_agent.ApprovalRequest) -> tui_agent.Decision:
        asked.append(request)
        return tui_agent.Decision("deny")

    replies = [Reply(calls=[Call("srv_add", {"a": 1, "b": 2})]), Reply("ok")]
    with FakeOpenAI(replies) as server:
        session = sessions(project, base_url=server.base_url, model="m")
        session.frontend = Person(decide=approver)
        assert await session.turn("add") == "ok"
    assert [(r.tool, r.args) for r in asked] == [("srv_add", {"a": 1, "b": 2})]
    [denied] = tool_messages(server.requests[1])
    assert denied["ok"] is False and denied["error"] == "User denied permission: srv_add"
    assert session.toolbox.stats["srv_add"].last_result is not None


# -- reload, /mcp, exit -------------------------------------------------------------------


async def test_reload_restarts_servers(
    project: Path, script: Path, sessions: Any, tmp_path: Path
) -> None:
    pidfile = tmp_path / "pids"
    configure({"srv": stdio(script, str(pidfile))})
    session = sessions(project)
    await mcp_table(session)
    [first] = pids(pidfile)
    assert alive(first)
    assert await session.commands.run_line("/reload")
    table = await mcp_table(session)  # waits for the new server and the old one's stop
    assert "| srv | running | 6 |" in table
    first_, second = pids(pidfile)
    assert first_ == first and second != first
    assert await gone(first), "the previous generation's server is still running"
    assert alive(second)
    assert session.toolbox.tools["srv_add"].source == "mcp:srv"
    assert (await session.toolbox.run("srv_add", {"a": 2, "b": 2}))["output"] == "4"
    # the server is taken out of the config: reload stops it and its tools go
    configure({})
    assert await session.commands.run_line("/reload")
    assert not any(name.startswith("srv_") for name in session.toolbox.tools)
    await session.close()
    assert await gone(second)


async def test_mcp_command_lists_servers_states_and_tools(
    project: Path, script: Path, sessions: Any, tmp_path: Path
) -> None:
    configure(
        {
            "srv": stdio(script),
            "off": stdio(script, enabled=False),
            "bad": {"command": str(tmp_path / "nothing-here")},
        }
    )
    session = sessions(project)
    table = await mcp_table(session)
    lines = table.splitlines()
    assert lines[2] == "| Server | State | Tools | Transport | Details |"
    assert lines[4].startswith(f"| srv | running | 6 | stdio {sys.executable} {script} | demo ")
    assert lines[5].startswith("| off | disabled | 0 | stdio ")
    assert lines[6].startswith("| bad | failed | 0 | stdio ")
    assert "command not found" in lines[6]
    assert not any(name.startswith("off_") for name in session.toolbox.tools)
    assert session.commands.completions_for("mcp", "restart s") == ["restart srv"]
    assert "/mcp" in session.commands.names


async def test_session_close_stops_every_server(
    project: Path, script: Path, sessions: Any, tmp_path: Path
) -> None:
    pidfile = tmp_path / "pids"
    configure({"one": stdio(script, str(pidfile)), "two": stdio(script, str(pidfile))})
    session = sessions(project)
    await mcp_table(session)
    started = pids(pidfile)
    assert len(started) == 2 and all(alive(pid) for pid in started)
    await session.close()
    for pid in started:
        assert await gone(pid)
    result = await session.toolbox.run("one_add", {"a": 1, "b": 1})
    assert result.error == 'MCP server "one" was stopped.'


async def test_without_servers_nothing_happens_and_without_the_package_one_note(
    project: Path, script: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    quiet = create_session(project)
    assert "/mcp" not in quiet.commands.names and not errors(quiet)
    monkeypatch.setitem(sys.modules, "mcp", None)  # how Python spells "not installed"
    assert "/mcp" not in create_session(project).commands.names
    configure({"srv": stdio(script)})
    session = create_session(project)
    [note] = errors(session)
    assert "MCP servers are configured (srv)" in note
    assert "pip install 'tui-agent[mcp]'" in note
    assert not any(name.startswith("srv_") for name in session.toolbox.tools)
    await session.close()


# -- issue 26: Claude's names, .mcp.json, results sent once, stdout that is not JSON-RPC ----

POSTHOG_MCP_JSON = FIXTURES / "mcp" / "posthog.mcp.json"
UV_STANDIN = """#!/bin/sh
# stands in for `uv run python SCRIPT ARGS...`: the tests' Python runs SCRIPT
[ "$1" = run ] && [ "$2" = python ] || exit 64
shift 2
exec {python} "$@"
"""


def posthog_project(project: Path, script: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """PostHog's .mcp.json, verbatim, with the demo server where it points and a ``uv``
    stand-in on PATH (see tests/fixtures/mcp/SOURCES.md)."""
    (project / ".mcp.json").write_bytes(POSTHOG_MCP_JSON.read_bytes())
    write(project / "tools" / "phrocs" / "mcp_server.py", script.read_text())
    uv = write(project.parent / "bin" / "uv", UV_STANDIN.format(python=sys.executable))
    uv.chmod(0o755)
    monkeypatch.setenv("PATH", f"{uv.parent}{os.pathsep}{os.environ['PATH']}")


async def test_a_real_mcp_json_runs_in_a_trusted_project(
    project: Path, script: Path, sessions: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude Code's project servers: the file's server starts in the project's folder
    (its relative script path works), its tools come with Claude's names as aliases, and
    the model's call by either name reaches it."""
    posthog_project(project, script, monkeypatch)
    replies = [
        Reply(
            calls=[Call("phrocs_add", {"a": 2, "b": 3}), Call("mcp__phrocs__add", {"a": 1, "b": 1})]
        ),
        Reply("done"),
    ]
    with FakeOpenAI(replies) as server:
        session = sessions(project, base_url=server.base_url, model="m", trust=True)
        assert await session.turn("add") == "done"
    offered = {tool["function"]["name"] for tool in server.requests[0]["tools"]}
    assert "phrocs_add" in offered and "mcp__phrocs__add" not in offered  # aliases not sent
    assert tool_messages(server.requests[1]) == [
        {"output": "5", "ok": True},
        {"output": "2", "ok": True},
    ]
    add = session.toolbox.tools["phrocs_add"]
    assert add.source == "mcp:phrocs" and add.aliases == ["mcp__phrocs__add"]
    assert session.toolbox.resolve("mcp__phrocs__norm") == "phrocs_norm"
    table = await mcp_table(session)
    assert "| phrocs | running | 6 | stdio uv run python tools/phrocs/mcp_server.py |" in table
    assert f"(from {project / '.mcp.json'}) |" in table  # /mcp says where it comes from
    # the server runs in the project's folder, and knows it as Claude Code tells it
    here = await session.toolbox.run("mcp__phrocs__env", {"name": "CLAUDE_PROJECT_DIR"})
    assert here["output"] == str(project)
    assert not errors(session)


async def test_an_untrusted_mcp_json_is_project_code_skipped_and_counted(
    project: Path, script: Path, sessions: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    posthog_project(project, script, monkeypatch)
    session = sessions(project)
    assert session.workspace.project_code == [project / ".mcp.json"]
    assert session.workspace.needs_trust  # the app asks the trust question for it
    assert session.extensions.skipped == [project / ".mcp.json"]
    assert "/mcp" not in session.commands.names
    assert not any(name.startswith("phrocs_") for name in session.toolbox.tools)
    done = run_cli("tools", cwd=project)
    assert done.returncode == 0, done.stderr
    assert "skipped untrusted project code" in done.stderr and ".mcp.json" in done.stderr
    assert "phrocs" not in done.stdout
    session.workspace.trust(remember=False)  # trusting loads it
    session.reload()
    await session.extensions.settled()
    assert "| phrocs | running | 6 |" in await mcp_table(session)


async def test_mcp_json_types_variables_and_mistakes(
    project: Path,
    script: Path,
    sessions: Any,
    http_server: Any,
    sse_server: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Claude Code's documented format: ``type`` stdio, http or sse; ``${VAR}`` and
    ``${VAR:-default}`` in command, args, env, url and headers; a missing variable without
    a default keeps that server from starting, saying which."""
    monkeypatch.setenv("MCP_TEST_PORT", str(http_server[0]))
    monkeypatch.setenv("MCP_TEST_TOKEN", "t0k3n")
    monkeypatch.delenv("MCP_TEST_UNSET", raising=False)
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    write(project / "srv" / "server.py", script.read_text())
    mcp_json = {
        "mcpServers": {
            "local": {
                "type": "stdio",
                "command": "${MCP_TEST_PYTHON:-" + sys.executable + "}",
                "args": ["${CLAUDE_PROJECT_DIR:-.}/srv/server.py"],
                "env": {"MODE": "${MCP_TEST_UNSET:-plain}", "TOKEN": "${MCP_TEST_TOKEN}"},
            },
            "web": {
                "type": "http",
                "url": "http://127.0.0.1:${MCP_TEST_PORT}/mcp",
                "headers": {"Authorization": "Bearer ${MCP_TEST_TOKEN}"},
            },
            "events": {"type": "sse", "url": f"http://127.0.0.1:{sse_server[0]}/sse"},
            "nokey": {"command": "node", "env": {"KEY": "${MCP_TEST_UNSET}"}},
            "odd": {"type": "websocket", "url": "ws://127.0.0.1:1/"},
        }
    }
    write(project / ".mcp.json", json.dumps(mcp_json))
    session = sessions(project, trust=True)
    table = await mcp_table(session)
    assert "| local | running | 6 |" in table
    assert (await session.toolbox.run("mcp__local__env", {"name": "MODE"}))["output"] == "plain"
    assert (await session.toolbox.run("local_env", {"name": "TOKEN"}))["output"] == "t0k3n"
    assert (await session.toolbox.run("mcp__web__token", {}))["output"] == "Bearer t0k3n"
    assert f"| events | running | 2 | sse http://127.0.0.1:{sse_server[0]}/sse |" in table
    assert (await session.toolbox.run("mcp__events__shout", {"text": "hi"}))["output"] == "HI"
    problems = errors(session)
    assert any(
        '"nokey" not started' in e and "mcpServers.nokey.env.KEY: ${MCP_TEST_UNSET} is not set" in e
        for e in problems
    ), problems
    assert any(
        '"odd" not started' in e and "type must be one of stdio, http, sse" in e for e in problems
    )
    assert "| nokey | failed | 0 |" in table and "| odd | failed | 0 |" in table


async def test_a_config_server_wins_over_the_mcp_json_one_of_the_same_name(
    project: Path, script: Path, sessions: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    posthog_project(project, script, monkeypatch)
    configure({"phrocs": stdio(script, enabled=False)})
    session = sessions(project, trust=True)
    assert "| phrocs | disabled | 0 |" in await mcp_table(session)
    notes = [n.text for n in session.output.history]
    assert any('MCP server "phrocs" of' in n and "is not used" in n for n in notes), notes


@pytest.mark.real_permissions
async def test_permission_rules_by_claude_names_and_patterns(
    project: Path, script: Path, sessions: Any
) -> None:
    """A rule keyed by Claude's name (``mcp__srv__add``), by a pattern of names
    (``mcp__srv__*``) or by Claude's server rule (``mcp__other``) applies to the tool;
    its own name still counts; several applying: the strictest."""
    configure({"srv": stdio(script), "other": stdio(script)}, allow_all=False)
    permission = (
        "[permission]\n"
        '"mcp__srv__*" = "allow"\n'
        'mcp__srv__crash = "deny"\n'
        'srv_fail = "deny"\n'
        'mcp__srv__big = { "*" = "allow" }\n'
        'mcp__other = "deny"\n'
    )
    path = user_config_dir() / "config.toml"
    path.write_text(permission + "\n" + path.read_text())
    asked: list[str] = []

    async def approver(request: tui_agent.ApprovalRequest) -> tui_agent.Decision:
        asked.append(request.tool)
        return tui_agent.Decision("deny")

    replies = [
        Reply(calls=[Call("srv_add", {"a": 1, "b": 2}), Call("mcp__srv__env", {"name": "X"})]),
        Reply("ok"),
    ]
    with FakeOpenAI(replies) as server:
        session = sessions(project, base_url=server.base_url, model="m")
        session.frontend = Person(decide=approver)
        assert await session.turn("go") == "ok"
    assert asked == []  # allowed by the pattern, by either name
    assert [m["ok"] for m in tool_messages(server.requests[1])] == [True, True]
    offered = {tool["function"]["name"] for tool in server.requests[0]["tools"]}
    assert {"srv_add", "srv_env", "srv_big", "read"} <= offered
    # denied outright (by Claude's name, by the tool's own, by the server rule): not offered
    assert not offered & {"srv_crash", "srv_fail"}
    assert not any(name.startswith("other_") for name in offered)
    denied = await session.toolbox.run("srv_crash", {})
    assert denied.error == "Permission denied: srv_crash"
    assert (await session.toolbox.run("other_add", {"a": 1, "b": 1})).error == (
        "Permission denied: other_add"
    )
    await session.commands.run_line("/permissions")
    shown = session.output.history[-1].text
    assert '| srv_add | "allow" (permission."mcp__srv__*") |' in shown
    assert '| other_add | "deny" (permission.mcp__other) |' in shown


async def test_structured_content_reaches_the_model_once(
    project: Path, raw: Path, sessions: Any
) -> None:
    """The MCP spec asks a tool returning ``structuredContent`` to send its JSON as text
    too: that pair is one result, sent once (the text). A structure alone is the output; a
    structure beside text that says something else is kept beside it."""
    configure({"raw": stdio(raw)})
    replies = [
        Reply(calls=[Call("raw_t1", {"x": 3}), Call("raw_t2", {"x": 4}), Call("raw_t0", {"x": 5})]),
        Reply("done"),
    ]
    with FakeOpenAI(replies) as server:
        session = sessions(project, base_url=server.base_url, model="m")
        assert await session.turn("go") == "done"
    mirrored, alone, different = tool_messages(server.requests[1])
    assert mirrored == {"output": '{"x": 3, "square": 9}', "ok": True}
    assert alone == {"output": '{"x": 4}', "ok": True}
    assert different["structured_content"] == {"x": 5}
    assert different["output"].startswith("x=5\n")


async def test_stdout_that_is_not_json_rpc_is_said_with_the_line(
    project: Path, sessions: Any, tmp_path: Path
) -> None:
    noisy = write(tmp_path / "servers" / "noisy.py", NOISY_SERVER)
    configure({"junk": stdio(noisy, "junk", startup_timeout=2), "banner": stdio(noisy)})
    session = sessions(project)
    table = await mcp_table(session)
    problems = errors(session)
    [failure] = [e for e in problems if '"junk"' in e]
    assert failure.startswith(
        'MCP server "junk" failed to start: it wrote a line that is not JSON-RPC on stdout: '
        '"handling initialize..."'
    ), failure
    assert "timed out" not in failure and "only JSON-RPC messages on stdout" in failure
    # a banner before the protocol: the server works, the line is said once (not an error)
    assert "| banner | running | 1 |" in table
    assert (await session.toolbox.run("mcp__banner__hello", {}))["output"] == "hello"
    notes = [n.text for n in session.output.history if '"banner"' in n.text]
    assert notes == [
        'MCP server "banner" wrote a line that is not JSON-RPC on stdout (skipped): '
        '"Server listening on stdio, ready!"; MCP stdio servers write only JSON-RPC messages '
        "on stdout (their logs belong on stderr)"
    ]


def test_stdout_that_is_not_json_rpc_leaks_no_traceback(project: Path, tmp_path: Path) -> None:
    noisy = write(tmp_path / "servers" / "noisy.py", NOISY_SERVER)
    configure({"junk": stdio(noisy, "junk", startup_timeout=2)})
    done = run_cli("tools", cwd=project)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "Failed to parse" not in done.stderr
    assert (
        'tui-agent: MCP server "junk" failed to start: it wrote a line that is not JSON-RPC '
        'on stdout: "handling initialize..."'
    ) in done.stderr


async def test_mcp_json_at_the_top_of_the_repository_serves_its_subfolders(
    project: Path, script: Path, sessions: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As Claude Code finds a project's ``.mcp.json`` from a folder inside it: the folder
    holding it is the project (its trust, its folder for the server)."""
    posthog_project(project, script, monkeypatch)
    inside = project / "src" / "app"
    inside.mkdir(parents=True)
    session = sessions(inside, trust=True)
    assert session.workspace.project == project
    assert "| phrocs | running | 6 |" in await mcp_table(session)
    here = await session.toolbox.run("mcp__phrocs__env", {"name": "CLAUDE_PROJECT_DIR"})
    assert here["output"] == str(project)


async def test_a_claude_hook_matcher_on_mcp_names_fires_for_a_real_server(
    project: Path, script: Path, sessions: Any, tmp_path: Path
) -> None:
    """A hook written for Claude Code (``matcher = "mcp__srv__.*"``) sees the MCP tool by
    Claude's name, on a real server's tool, and can refuse the call."""
    configure({"srv": stdio(script)})
    seen = tmp_path / "seen.jsonl"
    guard = write(
        tmp_path / "guard.py",
        "import json, sys\n"
        "data = json.load(sys.stdin)\n"
        f"open({str(seen)!r}, 'a').write(json.dumps(data) + '\\n')\n"
        "if data['tool_input'].get('a') == 13:\n"
        "    print('no thirteens', file=sys.stderr)\n"
        "    sys.exit(2)\n",
    )
    path = user_config_dir() / "config.toml"
    path.write_text(
        path.read_text()
        + '\n[[hooks.PreToolUse]]\nmatcher = "mcp__srv__.*"\n'
        + f"command = {json.dumps(f'{sys.executable} {guard}')}\n"
    )
    replies = [
        Reply(calls=[Call("srv_add", {"a": 1, "b": 2}), Call("srv_add", {"a": 13, "b": 0})]),
        Reply("ok"),
    ]
    with FakeOpenAI(replies) as server:
        session = sessions(project, base_url=server.base_url, model="m")
        assert await session.turn("go") == "ok"
    payloads = [json.loads(line) for line in seen.read_text().splitlines()]
    assert [p["tool_name"] for p in payloads] == ["mcp__srv__add", "mcp__srv__add"]
    assert payloads[0]["tool_input"] == {"a": 1, "b": 2}
    done, refused = tool_messages(server.requests[1])
    assert done == {"output": "3", "ok": True}
    assert refused["ok"] is False and "no thirteens" in refused["error"]
