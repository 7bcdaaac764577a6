"""Issue 31: an Agent Plugin's ``mcp.json`` servers run as MCP tools (plugins/mcp.py on
tui_agent.agent_plugins), as Agent Plugins 1.0 says (spec/1.0.0.md §7.2, §9).

The plugins are the agent-plugins-conformance suite's, verbatim; their servers are that
suite's probes run by ``node``: the probes' code is the suite's, their MCP SDK replaced by a
small made stdio server (tests/fixtures/agent_plugins/SOURCES.md, ``made/``). A probe's
``observe`` tool returns how it was launched (argv, environment, working directory), which
is what the specification fixes."""

from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES
from test_mcp import errors, mcp_table, run_cli, tool_messages

import tui_agent
from tui_agent import create_session
from tui_agent.mcp import tool_name
from tui_agent.paths import home_plugins_dir, user_data_dir
from tui_agent.testing import Call, FakeOpenAI, Reply

PLUGINS = FIXTURES / "agent_plugins"
MADE = PLUGINS / "made"
CORE = "agent-plugins-conformance-core"
RECOVERY = "agent-plugins-conformance-recovery"
INVALID_MCP = "agent-plugins-conformance-invalid-mcp"
CORE_STDIO = ["default", "relative", "root", "data", "command-token-posix"]


def install(name: str, folder: Path) -> Path:
    """The fixture plugin in a plugins folder, with the made probes where its mcp.json
    points (``dist/``), beside the suite's own ``src/data-write.mjs`` they import."""
    root = folder / name
    shutil.copytree(PLUGINS / name, root, symlinks=True)
    dist = root / "dist"
    dist.mkdir()
    shutil.copy(MADE / "stdio-server.mjs", dist)
    if name == CORE:
        shutil.copy(MADE / "probe.mjs", dist)
        shutil.copy(MADE / "command-token-probe.mjs", dist)
        shutil.copy(root / "src" / "data-write.mjs", dist)
    else:
        shutil.copy(MADE / "recovery-probe.mjs", dist / "probe.mjs")
    return root


@pytest.fixture
async def sessions() -> AsyncIterator[Callable[..., tui_agent.Session]]:
    made: list[tui_agent.Session] = []

    def make(directory: Path, **kwargs: Any) -> tui_agent.Session:
        session = create_session(directory, **kwargs)
        made.append(session)
        return session

    yield make
    for session in made:
        await session.close()


def observation(result: Any) -> dict[str, Any]:
    """The probe's observation from a tool result (the JSON text it returns)."""
    data: dict[str, Any] = json.loads(result["output"])
    return data


def tool(plugin: str, server: str) -> str:
    """The toolbox name of a server's ``observe`` (cut at 64 characters, OpenAI's limit)."""
    return tool_name(f"plugin:{plugin}:{server}", "observe")


