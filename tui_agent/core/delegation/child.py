"""A subagent's transcript: its own conversation (the next request is built from it
alone), each message also written to the session's journal as a ``subagent`` record, so
the child's whole run is kept with the call it answered and shown again on resume."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..conversation import journal as journal_module
from ..conversation.conversation import Conversation
from ..protocol.messages import Message, SystemMessage

RECORD = journal_module.SUBAGENT
child_records = journal_module.child_records  # the runs a journal holds (read on resume)


class ChildTranscript:
    """``write(record)``: where the child's records go (the session's journal)."""

    def __init__(self, call_id: str, agent: str, write: Callable[[Mapping[str, Any]], None]):
        self.call_id = call_id
        self.agent = agent
        self.conversation = Conversation()
        self._write = write

    def record(self, message: Mapping[str, Any]) -> Message:
        typed = self.conversation.append(message)
        self._write(
            {
                "type": RECORD,
                "call": self.call_id,
                "agent": self.agent,
                "message": journal_module.written(typed),
            }
        )
        return typed

    def replace(self, messages: Sequence[Mapping[str, Any]], info: Mapping[str, Any]) -> None:
        """A compaction of the child's conversation (its budget's): recorded beside its
        messages, which stay in the journal."""
        self.conversation.replace(messages)
        written = [journal_module.written(m) for m in self.conversation.messages]
        self._write(
            {
                "type": f"{RECORD}_compaction",
                "call": self.call_id,
                "agent": self.agent,
                **info,
                "messages": written,
            }
        )

    def request(self, system_prompt: str) -> list[Message]:
        return [SystemMessage(system_prompt), *self.conversation.messages]

    def close_open_calls(self, reason: str) -> None:
        for answer in self.conversation.open_call_answers(reason):
            self.record(answer)
