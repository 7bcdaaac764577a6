"""Agent Plugins 1.0 (agent-plugins.org): a folder with a ``plugin.json`` in
``<project>/.agents/plugins/<name>/`` or ``~/.agents/plugins/<name>/``, whose ``skills/``
are Agent Skills and whose ``mcp.json`` declares MCP servers.

This module finds them and checks them as the specification says, and nothing more: the
skills loader reads ``skills_folder``, the bundled ``mcp`` plugin starts ``servers``. A
``.py`` file in the same folders stays an in-process plugin (``plugins.python_files`` reads
files only; this reads folders only).

Validation uses the specification's own JSON schemas, shipped verbatim in
``tui_agent/schemas/agent-plugins/1.0.0/`` (never fetched), with the rules JSON Schema cannot
say checked here: the non-fatal cases of §5.2 and §8.1 (an unknown top-level field, a
non-object ``extensions``: reported and ignored), every other violation fatal (one problem
naming the fields), containment (§4.1: a path resolving outside the plugin is rejected),
and per server in ``mcp.json`` (§7.2: a bad server is skipped, the others run).
"""

from __future__ import annotations

import ipaddress
import json
import logging
import os
import re
import shutil
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..project import workspace as workspace_module
from ..project.config import LoadProblem
from ..util import paths

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

log = logging.getLogger("tui_agent.agent_plugins")

VERSION = "1.0.0"
SCHEMA_ROOT = Path(__file__).resolve().parents[2] / "schemas" / "agent-plugins"
PLUGIN_SCHEMA = f"https://agent-plugins.org/schemas/{VERSION}/plugin.schema.json"
MCP_SCHEMA = f"https://agent-plugins.org/schemas/{VERSION}/mcp.schema.json"
_SCHEMA_ID = re.compile(
    r"^https://agent-plugins\.org/schemas/(?P<version>[^/]+)/(?P<kind>plugin|mcp)\.schema\.json$"
)
MANIFEST_FIELDS = (
    "$schema",
    "name",
    "version",
    "description",
    "author",
    "homepage",
    "repository",
    "license",
    "keywords",
    "extensions",
)
NAME_RULE = (
    "1-64 characters of a-z, 0-9, '-' and '.', starting and ending with a letter or digit, "
    "without '--' or '..'"
)
RESERVED_ENV = ("PLUGIN_ROOT", "PLUGIN_DATA")
_HEADER_NAME = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")  # RFC 9110 token
_HEADER_VALUE = re.compile(r"^[\t\x20-\x7e\x80-\xff]*$")  # no CR, LF, NUL or other controls


@dataclass
class PluginServer:
    """One server of a plugin's ``mcp.json``, checked and with ``${PLUGIN_ROOT}`` and
    ``${PLUGIN_DATA}`` expanded where §9.2 says (``args``, ``env`` values, ``cwd``).
    ``kind``: ``stdio``, ``streamable-http`` or ``sse`` (the file's ``type``).
    ``command`` is resolved: a ``./`` path inside the plugin, or a bare name found on
    ``PATH``. ``env`` ends with ``PLUGIN_ROOT`` and ``PLUGIN_DATA`` (set after the
    configured entries, §9.1)."""

    plugin: str
    name: str
    kind: str
    command: str | None = None
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    origin: str = ""  # the mcp.json it comes from


