"""Agent Plugins 1.0 (agent-plugins.org, spec/1.0.0.md): finding plugin folders and checking
their ``plugin.json`` (core/extensions/agent_plugins.py). The plugins are the
agent-plugins-conformance suite's, verbatim (tests/fixtures/agent_plugins/SOURCES.md); the
broken manifests are made here, each from a rule of the specification quoted in its test."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES

from tui_agent import create_session
from tui_agent.core.extensions.agent_plugins import (
    PLUGIN_SCHEMA,
    AgentPlugin,
    find_agent_plugins,
    project_files,
    schema_file,
)
from tui_agent.core.extensions.plugins import python_files
from tui_agent.paths import home_plugins_dir, user_data_dir

PLUGINS = FIXTURES / "agent_plugins"
CORE = "agent-plugins-conformance-core"
RECOVERY = "agent-plugins-conformance-recovery"
INVALID_MCP = "agent-plugins-conformance-invalid-mcp"


def install(name: str, folder: Path, as_name: str | None = None) -> Path:
    """Copy a fixture plugin into a plugins folder (``.agents/plugins`` of a project or HOME)."""
    target = folder / (as_name or name)
    shutil.copytree(PLUGINS / name, target, symlinks=True)
    return target


def manifest_plugin(folder: Path, name: str, manifest: Any) -> Path:
    root = folder / name
    root.mkdir(parents=True)
    text = manifest if isinstance(manifest, str) else json.dumps(manifest, indent=2)
    (root / "plugin.json").write_text(text)
    return root


def only(plugins: list[AgentPlugin]) -> AgentPlugin:
    assert len(plugins) == 1, plugins
    return plugins[0]


def test_a_real_plugin_is_found_with_its_skills_and_data_folder(project: Path) -> None:
    """§6.1: skills are "Subdirectories containing SKILL.md" of ``skills/``; §7.1: "Clients
    MUST NOT recursively search deeper descendants for additional skills"."""
    root = install(CORE, project / ".agents" / "plugins")
    plugin = only(find_agent_plugins(project))
    assert plugin.valid
    # only the Windows server's command is missing (its README: "Only the server for the
    # current platform is expected to run; the other may produce a startup error")
    assert [str(p) for p in plugin.problems] == [
        f"{root.resolve() / 'mcp.json'}: server 'command-token-windows' skipped: command "
        f"'./bin/windows/probe token.cmd' is not a file in the plugin "
        f"({root.resolve() / 'bin/windows/probe token.cmd'})"
    ]
    assert plugin.name == "agent-plugins-conformance-core"
    assert plugin.version == "0.1.0"
    assert plugin.scope == "project"
    assert plugin.root == root.resolve()
    assert plugin.manifest == json.loads((root / "plugin.json").read_text())
    assert plugin.skills_folder == root / "skills"
    # conformance-nested is a reference inside alpha; without-skill has no SKILL.md
    assert [p.name for p in plugin.skill_folders()] == ["conformance-alpha", "conformance-beta"]
    assert plugin.data_dir == user_data_dir() / "plugin-data" / "agent-plugins-conformance-core"
    assert not plugin.data_dir.exists()  # made only when one of its servers starts


def test_unknown_fields_and_a_non_object_extensions_are_reported_and_ignored(
    isolated_home: Path,
) -> None:
    """§5.2: "Clients MUST report and ignore each unknown field and MUST continue loading
    the plugin"; §8.1: "If extensions is not an object, the client MUST report and ignore
    the field and continue loading components". The recovery fixture has both."""
    install(RECOVERY, home_plugins_dir())
    plugin = only(find_agent_plugins(None))
    assert plugin.valid and plugin.scope == "user"
    manifest_problems = [p.error for p in plugin.problems if p.path.endswith("plugin.json")]
    assert manifest_problems == [
        "extensions is not an object: ignored (§8.1)",
        "unknown field 'conformanceUnknown' ignored (plugin.json allows only $schema, name, "
        "version, description, author, homepage, repository, license, keywords, extensions; "
        "client data belongs under extensions)",
    ]
    assert "conformanceUnknown" not in plugin.manifest and "extensions" not in plugin.manifest
    assert plugin.skills_folder is not None  # its components still load


