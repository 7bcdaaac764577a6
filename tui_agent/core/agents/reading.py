"""One agent file read: its YAML front matter in the dialect of the folder it is in
(tui-agent's, Claude Code's, opencode's or Gemini CLI's) turned into an
``AgentDefinition``, with what could not be honoured said as problems (``file:line:
message``) or notes.

What each dialect reads (everything else is ignored):

- Claude Code: ``name``, ``description``, ``tools`` (a comma list, or a YAML list, of its
  tool names; absent: every tool), ``disallowedTools``, ``model`` (``sonnet``, ``opus``,
  ``haiku``, ``inherit``), ``maxTurns``.
- opencode: ``description``, ``mode``, ``model`` (``provider/model``), ``temperature``,
  ``tools`` (a map of names or globs to true/false over every tool), ``permission``
  (``deny`` takes a tool away), ``maxSteps``/``steps``, ``disable``; the name is the
  file's stem.
- Gemini CLI: ``name``, ``description``, ``kind`` (``local``), ``tools`` (a list; ``*``,
  ``mcp_*``, ``mcp_SERVER_*``), ``model``, ``temperature``, ``max_turns``.
- tui-agent's own: ``name``, ``description``, ``tools`` (a list, a comma list or a map,
  of tui-agent's names; a peer's names are understood too), ``model``, ``temperature``,
  ``mode``, ``max_steps``, ``delegate`` (true: the agent's children may start children).

A tool name that means nothing here, or has no counterpart, is a problem naming the file
and line; the agent loads without it. A file whose front matter cannot be read, or
without a description, is a problem and no agent.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..util import front_matter
from . import tool_names as names
from .definitions import MODES, AgentDefinition

MAX_FILE_BYTES = 256 * 1024
_GLOB = re.compile(r"[*?\[]")
_RULE = re.compile(r"^\s*([A-Za-z_][\w-]*)\s*\((.*)\)\s*$")
_NAME = re.compile(r"^[A-Za-z0-9][\w.-]*$")
CLAUDE_ALIASES = ("sonnet", "opus", "haiku", "opusplan", "default")
# every name of tui-agent's own tools and their aliases, each to the tool's name
KNOWN = {**{name: name for name in names.BUILT_IN}, **names.OUR_ALIASES}


class AgentFileError(Exception):
    """The file is not an agent: the message says why (with its line)."""


@dataclass
class Reading:
    """What reading one file found: the agent (or None), its problems and notes."""

    path: Path
    lines: list[str]
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def line(self, key: str, item: str | None = None) -> int:
        """The file's line (from 1) of ``key`` in the front matter, or of ``item`` after it."""
        found = 0
        for number, text in enumerate(self.lines, start=1):
            if number > 1 and text.strip() == "---":
                break
            if not found and re.match(rf"\s*['\"]?{re.escape(key)}['\"]?\s*:", text):
                found = number
                if item is None or item in text.split(":", 1)[1]:
                    return number
            elif found and item is not None and item in text:
                return number
        return found or 1

    def problem(self, key: str, message: str, item: str | None = None) -> None:
        self.problems.append(f"{self.path}:{self.line(key, item)}: {message}")


