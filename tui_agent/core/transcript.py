"""The transcript: the conversation and its journal, kept in step.

Every message recorded goes to the conversation (what the next request sends) and to the
journal (flushed at once, so ``--continue`` finds it after a crash).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import journal as journal_module
from . import messages
from .conversation import Conversation
from .result import Result


class Transcript:
    def __init__(self, session_id: str, directory: Path, on_failure: Callable[[str], None]):
        self.directory = directory
        self._on_failure = on_failure
        self.conversation = Conversation()
        self.journal = journal_module.Journal(session_id, directory, on_failure)

    def record(self, message: dict[str, Any]) -> None:
        """Append a message to the conversation and the journal (flushed at once)."""
        self.conversation.append(message)
        self.journal.append(message)

    def request(self, system_prompt: str) -> list[dict[str, Any]]:
        """What the next request sends: the system prompt, then every message."""
        return [{"role": "system", "content": system_prompt}, *self.conversation.messages]

    def close_open_calls(self, reason: str) -> None:
        """Answer the calls the last assistant message left open with an error saying
        ``reason`` (a cancelled turn, an interrupted session), so the transcript stays one
        the API accepts."""
        for call_id, name in self.conversation.open_calls():
            self.record(messages.tool(call_id, Result({"error": reason, "name": name})))

    def new_journal(self, session_id: str) -> None:
        """Later messages go to the journal of ``session_id`` (the old one is closed)."""
        self.journal.close()
        self.journal = journal_module.Journal(session_id, self.directory, self._on_failure)
