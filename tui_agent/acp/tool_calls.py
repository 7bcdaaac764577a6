"""A tool call as an editor shows it: its kind (read, edit, execute, search, fetch…), a
title, the files it touches (``locations``: the editor can follow along), and when it
ends its status and content: an edit or a write as a diff of the whole file, a command's
output as text, other results as their JSON.

A diff needs the file as it was: ``Calls.started`` reads it before the call runs (the
event comes before the tool does) and ``Calls.finished`` reads it again after."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from acp import schema

from ..core.protocol import events as ev

KINDS: dict[str, schema.ToolKind] = {
    "read": "read",
    "list": "read",
    "skill": "read",
    "write": "edit",
    "edit": "edit",
    "glob": "search",
    "grep": "search",
    "execute": "execute",
    "git": "execute",
    "todo": "think",
    "task": "think",
    "fetch": "fetch",
    "web_search": "fetch",
}
EDITS = ("write", "edit")
DIFF_LIMIT = 1024 * 1024  # a file bigger than this is not sent whole as a diff
OUTPUT_LIMIT = 20_000  # characters of a result shown in the editor (the model got it all)


def kind(name: str) -> schema.ToolKind:
    return KINDS.get(name, "other")


def _short(text: Any, width: int = 60) -> str:
    words = " ".join(str(text).split())
    return words if len(words) <= width else words[: width - 1] + "…"


def title(name: str, args: dict[str, Any] | None) -> str:
    """What the call does, in a few words: ``Read src/app.py``, ``Run `pytest -q```."""
    args = args or {}
    path = args.get("path")
    if name == "read":
        return f"Read {path}" if path else "Read"
    if name in ("write", "edit"):
        return f"{name.capitalize()} {path}" if path else name.capitalize()
    if name == "list":
        return f"List {path or '.'}"
    if name == "execute":
        return f"Run `{_short(args.get('command', ''))}`"
    if name == "git":
        words = args.get("args")
        words = " ".join(map(str, words)) if isinstance(words, list) else words or ""
        return f"git {_short(words)}"
    if name in ("grep", "glob"):
        where = f" in {path}" if path else ""
        return f"{name} {_short(args.get('pattern', ''), 40)}{where}"
    if name == "task":
        return f"Task: {_short(args.get('description') or args.get('prompt', ''))}"
    if name == "todo":
        return "Update the todo list"
    if name == "fetch":
        return f"Fetch {_short(args.get('url', ''))}"
    return name


def _absolute(directory: Path, path: Any) -> Path | None:
    if not isinstance(path, str) or not path:
        return None
    target = Path(os.path.expanduser(path))
    return target if target.is_absolute() else directory / target


def locations(
    directory: Path, name: str, args: dict[str, Any] | None
) -> list[schema.ToolCallLocation] | None:
    path = _absolute(directory, (args or {}).get("path"))
    if path is None:
        return None
    line = (args or {}).get("offset") if name == "read" else None
    line = line if isinstance(line, int) and not isinstance(line, bool) and line > 0 else None
    return [schema.ToolCallLocation(path=str(path), line=line)]


def _text_of(path: Path) -> str | None:
    try:
        if not path.is_file() or path.stat().st_size > DIFF_LIMIT:
            return None
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _block(text: str) -> schema.ContentToolCallContent:
    if len(text) > OUTPUT_LIMIT:
        text = "…" + text[-OUTPUT_LIMIT:]
    return schema.ContentToolCallContent(
        type="content", content=schema.TextContentBlock(type="text", text=text)
    )


class Calls:
    """The calls of one session in flight: what their start saw, for their end."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._before: dict[str, tuple[Path, str | None]] = {}  # call id -> file, old text
        self.written: dict[str, tuple[str | None, str]] = {}  # by the editor: old, new text

    def started(self, event: ev.ToolCallStarted) -> schema.ToolCallStart:
        name = event.name
        args = event.args
        shown = title(name, args)
        if event.parent:
            shown = f"[{event.agent}] {shown}"
        if name in EDITS:
            path = _absolute(self.directory, (args or {}).get("path"))
            if path is not None:
                self._before[event.call_id] = (path, _text_of(path))
        return schema.ToolCallStart(
            session_update="tool_call",
            tool_call_id=event.call_id,
            title=shown,
            kind=kind(name),
            status="pending",
            locations=locations(self.directory, name, args),
            raw_input=args if args is not None else event.arguments,
        )

    def finished(self, event: ev.ToolCallFinished) -> schema.ToolCallProgress:
        result = event.result
        data = dict(result)
        content: list[Any] = []
        before = self._before.pop(event.call_id, None)
        written = self.written.pop(event.call_id, None)
        if result.ok and before is not None:
            path, old = before
            new = _text_of(path)
            if written is not None:  # the editor's buffer, before and after
                old, new = written
            if new is not None:
                content.append(
                    schema.FileEditToolCallContent(
                        type="diff", path=str(path), old_text=old, new_text=new
                    )
                )
        if not result.ok:
            content.append(_block(str(result.error)))
        elif event.name == "execute" or ("output" in data and isinstance(data["output"], str)):
            output = data.get("output") or ""
            status = data.get("exit_status")
            tail = f"\n\nexit status {status}" if status not in (None, 0) else ""
            if output or tail:
                content.append(_block(f"```\n{output.rstrip()}\n```{tail}"))
        elif not content and event.name not in ("read", "todo"):
            shown = {k: v for k, v in data.items() if k != "ok"}
            if shown:
                text = json.dumps(shown, ensure_ascii=False, indent=2, default=str)
                content.append(_block(f"```json\n{text}\n```"))
        return schema.ToolCallProgress(
            session_update="tool_call_update",
            tool_call_id=event.call_id,
            status="completed" if result.ok else "failed",
            content=content or None,
            raw_output=data,
        )
