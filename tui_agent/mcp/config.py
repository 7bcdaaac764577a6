"""A server's configuration: ``[mcp.servers.NAME]`` and a ``.mcp.json`` read into a
checked ``Spec`` (``parse_spec``, ``read_mcp_json``, ``${VAR}`` substituted), and the
names its tools get (``tool_name``, Claude Code's ``claude_name``).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_STARTUP_TIMEOUT = 30.0
DEFAULT_TIMEOUT = 120.0
VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class ConfigError(ValueError):
    pass


# -- config -------------------------------------------------------------------------------


def substitute(value: str, where: str, fallback: dict[str, str] | None = None) -> str:
    """``${VAR}`` (and ``${VAR:-default}``) from the environment (then ``fallback``: a
    ``.mcp.json``'s ``CLAUDE_PROJECT_DIR``); unset without a default is an error naming
    the variable."""

    def replace(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        found = os.environ.get(name)
        if found is None and fallback:
            found = fallback.get(name)
        if found is not None and (found or default is None):
            return found
        if default is not None:
            return default
        raise ConfigError(f"{where}: ${{{name}}} is not set in the environment")

    return VAR.sub(replace, value)


TYPES = ("stdio", "http", "sse")


@dataclass
class Spec:
    """One ``[mcp.servers.NAME]`` table (or a ``.mcp.json`` server), checked and with
    ``${VAR}`` substituted. ``kind``: stdio, http (streamable HTTP) or sse."""

    kind: str = "stdio"
    command: str | None = None
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT
    timeout: float = DEFAULT_TIMEOUT
    origin: str = ""  # the .mcp.json it comes from ("" for config.toml)

    @property
    def transport(self) -> str:
        if self.url:
            return f"{self.kind} {self.url}"
        return "stdio " + " ".join([self.command or "", *self.args]).strip()


def _strings(value: Any, where: str, fallback: dict[str, str] | None = None) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str | int | float) for v in value):
        raise ConfigError(f"{where} must be a list of strings")
    return [substitute(str(v), where, fallback) for v in value]


def _table(value: Any, where: str, fallback: dict[str, str] | None = None) -> dict[str, str]:
    if not isinstance(value, dict) or not all(
        isinstance(v, str | int | float | bool) for v in value.values()
    ):
        raise ConfigError(f"{where} must be a table of strings")
    return {str(k): substitute(str(v), f"{where}.{k}", fallback) for k, v in value.items()}


def _seconds(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ConfigError(f"{where} must be a positive number of seconds")
    return float(value)


def parse_spec(name: str, raw: Any, where: str = "", project: Path | None = None) -> Spec:
    """Check one server. ``project``: it comes from that folder's ``.mcp.json`` (Claude
    Code's format): it runs in that folder, and ``${CLAUDE_PROJECT_DIR}`` is that folder
    when the environment does not say otherwise."""
    where = where or f"mcp.servers.{name}"
    fallback = {"CLAUDE_PROJECT_DIR": str(project)} if project is not None else None
    if not isinstance(raw, dict):
        raise ConfigError(f"{where} must be a table")
    command, url, kind = raw.get("command"), raw.get("url"), raw.get("type")
    if kind is not None and kind not in TYPES:
        raise ConfigError(f"{where}.type must be one of stdio, http, sse, not {kind!r}")
    if kind is None:
        if bool(command) == bool(url):
            raise ConfigError(f"{where} needs either command (stdio) or url (streamable HTTP)")
        kind = "stdio" if command else "http"
    if kind == "stdio" and not command:
        raise ConfigError(f"{where} needs command (a stdio server)")
    if kind != "stdio" and not url:
        raise ConfigError(f"{where} needs url (type {kind})")
    spec = Spec(kind=kind, origin=str(project / ".mcp.json") if project is not None else "")
    if kind == "stdio":
        if not isinstance(command, str):
            raise ConfigError(f"{where}.command must be a string")
        spec.command = substitute(command, f"{where}.command", fallback)
        spec.args = _strings(raw.get("args", []), f"{where}.args", fallback)
        spec.env = _table(raw.get("env", {}), f"{where}.env", fallback)
        if project is not None:
            spec.env.setdefault("CLAUDE_PROJECT_DIR", str(project))
            spec.cwd = str(project)
        if raw.get("cwd") is not None:
            if not isinstance(raw["cwd"], str):
                raise ConfigError(f"{where}.cwd must be a string")
            spec.cwd = substitute(raw["cwd"], f"{where}.cwd", fallback)
    else:
        if not isinstance(url, str):
            raise ConfigError(f"{where}.url must be a string")
        spec.url = substitute(url, f"{where}.url", fallback)
        spec.headers = _table(raw.get("headers", {}), f"{where}.headers", fallback)
    if "startup_timeout" in raw:
        spec.startup_timeout = _seconds(raw["startup_timeout"], f"{where}.startup_timeout")
    if "timeout" in raw:
        spec.timeout = _seconds(raw["timeout"], f"{where}.timeout")
    return spec


def read_mcp_json(path: Path) -> tuple[dict[str, Any], str | None]:
    """The ``mcpServers`` of a project's ``.mcp.json`` (Claude Code's project MCP servers),
    or a problem with the file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeError, ValueError) as exc:
        return {}, f"{path}: not valid JSON ({exc})"
    servers = data.get("mcpServers", {}) if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        return {}, f"{path}: mcpServers must be an object of servers"
    return servers, None


def tool_name(server: str, tool: str) -> str:
    """``<server>_<tool>`` as OpenAI accepts function names: [A-Za-z0-9_-], at most 64."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", f"{server}_{tool}")[:64]


def claude_name(server: str, tool: str) -> str:
    """Claude Code's name for the tool, ``mcp__<server>__<tool>`` (characters outside
    [A-Za-z0-9_-] become ``_``): registered as the tool's alias, so permission rules, hook
    matchers and hook payloads written for Claude Code find it."""

    def clean(text: str) -> str:
        return re.sub(r"[^A-Za-z0-9_-]", "_", text)

    return f"mcp__{clean(server)}__{clean(tool)}"
