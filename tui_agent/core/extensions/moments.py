"""A session's moments that plugins may act on besides tool calls: a prompt submitted, a
turn about to end, a conversation starting, a compaction about to run, a subagent about
to finish, the session ending. The command hooks (``command_hooks.py``) are built on them;
any plugin can register the same way (``session.on("prompt" | "stop" | "start" |
"compact" | "subagent_stop" | "end", fn)``).

Registrations belong to one load, like ``on_turn``: ``Extensions`` clears them when a load
is replaced. What they add to the conversation says where it came from: a prompt with
their context keeps the prompt as typed (``UserMessage.prompt``), and their feedback is a
``"continuation"`` (``UserMessage.origin``), so ``/undo`` finds the prompt a turn was typed
as without reading the message's text.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..protocol.messages import (
    CONTEXT_CLOSE,
    CONTEXT_OPEN,
    FEEDBACK_CLOSE,
    FEEDBACK_OPEN,
    UserText,
)
from ..protocol.output import Output

if TYPE_CHECKING:
    from ..protocol.events import TurnFinished

log = logging.getLogger("tui_agent.moments")

MAX_STOP_CONTINUATIONS = 3  # times one prompt's turn may be kept going by stop functions
__all__ = ["CONTEXT_CLOSE", "CONTEXT_OPEN", "FEEDBACK_CLOSE", "FEEDBACK_OPEN"]  # re-exported

PromptFn = Callable[[str], Any]  # (prompt as typed) -> context to add, or None
StopFn = Callable[[str, int], Any]  # (final reply, continuations so far) -> feedback or None
StartFn = Callable[[str], Any]  # ("startup" | "resume" | "clear") -> context or None
CompactFn = Callable[[str, str], Any]  # ("manual" | "auto", custom instructions) -> None
# (agent's name, its task call's id, its final reply, continuations so far) -> feedback or None
SubagentStopFn = Callable[[str, str, str, int], Any]
EndFn = Callable[[str], Any]  # (reason: "prompt_input_exit" | "other"…) -> None


class PromptBlocked(Exception):
    """Raised by an ``on_prompt`` function to stop a prompt: nothing is recorded or sent,
    and ``session.turn`` raises it with the message for the user."""


def with_context(prompt: str, content: str, texts: list[str]) -> UserText:
    """``content`` (the prompt, then its attachments) with ``texts`` in one block right
    after the prompt, so the attachments stay last; a ``UserText`` that keeps ``prompt``
    (and what ``content`` kept: the attachments' labels)."""
    meta = {**getattr(content, "meta", {}), "prompt": prompt}
    if not texts:
        return UserText(content, **meta)
    block = CONTEXT_OPEN + "\n\n".join(texts) + CONTEXT_CLOSE
    if not content.startswith(prompt):
        return UserText(content + block, **meta)
    return UserText(prompt + block + content[len(prompt) :], **meta)


def feedback_message(text: str) -> UserText:
    """The user message that keeps a turn going after a stop function's ``text``: a
    ``"continuation"``."""
    return UserText(FEEDBACK_OPEN + text + FEEDBACK_CLOSE, origin="continuation")


async def _value(fn: Callable[..., Any], *args: Any) -> Any:
    value = fn(*args)
    if inspect.isawaitable(value):
        value = await value
    return value


class Moments:
    """The functions registered for each moment (this load's), and the start of the
    conversation still to be announced (``pending``: "startup", "resume" or "clear")."""

    def __init__(self, output: Output) -> None:
        self.output = output
        self.prompt: list[PromptFn] = []
        self.stop: list[StopFn] = []
        self.start: list[StartFn] = []
        self.compact: list[CompactFn] = []
        self.subagent_stop: list[SubagentStopFn] = []
        self.end: list[EndFn] = []
        self.ended = False  # the end functions ran (they run once a session)
        self.pending: str | None = "startup"
        self.start_context = ""  # what the start functions said: part of the system prompt

    def clear(self) -> None:
        """A new load: its setups register again."""
        self.prompt, self.stop, self.start = [], [], []
        self.compact, self.subagent_stop, self.end = [], [], []

    def restart(self, source: str) -> None:
        """A new conversation (``resume``, ``clear``): the start functions run again before
        its first turn, and what they said before no longer applies."""
        self.pending = source
        self.start_context = ""

    async def started(self) -> None:
        """Before a turn: the first of its conversation runs the start functions (each
        gets the source); their texts become ``start_context``. One that raises is said
        and the turn goes on."""
        source, self.pending = self.pending, None
        if source is None or not self.start:
            return
        texts = []
        for fn in list(self.start):
            try:
                text = await _value(fn, source)
            except Exception as exc:
                self._failed("start", fn, exc)
                continue
            if isinstance(text, str) and text.strip():
                texts.append(text.strip())
        self.start_context = "\n\n".join(texts)

    async def submitted(self, prompt: str, content: str) -> str:
        """What the model gets for a prompt: ``content`` with what the prompt functions
        added (a ``UserText`` that keeps ``prompt`` as typed). A function that raises stops
        the prompt (``PromptBlocked`` on purpose; any other exception too, as the prompt
        must not go out unchecked)."""
        texts = []
        for fn in list(self.prompt):
            text = await _value(fn, prompt)
            if isinstance(text, str) and text.strip():
                texts.append(text.strip())
        return with_context(prompt, content, texts)

    async def until_stopped(
        self, turn: Callable[[str], Awaitable[TurnFinished]], content: str
    ) -> TurnFinished:
        """Run ``turn(content)``; while a stop function answers the finished turn with
        feedback, go on with it as the next user message (``MAX_STOP_CONTINUATIONS`` times
        at most). Stop functions run only after a turn the model finished (not after an
        error or ``max_steps``; a cancel raises). The last turn's outcome is returned."""
        outcome = await turn(content)
        continued = 0
        while self.stop and not outcome.error:
            feedback = await self._stopping(outcome.reply, continued)
            if feedback is None:
                break
            if continued >= MAX_STOP_CONTINUATIONS:
                self.output.say(
                    f"The turn ends here: stop hooks kept it going {continued} times, "
                    "the most one prompt allows.",
                    kind="error",
                )
                break
            continued += 1
            outcome = await turn(feedback_message(feedback))
        return outcome

    async def _stopping(self, reply: str, continued: int) -> str | None:
        texts = []
        for fn in list(self.stop):
            try:
                text = await _value(fn, reply, continued)
            except Exception as exc:
                self._failed("stop", fn, exc)
                continue
            if isinstance(text, str) and text.strip():
                texts.append(text.strip())
        return "\n\n".join(texts) or None

    async def compacting(self, trigger: str, instructions: str) -> None:
        """Before a compaction (``trigger``: "manual" for ``/compact``, "auto" when the
        window fills): the compact functions run; one that raises is said and the
        compaction goes on."""
        for fn in list(self.compact):
            try:
                await _value(fn, trigger, instructions)
            except Exception as exc:
                self._failed("compact", fn, exc)

    async def subagent_until_stopped(
        self,
        turn: Callable[[str], Awaitable[TurnFinished]],
        prompt: str,
        agent: str,
        call_id: str,
    ) -> TurnFinished:
        """A subagent's run (``turn(prompt)``) kept going, as ``until_stopped`` keeps the
        session's, while a subagent_stop function answers its finished turn with feedback
        (``MAX_STOP_CONTINUATIONS`` times at most; not after an error or a cancel)."""
        outcome = await turn(prompt)
        continued = 0
        while self.subagent_stop and not outcome.error and not outcome.cancelled:
            texts = []
            for fn in list(self.subagent_stop):
                try:
                    text = await _value(fn, agent, call_id, outcome.reply, continued)
                except Exception as exc:
                    self._failed("subagent_stop", fn, exc)
                    continue
                if isinstance(text, str) and text.strip():
                    texts.append(text.strip())
            if not texts:
                break
            if continued >= MAX_STOP_CONTINUATIONS:
                self.output.say(
                    f"The subagent {agent} ends here: SubagentStop hooks kept it going "
                    f"{continued} times, the most one task allows.",
                    kind="error",
                )
                break
            continued += 1
            outcome = await turn(feedback_message("\n\n".join(texts)))
        return outcome

    async def ending(self, reason: str) -> None:
        """The session ends (``session.close(reason)``): the end functions run, once."""
        if self.ended:
            return
        self.ended = True
        for fn in list(self.end):
            try:
                await _value(fn, reason)
            except Exception as exc:
                self._failed("end", fn, exc)

    def _failed(self, what: str, fn: Callable[..., Any], exc: Exception) -> None:
        log.warning("%s function %r failed", what, fn, exc_info=exc)
        self.output.say(f"{what} hook failed: {exc or type(exc).__name__}", kind="error")
