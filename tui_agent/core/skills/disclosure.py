"""Progressive disclosure, as the Agent Skills client guide lays it out: the catalog
(each model-invocable skill's name and description) goes in the ``skill`` tool's
description, not the system prompt, so a session without skills pays nothing and the
catalog and the way to load a skill sit together; loading one gives its instructions
wrapped in ``<skill_content>``, its folder (absolute: ``read`` and ``execute`` use it) and
its files listed, not read.

What a compaction does to keep a loaded skill in front of the model is here too
(``carry``): a pruned ``skill`` result gets its content back, and one summarised away
(or a ``/name`` prompt summarised away) goes at the end of the summary. And the user's
``/name ARGS``: the content with the arguments put in by Claude Code's rules
(``$ARGUMENTS``, ``$ARGUMENTS[N]``, ``$N``; with no placeholder, ``ARGUMENTS: …`` added).
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ..protocol.messages import AssistantMessage, Message, ToolMessage, UserMessage
from ..protocol.result import Result
from .reading import FILE, Skill

TOOL = "skill"
ALIASES = ("Skill", "activate_skill")  # Claude Code's and Gemini CLI's names for it
NAMES = frozenset({TOOL, *ALIASES})
MAX_RESOURCES = 50  # files listed in a loaded skill's result
MAX_DEPTH = 4
CHARS_PER_TOKEN = 4  # the session's estimate (conversation.compaction)
KEPT_NOTE = "kept whole through a compaction"
CARRIED = "Skills loaded earlier in this conversation (still in use):"
INTRO = (
    "Load a skill: instructions for one kind of task, with scripts and references in its "
    "folder. When the task matches a skill's description, load it first and follow it. "
    "Skills:"
)
_SKIPPED = frozenset({".git", "node_modules", "__pycache__"})
_PLACEHOLDER = re.compile(r"\$(?:ARGUMENTS\[(\d+)\]|(ARGUMENTS)\b|(\d+))")


def catalog_line(skill: Skill) -> str:
    return f"- {skill.name}: {skill.description}"


def tool_description(skills: Iterable[Skill]) -> str:
    """The ``skill`` tool's description: how to use it, then one line per skill."""
    return "\n".join([INTRO, *(catalog_line(skill) for skill in skills)])


def parameters(skills: Sequence[Skill]) -> dict[str, Any]:
    """The tool's parameters: ``name``, one of the skills' names (an enum: the model
    cannot make one up)."""
    return {
        "name": {
            "type": "string",
            "enum": [skill.name for skill in skills],
            "description": "The skill to load",
        }
    }


