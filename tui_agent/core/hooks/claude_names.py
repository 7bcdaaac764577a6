"""Claude Code's names for tui-agent's tools, their arguments and their results, both ways,
so a hook script written for Claude Code reads what it expects (``command_hooks.py``).

One table per direction: ``claude_input`` gives a call's arguments in Claude's names
(``path`` → ``file_path``, absolute but never normalised: a ``..`` stays for a validator
to see), ``our_input`` maps an ``updatedInput`` written in Claude's names back, and
``claude_response`` gives a result in the fields Claude's tools return (``filePath``,
``stdout``…). Fields with no Claude counterpart are kept under tui-agent's name. A tool
with no Claude name keeps its own (an MCP tool goes by its ``mcp__server__tool`` alias).

``rule_matches`` decides a hook's ``"if"``: Claude's permission-rule syntax
(``Bash(git commit:*)``, ``Edit(*.ts)``, ``mcp__github``).
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..agents.tool_names import CLAUDE_TOOLS

# Claude Code's tool names and the tool each means here (a matcher may use either); the
# agent files' table too
CLAUDE_TOOL_NAMES = CLAUDE_TOOLS
CLAUDE_NAME = {
    "execute": "Bash",
    "read": "Read",
    "write": "Write",
    "edit": "Edit",
    "glob": "Glob",
    "grep": "Grep",
    "list": "LS",
    "fetch": "WebFetch",
    "task": "Task",
    "todo": "TodoWrite",
    "skill": "Skill",
}
MCP_PREFIX = "mcp__"
# ours → Claude's, per tool, for the fields that are only renamed
_RENAMED: dict[str, dict[str, str]] = {
    "read": {"path": "file_path"},
    "write": {"path": "file_path"},
    "edit": {"path": "file_path", "old": "old_string", "new": "new_string"},
    "grep": {"include": "glob", "ignore_case": "-i"},
    "task": {"agent": "subagent_type"},
}
_DROPPED: dict[str, tuple[str, ...]] = {  # Claude's fields with nothing to become here
    "execute": ("description", "run_in_background", "dangerouslyDisableSandbox"),
    "grep": ("output_mode", "-n", "-A", "-B", "-C", "type", "head_limit", "multiline"),
    "list": ("ignore",),
}
_LINE_NUMBER = re.compile(r"^ *\d+\t", re.MULTILINE)


def claude_name(
    tool: str, args: Mapping[str, Any] | None = None, aliases: Iterable[str] = ()
) -> str:
    """The tool's name in Claude Code: ``Bash`` for ``execute``, ``MultiEdit`` for an
    ``edit`` with ``edits``, an MCP tool's ``mcp__`` alias, else its own name."""
    if tool == "edit" and args is not None and "edits" in args:
        return "MultiEdit"
    if tool in CLAUDE_NAME:
        return CLAUDE_NAME[tool]
    for alias in aliases:
        if alias.startswith(MCP_PREFIX):
            return alias
    return tool


def absolute(path: str, cwd: Path) -> str:
    """``path`` made absolute against ``cwd``; ``..`` is kept (never normalised)."""
    return str(cwd / Path(path).expanduser())


def claude_input(tool: str, args: Mapping[str, Any], cwd: Path) -> dict[str, Any]:
    """The call's arguments under Claude's names (a copy; unknown fields kept)."""
    shown: dict[str, Any] = {}
    renamed = _RENAMED.get(tool, {})
    for key, value in args.items():
        shown[renamed.get(key, key)] = value
    if tool in ("read", "write", "edit") and isinstance(args.get("path"), str):
        shown["file_path"] = absolute(args["path"], cwd)
    if tool in ("glob", "grep", "list") and isinstance(args.get("path"), str):
        shown["path"] = absolute(args["path"], cwd)
    if tool == "list" and "path" not in shown:
        shown["path"] = str(cwd)
    if tool == "edit" and isinstance(args.get("edits"), list):
        shown["edits"] = [_claude_edit(e) for e in args["edits"]]
    if tool == "execute" and _number(args.get("timeout")):
        shown["timeout"] = round(float(args["timeout"]) * 1000)  # Claude: milliseconds
    if tool == "grep":
        shown["output_mode"] = "content"  # ours gives the matching lines, numbered
        shown["-n"] = True
    return shown


