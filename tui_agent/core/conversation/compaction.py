"""Making a conversation smaller: prune old tool results, then summarise older turns.

Everything here works on lists of typed messages and keeps them a valid transcript (every
tool result right after its call). ``Budget`` (budget.py) decides when to use it.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence

from ..protocol.messages import AssistantMessage, Message, SystemMessage, ToolMessage, UserMessage
from ..protocol.result import Result

CHARS_PER_TOKEN = 4
MESSAGE_OVERHEAD = 4  # role and separators, per message
# an image part: servers count them their own way (a 1568×980 screenshot is ~1,100 tokens
# at OpenAI's high detail, ~2,050 by Anthropic's w×h/750); one flat figure between them
IMAGE_TOKENS = 1600
PRUNE_ABOVE = 300  # characters: smaller results stay (a stub would not save much)
SUMMARY_HEADER = "[Summary of the earlier conversation, written to save context]"
SUMMARY_ACK = "Understood: I have the summary of what came before and will go on from there."

# (messages of one piece, the summary so far) -> the new summary
Summariser = Callable[[Sequence[Message], str], Awaitable[str]]


def estimate(message: Message) -> int:
    """Tokens of one message, estimated: about four characters a token (no tokenizer works
    offline for every model), plus a few for the role, and ``IMAGE_TOKENS`` an image."""
    chars = len(message.text)
    if isinstance(message, AssistantMessage):
        chars += sum(len(call.name) + len(call.arguments) for call in message.calls)
    elif isinstance(message, ToolMessage):
        content = message.get("content")
        chars = len(content) if isinstance(content, str) else len(json.dumps(content))
    content = message.get("content")
    images = (
        sum(1 for p in content if isinstance(p, dict) and p.get("type") in _IMAGE_PARTS)
        if isinstance(content, list)
        else 0
    )
    return (
        MESSAGE_OVERHEAD + images * IMAGE_TOKENS + (chars + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN
    )


_IMAGE_PARTS = ("image_url", "image_file")  # as sent, and as the journal keeps it


def estimate_all(messages: Sequence[Message]) -> int:
    return sum(estimate(m) for m in messages)


def text_tokens(text: str) -> int:
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


# -- pruning --------------------------------------------------------------------------------


def _calls_by_id(messages: Sequence[Message]) -> dict[str, tuple[str, str]]:
    return {
        call.id: (call.name, call.arguments)
        for m in messages
        if isinstance(m, AssistantMessage)
        for call in m.calls
    }


def stub_for(name: str, arguments: str, size: int) -> str:
    shown = arguments if len(arguments) <= 200 else arguments[:200] + "…"
    return (
        f"[pruned to save context: {name} {shown} returned {size:,} characters; "
        "call it again if you need them]"
    )


def prune(messages: Sequence[Message], keep_tokens: int) -> tuple[list[Message], int]:
    """``messages`` with old tool results replaced by a one-line stub naming the tool, its
    arguments and the size removed; the newest results are kept whole while they add up to
    ``keep_tokens`` (the newest one always). Returns the messages and how many were pruned."""
    calls = _calls_by_id(messages)
    pruned: list[Message] = list(messages)
    kept = 0
    count = 0
    newest = True
    for index in range(len(pruned) - 1, -1, -1):
        message = pruned[index]
        if not isinstance(message, ToolMessage):
            continue
        content = message.get("content")
        size = len(content) if isinstance(content, str) else 0
        tokens = estimate(message)
        if newest or kept + tokens <= keep_tokens or size <= PRUNE_ABOVE:
            kept += tokens
            newest = False
            continue
        if message.result.get("pruned"):
            continue  # pruned before
        name, arguments = calls.get(message.call_id, ("a tool", ""))
        stub = Result({"output": stub_for(name, arguments, size), "pruned": True})
        pruned[index] = ToolMessage(message.call_id, stub)
        count += 1
    return pruned, count


# -- where to cut, and the summary ----------------------------------------------------------


def clean_starts(messages: Sequence[Message]) -> list[int]:
    """Indexes where the transcript may start: not a tool result (its call comes first).
    User messages first in preference order is the caller's business."""
    return [i for i, m in enumerate(messages) if not isinstance(m, ToolMessage)]