@pytest.mark.parametrize(
    ("manifest", "problem"),
    [
        # §5.5 "Invalid names: My-Plugin (uppercase), -start (leading hyphen), has--double
        # (consecutive hyphens), too.many..dots (consecutive periods), `` (empty)"
        *[
            (
                {"$schema": PLUGIN_SCHEMA, "name": name},
                f"name {name!r} must be 1-64 characters of a-z, 0-9, '-' and '.', starting and "
                "ending with a letter or digit, without '--' or '..'",
            )
            for name in ["My-Plugin", "-start", "has--double", "too.many..dots", "", "a" * 65]
        ],
        # §5.3 "If a required field is missing, has the wrong type, is empty ..."
        ({"$schema": PLUGIN_SCHEMA}, "name is required"),
        ({"$schema": PLUGIN_SCHEMA, "name": 7}, "name must be a string, not 7"),
        (
            {"name": "x"},
            f"$schema is missing (Agent Plugins 1.0.0: {PLUGIN_SCHEMA})",
        ),
        # §5.2 "If a client does not support the declared Agent Plugins version ... it MUST
        # reject the plugin and SHOULD report the unsupported version"
        (
            {"$schema": "https://agent-plugins.org/schemas/2.0.0/plugin.schema.json", "name": "x"},
            "$schema targets Agent Plugins 2.0.0, which tui-agent does not support (it reads "
            f"1.0.0: {PLUGIN_SCHEMA})",
        ),
        (
            {"$schema": "https://json-schema.org/draft/2020-12/schema", "name": "x"},
            f'$schema must be {PLUGIN_SCHEMA}, not "https://json-schema.org/draft/2020-12/schema"',
        ),
        # §5.4 "The author object MAY contain only the name, email, and url fields, each
        # with a string value. Any other field or value type makes the manifest invalid."
        (
            {"$schema": PLUGIN_SCHEMA, "name": "x", "author": {"name": "A", "twitter": "@a"}},
            "author has unknown field 'twitter' (allowed: name, email, url)",
        ),
        (
            {"$schema": PLUGIN_SCHEMA, "name": "x", "keywords": "cli"},
            'keywords must be an array, not "cli"',
        ),
        # §8.1 "... whose member values are objects" (not the non-fatal non-object case)
        (
            {"$schema": PLUGIN_SCHEMA, "name": "x", "extensions": {"com.example": True}},
            "extensions.com.example must be an object, not true",
        ),
        # §5.2 "The manifest MUST be JSON and MUST contain a top-level object."
        (["not", "an", "object"], "the manifest must be a JSON object"),
    ],
)
def test_an_invalid_manifest_is_one_clear_problem_and_nothing_of_the_plugin_loads(
    project: Path, manifest: Any, problem: str
) -> None:
    """§5.2: "Any schema violation other than an unknown top-level field or a non-object
    extensions field is fatal: the client MUST reject the plugin and MUST NOT discover or
    execute any of its components"; §5.3: "Clients SHOULD report which required field is
    invalid"."""
    root = install(CORE, project / ".agents" / "plugins", as_name="broken")
    (root / "plugin.json").write_text(json.dumps(manifest))
    plugin = only(find_agent_plugins(project))
    assert not plugin.valid
    assert [(p.path, p.error) for p in plugin.problems] == [
        (
            str(root / "plugin.json"),
            f"invalid Agent Plugin manifest, plugin not loaded: {problem}",
        )
    ]
    assert plugin.name == "broken"  # the folder's name, the manifest's being unusable
    assert plugin.skills_folder is None and plugin.skill_folders() == []
    assert plugin.servers == []


def test_several_violations_are_named_in_the_one_problem(project: Path) -> None:
    manifest = {"$schema": PLUGIN_SCHEMA, "name": "Bad", "version": 1, "homepage": None}
    manifest_plugin(project / ".agents" / "plugins", "p", manifest)
    plugin = only(find_agent_plugins(project))
    assert [p.error for p in plugin.problems] == [
        "invalid Agent Plugin manifest, plugin not loaded: homepage must be a string, not "
        "null; name 'Bad' must be 1-64 characters of a-z, 0-9, '-' and '.', starting and "
        "ending with a letter or digit, without '--' or '..'; version must be a string, not 1"
    ]


