"""A skill's ``allowed-tools``: the spec's "pre-approved tools" (experimental), in Claude
Code's permission-rule syntax: ``Read``, ``Bash``, ``Bash(git:*)``, ``Bash(npm run *)``,
``Edit(src/**)``, ``mcp__github``. While the skill is in use, a call one of them fits is
not asked about; the permission plugin's deny rules, plan mode and the sandbox still hold
(it only spares the question, as a ``PreToolUse`` hook's "allow" does).

A rule is read into tui-agent's terms once (``read_rule``): the tool it names here (the
caller gives the Claude names table: this layer does not import the agents') and a
pattern in the permission rules' syntax (``git *`` for ``git:*``). A call fits when it is
that tool and *every* part of it fits the pattern: each simple command of a compound
``execute`` command (``git status && rm -rf x`` is not ``git *``), and none of them a
script the shell reads from a file or stdin (``bash x.sh``, ``… | sh``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

MCP_PREFIX = "mcp__"
_RULE = re.compile(r"^\s*([A-Za-z_][\w-]*)\s*(?:\((.*)\))?\s*$", re.DOTALL)
PATH_TOOLS = ("read", "write", "edit")


@dataclass(frozen=True)
class Part:
    """One part of a call as the permission rules see it (``subjects_for``): a simple
    command, or a path relative to the worktree; ``opaque``: a shell reading a script."""

    text: str
    opaque: bool = False


@dataclass(frozen=True)
class Rule:
    """One ``allowed-tools`` word read: ``word`` as written, the ``tool`` it names here
    (or an MCP prefix, ``mcp__server__``), and ``pattern`` in the permission rules'
    syntax (``*``: every call)."""

    word: str
    tool: str
    pattern: str = "*"
    anywhere: bool = False  # a bare file name pattern: matched against the path's last part

    def fits(
        self,
        tool: str,
        aliases: Iterable[str],
        parts: Sequence[Part],
        matches: Callable[[str, str], bool],
    ) -> bool:
        """Whether a call of ``tool`` (its ``aliases``; ``parts``: its subjects) fits;
        ``matches(pattern, subject)``: the permission rules' matcher."""
        names = {tool, *aliases}
        if self.tool.startswith(MCP_PREFIX):
            if not any(n == self.tool.rstrip("_") or n.startswith(self.tool) for n in names):
                return False
        elif self.tool not in names:
            return False
        if self.pattern == "*":
            return True
        return bool(parts) and all(
            not part.opaque and matches(self.pattern, self._shown(part.text)) for part in parts
        )

    def _shown(self, text: str) -> str:
        return text.rstrip("/").rsplit("/", 1)[-1] if self.anywhere else text


def _command_pattern(pattern: str) -> str:
    """Claude's ``git:*`` (a prefix, at a word's end) → ``git *``, which the permission
    rules' matcher also lets match a bare ``git``."""
    pattern = pattern.strip()
    if pattern.endswith(":*"):
        return pattern[:-2].rstrip() + " *"
    return pattern


def _path_rule(word: str, tool: str, pattern: str) -> Rule:
    """Claude's path patterns → a pattern on the path relative to the worktree: ``//abs``
    absolute, ``~/`` the home folder, ``/x`` and ``./x`` from the project's top (``*``
    crosses folders in these patterns); a bare ``*.ts`` or ``Makefile`` at any depth."""
    pattern = pattern.strip()
    if pattern.startswith("//"):
        return Rule(word, tool, pattern[1:])
    if pattern.startswith("~/"):
        return Rule(word, tool, os.path.expanduser(pattern))
    if pattern.startswith(("./", "/")):
        return Rule(word, tool, pattern.lstrip("/").removeprefix("./"))
    if "/" not in pattern.rstrip("/"):
        return Rule(word, tool, pattern, anywhere=True)
    return Rule(word, tool, pattern)


def read_rule(word: str, claude_names: Mapping[str, str], ours: Iterable[str]) -> Rule | str:
    """The rule ``word`` is, or why it cannot be one here (a note). ``claude_names``:
    Claude Code's tool names → ours; ``ours``: the session's tool names and aliases."""
    found = _RULE.match(word)
    if found is None:
        return f"{word}: not a tool name or Tool(pattern)"
    name, pattern = found.group(1), found.group(2)
    if name.startswith(MCP_PREFIX):
        if pattern is not None:
            return f"{word}: an MCP tool takes no pattern"
        return Rule(word, name if name.count("__") >= 2 else name + "__")
    tool = claude_names.get(name) or (name if name in set(ours) else None)
    if tool is None:
        return f"{word}: no such tool here"
    if pattern is None or pattern.strip() in ("", "*"):
        return Rule(word, tool)
    if tool == "execute":
        return Rule(word, tool, _command_pattern(pattern))
    if tool in PATH_TOOLS:
        return _path_rule(word, tool, pattern)
    return f"{word}: a pattern on {name} is not decided here (write {name} for all of it)"


def read_rules(
    words: Iterable[str], claude_names: Mapping[str, str], ours: Iterable[str]
) -> tuple[list[Rule], list[str]]:
    """The rules of an ``allowed-tools`` list, and notes on the words left out."""
    known = list(ours)
    rules: list[Rule] = []
    notes: list[str] = []
    for word in words:
        rule = read_rule(word, claude_names, known)
        if isinstance(rule, Rule):
            rules.append(rule)
        else:
            notes.append(rule)
    return rules, notes