async def test_a_plugins_servers_run_as_tools_with_its_placeholders_expanded(
    project: Path, sessions: Any
) -> None:
    """§9.2: "Expansion applies to every string element of args, every string value in env,
    and the cwd string ... Unrecognized placeholder-like text MUST remain literal"; §9.1:
    "The client MUST then set PLUGIN_ROOT and PLUGIN_DATA" and "MUST create the directory
    before launching a plugin subprocess"; §7.2.1: "When cwd is omitted, clients MUST use
    the plugin root". The model calls the tools by our name and by Claude Code's."""
    root = install(CORE, project / ".agents" / "plugins").resolve()
    data = user_data_dir() / "plugin-data" / CORE
    replies = [
        Reply(
            calls=[
                Call(tool(CORE, "default"), {}),
                Call(f"mcp__plugin_{CORE}_relative__observe", {}),
            ]
        ),
        Reply("done"),
    ]
    with FakeOpenAI(replies) as server:
        session = sessions(project, base_url=server.base_url, model="m", trust=True)
        assert await session.turn("observe") == "done"
    offered = {t["function"]["name"] for t in server.requests[0]["tools"]}
    assert {tool(CORE, name) for name in CORE_STDIO} <= offered
    default, relative = (json.loads(m["output"]) for m in tool_messages(server.requests[1]))
    assert default["evidence"] | {"dataWrite": None} == {
        "version": 1,
        "server": "default",
        "root": str(root),
        "resolvedData": str(data.resolve()),
        "cwd": str(root),
        "argv": [
            "default",
            "arg with spaces",
            "",
            str(root),
            str(data),
            "${APC_UNKNOWN}",
            "$APC_VALUE",
            "${PLUGIN_ROOT_SUFFIX}",
        ],
        "env": {
            "PLUGIN_ROOT": str(root),
            "PLUGIN_DATA": str(data),
            "APC_VALUE": "fixture value with spaces",
            "APC_EXPANSION": f"{root}|{data}|{root}",
            "APC_LITERAL": "${APC_UNKNOWN}|$APC_VALUE|${PLUGIN_ROOT_SUFFIX}",
        },
        "dataWrite": None,
    }
    # the probe wrote (and removed) a file in PLUGIN_DATA: the folder exists and is writable
    assert default["evidence"]["dataWrite"]["error"] is None
    assert data.is_dir()
    assert relative["evidence"]["cwd"] == str(root / "probe-workdir")  # "./probe-workdir"
    root_cwd = observation(await session.toolbox.run(tool(CORE, "root"), {}))
    assert root_cwd["evidence"]["cwd"] == str(root / "probe-workdir")  # ${PLUGIN_ROOT}/...
    data_cwd = observation(await session.toolbox.run(tool(CORE, "data"), {}))
    assert data_cwd["evidence"]["cwd"] == str(data.resolve())  # "${PLUGIN_DATA}"
    # §7.2.1 "The command field MUST contain a single executable token": a path with a space
    token = observation(await session.toolbox.run(tool(CORE, "command-token-posix"), {}))
    assert token["evidence"]["marker"] == "intact"
    assert token["evidence"]["argv"] == ["arg with spaces", "", "literal-value"]
    observe = session.toolbox.tools[tool(CORE, "relative")]
    assert observe.source == f"mcp:plugin:{CORE}:relative"
    assert observe.aliases == [f"mcp__plugin_{CORE}_relative__observe"]
    table = await mcp_table(session)
    for name in CORE_STDIO:
        assert f"| plugin:{CORE}:{name} | running | 1 |" in table
    assert f"(from {root / 'mcp.json'})" in table  # /mcp says where each comes from
    # the Windows launcher is not in the package: that server is skipped and said
    said = errors(session)
    assert any("command-token-windows" in text and "not a file" in text for text in said)


async def test_invalid_servers_are_skipped_and_the_valid_one_runs(
    project: Path, sessions: Any
) -> None:
    """§7.2.2: "If an individual server entry does not satisfy the requirements in §7.2.1,
    the client MUST skip that server and continue loading other servers". The recovery
    plugin (a user plugin: it loads in an untrusted folder too) has nine invalid servers
    and ``recovery-valid``; its README lists why each is invalid."""
    root = install(RECOVERY, home_plugins_dir())
    (root / "escape-link").symlink_to("..")  # the suite's check.mjs makes it at test time
    session = sessions(project)
    table = await mcp_table(session)
    assert f"| plugin:{RECOVERY}:recovery-valid | running | 1 |" in table
    assert table.count(f"plugin:{RECOVERY}:") == 1
    evidence = observation(await session.toolbox.run(tool(RECOVERY, "recovery-valid"), {}))
    assert evidence["evidence"]["server"] == "recovery-valid"
    said = [text for text in errors(session) if RECOVERY in text]
    mcp_json = root.resolve() / "mcp.json"
    assert said == [
        f"Agent Plugin {RECOVERY}: {mcp_json}: server {name!r} skipped: {why}"
        for name, why in [
            ("recovery-invalid", "command is required"),
            ("recovery-cwd-escape", "cwd './..' resolves outside the plugin folder"),
            (
                "recovery-cwd-data-escape",
                "cwd '${PLUGIN_DATA}/..' resolves outside its data folder",
            ),
            (
                "recovery-cwd-symlink-escape",
                "cwd './escape-link' resolves outside the plugin folder",
            ),
            (
                "recovery-unknown-field",
                "the document has unknown field 'conformanceUnknown' (allowed: type, command, "
                "args, env, cwd)",
            ),
            (
                "recovery-env-plugin-root",
                "env must not set PLUGIN_ROOT (the client sets PLUGIN_ROOT and PLUGIN_DATA, §9.2)",
            ),
            (
                "recovery-env-plugin-data",
                "env must not set PLUGIN_DATA (the client sets PLUGIN_ROOT and PLUGIN_DATA, §9.2)",
            ),
            (
                "recovery-http-fragment",
                "url 'http://127.0.0.1:43187/conformance/recovery-http-fragment#invalid-fragment' "
                "must not have a fragment",
            ),
            (
                "recovery-http-duplicate-headers",
                "header 'x-apc-duplicate' is given twice (also as 'X-Apc-Duplicate')",
            ),
        ]
    ]


