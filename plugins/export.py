"""Built-in commands that take the conversation out of tui-agent: /export (a Markdown
file) and /copy (the last reply, to the clipboard)."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import tui_agent

SUMMARY_ARGS = 80  # characters of a call's arguments in its folded block's summary line


@tui_agent.setup("export")
def export(session: tui_agent.Session) -> None:
    say = session.output.say

    @session.commands.register(
        "export",
        description="Write the conversation as Markdown: /export [FILE] [--force] "
        "(default tui-agent-<session id>.md here; --force overwrites FILE)",
    )
    def export_command(args: str | None) -> None:
        words = shlex.split(args or "")
        force = "--force" in words
        words = [word for word in words if word != "--force"]
        if len(words) > 1 or any(word.startswith("-") for word in words):
            raise ValueError("usage: /export [FILE] [--force]")
        messages = session.conversation.messages
        if not messages:
            say("Nothing to export yet: the conversation is empty.")
            return
        default = f"tui-agent-{session.id}.md"
        path = Path(words[0]).expanduser() if words else Path(default)
        if not path.is_absolute():
            path = session.directory / path
        if path.is_dir():
            path = path / default
        # the default name is this session's own export: written again, it is brought up to date
        if path.exists() and not force and path.name != default:
            raise ValueError(f"{path} exists: `/export {words[0]} --force` overwrites it")
        text = conversation_markdown(
            messages,
            title=f"tui-agent session {session.id}",
            facts=[
                f"Folder: `{session.directory}`",
                f"Model: {session.extensions.provider_name} / {session.provider.model}",
                f"Exported: {datetime.now():%Y-%m-%d %H:%M}",
            ],
        )
        try:
            path.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise ValueError(f"could not write {path}: {exc.strerror or exc}") from None
        say(f"Exported {len(messages)} messages to {path}")

    @session.commands.register("copy", description="Copy the last reply to the clipboard")
    def copy_command(args: str | None) -> None:
        for message in reversed(session.conversation.messages):
            if isinstance(message, tui_agent.AssistantMessage) and message.text.strip():
                session.frontend.copy(message.text)  # the app copies it and says so
                return
        raise ValueError("nothing to copy yet: the model has not replied")


def conversation_markdown(
    messages: Sequence[tui_agent.Message], *, title: str, facts: Sequence[str] = ()
) -> str:
    """The conversation as Markdown: the user's prompts and the replies as they are, each
    tool call folded (``<details>``) with its arguments and its result; thinking a message
    carries (``reasoning_content``) folded too."""
    results = {
        message.call_id: message.result
        for message in messages
        if isinstance(message, tui_agent.ToolMessage)
    }
    answered = {
        call.id
        for message in messages
        if isinstance(message, tui_agent.AssistantMessage)
        for call in message.calls
    }
    parts = [f"# {title}", "\n".join(f"- {fact}" for fact in facts)] if facts else [f"# {title}"]
    heading = ""
    for message in messages:
        if isinstance(message, tui_agent.ToolMessage):
            if message.call_id not in answered:  # its call is gone (a compaction)
                parts.append(_folded(f"result of call {message.call_id}", _result(message.result)))
            continue
        role = "You" if message.role == "user" else message.role.capitalize()
        if role != heading:  # one heading for a turn's replies and tool calls
            parts.append(f"## {role}")
            heading = role
        thinking = message.get("reasoning_content")
        if isinstance(thinking, str) and thinking.strip():
            parts.append(_folded("Thinking", thinking.strip()))
        if message.text.strip():
            parts.append(message.text.strip())
        if isinstance(message, tui_agent.AssistantMessage):
            for call in message.calls:
                parts.append(_call(call, results.get(call.id)))
    return "\n\n".join(parts) + "\n"


def _call(call: tui_agent.Call, result: tui_agent.Result | None) -> str:
    value, problem = call.parsed()
    arguments = call.arguments if problem else json.dumps(value, ensure_ascii=False, indent=2)
    line = " ".join(call.arguments.split())
    if len(line) > SUMMARY_ARGS:
        line = line[: SUMMARY_ARGS - 1] + "…"
    mark = "·" if result is None else "✔" if result.ok else "✖"
    summary = f"{mark} <code>{_escape(call.name)}</code> {_escape(line, quote=False)}"
    body = ["Arguments:", _fence(arguments, "json" if not problem else "")]
    body += ["Result:", _result(result) if result is not None else "(no result)"]
    return _folded(summary, "\n\n".join(body), escaped=True)


def _result(result: tui_agent.Result) -> str:
    """Short fields as JSON; a long or multi-line text (a file's content, a command's
    output) as a block of its own, readable rather than one escaped JSON string."""
    data: dict[str, Any] = {key: value for key, value in result.items() if key != "ok"}
    texts = {
        key: value
        for key, value in data.items()
        if isinstance(value, str) and ("\n" in value or len(value) > SUMMARY_ARGS)
    }
    rest = {key: value for key, value in data.items() if key not in texts}
    parts = [_fence(json.dumps(rest, ensure_ascii=False, indent=2, default=str), "json")]
    if not rest:
        parts = []
    for key, text in texts.items():
        parts.append(_fence(text) if len(data) == 1 else f"`{key}`:\n\n{_fence(text)}")
    return "\n\n".join(parts) or "(empty)"


def _folded(summary: str, body: str, *, escaped: bool = False) -> str:
    shown = summary if escaped else _escape(summary, quote=False)
    return f"<details>\n<summary>{shown}</summary>\n\n{body}\n\n</details>"


def _escape(text: str, quote: bool = True) -> str:
    """``html.escape``, imported with the first export: the ``html`` package holds HTML5's
    table of entities (~0.3 MB), not worth keeping from the load on."""
    from html import escape

    return escape(text, quote=quote)


def _fence(text: str, language: str = "") -> str:
    """A code block that holds ``text`` whatever backticks it has itself."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text.rstrip(chr(10))}\n{fence}"
