"""Files through the editor, when the client offers ``fs/read_text_file`` and
``fs/write_text_file``: the bundled ``read`` and ``edit`` see the editor's buffers (unsaved
changes included), ``write`` and ``edit`` write through the editor.

The bundled tools keep their logic (line numbers, caps, the tolerant edit matchers, the
diff): ``read`` and ``edit`` run on a private copy of the buffer's text, and what they
produce is said of the real path. The permission hook, the sandbox rules and the
checkpoints are untouched: they run around the handler (the checkpoint of the turn reads
the disk, where the editor saved the write). A path the editor cannot read (missing, a
folder, binary on disk) goes to the bundled tool as it is, with its errors.
"""

from __future__ import annotations

import asyncio
import logging
import os
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from ..core.session.session import Session
from ..core.tools.calls import current_call

log = logging.getLogger("tui_agent.acp")
TOOLS = ("read", "write", "edit")
Read = Callable[[Path], Awaitable[str]]
Write = Callable[[Path, str], Awaitable[None]]


def _binary(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return b"\0" in handle.read(8192)
    except OSError:
        return False


def _refusals(
    handler: Callable[[dict[str, Any]], Awaitable[Any]],
) -> Callable[[dict[str, Any]], Awaitable[Any]]:
    async def handle(args: dict[str, Any]) -> Any:
        try:
            return await handler(args)
        except Refused as exc:
            return {"error": str(exc)}

    return handle


def _said_of(value: Any, copy: str, real: str) -> Any:
    """``value`` with the copy's path replaced by the real one (strings inside too)."""
    if isinstance(value, str):
        return value.replace(copy, real)
    if isinstance(value, dict):
        return {key: _said_of(item, copy, real) for key, item in value.items()}
    if isinstance(value, list):
        return [_said_of(item, copy, real) for item in value]
    return value


class Refused(Exception):
    """The editor would not read or write a file: the call fails saying why."""


def why(exc: BaseException) -> str:
    """What an editor's error says (its ``data.details`` before JSON-RPC's "Internal
    error")."""
    data = getattr(exc, "data", None)
    details = data.get("details") if isinstance(data, dict) else None
    if isinstance(details, str) and details:
        return details
    return str(exc) or type(exc).__name__


class EditorFiles:
    """The session's bundled ``read``, ``write`` and ``edit`` going through the editor.
    ``texts``: call id -> (old, new) of each write, for the diff the update shows."""

    def __init__(self, session: Session, read: Read | None, write: Write | None) -> None:
        self.session = session
        self._editor_read = read
        self._editor_write = write
        self.texts: dict[str, tuple[str | None, str]] = {}

    def apply(self) -> None:
        """Wrap the bundled tools (again after a reload made them anew)."""
        toolbox = self.session.toolbox
        for name in TOOLS:
            tool = toolbox.tools.get(name)
            handler = tool.handler if tool is not None else None
            if tool is None or handler is None or getattr(handler, "through_editor", False):
                continue
            if not tool.source.startswith("bundled:"):
                continue  # a plugin's own read or write: its business
            if (self._editor_read if name == "read" else self._editor_write) is None:
                continue  # the client does not offer it: the disk, as in the app
            wrapped: Any = _refusals(getattr(self, f"wrap_{name}")(handler))
            wrapped.through_editor = True
            source, toolbox.source = toolbox.source, tool.source
            try:
                toolbox.add(
                    name,
                    description=tool.description,
                    params=tool.params,
                    required=tool.required,
                    handler=wrapped,
                    read_only=tool.read_only,
                )
            finally:
                toolbox.source = source

    def _path(self, args: dict[str, Any]) -> Path:
        target = Path(os.path.expanduser(str(args.get("path") or ".")))
        return target if target.is_absolute() else self.session.directory / target

    def _shown(self, path: Path) -> str:
        try:
            return path.relative_to(self.session.directory).as_posix() or "."
        except ValueError:
            return str(path)

    async def _buffer(self, path: Path) -> str | None:
        """The editor's text of ``path``, or None where the bundled tool should answer (a
        folder, a binary file, a path the editor cannot read and the disk has not either:
        its "not found" and suggestions). ``Refused`` when the editor would not read a
        file that is there (its rules, a path outside its workspace): no going round it."""
        if path.is_dir() or (path.is_file() and _binary(path)):
            return None
        try:
            if self._editor_read is None:
                return await asyncio.to_thread(path.read_text, encoding="utf-8")
            return await self._editor_read(path)
        except Exception as exc:
            log.info("the editor could not read %s: %s", path, exc)
            if path.exists():
                raise Refused(f"the editor would not read {self._shown(path)}: {why(exc)}") from exc
            return None

    async def _on_copy(
        self, handler: Any, args: dict[str, Any], path: Path, text: str
    ) -> tuple[dict[str, Any], str]:
        """``handler`` run on a private copy holding ``text``: its result said of ``path``
        and the copy's text after it ran."""
        with tempfile.TemporaryDirectory(prefix="tui-agent-acp-") as folder:
            copy = Path(folder) / path.name
            copy.write_text(text, encoding="utf-8")
            result = await asyncio.to_thread(handler, {**args, "path": str(copy)})
            after = copy.read_text(encoding="utf-8")
        return _said_of(result, str(copy), self._shown(path)), after

    async def _write_to(self, path: Path, text: str) -> None:
        assert self._editor_write is not None
        try:
            await self._editor_write(path, text)
        except Exception as exc:
            raise Refused(f"the editor did not write {self._shown(path)}: {why(exc)}") from exc

    def _call_id(self) -> str:
        call = current_call()
        context = call.context if call is not None else None
        return context.call_id if context is not None else ""

    def wrap_read(self, handler: Any) -> Callable[[dict[str, Any]], Awaitable[Any]]:
        async def read(args: dict[str, Any]) -> Any:
            path = self._path(args)
            text = await self._buffer(path)
            if text is None:
                return await asyncio.to_thread(handler, args)
            result, _ = await self._on_copy(handler, args, path, text)
            return result

        return read

    def wrap_write(self, handler: Any) -> Callable[[dict[str, Any]], Awaitable[Any]]:
        async def write(args: dict[str, Any]) -> Any:
            path = self._path(args)
            if path.is_dir():
                return await asyncio.to_thread(handler, args)
            existed = path.exists()
            try:  # the text before, for the diff the update shows
                old = await self._buffer(path) if existed else None
            except Refused:
                old = None
            content = str(args["content"])
            await self._write_to(path, content)
            self.texts[self._call_id()] = (old, content)
            return {
                "path": self._shown(path),
                "bytes": len(content.encode("utf-8")),
                "created": not existed,
            }

        return write

    def wrap_edit(self, handler: Any) -> Callable[[dict[str, Any]], Awaitable[Any]]:
        async def edit(args: dict[str, Any]) -> Any:
            path = self._path(args)
            text = await self._buffer(path) if path.is_file() else None
            if text is None:
                return await asyncio.to_thread(handler, args)
            result, after = await self._on_copy(handler, args, path, text)
            if isinstance(result, dict) and "error" not in result and after != text:
                await self._write_to(path, after)
                self.texts[self._call_id()] = (text, after)
            return result

        return edit
