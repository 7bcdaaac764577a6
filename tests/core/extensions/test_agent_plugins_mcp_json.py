"""An Agent Plugin's ``mcp.json`` read into servers (core/extensions/agent_plugins.py), each
rule from Agent Plugins 1.0.0 §7.2 and §9 quoted in its test. Whether the servers then run
is tests/plugins/test_agent_plugin_mcp.py's business."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from tui_agent.core.extensions.agent_plugins import (
    MCP_SCHEMA,
    PLUGIN_SCHEMA,
    AgentPlugin,
    expand,
    find_agent_plugins,
)
from tui_agent.paths import user_data_dir


def plugin_with(project: Path, servers: Any, *, folder: str = "p", **top: Any) -> Path:
    root = project / ".agents" / "plugins" / folder
    root.mkdir(parents=True)
    (root / "plugin.json").write_text(json.dumps({"$schema": PLUGIN_SCHEMA, "name": "p"}))
    document = {"$schema": MCP_SCHEMA, "mcpServers": servers, **top}
    (root / "mcp.json").write_text(json.dumps(document))
    return root


def load(project: Path) -> AgentPlugin:
    [plugin] = find_agent_plugins(project)
    assert plugin.valid
    return plugin


def skipped(plugin: AgentPlugin) -> dict[str, str]:
    """server name → why it was skipped."""
    found = {}
    for problem in plugin.problems:
        head, _, why = problem.error.partition(" skipped: ")
        found[head.removeprefix("server ").strip("'")] = why
    return found


def test_stdio_fields_expanded_where_the_spec_says_and_nowhere_else(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """§9.2: "Expansion applies to every string element of args, every string value in
    env, and the cwd string. It does not apply to env keys, command, or fixed component
    locations. Unrecognized placeholder-like text MUST remain literal. Clients MUST NOT
    perform any other placeholder or environment-variable expansion."; §9.1: "The client
    MUST then set PLUGIN_ROOT and PLUGIN_DATA ... replacing any entries"."""
    monkeypatch.setenv("APC_SET", "from the environment")
    root = plugin_with(
        project,
        {
            "s": {
                "type": "stdio",
                "command": "./tool",
                "args": ["${PLUGIN_ROOT}/x", "${PLUGIN_DATA}", "${HOME}", "$APC_SET", "${APC_SET}"],
                "env": {"${PLUGIN_ROOT}": "${PLUGIN_ROOT}${PLUGIN_DATA}", "A": "${APC_SET:-d}"},
                "cwd": "${PLUGIN_ROOT}/work",
            }
        },
    ).resolve()
    (root / "tool").write_text("#!/bin/sh\n")
    (root / "tool").chmod(0o755)
    (root / "work").mkdir()
    plugin = load(project)
    data = user_data_dir() / "plugin-data" / "p"
    [server] = plugin.servers
    assert (server.kind, server.command, server.cwd) == (
        "stdio",
        str(root / "tool"),
        str(root / "work"),
    )
    assert server.args == [f"{root}/x", str(data), "${HOME}", "$APC_SET", "${APC_SET}"]
    assert server.env == {
        "${PLUGIN_ROOT}": f"{root}{data}",
        "A": "${APC_SET:-d}",
        "PLUGIN_ROOT": str(root),
        "PLUGIN_DATA": str(data),
    }
    assert list(server.env)[-2:] == ["PLUGIN_ROOT", "PLUGIN_DATA"]  # set after env
    assert server.origin == str(root / "mcp.json")


def test_expansion_is_one_pass() -> None:
    """§9.2: "Expansion is a single, non-recursive textual replacement ... Text introduced
    by a replacement MUST NOT be scanned for further placeholders." A plugin folder whose
    path holds the placeholder's text keeps it."""
    root, data = Path("/plugins/${PLUGIN_DATA}"), Path("/data/${PLUGIN_ROOT}")
    assert expand("${PLUGIN_ROOT}|${PLUGIN_DATA}", root, data) == (
        "/plugins/${PLUGIN_DATA}|/data/${PLUGIN_ROOT}"
    )
    assert expand("${PLUGIN_ROOT_SUFFIX} $PLUGIN_ROOT ${plugin_root}", root, data) == (
        "${PLUGIN_ROOT_SUFFIX} $PLUGIN_ROOT ${plugin_root}"
    )