def read_agent(
    path: Path,
    *,
    dialect: str,
    source: str,
    known: Mapping[str, str] = KNOWN,
    providers: Collection[str] = ("openai",),
) -> tuple[AgentDefinition | None, Reading]:
    """The agent ``path`` holds, read in ``dialect``; None (with a problem) when it is not
    one. ``known``: the names (and aliases) of tui-agent's tools, each to its tool's name
    (its own dialect names them; a name outside them is a problem); ``providers``:
    the providers configured here (an agent's ``provider/model`` elsewhere falls back to
    the session's model, with a note)."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise AgentFileError(f"1: larger than {MAX_FILE_BYTES // 1024} KB: not an agent file")
        text = path.read_text(encoding="utf-8")
        reading = Reading(path, text.splitlines())
        front, body, _ = front_matter.split(text, "an agent file starts with a --- block")
        data, _ = front_matter.load(front)
    except front_matter.FrontMatterError as exc:
        failed = Reading(path, [])
        failed.problems.append(f"{path}:{exc}")
        return None, failed
    except AgentFileError as exc:
        failed = Reading(path, [])
        failed.problems.append(f"{path}:{exc}")
        return None, failed
    except (OSError, UnicodeDecodeError) as exc:
        failed = Reading(path, [])
        failed.problems.append(f"{path}:1: could not be read: {exc}")
        return None, failed
    agent = _build(reading, data, body, dialect, source, known, providers)
    return agent, reading


def _build(
    reading: Reading,
    data: dict[str, Any],
    body: str,
    dialect: str,
    source: str,
    known: Mapping[str, str],
    providers: Collection[str],
) -> AgentDefinition | None:
    path = reading.path
    name = data.get("name") if dialect != "opencode" else None
    if name is None:
        name = path.stem
    if not isinstance(name, str) or not _NAME.match(name):
        reading.problem("name", f"the name {name!r} must be letters, digits, '-', '_' or '.'")
        return None
    description = data.get("description")
    if not isinstance(description, str) or not description.strip():
        reading.problem("description", "no description: the model could not know when to use it")
        return None
    if dialect == "gemini" and data.get("kind", "local") != "local":
        reading.problem("kind", f"kind {data.get('kind')!r}: only local agents run here")
        return None
    if dialect == "opencode" and data.get("disable") is True:
        reading.notes.append(f"{path}: disabled (disable: true)")
        return None
    tools, denied = _TOOLS[dialect](reading, data, known)
    if dialect == "opencode":
        denied += _opencode_permissions(reading, data.get("permission"))
    for tool in tools or ():
        if tool not in known and not _GLOB.search(tool) and not tool.startswith(names.MCP_PREFIX):
            reading.notes.append(f"{tool} is not a tool here unless a plugin adds it")
    mode = data.get("mode", "all" if dialect == "opencode" else "subagent")
    if mode not in MODES:
        reading.problem("mode", f"mode {mode!r} is not one of {', '.join(MODES)}: subagent used")
        mode = "subagent"
    delegate = data.get("delegate")
    if delegate is not None and not isinstance(delegate, bool):
        reading.problem("delegate", "delegate must be true or false")
        delegate = None
    can_delegate = delegate if delegate is not None else "task" in (tools or ())
    raw_model = data.get("model")
    model = _model(reading, raw_model, dialect, providers)  # before notes: it may add one
    return AgentDefinition(
        name=name,
        description=description.strip(),
        instructions=body,
        tools=tools,
        model=model,
        temperature=_number(reading, data, "temperature"),
        mode=mode,
        max_steps=_steps(reading, data),
        can_delegate=can_delegate,
        source=source,
        path=path,
        dialect=dialect,
        notes=tuple(reading.notes),
        denied=tuple(dict.fromkeys(denied)),
        requested_model=raw_model if isinstance(raw_model, str) else None,
    )


# -- tools -----------------------------------------------------------------------------------


def _words(reading: Reading, data: dict[str, Any], key: str) -> list[str] | None:
    """A comma list or a YAML list of names; None when the key is absent."""
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        return [word.strip() for word in value.split(",") if word.strip()]
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return [item.strip() for item in value if item.strip()]
    reading.problem(key, f"{key} must be a comma list or a list of tool names: ignored")
    return None


def _claude_tool(reading: Reading, key: str, word: str, *, denying: bool) -> str | None:
    if word in names.CLAUDE_TOOLS:
        return names.CLAUDE_TOOLS[word]
    if word.startswith(names.MCP_PREFIX):
        return word if word.count("__") >= 2 else word + "__*"
    rule = _RULE.match(word)
    if rule and rule.group(1) in names.CLAUDE_TOOLS:
        ours = names.CLAUDE_TOOLS[rule.group(1)]
        if denying:
            reading.notes.append(f"{word}: patterns are not kept here: all of {ours} is denied")
            return ours
        reading.problem(
            key,
            f"{word}: a tool limited by a pattern is not supported here, so {ours} is not "
            f"given (write {rule.group(1)} to give all of it)",
            word,
        )
        return None
    if denying:
        return None  # nothing here to take away
    if word in names.CLAUDE_MISSING:
        reading.problem(key, f"Claude Code's {word} has no counterpart here: left out", word)
    else:
        reading.problem(key, f"unknown Claude Code tool {word!r}: left out", word)
    return None


def _claude_tools(
    reading: Reading, data: dict[str, Any], known: Mapping[str, str]
) -> tuple[tuple[str, ...] | None, list[str]]:
    words = _words(reading, data, "tools")
    tools = None
    if words is not None:
        mapped = [_claude_tool(reading, "tools", word, denying=False) for word in words]
        tools = tuple(dict.fromkeys(tool for tool in mapped if tool))
    denied_words = _words(reading, data, "disallowedTools") or []
    denied = [_claude_tool(reading, "disallowedTools", word, denying=True) for word in denied_words]
    return tools, [tool for tool in denied if tool]


def _gemini_tool(reading: Reading, word: str) -> str | None:
    if word == "*":
        return "*"
    if word in names.GEMINI_TOOLS:
        return names.GEMINI_TOOLS[word]
    if word == "mcp_*":
        return names.MCP_PREFIX + "*"
    server = re.fullmatch(r"mcp_(.+)_\*", word)
    if server:
        return f"{names.MCP_PREFIX}{server.group(1)}__*"
    if word in names.GEMINI_MISSING:
        reading.problem("tools", f"Gemini CLI's {word} has no counterpart here: left out", word)
    else:
        reading.problem("tools", f"unknown Gemini CLI tool {word!r}: left out", word)
    return None


def _gemini_tools(
    reading: Reading, data: dict[str, Any], known: Mapping[str, str]
) -> tuple[tuple[str, ...] | None, list[str]]:
    words = _words(reading, data, "tools")
    if words is None:
        return None, []
    mapped = [tool for tool in (_gemini_tool(reading, word) for word in words) if tool]
    if "*" in mapped:
        return None, []
    return tuple(dict.fromkeys(mapped)), []


def _switches(
    reading: Reading, data: dict[str, Any], resolve: Callable[[str], str | None]
) -> tuple[tuple[str, ...] | None, list[str]]:
    """opencode's ``tools`` map: every tool stays on but those set false, unless ``"*":
    false`` turns everything off first (then only those set true are on)."""
    value = data.get("tools")
    if value is None:
        return None, []
    if not isinstance(value, dict):
        reading.problem("tools", "tools must be a map of tool names to true or false: ignored")
        return None, []
    on: list[str] = []
    off: list[str] = []
    everything: bool | None = None
    for key, switch in value.items():
        word = str(key)
        if not isinstance(switch, bool):
            reading.problem("tools", f"{word}: must be true or false", word)
            continue
        if word == "*":
            everything = switch
            continue
        tool = resolve(word)
        if tool is not None:
            (on if switch else off).append(tool)
        elif word in names.OPENCODE_MISSING and not switch:
            reading.notes.append(f"{word}: no counterpart here, nothing to turn off")
        else:
            what = "has no counterpart here" if word in names.OPENCODE_MISSING else None
            reading.problem("tools", f"{word}: {what or 'unknown tool'}: left out", word)
    if everything is False:
        return tuple(dict.fromkeys(on)), off
    return None, off


def _opencode_tool(word: str) -> str | None:
    if word in names.OPENCODE_TOOLS:
        return names.OPENCODE_TOOLS[word]
    if _GLOB.search(word):
        return word  # an MCP server's tools: <server>_<tool> there and here
    return None


def _opencode_tools(
    reading: Reading, data: dict[str, Any], known: Mapping[str, str]
) -> tuple[tuple[str, ...] | None, list[str]]:
    return _switches(reading, data, _opencode_tool)


def _opencode_permissions(reading: Reading, value: Any) -> list[str]:
    """opencode's ``permission``: ``deny`` takes the tools away; ``ask`` and ``allow`` are
    left to the session's own permission rules (said in a note)."""
    if value is None:
        return []
    if not isinstance(value, dict):
        reading.problem("permission", "permission must be a map: ignored")
        return []
    denied: list[str] = []
    for key, rule in value.items():
        tools = names.OPENCODE_PERMISSIONS.get(str(key))
        if tools is None:
            reading.notes.append(f"permission {key}: not applied here")
            continue
        everything = rule.get("*") if isinstance(rule, dict) else rule
        if everything == "deny":
            denied += tools
            if isinstance(rule, dict) and len(rule) > 1:
                reading.notes.append(
                    f"permission {key}: only some uses were allowed: {', '.join(tools)} not given"
                )
        else:
            reading.notes.append(
                f"permission {key}: {rule!r} is left to the session's permission rules"
            )
    return denied