def _claude_edit(edit: Any) -> Any:
    if not isinstance(edit, Mapping):
        return edit
    renamed = _RENAMED["edit"]
    return {renamed.get(key, key): value for key, value in edit.items()}


def _our_edit(edit: Any) -> Any:
    if not isinstance(edit, Mapping):
        return edit
    back = {claude: ours for ours, claude in _RENAMED["edit"].items()}
    return {back.get(key, key): value for key, value in edit.items()}


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def our_input(
    tool: str, updated: Mapping[str, Any], args: Mapping[str, Any], sent: Mapping[str, Any]
) -> dict[str, Any]:
    """An ``updatedInput`` (Claude's names, or ours) as this tool's arguments. A path the
    hook left as it was sent keeps the call's own spelling (relative stays relative)."""
    back = {claude: ours for ours, claude in _RENAMED.get(tool, {}).items()}
    new: dict[str, Any] = {}
    for key, value in updated.items():
        if key in _DROPPED.get(tool, ()):
            continue
        new[back.get(key, key)] = value
    if "path" in new and new["path"] == sent.get("file_path", sent.get("path")):
        if "path" in args:
            new["path"] = args["path"]
        else:
            del new["path"]  # the default folder, which the hook was shown
    if tool == "edit" and isinstance(new.get("edits"), list):
        new["edits"] = [_our_edit(e) for e in new["edits"]]
    if tool == "execute" and _number(new.get("timeout")):
        if new["timeout"] == sent.get("timeout") and "timeout" in args:
            new["timeout"] = args["timeout"]
        else:
            new["timeout"] = new["timeout"] / 1000  # Claude's milliseconds, our seconds
    return new


def claude_response(
    tool: str, args: Mapping[str, Any], result: Mapping[str, Any], cwd: Path
) -> dict[str, Any]:
    """The result in the fields Claude's tool gives (``tool_response``), with tui-agent's
    own fields that have no Claude counterpart kept beside them."""
    response = dict(result)
    failed = "error" in result
    if tool == "execute":
        response.pop("output", None)
        response.update(
            stdout=str(result.get("output", "")),  # ours merges stderr into stdout
            stderr="",
            interrupted="timed out" in str(result.get("error", "")),
            isImage=False,
        )
    elif tool in ("read", "write", "edit") and isinstance(args.get("path"), str):
        file_path = absolute(args["path"], cwd)
        response.pop("path", None)
        response["filePath"] = file_path
        response["success"] = not failed
        if tool == "read" and not failed and "content" in result:
            content = _LINE_NUMBER.sub("", str(result["content"]))
            lines = content.count("\n") + 1 if content else 0
            response.pop("content", None)
            response["type"] = "text"
            response["file"] = {
                "filePath": file_path,
                "content": content,
                "numLines": lines,
                "startLine": int(args.get("offset") or 1),
                "totalLines": result.get("total_lines", lines),
            }
        elif tool == "write" and not failed:
            response["type"] = "create" if result.get("created") else "update"
            response["content"] = args.get("content", "")
        elif tool == "edit" and not failed:
            if isinstance(args.get("edits"), list):
                response["edits"] = [_claude_edit(e) for e in args["edits"]]
            else:
                response.update(
                    oldString=args.get("old", ""),
                    newString=args.get("new", ""),
                    replaceAll=bool(args.get("replace_all", False)),
                )
    elif tool == "glob" and not failed:
        root = Path(absolute(args["path"], cwd)) if isinstance(args.get("path"), str) else cwd
        files = [str(root / name) for name in result.get("files", [])]
        response.update(
            filenames=files,
            numFiles=len(files),
            truncated=int(result.get("count", len(files))) > len(files),
        )
    elif tool == "grep" and not failed:
        matches = [str(line) for line in result.get("matches", [])]
        names = list(dict.fromkeys(line.split(":", 1)[0] for line in matches))
        response.update(
            mode="content",
            content="\n".join(matches),
            numLines=len(matches),
            filenames=names,
            numFiles=len(names),
        )
    return response


# -- "if": Claude's permission-rule syntax ---------------------------------------------------