def test_commands(project: Path) -> None:
    """§7.2.1: "It MUST be either a bare executable name or a plugin-relative path beginning
    with ./. Clients MUST resolve bare names using the platform's executable search rules
    and MUST resolve plugin-relative paths against the plugin root. Clients MUST NOT perform
    placeholder expansion in command." §4.1: "../bin/server escapes the plugin root"."""
    python = Path(sys.executable).name
    root = plugin_with(
        project,
        {
            "bare": {"type": "stdio", "command": python},
            "dotdot": {"type": "stdio", "command": "../bin/server"},
            "absolute": {"type": "stdio", "command": sys.executable},
            "placeholder": {"type": "stdio", "command": "${PLUGIN_ROOT}/tool"},
            "missing": {"type": "stdio", "command": "no-such-program-here"},
            "shell": {"type": "stdio", "command": "npx -y some-server"},
            "not-executable": {"type": "stdio", "command": "./data.txt"},
            "empty": {"type": "stdio", "command": ""},
        },
    ).resolve()
    (root / "data.txt").write_text("x")
    plugin = load(project)
    assert [(s.name, s.command) for s in plugin.servers] == [("bare", shutil.which(python))]
    assert skipped(plugin) == {
        "dotdot": "command '../bin/server' must be a bare executable name (found on PATH) or "
        "a path in the plugin starting with ./",
        "absolute": f"command {sys.executable!r} must be a bare executable name (found on "
        "PATH) or a path in the plugin starting with ./",
        "placeholder": "command '${PLUGIN_ROOT}/tool' must be a bare executable name (found on "
        "PATH) or a path in the plugin starting with ./",
        "missing": "command 'no-such-program-here' is not found on PATH",
        "shell": "command 'npx -y some-server' is not found on PATH (one executable; its "
        "arguments go in args)",
        "not-executable": f"command './data.txt' is not executable (chmod +x {root / 'data.txt'})",
        "empty": "command must not be empty",
    }
    assert plugin.declared_servers == 8


def test_a_command_linking_outside_the_plugin_is_skipped(project: Path, tmp_path: Path) -> None:
    """§4.1: "If an MCP server command or cwd fails containment, the client MUST treat that
    server entry as invalid"."""
    outside = tmp_path / "server"
    outside.write_text("#!/bin/sh\n")
    outside.chmod(0o755)
    root = plugin_with(project, {"s": {"type": "stdio", "command": "./server"}})
    (root / "server").symlink_to(outside)
    assert skipped(load(project)) == {"s": "command './server' resolves outside the plugin folder"}


@pytest.mark.parametrize(
    ("cwd", "why"),
    [
        (
            "data",
            "cwd 'data' must start with ./, ${PLUGIN_ROOT} or ${PLUGIN_DATA} (a path in "
            "the plugin or in its data folder)",
        ),
        (
            "/tmp",
            "cwd '/tmp' must start with ./, ${PLUGIN_ROOT} or ${PLUGIN_DATA} (a path in "
            "the plugin or in its data folder)",
        ),
        (
            "${PLUGIN_ROOT}x",
            "cwd '${PLUGIN_ROOT}x' must start with ./, ${PLUGIN_ROOT} or "
            "${PLUGIN_DATA} (a path in the plugin or in its data folder)",
        ),
        ("./..", "cwd './..' resolves outside the plugin folder"),
        ("${PLUGIN_ROOT}/../..", "cwd '${PLUGIN_ROOT}/../..' resolves outside the plugin folder"),
        (
            "${PLUGIN_DATA}/../other",
            "cwd '${PLUGIN_DATA}/../other' resolves outside its data folder",
        ),
        ("./nowhere", None),
    ],
)
def test_cwd_forms_and_containment(project: Path, cwd: str, why: str | None) -> None:
    """§7.2.1: "When present, cwd MUST have one of these forms: a plugin-relative path
    beginning with ./; exactly ${PLUGIN_ROOT} or a path beginning with ${PLUGIN_ROOT}/;
    exactly ${PLUGIN_DATA} or a path beginning with ${PLUGIN_DATA}/ ... Any other form or
    any post-resolution escape makes that server entry invalid"."""
    python = Path(sys.executable).name
    root = plugin_with(project, {"s": {"type": "stdio", "command": python, "cwd": cwd}}).resolve()
    expected = why or f"cwd './nowhere' is not a folder in the plugin ({root / 'nowhere'})"
    assert skipped(load(project)) == {"s": expected}


@pytest.mark.parametrize("cwd", ["./", "${PLUGIN_ROOT}", "${PLUGIN_DATA}", "${PLUGIN_DATA}/a/b"])
def test_valid_cwds(project: Path, cwd: str) -> None:
    python = Path(sys.executable).name
    root = plugin_with(project, {"s": {"type": "stdio", "command": python, "cwd": cwd}}).resolve()
    [server] = load(project).servers
    data = user_data_dir().resolve() / "plugin-data" / "p"
    expected = {"./": root, "${PLUGIN_ROOT}": root, "${PLUGIN_DATA}": data}.get(cwd, data / "a/b")
    assert server.cwd == str(expected)


