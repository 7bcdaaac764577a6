"""The UI's side of the session: the one module of the UI that imports the core.

The app draws its first frame before any of the core is imported (``tests/ui/test_startup.py``
lists the modules that may come before it). This module is imported at one moment: when
the app connects its session (``TuiAgentApp._connect``: right after the first frame, or
at once for a session given ready-made). Everything the UI takes from the core comes
through here:

- the modules imported only after that moment (``event_handlers``, ``approval``,
  ``tools_panel``) import their core names from here, at their top;
- the app and its prompt, drawn before it, use the ``Connection`` the app makes when it
  connects (the prompt gets its ``PromptHistory`` from it).

``tests/ui/test_ui_imports.py`` fails when another UI module imports the core outside
``if TYPE_CHECKING:`` (annotations cost nothing at run time).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import images  # a pasted image's path (pasted.py)
from ..core.conversation import mentions, todo
from ..core.engines.project_files import ProjectFiles, rank
from ..core.extensions.commands import (
    Commands,
    Completion,
    complete,
    is_command_line,
    parse_command,
)
from ..core.lsp.servers import servers_of
from ..core.permissions.permissions import CYCLE
from ..core.protocol import events, messages
from ..core.protocol.approval import ApprovalRequest, Decision
from ..core.protocol.output import Note
from ..core.providers.stub import HOW_TO
from ..core.sandbox import user_shell
from ..core.tools.describe import hooks_label, parameter_rows
from ..core.util.atomic import write_text_atomic
from ..core.util.paths import user_data_dir

if TYPE_CHECKING:
    from ..core.session.session import Session

__all__ = [
    "CHUNKS",
    "CYCLE",
    "ApprovalRequest",
    "Commands",
    "Completion",
    "Connection",
    "Decision",
    "Note",
    "PromptHistory",
    "events",
    "history_file",
    "hooks_label",
    "images",
    "mentions",
    "messages",
    "parameter_rows",
    "servers_of",
    "todo",
    "user_shell",
]

CHUNKS: dict[type, bool] = {events.TextChunk: False, events.ThinkingChunk: True}
"""The event types the app batches as streamed text, and whether each is thinking."""


def history_file() -> Path:
    """Where the prompt's earlier lines are kept: in the user data folder."""
    return user_data_dir() / "prompt-history.json"


class PromptHistory:
    """The prompt's earlier lines on disk: the newest ``SIZE``, oldest first, written whole
    or not at all. A file that cannot be read is an empty history; one that cannot be
    written is left as it was (the prompt works on without it)."""

    SIZE = 500

    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else history_file()

    def load(self) -> list[str]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        return [str(item) for item in data][-self.SIZE :] if isinstance(data, list) else []

    def save(self, lines: list[str]) -> None:
        try:
            write_text_atomic(self.path, json.dumps(lines[-self.SIZE :]))
        except OSError:
            pass


class Connection:
    """What the app and its prompt ask of the core about ``session``, as one object: the
    app makes it when it connects the session, and keeps it (``TuiAgentApp.connection``)."""

    modes = CYCLE  # the permission modes Shift+Tab cycles

    def __init__(self, session: Session) -> None:
        self.session = session
        self.history = PromptHistory()
        self.files = ProjectFiles(session.directory, session.worktree)  # the @ picker's

    @staticmethod
    def shell_command(line: str) -> str | None:
        """The command of a ``!command`` line (the user's own shell command), else None."""
        return user_shell.command_of(line)

    @staticmethod
    def shell_outside(line: str) -> bool:
        """A ``!!command`` line: the user's command runs outside the sandbox."""
        return user_shell.outside(line)

    async def find_files(self, query: str, fresh: bool) -> list[str]:
        """The ``@`` picker's candidates for ``query``, best first: listed (in a thread)
        when the picker opens (``fresh``; a listing younger than a few seconds is used
        again), ranked on every key."""
        files = self.files
        return await asyncio.to_thread(lambda: rank(query, files.files(fresh)))

    async def expand(self, line: str) -> mentions.Expanded | str:
        """``line`` with its ``@path`` attachments (read in a thread), or what stops it from
        being sent (a path that cannot be attached: ``MentionError``'s message)."""
        try:
            return await asyncio.to_thread(self.session.conversation.expand, line)
        except mentions.MentionError as exc:
            return str(exc)

    @staticmethod
    def sent(content: str) -> tuple[str, tuple[str, ...]]:
        """A user message as the model got it, as the chat shows it: the prompt as typed,
        and the labels of its ``@path`` attachments (a Markdown command's turn is shown so),
        as the ``UserText`` the core sent keeps them; other text is all prompt."""
        if isinstance(content, messages.UserText):
            return content.prompt, content.attachments
        return content, ()

    @staticmethod
    def is_command(line: str) -> bool:
        """A line the app runs as a command (or the bare ``/`` that lists them), not a turn."""
        return is_command_line(line)

    def makes_turn(self, line: str) -> bool:
        """``line`` runs a Markdown command or a skill (``/name ARGS``), whose prompt is a
        turn: while a turn runs it is queued like a prompt (other commands run at once:
        ``/reload``, ``/context``…)."""
        parsed = parse_command(line) if is_command_line(line) else None
        command = self.session.commands.get(parsed[0]) if parsed else None
        if command is None:
            return False
        return command.source == "markdown" or command.source.startswith("skill:")

    def complete(self, line: str) -> Completion:
        """Tab completion for the prompt's ``line`` (the text before the cursor)."""
        return complete(line, self.session.commands, self.session.directory)

    def load_notes(self) -> list[tuple[str, str]]:
        """What the chat says once the session has loaded, as (text, kind): the offline
        provider in use, config and plugin problems, project code left untrusted."""
        session = self.session
        extensions = session.extensions
        notes: list[tuple[str, str]] = []
        if session.extensions.provider_name == "stub":
            notes.append((f"Using the offline **stub** provider. {HOW_TO}", "markdown"))
        for problem in extensions.problems:
            kind = "config" if problem in extensions.config_problems else "plugin"
            notes.append((f"{kind} problem: {problem}", "error"))
        if extensions.skipped and not session.workspace.needs_trust:
            notes.append(
                (
                    f"Skipped untrusted project code in {session.workspace.project} "
                    f"({len(extensions.skipped)} files). Run with --trust to load it.",
                    "error",
                )
            )
        return notes