def test_not_json_names_the_line(project: Path) -> None:
    root = manifest_plugin(project / ".agents" / "plugins", "p", '{\n  "name": "p",\n}\n')
    plugin = only(find_agent_plugins(project))
    assert not plugin.valid
    assert [str(p) for p in plugin.problems] == [
        f"{root / 'plugin.json'}:3: not valid JSON: Expecting property name enclosed in double "
        "quotes"
    ]


@pytest.mark.parametrize("name", ["my-plugin", "acme.tools", "lint3r", "a", "a" * 64])
def test_the_specifications_valid_names(project: Path, name: str) -> None:
    """§5.5 "Valid names: my-plugin, acme.tools, lint3r, a"."""
    manifest_plugin(project / ".agents" / "plugins", "p", {"$schema": PLUGIN_SCHEMA, "name": name})
    plugin = only(find_agent_plugins(project))
    assert plugin.valid and plugin.name == name and plugin.problems == []


def test_the_specifications_full_manifest_is_valid(project: Path) -> None:
    """§5.2's "Example: full manifest", as written there."""
    full = {
        "$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json",
        "name": "plugin-name",
        "version": "1.2.0",
        "description": "Brief plugin description",
        "author": {
            "name": "Author Name",
            "email": "author@example.com",
            "url": "https://example.com",
        },
        "homepage": "https://docs.example.com/plugin",
        "repository": "https://github.com/example/plugin",
        "license": "MIT",
        "keywords": ["keyword1", "keyword2"],
        "extensions": {"com.example.client": {"setting": True}},
    }
    manifest_plugin(project / ".agents" / "plugins", "p", full)
    plugin = only(find_agent_plugins(project))
    assert plugin.valid and plugin.problems == [] and plugin.manifest == full
    assert plugin.description == "Brief plugin description"


def test_paths_that_resolve_outside_the_plugin_are_rejected(project: Path, tmp_path: Path) -> None:
    """§4.1: "If plugin.json does not resolve within the plugin root, the client MUST reject
    the plugin. If a fixed component location does not resolve within the plugin root, the
    client MUST treat that component type as invalid". A symlink inside the root is fine."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "plugin.json").write_text(json.dumps({"$schema": PLUGIN_SCHEMA, "name": "x"}))
    shutil.copytree(PLUGINS / CORE / "skills", outside / "skills")
    plugins = project / ".agents" / "plugins"
    linked = plugins / "linked-manifest"
    linked.mkdir(parents=True)
    (linked / "plugin.json").symlink_to(outside / "plugin.json")
    skills_out = manifest_plugin(plugins, "skills-outside", {"$schema": PLUGIN_SCHEMA, "name": "o"})
    (skills_out / "skills").symlink_to(outside / "skills")
    inside = install(CORE, plugins, as_name="skills-inside")
    (inside / "skills").rename(inside / "real-skills")
    (inside / "skills").symlink_to(inside / "real-skills")

    found = {p.root.name: p for p in find_agent_plugins(project)}
    assert not found["linked-manifest"].valid
    assert [p.error for p in found["linked-manifest"].problems] == [
        "resolves outside the plugin folder: plugin not loaded"
    ]
    assert found["skills-outside"].valid and found["skills-outside"].skills_folder is None
    assert [str(p) for p in found["skills-outside"].problems] == [
        f"{skills_out.resolve() / 'skills'}: resolves outside the plugin folder: skills not loaded"
    ]
    assert found["skills-inside"].skills_folder == inside.resolve() / "real-skills"


def test_a_skill_file_linking_outside_the_plugin_is_skipped(project: Path, tmp_path: Path) -> None:
    """§4.1: "If a discovered SKILL.md does not resolve within the plugin root, the client
    MUST skip that skill"."""
    root = install(CORE, project / ".agents" / "plugins")
    (tmp_path / "SKILL.md").write_text((root / "skills/conformance-beta/SKILL.md").read_text())
    (root / "skills/conformance-beta/SKILL.md").unlink()
    (root / "skills/conformance-beta/SKILL.md").symlink_to(tmp_path / "SKILL.md")
    plugin = only(find_agent_plugins(project))
    assert [p.name for p in plugin.skill_folders()] == ["conformance-alpha"]
    assert plugin.skill_folders() == [root.resolve() / "skills/conformance-alpha"]
    assert [str(p) for p in plugin.problems[1:]] == [
        f"{root.resolve() / 'skills/conformance-beta/SKILL.md'}: resolves outside the plugin "
        "folder: skill skipped"
    ]