async def test_a_bad_mcp_json_disables_mcp_for_that_plugin_only(
    project: Path, sessions: Any
) -> None:
    """§7.2.2: "If mcp.json is not valid JSON ... the client MUST disable MCP for that plugin
    and continue loading other component types"."""
    root = install(INVALID_MCP, home_plugins_dir())
    install(RECOVERY, home_plugins_dir())
    session = sessions(project)
    table = await mcp_table(session)
    assert INVALID_MCP not in table
    assert f"| plugin:{RECOVERY}:recovery-valid | running | 1 |" in table
    assert (
        f"Agent Plugin {INVALID_MCP}: {root.resolve() / 'mcp.json'}:4: not valid JSON: "
        "Expecting value: MCP not used"
    ) in errors(session)


async def test_an_untrusted_projects_plugins_are_skipped_and_counted(
    project: Path, sessions: Any
) -> None:
    """The trust rule: a project's plugins start processes, so they are project code."""
    root = install(CORE, project / ".agents" / "plugins")
    session = sessions(project)
    assert session.workspace.needs_trust
    assert root / "mcp.json" in session.extensions.skipped
    assert not any(name.startswith("plugin_") for name in session.toolbox.tools)
    session.workspace.trust(remember=False)
    session.reload()
    await session.extensions.settled()
    assert f"| plugin:{CORE}:default | running | 1 |" in await mcp_table(session)


async def test_config_toml_turns_a_plugin_server_off(
    project: Path, sessions: Any, user_config_dir: Path
) -> None:
    """``[mcp.servers."plugin:P:S"] enabled = false`` in config.toml: /mcp lists it, off."""
    install(RECOVERY, home_plugins_dir())
    config = user_config_dir / "config.toml"
    name = f"plugin:{RECOVERY}:recovery-valid"
    config.write_text(config.read_text() + f'\n[mcp.servers."{name}"]\nenabled = false\n')
    session = sessions(project)
    mcp_json = home_plugins_dir().resolve() / RECOVERY / "mcp.json"
    node = shutil.which("node")
    root = mcp_json.parent
    assert (
        f"| {name} | disabled | 0 | stdio {node} {root}/dist/probe.mjs | (from {mcp_json}) |"
        in await mcp_table(session)
    )
    assert not (user_data_dir() / "plugin-data" / RECOVERY).exists()  # it never started


def test_tui_agent_plugins_lists_both_kinds(project: Path) -> None:
    """The issue: "tui-agent plugins lists both kinds" (plugin files and Agent Plugins)."""
    install(CORE, project / ".agents" / "plugins")
    install(RECOVERY, home_plugins_dir())
    broken = home_plugins_dir() / "broken"
    broken.mkdir()
    (broken / "plugin.json").write_text('{"name": "Broken"}')
    (home_plugins_dir() / "hello.py").write_text("import tui_agent\n")
    done = run_cli("plugins", "--json", cwd=project)
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    files = [r for r in rows if r.get("kind") != "agent-plugin"]
    agent = {r["name"]: r for r in rows if r.get("kind") == "agent-plugin"}
    assert any(r["name"] == "hello.py" and r["scope"] == "home" for r in files)
    assert agent[RECOVERY] | {"problems": [], "source": ""} == {
        "kind": "agent-plugin",
        "name": RECOVERY,
        "version": "0.1.0",
        "scope": "user",
        "source": "",
        "status": "ok",
        "skills": 2,
        "mcp_servers": 1,
        "declared_mcp_servers": 10,
        "problems": [],
    }
    assert len(agent[RECOVERY]["problems"]) == 11  # 2 in plugin.json, 9 servers skipped
    assert agent["broken"]["status"] == "invalid"
    assert agent["broken"]["problems"] == [
        f"{broken / 'plugin.json'}: invalid Agent Plugin manifest, plugin not loaded: $schema "
        "is missing (Agent Plugins 1.0.0: "
        "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json)"
    ]
    # the untrusted project's plugin: skipped, as its plugin files are
    assert agent[CORE]["status"] == "skipped" and agent[CORE]["scope"] == "project"
    trusted = run_cli("--trust", "plugins", cwd=project)
    assert trusted.returncode == 0, trusted.stderr
    assert CORE in trusted.stdout and "Agent Plugins" in trusted.stdout