_PEER_TABLES = (names.CLAUDE_TOOLS, names.OPENCODE_TOOLS, names.GEMINI_TOOLS)


def _our_tools(
    reading: Reading, data: dict[str, Any], known: Mapping[str, str]
) -> tuple[tuple[str, ...] | None, list[str]]:
    def resolve(word: str) -> str | None:
        if word in known:
            return known[word]
        for table in _PEER_TABLES:
            if word in table:
                return table[word]
        if word.startswith(names.MCP_PREFIX) or _GLOB.search(word):
            return word
        return None

    if isinstance(data.get("tools"), dict):
        return _switches(reading, data, resolve)
    words = _words(reading, data, "tools")
    if words is None:
        return None, []
    tools: list[str] = []
    for word in words:
        tool = resolve(word)
        if tool is None:
            reading.problem("tools", f"unknown tool {word!r}: left out", word)
        elif tool == "*":
            return None, []
        else:
            tools.append(tool)
    return tuple(dict.fromkeys(tools)), []


_TOOLS = {
    "claude": _claude_tools,
    "opencode": _opencode_tools,
    "gemini": _gemini_tools,
    "tui-agent": _our_tools,
}


# -- model, numbers ---------------------------------------------------------------------------


def _model(reading: Reading, value: Any, dialect: str, providers: Collection[str]) -> str | None:
    """The model to run the agent on, or None for the session's. A model of a provider not
    configured here (opencode's ``anthropic/…``, Claude Code's ``sonnet``, Gemini CLI's
    ``gemini-…``) falls back to the session's, with a note."""
    if value is None or value == "inherit" or value == "":
        return None
    if not isinstance(value, str):
        reading.problem("model", "model must be a string: the session's model is used")
        return None
    provider, _, model = value.partition("/")
    if model:
        if provider in providers:
            return model
        owner: str | None = provider
    elif dialect == "claude" and (value in CLAUDE_ALIASES or value.startswith("claude-")):
        owner = "anthropic"
    elif dialect == "gemini" and value.startswith("gemini-"):
        owner = "google"
    else:
        return value
    if owner in providers:
        return value
    reading.notes.append(f"model {value} not configured here ({owner}): uses the session's model")
    return None


def _number(reading: Reading, data: dict[str, Any], key: str) -> float | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        reading.problem(key, f"{key} must be a number: ignored")
        return None
    return float(value)


def _steps(reading: Reading, data: dict[str, Any]) -> int | None:
    for key in ("max_steps", "maxSteps", "steps", "max_turns", "maxTurns"):
        value = data.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            reading.problem(key, f"{key} must be a whole number above 0: ignored")
            return None
        return value
    return None