def split_point(messages: Sequence[Message], keep_tokens: int) -> int:
    """Where the newest messages kept verbatim start: the earliest user message whose
    tail fits ``keep_tokens``; without one, the earliest clean start that fits; at worst
    the last clean start (the newest reply and its results are always kept)."""
    starts = clean_starts(messages)
    if not starts:
        return len(messages)
    tail = 0
    sizes: dict[int, int] = {}
    for index in range(len(messages) - 1, -1, -1):
        tail += estimate(messages[index])
        sizes[index] = tail
    fitting = [i for i in starts if sizes[i] <= keep_tokens]
    users = [i for i in fitting if isinstance(messages[i], UserMessage)]
    if users:
        return users[0]
    if fitting:
        return fitting[0]
    return starts[-1]


def summary_messages(summary: str, first_kept: Message | None) -> list[Message]:
    """The messages that stand for the summarised part: the summary as a user message, and
    when the kept part starts with a user message too, a short assistant reply between them
    (some local chat templates refuse two user messages in a row)."""
    made: list[Message] = [UserMessage(f"{SUMMARY_HEADER}\n\n{summary.strip()}", origin="summary")]
    if first_kept is None or isinstance(first_kept, UserMessage):
        made.append(AssistantMessage(SUMMARY_ACK))
    return made


def is_summary(message: Message) -> bool:
    return isinstance(message, UserMessage) and message.origin == "summary"


def render(message: Message, limit: int) -> str:
    """One message as plain text for the summariser (long texts cut to ``limit`` chars)."""

    def cut(text: str) -> str:
        return text if len(text) <= limit else text[:limit] + f" […{len(text) - limit:,} more]"

    if isinstance(message, UserMessage):
        return f"User: {cut(message.text)}"
    if isinstance(message, AssistantMessage):
        parts = [f"Assistant: {cut(message.text)}"] if message.text else []
        parts += [f"Assistant called {c.name} {cut(c.arguments)}" for c in message.calls]
        return "\n".join(parts)
    if isinstance(message, ToolMessage):
        content = message.get("content")
        return f"Tool result: {cut(content if isinstance(content, str) else str(content))}"
    return f"{message.role}: {cut(message.text)}"


def pieces(messages: Sequence[Message], piece_tokens: int) -> list[list[Message]]:
    """``messages`` in consecutive pieces of about ``piece_tokens`` each (a piece holds at
    least one message; one too large is cut when rendered)."""
    found: list[list[Message]] = []
    current: list[Message] = []
    size = 0
    for message in messages:
        tokens = estimate(message)
        if current and size + tokens > piece_tokens:
            found.append(current)
            current, size = [], 0
        current.append(message)
        size += tokens
    if current:
        found.append(current)
    return found


SUMMARY_SYSTEM = (
    "You summarise a conversation between a user and a coding agent so that the agent can "
    "continue the work without the original messages. Keep: the user's goals and "
    "instructions, decisions made, files read or changed (with paths) and what was learned "
    "about them, commands run and their outcome, errors still open, and what was about to "
    "happen next. Leave out pleasantries and anything superseded. Write plain text."
)


def summary_request(
    piece: Sequence[Message], previous: str, piece_chars: int, focus: str = ""
) -> list[Message]:
    """The request that folds ``piece`` into the summary ``previous``."""
    per_message = max(200, piece_chars // max(1, len(piece)))
    body = "\n\n".join(render(m, per_message) for m in piece)
    if len(body) > piece_chars:
        body = body[:piece_chars] + " […]"
    so_far = previous.strip() or "(nothing yet: this is the start of the conversation)"
    prompt = (
        f"The summary so far:\n\n{so_far}\n\nThe conversation continues:\n\n{body}\n\n"
        "Write the updated summary of everything so far (at most about 400 words)."
    )
    if focus.strip():
        prompt += f" Keep in particular: {focus.strip()}"
    return [SystemMessage(SUMMARY_SYSTEM), UserMessage(prompt)]