_RULE = re.compile(r"^\s*([A-Za-z_][\w-]*)\s*(?:\((.*)\))?\s*$", re.DOTALL)
_FILE_TOOLS = ("Read", "Edit", "MultiEdit", "Write")
_SPLIT = re.compile(r"\s*(?:&&|\|\||;|\||\n)\s*")


def rule_problem(rule: Any) -> str | None:
    """Why ``rule`` is not a permission rule this can decide, or None."""
    if not isinstance(rule, str) or not rule.strip():
        return 'must be a permission rule such as "Bash(git commit:*)" (a string)'
    found = _RULE.match(rule)
    if found is None:
        return f"is not a permission rule (Tool or Tool(pattern)): {rule!r}"
    name, pattern = found.group(1), found.group(2)
    if pattern is not None and name.startswith(MCP_PREFIX):
        return f"an MCP rule takes no pattern: {rule!r}"
    if pattern is not None and name in ("WebFetch", "WebSearch", "Task", "Agent"):
        return f"{name}(...) rules are not decided here: {rule!r}"
    return None


def rule_matches(rule: str, tool: str, claude: str, sent: Mapping[str, Any], cwd: Path) -> bool:
    """Whether a call (our ``tool``, its ``claude`` name, ``sent``: its arguments in
    Claude's names) fits ``rule``. ``Bash(prefix:*)`` matches commands that start with
    the prefix, ``*`` elsewhere in a Bash rule matches anything, and each part of a
    compound command (``&&``, ``||``, ``;``, ``|``) is tried; a file tool's pattern is
    gitignore-like on ``file_path`` (``*.ts`` at any depth, ``src/**`` under the project,
    ``//abs`` absolute, ``~/`` home). ``mcp__server`` matches every tool of that server."""
    found = _RULE.match(rule)
    if found is None:
        return False
    name, pattern = found.group(1), found.group(2)
    if name.startswith(MCP_PREFIX):
        return claude == name or claude.startswith(name + "__")
    if name not in (claude, tool) and CLAUDE_TOOL_NAMES.get(name) != tool:
        return False
    if pattern is None or pattern.strip() in ("", "*"):
        return True
    if tool == "execute":
        command = str(sent.get("command", ""))
        parts = [command.strip(), *(p for p in _SPLIT.split(command) if p)]
        return any(_command_fits(pattern.strip(), part) for part in parts)
    if name in _FILE_TOOLS or tool in ("read", "write", "edit"):
        path = sent.get("file_path")
        return isinstance(path, str) and _path_fits(pattern.strip(), path, cwd)
    value = sent.get("path", sent.get("pattern", ""))
    return fnmatch.fnmatchcase(str(value), pattern.strip())


def _command_fits(pattern: str, command: str) -> bool:
    if pattern.endswith(":*"):
        prefix = pattern[:-2]
        return command == prefix or command.startswith(prefix)
    if "*" in pattern:
        regex = ".*".join(re.escape(piece) for piece in pattern.split("*"))
        return re.fullmatch(regex, command, re.DOTALL) is not None
    return command == pattern


def _path_fits(pattern: str, path: str, cwd: Path) -> bool:
    if pattern.startswith("//"):
        anchored = pattern[1:]
    elif pattern.startswith("~/"):
        anchored = os.path.expanduser(pattern)
    elif pattern.startswith("/") or "/" in pattern.rstrip("/"):
        anchored = str(cwd / pattern.lstrip("/").removeprefix("./"))
    else:  # a bare name pattern: at any depth
        return _glob(pattern, os.path.basename(path))
    return _glob(anchored, path)


def _glob(pattern: str, text: str) -> bool:
    regex = ""
    index = 0
    while index < len(pattern):
        if pattern.startswith("**/", index):
            regex += "(?:.*/)?"
            index += 3
        elif pattern.startswith("**", index):
            regex += ".*"
            index += 2
        elif pattern[index] == "*":
            regex += "[^/]*"
            index += 1
        elif pattern[index] == "?":
            regex += "[^/]"
            index += 1
        else:
            regex += re.escape(pattern[index])
            index += 1
    return re.fullmatch(regex, text) is not None
