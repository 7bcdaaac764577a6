"""Permission rules (SPEC §6): which tool calls are allowed, asked about or denied.

``[permission]`` in config maps a tool to an action (``allow``/``ask``/``deny``) or to a
table of pattern → action matched against the call's subject; ``"*"`` matches anything
and the last matching pattern wins. A tool without a rule uses the top-level ``"*"``,
then the defaults (read, glob, grep, list, todo allow; everything else ask).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..util.atomic import write_text_atomic
from ..util.paths import AGENT_CONFIG
from ..util.urls import subject as url_subject
from .shell import is_opaque, split_commands

ACTIONS = ("allow", "ask", "deny")
# todo: the model's own list, kept in the session (nothing on disk); task: delegating
# changes nothing (each of the subagent's calls is checked as the session's are)
DEFAULTS: dict[str, str] = {
    "read": "allow",
    "glob": "allow",
    "grep": "allow",
    "list": "allow",
    "todo": "allow",
    "task": "allow",
    "skill": "allow",  # reads a skill's own SKILL.md and lists its folder
}
PATH_TOOLS = frozenset({"read", "write", "edit", "glob", "grep", "list"})
# the web: a fetch's subject is the URL's host (``host:port`` off the scheme's own port)
HOST_TOOLS = frozenset({"fetch"})
# What decides what runs, at any depth: tui-agent's and the other agents' config, plugins,
# tool files, commands and hooks, MCP servers, editor tasks (paths.AGENT_CONFIG, the list the
# sandbox keeps read-only too), and git's internals. Writing there asks even where writing
# is allowed (auto-edit, write = "allow"), unless a rule names them; deny still wins.
PROTECTED = frozenset({*AGENT_CONFIG, ".git"})
_STRICTNESS = {"allow": 0, "ask": 1, "deny": 2}


@lru_cache(maxsize=1024)
def _compile(pattern: str) -> re.Pattern[str]:
    body = ".*".join(re.escape(part) for part in pattern.split("*"))
    if pattern.endswith(" *"):  # "rm *" also matches a bare "rm"
        body = body[: -len(re.escape(" ") + ".*")] + r"(?:\s.*)?"
    return re.compile(body, re.DOTALL)


def matches(pattern: str, subject: str) -> bool:
    return pattern == "*" or _compile(pattern).fullmatch(subject) is not None


@dataclass(frozen=True)
class Verdict:
    action: str
    subject: str
    rule: str
    outside: bool = False


# Permission modes (``session.permissions.mode``), the first three in the order Shift+Tab
# cycles them; allow-all comes only from --yes or /permissions mode allow-all, never one
# key away
MODES = ("ask", "auto-edit", "plan", "allow-all")
CYCLE = ("ask", "auto-edit", "plan")


@dataclass(frozen=True)
class Subject:
    text: str
    outside: bool = False
    opaque: bool = False
    protected: bool = False


class Rules:
    """The rules in force: defaults, then config (``permission`` table), then session allows."""

    def __init__(
        self,
        table: Mapping[str, Any] | None = None,
        session_allows: Mapping[str, list[str]] | None = None,
    ) -> None:
        self.table: dict[str, Any] = dict(table or {})
        self.session_allows = {k: list(v) for k, v in (session_allows or {}).items()}

    def problems(self) -> list[str]:
        found = []
        for tool, rule in self.table.items():
            values = rule.values() if isinstance(rule, Mapping) else [rule]
            for value in values:
                if value not in ACTIONS:
                    found.append(f"permission.{tool}: {value!r} is not one of allow, ask, deny")
        return found

    def rules_for(self, tool: str, names: Sequence[str] = ()) -> list[tuple[Any, str]]:
        """The rules that apply to a tool known as ``tool`` and ``names`` (its aliases, such
        as an MCP tool's Claude name ``mcp__server__tool``), most specific first: the keys
        naming it (any of its names); else the keys that are patterns of names
        (``mcp__git__*``, or Claude's server rule ``mcp__git``); else ``"*"``; else the
        default. A rule for the tool's own name comes before one for an alias."""
        every = list(dict.fromkeys([tool, *names]))
        exact = [(self.table[n], f"permission.{_key(n)}") for n in every if n in self.table]
        if exact:
            return exact
        patterns = [
            (rule, f"permission.{_key(str(key))}")
            for key, rule in self.table.items()
            if str(key) != "*" and any(_names_tool(str(key), n) for n in every)
        ]
        if patterns:
            return patterns
        if "*" in self.table:
            return [(self.table["*"], 'permission."*"')]
        return [(DEFAULTS.get(tool, "ask"), f"default for {tool}")]

    def rule_for(self, tool: str, names: Sequence[str] = ()) -> tuple[Any, str]:
        return self.rules_for(tool, names)[0]

    def check(self, tool: str, subject: Subject, names: Sequence[str] = ()) -> Verdict:
        """The verdict for one subject. When several rules apply (the tool's names each
        have one, or several name patterns match), every rule that decides the call counts
        and the strictest wins; a table none of whose patterns matches decides nothing."""
        found: list[tuple[str, str, bool]] = []
        fallback: tuple[str, str, bool] | None = None
        for rule, where in self.rules_for(tool, names):
            if isinstance(rule, Mapping):
                chosen = None
                for pattern, value in rule.items():
                    if matches(str(pattern), subject.text):
                        chosen = (str(pattern), str(value))
                if chosen is None:
                    if fallback is None:
                        default = "ask" if tool not in DEFAULTS else DEFAULTS[tool]
                        top = self.table.get("*") if where != 'permission."*"' else None
                        action = str(top) if isinstance(top, str) else default
                        fallback = (action, f"{where}: no pattern matched", False)
                    continue
                explicit = chosen[0] != "*" and (
                    tool not in PATH_TOOLS or _names(chosen[0], subject)
                )
                label = f"{where} {json.dumps(chosen[0])} = {json.dumps(chosen[1])}"
                found.append((chosen[1], label, explicit))
            else:
                action = str(rule)
                label = (
                    f"{where} = {json.dumps(action)}" if not where.startswith("default") else where
                )
                found.append((action, label, False))
        if found:
            action, label, explicit = max(
                found, key=lambda item: _STRICTNESS.get(item[0], _STRICTNESS["ask"])
            )
        else:
            assert fallback is not None
            action, label, explicit = fallback
        if action not in ACTIONS:
            action = "ask"
            label += " (not a valid action: asking)"
        if subject.outside and action == "allow" and not explicit:
            action, label = "ask", f"{subject.text} is outside the worktree"
        if subject.protected and action == "allow" and not explicit:
            action, label = (
                "ask",
                f"{subject.text} changes what runs "
                "(agent config, plugins, tools, hooks, MCP servers, git)",
            )
        if subject.opaque and action == "allow" and not explicit:
            action, label = (
                "ask",
                "a shell reading a script or stdin: its commands can't be checked",
            )
        if action == "ask" and any(
            matches(p, subject.text)
            for p in self.session_allows.get(tool, [])
            if (not subject.outside or p.startswith(("/", "~")))
            and (not subject.protected or _names(p, subject))
        ):
            action, label = "allow", "allowed for this session"
        return Verdict(action, subject.text, label, subject.outside)

    def check_all(
        self, tool: str, subjects: list[Subject], names: Sequence[str] = ()
    ) -> list[Verdict]:
        return [self.check(tool, s, names) for s in subjects]

    def hidden(self, tool: str, names: Sequence[str] = ()) -> bool:
        """Denied outright (for ``*``): such a tool is not offered to the model at all."""
        for rule, _ in self.rules_for(tool, names):
            if isinstance(rule, Mapping):
                if bool(rule) and all(v == "deny" for v in rule.values()):
                    return True
            elif rule == "deny":
                return True
        return False


def _names_tool(key: str, name: str) -> bool:
    """Does a ``[permission]`` key that is not a tool's own name cover the tool ``name``?
    A pattern of names (``mcp__git__*``, ``git_*``), or Claude Code's rule for a whole MCP
    server (``mcp__git`` covers ``mcp__git__status``)."""
    if "*" in key:
        return matches(key, name)
    return key.startswith("mcp__") and "__" not in key[5:] and name.startswith(key + "__")


def _names(pattern: str, subject: Subject) -> bool:
    """Does a path pattern name this path rather than catch it by a wildcard? ``*.py``
    names no path outside the worktree (a pattern starting with ``/`` or ``~`` does) and
    no file in a protected folder (a pattern with that folder in it does)."""
    if subject.outside and not pattern.startswith(("/", "~")):
        return False
    return not subject.protected or any(part in PROTECTED for part in pattern.split("/"))


def strictest(verdicts: list[Verdict]) -> str:
    return max((v.action for v in verdicts), key=lambda a: _STRICTNESS[a], default="allow")


def path_subject(path: str, directory: Path, worktree: Path) -> Subject:
    """A path relative to the worktree, or absolute (and flagged) when outside it."""
    target = Path(os.path.expanduser(path or "."))
    if not target.is_absolute():
        target = directory / target
    resolved = Path(os.path.normpath(target))
    try:
        resolved = resolved.resolve()
    except OSError:
        pass
    try:
        relative = resolved.relative_to(worktree.resolve())
    except ValueError:
        return Subject(str(resolved), outside=True)
    text = relative.as_posix()
    return Subject("." if text in ("", ".") else text)


def subjects_for(
    tool: str, args: Mapping[str, Any], directory: Path, worktree: Path
) -> list[Subject]:
    if tool == "execute":
        command = args.get("command")
        if not isinstance(command, str):
            return [Subject("*")]
        parts = split_commands(command) or [command.strip()]
        found = [Subject(p, opaque=is_opaque(p)) for p in parts]
        workdir = args.get("workdir")
        if isinstance(workdir, str) and workdir:
            where = path_subject(workdir, directory, worktree)
            if where.outside:
                found = [Subject(s.text, True, s.opaque) for s in found]
        return found
    if tool in PATH_TOOLS:
        path = args.get("path")
        subject = path_subject(path if isinstance(path, str) else ".", directory, worktree)
        if tool in ("write", "edit") and not subject.outside:
            if any(part in PROTECTED for part in subject.text.split("/")):
                return [Subject(subject.text, protected=True)]
        return [subject]
    if tool in HOST_TOOLS:
        return [Subject(url_subject(args.get("url")))]
    return [Subject("*")]


def session_pattern(tool: str, subject: str) -> str:
    """What "allow for this session" adds: ``git commit *`` for a command, the path's folder
    for files, the host for fetch, ``*`` for other tools."""
    if tool == "execute":
        words = subject.split()
        if not words:
            return "*"
        keep = (
            words[:2]
            if len(words) > 1 and re.fullmatch(r"[A-Za-z][\w.:-]*", words[1])
            else words[:1]
        )
        return " ".join(keep) + " *"
    if tool in PATH_TOOLS:
        if subject in (".", "*"):
            return subject
        parent = subject.rsplit("/", 1)[0] if "/" in subject else ""
        return f"{parent}/*" if parent else "*"
    if tool in HOST_TOOLS:
        return subject
    return "*"


# -- writing "always allow" rules -----------------------------------------------------------

_HEADER = re.compile(r"^\s*\[\s*([^\]]+?)\s*\]\s*(#.*)?$")


def _key(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else json.dumps(name)


def _section(lines: list[str], name: str) -> tuple[int, int] | None:
    start = None
    for index, line in enumerate(lines):
        header = _HEADER.match(line)
        if header is None or line.lstrip().startswith("[["):
            continue
        title = header.group(1).replace(" ", "")
        if start is not None:
            return start, index
        if title in (name, f'"{name}"'):
            start = index
    return (start, len(lines)) if start is not None else None


def _trailing_comment(line: str) -> str:
    """The ``  # comment`` at the end of a TOML line (outside strings), or ``""``."""
    quote: str | None = None
    index = 0
    while index < len(line):
        char = line[index]
        if quote:
            if char == "\\" and quote == '"':
                index += 1
            elif char == quote:
                quote = None
        elif char in "\"'":
            quote = char
        elif char == "#":
            return "  " + line[index:].rstrip()
        index += 1
    return ""


def with_rule(
    table: Mapping[str, Any], tool: str, pattern: str, action: str = "allow"
) -> dict[str, Any]:
    """A copy of the ``[permission]`` table with ``tool``'s ``pattern`` set to ``action``
    (after the tool's other patterns, so it wins); a plain action for the tool becomes its
    ``"*"`` pattern. ``add_rule`` writes the same rule to a config file."""
    copy = dict(table)
    rule = copy.get(tool)
    patterns = (
        dict(rule) if isinstance(rule, Mapping) else ({"*": rule} if isinstance(rule, str) else {})
    )
    patterns.pop(pattern, None)
    patterns[pattern] = action
    copy[tool] = patterns
    return copy


def add_rule(path: Path, tool: str, pattern: str, action: str = "allow") -> None:
    """Add ``tool."pattern" = action`` to ``[permission]`` in a TOML file, keeping the rest
    of the file as it was. Raises ``ValueError`` when the file cannot be edited safely."""
    import tomllib  # here: the session imports this module before the first frame is drawn

    if action not in ACTIONS:
        raise ValueError(f"not an action: {action!r}")
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path} is not valid TOML ({exc}); fix it first") from None
    table = data.get("permission", {})
    if not isinstance(table, dict):
        raise ValueError(f"{path}: permission is not a table")
    existing = table.get(tool)
    entry = f"{json.dumps(pattern)} = {json.dumps(action)}"
    lines = text.splitlines()
    sub = _section(lines, f"permission.{tool}")
    if sub is not None:
        start, end = sub
        same = re.compile(rf"^\s*{re.escape(json.dumps(pattern))}\s*=")
        bare = re.compile(rf"^\s*'{re.escape(pattern)}'\s*=")
        found = next(
            (i for i in range(start + 1, end) if same.match(lines[i]) or bare.match(lines[i])), None
        )
        if found is not None:
            lines[found] = entry
        else:
            while end > start + 1 and not lines[end - 1].strip():
                end -= 1
            lines.insert(end, entry)
    else:
        section = _section(lines, "permission")
        if section is None:
            if "permission" in data:
                raise ValueError(f"{path}: edit the permission table by hand (inline form)")
            if lines and lines[-1].strip():
                lines.append("")
            lines += ["[permission]", f"{_key(tool)} = {{ {entry} }}"]
        else:
            start, end = section
            key_line = re.compile(
                rf"^\s*({re.escape(_key(tool))}|{re.escape(json.dumps(tool))})\s*="
            )
            found = next((i for i in range(start + 1, end) if key_line.match(lines[i])), None)
            if found is None:
                while end > start + 1 and not lines[end - 1].strip():
                    end -= 1
                lines.insert(end, f"{_key(tool)} = {{ {entry} }}")
            elif isinstance(existing, (str, dict)):
                rule = {"*": existing} if isinstance(existing, str) else dict(existing)
                rule[pattern] = action
                comment = _trailing_comment(lines[found])
                inline = ", ".join(f"{json.dumps(k)} = {json.dumps(v)}" for k, v in rule.items())
                lines[found] = f"{_key(tool)} = {{ {inline} }}" + comment
            else:
                raise ValueError(f"{path}: permission.{tool} has an unexpected form")
    new_text = "\n".join(lines) + "\n"
    check = tomllib.loads(new_text).get("permission", {}).get(tool)
    if not (isinstance(check, dict) and check.get(pattern) == action):
        raise ValueError(f"could not add the rule to {path} safely; add it by hand: {entry}")
    write_text_atomic(path, new_text)