@pytest.mark.parametrize(
    ("entry", "why"),
    [
        (
            {"type": "streamable-http", "url": "http://example.com/mcp"},
            "url 'http://example.com/mcp' must use https (plain http only for localhost or a "
            "loopback address)",
        ),
        (
            {"type": "sse", "url": "https://user:pw@example.com/sse"},
            "url 'https://user:pw@example.com/sse' must not carry user information",
        ),
        (
            {"type": "streamable-http", "url": "https://example.com/mcp#x"},
            "url 'https://example.com/mcp#x' must not have a fragment",
        ),
        (
            {"type": "streamable-http", "url": "/mcp"},
            "url '/mcp' must be an absolute http or https URL",
        ),
        (
            {"type": "streamable-http", "url": "ftp://example.com"},
            "url 'ftp://example.com' must be an absolute http or https URL",
        ),
        (
            {"type": "streamable-http", "url": "https://e.com", "headers": {"Bad Name": "v"}},
            "header name 'Bad Name' is not a valid HTTP header name",
        ),
        (
            {"type": "streamable-http", "url": "https://e.com", "headers": {"X": "a\r\nB: c"}},
            "header 'X' has a value that is not a valid HTTP header value",
        ),
        (
            {"type": "streamable-http", "url": "https://e.com", "command": "x"},
            "the document has unknown field 'command' (allowed: type, url, headers)",
        ),
        (
            {"type": "http", "url": "https://e.com"},
            'type is "http"; it must be stdio, streamable-http or sse',
        ),
        ({"url": "https://e.com"}, "type is missing; it must be stdio, streamable-http or sse"),
        ("https://e.com", 'must be an object, not "https://e.com"'),
    ],
)
def test_remote_servers_rules(project: Path, entry: Any, why: str) -> None:
    """§7.2.1: "The url value MUST be an absolute HTTP or HTTPS URL and MUST NOT contain user
    information or a fragment. Non-loopback endpoints MUST use HTTPS ... Header names and
    values MUST be valid HTTP header fields"; "An unknown field, an unknown type value, or a
    field belonging to another variant makes that server entry invalid"."""
    plugin_with(project, {"s": entry})
    assert skipped(load(project)) == {"s": why}


@pytest.mark.parametrize(
    "url",
    [
        "http://localhost:8000/mcp",
        "http://127.0.0.1/mcp",
        "http://[::1]:9/mcp",
        "http://127.8.9.1/mcp",
        "https://example.com/mcp?q=${PLUGIN_ROOT}",
    ],
)
def test_remote_urls_taken_literally(project: Path, url: str) -> None:
    """§7.2.1: "HTTP MAY be used when the URL host is exactly localhost or an IP literal in a
    loopback range"; "Clients MUST NOT perform placeholder or environment-variable expansion
    in url, header names, or header values"."""
    headers = {"X-Root": "${PLUGIN_ROOT}"}
    plugin_with(project, {"s": {"type": "sse", "url": url, "headers": headers}})
    [server] = load(project).servers
    assert (server.kind, server.url, server.headers) == ("sse", url, headers)


@pytest.mark.parametrize(
    ("document", "why"),
    [
        (
            {
                "$schema": "https://agent-plugins.org/schemas/1.1.0/mcp.schema.json",
                "mcpServers": {},
            },
            "$schema targets Agent Plugins 1.1.0 but plugin.json targets 1.0.0 (they must match, "
            "§10.1)",
        ),
        ({"mcpServers": {}}, f"$schema is missing ({MCP_SCHEMA})"),
        ({"$schema": MCP_SCHEMA}, "mcpServers is required"),
        ({"$schema": MCP_SCHEMA, "mcpServers": []}, "mcpServers must be an object, not []"),
        (
            {"$schema": MCP_SCHEMA, "mcpServers": {}, "servers": {}},
            "the document has unknown field 'servers' (allowed: $schema, mcpServers)",
        ),
        (
            {"$schema": PLUGIN_SCHEMA, "mcpServers": {}},
            f'$schema must be {MCP_SCHEMA}, not "{PLUGIN_SCHEMA}"',
        ),
    ],
)
def test_a_bad_mcp_json_disables_mcp_for_the_plugin(
    project: Path, document: dict[str, Any], why: str
) -> None:
    """§7.2.2: "If mcp.json is not valid JSON, targets an Agent Plugins version for which the
    client has no supported ... version, targets a different Agent Plugins version than
    plugin.json, or does not satisfy the other top-level requirements in §7.2.1, the client
    MUST disable MCP for that plugin and continue loading other component types"."""
    root = plugin_with(project, {})
    (root / "mcp.json").write_text(json.dumps(document))
    (root / "skills").mkdir()
    plugin = load(project)
    assert plugin.servers == [] and plugin.skills_folder is not None
    assert [p.error for p in plugin.problems] == [f"{why}: MCP not used"]


def test_an_empty_mcp_servers_object_is_valid(project: Path) -> None:
    """§7.2.1: "An empty mcpServers object is valid"; §6.2: an absent mcp.json is no error."""
    plugin_with(project, {})
    plugin = load(project)
    assert plugin.servers == [] and plugin.problems == []
    (plugin.root / "mcp.json").unlink()
    assert load(project).problems == []


def test_an_mcp_json_that_is_not_a_file_disables_mcp(project: Path) -> None:
    """§6.2: "If a fixed component location is present but does not resolve to the expected
    filesystem kind — for example ... mcp.json does not resolve to a regular file — the
    client MUST treat that component type as invalid"."""
    root = plugin_with(project, {})
    (root / "mcp.json").unlink()
    (root / "mcp.json").mkdir()
    assert [p.error for p in load(project).problems] == ["is not a file: MCP not used"]