def catalog_tokens(skills: Sequence[Skill]) -> int:
    """About what the ``skill`` tool's definition (description and the enum of names)
    costs in every request; 0 with no skill for the model (no tool then)."""
    if not skills:
        return 0
    definition = {
        "type": "function",
        "function": {
            "name": TOOL,
            "description": tool_description(skills),
            "parameters": {
                "type": "object",
                "properties": parameters(skills),
                "required": ["name"],
            },
        },
    }
    return (len(json.dumps(definition)) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def resources(folder: Path, limit: int = MAX_RESOURCES) -> tuple[list[str], int]:
    """The skill's files (relative, sorted, ``SKILL.md`` and dot files left out) up to
    ``limit``, and how many more there are (``MAX_DEPTH`` folders deep at most)."""
    found: list[str] = []
    more = 0
    base = len(folder.parts)
    for root, dirs, files in os.walk(folder):
        depth = len(Path(root).parts) - base
        dirs[:] = sorted(
            d for d in dirs if not d.startswith(".") and d not in _SKIPPED and depth < MAX_DEPTH
        )
        for name in sorted(files):
            if name.startswith(".") or (depth == 0 and name == FILE):
                continue
            if len(found) < limit:
                found.append(Path(root, name).relative_to(folder).as_posix())
            else:
                more += 1
    return found, more


def content(skill: Skill, body: str | None = None) -> str:
    """What the model gets when ``skill`` is loaded (``body``: its instructions as they go,
    arguments put in; the skill's own by default)."""
    files, more = resources(skill.folder)
    lines = [
        f'<skill_content name="{skill.name}">',
        (skill.body if body is None else body).strip(),
        "",
        f"Skill directory: {skill.folder}",
        "Relative paths in this skill are relative to the skill directory: use absolute "
        "paths in tool calls.",
    ]
    if files:
        lines += ["", "<skill_resources>", *(f"  <file>{name}</file>" for name in files)]
        if more:
            lines.append(f"  ({more} more files not listed)")
        lines.append("</skill_resources>")
    lines.append("</skill_content>")
    return "\n".join(lines)


def opening(name: str) -> str:
    return f'<skill_content name="{name}">'


def result(skill: Skill, note: str = "") -> dict[str, Any]:
    """The ``skill`` tool's result for ``skill``."""
    data: dict[str, Any] = {"output": content(skill)}
    if note:
        data["note"] = note
    return data


def already_loaded(skill: Skill) -> dict[str, Any]:
    return {
        "output": f"The skill {skill.name} is already loaded in this conversation (its "
        f"instructions are above; its folder is {skill.folder}): follow them."
    }


def with_arguments(body: str, arguments: str) -> str:
    """``body`` with ``arguments`` put in by Claude Code's rules: ``$ARGUMENTS`` everything
    typed, ``$ARGUMENTS[N]`` and ``$N`` the word at index N from 0 (split as a shell would;
    past the last word: empty, and ``$N`` kept as written); with no placeholder, the
    arguments are added after the body as ``ARGUMENTS: …``."""
    arguments = arguments.strip()
    used = list(_PLACEHOLDER.finditer(body))
    if not used:
        return f"{body.rstrip()}\n\nARGUMENTS: {arguments}" if arguments else body
    try:
        words = shlex.split(arguments)
    except ValueError:
        words = arguments.split()

    def value(match: re.Match[str]) -> str:
        indexed, whole, short = match.groups()
        if whole:
            return arguments
        position = int(indexed or short)
        if position >= len(words):
            return match.group(0) if short else ""
        return words[position]

    return _PLACEHOLDER.sub(value, body)


def prompt(skill: Skill, arguments: str) -> str:
    """What ``/name ARGS`` sends: the skill's content with the arguments in it."""
    return content(skill, with_arguments(skill.body, arguments))


# -- the conversation ------------------------------------------------------------------------


def _skill_calls(messages: Sequence[Message]) -> dict[str, str]:
    """Call id → the skill a ``skill`` call (any of its names) asked for."""
    calls: dict[str, str] = {}
    for message in messages:
        if not isinstance(message, AssistantMessage):
            continue
        for call in message.calls:
            if call.name not in NAMES:
                continue
            try:
                args = json.loads(call.arguments or "{}")
            except ValueError:
                continue
            name = args.get("name") if isinstance(args, dict) else None
            if isinstance(name, str):
                calls[call.id] = name
    return calls


def loaded_names(messages: Sequence[Message]) -> list[str]:
    """The skills ``messages`` show loaded (a ``skill`` result, whole or pruned, or a
    ``/name`` prompt), in the order they were first loaded."""
    calls = _skill_calls(messages)
    names: list[str] = []
    for message in messages:
        if isinstance(message, ToolMessage):
            name = calls.get(message.call_id)
            ok = message.result.ok and "already loaded" not in str(message.result.get("output"))
            if name is not None and ok and name not in names:
                names.append(name)
        elif isinstance(message, UserMessage):
            for found in re.finditer(r'<skill_content name="([^"]+)">', message.text):
                if found.group(1) not in names:
                    names.append(found.group(1))
    return names


def held(messages: Sequence[Message], name: str) -> bool:
    """Whether ``messages`` hold the skill's content whole (a ``skill`` result not pruned,
    a ``/name`` prompt, or a summary that carries it)."""
    calls = _skill_calls(messages)
    tag = opening(name)
    for message in messages:
        if isinstance(message, ToolMessage) and calls.get(message.call_id) == name:
            if message.result.ok and not message.result.get("pruned"):
                if tag in str(message.result.get("output")):
                    return True
        elif isinstance(message, UserMessage) and tag in message.text:
            return True
    return False


def carry(messages: list[Message], skills: Sequence[Skill]) -> list[Message]:
    """``messages`` (a compaction's result) changed so the model still has each of
    ``skills`` (those loaded in the conversation): the newest pruned ``skill`` result of
    one not held whole elsewhere gets the content back; one summarised away goes at the
    end of the summary. A valid transcript stays one (nothing is added or moved)."""
    if not skills:
        return messages
    kept = list(messages)
    missing: list[Skill] = []
    for skill in skills:
        if held(kept, skill.name):
            continue
        calls = _skill_calls(kept)
        index = next(
            (
                i
                for i in range(len(kept) - 1, -1, -1)
                if isinstance(kept[i], ToolMessage)
                and calls.get(kept[i].call_id) == skill.name  # type: ignore[attr-defined]
                and kept[i].result.get("pruned")  # type: ignore[attr-defined]
            ),
            None,
        )
        if index is None:
            missing.append(skill)
            continue
        old = kept[index]
        assert isinstance(old, ToolMessage)
        kept[index] = ToolMessage(old.call_id, Result(result(skill, KEPT_NOTE)))
    if missing:
        for index, message in enumerate(kept):
            if isinstance(message, UserMessage) and message.origin == "summary":
                block = "\n\n".join([CARRIED, *(content(skill) for skill in missing)])
                kept[index] = UserMessage(f"{message.text}\n\n{block}", origin="summary")
                break
    return kept
