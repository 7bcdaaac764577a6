"""The session's conversation as a Claude Code transcript, for hooks' ``transcript_path``.

Claude Code's transcript is JSON lines, one entry per message: ``{"type": "user" |
"assistant", "message": {"role": ..., "content": [blocks]}, "uuid", "parentUuid",
"sessionId", "cwd", "timestamp"}``, where an assistant message's blocks are ``text`` and
``tool_use`` (Claude's tool names and input) and a tool's answer is a user message with a
``tool_result`` block. Lines are compact JSON as Claude writes them (``"role":"assistant"``
with no space: scripts grep for that).

It lives in ``<user data dir>/claude-transcripts/<session id>.jsonl`` (beside, not among,
the journals in ``sessions/``) and is brought in step with the conversation before every
hook runs: new messages are appended; a conversation that changed otherwise (``/clear``,
``/undo``, a compaction, a resume) is written anew.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..protocol.messages import AssistantMessage, Message, ToolMessage, UserMessage, parse_arguments
from ..util import paths
from .claude_names import claude_input, claude_name

log = logging.getLogger("tui_agent.claude_transcript")
_NAMESPACE = uuid.UUID("6f1c1f9e-5b7e-4c8e-9d7a-2a3c4b5d6e7f")


def transcripts_dir() -> Path:
    return paths.user_data_dir() / "claude-transcripts"


class ClaudeTranscript:
    """One session's Claude-format transcript file, kept in step by ``sync``."""

    def __init__(self) -> None:
        self.path: Path | None = None
        self._written: list[Message] = []
        self._last_uuid: str | None = None

    def sync(
        self,
        session_id: str,
        messages: Sequence[Message],
        cwd: Path,
        aliases: Callable[[str], Sequence[str]],
    ) -> Path:
        """Write what is new in ``messages`` (or all of them, when what was written is no
        longer their beginning); returns the file's path. Never raises: a failure is logged
        and the hook gets the path all the same."""
        path = transcripts_dir() / f"{session_id}.jsonl"
        written = self._written
        fresh = (
            path != self.path
            or len(messages) < len(written)
            or any(a is not b for a, b in zip(written, messages, strict=False))
            or not path.exists()
        )
        if fresh:
            written = []
            self._last_uuid = None
        new = messages[len(written) :]
        lines = []
        for index, message in enumerate(new, len(written)):
            entry = self._entry(session_id, index, message, cwd, aliases)
            if entry is not None:
                lines.append(json.dumps(entry, ensure_ascii=False, separators=(",", ":")))
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("w" if fresh else "a", encoding="utf-8") as handle:
                handle.writelines(line + "\n" for line in lines)
        except OSError:
            log.warning("could not write the Claude transcript %s", path, exc_info=True)
            self.path, self._written = None, []
            return path
        self.path = path
        self._written = list(messages)
        return path

    def _entry(
        self,
        session_id: str,
        index: int,
        message: Message,
        cwd: Path,
        aliases: Callable[[str], Sequence[str]],
    ) -> dict[str, Any] | None:
        content: list[dict[str, Any]]
        if isinstance(message, UserMessage):
            kind, role = "user", "user"
            content = [{"type": "text", "text": message.text}]
        elif isinstance(message, AssistantMessage):
            kind, role = "assistant", "assistant"
            content = [{"type": "text", "text": message.text}] if message.text else []
            for call in message.calls:
                value, _ = parse_arguments(call.arguments)
                args = value if isinstance(value, dict) else {}
                content.append(
                    {
                        "type": "tool_use",
                        "id": call.id,
                        "name": claude_name(call.name, args, aliases(call.name)),
                        "input": claude_input(call.name, args, cwd),
                    }
                )
        elif isinstance(message, ToolMessage):
            kind, role = "user", "user"
            text = message.get("content")
            content = [
                {
                    "type": "tool_result",
                    "tool_use_id": message.call_id,
                    "content": text if isinstance(text, str) else json.dumps(text),
                    "is_error": message.result.error is not None,
                }
            ]
        else:
            return None  # the system prompt: Claude's transcript does not hold it
        entry_uuid = str(uuid.uuid5(_NAMESPACE, f"{session_id}:{index}"))
        entry: dict[str, Any] = {
            "parentUuid": self._last_uuid,
            "isSidechain": False,
            "userType": "external",
            "cwd": str(cwd),
            "sessionId": session_id,
            "type": kind,
            "message": {"role": role, "content": content},
            "uuid": entry_uuid,
            "timestamp": datetime.now(UTC)
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z"),
        }
        if kind == "assistant":
            entry["message"] = {"type": "message", **entry["message"]}
        self._last_uuid = entry_uuid
        return entry


def _now() -> str:
    """An ISO 8601 UTC time as Claude writes it (``2025-01-01T12:00:00.000Z``)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
