"""Slash commands: a registry, the line parser and Tab completion (no UI here)."""

from __future__ import annotations

import inspect
import logging
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..protocol.output import Output
from ..util.listeners import Listeners
from ..util.signatures import leading_arguments

log = logging.getLogger("tui_agent.commands")

Completions = Sequence[str] | Callable[[], Sequence[str]] | None
CommandHandler = Callable[..., Any]
FILE_MATCHES = 20


def _bare(name: str) -> str:
    return name[1:] if name.startswith("/") else name


@dataclass
class Command:
    name: str
    description: str
    completions: Completions
    handler: CommandHandler
    source: str = "api"


class Commands:
    """Slash commands by name (without the slash). Usable on its own: ``tui_agent.Commands()``."""

    def __init__(self, output: Output | None = None) -> None:
        self._output = output  # where run_line reports (a session's; None: it raises)
        self._commands: dict[str, Command] = {}
        self._listeners: Listeners[None] = Listeners("commands")
        self.source = "api"

    def register(
        self,
        name: str,
        *,
        description: str = "",
        completions: Completions = None,
        handler: CommandHandler | None = None,
    ) -> Any:
        """Register ``/name``; without ``handler``, return a decorator. Same name replaces."""
        if handler is None:

            def decorator(fn: CommandHandler) -> CommandHandler:
                self.register(name, description=description, completions=completions, handler=fn)
                return fn

            return decorator
        bare = _bare(name)
        if not bare or " " in bare:
            raise ValueError(f"command name must be one word, not {name!r}")
        if not callable(handler):
            raise ValueError(f"command /{bare}: handler is not callable")
        self._commands[bare] = Command(bare, description, completions, handler, self.source)
        self._changed()
        return handler

    def unregister(self, name: str) -> bool:
        removed = self._commands.pop(_bare(name), None) is not None
        if removed:
            self._changed()
        return removed

    def get(self, name: str) -> Command | None:
        return self._commands.get(_bare(name))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and _bare(name) in self._commands

    def __len__(self) -> int:
        return len(self._commands)

    async def run(self, name: str, args: str | None = None) -> bool:
        """Run the command; ``True`` if it exists and ran. Exceptions from it propagate."""
        command = self._commands.get(_bare(name))
        if command is None:
            return False
        handler = command.handler
        if _takes_argument(handler):
            value = handler(args)
        else:
            value = handler()
        if inspect.isawaitable(value):
            await value
        return True

    async def run_line(self, line: str) -> bool:
        """Run ``/name args`` as typed at the prompt; False when the line is no command.

        A bare ``/`` lists the commands; an unknown name says so and lists them; a command
        that raises says ``error: <message>`` (the note goes to the session's output;
        a registry of its own raises instead)."""
        if not is_command_line(line):
            return False
        parsed = parse_command(line)
        if parsed is None:  # a bare "/": what there is to type
            self._say(f"Commands: {', '.join(self.names) or '(none)'}")
            return True
        name, args = parsed
        try:
            ran = await self.run(name, args)
        except Exception as exc:
            if self._output is None:
                raise
            log.warning("command /%s failed", name, exc_info=True)
            self._say(f"error: {exc or type(exc).__name__}", kind="error")
            return True
        if not ran:
            names = ", ".join(self.names) or "(none)"
            self._say(f"unknown command /{name}. Commands: {names}", kind="error")
        return True

    def _say(self, text: str, kind: str | None = None) -> None:
        if self._output is None:
            raise LookupError(text)
        self._output.say(text, kind=kind)

    @property
    def names(self) -> list[str]:
        return sorted(f"/{name}" for name in self._commands)

    def __iter__(self) -> Iterator[tuple[str, str]]:
        for name in sorted(self._commands):
            yield f"/{name}", self._commands[name].description

    def completions_for(self, name: str, partial: str = "") -> list[str]:
        """The command's completions that start with ``partial``; ``[]`` for unknown names."""
        command = self._commands.get(_bare(name))
        if command is None or command.completions is None:
            return []
        source = command.completions
        try:
            items = source() if callable(source) else source
            candidates = [str(item) for item in (items or [])]
        except Exception:
            log.warning("completions for /%s failed", command.name, exc_info=True)
            return []
        return [c for c in candidates if c.startswith(partial)]

    def clear(self) -> None:
        self._commands.clear()
        self._changed()

    def snapshot(self) -> dict[str, Command]:
        return dict(self._commands)

    def restore(self, snap: dict[str, Command]) -> None:
        self._commands = dict(snap)
        self._changed()

    def listen(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call ``listener()`` whenever a command is added, replaced or removed."""
        return self._listeners.add(lambda _change: listener())

    def _changed(self) -> None:
        self._listeners.emit(None)


def _takes_argument(handler: CommandHandler) -> bool:
    """Whether the handler takes the argument string (an unreadable signature: it does)."""
    return leading_arguments(handler, 1) != 0


def parse_command(line: str) -> tuple[str, str | None] | None:
    """``"/name rest of line"`` → ``("name", "rest of line")``; ``None`` for a non-command.

    The argument is everything after the first space, or ``None`` when there is nothing.
    """
    text = line.strip()
    if not text.startswith("/") or text.startswith("//") or len(text) < 2:
        return None
    name, _, rest = text[1:].partition(" ")
    rest = rest.strip()
    return name, (rest if rest else None)


def is_command_line(line: str) -> bool:
    """What the prompt runs locally instead of sending to the model: a command, or a bare
    ``/`` (which lists the commands)."""
    return line.strip() == "/" or parse_command(line) is not None


@dataclass(frozen=True)
class Completion:
    """Replace ``line[start:]`` with one of ``candidates``."""

    start: int
    candidates: list[str]


def complete(line: str, commands: Commands, directory: str | os.PathLike[str] = ".") -> Completion:
    """Tab completion for the prompt line (SPEC §3).

    Command names while the line starts with ``/`` and has no space; the command's own
    completions after ``/name ``; file names (at most 20) for the last word anywhere else.
    """
    if line.startswith("/"):
        if " " not in line:
            return Completion(0, [n for n in commands.names if n.startswith(line)])
        name, _, partial = line[1:].partition(" ")
        start = len(name) + 2
        return Completion(start, commands.completions_for(name, partial))
    start = max(line.rfind(" "), line.rfind("\t"), line.rfind("\n")) + 1
    word = line[start:]
    if word.startswith("@"):
        start += 1
        word = word[1:]
    return Completion(start, complete_path(word, directory))


def complete_path(
    word: str, directory: str | os.PathLike[str] = ".", limit: int = FILE_MATCHES
) -> list[str]:
    """File names starting with ``word`` (relative to ``directory``); folders end in ``/``."""
    base = Path(directory)
    folder_part, _, prefix = word.rpartition("/")
    if word.startswith("~"):
        folder = Path(os.path.expanduser(folder_part or "~"))
    else:
        folder = (base / folder_part) if folder_part else base
    if folder_part == "" and word.startswith("/"):
        folder = Path("/")
    lead = f"{folder_part}/" if folder_part or word.startswith("/") else ""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return []
    matches: list[str] = []
    for entry in entries:
        if not entry.name.startswith(prefix):
            continue
        if entry.name.startswith(".") and not prefix.startswith("."):
            continue
        try:
            is_dir = entry.is_dir()
        except OSError:
            is_dir = False
        matches.append(f"{lead}{entry.name}{'/' if is_dir else ''}")
        if len(matches) >= limit:
            break
    return matches