def test_project_plugins_come_first_and_untrusted_means_user_plugins_only(
    project: Path,
) -> None:
    install(CORE, home_plugins_dir())
    install(RECOVERY, home_plugins_dir())
    install(CORE, project / ".agents" / "plugins", as_name="core-here")
    install(INVALID_MCP, project / ".agents" / "plugins")
    found = find_agent_plugins(project)
    assert [(p.scope, p.root.name, p.valid) for p in found] == [
        ("project", INVALID_MCP, True),
        ("project", "core-here", True),
        ("user", CORE, False),  # the project's plugin of that name is used
        ("user", RECOVERY, True),
    ]
    assert found[2].problems[-1].error == (
        f"not used: the project plugin 'agent-plugins-conformance-core' "
        f"({found[1].root}) has the same name"
    )
    untrusted = find_agent_plugins(None)
    assert [(p.scope, p.root.name, p.valid) for p in untrusted] == [
        ("user", CORE, True),
        ("user", RECOVERY, True),
    ]


def test_python_files_there_stay_in_process_plugins(project: Path) -> None:
    """The issue: "a .py file in .agents/plugins/ stays an in-process plugin, a folder with
    plugin.json is an Agent Plugin"; a folder without plugin.json is neither."""
    folder = project / ".agents" / "plugins"
    install(CORE, folder)
    (folder / "mine.py").write_text("import tui_agent\n")
    (folder / "not-a-plugin").mkdir()
    (folder / "not-a-plugin" / "README.md").write_text("no manifest\n")
    assert python_files(folder) == [folder / "mine.py"]
    assert [p.root.name for p in find_agent_plugins(project)] == [CORE]


def test_a_projects_agent_plugins_are_project_code_that_needs_trust(project: Path) -> None:
    """The trust rule: a project's plugins start processes (their MCP servers), so an
    untrusted folder's are skipped and counted, and trusting the folder loads them."""
    root = install(CORE, project / ".agents" / "plugins")
    install(INVALID_MCP, project / ".agents" / "plugins")
    expected = [
        root / "plugin.json",
        root / "mcp.json",
        project / ".agents/plugins" / INVALID_MCP / "plugin.json",
        project / ".agents/plugins" / INVALID_MCP / "mcp.json",
    ]
    assert project_files(project) == expected
    session = create_session(project)
    assert session.workspace.needs_trust
    assert set(expected) <= set(session.extensions.skipped)


def test_the_shipped_schemas_are_the_specifications(tmp_path: Path) -> None:
    """§5.2: "Clients MUST NOT retrieve a schema while loading a plugin": the 1.0.0 schemas
    ship in the package, byte for byte the spec repository's (SOURCES.md)."""
    for kind in ("plugin", "mcp"):
        data = json.loads(schema_file(kind).read_text())
        assert data["$id"] == f"https://agent-plugins.org/schemas/1.0.0/{kind}.schema.json"
        assert data["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_home_as_the_project_lists_its_plugins_once(isolated_home: Path) -> None:
    """A session started in HOME: ``~/.agents/plugins`` is the user's folder, not also a
    project's (as plugin files: ``project_folders`` leaves HOME's out)."""
    install(CORE, home_plugins_dir())
    assert [(p.scope, p.valid) for p in find_agent_plugins(isolated_home)] == [("user", True)]
    assert project_files(isolated_home) == []