@dataclass
class AgentPlugin:
    """One folder with a ``plugin.json``. ``valid`` False: the manifest was rejected (the
    problems say why) and none of its components may be used. ``skills_folder``: its
    ``skills/`` when that is a folder inside the plugin. ``data_dir``: its ``PLUGIN_DATA``,
    made when one of its servers starts (``ensure_data_dir``). ``servers``: the valid
    servers of its ``mcp.json`` (the invalid ones are in ``problems``)."""

    name: str
    root: Path
    scope: str  # "project" or "user"
    manifest: dict[str, Any]
    valid: bool
    problems: list[LoadProblem]
    skills_folder: Path | None
    data_dir: Path
    servers: list[PluginServer] = field(default_factory=list)
    declared_servers: int = 0  # the servers mcp.json names, valid or not

    @property
    def version(self) -> str | None:
        value = self.manifest.get("version")
        return value if isinstance(value, str) else None

    @property
    def description(self) -> str:
        value = self.manifest.get("description")
        return value if isinstance(value, str) else ""

    def skill_folders(self) -> list[Path]:
        """The immediate children of ``skills/`` holding a ``SKILL.md`` that resolves to a
        file inside the plugin (§7.1); nothing deeper."""
        if self.skills_folder is None or not self.valid:
            return []
        found = []
        try:
            children = sorted(self.skills_folder.iterdir(), key=lambda p: p.name)
        except OSError:
            return []
        for child in children:
            skill = child / "SKILL.md"
            if not child.is_dir() or not skill.is_file():
                continue
            if not _inside(skill, self.root):
                problem = LoadProblem(
                    str(skill), "resolves outside the plugin folder: skill skipped"
                )
                if problem not in self.problems:  # said once, however often this is asked
                    self.problems.append(problem)
                continue
            found.append(child)
        return found

    def ensure_data_dir(self) -> Path:
        """Create ``PLUGIN_DATA`` (§9.1: before a plugin subprocess is launched)."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        return self.data_dir


# -- finding ------------------------------------------------------------------------------


def plugin_folders(project: Path | None) -> list[tuple[str, Path]]:
    """Where Agent Plugins are looked for, in order of precedence: the project's
    ``.agents/plugins`` (when given, and unless it is HOME's own) then the user's."""
    user = paths.home_plugins_dir()
    folders: list[tuple[str, Path]] = []
    if project is not None:
        mine = project / ".agents" / "plugins"
        if _resolved(mine) != _resolved(user):
            folders.append(("project", mine))
    folders.append(("user", user))
    return folders


def find_agent_plugins(project: Path | None) -> list[AgentPlugin]:
    """Every Agent Plugin: the project's first (``project`` None: an untrusted folder,
    user plugins only), then the user's, each folder's plugins by folder name. A name
    already taken (by a project plugin, or an earlier folder) makes the later plugin
    invalid with a problem saying which one is used."""
    found: list[AgentPlugin] = []
    taken: dict[str, AgentPlugin] = {}
    for scope, folder in plugin_folders(project):
        for root in _candidates(folder):
            plugin = read_plugin(root, scope)
            if plugin.valid:
                first = taken.get(plugin.name)
                if first is not None:
                    plugin.valid = False
                    plugin.servers = []
                    plugin.problems.append(
                        LoadProblem(
                            str(root / "plugin.json"),
                            f"not used: the {first.scope} plugin {first.name!r} "
                            f"({first.root}) has the same name",
                        )
                    )
                else:
                    taken[plugin.name] = plugin
            found.append(plugin)
    return found


def _candidates(folder: Path) -> list[Path]:
    """The folders with a ``plugin.json`` (file or not: a bad one is reported)."""
    try:
        children = sorted(folder.iterdir(), key=lambda p: p.name)
    except OSError:
        return []
    return [
        child
        for child in children
        if child.name[0] != "." and child.is_dir() and os.path.lexists(child / "plugin.json")
    ]


def data_dir_for(name: str) -> Path:
    """``PLUGIN_DATA``: ``<user data dir>/plugin-data/<name>`` (kept across updates of the
    plugin, which live elsewhere)."""
    return paths.user_data_dir() / "plugin-data" / name


def read_plugin(folder: Path, scope: str) -> AgentPlugin:
    """One plugin folder, its manifest checked (§5), its ``skills/`` and ``mcp.json``
    located (§6) and its servers checked (§7.2)."""
    root = _resolved(folder)
    manifest_path = folder / "plugin.json"
    plugin = AgentPlugin(
        name=folder.name,
        root=root,
        scope=scope,
        manifest={},
        valid=False,
        problems=[],
        skills_folder=None,
        data_dir=data_dir_for(folder.name),
    )
    manifest, problems = read_manifest(manifest_path, root)
    plugin.problems += problems
    if manifest is None:
        return plugin
    plugin.manifest = manifest
    plugin.name = manifest["name"]
    plugin.data_dir = data_dir_for(plugin.name)
    plugin.valid = True
    skills = root / "skills"
    if os.path.lexists(skills):
        if not _inside(skills, root):
            plugin.problems.append(
                LoadProblem(str(skills), "resolves outside the plugin folder: skills not loaded")
            )
        elif not skills.is_dir():
            plugin.problems.append(LoadProblem(str(skills), "is not a folder: skills not loaded"))
        else:
            plugin.skills_folder = skills.resolve()
    mcp_json = root / "mcp.json"
    if os.path.lexists(mcp_json):
        plugin.servers, plugin.declared_servers, problems = read_servers(plugin, mcp_json)
        plugin.problems += problems
    return plugin


# -- plugin.json ----------------------------------------------------------------------------


def read_manifest(path: Path, root: Path) -> tuple[dict[str, Any] | None, list[LoadProblem]]:
    """The manifest as the plugin may use it (unknown fields and a non-object
    ``extensions`` dropped, each reported), or None and the one problem that rejects the
    plugin (§5.2, §5.3)."""
    where = str(path)
    if not _inside(path, root):
        return None, [LoadProblem(where, "resolves outside the plugin folder: plugin not loaded")]
    data, problem = _read_json(path)
    if problem is not None:
        return None, [problem]
    if not isinstance(data, dict):
        return None, [_rejected(where, "the manifest must be a JSON object")]
    schema_id = data.get("$schema")
    if "$schema" not in data:
        return None, [
            _rejected(where, f"$schema is missing (Agent Plugins 1.0.0: {PLUGIN_SCHEMA})")
        ]
    if schema_id != PLUGIN_SCHEMA:
        return None, [_rejected(where, _unsupported("$schema", schema_id, PLUGIN_SCHEMA))]
    problems: list[LoadProblem] = []
    fatal: list[str] = []
    cleaned = dict(data)
    for error in sorted(_validator("plugin").iter_errors(data), key=_error_order):
        location = list(error.absolute_path)
        if not location and error.validator == "additionalProperties":
            continue  # each unknown field is reported below
        if location == ["extensions"] and error.validator == "type":
            cleaned.pop("extensions", None)
            problems.append(LoadProblem(where, "extensions is not an object: ignored (§8.1)"))
            continue
        fatal.append(_explain(error))
    for key in data:
        if key not in MANIFEST_FIELDS:
            cleaned.pop(key, None)
            problems.append(
                LoadProblem(
                    where,
                    f"unknown field {key!r} ignored (plugin.json allows only "
                    f"{', '.join(MANIFEST_FIELDS)}; client data belongs under extensions)",
                )
            )
    if fatal:
        return None, [_rejected(where, "; ".join(dict.fromkeys(fatal)))]
    return cleaned, problems


def _rejected(where: str, why: str) -> LoadProblem:
    return LoadProblem(where, f"invalid Agent Plugin manifest, plugin not loaded: {why}")


def _unsupported(key: str, value: Any, expected: str) -> str:
    match = _SCHEMA_ID.match(value) if isinstance(value, str) else None
    wanted = _SCHEMA_ID.match(expected)
    if match is not None and wanted is not None and match["kind"] == wanted["kind"]:
        return (
            f"{key} targets Agent Plugins {match['version']}, which tui-agent does not support "
            f"(it reads {VERSION}: {expected})"
        )
    return f"{key} must be {expected}, not {json.dumps(value)}"


def _error_order(error: Any) -> tuple[str, ...]:
    return tuple(str(part) for part in error.absolute_path)


def _field(error: Any) -> str:
    text = ""
    for part in error.absolute_path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _explain(error: Any) -> str:
    """One schema error as a sentence naming the field."""
    where = _field(error)
    value = error.instance
    subject = where or "the document"
    if (
        where == "name"
        and isinstance(value, str)
        and error.validator
        in (
            "pattern",
            "minLength",
            "maxLength",
        )
    ):
        return f"name {value!r} must be {NAME_RULE}"
    if where == "cwd" and error.validator == "pattern":
        return (
            f"cwd {value!r} must start with ./, ${{PLUGIN_ROOT}} or ${{PLUGIN_DATA}} "
            "(a path in the plugin or in its data folder)"
        )
    if error.validator == "required":
        missing = re.findall(r"'([^']+)' is a required property", error.message)
        field_name = missing[0] if missing else error.message
        return f"{where + '.' if where else ''}{field_name} is required"
    if error.validator == "type":
        kind = error.validator_value
        article = "an" if kind in ("object", "array") else "a"
        return f"{subject} must be {article} {kind}, not {json.dumps(value)}"
    if error.validator == "additionalProperties" and isinstance(value, dict):
        known = list(error.schema.get("properties", {}))
        unknown = [key for key in value if key not in known]
        fields = ", ".join(repr(key) for key in unknown)
        plural = "s" if len(unknown) > 1 else ""
        return f"{subject} has unknown field{plural} {fields} (allowed: {', '.join(known)})"
    if error.validator == "not" and where == "env":
        return f"env must not set {value} (the client sets PLUGIN_ROOT and PLUGIN_DATA, §9.2)"
    if error.validator == "minLength" and value == "":
        return f"{subject} must not be empty"
    if error.validator == "const":
        return f"{subject} must be {json.dumps(error.validator_value)}, not {json.dumps(value)}"
    return f"{subject}: {error.message}"


# -- mcp.json -------------------------------------------------------------------------------


def read_servers(
    plugin: AgentPlugin, path: Path
) -> tuple[list[PluginServer], int, list[LoadProblem]]:
    """The valid servers of ``mcp.json``, how many it declares, and the problems (§7.2.2:
    a bad file disables MCP for the plugin; a bad server is skipped, the others kept)."""
    where = str(path)
    if not _inside(path, plugin.root):
        return [], 0, [LoadProblem(where, "resolves outside the plugin folder: MCP not used")]
    if not path.is_file():
        return [], 0, [LoadProblem(where, "is not a file: MCP not used")]
    data, problem = _read_json(path)
    if problem is not None:
        return [], 0, [LoadProblem(problem.path, f"{problem.error}: MCP not used")]
    if not isinstance(data, dict):
        return [], 0, [LoadProblem(where, "must be a JSON object: MCP not used")]
    if "$schema" not in data:
        return [], 0, [LoadProblem(where, f"$schema is missing ({MCP_SCHEMA}): MCP not used")]
    schema_id = data["$schema"]
    if schema_id != MCP_SCHEMA:
        match = _SCHEMA_ID.match(schema_id) if isinstance(schema_id, str) else None
        if match is not None and match["kind"] == "mcp":
            why = (
                f"$schema targets Agent Plugins {match['version']} but plugin.json targets "
                f"{VERSION} (they must match, §10.1)"
            )
        else:
            why = _unsupported("$schema", schema_id, MCP_SCHEMA)
        return [], 0, [LoadProblem(where, f"{why}: MCP not used")]
    outline = dict(data)  # each server is checked on its own below
    if isinstance(outline.get("mcpServers"), dict):
        outline["mcpServers"] = {}
    top = [_explain(error) for error in _validator("mcp").iter_errors(outline)]
    if top:
        return [], 0, [LoadProblem(where, f"{'; '.join(top)}: MCP not used")]
    servers: list[PluginServer] = []
    problems: list[LoadProblem] = []
    declared = data["mcpServers"]
    for name, raw in declared.items():
        try:
            servers.append(read_server(plugin, str(name), raw, where))
        except ValueError as exc:
            problems.append(LoadProblem(where, f"server {name!r} skipped: {exc}"))
    return servers, len(declared), problems


def read_server(plugin: AgentPlugin, name: str, raw: Any, origin: str) -> PluginServer:
    """One ``mcpServers`` entry against ``#/$defs/server`` and §7.2.1, §9; ValueError says
    what is wrong."""
    kind = raw.get("type") if isinstance(raw, dict) else None
    if not isinstance(raw, dict):
        raise ValueError(f"must be an object, not {json.dumps(raw)}")
    if kind not in ("stdio", "streamable-http", "sse"):
        shown = "missing" if kind is None else json.dumps(kind)
        raise ValueError(f"type is {shown}; it must be stdio, streamable-http or sse")
    variant = {"stdio": "stdioServer", "streamable-http": "streamableHttpServer"}.get(
        kind, "sseServer"
    )
    errors = _server_errors(variant, json.dumps(raw, sort_keys=True))
    if errors:
        raise ValueError("; ".join(errors))
    server = PluginServer(plugin=plugin.name, name=name, kind=kind, origin=origin)
    if kind == "stdio":
        _stdio(plugin, server, raw)
    else:
        _remote(server, raw)
    return server


def expand(value: str, root: Path, data: Path) -> str:
    """§9.2: every exact ``${PLUGIN_ROOT}`` and ``${PLUGIN_DATA}``, in one pass (what a
    replacement brings in is not scanned again); anything else stays as written."""
    table = {"${PLUGIN_ROOT}": str(root), "${PLUGIN_DATA}": str(data)}
    return re.sub(r"\$\{PLUGIN_(?:ROOT|DATA)\}", lambda m: table[m.group(0)], value)


def _stdio(plugin: AgentPlugin, server: PluginServer, raw: dict[str, Any]) -> None:
    root, data = plugin.root, plugin.data_dir
    command: str = raw["command"]
    if command.startswith("./"):
        target = root / command[2:]
        if not _inside(target, root):
            raise ValueError(f"command {command!r} resolves outside the plugin folder")
        if not target.is_file():
            raise ValueError(f"command {command!r} is not a file in the plugin ({target})")
        if not os.access(target, os.X_OK):
            raise ValueError(f"command {command!r} is not executable (chmod +x {target})")
        server.command = str(target)
    elif "/" in command or "\\" in command:
        raise ValueError(
            f"command {command!r} must be a bare executable name (found on PATH) or a path "
            "in the plugin starting with ./"
        )
    else:
        found = shutil.which(command)
        if found is None:
            hint = " (one executable; its arguments go in args)" if " " in command else ""
            raise ValueError(f"command {command!r} is not found on PATH{hint}")
        server.command = found
    server.args = [expand(arg, root, data) for arg in raw.get("args", [])]
    env = {key: expand(value, root, data) for key, value in raw.get("env", {}).items()}
    env.update(PLUGIN_ROOT=str(root), PLUGIN_DATA=str(data))
    server.env = env
    cwd = raw.get("cwd")
    if cwd is None:
        server.cwd = str(root)
        return
    if cwd.startswith("${PLUGIN_DATA}"):
        base = data
    else:
        base = root
    expanded = expand(cwd, root, data)
    target = base / expanded[2:] if cwd.startswith("./") else Path(expanded)
    if not _inside(target, base):
        inside = "its data folder" if base == data else "the plugin folder"
        raise ValueError(f"cwd {cwd!r} resolves outside {inside}")
    if base == root and not target.is_dir():  # a data folder's is made when the server starts
        raise ValueError(f"cwd {cwd!r} is not a folder in the plugin ({target})")
    server.cwd = str(_resolved(target))


def _remote(server: PluginServer, raw: dict[str, Any]) -> None:
    url: str = raw["url"]
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"url {url!r} must be an absolute http or https URL")
    if "@" in parts.netloc:
        raise ValueError(f"url {url!r} must not carry user information")
    if "#" in url:
        raise ValueError(f"url {url!r} must not have a fragment")
    if parts.scheme == "http" and not _loopback(parts.hostname):
        raise ValueError(
            f"url {url!r} must use https (plain http only for localhost or a loopback address)"
        )
    headers: dict[str, str] = raw.get("headers", {})
    seen: dict[str, str] = {}
    for key, value in headers.items():
        if not _HEADER_NAME.match(key):
            raise ValueError(f"header name {key!r} is not a valid HTTP header name")
        if not _HEADER_VALUE.match(value):
            raise ValueError(f"header {key!r} has a value that is not a valid HTTP header value")
        if key.lower() in seen:
            raise ValueError(f"header {key!r} is given twice (also as {seen[key.lower()]!r})")
        seen[key.lower()] = key
    server.url = url
    server.headers = dict(headers)


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


# -- shared ---------------------------------------------------------------------------------


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path.absolute()


def _inside(path: Path, root: Path) -> bool:
    """§4.1: ``path`` resolved (symlinks followed) stays within the resolved ``root``."""
    return _resolved(path).is_relative_to(_resolved(root))


def _read_json(path: Path) -> tuple[Any, LoadProblem | None]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeError) as exc:
        return None, LoadProblem(str(path), f"cannot be read ({exc})")
    try:
        return json.loads(text), None
    except json.JSONDecodeError as exc:
        return None, LoadProblem(f"{path}:{exc.lineno}", f"not valid JSON: {exc.msg}")


def schema_file(kind: str) -> Path:
    """The shipped schema, ``plugin`` or ``mcp``."""
    return SCHEMA_ROOT / VERSION / f"{kind}.schema.json"


@cache
def _schema(kind: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(schema_file(kind).read_text(encoding="utf-8"))
    return data


@lru_cache(maxsize=512)
def _server_errors(variant: str, entry: str) -> tuple[str, ...]:
    """A server entry's schema errors, explained (cached by its JSON: each load reads every
    plugin again, and the skills and mcp plugins both read them)."""
    errors = _validator("mcp", variant).iter_errors(json.loads(entry))
    return tuple(_explain(error) for error in sorted(errors, key=_error_order))


@cache
def _validator(kind: str, definition: str = "") -> Draft202012Validator:
    """A validator for the shipped schema, or one of its ``$defs``; references resolve
    inside the shipped file only (nothing is retrieved)."""
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

    schema = _schema(kind)
    registry: Registry[Any] = Registry().with_resource(
        schema["$id"], Resource.from_contents(schema)
    )
    target: dict[str, Any] = (
        {"$ref": f"{schema['$id']}#/$defs/{definition}"} if definition else schema
    )
    return Draft202012Validator(target, registry=registry)


# -- trust ----------------------------------------------------------------------------------


def project_files(project: Path) -> list[Path]:
    """A project's Agent Plugins are project code (they start processes): each
    ``plugin.json`` and ``mcp.json`` under ``.agents/plugins/*/``."""
    found: list[Path] = []
    for scope, folder in plugin_folders(project):
        if scope != "project":
            continue
        for root in _candidates(folder):
            found.append(root / "plugin.json")
            if (root / "mcp.json").is_file():
                found.append(root / "mcp.json")
    return found


workspace_module.register_project_code(project_files, order=12)
